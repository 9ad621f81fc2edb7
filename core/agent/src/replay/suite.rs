//! The conformance suite every [`AgentLocalStore`] must pass unchanged (§16 replay, §11.1
//! durable local projections, §15.1 idempotency of what was processed).
//!
//! Each case is a generic function that panics on a broken rule; the
//! [`agent_store_test_suite!`](crate::agent_store_test_suite) macro turns all of them into
//! `#[test]`s for one implementation. A store that can be closed and opened again over the
//! same storage also runs the reopen cases, through [`Reopen`]
//! (`agent_store_test_suite!(reopen: …)`):
//!
//! ```
//! use missionweaveprotocol_agent::replay::MemoryAgentStore;
//!
//! missionweaveprotocol_agent::agent_store_test_suite!(MemoryAgentStore::new);
//! # fn main() {}
//! ```
//!
//! A case receives a fresh, empty store. Test code: assertions are the point here.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fmt::Debug;

use missionweaveprotocol::WireCode;
use missionweaveprotocol_kernel::scheduler::{
    Scheduler, SchedulerPolicy, SchedulerSnapshot, WorkOffer,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

use crate::replay::{
    agent::AgentReplay,
    error::{LocalStoreError, LocalStoreErrorKind, ReplayError},
    traits::{AgentLocalStore, SourceError},
    types::{EventPosition, EventProjection, InboxRow, ReplayBatch, ReplayEvent, SourcePage},
};

/// The Agent every case works for.
pub const AGENT: &str = "urn:missionweaveprotocol:agent:worker";
/// Another Agent sharing the store: its state is its own.
pub const OTHER: &str = "urn:missionweaveprotocol:agent:other";
/// The clock of every case.
pub const NOW: UnixMillis = UnixMillis(1_784_107_800_000);

/// A store that can be closed and opened again over the same storage (a file), for the cases
/// that check what survives (§11.1: the Agent's local projections are durable).
pub trait Reopen: Sized {
    /// The store.
    type Store: AgentLocalStore;
    /// The open store.
    fn store(&self) -> &Self::Store;
    /// Closes the store and opens it again over the same storage.
    fn reopen(self) -> Self;
}

/// Inbox rows `(event_id, sequence)`.
pub fn rows(rows: &[(&str, u64)]) -> Vec<InboxRow> {
    rows.iter()
        .map(|(event_id, sequence)| InboxRow {
            event_id: (*event_id).into(),
            sequence: *sequence,
        })
        .collect()
}

/// A batch of `events` moving `AGENT`'s cursor in `group` from `from` to `to`.
pub fn batch<'a>(
    group: &'a str,
    from: u64,
    to: u64,
    events: &'a [InboxRow],
    scheduler: Option<&'a SchedulerSnapshot>,
) -> ReplayBatch<'a> {
    ReplayBatch {
        agent_id: AGENT,
        group_id: group,
        from_cursor: from,
        to_cursor: to,
        events,
        scheduler,
        snapshot_hash: None,
    }
}

/// A Scheduler snapshot holding one offer per WorkItem ID, each in Group `g`.
pub fn snapshot(work_ids: &[&str]) -> SchedulerSnapshot {
    let mut scheduler = Scheduler::new(SchedulerPolicy::default()).unwrap();
    for id in work_ids {
        assert!(scheduler.admit(&WorkOffer::new(id, "g"), NOW).accepted);
    }
    scheduler.snapshot()
}

fn position(group: &str, sequence: u64) -> Option<EventPosition> {
    Some(EventPosition {
        group_id: group.to_owned(),
        sequence,
    })
}

/// The refusal of `result`, which must be of `kind`, with a readable account.
fn refused<T: Debug>(
    result: Result<T, LocalStoreError>,
    kind: LocalStoreErrorKind,
) -> LocalStoreError {
    let e = result.expect_err("refused");
    assert_eq!(e.kind, kind, "{e}");
    assert!(!e.detail.is_empty());
    e
}

