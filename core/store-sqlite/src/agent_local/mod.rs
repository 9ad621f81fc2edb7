//! [`SqliteAgentStore`]: the Agent-local SQLite store (reference `local_store.SQLiteAgentStore`;
//! §11.1 "durable local projections", §11.5, §16).
//!
//! What one Agent must not lose across a crash: its per-Group cursors and the Events it
//! processed (inbox), the Commands it buffered (outbox), its Scheduler, its Group contexts and
//! its checkpoint contents. Never authoritative for Mission or Group truth: the Group Authority
//! is, and everything here can be rebuilt by replaying from it.
//!
//! One file in WAL mode with `synchronous=FULL`: a method that returned `Ok` is on disk. Every
//! write is one transaction; a replay batch ([`ReplayBatch`]) writes its inbox rows, its cursor
//! and the Scheduler snapshot in one transaction, so after a SIGKILL the file holds whole
//! batches only (`tests/agent_*.rs`, `core/store-harness` `crash_agent_sqlite`).

mod offline_outbox;
mod outbox;
mod replay;
mod schema;
mod state;

use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};

use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol_agent::replay::{LocalStoreError, LocalStoreErrorKind};
use rusqlite::Connection;

pub use outbox::PendingAction;
pub use schema::AGENT_SCHEMA_VERSION;

/// A SQLite failure: nothing of the operation was written.
fn backend(error: rusqlite::Error) -> LocalStoreError {
    LocalStoreError::new(LocalStoreErrorKind::Backend, error.to_string())
}

/// A stored value that does not decode.
fn corrupt(what: &str, detail: impl std::fmt::Display) -> LocalStoreError {
    LocalStoreError::new(
        LocalStoreErrorKind::Corrupt,
        format!("stored {what} does not decode: {detail}"),
    )
}

/// Refuses an empty identifier named `argument`.
fn non_empty(argument: &str, value: &str) -> Result<(), LocalStoreError> {
    if value.is_empty() {
        Err(LocalStoreError::empty(argument))
    } else {
        Ok(())
    }
}

/// A sequence or revision as a SQLite integer.
fn to_sql(argument: &str, value: u64) -> Result<i64, LocalStoreError> {
    i64::try_from(value).map_err(|_| {
        LocalStoreError::new(
            LocalStoreErrorKind::InvalidArgument,
            format!("{argument} {value} exceeds {}", i64::MAX),
        )
    })
}

/// A stored integer read back.
fn from_sql(what: &str, value: i64) -> Result<u64, LocalStoreError> {
    u64::try_from(value).map_err(|_| corrupt(what, format!("negative {value}")))
}

/// Canonical JSON bytes of a JSON value (the form stored and compared).
fn canonical(value: &Value) -> Result<Vec<u8>, LocalStoreError> {
    json::canonical_bytes(value)
        .map_err(|e| LocalStoreError::new(LocalStoreErrorKind::InvalidArgument, e.to_string()))
}

/// Stored canonical JSON read back.
fn parse_stored(what: &str, bytes: &[u8]) -> Result<Value, LocalStoreError> {
    json::parse_state(bytes).map_err(|e| corrupt(what, e))
}

/// The Agent-local store in one SQLite file (or memory, for tests).
#[derive(Debug)]
pub struct SqliteAgentStore {
    /// One connection, serialized: the Agent is one writer. A rolled-back or never-begun
    /// transaction leaves it clean, so a poisoned lock is recovered.
    conn: Mutex<Connection>,
}

impl SqliteAgentStore {
    /// Opens (creating if needed) the store at `path`: WAL, `synchronous=FULL`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, LocalStoreError> {
        let conn = Connection::open(path).map_err(backend)?;
        conn.busy_timeout(crate::BUSY_TIMEOUT).map_err(backend)?;
        // A busy answer is retried: the switch of a new file does not wait for another
        // process's lock by itself (`wal.rs`).
        let mode = crate::wal::enable(&conn, crate::BUSY_TIMEOUT).map_err(backend)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(LocalStoreError::new(
                LocalStoreErrorKind::Backend,
                format!("SQLite refused WAL journal mode (answered {mode})"),
            ));
        }
        Self::with_connection(conn)
    }

    /// A private in-memory store: nothing survives it.
    pub fn in_memory() -> Result<Self, LocalStoreError> {
        Self::with_connection(Connection::open_in_memory().map_err(backend)?)
    }

    fn with_connection(conn: Connection) -> Result<Self, LocalStoreError> {
        conn.execute_batch(
            "PRAGMA synchronous=FULL; PRAGMA temp_store=MEMORY; PRAGMA cache_size=-16384;",
        )
        .map_err(backend)?;
        schema::migrate(&conn)?;
        Ok(Self {
            conn: Mutex::new(conn),
        })
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction: committed if it returns `Ok`, rolled
    /// back otherwise.
    fn transaction<T>(
        &self,
        body: impl FnOnce(&Connection) -> Result<T, LocalStoreError>,
    ) -> Result<T, LocalStoreError> {
        let conn = self.conn();
        conn.execute_batch("BEGIN IMMEDIATE").map_err(backend)?;
        match body(&conn) {
            Ok(value) => match conn.execute_batch("COMMIT") {
                Ok(()) => Ok(value),
                Err(e) => {
                    let _ = conn.execute_batch("ROLLBACK");
                    Err(backend(e))
                }
            },
            Err(e) => {
                conn.execute_batch("ROLLBACK").map_err(backend)?;
                Err(e)
            }
        }
    }

    /// Closes the store (reference `close()`); dropping it does the same.
    pub fn close(self) -> Result<(), LocalStoreError> {
        let conn = self
            .conn
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        conn.close().map_err(|(_, e)| backend(e))
    }
}
