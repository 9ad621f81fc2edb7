//! Further scenarios of the multi-state rows (§7.1 rows 7–8, §10.2 rows 2, 3, 4, 10, 13, 14,
//! 18): the other `from` states and branches, the other authorities, and the losing candidate.
//! The matrix lists them as a row's variants; each must pass and match the row like its
//! positive (applied) or negative (refused) scenario.

use missionweaveprotocol::WireCode;

use crate::payloads::{self, PROPOSAL, W1, W2};
use crate::scenario::{Scenario, Step, Watch};
use crate::steps::{self, Lease, by, coordinator, coordinator_at, worker};
use crate::world::{COORDINATOR, MISSION, SERVICE, WORKER, World};

const REASON: &str = r#"{"reason": "The quarter was restated"}"#;
const LAPSED_MS: u64 = 301_000;

fn failed(item: &'static str) -> Vec<Step> {
    let mut s = steps::active(item);
    s.push(Step::Perform(coordinator(
        "work.fail",
        payloads::coordinator_fail(item),
    )));
    s
}

fn proposal_status(w: &World) -> Result<(), String> {
    match crate::runner::observe(w, Watch::Proposal(PROPOSAL))?.as_str() {
        "authorized" => Ok(()),
        other => Err(format!("the proposal is {other}")),
    }
}

/// An offer of `W1` to the Worker and the Coordinator (two candidates, round `r2`).
fn offer_to_both() -> String {
    payloads::offer(W1, "r2").replace(
        r#"}],"selectionBasis""#,
        &format!(
            r#"}},{{"offerId":"urn:missionweaveprotocol:offer:r2-b","agentId":"{COORDINATOR}","agentCardVersion":1}}],"selectionBasis""#
        ),
    )
}

