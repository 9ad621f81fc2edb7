//! Offers and Ownership Epoch fencing (§10.3, §4.5, §11.3, §11.5, digest 2.5–2.6).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "work_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol::WireCode;
use missionweaveprotocol_engine::work::fencing::WorkClaim;
use missionweaveprotocol_engine::work::offers;
use missionweaveprotocol_engine::work::transitions::closing::{self, FailInput};
use missionweaveprotocol_engine::work::transitions::execution::{self, RenewInput};
use missionweaveprotocol_engine::work::transitions::review;
use missionweaveprotocol_engine::work::{OfferStatus, WorkItemState};

#[test]
fn first_accept_wins_and_the_loser_gets_work_already_owned() {
    let item = offered(&open_item(), &[W1, W2], at(0));
    // Both Workers read the same revision; the engine applies the first accepted transition.
    let first = offers::accept_offer(&item, accept_input(W1, "l1", at(1)), at(1)).unwrap();
    let won = first.state;
    assert_eq!(won.state, WorkItemState::Queued);
    let owner = won.owner.as_ref().unwrap();
    assert_eq!((owner.agent_id.as_str(), owner.ownership_epoch), (W1, 1));
    // Every losing offer is withdrawn in the same transition (§10.3).
    let statuses: Vec<OfferStatus> = won.offers.iter().map(|o| o.status).collect();
    assert_eq!(statuses, [OfferStatus::Accepted, OfferStatus::LostRace]);
    let payload = &first.events[0].payload;
    assert_eq!(
        payload
            .get("lostRaceOfferIds")
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        1
    );
    // The second acceptance, applied to the new state, is a typed error and changes nothing.
    let before = won.clone();
    let second = offers::accept_offer(&won, accept_input(W2, "l2", at(2)), at(2)).unwrap_err();
    assert_eq!(second.code(), WireCode::WorkAlreadyOwned);
    assert_eq!(second.reason(), "already_owned");
    assert_eq!(won, before);
    // The loser cannot start either: it is not the owner.
    let mut input = start_input(&won, at(2));
    input.claim.agent_id = W2.into();
    let e = execution::start(&won, input, no_deps, at(2)).unwrap_err();
    assert_eq!(e.code(), WireCode::AuthForbidden);
}

#[test]
fn n_concurrent_accepts_have_exactly_one_winner() {
    let agents: Vec<String> = (0..8).map(|i| format!("urn:mwp:agent:w{i}")).collect();
    let refs: Vec<&str> = agents.iter().map(String::as_str).collect();
    let item = offered(&open_item(), &refs, at(0));
    // Apply the acceptances one after another, as the engine's CAS serialises them.
    let mut state = item;
    let mut winners = 0;
    for (i, agent) in refs.iter().enumerate() {
        match offers::accept_offer(&state, accept_input(agent, &format!("l{i}"), at(1)), at(1)) {
            Ok(t) => {
                winners += 1;
                state = t.state;
            }
            Err(e) => assert_eq!(e.code(), WireCode::WorkAlreadyOwned),
        }
    }
    assert_eq!(winners, 1);
    assert_eq!(
        state
            .offers
            .iter()
            .filter(|o| o.status == OfferStatus::Accepted)
            .count(),
        1
    );
}

#[test]
fn an_agent_without_an_offer_is_refused() {
    let item = offered(&open_item(), &[W1], at(0));
    let e = offers::accept_offer(&item, accept_input(W2, "x", at(1)), at(1)).unwrap_err();
    assert_eq!(e.code(), WireCode::AuthForbidden);
    assert_eq!(e.reason(), "not_offered");
}

#[test]
fn a_new_offer_withdraws_the_pending_ones_and_reserves_nothing() {
    let first = offered(&open_item(), &[W1], at(0));
    assert!(first.owner.is_none());
    let second = offers::offer(&first, offer_input(&[W2], "b", at(600)), at(10))
        .unwrap()
        .state;
    assert_eq!(second.offers[0].status, OfferStatus::Withdrawn);
    assert_eq!(second.offers[1].status, OfferStatus::Pending);
    let e = offers::accept_offer(&second, accept_input(W1, "x", at(11)), at(11)).unwrap_err();
    assert_eq!(e.code(), WireCode::AuthForbidden);
    assert!(offers::accept_offer(&second, accept_input(W2, "y", at(11)), at(11)).is_ok());
}

