//! The two-Missions scenario (issue 13): two Missions in two Groups, driven concurrently (their
//! Commands interleaved) through the stages requirements → implementation → testing →
//! code-review → integration, each a WorkItem depending on the one before (§10.4), then
//! `mission.submit_for_approval` and the human `mission.approve` (§7.1).
//!
//! Mission A also promotes its `testing` WorkItem to a child Mission (§14) whose approval
//! verifies it, gates `integration` on a human Execution Approval (§12; `work.start` is refused
//! `APPROVAL_REQUIRED` first), and after its approval has its Group archived with a Group
//! Snapshot signed by the Group Authority (§15.2, §16). Mission B shows the dependency gate:
//! `implementation` is accepted early, and its `work.start` is refused until `requirements`
//! is verified.
//!
//! Payloads are the engine's (docs/engine.md "Payloads"), built from the behavior matrix's
//! fixtures; Worker Commands read the claim (Ownership Epoch, lease) when they are built.

use missionweaveprotocol::json::{self, Object, Value, sha256_prefixed};
use missionweaveprotocol::{Principal, PrincipalType, SignedDocumentKind, WireCode};
use missionweaveprotocol_behavior::payloads;
use missionweaveprotocol_behavior::steps::{Lease, claim};
use missionweaveprotocol_behavior::world::{
    AUTHORITY, COORDINATOR, OTHER_HUMAN, OWNER, SERVICE, WORKER, World,
};
use missionweaveprotocol_engine::archive::{GROUP_ARCHIVE, SnapshotDraft, group_event_ids};
use missionweaveprotocol_engine::ingress::VerifiedCommand;

/// The five stages, in dependency order: each depends on the one before.
pub const STAGES: [&str; 5] = [
    "requirements",
    "implementation",
    "testing",
    "code-review",
    "integration",
];

/// One of the two Missions.
#[derive(Debug, Clone, Copy)]
pub struct Mission {
    pub tag: &'static str,
    pub group: &'static str,
    pub mission: &'static str,
    pub owner: &'static str,
}

pub const A: Mission = Mission {
    tag: "a",
    group: "urn:missionweaveprotocol:group:two-missions-a",
    mission: "urn:missionweaveprotocol:mission:two-missions-a",
    owner: OWNER,
};
pub const B: Mission = Mission {
    tag: "b",
    group: "urn:missionweaveprotocol:group:two-missions-b",
    mission: "urn:missionweaveprotocol:mission:two-missions-b",
    owner: OTHER_HUMAN,
};
/// Mission A's child Mission, under its `testing` WorkItem, in its own Group.
pub const CHILD_GROUP: &str = "urn:missionweaveprotocol:group:two-missions-a-testing";
pub const CHILD: &str = "urn:missionweaveprotocol:mission:two-missions-a-testing";
/// Every Group the scenario writes, in the order the vector lists their logs.
pub const GROUPS: [&str; 3] = [A.group, B.group, CHILD_GROUP];

/// The resource on which the gated `integration` contract allows `production.deploy`.
const RESOURCE: &str = "urn:missionweaveprotocol:resource:two-missions-prod";

type Build = Box<dyn Fn(&World) -> Result<VerifiedCommand, String>>;

/// One Command of a track: a label, its builder, and the refusal it must meet (if any).
#[allow(missing_debug_implementations)]
pub struct Act {
    pub label: String,
    pub build: Build,
    pub refused: Option<WireCode>,
}

fn act(label: impl Into<String>, build: Build) -> Act {
    Act {
        label: label.into(),
        build,
        refused: None,
    }
}

fn refused(label: impl Into<String>, code: WireCode, build: Build) -> Act {
    Act {
        label: label.into(),
        build,
        refused: Some(code),
    }
}

impl Mission {
    pub fn item(self, stage: &str) -> String {
        format!("urn:missionweaveprotocol:work:{}-{stage}", self.tag)
    }

    /// The content hash of the stage's Artifact (distinct per WorkItem).
    pub fn artifact_hash(self, stage: &str) -> String {
        sha256_prefixed(self.item(stage).as_bytes())
    }

