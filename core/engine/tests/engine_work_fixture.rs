//! Shared fixture of the `engine_work_*` tests: the engine fixture (signed Commands through
//! `CommandIngress`, every Event verified) plus valid WorkItem Command payloads and readers of
//! the stored WorkItem. Included with `#[path]`; as its own test target it holds no tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_fixture.rs"]
mod engine_fixture;

pub use engine_fixture::*;

use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol::{SignedDocumentCodec, SignedDocumentKind};
use missionweaveprotocol_engine::ingress::VerifiedCommand;
use missionweaveprotocol_engine::store::{AggregateKey, Store};
use missionweaveprotocol_engine::work::{AGGREGATE_KIND, WorkItem};

/// The Worker Agent (the fixture's second Agent).
pub const WORKER: &str = OTHER_AGENT;
pub const W1: &str = "urn:missionweaveprotocol:work:ledger";
pub const W2: &str = "urn:missionweaveprotocol:work:report";
pub const CONVERSATION: &str = "urn:missionweaveprotocol:conversation:ledger";

/// A valid Work Contract (JSON text) with criterion `c1` needing `deterministic_test`
/// Evidence, depending on `deps`.
pub fn contract(deps: &[&str]) -> String {
    let deps: Vec<String> = deps.iter().map(|d| format!("\"{d}\"")).collect();
    format!(
        r#"{{"contractVersion":1,"goal":"reconcile the ledger","requiredDeliverables":[{{"deliverableId":"report","description":"the report","mediaType":"application/json","schema":"https://example.org/report.json"}}],"acceptanceCriteria":[{{"criterionId":"c1","description":"balances","evidenceRequired":["deterministic_test"]}}],"inputArtifacts":[],"dependencyWorkItemIds":[{}],"allowedResources":[],"requiredCapabilities":[{{"id":"text.summarise","version":"1.0.0"}}],"deadline":"2026-12-31T00:00:00Z","requestedUrgency":"normal","businessImpact":"month end","retryPolicy":{{"maxAttempts":3,"backoff":"fixed","maxDelay":"PT1M","retryableFailures":[]}},"budget":{{"toolCallLimit":10}},"sideEffectRisk":"none","executionApproval":"not_required"}}"#,
        deps.join(",")
    )
}

pub fn selection_basis() -> &'static str {
    r#"{"requiredCapabilities":[{"id":"text.summarise","version":"1.0.0"}],"verifiedMatches":[{"id":"text.summarise","version":"1.2.0"}],"authorizationEligible":true,"availabilityEstimate":"2026-07-15T09:35:00Z","expectedCost":1.5,"reliabilityEvidence":[],"policyRulesApplied":["capability-match"]}"#
}

/// An Evidence document about `item` for `c1`.
pub fn evidence(item: &str, id: &str, kind: &str) -> String {
    format!(
        r#"{{"evidenceId":"urn:missionweaveprotocol:evidence:{id}","workItemId":"{item}","type":"{kind}","criterionIds":["c1"],"result":"passed"}}"#
    )
}

impl Fixture {
    pub fn authorize(&self, item: &str, deps: &[&str]) -> VerifiedCommand {
        self.by_coordinator(
            "work.authorize",
            1,
            &format!(
                r#"{{"workItemId":"{item}","conversationId":"{CONVERSATION}","contract":{}}}"#,
                contract(deps)
            ),
        )
    }

    pub fn offer(&self, item: &str, agents: &[&str], round: &str) -> VerifiedCommand {
        let candidates: Vec<String> = agents
            .iter()
            .enumerate()
            .map(|(i, a)| {
                format!(
                    r#"{{"offerId":"urn:missionweaveprotocol:offer:{round}-{i}","agentId":"{a}","agentCardVersion":1}}"#
                )
            })
            .collect();
        self.by_coordinator(
            "work.offer",
            1,
            &format!(
                r#"{{"workItemId":"{item}","candidates":[{}],"selectionBasis":{}}}"#,
                candidates.join(","),
                selection_basis()
            ),
        )
    }

    pub fn accept(&self, agent: &str, item: &str) -> VerifiedCommand {
        self.command(
            "work.accept_offer",
            agent,
            "",
            &format!(
                r#"{{"workItemId":"{item}","capabilityPins":[{{"id":"text.summarise","version":"1.2.0"}}]}}"#
            ),
        )
    }

    /// A Worker Command on `item` citing `epoch` and `lease`, with `members` (JSON members
    /// text, may be empty).
    pub fn by_worker(
        &self,
        kind: &str,
        agent: &str,
        item: &str,
        epoch: u64,
        lease: &str,
        members: &str,
    ) -> VerifiedCommand {
        let members = if members.is_empty() {
            String::new()
        } else {
            format!(",{members}")
        };
        self.command(
            kind,
            agent,
            "",
            &format!(
                r#"{{"workItemId":"{item}","ownershipEpoch":{epoch},"leaseId":"{lease}"{members}}}"#
            ),
        )
    }

