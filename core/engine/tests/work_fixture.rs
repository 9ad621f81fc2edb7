//! Shared builders for the `work_*` tests: a valid Work Contract and a WorkItem driven through
//! the real decision functions into each §10.2 state (never built by hand).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::json::{Value, parse};
use missionweaveprotocol_engine::work::evidence::{EvidenceRef, EvidenceResult};
use missionweaveprotocol_engine::work::fencing::WorkClaim;
use missionweaveprotocol_engine::work::offers::{
    self, AcceptOfferInput, OfferCandidate, OfferInput,
};
use missionweaveprotocol_engine::work::transitions::closing::{self, CancelInput, FailInput};
use missionweaveprotocol_engine::work::transitions::create::{self, AuthorizeInput};
use missionweaveprotocol_engine::work::transitions::execution::{self, BlockInput, StartInput};
use missionweaveprotocol_engine::work::transitions::review::{
    self, AcceptResultInput, SubmitInput,
};
use missionweaveprotocol_engine::work::{
    Actor, DependencyGraph, LeaseGrant, WorkItem, WorkItemState,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

pub const T: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

pub fn at(s: i64) -> UnixMillis {
    UnixMillis(T + s * 1000)
}

pub const W1: &str = "urn:mwp:agent:worker-1";
pub const W2: &str = "urn:mwp:agent:worker-2";
pub const COORD: &str = "urn:mwp:agent:coordinator";
pub const SESSION: u64 = 4;
pub const HASH: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000001";

pub fn wid(n: &str) -> String {
    format!("urn:mwp:work:{n}")
}

/// A valid contract; `criteria` are `(id, [evidence types])`.
pub fn contract_with(deps: &[String], criteria: &[(&str, &[&str])], approval: &str) -> Value {
    let criteria: Vec<String> = criteria
        .iter()
        .map(|(id, types)| {
            let types: Vec<String> = types.iter().map(|t| format!("\"{t}\"")).collect();
            format!(
                r#"{{"criterionId":"{id}","description":"criterion {id}","evidenceRequired":[{}]}}"#,
                types.join(",")
            )
        })
        .collect();
    let deps: Vec<String> = deps.iter().map(|d| format!("\"{d}\"")).collect();
    let text = format!(
        r#"{{"contractVersion":1,"goal":"summarise the incident","requiredDeliverables":[{{"deliverableId":"report","description":"the report","mediaType":"application/json","schema":"https://example.org/report.json"}}],"acceptanceCriteria":[{}],"inputArtifacts":[],"dependencyWorkItemIds":[{}],"allowedResources":[],"requiredCapabilities":[{{"id":"text.summarise","version":"1.0.0"}}],"deadline":"2026-12-31T00:00:00Z","requestedUrgency":"normal","businessImpact":"on-call handover","retryPolicy":{{"maxAttempts":3,"backoff":"fixed","maxDelay":"PT1M","retryableFailures":[]}},"budget":{{"toolCallLimit":10}},"sideEffectRisk":"none","executionApproval":"{approval}"}}"#,
        criteria.join(","),
        deps.join(","),
    );
    parse(text.as_bytes()).unwrap()
}

pub fn contract() -> Value {
    contract_with(&[], &[("c1", &["deterministic_test"])], "not_required")
}

pub fn authorize_input(id: &str, contract: Value) -> AuthorizeInput {
    AuthorizeInput {
        work_item_id: id.to_owned(),
        mission_id: "urn:mwp:mission:m".into(),
        group_id: "urn:mwp:group:g".into(),
        conversation_id: "urn:mwp:conversation:c".into(),
        exclusive: true,
        contract: Some(contract),
        authorized_by: Actor::agent(COORD),
        proposal_id: None,
    }
}

pub fn open_item_with(id: &str, contract: Value, graph: &DependencyGraph) -> WorkItem {
    create::authorize(None, None, graph, authorize_input(id, contract), at(0))
        .unwrap()
        .state
        .item
}

pub fn open_item() -> WorkItem {
    open_item_with(&wid("w1"), contract(), &DependencyGraph::new())
}

pub fn selection_basis() -> Value {
    parse(br#"{"requiredCapabilities":[{"id":"text.summarise","version":"1.0.0"}],"verifiedMatches":[{"id":"text.summarise","version":"1.2.0"}],"authorizationEligible":true,"availabilityEstimate":"2026-01-01T00:05:00Z","expectedCost":1.5,"reliabilityEvidence":[],"policyRulesApplied":["capability-match"]}"#).unwrap()
}

pub fn offer_input(agents: &[&str], round: &str, expires: UnixMillis) -> OfferInput {
    OfferInput {
        candidates: agents
            .iter()
            .enumerate()
            .map(|(i, a)| OfferCandidate {
                offer_id: format!("urn:mwp:offer:{round}-{i}"),
                agent_id: (*a).to_owned(),
                agent_card_version: 1,
            })
            .collect(),
        expires_at: expires,
        selection_basis: selection_basis(),
    }
}

pub fn offered(item: &WorkItem, agents: &[&str], now: UnixMillis) -> WorkItem {
    let round = format!("r{}", item.revision);
    offers::offer(
        item,
        offer_input(agents, &round, now.saturating_add_ms(300_000)),
        now,
    )
    .unwrap()
    .state
}

pub fn accept_input(agent: &str, lease: &str, now: UnixMillis) -> AcceptOfferInput {
    AcceptOfferInput {
        agent_id: agent.to_owned(),
        session_epoch: SESSION,
        capability_pins: vec![parse(br#"{"id":"text.summarise","version":"1.2.0"}"#).unwrap()],
        ownership_lease: LeaseGrant {
            lease_id: format!("urn:mwp:lease:{lease}"),
            expires_at: now.saturating_add_ms(900_000),
        },
        start_by: now.saturating_add_ms(600_000),
    }
}

/// The owner's claim citing `lease`.
pub fn claim(item: &WorkItem, lease: &str) -> WorkClaim {
    let owner = item.owner.as_ref().unwrap();
    WorkClaim {
        agent_id: owner.agent_id.clone(),
        session_epoch: SESSION,
        ownership_epoch: owner.ownership_epoch,
        lease_id: lease.to_owned(),
    }
}

/// The owner's claim citing its current ownership lease.
pub fn ownership_claim(item: &WorkItem) -> WorkClaim {
    claim(item, item.ownership_lease.as_ref().unwrap().lease_id())
}

/// The owner's claim citing its current Execution Lease.
pub fn execution_claim(item: &WorkItem) -> WorkClaim {
    claim(item, item.execution_lease.as_ref().unwrap().lease_id())
}

pub fn queued(item: &WorkItem, now: UnixMillis) -> WorkItem {
    let item = offered(item, &[W1], now);
    offers::accept_offer(&item, accept_input(W1, "own-1", now), now)
        .unwrap()
        .state
}

pub fn start_input(item: &WorkItem, now: UnixMillis) -> StartInput {
    StartInput {
        claim: ownership_claim(item),
        execution_lease: LeaseGrant {
            lease_id: format!("urn:mwp:lease:exec-{}", item.revision),
            expires_at: now.saturating_add_ms(300_000),
        },
        execution_approved: false,
    }
}

pub fn no_deps(_: &str) -> Option<WorkItemState> {
    None
}

pub fn active(item: &WorkItem, now: UnixMillis) -> WorkItem {
    let item = queued(item, now);
    execution::start(&item, start_input(&item, now), no_deps, now)
        .unwrap()
        .state
}

pub fn progress() -> Value {
    parse(br#"{"currentPhase":"drafting","completedMilestones":["outline"],"nextCheckpoint":"draft","blockers":[],"updatedCompletionEstimate":"2026-01-01T01:00:00Z","evidenceIds":[]}"#).unwrap()
}

pub fn block_input(item: &WorkItem, now: UnixMillis) -> BlockInput {
    BlockInput {
        claim: execution_claim(item),
        reason: "needs the incident timeline".into(),
        checkpoint: progress(),
        blocked_lease: LeaseGrant {
            lease_id: format!("urn:mwp:lease:blocked-{}", item.revision),
            expires_at: now.saturating_add_ms(900_000),
        },
    }
}

pub fn blocked(item: &WorkItem, now: UnixMillis) -> WorkItem {
    let item = active(item, now);
    execution::block(&item, block_input(&item, now), now)
        .unwrap()
        .state
}

pub fn evidence(item: &WorkItem, id: &str, kind: &str, criteria: &[&str]) -> EvidenceRef {
    EvidenceRef {
        evidence_id: format!("urn:mwp:evidence:{id}"),
        work_item_id: item.work_item_id.clone(),
        evidence_type: kind.to_owned(),
        criterion_ids: criteria.iter().map(|c| (*c).to_owned()).collect(),
        result: EvidenceResult::Passed,
    }
}

pub fn submit_input(item: &WorkItem) -> SubmitInput {
    SubmitInput {
        claim: execution_claim(item),
        artifact_hashes: vec![HASH.to_owned()],
        evidence: vec![evidence(item, "e1", "deterministic_test", &["c1"])],
    }
}

pub fn submitted(item: &WorkItem, now: UnixMillis) -> WorkItem {
    let item = active(item, now);
    review::submit(&item, submit_input(&item), now)
        .unwrap()
        .state
}

pub fn review_input(item: &WorkItem) -> AcceptResultInput {
    AcceptResultInput {
        evidence: vec![evidence(item, "review-1", "reviewer_assessment", &["c1"])],
    }
}

pub fn verified(item: &WorkItem, now: UnixMillis) -> WorkItem {
    let item = submitted(item, now);
    review::accept_result(&item, review_input(&item), now)
        .unwrap()
        .state
}

pub fn fail_input() -> FailInput {
    FailInput {
        reason: "source data unavailable".into(),
        evidence_ids: vec!["urn:mwp:evidence:failure-1".into()],
        claim: None,
    }
}

pub fn failed(item: &WorkItem, now: UnixMillis) -> WorkItem {
    closing::fail(item, fail_input(), now).unwrap().state
}

pub fn cancelled(item: &WorkItem, now: UnixMillis) -> WorkItem {
    closing::cancel(
        item,
        CancelInput {
            reason: "no longer needed".into(),
        },
        now,
    )
    .unwrap()
    .state
}

/// A WorkItem in `state`, reached through the real transitions at `at(0)`.
pub fn item_in(state: WorkItemState) -> WorkItem {
    let open = open_item();
    let now = at(0);
    let item = match state {
        WorkItemState::Open => open,
        WorkItemState::Offered => offered(&open, &[W1, W2], now),
        WorkItemState::Queued => queued(&open, now),
        WorkItemState::Active => active(&open, now),
        WorkItemState::Blocked => blocked(&open, now),
        WorkItemState::Submitted => submitted(&open, now),
        WorkItemState::Verified => verified(&open, now),
        WorkItemState::Failed => failed(&open, now),
        WorkItemState::Cancelled => cancelled(&open, now),
    };
    assert_eq!(item.state, state);
    item
}
