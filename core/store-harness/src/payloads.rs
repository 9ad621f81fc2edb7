//! Command payloads (JSON object text) of the kinds the harness drives. The spec types every
//! payload only as an object (digest §8 item 1); the members are the engine's
//! (`docs/engine.md`, `docs/work.md`, "Payloads").

use crate::keys::{COORDINATOR, WORKERS};

/// The content hash the scenario's Artifact is published under.
pub const HASH_A: &str = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
/// The Coordinator lease ID of every harness Mission.
pub const COORDINATOR_LEASE: &str = "urn:missionweaveprotocol:lease:harness-coordinator";

/// `mission.create` of `mission`. The budget (§12) covers many contracts of [`contract`]: a
/// dimension left out has limit 0, and `work.authorize` reserves the contract's tool calls.
pub fn create_mission(mission: &str) -> String {
    format!(
        r#"{{"missionId": "{mission}", "objective": "Keep the books durable",
        "definitionOfDone": [{{"criterionId": "ledger-balanced", "description": "The ledger balances",
          "evidenceRequired": ["deterministic_test", "human_review"]}}],
        "budget": {{"modelTokenLimit": 100000, "toolCallLimit": 1000, "currency": "EUR", "financialLimit": 50}},
        "deadline": "2026-08-01T00:00:00Z",
        "approvalPolicy": {{"finalHumanApproval": true, "highRiskExecutionApproval": true}},
        "coordinator": {{"agentId": "{COORDINATOR}", "agentCardVersion": 1, "leaseId": "{}"}},
        "mainConversationId": "urn:missionweaveprotocol:conversation:harness-main"}}"#,
        COORDINATOR_LEASE
    )
}

/// `membership.change`: `member` (an Agent) joins as a Worker (§8; active, epoch 1).
pub fn add_worker(member: &str) -> String {
    format!(
        r#"{{"member": {{"type": "agent", "id": "{member}"}}, "role": "worker", "scopes": ["work:execute"]}}"#
    )
}

/// `membership.change`: `member` (a human) joins as an observer.
pub fn add_observer(member: &str) -> String {
    format!(
        r#"{{"member": {{"type": "human", "id": "{member}"}}, "role": "observer", "scopes": ["group:read"]}}"#
    )
}

/// `mission.renew_coordinator`.
pub const RENEW: &str = r#"{"leaseSeconds": 300}"#;

/// A Work Contract (§10.1) with criterion `c1` needing `deterministic_test` Evidence and a
/// budget of 10 tool calls.
pub fn contract() -> &'static str {
    r#"{"contractVersion":1,"goal":"reconcile the ledger","requiredDeliverables":[{"deliverableId":"report","description":"the report","mediaType":"application/json","schema":"https://example.org/report.json"}],"acceptanceCriteria":[{"criterionId":"c1","description":"balances","evidenceRequired":["deterministic_test"]}],"inputArtifacts":[],"dependencyWorkItemIds":[],"allowedResources":[],"requiredCapabilities":[{"id":"text.summarise","version":"1.0.0"}],"deadline":"2026-12-31T00:00:00Z","requestedUrgency":"normal","businessImpact":"month end","retryPolicy":{"maxAttempts":3,"backoff":"fixed","maxDelay":"PT1M","retryableFailures":[]},"budget":{"toolCallLimit":10},"sideEffectRisk":"none","executionApproval":"not_required"}"#
}

/// `work.authorize` of `item`.
pub fn authorize(item: &str) -> String {
    format!(
        r#"{{"workItemId":"{item}","conversationId":"urn:missionweaveprotocol:conversation:harness-work","contract":{}}}"#,
        contract()
    )
}

