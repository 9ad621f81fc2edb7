//! `replay`: the §16 delivery rules over the in-memory Agent store (positive and negative case
//! for every rule). What the store itself guarantees (cursor, inbox, Scheduler snapshot,
//! batch atomicity, resuming from the durable tail) is the shared conformance suite
//! (`agent_store_suite.rs`, `replay::suite`), run on every Agent-local store.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;

use missionweaveprotocol::WireCode;
use missionweaveprotocol_agent::replay::{
    AgentLocalStore, AgentReplay, EventProjection, InboxRow, LocalStoreErrorKind, MemoryAgentStore,
    ReplayBatch, ReplayError, ReplayErrorFamily, ReplayEvent, ReplaySnapshot, SourceError,
    SourcePage,
};
use missionweaveprotocol_kernel::scheduler::{Scheduler, SchedulerPolicy, WorkOffer};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

const NOW: UnixMillis = UnixMillis(1_784_107_800_000);
const AGENT: &str = "urn:missionweaveprotocol:agent:worker";

fn event(group: &str, sequence: u64) -> ReplayEvent {
    ReplayEvent::new(&format!("{group}/e{sequence}"), group, sequence, &b"{}"[..])
}

/// A source over fixed logs; pages of `page` Events after the cursor, plus `extra` Events
/// appended to every page (duplicates or faults).
struct Logs {
    logs: HashMap<String, Vec<ReplayEvent>>,
    page: usize,
    calls: u32,
    too_old: Option<ReplaySnapshot>,
}

impl Logs {
    fn new(groups: &[(&str, u64)]) -> Self {
        let logs = groups
            .iter()
            .map(|(g, n)| ((*g).to_owned(), (1..=*n).map(|s| event(g, s)).collect()))
            .collect();
        Self {
            logs,
            page: 1000,
            calls: 0,
            too_old: None,
        }
    }

    fn replay(&mut self, group: &str, after: u64) -> Result<SourcePage, SourceError> {
        self.calls += 1;
        if let Some(snapshot) = self.too_old.take()
            && after < snapshot.through_sequence
        {
            return Ok(SourcePage::CursorTooOld(snapshot));
        }
        let log = self.logs.get(group).cloned().unwrap_or_default();
        Ok(SourcePage::Events(
            log.into_iter()
                .filter(|e| e.sequence > after)
                .take(self.page)
                .collect(),
        ))
    }
}

/// Every tenth Event offers one WorkItem named after it.
fn offers_every_tenth(e: &ReplayEvent) -> Result<Option<EventProjection>, String> {
    Ok(e.sequence.is_multiple_of(10).then(|| EventProjection {
        work_offers: vec![WorkOffer::new(&format!("{}/w", e.event_id), &e.group_id)],
    }))
}

fn replay(store: &MemoryAgentStore) -> AgentReplay<&MemoryAgentStore> {
    AgentReplay::new(
        AGENT,
        store,
        Scheduler::new(SchedulerPolicy::default()).unwrap(),
    )
    .unwrap()
}

#[test]
fn applies_in_order_admits_and_deduplicates() {
    let store = MemoryAgentStore::new();
    let mut logs = Logs::new(&[("g", 30)]);
    let mut r = replay(&store);
    let mut projected = 0;
    let mut projector = |e: &ReplayEvent| {
        projected += 1;
        offers_every_tenth(e)
    };
    let out = r
        .reconcile(
            ["g"],
            &mut |g: &str, a| logs.replay(g, a),
            &mut projector,
            NOW,
        )
        .unwrap();
    let g = &out["g"];
    assert_eq!(
        (g.start_cursor, g.end_cursor, g.applied_events),
        (0, 30, 30)
    );
    assert_eq!(g.admissions.len(), 3);
    assert!(g.admissions.iter().all(|a| a.decision.accepted));
    assert_eq!(store.cursor(AGENT, "g").unwrap(), 30);
    assert_eq!(store.inbox_len(AGENT), 30);
    // The committed Scheduler snapshot holds the three admitted offers.
    assert_eq!(
        store.load_scheduler(AGENT).unwrap().unwrap().records.len(),
        3
    );

    // A second reconcile over a source that resends everything: all duplicates, no projection.
    let mut resend = |g: &str, _after: u64| logs.replay(g, 0);
    let mut projector = |e: &ReplayEvent| {
        projected += 1;
        offers_every_tenth(e)
    };
    let again = r
        .reconcile(["g"], &mut resend, &mut projector, NOW)
        .unwrap();
    assert_eq!(again["g"].applied_events, 0);
    assert_eq!(again["g"].duplicate_events, 30);
    assert_eq!(projected, 30);
}

