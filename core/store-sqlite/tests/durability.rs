//! What a file store keeps across a reopen, which databases it refuses, and damaged rows as
//! typed errors (never a panic).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::{DescribeError, WireCode};
use missionweaveprotocol_engine::store::{
    AggregateKey, EventRecord, EventRef, Receipt, ReceiptKey, SnapshotPointer, Store, StoreError,
    Transaction,
};
use missionweaveprotocol_store_sqlite::{SCHEMA_VERSION, SqliteStore};
use rusqlite::Connection;

fn receipt(hash: &str, event_id: &str, position: Option<(&str, u64)>) -> Receipt {
    Receipt {
        signing_hash: hash.into(),
        first_event: EventRef {
            event_id: event_id.into(),
            position: position.map(|(g, s)| (g.to_owned(), s)),
        },
    }
}

/// Two Group Events with a receipt and a Mission, then an Organization-scoped Event (receipt
/// without a position, `organization_event` aggregate), then an archive of sequence 1.
fn fill(store: &SqliteStore) {
    let mut tx = Transaction::new();
    tx.record_receipt(
        ReceiptKey::new("agent", "urn:agent:a", "action-1"),
        receipt("sha256:aa", "e1", Some(("g", 1))),
    )
    .append("g", EventRecord::new(1, "e1", &b"{\"n\":1}"[..]))
    .append("g", EventRecord::new(2, "e2", &b"{\"n\":2}"[..]))
    .put(
        AggregateKey::new("mission", "m"),
        0,
        b"{\"v\":1}"[..].into(),
    );
    store.commit(tx).unwrap();
    let mut tx = Transaction::new();
    tx.record_receipt(
        ReceiptKey::new("service", "urn:svc", "action-2"),
        receipt("sha256:bb", "org-e", None),
    )
    .put(
        AggregateKey::new("organization_event", "org-e"),
        0,
        b"{\"org\":true}"[..].into(),
    )
    .put(
        AggregateKey::new("mission", "m"),
        1,
        b"{\"v\":2}"[..].into(),
    );
    store.commit(tx).unwrap();
    store
        .archive_before(
            "g",
            2,
            SnapshotPointer {
                artifact_hash: "sha256:snap".into(),
            },
        )
        .unwrap();
}

#[test]
fn a_reopened_file_store_keeps_every_committed_event_aggregate_and_receipt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite");
    fill(&SqliteStore::open(&path).unwrap());

    let store = SqliteStore::open(&path).unwrap();
    let head = store.head("g").unwrap();
    assert_eq!((head.next_sequence, head.first_online), (3, 2));
    assert_eq!(head.snapshot.unwrap().artifact_hash, "sha256:snap");
    let page = store.replay("g", 1, 10).unwrap();
    assert_eq!(
        page.events,
        vec![EventRecord::new(2, "e2", &b"{\"n\":2}"[..])]
    );
    assert_eq!(page.last_sequence, 2);
    let too_old = store.replay("g", 0, 10).unwrap_err();
    assert_eq!(too_old.wire_code(), WireCode::CursorTooOld);

    let mission = store
        .aggregate(&AggregateKey::new("mission", "m"))
        .unwrap()
        .unwrap();
    assert_eq!((mission.revision, &*mission.value), (2, &b"{\"v\":2}"[..]));
    let org = store
        .aggregate(&AggregateKey::new("organization_event", "org-e"))
        .unwrap()
        .unwrap();
    assert_eq!(org.revision, 1);

    let key = ReceiptKey::new("agent", "urn:agent:a", "action-1");
    assert_eq!(
        store.dedup(&key, "sha256:aa").unwrap(),
        Some(receipt("sha256:aa", "e1", Some(("g", 1))))
    );
    assert_eq!(
        store.dedup(&key, "sha256:zz").unwrap_err().wire_code(),
        WireCode::ActionIdCollision
    );
    let org_key = ReceiptKey::new("service", "urn:svc", "action-2");
    assert_eq!(
        store.receipt(&org_key).unwrap(),
        Some(receipt("sha256:bb", "org-e", None))
    );

    // The log continues where it stopped: the next append is sequence 3, not 1.
    let mut tx = Transaction::new();
    tx.append("g", EventRecord::new(1, "again", &b"{}"[..]));
    assert!(matches!(
        store.commit(tx),
        Err(StoreError::SequenceConflict { next: 3, .. })
    ));
}