/// Cursors start at 0 and are kept per Agent and Group (§16: the durable cursor).
pub fn cursors_start_at_zero_per_agent_and_group<S: AgentLocalStore>(store: &S) {
    assert_eq!(store.cursor(AGENT, "g").unwrap(), 0);
    let events = rows(&[("g/1", 1), ("g/2", 2), ("g/3", 3)]);
    store
        .commit_replay(&batch("g", 0, 3, &events, None))
        .unwrap();
    assert_eq!(store.cursor(AGENT, "g").unwrap(), 3);
    assert_eq!(store.cursor(AGENT, "h").unwrap(), 0);
    assert_eq!(store.cursor(OTHER, "g").unwrap(), 0);
    let other = ReplayBatch {
        agent_id: OTHER,
        ..batch("g", 0, 1, &events[..1], None)
    };
    store.commit_replay(&other).unwrap();
    assert_eq!(store.cursor(OTHER, "g").unwrap(), 1);
    assert_eq!(store.cursor(AGENT, "g").unwrap(), 3);
}

/// A batch moves the cursor only from the stored one (§16): a batch built on a cursor another
/// replay moved since is a `CursorConflict` and writes nothing.
pub fn a_batch_starts_from_the_stored_cursor<S: AgentLocalStore>(store: &S) {
    let first = rows(&[("g/1", 1), ("g/2", 2)]);
    store
        .commit_replay(&batch("g", 0, 2, &first, None))
        .unwrap();
    let next = rows(&[("g/3", 3)]);
    let scheduler = snapshot(&["w"]);
    for from in [0, 1, 3] {
        let e = refused(
            store.commit_replay(&batch("g", from, 3, &next, Some(&scheduler))),
            LocalStoreErrorKind::CursorConflict,
        );
        assert!(e.detail.contains("stored cursor is 2"), "{e}");
        // Another replay moved the cursor: re-read and decide again (§19).
        assert_eq!(e.code(), WireCode::RevisionConflict);
    }
    assert_eq!(store.cursor(AGENT, "g").unwrap(), 2);
    assert_eq!(store.event_position(AGENT, "g/3").unwrap(), None);
    assert_eq!(store.load_scheduler(AGENT).unwrap(), None);
    store
        .commit_replay(&batch("g", 2, 3, &next, Some(&scheduler)))
        .unwrap();
    assert_eq!(store.cursor(AGENT, "g").unwrap(), 3);
    assert_eq!(
        store.event_position(AGENT, "g/3").unwrap(),
        position("g", 3)
    );
}

/// The cursor never moves back; a batch may leave it where it is (a batch of duplicates only,
/// or one that records only a Scheduler change).
pub fn the_cursor_never_moves_back<S: AgentLocalStore>(store: &S) {
    let events = rows(&[("g/1", 1), ("g/2", 2), ("g/3", 3)]);
    store
        .commit_replay(&batch("g", 0, 3, &events, None))
        .unwrap();
    refused(
        store.commit_replay(&batch("g", 3, 2, &[], None)),
        LocalStoreErrorKind::CursorConflict,
    );
    assert_eq!(store.cursor(AGENT, "g").unwrap(), 3);
    let scheduler = snapshot(&["w"]);
    store
        .commit_replay(&batch("g", 3, 3, &events, Some(&scheduler)))
        .unwrap();
    assert_eq!(store.cursor(AGENT, "g").unwrap(), 3);
    assert_eq!(store.load_scheduler(AGENT).unwrap(), Some(scheduler));
}

/// A batch is atomic: inbox rows, cursor and Scheduler snapshot are written together or not at
/// all (§16: after a crash the store holds whole batches only).
pub fn a_refused_batch_writes_nothing<S: AgentLocalStore>(store: &S) {
    assert!(store.remember_event(AGENT, "x", Some(("g", 1))).unwrap());
    let scheduler = snapshot(&["w"]);
    // "x" is known at g#1 and cannot move to h#2; "b" cannot take g#1 from "x".
    for (group, events) in [("h", rows(&[("a", 1), ("x", 2)])), ("g", rows(&[("b", 1)]))] {
        refused(
            store.commit_replay(&batch(
                group,
                0,
                events.len() as u64,
                &events,
                Some(&scheduler),
            )),
            LocalStoreErrorKind::EventPositionCollision,
        );
        assert_eq!(store.cursor(AGENT, group).unwrap(), 0);
    }
    assert_eq!(store.event_position(AGENT, "a").unwrap(), None);
    assert_eq!(store.event_position(AGENT, "b").unwrap(), None);
    assert_eq!(store.event_position(AGENT, "x").unwrap(), position("g", 1));
    assert_eq!(store.load_scheduler(AGENT).unwrap(), None);
    // Without the colliding row the batch lands whole.
    let events = rows(&[("a", 1)]);
    store
        .commit_replay(&batch("h", 0, 1, &events, Some(&scheduler)))
        .unwrap();
    assert_eq!(store.cursor(AGENT, "h").unwrap(), 1);
    assert_eq!(store.event_position(AGENT, "a").unwrap(), position("h", 1));
    assert_eq!(store.load_scheduler(AGENT).unwrap(), Some(scheduler));
}