#[test]
fn an_event_id_keeps_its_position() {
    let store = MemoryAgentStore::new();
    let mut logs = Logs::new(&[("g", 3)]);
    let mut r = replay(&store);
    r.reconcile(
        ["g"],
        &mut |g: &str, a| logs.replay(g, a),
        &mut offers_every_tenth,
        NOW,
    )
    .unwrap();
    // Sequence 4 arrives under the ID of sequence 2.
    logs.logs
        .get_mut("g")
        .unwrap()
        .push(ReplayEvent::new("g/e2", "g", 4, &b"{}"[..]));
    let e = r
        .reconcile(
            ["g"],
            &mut |g: &str, a| logs.replay(g, a),
            &mut offers_every_tenth,
            NOW,
        )
        .unwrap_err();
    assert!(matches!(
        e,
        ReplayError::EventMoved {
            known_sequence: 2,
            sequence: 4,
            ..
        }
    ));
    assert_eq!(e.family(), ReplayErrorFamily::Sequence);
    assert_eq!(e.code(), WireCode::ProtocolViolation);
    assert_eq!(store.cursor(AGENT, "g").unwrap(), 3);
    // In the middle of a batch: the Events before it commit, with exactly their offers.
    let log = logs.logs.get_mut("g").unwrap();
    log.pop();
    log.extend([
        event("g", 4),
        ReplayEvent::new("g/e1", "g", 5, &b"{}"[..]),
        event("g", 6),
    ]);
    let mut every_event = |e: &ReplayEvent| {
        Ok(Some(EventProjection {
            work_offers: vec![WorkOffer::new(&format!("{}/w", e.event_id), "g")],
        }))
    };
    let e = r
        .reconcile(
            ["g"],
            &mut |g: &str, a| logs.replay(g, a),
            &mut every_event,
            NOW,
        )
        .unwrap_err();
    assert!(matches!(
        e,
        ReplayError::EventMoved {
            known_sequence: 1,
            sequence: 5,
            ..
        }
    ));
    assert_eq!(store.cursor(AGENT, "g").unwrap(), 4);
    let stored = store.load_scheduler(AGENT).unwrap().unwrap();
    assert_eq!(stored, r.scheduler().snapshot());
    assert_eq!(stored.records.len(), 1);
    assert_eq!(stored.records[0].offer.work_id, "g/e4/w");
    // A moved duplicate (sequence ≤ cursor under another known ID) is refused too.
    let mut moved = |_: &str, _: u64| {
        Ok(SourcePage::Events(vec![ReplayEvent::new(
            "g/e1",
            "g",
            3,
            &b"{}"[..],
        )]))
    };
    let e = r
        .reconcile(["g"], &mut moved, &mut offers_every_tenth, NOW)
        .unwrap_err();
    assert!(matches!(e, ReplayError::EventMoved { .. }));
}

#[test]
fn a_failed_projection_leaves_the_event_replayable() {
    let store = MemoryAgentStore::new();
    let mut logs = Logs::new(&[("g", 10)]);
    let mut r = replay(&store);
    let mut failing = |e: &ReplayEvent| {
        if e.sequence == 6 {
            Err("projector down".to_owned())
        } else {
            offers_every_tenth(e)
        }
    };
    let e = r
        .reconcile(
            ["g"],
            &mut |g: &str, a| logs.replay(g, a),
            &mut failing,
            NOW,
        )
        .unwrap_err();
    assert!(matches!(e, ReplayError::Projector { .. }));
    assert_eq!(e.family(), ReplayErrorFamily::Projection);
    // The five before it are committed, the sixth is not.
    assert_eq!(store.cursor(AGENT, "g").unwrap(), 5);
    assert!(store.event_position(AGENT, "g/e6").unwrap().is_none());
    let out = r
        .reconcile(
            ["g"],
            &mut |g: &str, a| logs.replay(g, a),
            &mut offers_every_tenth,
            NOW,
        )
        .unwrap();
    assert_eq!((out["g"].start_cursor, out["g"].end_cursor), (5, 10));
    assert_eq!(out["g"].applied_events, 5);
}

#[test]
fn gaps_are_refused_without_moving_over_them() {
    let store = MemoryAgentStore::new();
    let mut logs = Logs::new(&[("g", 6)]);
    logs.logs.get_mut("g").unwrap().remove(3); // sequence 4 is missing
    let mut r = replay(&store);
    let e = r
        .reconcile(
            ["g"],
            &mut |g: &str, a| logs.replay(g, a),
            &mut offers_every_tenth,
            NOW,
        )
        .unwrap_err();
    assert!(matches!(
        e,
        ReplayError::Gap {
            cursor: 3,
            sequence: 5,
            ..
        }
    ));
    assert_eq!(e.family(), ReplayErrorFamily::Sequence);
    assert_eq!(store.cursor(AGENT, "g").unwrap(), 3);
    // An Event without a sequence cannot be ordered.
    let mut unordered = |_: &str, _: u64| {
        Ok(SourcePage::Events(vec![ReplayEvent::new(
            "x",
            "g",
            0,
            &b"{}"[..],
        )]))
    };
    let e = r
        .reconcile(["g"], &mut unordered, &mut offers_every_tenth, NOW)
        .unwrap_err();
    assert!(matches!(e, ReplayError::MissingSequence { .. }));
    assert_eq!(e.family(), ReplayErrorFamily::Sequence);
    // Contiguous Events pass (positive case above: applies_in_order_admits_and_deduplicates).
}

