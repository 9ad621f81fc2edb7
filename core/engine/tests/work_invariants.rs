//! Random Command sequences against one WorkItem never break the §4 / §10.2 invariants: one
//! revision per accepted transition, Ownership Epochs only rise and only on acceptance, at most
//! one live lease, terminal states stay terminal, and every state is a schema-valid WorkItem.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "work_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol::schema::SchemaCatalog;
use missionweaveprotocol_engine::work::fencing::WorkClaim;
use missionweaveprotocol_engine::work::offers;
use missionweaveprotocol_engine::work::transitions::closing::{self, CancelInput, FailInput};
use missionweaveprotocol_engine::work::transitions::execution::{
    self, BlockInput, CheckpointInput, RenewInput, StartInput, UnblockInput,
};
use missionweaveprotocol_engine::work::transitions::review;
use missionweaveprotocol_engine::work::{
    LeaseGrant, Transition, WorkError, WorkItem, WorkItemState,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use proptest::prelude::*;

const AGENTS: [&str; 3] = [W1, W2, "urn:mwp:agent:worker-3"];

#[derive(Clone, Debug)]
enum Op {
    Advance(u64),
    Offer(u8),
    Accept(usize),
    Start(bool),
    Renew(bool),
    Checkpoint(bool),
    Block(bool),
    Unblock,
    Submit(bool),
    Review,
    Fail(bool),
    Cancel,
}

fn op() -> impl Strategy<Value = Op> {
    // Weighted toward progress so deep states (active, blocked, submitted, verified) are
    // reached often; a quarter of lease-bound Commands come from a stale epoch.
    let stale = || prop::bool::weighted(0.25);
    prop_oneof![
        2 => (1u64..1200).prop_map(Op::Advance),
        3 => (1u8..8).prop_map(Op::Offer),
        4 => (0usize..3).prop_map(Op::Accept),
        4 => stale().prop_map(Op::Start),
        2 => stale().prop_map(Op::Renew),
        2 => stale().prop_map(Op::Checkpoint),
        2 => stale().prop_map(Op::Block),
        2 => Just(Op::Unblock),
        4 => stale().prop_map(Op::Submit),
        4 => Just(Op::Review),
        1 => any::<bool>().prop_map(Op::Fail),
        1 => Just(Op::Cancel),
    ]
}

/// The owner's claim on its current lease, or (when `stale`) the previous epoch's.
fn claim_for(item: &WorkItem, stale: bool) -> WorkClaim {
    let lease = item
        .execution_lease
        .iter()
        .chain(item.ownership_lease.iter())
        .find(|l| l.state().as_str() == "active")
        .map_or("urn:mwp:lease:none".to_owned(), |l| l.lease_id().to_owned());
    let (agent, epoch) = item.owner.as_ref().map_or((W1.to_owned(), 1), |o| {
        (o.agent_id.clone(), o.ownership_epoch)
    });
    WorkClaim {
        agent_id: agent,
        session_epoch: SESSION,
        ownership_epoch: if stale {
            epoch.saturating_sub(1).max(1)
        } else {
            epoch
        },
        lease_id: lease,
    }
}

fn grant(now: UnixMillis, n: u64) -> LeaseGrant {
    LeaseGrant {
        lease_id: format!("urn:mwp:lease:g{n}"),
        expires_at: now.saturating_add_ms(600_000),
    }
}

fn apply(
    item: &WorkItem,
    op: &Op,
    now: UnixMillis,
    n: u64,
) -> Result<Transition<WorkItem>, WorkError> {
    match op {
        Op::Advance(_) => unreachable!(),
        Op::Offer(mask) => {
            let agents: Vec<&str> = (0..3)
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| AGENTS[i])
                .collect();
            offers::offer(
                item,
                offer_input(&agents, &format!("o{n}"), now.saturating_add_ms(300_000)),
                now,
            )
        }
        Op::Accept(i) => {
            offers::accept_offer(item, accept_input(AGENTS[*i], &format!("a{n}"), now), now)
        }
        Op::Start(stale) => execution::start(
            item,
            StartInput {
                claim: claim_for(item, *stale),
                execution_lease: grant(now, n),
                execution_approved: false,
            },
            no_deps,
            now,
        ),
        Op::Renew(stale) => execution::renew_execution_lease(
            item,
            RenewInput {
                claim: claim_for(item, *stale),
                expires_at: now.saturating_add_ms(900_000),
                progress: None,
            },
            now,
        ),
        Op::Checkpoint(stale) => execution::checkpoint(
            item,
            CheckpointInput {
                claim: claim_for(item, *stale),
                checkpoint: progress(),
                ownership_lease: grant(now, n),
            },
            now,
        ),
        Op::Block(stale) => execution::block(
            item,
            BlockInput {
                claim: claim_for(item, *stale),
                reason: "waiting".into(),
                checkpoint: progress(),
                blocked_lease: grant(now, n),
            },
            now,
        ),
        Op::Unblock => execution::unblock(
            item,
            UnblockInput {
                ownership_lease: Some(grant(now, n)),
            },
            now,
        ),
        Op::Submit(stale) => {
            let mut input = submit_input_for(item);
            input.claim = claim_for(item, *stale);
            review::submit(item, input, now)
        }
        Op::Review => review::accept_result(item, review_input(item), now),
        Op::Fail(worker) => closing::fail(
            item,
            FailInput {
                claim: worker.then(|| claim_for(item, false)),
                ..fail_input()
            },
            now,
        ),
        Op::Cancel => closing::cancel(
            item,
            CancelInput {
                reason: "stop".into(),
            },
            now,
        ),
    }
}

