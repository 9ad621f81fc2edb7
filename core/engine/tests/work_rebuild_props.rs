//! Random WorkItem Command sequences through the engine (issue 10): authorize with random
//! dependencies, offer to one or both Agents, acceptance by winners and losers, start, renewal,
//! checkpoint, block / unblock, Artifact publication, submission, review, failure (Worker or
//! Coordinator), cancellation, dependency insertion, resource usage, `mission.cancel`, time
//! passing (leases and offers lapse) and session replacement. The Commands are built from the
//! stored state (the owner's current epoch and lease), so most are valid; the rest are refused.
//!
//! After every step:
//! (a) the §4 invariants hold on the stored WorkItems: at most one live lease, held by the owner
//!     under its Ownership Epoch; one accepted offer per Ownership Epoch; the epoch never
//!     decreases; a terminal item never changes; the Group log stays contiguous and every Event
//!     verifies; a refused Command appended nothing and changed no WorkItem;
//! (b) the replica-side fold (`work::projection`) of the new Events equals the projection of
//!     the stored aggregates (and, at the end, `work::projection::rebuild` of the whole log);
//! (c) a second engine fed the same Commands at the same instants emits byte-identical Events
//!     (or refuses with the same code).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "work_rebuild_harness.rs"]
mod harness;

use harness::*;
use missionweaveprotocol::DescribeError;
use missionweaveprotocol::json::{Number, Value};
use missionweaveprotocol_engine::work::projection::rebuild;
use proptest::prelude::*;

fn op() -> impl Strategy<Value = Op> {
    let item = 0usize..3;
    prop_oneof![
        150 => (item.clone(), any::<u8>()).prop_map(|(item, choice)| Op::Progress { item, choice }),
        3 => (item.clone(), 0u8..8).prop_map(|(item, deps)| Op::Authorize { item, deps }),
        3 => (item.clone(), 1u8..4).prop_map(|(item, who)| Op::Offer { item, who }),
        3 => (item.clone(), 0usize..2).prop_map(|(item, agent)| Op::Accept { item, agent }),
        3 => (item.clone(), proptest::bool::weighted(0.15)).prop_map(|(item, other)| Op::Start { item, other }),
        1 => item.clone().prop_map(|item| Op::Renew { item }),
        1 => item.clone().prop_map(|item| Op::Checkpoint { item }),
        1 => item.clone().prop_map(|item| Op::Block { item }),
        1 => item.clone().prop_map(|item| Op::Unblock { item }),
        2 => (item.clone(), proptest::bool::weighted(0.2)).prop_map(|(item, hash_b)| Op::Publish { item, hash_b }),
        2 => (item.clone(), proptest::bool::weighted(0.2), proptest::bool::weighted(0.15))
            .prop_map(|(item, hash_b, other)| Op::Submit { item, hash_b, other }),
        2 => item.clone().prop_map(|item| Op::AcceptResult { item }),
        1 => (item.clone(), any::<bool>()).prop_map(|(item, by_worker)| Op::Fail { item, by_worker }),
        1 => item.clone().prop_map(|item| Op::Cancel { item }),
        1 => (item.clone(), 0usize..3).prop_map(|(item, dep)| Op::AddDependency { item, dep }),
        1 => (item.clone(), 1u8..5).prop_map(|(item, calls)| Op::Usage { item, calls }),
        1 => prop_oneof![Just(30u16), Just(200), Just(320)].prop_map(|seconds| Op::Advance { seconds }),
        1 => (0usize..2).prop_map(|agent| Op::ReplaceSession { agent }),
        // Rare: it ends every unfinished WorkItem (row 18) and refuses everything after.
        1 => Just(Op::MissionCancel),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn random_work_sequences_keep_invariants_replay_and_determinism(
        head in proptest::collection::vec((0usize..3, 0u8..4).prop_map(|(item, deps)| Op::Authorize { item, deps }), 1..3),
        ops in proptest::collection::vec(op(), 1..60),
    ) {
        let mut run = Run::start();
        run.setup()?;
        for op in head.into_iter().chain(ops) {
            run.step(op)?;
        }
        // The whole log, replayed from scratch, rebuilds the same WorkItems.
        let rebuilt = rebuild(&run.log).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&rebuilt, &run.replica.items);
        run.compare(&rebuilt, Op::Advance { seconds: 0 })?;
        if std::env::var_os("WORK_REBUILD_STATS").is_some() {
            eprintln!("applied {} {:?}", run.applied, kinds(&run.log));
        }
        let twin_log = run.twin.replay(GROUP, 0, 10_000).unwrap().events;
        prop_assert_eq!(twin_log, run.engine.replay(GROUP, 0, 10_000).unwrap().events);
    }
}