#[test]
fn events_of_another_group_are_refused() {
    let store = MemoryAgentStore::new();
    let mut r = replay(&store);
    let mut wrong = |_: &str, _: u64| Ok(SourcePage::Events(vec![event("h", 1)]));
    let e = r
        .reconcile(["g"], &mut wrong, &mut offers_every_tenth, NOW)
        .unwrap_err();
    assert!(matches!(e, ReplayError::WrongGroup { .. }));
    assert_eq!(e.family(), ReplayErrorFamily::Group);
    assert_eq!(store.cursor(AGENT, "g").unwrap(), 0);
    assert_eq!(store.cursor(AGENT, "h").unwrap(), 0);
    let e = r
        .reconcile([""], &mut wrong, &mut offers_every_tenth, NOW)
        .unwrap_err();
    assert_eq!(e, ReplayError::InvalidArgument("group_id"));
    assert!(
        AgentReplay::new(
            "",
            &store,
            Scheduler::new(SchedulerPolicy::default()).unwrap()
        )
        .is_err()
    );
}

#[test]
fn groups_have_independent_tails() {
    let store = MemoryAgentStore::new();
    let mut logs = Logs::new(&[("a", 5), ("b", 12)]);
    logs.page = 4;
    let mut r = replay(&store);
    let out = r
        .reconcile(
            ["a", "b", "a"],
            &mut |g: &str, x| logs.replay(g, x),
            &mut offers_every_tenth,
            NOW,
        )
        .unwrap();
    assert_eq!(out.len(), 2);
    assert_eq!((out["a"].end_cursor, out["b"].end_cursor), (5, 12));
    logs.logs
        .insert("a".into(), (1..=7).map(|s| event("a", s)).collect());
    let out = r
        .reconcile(
            ["a", "b"],
            &mut |g: &str, x| logs.replay(g, x),
            &mut offers_every_tenth,
            NOW,
        )
        .unwrap();
    assert_eq!((out["a"].start_cursor, out["a"].end_cursor), (5, 7));
    assert_eq!((out["b"].applied_events, out["b"].end_cursor), (0, 12));
}

#[test]
fn a_colliding_offer_restores_the_scheduler_to_the_committed_prefix() {
    let store = MemoryAgentStore::new();
    let mut logs = Logs::new(&[("g", 4)]);
    let mut r = replay(&store);
    // Event 2 offers w1 and w2; event 4 offers w3 then w1 with other content.
    let mut projector = |e: &ReplayEvent| -> Result<Option<EventProjection>, String> {
        let offer = |id: &str| WorkOffer::new(id, "g");
        Ok(match e.sequence {
            2 => Some(EventProjection {
                work_offers: vec![offer("w1"), offer("w2")],
            }),
            4 => {
                let mut other = offer("w1");
                other.priority = 7;
                Some(EventProjection {
                    work_offers: vec![offer("w3"), other],
                })
            }
            _ => None,
        })
    };
    let e = r
        .reconcile(
            ["g"],
            &mut |g: &str, a| logs.replay(g, a),
            &mut projector,
            NOW,
        )
        .unwrap_err();
    assert!(matches!(&e, ReplayError::Projection { work_id, .. } if work_id == "w1"));
    assert_eq!(e.family(), ReplayErrorFamily::Projection);
    assert_eq!(store.cursor(AGENT, "g").unwrap(), 3);
    // The live Scheduler and the stored snapshot hold exactly w1 and w2 (not w3).
    let mut expected = Scheduler::new(SchedulerPolicy::default()).unwrap();
    expected.admit(&WorkOffer::new("w1", "g"), NOW);
    expected.admit(&WorkOffer::new("w2", "g"), NOW);
    assert_eq!(r.scheduler().snapshot(), expected.snapshot());
    assert_eq!(
        store.load_scheduler(AGENT).unwrap().unwrap(),
        expected.snapshot()
    );
    // An offer without a WorkItem ID is a projection error too.
    let mut empty = |_: &ReplayEvent| {
        Ok(Some(EventProjection {
            work_offers: vec![WorkOffer::new("", "g")],
        }))
    };
    let e = r
        .reconcile(["g"], &mut |g: &str, a| logs.replay(g, a), &mut empty, NOW)
        .unwrap_err();
    assert!(matches!(e, ReplayError::Projection { .. }));
}

