//! WorkItem scenarios (§10.2 rows, §10.3 offers, §10.4 dependencies, §11.3 leases, §13.2
//! Evidence, digest §2.2 and §2.6).

use missionweaveprotocol::WireCode;
use missionweaveprotocol_engine::work::offers;

use crate::payloads::{self, PROPOSAL, W1, W2};
use crate::scenario::{Scenario, Step, Watch};
use crate::steps::{self, Lease, by, coordinator, coordinator_at, worker};
use crate::world::{COORDINATOR, OTHER_HUMAN, OWNER, WORKER, World};

/// The default lease and offer lifetime (300 s, `docs/work.md`) plus one second.
const LAPSED_MS: u64 = 301_000;
const RENEW: &str = "ext.missionweaveprotocol.core.work_execution_lease_renew";
const DEPENDENCY_ADD: &str = "ext.missionweaveprotocol.core.work_dependency_add";

fn propose(contract: String) -> String {
    format!(r#"{{"proposalId":"{PROPOSAL}","contract":{contract}}}"#)
}

fn block_members() -> String {
    format!(
        r#""reason":"needs the bank statement",{}"#,
        payloads::CHECKPOINT
    )
}

fn cancel_payload(item: &str) -> String {
    format!(r#"{{"workItemId":"{item}","reason":"no longer needed"}}"#)
}

fn dependency(item: &str, on: &str) -> String {
    format!(r#"{{"workItemId":"{item}","dependencyId":"{on}"}}"#)
}

fn expired_offers(w: &World) -> Result<usize, String> {
    let item = steps::work_item(w, W1)?.ok_or("no WorkItem")?;
    Ok(offers::expired_offers(&item, w.now()).len())
}

fn two_items() -> Vec<Step> {
    let mut s = steps::authorized(W1);
    s.extend(steps::authorized(W2));
    s
}

pub fn scenarios() -> Vec<Scenario> {
    let w1 = Watch::WorkItem(W1);
    let mut all = vec![
        Scenario::new("work.propose: none → open Work Proposal")
            .when(by(
                WORKER,
                "work.propose",
                "",
                propose(payloads::contract(&[])),
            ))
            .watch(Watch::Proposal(PROPOSAL))
            .emits(&["work.proposed"])
            .moves("none", "open"),
        Scenario::new("work.propose: an incomplete Work Contract (no goal)")
            .when(by(
                WORKER,
                "work.propose",
                "",
                propose(payloads::contract(&[]).replace(r#""goal":"reconcile the ledger","#, "")),
            ))
            .watch(Watch::Proposal(PROPOSAL))
            .refused(WireCode::WorkContractIncomplete)
            .moves("none", "none"),
        Scenario::new("work.authorize: none → open")
            .when(coordinator("work.authorize", payloads::authorize(W1, &[])))
            .watch(w1)
            .emits(&["work.authorized"])
            .moves("none", "open"),
        Scenario::new("work.authorize: the MissionOwner is not the Coordinator")
            .when(by(
                OWNER,
                "work.authorize",
                "",
                payloads::authorize(W1, &[]),
            ))
            .watch(w1)
            .refused(WireCode::AuthForbidden)
            .moves("none", "none"),
        Scenario::new("work.authorize: an existing WorkItem is not re-created")
            .given(steps::authorized(W1))
            .when(coordinator("work.authorize", payloads::authorize(W1, &[])))
            .watch(w1)
            .refused(WireCode::InvalidStateTransition)
            .moves("open", "open"),
        Scenario::new("work.offer: open → offered")
            .given(steps::authorized(W1))
            .when(coordinator("work.offer", payloads::offer(W1, "r1")))
            .watch(w1)
            .emits(&["work.offer.created"])
            .moves("open", "offered"),
        Scenario::new("work.offer: a stale Coordinator Epoch is fenced")
            .given(steps::authorized(W1))
            .given(steps::coordinator_epoch_2())
            .when(coordinator_at(1, "work.offer", payloads::offer(W1, "r1")))
            .watch(w1)
            .refused(WireCode::AuthStaleCoordinator)
            .moves("open", "open"),
        Scenario::new("work.offer: a future Coordinator Epoch is fenced")
            .given(steps::authorized(W1))
            .when(coordinator_at(2, "work.offer", payloads::offer(W1, "r1")))
            .watch(w1)
            .refused(WireCode::AuthStaleCoordinator)
            .moves("open", "open"),
        Scenario::new("work.offer: an owner with a live lease is not re-offered")
            .given(steps::queued(W1))
            .when(coordinator("work.offer", payloads::offer(W1, "r2")))
            .watch(w1)
            .refused(WireCode::InvalidStateTransition)
            .moves("queued", "queued"),
        Scenario::new("work.accept_offer: offered → queued")
            .given(steps::offered(W1))
            .when(by(
                WORKER,
                "work.accept_offer",
                "",
                payloads::accept_offer(W1),
            ))
            .watch(w1)
            .emits(&["work.offer.accepted"])
            .moves("offered", "queued"),
        Scenario::new("work.accept_offer: an Agent with no offer")
            .given(steps::offered(W1))
            .when(by(
                COORDINATOR,
                "work.accept_offer",
                "",
                payloads::accept_offer(W1),
            ))
            .watch(w1)
            .refused(WireCode::AuthForbidden)
            .moves("offered", "offered"),
        Scenario::new("work.accept_offer: no offer was made")
            .given(steps::authorized(W1))
            .when(by(
                WORKER,
                "work.accept_offer",
                "",
                payloads::accept_offer(W1),
            ))
            .watch(w1)
            .refused(WireCode::InvalidStateTransition)
            .moves("open", "open"),
        Scenario::new("offer expiry: offered stays offered, nothing appended")
            .given(steps::offered(W1))
            .when_elapsed(LAPSED_MS)
            .watch(w1)
            .moves("offered", "offered")
            .check("the offer is now expired", |w| match expired_offers(w)? {
                1 => Ok(()),
                n => Err(format!("{n} expired offers")),
            }),
        Scenario::new("offer expiry: acceptance at expiry is refused")
            .given(steps::offered(W1))
            .given(steps::elapse(300_000))
            .when(by(
                WORKER,
                "work.accept_offer",
                "",
                payloads::accept_offer(W1),
            ))
            .watch(w1)
            .refused(WireCode::WorkOfferExpired)
            .moves("offered", "offered"),
        Scenario::new("work.start: queued → active")
            .given(steps::queued(W1))
            .when(worker("work.start", W1, Lease::Ownership, 0, ""))
            .watch(w1)
            .emits(&["work.started"])
            .moves("queued", "active"),
        // §4.5: an older Ownership Epoch (current − 1) and a newer one (current + 1).
        Scenario::new("work.start: a stale Ownership Epoch is fenced")
            .given(steps::queued(W1))
            .when(worker("work.start", W1, Lease::Ownership, -1, ""))
            .watch(w1)
            .refused(WireCode::WorkStaleOwnership)
            .moves("queued", "queued"),
        Scenario::new("work.start: a future Ownership Epoch is fenced")
            .given(steps::queued(W1))
            .when(worker("work.start", W1, Lease::Ownership, 1, ""))
            .watch(w1)
            .refused(WireCode::WorkStaleOwnership)
            .moves("queued", "queued"),
        Scenario::new("Execution Lease renewal: active → active")
            .given(steps::active(W1))
            .when(worker(
                RENEW,
                W1,
                Lease::Execution,
                0,
                r#""leaseSeconds":600"#,
            ))
            .watch(w1)
            .emits(&["work.progressed"])
            .moves("active", "active"),
        Scenario::new("Execution Lease renewal: a lapsed Execution Lease")
            .given(steps::active(W1))
            .given(steps::elapse(LAPSED_MS))
            .when(worker(
                RENEW,
                W1,
                Lease::Execution,
                0,
                r#""leaseSeconds":600"#,
            ))
            .watch(w1)
            .refused(WireCode::WorkLeaseExpired)
            .moves("active", "active"),
        Scenario::new("work.checkpoint: active → queued")
            .given(steps::active(W1))
            .when(worker(
                "work.checkpoint",
                W1,
                Lease::Execution,
                0,
                payloads::CHECKPOINT,
            ))
            .watch(w1)
            .emits(&["work.checkpointed"])
            .moves("active", "queued"),
        Scenario::new("work.checkpoint: an older Ownership Epoch is fenced")
            .given(steps::active(W1))
            .when(worker(
                "work.checkpoint",
                W1,
                Lease::Execution,
                -1,
                payloads::CHECKPOINT,
            ))
            .watch(w1)
            .refused(WireCode::WorkStaleOwnership)
            .moves("active", "active"),
        Scenario::new("work.block: active → blocked")
            .given(steps::active(W1))
            .when(worker(
                "work.block",
                W1,
                Lease::Execution,
                0,
                block_members(),
            ))
            .watch(w1)
            .emits(&["work.blocked"])
            .moves("active", "blocked"),
        Scenario::new("work.block: a lapsed Execution Lease")
            .given(steps::active(W1))
            .given(steps::elapse(LAPSED_MS))
            .when(worker(
                "work.block",
                W1,
                Lease::Execution,
                0,
                block_members(),
            ))
            .watch(w1)
            .refused(WireCode::WorkLeaseExpired)
            .moves("active", "active"),
        Scenario::new("work.unblock: blocked → queued")
            .given(steps::blocked(W1))
            .when(coordinator(
                "work.unblock",
                format!(r#"{{"workItemId":"{W1}"}}"#),
            ))
            .watch(w1)
            .emits(&["work.unblocked"])
            .moves("blocked", "queued"),
        Scenario::new("work.unblock: an active WorkItem is not blocked")
            .given(steps::active(W1))
            .when(coordinator(
                "work.unblock",
                format!(r#"{{"workItemId":"{W1}"}}"#),
            ))
            .watch(w1)
            .refused(WireCode::InvalidStateTransition)
            .moves("active", "active"),
        Scenario::new("work.submit: active → submitted")
            .given(steps::active_with_artifact())
            .when(worker(
                "work.submit",
                W1,
                Lease::Execution,
                0,
                payloads::submit_members(W1),
            ))
            .watch(w1)
            .emits(&["work.submitted"])
            .moves("active", "submitted"),
        Scenario::new("work.submit: a submission without Evidence")
            .given(steps::active_with_artifact())
            .when(worker(
                "work.submit",
                W1,
                Lease::Execution,
                0,
                format!(r#""artifactHashes":["{}"],"evidence":[]"#, payloads::HASH_A),
            ))
            .watch(w1)
            .refused(WireCode::InvalidCommand)
            .moves("active", "active"),
        Scenario::new("work.accept_result: submitted → verified")
            .given(steps::submitted(W1))
            .when(coordinator(
                "work.accept_result",
                payloads::accept_result(W1),
            ))
            .watch(w1)
            .emits(&["work.result.accepted"])
            .moves("submitted", "verified"),
        Scenario::new("work.accept_result: an active WorkItem has no result")
            .given(steps::active(W1))
            .when(coordinator(
                "work.accept_result",
                payloads::accept_result(W1),
            ))
            .watch(w1)
            .refused(WireCode::InvalidStateTransition)
            .moves("active", "active"),
        Scenario::new("work.fail: active → failed, reported by the Coordinator")
            .given(steps::active(W1))
            .when(coordinator("work.fail", payloads::coordinator_fail(W1)))
            .watch(w1)
            .emits(&["work.failed"])
            .moves("active", "failed"),
        Scenario::new("work.fail: a verified WorkItem stays verified")
            .given(steps::verified(W1))
            .when(coordinator("work.fail", payloads::coordinator_fail(W1)))
            .watch(w1)
            .refused(WireCode::InvalidStateTransition)
            .moves("verified", "verified"),
        Scenario::new("work.cancel: open → cancelled by the MissionOwner")
            .given(steps::authorized(W1))
            .when(by(OWNER, "work.cancel", "", cancel_payload(W1)))
            .watch(w1)
            .emits(&["work.cancelled"])
            .moves("open", "cancelled"),
        Scenario::new("work.cancel: another human is not the MissionOwner")
            .given(steps::authorized(W1))
            .when(by(OTHER_HUMAN, "work.cancel", "", cancel_payload(W1)))
            .watch(w1)
            .refused(WireCode::AuthForbidden)
            .moves("open", "open"),
        Scenario::new("work.cancel: a verified WorkItem stays verified")
            .given(steps::verified(W1))
            .when(by(OWNER, "work.cancel", "", cancel_payload(W1)))
            .watch(w1)
            .refused(WireCode::InvalidStateTransition)
            .moves("verified", "verified"),
        Scenario::new("dependency insertion: open → open, contract revised")
            .given(two_items())
            .when(coordinator(DEPENDENCY_ADD, dependency(W1, W2)))
            .watch(w1)
            .emits(&["work.contract.revised"])
            .moves("open", "open"),
        Scenario::new("dependency insertion: a cycle is refused")
            .given(two_items())
            .given(vec![Step::Perform(coordinator(
                DEPENDENCY_ADD,
                dependency(W1, W2),
            ))])
            .when(coordinator(DEPENDENCY_ADD, dependency(W2, W1)))
            .watch(Watch::WorkItem(W2))
            .refused(WireCode::InvalidCommand)
            .moves("open", "open"),
    ];
    all.extend(propagation());
    all
}

/// §10.2 row 18: a terminal Mission state propagates to the unfinished WorkItems.
fn propagation() -> Vec<Scenario> {
    vec![
        Scenario::new("Mission cancellation propagates: open → cancelled")
            .given(steps::authorized(W1))
            .when(by(
                OWNER,
                "mission.cancel",
                "",
                r#"{"reason": "The quarter was restated"}"#,
            ))
            .watch(Watch::WorkItem(W1))
            .emits(&["mission.cancelled", "work.cancelled"])
            .moves("open", "cancelled"),
        Scenario::new("Mission cancellation refused: the WorkItem stays open")
            .given(steps::authorized(W1))
            .when(coordinator(
                "mission.cancel",
                r#"{"reason": "The quarter was restated"}"#,
            ))
            .watch(Watch::WorkItem(W1))
            .refused(WireCode::AuthForbidden)
            .moves("open", "open"),
    ]
}
