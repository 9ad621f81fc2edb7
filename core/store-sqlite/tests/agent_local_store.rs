//! `SqliteAgentStore`: every reference method, its refusal, and what survives a reopen.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol_agent::replay::{
    AgentReplay, EventProjection, InboxRow, LocalStoreErrorKind, ReplayBatch, ReplayError,
    ReplayEvent, SourceError, SourcePage,
};
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
fn events_are_remembered_once_at_one_position() {
    let store = SqliteAgentStore::in_memory().unwrap();
    assert!(store.remember_event(A, "e1", Some(("g", 1))).unwrap());
    assert!(!store.remember_event(A, "e1", Some(("g", 1))).unwrap());
    assert!(store.has_event(A, "e1").unwrap());
    assert!(!store.has_event(A, "e2").unwrap());
    assert_eq!(store.event_position(A, "e1").unwrap().unwrap().sequence, 1);
    let moved = store.remember_event(A, "e1", Some(("g", 2))).unwrap_err();
    assert_eq!(moved.kind, LocalStoreErrorKind::EventPositionCollision);
    let taken = store.remember_event(A, "e2", Some(("g", 1))).unwrap_err();
    assert_eq!(taken.kind, LocalStoreErrorKind::EventPositionCollision);
    assert!(!store.has_event(A, "e2").unwrap());
    // Without a position, then given one.
    assert!(store.remember_event(A, "e3", None).unwrap());
    assert!(store.event_position(A, "e3").unwrap().is_none());
    assert!(!store.remember_event(A, "e3", Some(("g", 3))).unwrap());
    assert_eq!(store.event_position(A, "e3").unwrap().unwrap().sequence, 3);
    // Another Agent has its own inbox.
    assert!(store.remember_event("other", "e1", Some(("g", 9))).unwrap());
    assert_eq!(
        store.remember_event(A, "", None).unwrap_err().kind,
        LocalStoreErrorKind::InvalidArgument
    );
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
fn the_scheduler_snapshot_survives_a_reopen() {
    let (_dir, path) = file();
    let store = SqliteAgentStore::open(&path).unwrap();
    assert!(store.load_scheduler(A).unwrap().is_none());
    let mut s = Scheduler::new(SchedulerPolicy::default()).unwrap();
    s.admit(&WorkOffer::new("w1", "g"), NOW);
    s.admit(&WorkOffer::new("w2", "h"), NOW);
    store.save_scheduler(A, &s.snapshot()).unwrap();
    drop(store);
    let store = SqliteAgentStore::open(&path).unwrap();
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
fn a_replay_batch_is_all_or_nothing() {
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
    let mut s = Scheduler::new(SchedulerPolicy::default()).unwrap();
    s.admit(&WorkOffer::new("w", "h"), NOW);
    let snapshot = s.snapshot();
    let batch = ReplayBatch {
        agent_id: A,
        group_id: "h",
        from_cursor: 0,
        to_cursor: 2,
        events: &rows,
        scheduler: Some(&snapshot),
        snapshot_hash: None,
    };
    assert_eq!(
        store.commit_replay(&batch).unwrap_err().kind,
        LocalStoreErrorKind::EventPositionCollision
    );
    assert!(!store.has_event(A, "a").unwrap());
    assert_eq!(store.cursor(A, "h").unwrap(), 0);
    assert!(store.load_scheduler(A).unwrap().is_none());
    // A stale starting cursor is refused.
    let stale = ReplayBatch {
        from_cursor: 1,
        events: &rows[..1],
        ..batch
    };
    assert_eq!(
        store.commit_replay(&stale).unwrap_err().kind,
        LocalStoreErrorKind::CursorConflict
    );
    // The good batch lands whole, and again idempotently for its rows.
    let good = ReplayBatch {
        to_cursor: 1,
        events: &rows[..1],
        snapshot_hash: Some("sha256:00"),
        ..batch
    };
    store.commit_replay(&good).unwrap();
    assert_eq!(store.cursor(A, "h").unwrap(), 1);
    assert_eq!(store.inbox(A, "h").unwrap(), [("a".to_owned(), 1)]);
    assert_eq!(store.load_scheduler(A).unwrap(), Some(snapshot));
    assert_eq!(
        store.restored_snapshot(A, "h").unwrap().as_deref(),
        Some("sha256:00")
    );
}

#[test]
fn agent_replay_over_sqlite_restarts_from_the_durable_tail() {
    let (_dir, path) = file();
    let log: Vec<ReplayEvent> = (1..=50)
        .map(|s| ReplayEvent::new(&format!("e{s}"), "g", s, &b"{}"[..]))
        .collect();
    let mut source = |_: &str, after: u64| -> Result<SourcePage, SourceError> {
        Ok(SourcePage::Events(
            log.iter()
                .filter(|e| e.sequence > after)
                .take(7)
                .cloned()
                .collect(),
        ))
    };
    let mut projector = |e: &ReplayEvent| -> Result<Option<EventProjection>, String> {
        if e.sequence == 33 {
            return Err("down".into());
        }
        Ok(e.sequence.is_multiple_of(5).then(|| EventProjection {
            work_offers: vec![WorkOffer::new(&format!("w{}", e.sequence), "g")],
        }))
    };
    {
        let store = SqliteAgentStore::open(&path).unwrap();
        let mut r = AgentReplay::open(A, &store, SchedulerPolicy::default(), NOW)
            .unwrap()
            .with_batch_events(4);
        let e = r
            .reconcile(["g"], &mut source, &mut projector, NOW)
            .unwrap_err();
        assert!(matches!(e, ReplayError::Projector { .. }));
    }
    let store = SqliteAgentStore::open(&path).unwrap();
    assert_eq!(store.cursor(A, "g").unwrap(), 32);
    assert_eq!(store.load_scheduler(A).unwrap().unwrap().records.len(), 6);
    let mut r = AgentReplay::open(A, &store, SchedulerPolicy::default(), NOW).unwrap();
    let mut seen = Vec::new();
    let mut projector = |e: &ReplayEvent| -> Result<Option<EventProjection>, String> {
        seen.push(e.sequence);
        Ok(e.sequence.is_multiple_of(5).then(|| EventProjection {
            work_offers: vec![WorkOffer::new(&format!("w{}", e.sequence), "g")],
        }))
    };
    let out = r
        .reconcile(["g"], &mut source, &mut projector, NOW)
        .unwrap();
    assert_eq!(seen, (33..=50).collect::<Vec<_>>());
    assert_eq!(out["g"].end_cursor, 50);
    assert!(
        out["g"]
            .admissions
            .iter()
            .all(|a| a.decision.reason.as_str() == "accepted")
    );
    assert_eq!(store.load_scheduler(A).unwrap().unwrap().records.len(), 10);
    assert_eq!(store.inbox(A, "g").unwrap().len(), 50);
}