/// Inbox rows are deduplicated by Event ID (§16): a row already recorded at its position is
/// accepted again, inside a batch too; an Event ID at a second position, or a position under a
/// second Event ID, is refused even when both are in the same batch.
pub fn inbox_rows_are_deduplicated_by_event_id<S: AgentLocalStore>(store: &S) {
    assert!(store.remember_event(AGENT, "e1", Some(("g", 1))).unwrap());
    let events = rows(&[("e1", 1), ("e2", 2), ("e2", 2)]);
    store
        .commit_replay(&batch("g", 0, 2, &events, None))
        .unwrap();
    assert_eq!(store.event_position(AGENT, "e2").unwrap(), position("g", 2));
    for events in [
        rows(&[("e3", 3), ("e3", 4)]),
        rows(&[("e3", 3), ("e4", 3)]),
        rows(&[("e3", 3), ("e1", 4)]),
    ] {
        refused(
            store.commit_replay(&batch("g", 2, 4, &events, None)),
            LocalStoreErrorKind::EventPositionCollision,
        );
        assert_eq!(store.cursor(AGENT, "g").unwrap(), 2);
        assert_eq!(store.event_position(AGENT, "e3").unwrap(), None);
        assert_eq!(store.event_position(AGENT, "e4").unwrap(), None);
    }
    assert_eq!(store.event_position(AGENT, "e1").unwrap(), position("g", 1));
}

/// `remember_event`: `true` the first time, `false` after; an Event keeps its position and a
/// position holds one Event (§16); each Agent has its own inbox.
pub fn an_event_keeps_its_position<S: AgentLocalStore>(store: &S) {
    assert_eq!(store.event_position(AGENT, "x").unwrap(), None);
    assert!(store.remember_event(AGENT, "x", Some(("g", 1))).unwrap());
    assert!(!store.remember_event(AGENT, "x", Some(("g", 1))).unwrap());
    assert!(!store.remember_event(AGENT, "x", None).unwrap());
    assert_eq!(store.event_position(AGENT, "x").unwrap(), position("g", 1));
    let moved = refused(
        store.remember_event(AGENT, "x", Some(("g", 2))),
        LocalStoreErrorKind::EventPositionCollision,
    );
    assert!(moved.detail.contains("cannot move"), "{moved}");
    // The authority sent one Event at two positions: a broken invariant (§16).
    assert_eq!(moved.code(), WireCode::ProtocolViolation);
    refused(
        store.remember_event(AGENT, "x", Some(("h", 1))),
        LocalStoreErrorKind::EventPositionCollision,
    );
    let taken = refused(
        store.remember_event(AGENT, "y", Some(("g", 1))),
        LocalStoreErrorKind::EventPositionCollision,
    );
    assert!(taken.detail.contains("holds Event"), "{taken}");
    assert_eq!(store.event_position(AGENT, "y").unwrap(), None);
    assert!(store.remember_event(AGENT, "y", Some(("g", 2))).unwrap());
    // Another Agent has its own inbox: the same Event ID elsewhere, the same position taken.
    assert!(store.remember_event(OTHER, "x", Some(("g", 9))).unwrap());
    assert!(store.remember_event(OTHER, "z", Some(("g", 1))).unwrap());
    assert_eq!(store.event_position(OTHER, "x").unwrap(), position("g", 9));
    assert_eq!(store.event_position(AGENT, "x").unwrap(), position("g", 1));
}

