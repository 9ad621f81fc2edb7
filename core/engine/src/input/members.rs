//! The closed payload member sets of the 38 Command kinds the engine implements (§21: "Core
//! objects set `additionalProperties: false`; extensibility occurs only through explicit
//! `extensions` members", §18).
//!
//! `command.schema.json` gives every payload only `{"type": "object"}` (digest §8 item 1), so
//! the engine states each kind's members: [`TABLE`], derived from what each family's decision
//! reads and the family documents' "Payloads" sections. [`check`] runs at the start of
//! `Engine::perform` / `perform_with_resolver`, before anything is read: a payload member the
//! kind does not define (a typo, a capability token, anything) is refused
//! `SCHEMA_VALIDATION_FAILED`, reason `unknown_payload_member`, naming the kind and the member's
//! path; nothing is applied. A kind the engine does not implement is not checked here (it is
//! refused `unsupported_kind` anyway).
//!
//! Where the engine itself reads a nested object (rather than carrying a document that a
//! schema check or the six-stage verifier closes), that object is closed too ([`Nested`]):
//! the Coordinator reference of the creation kinds, the Mission `budget`, `approvalPolicy` and
//! `pinnedProfiles` (`mission.schema.json`), actor objects (`common.schema.json#/$defs/actor`),
//! offer `candidates` and `selectionBasis` and renewal `progress` (`work-item.schema.json`),
//! Evidence documents (`evidence.schema.json`), Message `content` parts
//! (`message.schema.json`), and the Grant and Execution Approval `budget`
//! (`common.schema.json#/$defs/budget`). Required-ness stays each decision's check
//! (`INVALID_COMMAND` `missing_member`); `required` here documents it.

use missionweaveprotocol::json::Value;

use crate::error::EngineError;

/// How a member's value is closed by this table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nested {
    /// Not closed here: a scalar or list of scalars, a document closed by a schema check
    /// (`contract`: `work-contract.schema.json`) or by the six-stage verifier (`manifest`,
    /// `agentCard`, `snapshot`), `usageDelta` (its reader names the six dimensions), or an
    /// object no schema defines (`checkpoint`).
    Open,
    /// An object with no members but these.
    Object(&'static [&'static str]),
    /// An array of objects, each with no members but these.
    Items(&'static [&'static str]),
    /// An array of objects whose members depend on their `type` (`(type, members)`); an item
    /// of another `type` is left to the schema check.
    Tagged(&'static [(&'static str, &'static [&'static str])]),
}

/// One payload member of a kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Member {
    /// The member name.
    pub name: &'static str,
    /// Whether the kind's decision requires it (`false`: optional, or required only when the
    /// envelope lacks it, e.g. `workItemId`).
    pub required: bool,
    /// How its value is closed.
    pub nested: Nested,
}

/// The payload members a Command kind defines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindMembers {
    /// The Command kind.
    pub kind: &'static str,
    /// Every member it defines, required and optional.
    pub members: &'static [Member],
}

impl KindMembers {
    /// The member named `name`, if the kind defines it.
    pub fn member(&self, name: &str) -> Option<&'static Member> {
        self.members.iter().find(|m| m.name == name)
    }

    /// The member names, in table order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.members.iter().map(|m| m.name)
    }
}

const fn req(name: &'static str) -> Member {
    Member {
        name,
        required: true,
        nested: Nested::Open,
    }
}

const fn opt(name: &'static str) -> Member {
    Member {
        name,
        required: false,
        nested: Nested::Open,
    }
}

const fn req_in(name: &'static str, nested: Nested) -> Member {
    Member {
        name,
        required: true,
        nested,
    }
}

const fn opt_in(name: &'static str, nested: Nested) -> Member {
    Member {
        name,
        required: false,
        nested,
    }
}

