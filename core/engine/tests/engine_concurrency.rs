//! Concurrent Commands on one Mission through one `InMemoryStore` (§15.2, §15.3): each is
//! applied exactly once or refused with a typed error, the Group log stays contiguous, and
//! nothing is half-applied.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_fixture.rs"]
mod fixture;

use std::collections::HashSet;

use fixture::*;
use missionweaveprotocol::{DescribeError, WireCode};
use missionweaveprotocol_engine::engine::Engine;
use missionweaveprotocol_engine::events::{EventIssuer, SequentialEventIds};
use missionweaveprotocol_engine::ingress::VerifiedCommand;
use missionweaveprotocol_engine::store::InMemoryStore;

const THREADS: usize = 8;

/// Verifies the whole log: contiguous from 1, every Event valid, every aggregateRevision the
/// Mission revision it produced; returns the kinds in order.
fn audit(f: &Fixture, engine: &TestEngine) -> Vec<String> {
    let page = engine.replay(GROUP, 0, 10_000).unwrap();
    assert!(page.continuation.is_none());
    let mut ids = HashSet::new();
    page.events
        .iter()
        .enumerate()
        .map(|(i, record)| {
            assert_eq!(record.sequence, i as u64 + 1, "the Group log has no gap");
            assert!(ids.insert(record.event_id.clone()), "Event IDs are unique");
            let e = f.check_event(record);
            assert_eq!(
                e.pointer("/aggregateRevision")
                    .unwrap()
                    .as_number()
                    .unwrap()
                    .as_u64(),
                Some(record.sequence),
                "one Mission revision per Event, in log order"
            );
            text(&e, "/kind").to_owned()
        })
        .collect()
}