pub fn scenarios() -> Vec<Scenario> {
    let m = Watch::Mission(MISSION);
    let w1 = Watch::WorkItem(W1);
    vec![
        Scenario::new("mission.cancel: awaiting_approval → cancelled")
            .given(steps::awaiting())
            .when(by(crate::world::OWNER, "mission.cancel", "", REASON))
            .watch(m)
            .emits(&["mission.cancelled"])
            .moves("awaiting_approval", "cancelled"),
        Scenario::new("mission.terminate: awaiting_approval → failed by Organization policy")
            .given(steps::awaiting())
            .when(by(SERVICE, "mission.terminate", "", REASON))
            .watch(m)
            .emits(&["mission.terminated"])
            .moves("awaiting_approval", "failed"),
        Scenario::new("work.authorize: an open Work Proposal → open")
            .given(vec![Step::Perform(by(
                WORKER,
                "work.propose",
                "",
                format!(
                    r#"{{"proposalId":"{PROPOSAL}","contract":{}}}"#,
                    payloads::contract(&[])
                ),
            ))])
            .when(coordinator(
                "work.authorize",
                format!(
                    r#"{{"workItemId":"{W1}","conversationId":"{}","proposalId":"{PROPOSAL}"}}"#,
                    payloads::CONVERSATION
                ),
            ))
            .watch(w1)
            .emits(&["work.authorized"])
            .moves("none", "open")
            .check("the proposal is authorized", proposal_status),
        Scenario::new("work.offer: failed → offered")
            .given(failed(W1))
            .when(coordinator("work.offer", payloads::offer(W1, "r2")))
            .watch(w1)
            .emits(&["work.offer.created"])
            .moves("failed", "offered"),
        Scenario::new("work.offer: queued, the owner's lease lapsed → offered")
            .given(steps::queued(W1))
            .given(steps::coordinator_for_an_hour())
            .given(steps::elapse(LAPSED_MS))
            .when(coordinator("work.offer", payloads::offer(W1, "r2")))
            .watch(w1)
            .emits(&["work.offer.created"])
            .moves("queued", "offered"),
        Scenario::new("work.accept_offer: the losing candidate")
            .given(steps::authorized(W1))
            .given(vec![
                Step::Perform(coordinator("work.offer", offer_to_both())),
                Step::Perform(by(
                    COORDINATOR,
                    "work.accept_offer",
                    "",
                    payloads::accept_offer(W1),
                )),
            ])
            .when(by(WORKER, "work.accept_offer", "", payloads::accept_offer(W1)))
            .watch(w1)
            .refused(WireCode::WorkAlreadyOwned)
            .moves("queued", "queued"),
        Scenario::new("work.unblock: blocked past its blocked lease → open")
            .given(steps::blocked(W1))
            .given(steps::coordinator_for_an_hour())
            .given(steps::elapse(LAPSED_MS))
            .when(coordinator(
                "work.unblock",
                format!(r#"{{"workItemId":"{W1}"}}"#),
            ))
            .watch(w1)
            .emits(&["work.unblocked"])
            .moves("blocked", "open"),
        Scenario::new("work.fail: active → failed, reported by the Worker")
            .given(steps::active(W1))
            .when(worker(
                "work.fail",
                W1,
                Lease::Execution,
                0,
                r#""reason":"the bank API is down","evidenceIds":["urn:missionweaveprotocol:evidence:f2"]"#,
            ))
            .watch(w1)
            .emits(&["work.failed"])
            .moves("active", "failed"),
        Scenario::new("work.fail: submitted → failed")
            .given(steps::submitted(W1))
            .when(coordinator("work.fail", payloads::coordinator_fail(W1)))
            .watch(w1)
            .emits(&["work.failed"])
            .moves("submitted", "failed"),
        Scenario::new("work.cancel: submitted → cancelled by Organization policy")
            .given(steps::submitted(W1))
            .when(by(
                SERVICE,
                "work.cancel",
                "",
                format!(r#"{{"workItemId":"{W1}","reason":"policy"}}"#),
            ))
            .watch(w1)
            .emits(&["work.cancelled"])
            .moves("submitted", "cancelled"),
        Scenario::new("work.propose: the Mission is approved (terminal)")
            .given(steps::approved())
            .when(by(
                WORKER,
                "work.propose",
                "",
                format!(
                    r#"{{"proposalId":"{PROPOSAL}","contract":{}}}"#,
                    payloads::contract(&[])
                ),
            ))
            .watch(Watch::Proposal(PROPOSAL))
            .refused(WireCode::InvalidStateTransition)
            .moves("none", "none"),
        Scenario::new("work.authorize: the Mission is approved (terminal)")
            .given(steps::approved())
            .when(coordinator("work.authorize", payloads::authorize(W1, &[])))
            .watch(w1)
            .refused(WireCode::InvalidStateTransition)
            .moves("none", "none"),
        Scenario::new("work.offer: active, the owner's Execution Lease lapsed → offered")
            .given(steps::active(W1))
            .given(steps::coordinator_for_an_hour())
            .given(steps::elapse(LAPSED_MS))
            .when(coordinator("work.offer", payloads::offer(W1, "r2")))
            .watch(w1)
            .emits(&["work.offer.created"])
            .moves("active", "offered"),
        Scenario::new("work.offer: blocked, the blocked lease is live")
            .given(steps::blocked(W1))
            .when(coordinator("work.offer", payloads::offer(W1, "r2")))
            .watch(w1)
            .refused(WireCode::InvalidStateTransition)
            .moves("blocked", "blocked"),
        Scenario::new("work.start: a stale expectedRevision")
            .given(steps::queued(W1))
            .when(Box::new(|w: &World| {
                let (epoch, lease) = steps::claim(w, W1, Lease::Ownership)?;
                w.command(
                    "work.start",
                    WORKER,
                    r#""expectedRevision": 1"#,
                    &format!(
                        r#"{{"workItemId":"{W1}","ownershipEpoch":{epoch},"leaseId":"{lease}"}}"#
                    ),
                )
            }))
            .watch(w1)
            .refused(WireCode::RevisionConflict)
            .moves("queued", "queued"),
        Scenario::new("work.checkpoint: a queued WorkItem is not executing")
            .given(steps::queued(W1))
            .when(worker(
                "work.checkpoint",
                W1,
                Lease::Ownership,
                0,
                payloads::CHECKPOINT,
            ))
            .watch(w1)
            .refused(WireCode::InvalidStateTransition)
            .moves("queued", "queued"),
        Scenario::new("work.submit: after the Execution Lease lapsed")
            .given(steps::active_with_artifact())
            .given(steps::coordinator_for_an_hour())
            .given(steps::elapse(LAPSED_MS))
            .when(worker(
                "work.submit",
                W1,
                Lease::Execution,
                0,
                payloads::submit_members(W1),
            ))
            .watch(w1)
            .refused(WireCode::WorkLeaseExpired)
            .moves("active", "active"),
        Scenario::new("work.submit: an Artifact not published for the WorkItem")
            .given(steps::active(W1))
            .when(worker(
                "work.submit",
                W1,
                Lease::Execution,
                0,
                payloads::submit_members(W1),
            ))
            .watch(w1)
            .refused(WireCode::InvalidCommand)
            .moves("active", "active"),
        Scenario::new("work.submit: Evidence about another WorkItem")
            .given(steps::active_with_artifact())
            .when(worker(
                "work.submit",
                W1,
                Lease::Execution,
                0,
                payloads::submit_members(W2),
            ))
            .watch(w1)
            .refused(WireCode::InvalidCommand)
            .moves("active", "active"),
        Scenario::new("work.accept_result: a stale Coordinator Epoch is fenced")
            .given(steps::submitted(W1))
            .given(steps::coordinator_epoch_2())
            .when(coordinator_at(
                1,
                "work.accept_result",
                payloads::accept_result(W1),
            ))
            .watch(w1)
            .refused(WireCode::AuthStaleCoordinator)
            .moves("submitted", "submitted"),
        Scenario::new("work.accept_result: a future Coordinator Epoch is fenced")
            .given(steps::submitted(W1))
            .when(coordinator_at(
                2,
                "work.accept_result",
                payloads::accept_result(W1),
            ))
            .watch(w1)
            .refused(WireCode::AuthStaleCoordinator)
            .moves("submitted", "submitted"),
        Scenario::new("work.fail: no failure Evidence")
            .given(steps::active(W1))
            .when(coordinator(
                "work.fail",
                format!(r#"{{"workItemId":"{W1}","reason":"x","evidenceIds":[]}}"#),
            ))
            .watch(w1)
            .refused(WireCode::InvalidCommand)
            .moves("active", "active"),
        Scenario::new("Mission termination by Organization policy propagates: submitted → failed")
            .given(steps::submitted(W1))
            .when(by(SERVICE, "mission.terminate", "", REASON))
            .watch(w1)
            .emits(&["mission.terminated", "work.failed"])
            .moves("submitted", "failed"),
        Scenario::new("Mission termination propagates: active → failed")
            .given(steps::active(W1))
            .when(coordinator("mission.terminate", REASON))
            .watch(w1)
            .emits(&["mission.terminated", "work.failed"])
            .moves("active", "failed"),
    ]
}
