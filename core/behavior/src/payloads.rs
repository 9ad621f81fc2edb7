//! Valid Command payloads (JSON text) of the kinds the scenarios drive. The spec gives every
//! payload only `{"type": "object"}` (digest §8 item 1); the members are the engine's
//! (`docs/engine.md`, `docs/work.md`, "Payloads").

use crate::world::{COORDINATOR, MISSION, ORG, OWNER, WORKER};

pub const HASH_A: &str = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
pub const HASH_B: &str = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
pub const COORDINATOR_LEASE: &str = "urn:missionweaveprotocol:lease:coordinator-1";
pub const CONVERSATION: &str = "urn:missionweaveprotocol:conversation:ledger";
pub const PROPOSAL: &str = "urn:missionweaveprotocol:proposal:p1";
pub const W1: &str = "urn:missionweaveprotocol:work:ledger";
pub const W2: &str = "urn:missionweaveprotocol:work:report";
pub const ARTIFACT: &str = "urn:missionweaveprotocol:artifact:report-1";

/// `mission.create` (and, with `extra` = `, "followUpToMissionId": …`, `create_follow_up`).
/// Its budget (§12) must cover every contract the scenarios authorize: a dimension it leaves
/// out has limit 0 (`BUDGET_EXCEEDED` at `work.authorize`), so it grants the tool calls each
/// contract reserves.
pub fn create_mission(mission: &str, extra: &str) -> String {
    format!(
        r#"{{"missionId": "{mission}", "objective": "Close the July books",
        "definitionOfDone": [{{"criterionId": "ledger-balanced", "description": "The ledger balances",
          "evidenceRequired": ["deterministic_test", "human_review"]}}],
        "budget": {{"modelTokenLimit": 100000, "toolCallLimit": 1000, "currency": "EUR", "financialLimit": 50}},
        "deadline": "2026-08-01T00:00:00Z",
        "approvalPolicy": {{"finalHumanApproval": true, "highRiskExecutionApproval": true}},
        "coordinator": {{"agentId": "{COORDINATOR}", "agentCardVersion": 1, "leaseId": "{COORDINATOR_LEASE}"}},
        "mainConversationId": "urn:missionweaveprotocol:conversation:finance-main"{extra}}}"#
    )
}