fn race(engine: &TestEngine, commands: &[VerifiedCommand]) -> Vec<Result<bool, WireCode>> {
    std::thread::scope(|s| {
        let handles: Vec<_> = commands
            .iter()
            .map(|c| {
                s.spawn(move || {
                    engine
                        .perform(c, NOW)
                        .map(|p| p.duplicate)
                        .map_err(|e| e.wire_code())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn conflicting_transitions_apply_exactly_one() {
    let f = fixture();
    for _round in 0..5 {
        let engine = f.awaiting();
        // Owners approve, request changes and cancel; the policy service terminates: all at
        // once, each from awaiting_approval. Exactly one wins; the others see the new state.
        let mut commands = Vec::new();
        for i in 0..THREADS {
            commands.push(match i % 4 {
                0 => f.approve(2),
                1 => f.command(
                    "mission.request_changes",
                    OWNER,
                    "",
                    r#"{"missionRevision": 2, "feedback": "x"}"#,
                ),
                2 => f.command("mission.cancel", OWNER, "", r#"{"reason": "x"}"#),
                _ => f.command("mission.terminate", SERVICE, "", r#"{"reason": "x"}"#),
            });
        }
        let outcomes = race(&engine, &commands);
        let applied = outcomes.iter().filter(|o| **o == Ok(false)).count();
        let kinds = audit(&f, &engine);
        // request_changes reopens the Mission, after which cancel/terminate may also apply.
        assert!(applied >= 1);
        assert_eq!(
            kinds.len(),
            2 + applied,
            "one Event per applied Command, no more"
        );
        for o in &outcomes {
            match o {
                Ok(false) => {}
                Err(code) => assert!(
                    matches!(
                        code,
                        WireCode::InvalidStateTransition | WireCode::RevisionConflict
                    ),
                    "typed refusal, got {code}"
                ),
                Ok(true) => panic!("no Command was sent twice"),
            }
        }
        let (state, revision) = state(&engine, MISSION);
        assert_eq!(
            revision,
            kinds.len() as u64,
            "the Mission revision matches its Events"
        );
        assert_ne!(state, "awaiting_approval");
    }
}

#[test]
fn commuting_renewals_all_apply_in_some_order() {
    let f = fixture();
    let engine = f.active();
    let commands: Vec<_> = (0..THREADS)
        .map(|_| f.by_coordinator("mission.renew_coordinator", 1, "{}"))
        .collect();
    let outcomes = race(&engine, &commands);
    assert!(outcomes.iter().all(|o| *o == Ok(false)), "{outcomes:?}");
    let kinds = audit(&f, &engine);
    assert_eq!(kinds.len(), 1 + THREADS);
    let m = engine.mission(MISSION).unwrap().unwrap();
    assert_eq!(m.lease.renewal_count, THREADS as u64);
    assert_eq!(m.revision(), 1 + THREADS as u64);
}

#[test]
fn the_same_command_raced_applies_once() {
    let f = fixture();
    let engine = f.active();
    let renew = f.by_coordinator("mission.renew_coordinator", 1, "{}");
    let commands = vec![renew; THREADS];
    let outcomes = race(&engine, &commands);
    assert_eq!(outcomes.iter().filter(|o| **o == Ok(false)).count(), 1);
    assert_eq!(
        outcomes.iter().filter(|o| **o == Ok(true)).count(),
        THREADS - 1
    );
    assert_eq!(audit(&f, &engine).len(), 2);
}

/// Within one engine, Commands of one Group take turns (the engine's Group lanes): even with a
/// single attempt, none of many racing renewals loses a race and every one applies.
#[test]
fn one_engine_serializes_a_groups_commands_so_none_is_contended() {
    let f = fixture();
    let engine = f.engine().with_max_attempts(1);
    f.ok(&engine, &f.create(), NOW);
    let per_thread = 25;
    let commands: Vec<Vec<_>> = (0..THREADS)
        .map(|_| {
            (0..per_thread)
                .map(|_| f.by_coordinator("mission.renew_coordinator", 1, "{}"))
                .collect()
        })
        .collect();
    let outcomes: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = commands
            .iter()
            .map(|batch| {
                s.spawn(|| {
                    batch
                        .iter()
                        .map(|c| engine.perform(c, NOW).map_err(|e| e.reason().to_owned()))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
    assert_eq!(audit(&f, &engine).len(), 1 + THREADS * per_thread);
}

#[test]
fn bounded_retries_report_contention_as_retryable() {
    let f = fixture();
    // Two engines over one store (two processes on one database): their Commands of one Group
    // race on the store's sequence check. One attempt only: losers report INTERNAL_ERROR
    // (retryable, reason `contended`) and never half-apply.
    let store = InMemoryStore::new();
    let engines: Vec<_> = ["a", "b"]
        .iter()
        .map(|name| {
            Engine::new(
                &store,
                EventIssuer::new(authority(), f.authority_key.clone()),
                SequentialEventIds::new(format!("urn:missionweaveprotocol:event:{name}-")),
            )
            .with_max_attempts(1)
        })
        .collect();
    f.open_sessions(&engines[0]);
    engines[0].perform(&f.create(), NOW).unwrap();
    let rounds = 20;
    let commands: Vec<_> = (0..2 * rounds)
        .map(|_| f.by_coordinator("mission.renew_coordinator", 1, "{}"))
        .collect();
    let outcomes: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = commands
            .chunks(rounds)
            .zip(&engines)
            .map(|(batch, engine)| {
                s.spawn(move || {
                    batch
                        .iter()
                        .map(|c| engine.perform(c, NOW))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let applied = outcomes.iter().filter(|o| o.is_ok()).count();
    assert!(applied >= rounds);
    for e in outcomes.iter().filter_map(|o| o.as_ref().err()) {
        assert_eq!(e.wire_code(), WireCode::InternalError);
        assert_eq!(e.reason(), "contended");
        assert!(e.retryable());
    }
    let page = engines[0].replay(GROUP, 0, 10_000).unwrap();
    assert_eq!(page.events.len(), 1 + applied, "nothing half-applied");
    assert_eq!(
        engines[1]
            .mission(MISSION)
            .unwrap()
            .unwrap()
            .lease
            .renewal_count,
        applied as u64
    );
}

/// §15.1 under a race: copies of one signed `mission.create` sent at once. A copy whose
/// decision runs after the first copy committed sees the Mission "already existing"; it must
/// still answer the first result (a duplicate), never a refusal, and the log holds one Event.
#[test]
fn the_same_refusable_command_raced_answers_the_first_result() {
    let f = fixture();
    let create = f.create();
    for _round in 0..40 {
        let engine = f.engine();
        let outcomes = race(&engine, &vec![create.clone(); THREADS]);
        assert_eq!(
            outcomes.iter().filter(|o| **o == Ok(false)).count(),
            1,
            "{outcomes:?}"
        );
        assert_eq!(
            outcomes.iter().filter(|o| **o == Ok(true)).count(),
            THREADS - 1,
            "every other copy answers the first result: {outcomes:?}"
        );
        assert_eq!(audit(&f, &engine).len(), 1);
    }
}

/// The second receipt read on the refusal path changes nothing for a Command that is simply
/// refused: a different `mission.create` of the same Mission still gets its refusal.
#[test]
fn a_refusal_without_a_receipt_stays_a_refusal() {
    let f = fixture();
    let engine = f.engine();
    f.ok(&engine, &f.create(), NOW);
    let again = f.create(); // a new Action ID: another Command, same Mission
    let e = engine.perform(&again, NOW).unwrap_err();
    assert_eq!(e.wire_code(), WireCode::InvalidStateTransition);
    assert_eq!(audit(&f, &engine).len(), 1);
}