#[test]
fn offer_inputs_are_checked() {
    let item = open_item();
    let mut input = offer_input(&[W1, W1], "dup", at(600));
    assert_eq!(
        offers::offer(&item, input.clone(), at(0))
            .unwrap_err()
            .code(),
        WireCode::InvalidCommand
    );
    input = offer_input(&[], "none", at(600));
    assert!(offers::offer(&item, input, at(0)).is_err());
    input = offer_input(&[W1], "past", at(0));
    assert!(offers::offer(&item, input, at(0)).is_err());
    input = offer_input(&[W1], "basis", at(600));
    input.selection_basis = missionweaveprotocol::json::Value::Null;
    assert_eq!(
        offers::offer(&item, input, at(0)).unwrap_err().code(),
        WireCode::InvalidCommand
    );
}

#[test]
fn reassignment_after_a_missed_start_fences_the_old_owner() {
    let item = item_in(WorkItemState::Queued);
    let old = ownership_claim(&item);
    // §11.5: the start-by deadline passes; the old owner can no longer start.
    let late = at(700);
    let e = execution::start(&item, start_input(&item, late), no_deps, late).unwrap_err();
    assert_eq!(e.code(), WireCode::WorkLeaseExpired);
    // After the ownership lease lapsed the Coordinator re-offers: the owner is fenced first.
    let lapse = at(900);
    let reoffer = offers::offer(&item, offer_input(&[W2], "re", at(2000)), lapse).unwrap();
    let fenced = reoffer.events[0]
        .payload
        .get("fencedOwnershipEpoch")
        .unwrap();
    assert_eq!(fenced.as_number().unwrap().as_u64(), Some(1));
    let won = offers::accept_offer(&reoffer.state, accept_input(W2, "w2", lapse), lapse)
        .unwrap()
        .state;
    assert_eq!(won.owner.as_ref().unwrap().ownership_epoch, 2);
    // The old owner's Command with epoch 1 is fenced: WORK_STALE_OWNERSHIP, whatever it is.
    let mut input = start_input(&won, lapse);
    input.claim = WorkClaim { ..old };
    let e = execution::start(&won, input, no_deps, lapse).unwrap_err();
    assert_eq!(e.code(), WireCode::WorkStaleOwnership);
    assert_eq!(e.reason(), "stale_ownership");
}

#[test]
fn a_stale_owner_cannot_complete_the_item() {
    // W1 is active under epoch 1; its Execution Lease lapses; W2 wins epoch 2 and starts.
    let item = item_in(WorkItemState::Active);
    let stale = execution_claim(&item);
    let lapse = item.execution_lease.as_ref().unwrap().window().expires_at;
    let reoffered = offers::offer(&item, offer_input(&[W2], "re", at(3000)), lapse)
        .unwrap()
        .state;
    assert_eq!(
        reoffered.execution_lease.as_ref().unwrap().state().as_str(),
        "expired"
    );
    let queued2 = offers::accept_offer(&reoffered, accept_input(W2, "w2", lapse), lapse)
        .unwrap()
        .state;
    let active2 = execution::start(&queued2, start_input(&queued2, lapse), no_deps, lapse)
        .unwrap()
        .state;
    // §4.5: the late result from epoch 1 is refused; nothing changes.
    let mut input = submit_input(&active2);
    input.claim = stale.clone();
    let e = review::submit(&active2, input, lapse).unwrap_err();
    assert_eq!(e.code(), WireCode::WorkStaleOwnership);
    // So are its renewal and its failure report.
    let renew = RenewInput {
        claim: stale.clone(),
        expires_at: at(5000),
        progress: None,
    };
    let e = execution::renew_execution_lease(&active2, renew, lapse).unwrap_err();
    assert_eq!(e.code(), WireCode::WorkStaleOwnership);
    let fail = FailInput {
        claim: Some(stale),
        ..fail_input()
    };
    assert_eq!(
        closing::fail(&active2, fail, lapse).unwrap_err().code(),
        WireCode::WorkStaleOwnership
    );
    // The current owner submits fine.
    assert!(review::submit(&active2, submit_input(&active2), lapse).is_ok());
}

#[test]
fn an_older_lease_id_with_the_current_epoch_is_refused() {
    // §11.3: checkpoint, then restart: the first Execution Lease ID is dead.
    let item = item_in(WorkItemState::Active);
    let first = execution_claim(&item);
    let queued = execution::checkpoint(
        &item,
        execution::CheckpointInput {
            claim: first.clone(),
            checkpoint: progress(),
            ownership_lease: missionweaveprotocol_engine::work::LeaseGrant {
                lease_id: "urn:mwp:lease:own-2".into(),
                expires_at: at(900),
            },
        },
        at(10),
    )
    .unwrap()
    .state;
    assert_eq!(
        queued.execution_lease.as_ref().unwrap().state().as_str(),
        "released"
    );
    let active = execution::start(&queued, start_input(&queued, at(20)), no_deps, at(20))
        .unwrap()
        .state;
    let mut input = submit_input(&active);
    input.claim = first;
    let e = review::submit(&active, input, at(30)).unwrap_err();
    assert_eq!(e.code(), WireCode::WorkLeaseExpired);
    assert_eq!(e.reason(), "stale_lease");
}