/// `common.schema.json#/$defs/actor`.
pub const ACTOR: &[&str] = &["type", "id"];
/// The Coordinator reference of the creation kinds (`mission.schema.json` `coordinator`; the
/// engine assigns `coordinatorEpoch`).
pub const COORDINATOR_REF: &[&str] = &["agentId", "agentCardVersion", "leaseId"];
/// `common.schema.json#/$defs/budget`.
pub const BUDGET: &[&str] = &[
    "currency",
    "financialLimit",
    "modelTokenLimit",
    "toolCallLimit",
    "computeSecondsLimit",
    "wallClockSecondsLimit",
    "externalSideEffectLimit",
];
/// `mission.schema.json` `approvalPolicy`.
pub const APPROVAL_POLICY: &[&str] = &[
    "finalHumanApproval",
    "highRiskExecutionApproval",
    "policyVersion",
];
/// `mission.schema.json` `pinnedProfiles[]`.
pub const PINNED_PROFILE: &[&str] = &["profileUri", "majorVersion"];
/// An offer candidate (`work-item.schema.json` `offers[]`; the engine sets `expiresAt` and
/// `status`).
pub const CANDIDATE: &[&str] = &["offerId", "agentId", "agentCardVersion"];
/// `work-item.schema.json` `selectionBasis`.
pub const SELECTION_BASIS: &[&str] = &[
    "requiredCapabilities",
    "verifiedMatches",
    "authorizationEligible",
    "availabilityEstimate",
    "expectedCost",
    "reliabilityEvidence",
    "policyRulesApplied",
];
/// `work-item.schema.json` `progress`.
pub const PROGRESS: &[&str] = &[
    "currentPhase",
    "completedMilestones",
    "nextCheckpoint",
    "blockers",
    "updatedCompletionEstimate",
    "evidenceIds",
];
/// `evidence.schema.json`.
pub const EVIDENCE: &[&str] = &[
    "evidenceId",
    "missionId",
    "groupId",
    "workItemId",
    "type",
    "subject",
    "criterionIds",
    "method",
    "result",
    "details",
    "artifactHashes",
    "generatedBy",
    "toolVersion",
    "modelVersion",
    "createdAt",
    "signature",
];
/// `message.schema.json` `content[]`, by part `type`.
pub const CONTENT_PARTS: &[(&str, &[&str])] = &[
    ("text", &["type", "text"]),
    ("artifact_ref", &["type", "artifactHash"]),
    ("data_ref", &["type", "schema", "data"]),
];

const CREATE: &[Member] = &[
    req("missionId"),
    opt("groupId"),
    req("objective"),
    req("definitionOfDone"),
    req_in("budget", Nested::Object(BUDGET)),
    req("deadline"),
    req_in("approvalPolicy", Nested::Object(APPROVAL_POLICY)),
    req_in("coordinator", Nested::Object(COORDINATOR_REF)),
    req("mainConversationId"),
    opt_in("pinnedProfiles", Nested::Items(PINNED_PROFILE)),
    opt("coordinatorLeaseSeconds"),
];

const CREATE_FOLLOW_UP: &[Member] = &[
    req("missionId"),
    opt("groupId"),
    req("objective"),
    req("definitionOfDone"),
    req_in("budget", Nested::Object(BUDGET)),
    req("deadline"),
    req_in("approvalPolicy", Nested::Object(APPROVAL_POLICY)),
    req_in("coordinator", Nested::Object(COORDINATOR_REF)),
    req("mainConversationId"),
    opt_in("pinnedProfiles", Nested::Items(PINNED_PROFILE)),
    opt("coordinatorLeaseSeconds"),
    req("followUpToMissionId"),
];

const CREATE_CHILD: &[Member] = &[
    req("parentWorkItemId"),
    req("missionId"),
    req("groupId"),
    opt("failurePolicy"),
    req("objective"),
    req("definitionOfDone"),
    req_in("budget", Nested::Object(BUDGET)),
    req("deadline"),
    req_in("approvalPolicy", Nested::Object(APPROVAL_POLICY)),
    req_in("coordinator", Nested::Object(COORDINATOR_REF)),
    req("mainConversationId"),
    opt_in("pinnedProfiles", Nested::Items(PINNED_PROFILE)),
    opt("coordinatorLeaseSeconds"),
    opt("allowedResources"),
    opt("requiredCapabilities"),
];

