//! Execution Approval scenarios (§12, §10.2 row 6 `queued --approval.grant_execution-->
//! queued` and row 7's gate "plus execution approval when required"; CONTEXT "Execution
//! Approval": a time-bounded signed human decision for one WorkItem Ownership Epoch).

use missionweaveprotocol::WireCode;
use missionweaveprotocol_engine::approval::ExecutionApproval;
use missionweaveprotocol_engine::store::Store;

use crate::payloads::{self, CONVERSATION, W1};
use crate::scenario::{Scenario, Step, Watch};
use crate::steps::{self, Lease, by, coordinator, worker};
use crate::world::{COORDINATOR, OTHER_HUMAN, OWNER, WORKER, World};

const GRANT: &str = "approval.grant_execution";
const GRANTED: &str = "approval.execution.granted";
const APPROVAL: &str = "urn:missionweaveprotocol:approval:exec-1";
/// The resource on which the gated contract allows `production.deploy`.
const RESOURCE: &str = "urn:missionweaveprotocol:resource:prod-app";

/// [`payloads::contract`] requiring human execution approval (`sideEffectRisk: high_risk`)
/// and allowing the high-risk `production.deploy` and `repo.read` on [`RESOURCE`].
fn gated_contract() -> String {
    payloads::contract(&[])
        .replace(
            r#""allowedResources":[]"#,
            &format!(
                r#""allowedResources":[{{"resource":"{RESOURCE}","operations":["repo.read","production.deploy"]}}]"#
            ),
        )
        .replace(
            r#""sideEffectRisk":"none","executionApproval":"not_required""#,
            r#""sideEffectRisk":"high_risk","executionApproval":"human_required""#,
        )
}

/// [`W1`] with the gated contract, offered to and accepted by the Worker: `queued` at
/// Ownership Epoch 1.
fn gated_queued() -> Vec<Step> {
    vec![
        Step::Perform(coordinator(
            "work.authorize",
            format!(
                r#"{{"workItemId":"{W1}","conversationId":"{CONVERSATION}","contract":{}}}"#,
                gated_contract()
            ),
        )),
        Step::Perform(coordinator("work.offer", payloads::offer(W1, "r1"))),
        Step::Perform(by(
            WORKER,
            "work.accept_offer",
            "",
            payloads::accept_offer(W1),
        )),
    ]
}

/// `approval.grant_execution` of [`W1`] at Ownership Epoch `epoch` for `operations` on
/// [`RESOURCE`], lasting `seconds`.
fn grant_payload(epoch: u64, operations: &str, seconds: u64) -> String {
    format!(
        r#"{{"approvalId":"{APPROVAL}","workItemId":"{W1}","ownershipEpoch":{epoch},"operations":[{operations}],"resources":["{RESOURCE}"],"budget":{{"toolCallLimit":5}},"expiresInSeconds":{seconds}}}"#
    )
}