#[test]
fn execution_lease_renewal_extends_and_refuses_after_expiry() {
    let item = item_in(WorkItemState::Active);
    let renew = |expires_at, now| {
        execution::renew_execution_lease(
            &item,
            RenewInput {
                claim: execution_claim(&item),
                expires_at,
                progress: Some(progress()),
            },
            now,
        )
    };
    let ok = renew(at(600), at(100)).unwrap();
    assert_eq!(ok.events[0].kind, "work.progressed");
    let lease = ok.state.execution_lease.as_ref().unwrap();
    assert_eq!(
        (lease.renewal_count(), lease.window().expires_at),
        (1, at(600))
    );
    assert_eq!(ok.state.state, WorkItemState::Active);
    // Not extending, or after expiry: refused with the lease's code.
    assert_eq!(
        renew(at(200), at(100)).unwrap_err().code(),
        WireCode::InvalidCommand
    );
    assert_eq!(
        renew(at(900), at(300)).unwrap_err().code(),
        WireCode::WorkLeaseExpired
    );
    // A wrong Session Epoch is fenced by the lease.
    let mut claim = execution_claim(&item);
    claim.session_epoch = SESSION - 1;
    let e = execution::renew_execution_lease(
        &item,
        RenewInput {
            claim,
            expires_at: at(600),
            progress: None,
        },
        at(100),
    )
    .unwrap_err();
    assert_eq!(e.code(), WireCode::AuthStaleSession);
}

#[test]
fn start_requires_the_approval_gate_when_the_contract_asks() {
    let terms = contract_with(&[], &[("c1", &["deterministic_test"])], "human_required");
    let open = open_item_with(&wid("wa"), terms, &Default::default());
    let item = queued(&open, at(0));
    let e = execution::start(&item, start_input(&item, at(1)), no_deps, at(1)).unwrap_err();
    assert_eq!(e.code(), WireCode::ApprovalRequired);
    let mut input = start_input(&item, at(1));
    input.execution_approved = true;
    assert!(execution::start(&item, input, no_deps, at(1)).is_ok());
}

#[test]
fn fail_and_cancel_revoke_leases_and_withdraw_offers() {
    let active = item_in(WorkItemState::Active);
    let failed = closing::fail(&active, fail_input(), at(5)).unwrap().state;
    assert_eq!(
        failed.execution_lease.as_ref().unwrap().state().as_str(),
        "revoked"
    );
    let offered_item = item_in(WorkItemState::Offered);
    let cancelled = closing::cancel(
        &offered_item,
        closing::CancelInput {
            reason: "dropped".into(),
        },
        at(5),
    )
    .unwrap()
    .state;
    assert!(
        cancelled
            .offers
            .iter()
            .all(|o| o.status == OfferStatus::Withdrawn)
    );
    // A failed item leaves only through a new offer (digest 2.2); epochs keep rising.
    let re = offers::offer(&failed, offer_input(&[W2], "re", at(600)), at(6))
        .unwrap()
        .state;
    let won = offers::accept_offer(&re, accept_input(W2, "w2", at(7)), at(7))
        .unwrap()
        .state;
    assert_eq!(won.owner.as_ref().unwrap().ownership_epoch, 2);
    // Failure needs Evidence and a reason.
    let mut input = fail_input();
    input.evidence_ids.clear();
    assert_eq!(
        closing::fail(&active, input, at(5)).unwrap_err().code(),
        WireCode::InvalidCommand
    );
    // A Worker-reported failure must cite the current Execution Lease.
    let input = FailInput {
        claim: Some(execution_claim(&active)),
        ..fail_input()
    };
    assert!(closing::fail(&active, input, at(5)).is_ok());
    let mut bad = execution_claim(&active);
    bad.lease_id = "urn:mwp:lease:other".into();
    let input = FailInput {
        claim: Some(bad),
        ..fail_input()
    };
    assert_eq!(
        closing::fail(&active, input, at(5)).unwrap_err().code(),
        WireCode::WorkLeaseExpired
    );
}