#[test]
fn batches_commit_atomically_in_groups_of_n() {
    let store = MemoryAgentStore::new();
    let mut logs = Logs::new(&[("g", 10)]);
    let mut r = replay(&store).with_batch_events(3);
    r.reconcile(
        ["g"],
        &mut |g: &str, a| logs.replay(g, a),
        &mut offers_every_tenth,
        NOW,
    )
    .unwrap();
    // 3 + 3 + 3 + 1.
    assert_eq!(store.commits(), 4);
    assert_eq!(store.cursor(AGENT, "g").unwrap(), 10);
}

#[test]
fn cursor_too_old_restores_the_snapshot_and_continues() {
    let store = MemoryAgentStore::new();
    let mut logs = Logs::new(&[("g", 120)]);
    logs.too_old = Some(ReplaySnapshot {
        artifact_hash: format!("sha256:{}", "a".repeat(64)),
        through_sequence: 100,
        projection: EventProjection {
            work_offers: vec![WorkOffer::new("from-snapshot", "g")],
        },
    });
    let mut r = replay(&store);
    let mut seen = Vec::new();
    let mut projector = |e: &ReplayEvent| {
        seen.push(e.sequence);
        offers_every_tenth(e)
    };
    let out = r
        .reconcile(
            ["g"],
            &mut |g: &str, a| logs.replay(g, a),
            &mut projector,
            NOW,
        )
        .unwrap();
    assert_eq!(seen, (101..=120).collect::<Vec<_>>());
    assert_eq!(out["g"].end_cursor, 120);
    assert_eq!(out["g"].snapshots_restored.len(), 1);
    assert_eq!(
        r.scheduler().state("from-snapshot").map(|s| s.as_str()),
        Some("ready")
    );
    assert_eq!(out["g"].admissions[0].work_id, "from-snapshot");

    // A snapshot that does not move the cursor forward is refused.
    logs.too_old = Some(ReplaySnapshot {
        artifact_hash: format!("sha256:{}", "b".repeat(64)),
        through_sequence: 90,
        projection: EventProjection::default(),
    });
    let mut behind = |g: &str, a: u64| match logs.too_old.take() {
        Some(s) => Ok(SourcePage::CursorTooOld(s)),
        None => logs.replay(g, a),
    };
    let e = r
        .reconcile(["g"], &mut behind, &mut offers_every_tenth, NOW)
        .unwrap_err();
    assert!(matches!(
        e,
        ReplayError::SnapshotBehindCursor {
            cursor: 120,
            through_sequence: 90,
            ..
        }
    ));
    assert_eq!(store.cursor(AGENT, "g").unwrap(), 120);
}

#[test]
fn a_source_failure_keeps_its_code() {
    let store = MemoryAgentStore::new();
    let mut r = replay(&store);
    let mut busy = |_: &str, _: u64| {
        Err(SourceError {
            code: WireCode::Backpressure,
            detail: "slow down".into(),
        })
    };
    let e = r
        .reconcile(["g"], &mut busy, &mut offers_every_tenth, NOW)
        .unwrap_err();
    assert_eq!(e.code(), WireCode::Backpressure);
    assert_eq!(e.family(), ReplayErrorFamily::Replay);
}

#[test]
fn a_refused_batch_writes_nothing_and_reverts_the_scheduler() {
    let store = MemoryAgentStore::new();
    // Another replay of the same Agent already moved the cursor: the batch from 0 conflicts.
    store
        .commit_replay(&ReplayBatch {
            agent_id: AGENT,
            group_id: "g",
            from_cursor: 0,
            to_cursor: 0,
            events: &[],
            scheduler: None,
            snapshot_hash: None,
        })
        .unwrap();
    let mut logs = Logs::new(&[("g", 10)]);
    let mut r = replay(&store);
    let mut source = |g: &str, a: u64| {
        let page = logs.replay(g, a);
        // The other replay commits between our page and our commit.
        if a == 0 {
            store
                .commit_replay(&ReplayBatch {
                    agent_id: AGENT,
                    group_id: "g",
                    from_cursor: 0,
                    to_cursor: 1,
                    events: &[InboxRow {
                        event_id: "g/e1".into(),
                        sequence: 1,
                    }],
                    scheduler: None,
                    snapshot_hash: None,
                })
                .unwrap();
        }
        page
    };
    let e = r
        .reconcile(["g"], &mut source, &mut offers_every_tenth, NOW)
        .unwrap_err();
    assert!(matches!(&e, ReplayError::Store(s) if s.kind == LocalStoreErrorKind::CursorConflict));
    assert_eq!(e.code(), WireCode::RevisionConflict);
    assert!(r.scheduler().is_empty());
    assert_eq!(store.cursor(AGENT, "g").unwrap(), 1);
    assert!(store.event_position(AGENT, "g/e2").unwrap().is_none());
}