/// `mission.create_follow_up` of [`MISSION`].
pub fn follow_up(mission: &str) -> String {
    create_mission(mission, &format!(r#", "followUpToMissionId": "{MISSION}""#))
}

/// `mission.submit_for_approval` of Artifacts A and B.
pub fn submission() -> String {
    format!(r#"{{"artifactHashes": ["{HASH_A}", "{HASH_B}"]}}"#)
}

/// `mission.approve` of the submission at `revision` (Artifacts in another order).
pub fn approval(revision: u64) -> String {
    format!(
        r#"{{"approvalId": "urn:missionweaveprotocol:approval:1", "missionRevision": {revision},
        "artifactHashes": ["{HASH_B}", "{HASH_A}"], "acceptancePolicyVersion": "1.0.0"}}"#
    )
}

/// A complete Work Contract (§10.1) with criterion `c1` needing `deterministic_test`
/// Evidence, depending on `deps`.
pub fn contract(deps: &[&str]) -> String {
    let deps: Vec<String> = deps.iter().map(|d| format!("\"{d}\"")).collect();
    format!(
        r#"{{"contractVersion":1,"goal":"reconcile the ledger","requiredDeliverables":[{{"deliverableId":"report","description":"the report","mediaType":"application/json","schema":"https://example.org/report.json"}}],"acceptanceCriteria":[{{"criterionId":"c1","description":"balances","evidenceRequired":["deterministic_test"]}}],"inputArtifacts":[],"dependencyWorkItemIds":[{}],"allowedResources":[],"requiredCapabilities":[{{"id":"text.summarise","version":"1.0.0"}}],"deadline":"2026-12-31T00:00:00Z","requestedUrgency":"normal","businessImpact":"month end","retryPolicy":{{"maxAttempts":3,"backoff":"fixed","maxDelay":"PT1M","retryableFailures":[]}},"budget":{{"toolCallLimit":10}},"sideEffectRisk":"none","executionApproval":"not_required"}}"#,
        deps.join(",")
    )
}

/// `work.authorize` of `item` with a full contract.
pub fn authorize(item: &str, deps: &[&str]) -> String {
    format!(
        r#"{{"workItemId":"{item}","conversationId":"{CONVERSATION}","contract":{}}}"#,
        contract(deps)
    )
}

/// `work.offer` of `item` to [`WORKER`] (offer ID from `round`).
pub fn offer(item: &str, round: &str) -> String {
    format!(
        r#"{{"workItemId":"{item}","candidates":[{{"offerId":"urn:missionweaveprotocol:offer:{round}","agentId":"{WORKER}","agentCardVersion":1}}],"selectionBasis":{{"requiredCapabilities":[{{"id":"text.summarise","version":"1.0.0"}}],"verifiedMatches":[{{"id":"text.summarise","version":"1.2.0"}}],"authorizationEligible":true,"availabilityEstimate":"2026-07-15T09:35:00Z","expectedCost":1.5,"reliabilityEvidence":[],"policyRulesApplied":["capability-match"]}}}}"#
    )
}

/// `work.accept_offer` of `item`.
pub fn accept_offer(item: &str) -> String {
    format!(
        r#"{{"workItemId":"{item}","capabilityPins":[{{"id":"text.summarise","version":"1.2.0"}}]}}"#
    )
}

/// An Evidence document about `item` for criterion `c1`.
pub fn evidence(item: &str, id: &str, kind: &str) -> String {
    format!(
        r#"{{"evidenceId":"urn:missionweaveprotocol:evidence:{id}","workItemId":"{item}","type":"{kind}","criterionIds":["c1"],"result":"passed"}}"#
    )
}

/// The `checkpoint` member of `work.checkpoint` / `work.block`.
pub const CHECKPOINT: &str = r#""checkpoint":{"currentPhase":"drafting","completedMilestones":["outline"],"nextCheckpoint":"draft","blockers":[],"updatedCompletionEstimate":"2026-07-15T11:00:00Z","evidenceIds":[]}"#;

/// The members of `work.submit` for `item`: Artifact A and Evidence covering `c1`.
pub fn submit_members(item: &str) -> String {
    format!(
        r#""artifactHashes":["{HASH_A}"],"evidence":[{}]"#,
        evidence(item, "test-1", "deterministic_test")
    )
}

/// `work.accept_result` of `item` with review Evidence.
pub fn accept_result(item: &str) -> String {
    format!(
        r#"{{"workItemId":"{item}","evidence":[{}]}}"#,
        evidence(item, "review-1", "reviewer_assessment")
    )
}

/// A Coordinator-reported `work.fail` of `item` with failure Evidence.
pub fn coordinator_fail(item: &str) -> String {
    format!(
        r#"{{"workItemId":"{item}","reason":"source data unavailable","evidenceIds":["urn:missionweaveprotocol:evidence:f1"]}}"#
    )
}

/// An unsigned Artifact manifest (§13.1) by `producer` about [`W1`] of [`MISSION`].
pub fn manifest(producer: &str, created_at: &str) -> String {
    format!(
        r#"{{"artifactId":"{ARTIFACT}","contentHash":"{HASH_A}","uri":"https://store.example.org/objects/report-1",
        "sizeBytes":1234,"mediaType":"application/json","schemaUri":"https://example.org/report.json",
        "producer":{{"agentId":"{producer}","agentCardVersion":1,"capabilities":[{{"id":"text.summarise","version":"1.2.0"}}]}},
        "missionId":"{MISSION}","groupId":"{group}","workItemId":"{W1}","sourceArtifactHashes":["{HASH_B}"],
        "toolVersions":[{{"name":"ledger-tool","version":"2.0"}}],
        "modelVersions":[{{"provider":"acme","model":"m","version":"1"}}],
        "classification":"internal","createdAt":"{created_at}"}}"#,
        group = crate::world::GROUP
    )
}

/// `ext.missionweaveprotocol.identity.session_open` of `agent` (§6.3; engine payload
/// `{agentId}`).
pub fn session_open(agent: &str) -> String {
    format!(r#"{{"agentId": "{agent}"}}"#)
}

/// The unsigned Agent Card (`agent-card.schema.json`, digest 2.15) of `agent` at `version`,
/// naming its Registry key (`key_id`, base64url `public_key`).
pub fn agent_card(agent: &str, version: u64, name: &str, key_id: &str, public_key: &str) -> String {
    format!(
        r#"{{"agentId": "{agent}", "organizationId": "{ORG}", "cardVersion": {version},
        "displayName": "{name}", "owner": {{"type": "human", "id": "{OWNER}"}},
        "status": "active", "protocolVersions": ["0.1"],
        "endpoints": [{{"transport": "wss", "uri": "wss://agents.behavior.example/worker"}}],
        "publicKeys": [{{"keyId": "{key_id}", "algorithm": "Ed25519", "publicKey": "{public_key}",
          "validFrom": "2026-01-01T00:00:00Z"}}],
        "capabilities": [{{"id": "text.summarise", "version": "1.2.0",
          "inputSchema": "https://schemas.behavior.example/in.json", "inputSchemaHash": "{HASH_A}",
          "outputSchema": "https://schemas.behavior.example/out.json", "outputSchemaHash": "{HASH_B}",
          "constraints": {{}}, "verifiedEvidence": ["urn:missionweaveprotocol:evidence:summarise-2026"]}}],
        "maxConcurrency": 2, "issuedAt": "2026-07-01T00:00:00Z"}}"#
    )
}

/// The `usageDelta` member of `…core.resource_usage_record` charging `tool_calls` tool calls
/// (§12; the contract of [`contract`] grants 10).
pub fn usage_delta(tool_calls: u64) -> String {
    format!(r#""usageDelta":{{"toolCalls":{tool_calls}}}"#)
}
