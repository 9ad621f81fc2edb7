//! The shared tamper cases (`store::suite::tampering`) on SQLite files, keyed and unkeyed: a
//! second, raw connection to the file deletes or edits rows as someone with write access to
//! the database would, recomputing the unkeyed checksums (`docs/store.md`, "Data at rest").
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol_engine::store::suite::tampering::{
    Tamper, unkeyed_aggregate_checksum, unkeyed_head_checksum,
};
use missionweaveprotocol_engine::store::{
    AggregateKey, IntegrityKey, ReceiptKey, Store, StoreOptions,
};
use missionweaveprotocol_store_sqlite::{SqliteOptions, SqliteStore};
use rusqlite::{Connection, params};

/// A raw connection to the store's file (and the directory holding it).
struct RawFile {
    conn: Connection,
    _dir: tempfile::TempDir,
}

impl Tamper for RawFile {
    fn delete_receipt(&self, key: &ReceiptKey) {
        let deleted = self
            .conn
            .execute(
                "DELETE FROM receipts WHERE actor_type = ?1 AND actor_id = ?2 AND action_id = ?3",
                params![key.actor_type, key.actor_id, key.action_id],
            )
            .unwrap();
        assert_eq!(deleted, 1);
    }

    fn set_signing_hash(&self, key: &ReceiptKey, hash: &str) {
        let changed = self
            .conn
            .execute(
                "UPDATE receipts SET signing_hash = ?4 \
                 WHERE actor_type = ?1 AND actor_id = ?2 AND action_id = ?3",
                params![key.actor_type, key.actor_id, key.action_id, hash],
            )
            .unwrap();
        assert_eq!(changed, 1);
    }

    fn forge_aggregate(&self, key: &AggregateKey, value: &[u8]) {
        let revision: i64 = self
            .conn
            .query_row(
                "SELECT revision FROM aggregates WHERE kind = ?1 AND id = ?2",
                params![key.kind, key.id],
                |row| row.get(0),
            )
            .unwrap();
        let checksum = unkeyed_aggregate_checksum(key, revision as u64, value);
        self.conn
            .execute(
                "UPDATE aggregates SET value = ?3, checksum = ?4, action_key = NULL \
                 WHERE kind = ?1 AND id = ?2",
                params![key.kind, key.id, value, &checksum[..]],
            )
            .unwrap();
    }

    fn truncate_log(&self, group: &str, from: u64) {
        self.conn
            .execute(
                "DELETE FROM events WHERE group_id = ?1 AND sequence >= ?2",
                params![group, from as i64],
            )
            .unwrap();
        let checksum = unkeyed_head_checksum(group, from);
        self.conn
            .execute(
                "UPDATE groups SET next_sequence = ?2, checksum = ?3 WHERE group_id = ?1",
                params![group, from as i64, &checksum[..]],
            )
            .unwrap();
    }

    fn set_event_body(&self, group: &str, sequence: u64, body: &[u8]) {
        let changed = self
            .conn
            .execute(
                "UPDATE events SET body = ?3 WHERE group_id = ?1 AND sequence = ?2",
                params![group, sequence as i64, body],
            )
            .unwrap();
        assert_eq!(changed, 1);
    }
}

fn file_store(options: StoreOptions) -> (SqliteStore, RawFile) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite");
    let store = SqliteStore::open_with(
        &path,
        &SqliteOptions {
            store: options,
            ..SqliteOptions::default()
        },
    )
    .unwrap();
    let conn = Connection::open(&path).unwrap();
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .unwrap();
    (store, RawFile { conn, _dir: dir })
}

fn keyed() -> (SqliteStore, RawFile) {
    let (store, raw) = file_store(StoreOptions::keyed(
        IntegrityKey::new(*b"an integrity key of 32 bytes....").unwrap(),
    ));
    assert!(store.is_keyed());
    assert!(store.authenticates_events(), "keyed since it was created");
    (store, raw)
}

fn unkeyed() -> (SqliteStore, RawFile) {
    let (store, raw) = file_store(StoreOptions::default());
    assert!(!store.authenticates_events());
    (store, raw)
}

missionweaveprotocol_engine::store_tamper_suite!(keyed, unkeyed);

/// A keyed store passes the whole shared suite unchanged (in memory: the same statements and
/// checks as a file).
mod keyed_suite {
    use super::*;

    fn make() -> SqliteStore {
        SqliteStore::in_memory_with(&StoreOptions::keyed(IntegrityKey::new([9u8; 32]).unwrap()))
            .unwrap()
    }

    missionweaveprotocol_engine::store_test_suite!(make);
}