/// An Event remembered without a position takes the first position given to it, by
/// `remember_event` or by a batch, unless another Event holds it.
pub fn an_event_without_a_position_takes_the_first_one_given<S: AgentLocalStore>(store: &S) {
    assert!(store.remember_event(AGENT, "e3", None).unwrap());
    assert!(!store.remember_event(AGENT, "e3", None).unwrap());
    assert_eq!(store.event_position(AGENT, "e3").unwrap(), None);
    assert!(!store.remember_event(AGENT, "e3", Some(("g", 3))).unwrap());
    assert_eq!(store.event_position(AGENT, "e3").unwrap(), position("g", 3));
    refused(
        store.remember_event(AGENT, "e3", Some(("g", 4))),
        LocalStoreErrorKind::EventPositionCollision,
    );
    // A position held by another Event is refused, and the Event stays without one.
    assert!(store.remember_event(AGENT, "e4", None).unwrap());
    refused(
        store.remember_event(AGENT, "e4", Some(("g", 3))),
        LocalStoreErrorKind::EventPositionCollision,
    );
    assert_eq!(store.event_position(AGENT, "e4").unwrap(), None);
    // A batch gives it a free one.
    let events = rows(&[("e4", 1)]);
    store
        .commit_replay(&batch("g", 0, 1, &events, None))
        .unwrap();
    assert_eq!(store.event_position(AGENT, "e4").unwrap(), position("g", 1));
}

/// The Scheduler snapshot is replaced whole, per Agent, by `save_scheduler` or by a batch that
/// carries one; a batch without one leaves it.
pub fn the_scheduler_snapshot_is_replaced_whole_per_agent<S: AgentLocalStore>(store: &S) {
    assert_eq!(store.load_scheduler(AGENT).unwrap(), None);
    let one = snapshot(&["w1"]);
    let two = snapshot(&["w1", "w2"]);
    store.save_scheduler(AGENT, &two).unwrap();
    assert_eq!(store.load_scheduler(AGENT).unwrap(), Some(two.clone()));
    store.save_scheduler(AGENT, &one).unwrap();
    assert_eq!(store.load_scheduler(AGENT).unwrap(), Some(one.clone()));
    assert_eq!(store.load_scheduler(OTHER).unwrap(), None);
    store.commit_replay(&batch("g", 0, 0, &[], None)).unwrap();
    assert_eq!(store.load_scheduler(AGENT).unwrap(), Some(one));
    store
        .commit_replay(&batch("g", 0, 0, &[], Some(&two)))
        .unwrap();
    assert_eq!(store.load_scheduler(AGENT).unwrap(), Some(two));
}

/// Every write refuses an empty Agent, Event or Group ID and writes nothing.
pub fn empty_identifiers_are_refused<S: AgentLocalStore>(store: &S) {
    let invalid = LocalStoreErrorKind::InvalidArgument;
    for (agent, event, group) in [("", "e", "g"), (AGENT, "", "g"), (AGENT, "e", "")] {
        let e = refused(
            store.remember_event(agent, event, Some((group, 1))),
            invalid,
        );
        assert!(e.detail.ends_with("must not be empty"), "{e}");
        assert_eq!(e.code(), WireCode::InvalidCommand);
    }
    refused(store.remember_event("", "e", None), invalid);
    refused(store.remember_event(AGENT, "", None), invalid);
    assert_eq!(store.event_position(AGENT, "e").unwrap(), None);
    let scheduler = snapshot(&["w"]);
    refused(store.save_scheduler("", &scheduler), invalid);
    assert_eq!(store.load_scheduler("").unwrap(), None);
    let events = rows(&[("e", 1)]);
    for (agent, group) in [("", "g"), (AGENT, "")] {
        let empty = ReplayBatch {
            agent_id: agent,
            ..batch(group, 0, 1, &events, Some(&scheduler))
        };
        refused(store.commit_replay(&empty), invalid);
        assert_eq!(store.cursor(agent, group).unwrap(), 0);
    }
    assert_eq!(store.event_position(AGENT, "e").unwrap(), None);
    assert_eq!(store.event_position("", "e").unwrap(), None);
    // The same calls with every ID given succeed.
    assert!(store.remember_event(AGENT, "e", Some(("g", 1))).unwrap());
    store.save_scheduler(AGENT, &scheduler).unwrap();
    store
        .commit_replay(&batch("g", 0, 1, &events, None))
        .unwrap();
}

/// A log of `count` Events of Group `g`, `e1`, `e2`, …
fn log(count: u64) -> Vec<ReplayEvent> {
    (1..=count)
        .map(|s| ReplayEvent::new(&format!("e{s}"), "g", s, &b"{}"[..]))
        .collect()
}