const ASSIGN_COORDINATOR: &[Member] = &[
    req("agentId"),
    req("agentCardVersion"),
    req("leaseId"),
    opt("leaseSeconds"),
];
const RENEW_COORDINATOR: &[Member] = &[opt("leaseSeconds")];
const SUBMIT_FOR_APPROVAL: &[Member] = &[req("artifactHashes")];
const APPROVE: &[Member] = &[
    req("approvalId"),
    req("missionRevision"),
    req("artifactHashes"),
    opt("acceptancePolicyVersion"),
    opt("comments"),
];
const REQUEST_CHANGES: &[Member] = &[req("missionRevision"), req("feedback")];
const REASON: &[Member] = &[req("reason")];

const MEMBERSHIP_CHANGE: &[Member] = &[
    req_in("member", Nested::Object(ACTOR)),
    req("role"),
    req("scopes"),
    opt("visibilityStartSequence"),
    opt("provisional"),
    opt("contextPackageId"),
    opt("provisionalExpiresAt"),
];
const MEMBERSHIP_END: &[Member] = &[req_in("member", Nested::Object(ACTOR))];
const GRANT_DELEGATION: &[Member] = &[
    req("grantId"),
    req("granteeAgentId"),
    req("targetWorkItemId"),
    req("allowedCapabilities"),
    req_in("budget", Nested::Object(BUDGET)),
    req("maxDescendantDepth"),
    req("expiresAt"),
];

const MESSAGE_POST: &[Member] = &[
    req("messageId"),
    req_in("content", Nested::Tagged(CONTENT_PARTS)),
    opt("conversationId"),
    opt("workItemId"),
    opt("replyTo"),
    opt_in("mentions", Nested::Items(ACTOR)),
    opt("references"),
    opt("authority"),
];
const MESSAGE_CORRECT: &[Member] = &[
    req("messageId"),
    req("targetMessageId"),
    req_in("content", Nested::Tagged(CONTENT_PARTS)),
    req("reason"),
    opt_in("mentions", Nested::Items(ACTOR)),
    opt("references"),
    opt("authority"),
];
const MESSAGE_WITHDRAW: &[Member] = &[
    req("messageId"),
    req("targetMessageId"),
    req("reason"),
    opt_in("content", Nested::Tagged(CONTENT_PARTS)),
    opt("authority"),
];

const WORK_PROPOSE: &[Member] = &[req("proposalId"), req("contract")];
const WORK_AUTHORIZE: &[Member] = &[
    opt("workItemId"),
    opt("conversationId"),
    opt("contract"),
    opt("proposalId"),
    opt("exclusive"),
    opt("delegationGrantId"),
    opt("parentWorkItemId"),
];
const WORK_OFFER: &[Member] = &[
    opt("workItemId"),
    req_in("candidates", Nested::Items(CANDIDATE)),
    req_in("selectionBasis", Nested::Object(SELECTION_BASIS)),
    opt("offerExpiresInSeconds"),
    opt("delegationGrantId"),
];
const WORK_ACCEPT_OFFER: &[Member] = &[
    opt("workItemId"),
    req("capabilityPins"),
    opt("leaseSeconds"),
];
const WORK_START: &[Member] = &[
    opt("workItemId"),
    req("ownershipEpoch"),
    req("leaseId"),
    opt("leaseSeconds"),
];
const WORK_CHECKPOINT: &[Member] = &[
    opt("workItemId"),
    req("ownershipEpoch"),
    req("leaseId"),
    req("checkpoint"),
    opt("leaseSeconds"),
];
const WORK_BLOCK: &[Member] = &[
    opt("workItemId"),
    req("ownershipEpoch"),
    req("leaseId"),
    req("reason"),
    req("checkpoint"),
    opt("leaseSeconds"),
];
const WORK_UNBLOCK: &[Member] = &[opt("workItemId"), opt("leaseSeconds")];
const WORK_SUBMIT: &[Member] = &[
    opt("workItemId"),
    req("ownershipEpoch"),
    req("leaseId"),
    req("artifactHashes"),
    req_in("evidence", Nested::Items(EVIDENCE)),
];
const WORK_ACCEPT_RESULT: &[Member] = &[
    opt("workItemId"),
    req_in("evidence", Nested::Items(EVIDENCE)),
];
const WORK_FAIL: &[Member] = &[
    opt("workItemId"),
    req("reason"),
    req("evidenceIds"),
    // The claim, when the owner (not the Coordinator) reports the failure.
    opt("ownershipEpoch"),
    opt("leaseId"),
];
const WORK_CANCEL: &[Member] = &[opt("workItemId"), req("reason")];
const LEASE_RENEW: &[Member] = &[
    opt("workItemId"),
    req("ownershipEpoch"),
    req("leaseId"),
    opt("leaseSeconds"),
    opt_in("progress", Nested::Object(PROGRESS)),
];
const DEPENDENCY_ADD: &[Member] = &[opt("workItemId"), req("dependencyId")];
const USAGE_RECORD: &[Member] = &[
    opt("workItemId"),
    req("ownershipEpoch"),
    req("leaseId"),
    req("usageDelta"),
];

