//! `SqliteAgentStore`: what it adds to the `AgentLocalStore` contract (acknowledged cursors,
//! `has_event`, inbox listing, restored snapshots, outbox, Group contexts, checkpoints,
//! damage detection), each with its refusal. The contract itself is the shared conformance
//! suite (`agent_store_suite.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol_agent::replay::{InboxRow, LocalStoreErrorKind, ReplayBatch};
use missionweaveprotocol_kernel::scheduler::{Scheduler, SchedulerPolicy, WorkOffer};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use missionweaveprotocol_store_sqlite::SqliteAgentStore;

const A: &str = "urn:missionweaveprotocol:agent:worker";
const NOW: UnixMillis = UnixMillis(1_784_107_800_000);

fn v(text: &str) -> Value {
    json::parse(text.as_bytes()).unwrap()
}

fn file() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agent.sqlite");
    (dir, path)
}

#[test]
fn cursors_are_monotonic_and_survive_a_reopen() {
    let (_dir, path) = file();
    let store = SqliteAgentStore::open(&path).unwrap();
    assert_eq!(store.cursor(A, "g").unwrap(), 0);
    store.acknowledge(A, "g", 5).unwrap();
    store.acknowledge(A, "g", 3).unwrap();
    assert_eq!(store.cursor(A, "g").unwrap(), 5);
    assert_eq!(store.cursor(A, "h").unwrap(), 0);
    assert_eq!(
        store.acknowledge(A, "", 1).unwrap_err().kind,
        LocalStoreErrorKind::InvalidArgument
    );
    drop(store);
    let store = SqliteAgentStore::open(&path).unwrap();
    assert_eq!(store.cursor(A, "g").unwrap(), 5);
    // WAL mode.
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn has_event_answers_whether_an_event_was_remembered() {
    let store = SqliteAgentStore::in_memory().unwrap();
    assert!(!store.has_event(A, "e1").unwrap());
    assert!(store.remember_event(A, "e1", Some(("g", 1))).unwrap());
    assert!(store.has_event(A, "e1").unwrap());
    assert!(!store.has_event("other", "e1").unwrap());
    // A refused Event is not remembered; one remembered without a position is.
    let taken = store.remember_event(A, "e2", Some(("g", 1))).unwrap_err();
    assert_eq!(taken.kind, LocalStoreErrorKind::EventPositionCollision);
    assert!(!store.has_event(A, "e2").unwrap());
    assert!(store.remember_event(A, "e3", None).unwrap());
    assert!(store.has_event(A, "e3").unwrap());
    assert!(store.event_position(A, "e3").unwrap().is_none());
}

#[test]
fn the_outbox_keeps_order_and_sends_each_action_once() {
    let (_dir, path) = file();
    let store = SqliteAgentStore::open(&path).unwrap();
    assert!(store.enqueue_action(A, "a2", &v(r#"{"n":2}"#)).unwrap());
    assert!(store.enqueue_action(A, "a1", &v(r#"{"n":1}"#)).unwrap());
    assert!(!store.enqueue_action(A, "a2", &v(r#"{"n":2}"#)).unwrap());
    let collision = store.enqueue_action(A, "a2", &v(r#"{"n":3}"#)).unwrap_err();
    assert_eq!(collision.kind, LocalStoreErrorKind::ActionCollision);
    assert_eq!(collision.code().as_str(), "ACTION_ID_COLLISION");
    drop(store);
    let store = SqliteAgentStore::open(&path).unwrap();
    let pending: Vec<String> = store
        .pending_actions(A)
        .unwrap()
        .into_iter()
        .map(|p| p.action_id)
        .collect();
    assert_eq!(pending, ["a2", "a1"]);
    assert!(store.mark_action_sent(A, "a2").unwrap());
    assert!(!store.mark_action_sent(A, "a2").unwrap());
    assert_eq!(
        store.mark_action_sent(A, "nope").unwrap_err().kind,
        LocalStoreErrorKind::InvalidArgument
    );
    // Re-enqueueing a sent action (e.g. after a restart) does not queue it again.
    assert!(!store.enqueue_action(A, "a2", &v(r#"{"n":2}"#)).unwrap());
    let pending = store.pending_actions(A).unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].payload, v(r#"{"n":1}"#));
    assert!(store.pending_actions("other").unwrap().is_empty());
}

#[test]
fn group_contexts_never_move_back() {
    let store = SqliteAgentStore::in_memory().unwrap();
    assert!(store.group_context(A, "g").unwrap().is_none());
    store
        .save_group_context(A, "g", 2, &v(r#"{"k":"v2"}"#))
        .unwrap();
    store
        .save_group_context(A, "g", 2, &v(r#"{"k":"v2"}"#))
        .unwrap();
    let stale = store
        .save_group_context(A, "g", 1, &v(r#"{"k":"v1"}"#))
        .unwrap_err();
    assert_eq!(stale.kind, LocalStoreErrorKind::StaleRevision);
    let changed = store
        .save_group_context(A, "g", 2, &v(r#"{"k":"x"}"#))
        .unwrap_err();
    assert_eq!(changed.kind, LocalStoreErrorKind::StaleRevision);
    store
        .save_group_context(A, "g", 3, &v(r#"{"k":"v3"}"#))
        .unwrap();
    assert_eq!(
        store.group_context(A, "g").unwrap(),
        Some((3, v(r#"{"k":"v3"}"#)))
    );
    assert!(store.group_context(A, "h").unwrap().is_none());
}

#[test]
fn checkpoints_are_immutable_scoped_and_deleted_idempotently() {
    let (_dir, path) = file();
    let store = SqliteAgentStore::open(&path).unwrap();
    let c = v(r#"{"step":1}"#);
    store.save_checkpoint(A, "g", "w", "c1", &c).unwrap();
    store.save_checkpoint(A, "g", "w", "c1", &c).unwrap();
    let changed = store
        .save_checkpoint(A, "g", "w", "c1", &v(r#"{"step":2}"#))
        .unwrap_err();
    assert_eq!(changed.kind, LocalStoreErrorKind::CheckpointCollision);
    drop(store);
    let store = SqliteAgentStore::open(&path).unwrap();
    assert_eq!(store.load_checkpoint(A, "g", "w", "c1").unwrap(), Some(c));
    // Strictly scoped: another Group, WorkItem or Agent sees nothing.
    assert!(store.load_checkpoint(A, "h", "w", "c1").unwrap().is_none());
    assert!(store.load_checkpoint(A, "g", "x", "c1").unwrap().is_none());
    assert!(
        store
            .load_checkpoint("other", "g", "w", "c1")
            .unwrap()
            .is_none()
    );
    for (a, g, w, c) in [
        ("", "g", "w", "c"),
        (A, "", "w", "c"),
        (A, "g", "", "c"),
        (A, "g", "w", ""),
    ] {
        let e = store.save_checkpoint(a, g, w, c, &v("{}")).unwrap_err();
        assert_eq!(e.kind, LocalStoreErrorKind::InvalidArgument);
    }
    assert!(store.delete_checkpoint(A, "g", "w", "c1").unwrap());
    assert!(!store.delete_checkpoint(A, "g", "w", "c1").unwrap());
    assert!(store.load_checkpoint(A, "g", "w", "c1").unwrap().is_none());
}

#[test]
fn a_damaged_scheduler_snapshot_is_corrupt() {
    let (_dir, path) = file();
    let store = SqliteAgentStore::open(&path).unwrap();
    let mut s = Scheduler::new(SchedulerPolicy::default()).unwrap();
    s.admit(&WorkOffer::new("w1", "g"), NOW);
    s.admit(&WorkOffer::new("w2", "h"), NOW);
    store.save_scheduler(A, &s.snapshot()).unwrap();
    assert_eq!(store.load_scheduler(A).unwrap(), Some(s.snapshot()));
    // A damaged snapshot is reported, not trusted.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("UPDATE scheduler_snapshots SET snapshot = X'7B7D'", [])
        .unwrap();
    assert_eq!(
        store.load_scheduler(A).unwrap_err().kind,
        LocalStoreErrorKind::Corrupt
    );
}

#[test]
fn a_replay_batch_lists_its_inbox_rows_and_records_its_snapshot_hash() {
    let store = SqliteAgentStore::in_memory().unwrap();
    store.remember_event(A, "x", Some(("g", 1))).unwrap();
    let rows = [
        InboxRow {
            event_id: "a".into(),
            sequence: 1,
        },
        InboxRow {
            event_id: "x".into(),
            sequence: 2,
        },
    ];
    let refused = ReplayBatch {
        agent_id: A,
        group_id: "h",
        from_cursor: 0,
        to_cursor: 2,
        events: &rows,
        scheduler: None,
        snapshot_hash: Some("sha256:00"),
    };
    assert_eq!(
        store.commit_replay(&refused).unwrap_err().kind,
        LocalStoreErrorKind::EventPositionCollision
    );
    assert!(store.inbox(A, "h").unwrap().is_empty());
    assert_eq!(store.restored_snapshot(A, "h").unwrap(), None);
    let good = ReplayBatch {
        to_cursor: 1,
        events: &rows[..1],
        ..refused
    };
    store.commit_replay(&good).unwrap();
    assert_eq!(store.inbox(A, "h").unwrap(), [("a".to_owned(), 1)]);
    assert_eq!(
        store.restored_snapshot(A, "h").unwrap().as_deref(),
        Some("sha256:00")
    );
    // A later batch without a snapshot keeps the one recorded.
    let later = ReplayBatch {
        from_cursor: 1,
        to_cursor: 1,
        events: &[],
        snapshot_hash: None,
        ..refused
    };
    store.commit_replay(&later).unwrap();
    assert_eq!(
        store.restored_snapshot(A, "h").unwrap().as_deref(),
        Some("sha256:00")
    );
}