/// Every fifth Event offers one WorkItem `w<sequence>`.
fn offers_every_fifth(e: &ReplayEvent) -> Option<EventProjection> {
    e.sequence.is_multiple_of(5).then(|| EventProjection {
        work_offers: vec![WorkOffer::new(&format!("w{}", e.sequence), "g")],
    })
}

/// A replay in batches of 4 whose projector fails at Event 33: batches before the failing one
/// are committed whole, with their offers, and nothing of the failing batch is.
fn replay_until_a_failure<S: AgentLocalStore>(store: &S) {
    let log = log(50);
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
        Ok(offers_every_fifth(e))
    };
    let mut replay = AgentReplay::open(AGENT, store, SchedulerPolicy::default(), NOW)
        .unwrap()
        .with_batch_events(4);
    let e = replay
        .reconcile(["g"], &mut source, &mut projector, NOW)
        .unwrap_err();
    assert!(matches!(e, ReplayError::Projector { .. }), "{e}");
    assert_eq!(store.cursor(AGENT, "g").unwrap(), 32);
    assert_eq!(
        store.event_position(AGENT, "e32").unwrap(),
        position("g", 32)
    );
    assert_eq!(store.event_position(AGENT, "e33").unwrap(), None);
    assert_eq!(
        store.load_scheduler(AGENT).unwrap().unwrap().records.len(),
        6
    );
}

/// A new replay over the stored state restores the Scheduler and processes only the tail.
fn resume_from_the_durable_tail<S: AgentLocalStore>(store: &S) {
    let log = log(50);
    let mut source = |_: &str, after: u64| -> Result<SourcePage, SourceError> {
        Ok(SourcePage::Events(
            log.iter().filter(|e| e.sequence > after).cloned().collect(),
        ))
    };
    let mut replay = AgentReplay::open(AGENT, store, SchedulerPolicy::default(), NOW).unwrap();
    assert_eq!(replay.scheduler().len(), 6);
    let mut seen = Vec::new();
    let mut projector = |e: &ReplayEvent| -> Result<Option<EventProjection>, String> {
        seen.push(e.sequence);
        Ok(offers_every_fifth(e))
    };
    let out = replay
        .reconcile(["g"], &mut source, &mut projector, NOW)
        .unwrap();
    assert_eq!(seen, (33..=50).collect::<Vec<_>>());
    assert_eq!((out["g"].start_cursor, out["g"].end_cursor), (32, 50));
    assert!(out["g"].admissions.iter().all(|a| a.decision.accepted));
    assert_eq!(
        store.load_scheduler(AGENT).unwrap().unwrap().records.len(),
        10
    );
    assert_eq!(store.cursor(AGENT, "g").unwrap(), 50);
}

/// A replay that stopped resumes, with a new [`AgentReplay`] (an Agent restart), from the
/// durable cursor and Scheduler snapshot: nothing applied twice, nothing lost (§16).
pub fn a_new_replay_resumes_from_the_durable_tail<S: AgentLocalStore>(store: &S) {
    replay_until_a_failure(store);
    resume_from_the_durable_tail(store);
}