    fn conversation(self) -> String {
        format!(
            "urn:missionweaveprotocol:conversation:two-missions-{}",
            self.tag
        )
    }

    fn by(self, actor: &'static str, kind: &'static str, payload: String) -> Build {
        let group = self.group;
        Box::new(move |w: &World| w.command_in(group, kind, actor, "", &payload))
    }

    fn coordinator(self, kind: &'static str, payload: String) -> Build {
        let group = self.group;
        Box::new(move |w: &World| {
            w.command_in(
                group,
                kind,
                COORDINATOR,
                r#""coordinatorEpoch": 1"#,
                &payload,
            )
        })
    }

    /// A Worker Command on the stage's WorkItem citing its current claim.
    fn worker(self, kind: &'static str, stage: &str, lease: Lease, members: String) -> Build {
        let (group, item) = (self.group, self.item(stage));
        Box::new(move |w: &World| {
            let (epoch, lease_id) = claim(w, &item, lease)?;
            let members = if members.is_empty() {
                String::new()
            } else {
                format!(",{members}")
            };
            w.command_in(
                group,
                kind,
                WORKER,
                "",
                &format!(
                    r#"{{"workItemId":"{item}","ownershipEpoch":{epoch},"leaseId":"{lease_id}"{members}}}"#
                ),
            )
        })
    }

    fn create(self) -> Act {
        let payload = payloads::create_mission(self.mission, "")
            .replace(
                payloads::COORDINATOR_LEASE,
                &format!("urn:missionweaveprotocol:lease:coordinator-{}", self.tag),
            )
            .replace(
                "conversation:finance-main",
                &format!("conversation:two-missions-{}-main", self.tag),
            );
        act(
            format!("{}: mission.create", self.tag),
            self.by(self.owner, "mission.create", payload),
        )
    }

    fn renew(self) -> Act {
        act(
            format!("{}: the Coordinator's lease for an hour", self.tag),
            self.coordinator(
                "mission.renew_coordinator",
                r#"{"leaseSeconds": 3600}"#.to_owned(),
            ),
        )
    }

    /// The stage's Work Contract: [`payloads::contract`] depending on the stage before.
    fn contract(self, index: usize) -> String {
        let dependency = index.checked_sub(1).map(|i| self.item(STAGES[i]));
        let deps: Vec<&str> = dependency.as_deref().into_iter().collect();
        payloads::contract(&deps).replace("reconcile the ledger", STAGES[index])
    }

    fn authorize(self, index: usize, contract: String) -> Act {
        let stage = STAGES[index];
        act(
            format!("{}: work.authorize {stage}", self.tag),
            self.coordinator(
                "work.authorize",
                format!(
                    r#"{{"workItemId":"{}","conversationId":"{}","contract":{contract}}}"#,
                    self.item(stage),
                    self.conversation()
                ),
            ),
        )
    }

    fn offer(self, stage: &str) -> Act {
        act(
            format!("{}: work.offer {stage}", self.tag),
            self.coordinator(
                "work.offer",
                payloads::offer(&self.item(stage), &format!("{}-{stage}", self.tag)),
            ),
        )
    }

    fn accept_offer(self, stage: &str) -> Act {
        act(
            format!("{}: work.accept_offer {stage}", self.tag),
            self.by(
                WORKER,
                "work.accept_offer",
                payloads::accept_offer(&self.item(stage)),
            ),
        )
    }

    fn start(self, stage: &str) -> Build {
        self.worker("work.start", stage, Lease::Ownership, String::new())
    }