#[test]
fn a_refused_commit_leaves_nothing_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite");
    {
        let store = SqliteStore::open(&path).unwrap();
        let mut tx = Transaction::new();
        tx.append("g", EventRecord::new(1, "e1", &b"{}"[..])).put(
            AggregateKey::new("mission", "m"),
            5,
            b"{}"[..].into(),
        );
        assert_eq!(
            store.commit(tx).unwrap_err().wire_code(),
            WireCode::RevisionConflict
        );
    }
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.head("g").unwrap().next_sequence, 1);
    assert_eq!(
        store.aggregate(&AggregateKey::new("mission", "m")).unwrap(),
        None
    );
}

#[test]
fn a_file_store_runs_in_wal_mode_with_full_sync_and_records_its_schema_version() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite");
    drop(SqliteStore::open(&path).unwrap());
    let raw = Connection::open(&path).unwrap();
    let mode: String = raw
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let version: i64 = raw
        .query_row("SELECT version FROM schema_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
}

#[test]
fn a_newer_schema_version_is_refused_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite");
    drop(SqliteStore::open(&path).unwrap());
    Connection::open(&path)
        .unwrap()
        .execute(
            "UPDATE schema_version SET version = ?1",
            [SCHEMA_VERSION + 1],
        )
        .unwrap();
    let error = SqliteStore::open(&path).unwrap_err();
    assert_eq!(error.wire_code(), WireCode::InternalError);
    assert!(
        error.to_string().contains("newer than this build supports"),
        "{error}"
    );
}

#[test]
fn a_database_of_someone_else_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.sqlite");
    Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE accounts (id INTEGER PRIMARY KEY)")
        .unwrap();
    let error = SqliteStore::open(&path).unwrap_err();
    assert!(error.to_string().contains("no schema_version"), "{error}");
}

/// Damaged rows (written behind the store's back) surface as `store_corrupt`
/// (`StoreError::Corrupt`, `INTERNAL_ERROR`) naming the row, never as a panic or a silently
/// wrong answer. `tests/tampering.rs` covers the integrity checks one damage at a time.
#[test]
fn tampered_rows_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite");
    let store = SqliteStore::open(&path).unwrap();
    fill(&store);
    let raw = Connection::open(&path).unwrap();
    let corrupt = |error: StoreError, what: &str, locator: &str| {
        assert_eq!(error.wire_code(), WireCode::InternalError);
        assert_eq!(error.reason(), "store_corrupt");
        match error {
            StoreError::Corrupt {
                what: found,
                locator: at,
                ..
            } => assert_eq!((found, at.as_str()), (what, locator)),
            other => panic!("not Corrupt: {other:?}"),
        }
    };

    // An Event ID that is not text.
    raw.execute(
        "UPDATE events SET event_id = X'FF00' WHERE sequence = 2",
        [],
    )
    .unwrap();
    corrupt(store.replay("g", 1, 10).unwrap_err(), "event", "g #2");

    // A deleted Event row: the head promises a row the log no longer has.
    raw.execute("DELETE FROM events WHERE sequence = 2", [])
        .unwrap();
    let error = store.replay("g", 1, 10).unwrap_err();
    assert!(
        error.to_string().contains("sequence 2 is missing"),
        "{error}"
    );
    corrupt(error, "event", "g #2");

    // A negative revision.
    raw.execute(
        "UPDATE aggregates SET revision = -1 WHERE kind = 'mission'",
        [],
    )
    .unwrap();
    corrupt(
        store
            .aggregate(&AggregateKey::new("mission", "m"))
            .unwrap_err(),
        "aggregate",
        "mission m",
    );

    // A receipt with a Group but no sequence.
    raw.execute(
        "UPDATE receipts SET sequence = NULL WHERE action_id = 'action-1'",
        [],
    )
    .unwrap();
    corrupt(
        store
            .receipt(&ReceiptKey::new("agent", "urn:agent:a", "action-1"))
            .unwrap_err(),
        "receipt",
        "agent urn:agent:a action-1",
    );
}