/// Concurrent batches from one cursor: exactly one commits, the others are `CursorConflict`s
/// that wrote nothing (implementations serialize internally).
#[cfg(not(target_arch = "wasm32"))]
pub fn concurrent_batches_from_one_cursor_commit_once<S: AgentLocalStore + Sync>(store: &S) {
    let ids: Vec<String> = (0..8).map(|i| format!("e{i}")).collect();
    let results: Vec<Result<(), LocalStoreError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = ids
            .iter()
            .map(|id| {
                scope.spawn(move || {
                    let events = rows(&[(id.as_str(), 1)]);
                    store.commit_replay(&batch("g", 0, 1, &events, None))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let winners: Vec<&String> = ids
        .iter()
        .zip(&results)
        .filter(|(_, r)| r.is_ok())
        .map(|(id, _)| id)
        .collect();
    assert_eq!(winners.len(), 1, "{results:?}");
    for result in results.into_iter().filter(Result::is_err) {
        refused(result, LocalStoreErrorKind::CursorConflict);
    }
    assert_eq!(store.cursor(AGENT, "g").unwrap(), 1);
    for id in &ids {
        let expected = (id == winners[0]).then(|| EventPosition {
            group_id: "g".into(),
            sequence: 1,
        });
        assert_eq!(store.event_position(AGENT, id).unwrap(), expected, "{id}");
    }
}

/// Cursors, inbox rows and the Scheduler snapshot survive a reopen; a refused batch left
/// nothing that a reopen could bring back.
pub fn committed_state_survives_a_reopen<R: Reopen>(opened: R) {
    let store = opened.store();
    let scheduler = snapshot(&["w1", "w2"]);
    let events = rows(&[("e1", 1), ("e2", 2)]);
    store
        .commit_replay(&batch("g", 0, 2, &events, Some(&scheduler)))
        .unwrap();
    assert!(store.remember_event(AGENT, "loose", None).unwrap());
    let colliding = rows(&[("e3", 3), ("e1", 4)]);
    refused(
        store.commit_replay(&batch("g", 2, 4, &colliding, Some(&snapshot(&["w3"])))),
        LocalStoreErrorKind::EventPositionCollision,
    );
    let opened = opened.reopen();
    let store = opened.store();
    assert_eq!(store.cursor(AGENT, "g").unwrap(), 2);
    assert_eq!(store.event_position(AGENT, "e2").unwrap(), position("g", 2));
    assert_eq!(store.event_position(AGENT, "e3").unwrap(), None);
    assert_eq!(store.load_scheduler(AGENT).unwrap(), Some(scheduler));
    // What was remembered stays deduplicated across the reopen.
    assert!(!store.remember_event(AGENT, "e1", Some(("g", 1))).unwrap());
    assert!(!store.remember_event(AGENT, "loose", None).unwrap());
    refused(
        store.remember_event(AGENT, "e1", Some(("g", 3))),
        LocalStoreErrorKind::EventPositionCollision,
    );
    refused(
        store.commit_replay(&batch("g", 0, 1, &events[..1], None)),
        LocalStoreErrorKind::CursorConflict,
    );
}

/// A replay that stopped resumes after the store is closed and opened again (an Agent process
/// restart): the durable cursor and Scheduler snapshot are where the last whole batch left
/// them (§16).
pub fn a_replay_resumes_after_a_reopen<R: Reopen>(opened: R) {
    replay_until_a_failure(opened.store());
    let opened = opened.reopen();
    resume_from_the_durable_tail(opened.store());
}

/// Defines one `#[test]` per suite case for the [`AgentLocalStore`] built by `$make` (a
/// closure returning a fresh, empty store). `reopen: $open` (a closure returning a fresh
/// [`Reopen`] over new storage) runs every case on its store, and the reopen cases too.
/// Exported only with the `testing` feature, like the cases it names.
#[cfg(feature = "testing")]
#[macro_export]
macro_rules! agent_store_test_suite {
    (@each [$store:expr]; $($case:ident),* $(,)?) => {
        $(
            #[test]
            fn $case() {
                $crate::replay::suite::$case($store);
            }
        )*
    };
    (@cases [$store:expr]) => {
        $crate::agent_store_test_suite!(@each [$store];
            cursors_start_at_zero_per_agent_and_group,
            a_batch_starts_from_the_stored_cursor,
            the_cursor_never_moves_back,
            a_refused_batch_writes_nothing,
            inbox_rows_are_deduplicated_by_event_id,
            an_event_keeps_its_position,
            an_event_without_a_position_takes_the_first_one_given,
            the_scheduler_snapshot_is_replaced_whole_per_agent,
            empty_identifiers_are_refused,
            a_new_replay_resumes_from_the_durable_tail,
        );
        #[cfg(not(target_arch = "wasm32"))]
        #[test]
        fn concurrent_batches_from_one_cursor_commit_once() {
            $crate::replay::suite::concurrent_batches_from_one_cursor_commit_once($store);
        }
    };
    (reopen: $open:expr) => {
        $crate::agent_store_test_suite!(@cases [$crate::replay::suite::Reopen::store(&($open)())]);
        $crate::agent_store_test_suite!(@each [($open)()];
            committed_state_survives_a_reopen,
            a_replay_resumes_after_a_reopen,
        );
    };
    ($make:expr) => {
        $crate::agent_store_test_suite!(@cases [&($make)()]);
    };
}