    /// Started (the gates passed) through verified: Artifact, submission, review.
    fn execute(self, stage: &str) -> Vec<Act> {
        let item = self.item(stage);
        let evidence = |suffix: &str, kind: &str| {
            payloads::evidence(&item, &format!("{}-{stage}-{suffix}", self.tag), kind)
        };
        let submit = format!(
            r#""artifactHashes":["{}"],"evidence":[{}]"#,
            self.artifact_hash(stage),
            evidence("test", "deterministic_test")
        );
        let review = format!(
            r#"{{"workItemId":"{item}","evidence":[{}]}}"#,
            evidence("review", "reviewer_assessment")
        );
        let tag = self.tag;
        vec![
            act(format!("{tag}: work.start {stage}"), self.start(stage)),
            act(
                format!("{tag}: artifact.publish {stage}"),
                self.publish(stage),
            ),
            act(
                format!("{tag}: work.submit {stage}"),
                self.worker("work.submit", stage, Lease::Execution, submit),
            ),
            act(
                format!("{tag}: work.accept_result {stage}"),
                self.coordinator("work.accept_result", review),
            ),
        ]
    }

    /// `artifact.publish` by the Worker of the stage's Artifact (§13.1: a submission cites
    /// only content published for its WorkItem), the manifest signed with the Worker's key.
    fn publish(self, stage: &str) -> Build {
        let manifest = payloads::manifest(WORKER, "CREATED")
            .replace(
                payloads::ARTIFACT,
                &format!("urn:missionweaveprotocol:artifact:{}-{stage}", self.tag),
            )
            .replace(payloads::HASH_A, &self.artifact_hash(stage))
            .replace(
                &format!(
                    r#""missionId":"{}""#,
                    missionweaveprotocol_behavior::world::MISSION
                ),
                &format!(r#""missionId":"{}""#, self.mission),
            )
            .replace(
                &format!(
                    r#""groupId":"{}""#,
                    missionweaveprotocol_behavior::world::GROUP
                ),
                &format!(r#""groupId":"{}""#, self.group),
            )
            .replace(
                &format!(r#""workItemId":"{}""#, payloads::W1),
                &format!(r#""workItemId":"{}""#, self.item(stage)),
            );
        let (group, item) = (self.group, self.item(stage));
        Box::new(move |w: &World| {
            let created = w.now().to_rfc3339().ok_or("clock out of range")?;
            let text = manifest.replace("CREATED", &created);
            let unsigned =
                json::parse_state(text.as_bytes()).map_err(|e| format!("manifest JSON: {e}"))?;
            let signed = json_text(&w.sign_artifact(&unsigned, WORKER)?)?;
            let (epoch, lease) = claim(w, &item, Lease::Execution)?;
            w.command_in(
                group,
                "artifact.publish",
                WORKER,
                "",
                &format!(r#"{{"manifest":{signed},"ownershipEpoch":{epoch},"leaseId":"{lease}"}}"#),
            )
        })
    }

    /// The full stage: offered, accepted, executed, verified.
    fn stage(self, stage: &str) -> Vec<Act> {
        let mut acts = vec![self.offer(stage), self.accept_offer(stage)];
        acts.extend(self.execute(stage));
        acts
    }

    fn submit_for_approval(self) -> Act {
        act(
            format!("{}: mission.submit_for_approval", self.tag),
            self.coordinator(
                "mission.submit_for_approval",
                format!(
                    r#"{{"artifactHashes": ["{}"]}}"#,
                    self.artifact_hash("integration")
                ),
            ),
        )
    }

    /// The MissionOwner's human approval of the submitted revision (read when built).
    fn approve(self) -> Act {
        let (group, mission, owner, hash, tag) = (
            self.group,
            self.mission,
            self.owner,
            self.artifact_hash("integration"),
            self.tag,
        );
        act(
            format!("{tag}: mission.approve (human)"),
            Box::new(move |w: &World| {
                let revision = mission_revision(w, mission)?;
                w.command_in(
                    group,
                    "mission.approve",
                    owner,
                    "",
                    &format!(
                        r#"{{"approvalId": "urn:missionweaveprotocol:approval:two-missions-{tag}",
                        "missionRevision": {revision}, "artifactHashes": ["{hash}"],
                        "acceptancePolicyVersion": "1.0.0"}}"#
                    ),
                )
            }),
        )
    }
}

fn mission_revision(w: &World, mission: &str) -> Result<u64, String> {
    w.engine()
        .mission(mission)
        .map_err(|e| e.to_string())?
        .map(|m| m.revision())
        .ok_or_else(|| format!("no Mission {mission}"))
}

fn json_text(value: &Value) -> Result<String, String> {
    json::canonical_bytes(value)
        .map_err(|e| format!("JCS: {e}"))
        .and_then(|b| String::from_utf8(b).map_err(|e| e.to_string()))
}

/// Mission A: the child Mission under `testing`, the gated `integration`, the archive.
pub fn track_a() -> Vec<Act> {
    let m = A;
    let mut acts = vec![m.create(), m.renew()];
    for (index, stage) in STAGES.iter().enumerate() {
        let contract = if *stage == "integration" {
            gated(m.contract(index))
        } else {
            m.contract(index)
        };
        acts.push(m.authorize(index, contract));
    }
    acts.extend(m.stage("requirements"));
    acts.extend(m.stage("implementation"));
    acts.extend(child_testing());
    acts.extend(m.stage("code-review"));
    acts.extend(gated_integration());
    acts.push(m.submit_for_approval());
    acts.push(m.approve());
    acts.push(archive());
    acts
}

/// Mission B: the plain chain, with `implementation` accepted early and its start refused
/// until `requirements` is verified.
pub fn track_b() -> Vec<Act> {
    let m = B;
    let mut acts = vec![m.create(), m.renew()];
    for index in 0..STAGES.len() {
        acts.push(m.authorize(index, m.contract(index)));
    }
    acts.push(m.offer("requirements"));
    acts.push(m.accept_offer("requirements"));
    acts.push(m.offer("implementation"));
    acts.push(m.accept_offer("implementation"));
    let mut requirements = m.execute("requirements");
    let review = requirements.pop();
    acts.extend(requirements);
    acts.push(refused(
        "b: work.start implementation before requirements is verified",
        WireCode::InvalidCommand,
        m.start("implementation"),
    ));
    acts.extend(review);
    acts.extend(m.execute("implementation"));
    for stage in &STAGES[2..] {
        acts.extend(m.stage(stage));
    }
    acts.push(m.submit_for_approval());
    acts.push(m.approve());
    acts
}

/// `testing` of A promoted to the child Mission, which its Coordinator (the Worker) submits
/// and its MissionOwner (A's Coordinator; no final human approval) approves: A's `testing`
/// is verified by the child's approval (§10.2 row 16).
fn child_testing() -> Vec<Act> {
    let item = A.item("testing");
    let hash = A.artifact_hash("testing");
    let create = format!(
        r#"{{"parentWorkItemId": "{item}", "missionId": "{CHILD}", "groupId": "{CHILD_GROUP}",
        "objective": "Test the implementation in depth",
        "definitionOfDone": [{{"criterionId": "tests-pass", "description": "The tests pass",
          "evidenceRequired": ["reviewer_assessment"]}}],
        "budget": {{"toolCallLimit": 5}}, "deadline": "2026-07-31T00:00:00Z",
        "approvalPolicy": {{"finalHumanApproval": false, "highRiskExecutionApproval": true}},
        "coordinator": {{"agentId": "{WORKER}", "agentCardVersion": 1,
          "leaseId": "urn:missionweaveprotocol:lease:two-missions-child-coordinator"}},
        "mainConversationId": "urn:missionweaveprotocol:conversation:two-missions-a-testing",
        "failurePolicy": "block_parent_work_item"}}"#
    );
    let submit = format!(r#"{{"artifactHashes": ["{hash}"]}}"#);
    vec![
        act(
            "a: mission.create_child under testing",
            A.coordinator("mission.create_child", create),
        ),
        act(
            "a-testing: mission.submit_for_approval",
            Box::new(move |w: &World| {
                w.command_in(
                    CHILD_GROUP,
                    "mission.submit_for_approval",
                    WORKER,
                    r#""coordinatorEpoch": 1"#,
                    &submit,
                )
            }),
        ),
        act(
            "a-testing: mission.approve (verifies a: testing)",
            Box::new(move |w: &World| {
                let revision = mission_revision(w, CHILD)?;
                w.command_in(
                    CHILD_GROUP,
                    "mission.approve",
                    COORDINATOR,
                    "",
                    &format!(
                        r#"{{"approvalId": "urn:missionweaveprotocol:approval:two-missions-child",
                        "missionRevision": {revision}, "artifactHashes": ["{hash}"]}}"#
                    ),
                )
            }),
        ),
    ]
}