fn deploy(epoch: u64) -> String {
    grant_payload(epoch, r#""production.deploy""#, 300)
}

/// The gated [`W1`], approved by the MissionOwner for `seconds`.
fn approved(seconds: u64) -> Vec<Step> {
    let mut steps = gated_queued();
    steps.push(Step::Perform(by(
        OWNER,
        GRANT,
        "",
        grant_payload(1, r#""production.deploy""#, seconds),
    )));
    steps
}

fn stored(w: &World) -> Result<bool, String> {
    w.engine()
        .store()
        .aggregate(&ExecutionApproval::key(APPROVAL))
        .map(|a| a.is_some())
        .map_err(|e| e.to_string())
}

fn is_stored(w: &World) -> Result<(), String> {
    stored(w)?
        .then_some(())
        .ok_or_else(|| "no approval stored".to_owned())
}

fn none_stored(w: &World) -> Result<(), String> {
    (!stored(w)?)
        .then_some(())
        .ok_or_else(|| "an approval was stored".to_owned())
}

pub fn scenarios() -> Vec<Scenario> {
    let w1 = Watch::WorkItem(W1);
    vec![
        Scenario::new("approval.grant_execution: the MissionOwner approves a queued WorkItem")
            .given(gated_queued())
            .when(by(OWNER, GRANT, "", deploy(1)))
            .watch(w1)
            .emits(&[GRANTED])
            .moves("queued", "queued")
            .check("the approval is stored", is_stored),
        // §12 "for one WorkItem Ownership Epoch": an older (0) and a newer (2) epoch than 1.
        Scenario::new("approval.grant_execution: a stale Ownership Epoch is fenced")
            .given(gated_queued())
            .when(by(OWNER, GRANT, "", deploy(0)))
            .watch(w1)
            .refused(WireCode::WorkStaleOwnership)
            .moves("queued", "queued")
            .check("nothing is stored", none_stored),
        Scenario::new("approval.grant_execution: a future Ownership Epoch is fenced")
            .given(gated_queued())
            .when(by(OWNER, GRANT, "", deploy(2)))
            .watch(w1)
            .refused(WireCode::WorkStaleOwnership)
            .moves("queued", "queued")
            .check("nothing is stored", none_stored),
        Scenario::new("approval.grant_execution: an Agent cannot sign a human decision")
            .given(gated_queued())
            .when(by(COORDINATOR, GRANT, "", deploy(1)))
            .watch(w1)
            .refused(WireCode::AuthForbidden)
            .moves("queued", "queued")
            .check("nothing is stored", none_stored),
        Scenario::new("approval.grant_execution: another human is not the MissionOwner")
            .given(gated_queued())
            .when(by(OTHER_HUMAN, GRANT, "", deploy(1)))
            .watch(w1)
            .refused(WireCode::AuthForbidden)
            .moves("queued", "queued")
            .check("nothing is stored", none_stored),
        Scenario::new("approval.grant_execution: an operation outside the Work Contract")
            .given(gated_queued())
            .when(by(
                OWNER,
                GRANT,
                "",
                grant_payload(1, r#""payment.send""#, 300),
            ))
            .watch(w1)
            .refused(WireCode::InvalidCommand)
            .moves("queued", "queued")
            .check("nothing is stored", none_stored),
        Scenario::new("approval.grant_execution: an active WorkItem is no longer queued")
            .given(approved(300))
            .given(vec![Step::Perform(worker(
                "work.start",
                W1,
                Lease::Ownership,
                0,
                "",
            ))])
            .when(by(
                OWNER,
                GRANT,
                "",
                deploy(1).replace(APPROVAL, "urn:missionweaveprotocol:approval:exec-2"),
            ))
            .watch(w1)
            .refused(WireCode::InvalidStateTransition)
            .moves("active", "active"),
        Scenario::new("work.start: a gated WorkItem under its Execution Approval")
            .given(approved(300))
            .when(worker("work.start", W1, Lease::Ownership, 0, ""))
            .watch(w1)
            .emits(&["work.started"])
            .moves("queued", "active"),
        Scenario::new("work.start: a gated WorkItem without an Execution Approval")
            .given(gated_queued())
            .when(worker("work.start", W1, Lease::Ownership, 0, ""))
            .watch(w1)
            .refused(WireCode::ApprovalRequired)
            .moves("queued", "queued"),
        Scenario::new("work.start: the Execution Approval has expired")
            .given(approved(60))
            .given(steps::elapse(60_000))
            .when(worker("work.start", W1, Lease::Ownership, 0, ""))
            .watch(w1)
            .refused(WireCode::ApprovalRequired)
            .moves("queued", "queued"),
        Scenario::new("work.start: the approval does not cover the high-risk operation")
            .given(gated_queued())
            .given(vec![Step::Perform(by(
                OWNER,
                GRANT,
                "",
                grant_payload(1, r#""repo.read""#, 300),
            ))])
            .when(worker("work.start", W1, Lease::Ownership, 0, ""))
            .watch(w1)
            .refused(WireCode::ApprovalRequired)
            .moves("queued", "queued"),
    ]
}