const ARTIFACT_PUBLISH: &[Member] = &[req("manifest"), req("ownershipEpoch"), req("leaseId")];
const GRANT_EXECUTION: &[Member] = &[
    req("approvalId"),
    opt("workItemId"),
    req("ownershipEpoch"),
    req("operations"),
    opt("resources"),
    opt_in("budget", Nested::Object(BUDGET)),
    opt("expiresInSeconds"),
    opt("comments"),
];
const GRANT_COOPERATION_OVERRIDE: &[Member] = &[
    req("grantId"),
    req("policyName"),
    req_in("beneficiary", Nested::Object(ACTOR)),
    req("targetCommandKind"),
    req("targetActionId"),
    req("reason"),
    req("expiresAt"),
];
const SESSION_OPEN: &[Member] = &[req("agentId")];
const AGENT_CARD_REGISTER: &[Member] = &[req("agentCard")];
const GROUP_ARCHIVE: &[Member] = &[req("snapshot")];

const fn kind(kind: &'static str, members: &'static [Member]) -> KindMembers {
    KindMembers { kind, members }
}

/// Every Command kind the engine implements and the payload members it defines.
pub const TABLE: &[KindMembers] = &[
    kind("mission.create", CREATE),
    kind("mission.create_follow_up", CREATE_FOLLOW_UP),
    kind("mission.create_child", CREATE_CHILD),
    kind("mission.assign_coordinator", ASSIGN_COORDINATOR),
    kind("mission.renew_coordinator", RENEW_COORDINATOR),
    kind("mission.submit_for_approval", SUBMIT_FOR_APPROVAL),
    kind("mission.approve", APPROVE),
    kind("mission.request_changes", REQUEST_CHANGES),
    kind("mission.cancel", REASON),
    kind("mission.terminate", REASON),
    kind("membership.change", MEMBERSHIP_CHANGE),
    kind("membership.end", MEMBERSHIP_END),
    kind("membership.grant_delegation", GRANT_DELEGATION),
    kind("message.post", MESSAGE_POST),
    kind("message.correct", MESSAGE_CORRECT),
    kind("message.retract", MESSAGE_WITHDRAW),
    kind("message.redact", MESSAGE_WITHDRAW),
    kind("work.propose", WORK_PROPOSE),
    kind("work.authorize", WORK_AUTHORIZE),
    kind("work.offer", WORK_OFFER),
    kind("work.accept_offer", WORK_ACCEPT_OFFER),
    kind("work.start", WORK_START),
    kind("work.checkpoint", WORK_CHECKPOINT),
    kind("work.block", WORK_BLOCK),
    kind("work.unblock", WORK_UNBLOCK),
    kind("work.submit", WORK_SUBMIT),
    kind("work.accept_result", WORK_ACCEPT_RESULT),
    kind("work.fail", WORK_FAIL),
    kind("work.cancel", WORK_CANCEL),
    kind(
        "ext.missionweaveprotocol.core.work_execution_lease_renew",
        LEASE_RENEW,
    ),
    kind(
        "ext.missionweaveprotocol.core.work_dependency_add",
        DEPENDENCY_ADD,
    ),
    kind(
        "ext.missionweaveprotocol.core.resource_usage_record",
        USAGE_RECORD,
    ),
    kind("artifact.publish", ARTIFACT_PUBLISH),
    kind("approval.grant_execution", GRANT_EXECUTION),
    kind(
        "policy.grant_cooperation_override",
        GRANT_COOPERATION_OVERRIDE,
    ),
    kind(
        "ext.missionweaveprotocol.identity.session_open",
        SESSION_OPEN,
    ),
    kind(
        "ext.missionweaveprotocol.registry.agent_card_register",
        AGENT_CARD_REGISTER,
    ),
    kind("ext.missionweaveprotocol.core.group_archive", GROUP_ARCHIVE),
];