fn submit_input_for(item: &WorkItem) -> review::SubmitInput {
    review::SubmitInput {
        claim: claim_for(item, false),
        artifact_hashes: vec![HASH.into()],
        evidence: vec![evidence(item, "e", "deterministic_test", &["c1"])],
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_sequences_keep_the_invariants(ops in proptest::collection::vec(op(), 1..60)) {
        let schemas = SchemaCatalog::embedded();
        let mut item = open_item();
        let mut now = at(0);
        for (n, op) in ops.iter().enumerate() {
            if let Op::Advance(secs) = op {
                now = now.saturating_add_ms(secs * 1000);
                continue;
            }
            let before = item.clone();
            let result = apply(&item, op, now, n as u64);
            prop_assert_eq!(&item, &before, "a decision mutated its input");
            let Ok(t) = result else { continue };
            let next = t.state;
            // Terminal states stay terminal (digest 2.2).
            prop_assert!(!before.state.is_terminal(), "{:?} left {:?}", op, before.state);
            // One accepted transition, one revision, one Event.
            prop_assert_eq!(next.revision, before.revision + 1);
            prop_assert_eq!(t.events.len(), 1);
            // Ownership Epochs only rise, by one, and only on acceptance (§4.5).
            let epoch = |i: &WorkItem| i.owner.as_ref().map_or(0, |o| o.ownership_epoch);
            if matches!(op, Op::Accept(_)) {
                prop_assert_eq!(epoch(&next), epoch(&before) + 1);
                prop_assert_eq!(next.state, WorkItemState::Queued);
            } else {
                prop_assert_eq!(epoch(&next), epoch(&before));
            }
            // At most one live lease; `active` has a live Execution Lease, `queued` a live
            // ownership lease; no live lease outside queued/active/blocked.
            let live = [&next.ownership_lease, &next.execution_lease]
                .into_iter()
                .flatten()
                .filter(|l| l.is_live(now))
                .count();
            prop_assert!(live <= 1);
            match next.state {
                WorkItemState::Active => prop_assert!(next.execution_lease.as_ref().unwrap().is_live(now)),
                WorkItemState::Queued => prop_assert!(next.ownership_lease.as_ref().unwrap().is_live(now)),
                WorkItemState::Blocked => {}
                _ => prop_assert_eq!(live, 0),
            }
            // Exactly one accepted offer per acceptance; nothing pending once owned.
            if matches!(next.state, WorkItemState::Queued | WorkItemState::Active) {
                prop_assert!(next.offers.iter().all(|o| o.status.as_str() != "pending"));
            }
            // The state is always a schema-valid WorkItem and survives the store.
            let document = next.to_schema_document().unwrap();
            prop_assert!(schemas.validate("work-item", &document).is_ok());
            let bytes = next.to_canonical_bytes().unwrap();
            prop_assert_eq!(WorkItem::from_json(&bytes).unwrap().to_canonical_bytes().unwrap(), bytes);
            item = next;
        }
    }
}