/// A contract requiring human execution approval (`sideEffectRisk: high_risk`) for
/// `production.deploy` on [`RESOURCE`] (as the behavior matrix's gated contract).
fn gated(contract: String) -> String {
    contract
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

/// A's `integration`: queued, `work.start` refused without an Execution Approval, the
/// MissionOwner's `approval.grant_execution`, then the ordinary execution.
fn gated_integration() -> Vec<Act> {
    let stage = "integration";
    let item = A.item(stage);
    let mut acts = vec![A.offer(stage), A.accept_offer(stage)];
    acts.push(refused(
        "a: work.start integration without an Execution Approval",
        WireCode::ApprovalRequired,
        A.start(stage),
    ));
    let grant = Box::new(move |w: &World| {
        let (epoch, _) = claim(w, &item, Lease::Ownership)?;
        w.command_in(
            A.group,
            "approval.grant_execution",
            OWNER,
            "",
            &format!(
                r#"{{"approvalId":"urn:missionweaveprotocol:approval:two-missions-deploy","workItemId":"{item}","ownershipEpoch":{epoch},"operations":["production.deploy"],"resources":["{RESOURCE}"],"budget":{{"toolCallLimit":5}},"expiresInSeconds":300}}"#
            ),
        )
    });
    acts.push(act(
        "a: approval.grant_execution integration (human)",
        grant,
    ));
    acts.extend(A.execute(stage));
    acts
}

/// `…core.group_archive` of A's Group by the policy service, with a Group Snapshot of every
/// Event `1..head` signed by the Group Authority (the snapshot authority).
fn archive() -> Act {
    act(
        "a: group_archive with a Group Snapshot by the Group Authority",
        Box::new(|w: &World| {
            let event_ids =
                group_event_ids(w.engine().store(), A.group).map_err(|e| e.to_string())?;
            let policy_log = json::parse_state(
                format!(
                    r#"{{"entryId": "urn:missionweaveprotocol:policy-log:two-missions-a",
                    "decision": "verified the exact signed human approval before archiving",
                    "actor": {{"type": "service", "id": "{AUTHORITY}"}},
                    "occurredAt": "{}", "details": {{}}}}"#,
                    w.now().to_rfc3339().ok_or("clock out of range")?
                )
                .as_bytes(),
            )
            .map_err(|e| e.to_string())?;
            let draft = SnapshotDraft {
                snapshot_id: "urn:missionweaveprotocol:snapshot:two-missions-a".into(),
                group_id: A.group.into(),
                event_ids,
                state_hash: sha256_prefixed(A.mission.as_bytes()),
                policy_log: vec![policy_log],
                created_at: w.now(),
            };
            let unsigned = draft.document(&Principal::new(PrincipalType::Service, AUTHORITY));
            let snapshot =
                w.sign_document(SignedDocumentKind::GroupSnapshot, &unsigned, AUTHORITY)?;
            let mut payload = Object::new();
            payload.insert("snapshot", snapshot);
            let payload = json_text(&Value::Object(payload))?;
            w.command_in(A.group, GROUP_ARCHIVE, SERVICE, "", &payload)
        }),
    )
}

/// The two tracks interleaved one Command each in turn (A first): the Missions progress
/// concurrently; each track keeps its own order.
pub fn interleaved() -> Vec<Act> {
    let mut a = track_a().into_iter();
    let mut b = track_b().into_iter();
    let mut acts = Vec::new();
    loop {
        let (x, y) = (a.next(), b.next());
        if x.is_none() && y.is_none() {
            return acts;
        }
        acts.extend(x);
        acts.extend(y);
    }
}