/// The fold refuses a log with a gap or a reordering (a replica must not silently skip).
#[test]
fn a_gap_in_the_log_is_detected() {
    let mut run = Run::start();
    run.setup().unwrap();
    for op in [
        Op::Authorize { item: 0, deps: 0 },
        Op::Offer { item: 0, who: 1 },
        Op::Accept { item: 0, agent: 0 },
        Op::Start {
            item: 0,
            other: false,
        },
    ] {
        run.step(op).unwrap();
    }
    assert_eq!(run.applied, 4);
    assert!(rebuild(&run.log).is_ok());
    let at = |kind: &str| kinds(&run.log).iter().position(|k| k == kind).unwrap();
    let mut gapped = run.log.clone();
    gapped.remove(at("work.offer.accepted"));
    let error = rebuild(&gapped).unwrap_err();
    assert_eq!(
        error.wire_code(),
        missionweaveprotocol::WireCode::InternalError
    );
    let mut swapped = run.log.clone();
    swapped.swap(at("work.offer.created"), at("work.offer.accepted"));
    assert!(rebuild(&swapped).is_err());
    // An Event about a WorkItem never authorized is refused too.
    assert!(rebuild(&run.log[at("work.offer.created")..]).is_err());
    // A forged revision is refused.
    let mut forged = run.log.clone();
    let started = at("work.started");
    if let Value::Object(event) = &mut forged[started] {
        event.insert("aggregateRevision", Value::Number(Number::from_u64(7)));
    }
    assert!(rebuild(&forged).is_err());
}

/// Replaying rebuilds the whole lifecycle including session replacement, lapsed leases, row 18
/// and usage — a fixed sequence, so that each path is exercised whatever the random cases hit.
#[test]
fn a_fixed_lifecycle_replays() {
    let mut run = Run::start();
    run.setup().unwrap();
    let ops = [
        Op::Authorize { item: 0, deps: 0 },
        Op::Authorize { item: 1, deps: 1 },
        Op::Offer { item: 0, who: 3 },
        Op::Accept { item: 0, agent: 0 },
        Op::Accept { item: 0, agent: 1 }, // the loser: WORK_ALREADY_OWNED
        Op::Start {
            item: 0,
            other: false,
        },
        Op::Renew { item: 0 },
        Op::Usage { item: 0, calls: 3 },
        Op::Checkpoint { item: 0 },
        Op::ReplaceSession { agent: 0 }, // queued: the ownership lease is re-bound
        Op::Start {
            item: 0,
            other: false,
        },
        Op::ReplaceSession { agent: 0 }, // active → queued
        Op::Start {
            item: 0,
            other: false,
        },
        Op::Block { item: 0 },
        Op::Unblock { item: 0 },
        Op::Start {
            item: 0,
            other: false,
        },
        Op::Block { item: 0 },
        Op::Advance { seconds: 320 },
        Op::Unblock { item: 0 }, // the blocked lease lapsed → open
        Op::Offer { item: 0, who: 1 },
        Op::Accept { item: 0, agent: 0 },
        Op::Start {
            item: 0,
            other: false,
        },
        Op::Publish {
            item: 0,
            hash_b: false,
        },
        Op::Submit {
            item: 0,
            hash_b: false,
            other: false,
        },
        Op::AcceptResult { item: 0 },
        Op::Offer { item: 1, who: 1 },
        Op::AddDependency { item: 1, dep: 2 }, // unknown dependency: refused
        Op::Authorize { item: 2, deps: 0 },
        Op::AddDependency { item: 1, dep: 2 }, // withdraws the pending offer
        Op::Fail {
            item: 1,
            by_worker: false,
        },
        Op::Offer { item: 2, who: 1 },
        Op::Accept { item: 2, agent: 0 },
        Op::Start {
            item: 2,
            other: false,
        },
        Op::Advance { seconds: 320 },
        Op::Offer { item: 2, who: 2 }, // the lapsed owner is fenced
        Op::MissionCancel,             // row 18
    ];
    let expected_refusals = 2;
    for op in ops {
        run.step(op).unwrap();
    }
    let commands = ops
        .iter()
        .filter(|o| !matches!(o, Op::Advance { .. }))
        .count();
    assert_eq!(run.applied, commands - expected_refusals);
    let rebuilt = rebuild(&run.log).unwrap();
    assert_eq!(rebuilt[W1].state.as_str(), "verified");
    assert_eq!(rebuilt[W1].owner.as_ref().unwrap().ownership_epoch, 2);
    assert_eq!(
        rebuilt[W1].submission.as_ref().unwrap().artifact_hashes,
        [HASH_A]
    );
    assert!(rebuilt[W1].cumulative_usage.is_some());
    assert_eq!(
        rebuilt[W2].state.as_str(),
        "failed",
        "row 18 leaves failed items alone"
    );
    assert_eq!(rebuilt[W2].contract_version, 2);
    assert_eq!(rebuilt[W3].state.as_str(), "cancelled");
    let kinds = kinds(&run.log);
    assert_eq!(
        kinds
            .iter()
            .filter(|k| k.as_str() == "ext.missionweaveprotocol.core.work_execution_lease_revoked")
            .count(),
        2
    );
    // `work.unblocked` → `queued` carries the new lease's expiry; without it the replica
    // cannot rebuild the lease, and says so.
    let unblocked = run
        .log
        .iter()
        .position(|e| {
            e.pointer("/payload/nextState").and_then(Value::as_str) == Some("queued")
                && text(e, "/kind") == "work.unblocked"
        })
        .unwrap();
    assert!(
        run.log[unblocked]
            .pointer("/payload/leaseExpiresAt")
            .is_some()
    );
    let mut stripped = run.log.clone();
    if let Value::Object(event) = &mut stripped[unblocked] {
        let mut payload = event
            .get("payload")
            .and_then(Value::as_object)
            .unwrap()
            .clone();
        payload.remove("leaseExpiresAt");
        event.insert("payload", Value::Object(payload));
    }
    assert!(rebuild(&stripped).is_err());
}
