//! The Agent-local store conformance suite (`missionweaveprotocol_agent::replay::suite`) on
//! SQLite: a private in-memory database, and a file that the reopen cases close and open
//! again (what survives a process restart, §11.1, §16).
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use missionweaveprotocol_agent::replay::suite::Reopen;
use missionweaveprotocol_store_sqlite::SqliteAgentStore;

mod in_memory {
    use super::SqliteAgentStore;

    missionweaveprotocol_agent::agent_store_test_suite!(|| SqliteAgentStore::in_memory().unwrap());
}

mod file {
    missionweaveprotocol_agent::agent_store_test_suite!(reopen: super::AgentFile::new);
}

/// A store in a file of a temporary directory, which lives as long as it does.
struct AgentFile {
    store: SqliteAgentStore,
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl AgentFile {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent.sqlite");
        Self {
            store: SqliteAgentStore::open(&path).unwrap(),
            path,
            _dir: dir,
        }
    }
}

impl Reopen for AgentFile {
    type Store = SqliteAgentStore;

    fn store(&self) -> &SqliteAgentStore {
        &self.store
    }

    fn reopen(self) -> Self {
        let Self { store, path, _dir } = self;
        store.close().unwrap();
        Self {
            store: SqliteAgentStore::open(&path).unwrap(),
            path,
            _dir,
        }
    }
}