    pub fn checkpoint_members() -> &'static str {
        r#""checkpoint":{"currentPhase":"drafting","completedMilestones":["outline"],"nextCheckpoint":"draft","blockers":[],"updatedCompletionEstimate":"2026-07-15T11:00:00Z","evidenceIds":[]}"#
    }

    pub fn submit_members(item: &str) -> String {
        format!(
            r#""artifactHashes":["{HASH_A}"],"evidence":[{}]"#,
            evidence(item, "test-1", "deterministic_test")
        )
    }

    pub fn accept_result(&self, item: &str) -> VerifiedCommand {
        self.by_coordinator(
            "work.accept_result",
            1,
            &format!(
                r#"{{"workItemId":"{item}","evidence":[{}]}}"#,
                evidence(item, "review-1", "reviewer_assessment")
            ),
        )
    }

    /// Authorize → offer → accept: `item` is `queued`, owned by `WORKER`.
    pub fn queued(&self, engine: &TestEngine, item: &str) {
        self.ok(engine, &self.authorize(item, &[]), NOW);
        self.ok(engine, &self.offer(item, &[WORKER], "r1"), NOW);
        self.ok(engine, &self.accept(WORKER, item), NOW);
    }

    /// … → start: `item` is `active`.
    pub fn active_item(&self, engine: &TestEngine, item: &str) {
        self.queued(engine, item);
        let (epoch, lease) = ownership(engine, item);
        self.ok(
            engine,
            &self.by_worker("work.start", WORKER, item, epoch, &lease, ""),
            NOW,
        );
    }

    /// `artifact.publish` by `WORKER` of content `HASH_A` for `item` (active, owned by
    /// `WORKER`): what `work.submit` may then cite (§13.1).
    pub fn publish_artifact(&self, engine: &TestEngine, item: &str) {
        let publish = self.publish_command(engine, item);
        let performed = engine
            .perform_with_resolver(&publish, NOW, &self.registry)
            .unwrap_or_else(|e| panic!("artifact.publish refused: {e}"));
        self.checked(&performed);
    }

    /// The `artifact.publish` Command of [`publish_artifact`](Self::publish_artifact).
    pub fn publish_command(&self, engine: &TestEngine, item: &str) -> VerifiedCommand {
        let (epoch, lease) = execution(engine, item);
        let manifest = json::parse(
            format!(
                r#"{{"artifactId":"urn:missionweaveprotocol:artifact:{}","contentHash":"{HASH_A}",
                "uri":"https://store.example.org/objects/report","sizeBytes":1234,
                "mediaType":"application/json","schemaUri":"https://example.org/report.json",
                "producer":{{"agentId":"{WORKER}","agentCardVersion":1,
                  "capabilities":[{{"id":"text.summarise","version":"1.2.0"}}]}},
                "missionId":"{MISSION}","groupId":"{GROUP}","workItemId":"{item}",
                "sourceArtifactHashes":[],"toolVersions":[],"modelVersions":[],
                "classification":"internal","createdAt":"{NOW_TEXT}"}}"#,
                item.rsplit(':').next().unwrap_or("report")
            )
            .as_bytes(),
        )
        .unwrap();
        let (_, key) = self.keys.iter().find(|(p, _)| p.id == WORKER).unwrap();
        let signed = SignedDocumentCodec::new()
            .sign(SignedDocumentKind::Artifact, &manifest, key)
            .unwrap()
            .document;
        let text = String::from_utf8(json::canonical_bytes(&signed).unwrap()).unwrap();
        self.command(
            "artifact.publish",
            WORKER,
            "",
            &format!(r#"{{"manifest":{text},"ownershipEpoch":{epoch},"leaseId":"{lease}"}}"#),
        )
    }

    /// … → submit: `item` is `submitted`.
    pub fn submitted_item(&self, engine: &TestEngine, item: &str) {
        self.active_item(engine, item);
        self.publish_artifact(engine, item);
        let (epoch, lease) = execution(engine, item);
        self.ok(
            engine,
            &self.by_worker(
                "work.submit",
                WORKER,
                item,
                epoch,
                &lease,
                &Self::submit_members(item),
            ),
            NOW,
        );
    }

    /// … → accept_result: `item` is `verified`.
    pub fn verified_item(&self, engine: &TestEngine, item: &str) {
        self.submitted_item(engine, item);
        self.ok(engine, &self.accept_result(item), NOW);
    }
}

/// The stored WorkItem and its store revision.
pub fn stored(engine: &TestEngine, item: &str) -> (u64, WorkItem) {
    let aggregate = engine
        .store()
        .aggregate(&AggregateKey::new(AGGREGATE_KIND, item))
        .unwrap()
        .unwrap();
    (
        aggregate.revision,
        WorkItem::from_json(&aggregate.value).unwrap(),
    )
}

pub fn item_state(engine: &TestEngine, item: &str) -> String {
    stored(engine, item).1.state.as_str().to_owned()
}

/// The owner's Ownership Epoch and ownership-lease ID.
pub fn ownership(engine: &TestEngine, item: &str) -> (u64, String) {
    let (_, w) = stored(engine, item);
    let epoch = w.owner.as_ref().unwrap().ownership_epoch;
    (epoch, w.ownership_lease.unwrap().lease_id().to_owned())
}

/// The owner's Ownership Epoch and Execution Lease ID.
pub fn execution(engine: &TestEngine, item: &str) -> (u64, String) {
    let (_, w) = stored(engine, item);
    let epoch = w.owner.as_ref().unwrap().ownership_epoch;
    (epoch, w.execution_lease.unwrap().lease_id().to_owned())
}

/// Every Event of the Group log, verified; asserts sequences 1..=n.
pub fn whole_log(f: &Fixture, engine: &TestEngine) -> Vec<Value> {
    let page = engine.replay(GROUP, 0, 10_000).unwrap();
    for (i, record) in page.events.iter().enumerate() {
        assert_eq!(record.sequence, i as u64 + 1, "the Group log is contiguous");
    }
    page.events.iter().map(|r| f.check_event(r)).collect()
}

pub fn kinds(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e.get("kind").and_then(Value::as_str).unwrap().to_owned())
        .collect()
}