/// The payload members `kind` defines, or `None` for a kind the engine does not implement.
pub fn payload_members(kind: &str) -> Option<&'static KindMembers> {
    TABLE.iter().find(|k| k.kind == kind)
}

/// Refuses a payload member `kind` does not define (at any level this table closes):
/// `SCHEMA_VALIDATION_FAILED`, reason `unknown_payload_member`. A kind outside the table, or a
/// payload that is not an object (ingress' schema check refuses it), passes unchanged.
pub fn check(kind: &str, payload: &Value) -> Result<(), EngineError> {
    let (Some(shape), Some(object)) = (payload_members(kind), payload.as_object()) else {
        return Ok(());
    };
    for (name, value) in object.iter() {
        let Some(member) = name.as_str().and_then(|n| shape.member(n)) else {
            return Err(unknown(kind, &[name.to_lossy().as_ref()]));
        };
        nested(kind, member, value)?;
    }
    Ok(())
}

fn nested(kind: &str, member: &Member, value: &Value) -> Result<(), EngineError> {
    match member.nested {
        Nested::Open => Ok(()),
        Nested::Object(allowed) => closed(kind, &[member.name], value, allowed),
        Nested::Items(allowed) => {
            for (i, item) in value.as_array().unwrap_or(&[]).iter().enumerate() {
                closed(kind, &[member.name, &i.to_string()], item, allowed)?;
            }
            Ok(())
        }
        Nested::Tagged(parts) => {
            for (i, item) in value.as_array().unwrap_or(&[]).iter().enumerate() {
                let tag = item.get("type").and_then(Value::as_str);
                if let Some((_, allowed)) = parts.iter().find(|(t, _)| Some(*t) == tag) {
                    closed(kind, &[member.name, &i.to_string()], item, allowed)?;
                }
            }
            Ok(())
        }
    }
}

/// An object value with no members but `allowed` (a value of another type is left to the
/// member's reader, which refuses it with `invalid_member`).
fn closed(kind: &str, at: &[&str], value: &Value, allowed: &[&str]) -> Result<(), EngineError> {
    let Some(object) = value.as_object() else {
        return Ok(());
    };
    for (name, _) in object.iter() {
        if !name.as_str().is_some_and(|n| allowed.contains(&n)) {
            let mut path = at.to_vec();
            let name = name.to_lossy();
            path.push(name.as_ref());
            return Err(unknown(kind, &path));
        }
    }
    Ok(())
}

fn unknown(kind: &str, path: &[&str]) -> EngineError {
    let pointer: String = path
        .iter()
        .map(|segment| format!("/{}", segment.replace('~', "~0").replace('/', "~1")))
        .collect();
    EngineError::UnknownPayloadMember {
        kind: kind.to_owned(),
        member: path.last().copied().unwrap_or_default().to_owned(),
        pointer: format!("/payload{pointer}"),
    }
}