/// `work.offer` of `item` to every Agent of [`WORKERS`] (a bounded candidate set, §10.3),
/// offer IDs from `round`.
pub fn offer(item: &str, round: &str) -> String {
    let candidates: Vec<String> = WORKERS
        .iter()
        .enumerate()
        .map(|(i, agent)| {
            format!(
                r#"{{"offerId":"urn:missionweaveprotocol:offer:{round}-{i}","agentId":"{agent}","agentCardVersion":1}}"#
            )
        })
        .collect();
    format!(
        r#"{{"workItemId":"{item}","candidates":[{}],"selectionBasis":{{"requiredCapabilities":[{{"id":"text.summarise","version":"1.0.0"}}],"verifiedMatches":[{{"id":"text.summarise","version":"1.2.0"}}],"authorizationEligible":true,"availabilityEstimate":"2026-07-15T09:35:00Z","expectedCost":1.5,"reliabilityEvidence":[],"policyRulesApplied":["capability-match"]}}}}"#,
        candidates.join(",")
    )
}

/// `work.accept_offer` of `item`.
pub fn accept_offer(item: &str) -> String {
    format!(
        r#"{{"workItemId":"{item}","capabilityPins":[{{"id":"text.summarise","version":"1.2.0"}}]}}"#
    )
}

/// A Worker Command's claim on `item` (§11.3) with further payload `members` (may be empty).
pub fn claim(item: &str, epoch: u64, lease: &str, members: &str) -> String {
    let members = if members.is_empty() {
        String::new()
    } else {
        format!(",{members}")
    };
    format!(r#"{{"workItemId":"{item}","ownershipEpoch":{epoch},"leaseId":"{lease}"{members}}}"#)
}

/// An Evidence document about `item` for criterion `c1`.
pub fn evidence(item: &str, id: &str, kind: &str) -> String {
    format!(
        r#"{{"evidenceId":"urn:missionweaveprotocol:evidence:{id}","workItemId":"{item}","type":"{kind}","criterionIds":["c1"],"result":"passed"}}"#
    )
}

/// The members of `work.submit`: Artifact [`HASH_A`] and Evidence covering `c1`.
pub fn submit_members(item: &str) -> String {
    format!(
        r#""artifactHashes":["{HASH_A}"],"evidence":[{}]"#,
        evidence(item, "harness-test-1", "deterministic_test")
    )
}

/// `work.accept_result` of `item` with review Evidence.
pub fn accept_result(item: &str) -> String {
    format!(
        r#"{{"workItemId":"{item}","evidence":[{}]}}"#,
        evidence(item, "harness-review-1", "reviewer_assessment")
    )
}

/// The unsigned Artifact manifest (§13.1) of content [`HASH_A`] produced by `producer` for
/// `item` of `mission` in `group`.
pub fn manifest(artifact: &str, producer: &str, mission: &str, group: &str, item: &str) -> String {
    format!(
        r#"{{"artifactId":"{artifact}","contentHash":"{HASH_A}",
        "uri":"https://store.example.org/objects/harness-report","sizeBytes":1234,
        "mediaType":"application/json","schemaUri":"https://example.org/report.json",
        "producer":{{"agentId":"{producer}","agentCardVersion":1,
          "capabilities":[{{"id":"text.summarise","version":"1.2.0"}}]}},
        "missionId":"{mission}","groupId":"{group}","workItemId":"{item}",
        "sourceArtifactHashes":[],"toolVersions":[],"modelVersions":[],
        "classification":"internal","createdAt":"{}"}}"#,
        crate::command::ISSUED_AT
    )
}

/// `mission.submit_for_approval` of Artifact [`HASH_A`].
pub fn submission() -> String {
    format!(r#"{{"artifactHashes": ["{HASH_A}"]}}"#)
}

/// `mission.approve` of the submission at Mission revision `revision`.
pub fn approval(approval: &str, revision: u64) -> String {
    format!(
        r#"{{"approvalId": "{approval}", "missionRevision": {revision},
        "artifactHashes": ["{HASH_A}"], "acceptancePolicyVersion": "1.0.0"}}"#
    )
}

/// `…identity.session_open` of `agent` (§6.3).
pub fn session_open(agent: &str) -> String {
    format!(r#"{{"agentId": "{agent}"}}"#)
}