/// Extreme cursors and limits (the stored integers are i64) neither overflow nor panic.
#[test]
fn extreme_cursors_and_limits_are_answered() {
    let store = SqliteStore::in_memory().unwrap();
    let mut tx = Transaction::new();
    tx.append("g", EventRecord::new(1, "e1", &b"{}"[..]));
    store.commit(tx).unwrap();
    let page = store.replay("g", u64::MAX, usize::MAX).unwrap();
    assert!(page.events.is_empty());
    assert_eq!((page.continuation, page.last_sequence), (None, 1));
    let page = store.replay("g", 0, usize::MAX).unwrap();
    assert_eq!(page.events.len(), 1);
    assert_eq!(page.continuation, None);
}

#[test]
fn a_path_that_cannot_be_opened_is_a_backend_error() {
    let dir = tempfile::tempdir().unwrap();
    let error = SqliteStore::open(dir.path().join("missing/dir/store.sqlite")).unwrap_err();
    assert_eq!(error.reason(), "backend_failure");
}

/// Two stores (two connections, as two processes would hold) on one file: `BEGIN IMMEDIATE`
/// serializes their commits, so a decision made on a stale head is refused, not interleaved.
#[test]
fn two_connections_on_one_file_conflict_instead_of_interleaving() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite");
    let a = SqliteStore::open(&path).unwrap();
    let b = SqliteStore::open(&path).unwrap();
    let next_a = a.head("g").unwrap().next_sequence;
    let next_b = b.head("g").unwrap().next_sequence;
    let mut tx = Transaction::new();
    tx.append("g", EventRecord::new(next_a, "from-a", &b"{}"[..]))
        .put(
            AggregateKey::new("mission", "m"),
            0,
            b"{\"by\":\"a\"}"[..].into(),
        );
    a.commit(tx).unwrap();
    let mut tx = Transaction::new();
    tx.append("g", EventRecord::new(next_b, "from-b", &b"{}"[..]));
    let error = b.commit(tx).unwrap_err();
    assert!(error.is_contention(), "{error}");
    let mut tx = Transaction::new();
    tx.put(
        AggregateKey::new("mission", "m"),
        0,
        b"{\"by\":\"b\"}"[..].into(),
    );
    assert!(matches!(
        b.commit(tx),
        Err(StoreError::RevisionConflict { current: 1, .. })
    ));
    // B sees A's commit once it reads again.
    assert_eq!(b.head("g").unwrap().next_sequence, 2);
    assert_eq!(
        b.replay("g", 0, 10).unwrap().events[0].event_id.as_ref(),
        "from-a"
    );
}

/// A group commit is durable as a whole, each write set atomic: the refused one leaves nothing
/// after a reopen, the others everything.
#[test]
fn a_group_commit_survives_a_reopen_with_each_write_set_atomic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite");
    {
        let store = SqliteStore::open(&path).unwrap();
        let mut first = Transaction::new();
        first
            .append("g", EventRecord::new(1, "e1", &b"{}"[..]))
            .put(AggregateKey::new("mission", "m"), 0, b"{}"[..].into());
        let mut refused = Transaction::new();
        refused
            .append("g", EventRecord::new(2, "e2", &b"{}"[..]))
            .put(AggregateKey::new("mission", "m"), 0, b"{}"[..].into());
        let mut third = Transaction::new();
        third.append("g", EventRecord::new(2, "e2b", &b"{}"[..]));
        let results = store.commit_many(vec![first, refused, third]);
        assert!(results[0].is_ok());
        assert_eq!(
            results[1].as_ref().unwrap_err().wire_code(),
            WireCode::RevisionConflict
        );
        assert!(results[2].is_ok());
    }
    let store = SqliteStore::open(&path).unwrap();
    let ids: Vec<String> = store
        .replay("g", 0, 10)
        .unwrap()
        .events
        .iter()
        .map(|e| e.event_id.to_string())
        .collect();
    assert_eq!(ids, ["e1", "e2b"]);
    let mission = store.aggregate(&AggregateKey::new("mission", "m")).unwrap();
    assert_eq!(mission.unwrap().revision, 1);
}
