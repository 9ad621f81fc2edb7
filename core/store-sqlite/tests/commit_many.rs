//! `commit_many` validates and applies each write set without a savepoint, and falls back to
//! one savepoint per write set when a write set fails while it applies (`commit.rs`). Both
//! paths: every write set atomic, a refused one leaves nothing, the others land, one durable
//! transaction.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol_engine::store::{
    AggregateKey, EventRecord, Store, StoreError, Transaction,
};
use missionweaveprotocol_store_sqlite::SqliteStore;
use rusqlite::{Connection, params};

fn appends(group: &str, from: u64, to: u64) -> Transaction {
    let mut tx = Transaction::new();
    for sequence in from..=to {
        tx.append(
            group,
            EventRecord::new(
                sequence,
                &format!("{group}-e{sequence}"),
                format!("{{\"n\":{sequence}}}").as_bytes(),
            ),
        );
    }
    tx.put(
        AggregateKey::new("mission", format!("{group}-{to}")),
        0,
        b"{}"[..].into(),
    );
    tx
}

fn events(store: &SqliteStore, group: &str) -> Vec<u64> {
    store
        .replay(group, 0, 100)
        .unwrap()
        .events
        .iter()
        .map(|e| e.sequence)
        .collect()
}

/// Without savepoints: a write set refused by validation (a stale sequence, a stale revision)
/// writes nothing, the ones around it land, and a later write set sees the earlier ones.
#[test]
fn refused_write_sets_leave_nothing_in_the_fast_path() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("s.sqlite")).unwrap();
    let mut stale_revision = appends("c", 1, 1);
    stale_revision.put(AggregateKey::new("mission", "a-1"), 0, b"{}"[..].into());
    let results = store.commit_many(vec![
        appends("a", 1, 1),
        appends("b", 2, 2), // stale: b starts at 1
        appends("a", 2, 3), // sees a #1 of the first write set
        stale_revision,     // mission a-1 was written at revision 1 above
        appends("b", 1, 1),
    ]);
    assert!(results[0].is_ok() && results[2].is_ok() && results[4].is_ok());
    assert!(
        matches!(
            results[1],
            Err(StoreError::SequenceConflict { next: 1, .. })
        ),
        "{results:?}"
    );
    assert!(
        matches!(
            results[3],
            Err(StoreError::RevisionConflict { current: 1, .. })
        ),
        "{results:?}"
    );
    assert_eq!(events(&store, "a"), [1, 2, 3]);
    assert_eq!(events(&store, "b"), [1]);
    assert_eq!(events(&store, "c"), Vec::<u64>::new());
    assert!(
        store
            .aggregate(&AggregateKey::new("mission", "c-1"))
            .unwrap()
            .is_none()
    );
}

/// A row planted past the head beyond the next sequence passes validation (which checks the
/// next sequence only) and fails the insert: the batch runs again with savepoints, so only the
/// write set that hit it fails, with a backend error, and leaves nothing; the others land.
#[test]
fn a_write_set_failing_while_it_applies_fails_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sqlite");
    let store = SqliteStore::open(&path).unwrap();
    store.commit(appends("d", 1, 1)).unwrap();
    let raw = Connection::open(&path).unwrap();
    raw.execute(
        "INSERT INTO events (group_id, sequence, event_id, body, chain_hash) \
         VALUES ('d', 3, 'planted', x'00', ?1)",
        params![&[0u8; 32][..]],
    )
    .unwrap();
    let results = store.commit_many(vec![
        appends("e", 1, 1),
        appends("d", 2, 3), // #3 collides with the planted row
        appends("e", 2, 2),
    ]);
    assert!(results[0].is_ok(), "{results:?}");
    assert!(
        matches!(results[1], Err(StoreError::Backend { .. })),
        "{results:?}"
    );
    assert!(results[2].is_ok(), "{results:?}");
    assert_eq!(events(&store, "e"), [1, 2]);
    assert_eq!(store.head("d").unwrap().next_sequence, 2);
    assert!(
        store
            .aggregate(&AggregateKey::new("mission", "d-3"))
            .unwrap()
            .is_none()
    );
    // All of it durable: a reopened store reads the same.
    drop(store);
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(events(&store, "e"), [1, 2]);
    assert!(
        store
            .aggregate(&AggregateKey::new("mission", "e-2"))
            .unwrap()
            .is_some()
    );
}
