//! The evidence matrix: one row per Command kind and Event kind of the pinned schemas (plus
//! the spec's prose `ext.` kinds), per Mission row of §7.1 and per WorkItem row of §10.2, each
//! naming the positive and the negative scenario that must run for it — or why none exists yet.
//!
//! A row's evidence is decided by the runner from what the scenarios did (see
//! [`crate::report`]): naming a scenario proves nothing until it has run and passed, and its
//! act has to match the row (its Command kind, the Event kind it emitted, the states it moved
//! between).

use crate::kinds::KindCatalogue;
use crate::scenario::Scenario;
use crate::scenarios;

/// The four parts of the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    Command,
    Event,
    /// §7.1 (digest §2.1).
    MissionTransition,
    /// §10.2 (digest §2.2).
    WorkItemTransition,
}

impl Category {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Command => "command",
            Self::Event => "event",
            Self::MissionTransition => "mission_transition",
            Self::WorkItemTransition => "work_item_transition",
        }
    }
}

/// What moves a transition row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trigger {
    /// One of these Command kinds.
    Command(&'static [&'static str]),
    /// Time passing (offer expiry, §10.2 row 5).
    Time,
}

/// What a row is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    Command(String),
    Event(String),
    Transition {
        from: &'static [&'static str],
        trigger: Trigger,
        to: &'static [&'static str],
    },
}

/// The scenarios a row relies on, or why it has none yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Evidence {
    Scenarios {
        positive: &'static str,
        negative: &'static str,
    },
    NotCovered(&'static str),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub id: String,
    pub category: Category,
    pub subject: Subject,
    pub evidence: Evidence,
    /// Further scenarios of the row (its other `from` states, branches and authorities):
    /// each must pass and match the row as a positive (applied) or a negative (refused) does.
    pub variants: Vec<&'static str>,
}

/// Rows and the scenarios they name.
#[derive(Debug)]
pub struct Matrix {
    pub rows: Vec<Row>,
    /// The rules of §6.3, §7, §10, §12 and §15 and their negative evidence.
    pub rules: Vec<crate::rules::Rule>,
    pub scenarios: Vec<Scenario>,
}

/// `(kind, positive, negative)` of the Command kinds with scenarios.
const COMMANDS: &[(&str, &str, &str)] = &[
    (
        "mission.create_child",
        "mission.create_child: none → active, a child of W1 in its own Group",
        "mission.create_child: a stale Coordinator Epoch is fenced",
    ),
    (
        "mission.create",
        "mission.create: none → active",
        "mission.create: an existing Mission ID is refused",
    ),
    (
        "mission.assign_coordinator",
        "mission.assign_coordinator: the MissionOwner appoints a new Coordinator",
        "mission.assign_coordinator: another human is refused",
    ),
    (
        "mission.renew_coordinator",
        "mission.renew_coordinator: the current Coordinator renews its lease",
        "mission.renew_coordinator: a stale Coordinator Epoch is fenced",
    ),
    (
        "mission.submit_for_approval",
        "mission.submit_for_approval: active → awaiting_approval",
        "mission.submit_for_approval: already awaiting approval",
    ),
    (
        "mission.approve",
        "mission.approve: awaiting_approval → approved",
        "mission.approve: another revision than the submitted one",
    ),
    (
        "mission.request_changes",
        "mission.request_changes: awaiting_approval → active",
        "mission.request_changes: an active Mission has nothing to review",
    ),
    (
        "mission.cancel",
        "mission.cancel: active → cancelled by the MissionOwner",
        "mission.cancel: the Coordinator must not cancel",
    ),
    (
        "mission.terminate",
        "mission.terminate: active → failed by the Coordinator",
        "mission.terminate: a stale Coordinator Epoch is fenced",
    ),
    (
        "mission.create_follow_up",
        "mission.create_follow_up: none → active, following the approved Mission",
        "mission.create_follow_up: the followed Mission is not approved",
    ),
    (
        "membership.change",
        "membership.change: the MissionOwner adds the Worker (active, epoch 1)",
        "membership.change: a provisional Membership without a Context Package",
    ),
    (
        "membership.end",
        "membership.end: the Worker's Membership ends",
        "membership.end: there is no Membership to end",
    ),
    (
        "message.post",
        "message.post: the Coordinator posts in the planning Conversation",
        "message.post: a Worker without Membership",
    ),
    (
        "message.correct",
        "message.correct: the author corrects its Message",
        "message.correct: another member is not the author",
    ),
    (
        "message.retract",
        "message.retract: the author retracts its Message",
        "message.retract: a retracted Message stays retracted",
    ),
    (
        "message.redact",
        "message.redact: the MissionOwner redacts a Worker's Message",
        "message.redact: no policy reason",
    ),
    (
        "work.propose",
        "work.propose: none → open Work Proposal",
        "work.propose: an incomplete Work Contract (no goal)",
    ),
    (
        "work.authorize",
        "work.authorize: none → open",
        "work.authorize: the MissionOwner is not the Coordinator",
    ),
    (
        "work.offer",
        "work.offer: open → offered",
        "work.offer: a stale Coordinator Epoch is fenced",
    ),
    (
        "work.accept_offer",
        "work.accept_offer: offered → queued",
        "work.accept_offer: an Agent with no offer",
    ),
    (
        "work.start",
        "work.start: queued → active",
        "work.start: a stale Ownership Epoch is fenced",
    ),
    (
        "approval.grant_execution",
        "approval.grant_execution: the MissionOwner approves a queued WorkItem",
        "approval.grant_execution: a stale Ownership Epoch is fenced",
    ),
    (
        "work.checkpoint",
        "work.checkpoint: active → queued",
        "work.checkpoint: an older Ownership Epoch is fenced",
    ),
    (
        "work.block",
        "work.block: active → blocked",
        "work.block: a lapsed Execution Lease",
    ),
    (
        "work.unblock",
        "work.unblock: blocked → queued",
        "work.unblock: an active WorkItem is not blocked",
    ),
    (
        "work.submit",
        "work.submit: active → submitted",
        "work.submit: a submission without Evidence",
    ),
    (
        "work.accept_result",
        "work.accept_result: submitted → verified",
        "work.accept_result: an active WorkItem has no result",
    ),
    (
        "work.fail",
        "work.fail: active → failed, reported by the Coordinator",
        "work.fail: a verified WorkItem stays verified",
    ),
    (
        "work.cancel",
        "work.cancel: open → cancelled by the MissionOwner",
        "work.cancel: another human is not the MissionOwner",
    ),
    (
        "artifact.publish",
        "artifact.publish: the owner publishes its signed manifest",
        "artifact.publish: the manifest's producer is not the actor",
    ),
    (
        "ext.missionweaveprotocol.core.work_execution_lease_renew",
        "Execution Lease renewal: active → active",
        "Execution Lease renewal: a lapsed Execution Lease",
    ),
    (
        "ext.missionweaveprotocol.core.work_dependency_add",
        "dependency insertion: open → open, contract revised",
        "dependency insertion: a cycle is refused",
    ),
    (
        "ext.missionweaveprotocol.core.resource_usage_record",
        "resource_usage_record: the Worker records 3 tool calls",
        "resource_usage_record: 11 tool calls overflow the WorkItem's 10",
    ),
    (
        "ext.missionweaveprotocol.identity.session_open",
        "identity.session_open: a replacement Session (epoch 1 → 2)",
        "identity.session_open: sent by the policy service, not the identity service",
    ),
    (
        "ext.missionweaveprotocol.registry.agent_card_register",
        "registry.agent_card_register: a verified Agent Card (version 1)",
        "registry.agent_card_register: a tampered Agent Card",
    ),
    (
        "ext.missionweaveprotocol.core.group_archive",
        "group_archive: an approved Mission's Group is archived",
        "group_archive: an active Mission's Group is not archived",
    ),
    (
        "membership.grant_delegation",
        "membership.grant_delegation: the Coordinator grants the work_delegate W1's subtree",
        "membership.grant_delegation: the grantee is a worker, not a work_delegate",
    ),
    (
        "policy.grant_cooperation_override",
        "policy.grant_cooperation_override: the MissionOwner grants a one-shot override",
        "policy.grant_cooperation_override: another human is not the MissionOwner",
    ),
];

/// Why a kind without scenarios has none (by Command or Event kind). Every kind of the pinned
/// schemas has scenarios now; a kind added to the bundle without any is reported `NotCovered`
/// ("no scenario") until one is written or a reason is listed here.
const NOT_COVERED: &[(&str, &str)] = &[];

/// An Event kind's evidence: the positive scenario of a Command emitting it, and a refusal of
/// that same Command kind (`(event, positive, negative)`).
const EVENTS: &[(&str, &str, &str)] = &[
    (
        "mission.child.created",
        "mission.create_child: none → active, a child of W1 in its own Group",
        "mission.create_child: a stale Coordinator Epoch is fenced",
    ),
    (
        "mission.created",
        "mission.create: none → active",
        "mission.create: an existing Mission ID is refused",
    ),
    (
        "mission.coordinator.assigned",
        "mission.assign_coordinator: the MissionOwner appoints a new Coordinator",
        "mission.assign_coordinator: another human is refused",
    ),
    (
        "mission.coordinator.renewed",
        "mission.renew_coordinator: the current Coordinator renews its lease",
        "mission.renew_coordinator: a stale Coordinator Epoch is fenced",
    ),
    (
        "mission.submitted_for_approval",
        "mission.submit_for_approval: active → awaiting_approval",
        "mission.submit_for_approval: already awaiting approval",
    ),
    (
        "mission.approved",
        "mission.approve: awaiting_approval → approved",
        "mission.approve: another revision than the submitted one",
    ),
    (
        "mission.changes_requested",
        "mission.request_changes: awaiting_approval → active",
        "mission.request_changes: an active Mission has nothing to review",
    ),
    (
        "mission.cancelled",
        "mission.cancel: active → cancelled by the MissionOwner",
        "mission.cancel: the Coordinator must not cancel",
    ),
    (
        "mission.terminated",
        "mission.terminate: active → failed by the Coordinator",
        "mission.terminate: a stale Coordinator Epoch is fenced",
    ),
    (
        "mission.follow_up.created",
        "mission.create_follow_up: none → active, following the approved Mission",
        "mission.create_follow_up: the followed Mission is not approved",
    ),
    (
        "membership.changed",
        "membership.change: the MissionOwner adds the Worker (active, epoch 1)",
        "membership.change: a provisional Membership without a Context Package",
    ),
    (
        "membership.ended",
        "membership.end: the Worker's Membership ends",
        "membership.end: there is no Membership to end",
    ),
    (
        "message.posted",
        "message.post: the Coordinator posts in the planning Conversation",
        "message.post: a Worker without Membership",
    ),
    (
        "message.corrected",
        "message.correct: the author corrects its Message",
        "message.correct: another member is not the author",
    ),
    (
        "message.retracted",
        "message.retract: the author retracts its Message",
        "message.retract: a retracted Message stays retracted",
    ),
    (
        "message.redacted",
        "message.redact: the MissionOwner redacts a Worker's Message",
        "message.redact: no policy reason",
    ),
    (
        "work.proposed",
        "work.propose: none → open Work Proposal",
        "work.propose: an incomplete Work Contract (no goal)",
    ),
    (
        "work.authorized",
        "work.authorize: none → open",
        "work.authorize: the MissionOwner is not the Coordinator",
    ),
    (
        "work.offer.created",
        "work.offer: open → offered",
        "work.offer: a stale Coordinator Epoch is fenced",
    ),
    (
        "work.offer.accepted",
        "work.accept_offer: offered → queued",
        "work.accept_offer: an Agent with no offer",
    ),
    (
        "work.contract.revised",
        "dependency insertion: open → open, contract revised",
        "dependency insertion: a cycle is refused",
    ),
    (
        "work.started",
        "work.start: queued → active",
        "work.start: a stale Ownership Epoch is fenced",
    ),
    (
        "approval.execution.granted",
        "approval.grant_execution: the MissionOwner approves a queued WorkItem",
        "approval.grant_execution: a stale Ownership Epoch is fenced",
    ),
    (
        "work.progressed",
        "Execution Lease renewal: active → active",
        "Execution Lease renewal: a lapsed Execution Lease",
    ),
    (
        "work.checkpointed",
        "work.checkpoint: active → queued",
        "work.checkpoint: an older Ownership Epoch is fenced",
    ),
    (
        "work.blocked",
        "work.block: active → blocked",
        "work.block: a lapsed Execution Lease",
    ),
    (
        "work.unblocked",
        "work.unblock: blocked → queued",
        "work.unblock: an active WorkItem is not blocked",
    ),
    (
        "work.submitted",
        "work.submit: active → submitted",
        "work.submit: a submission without Evidence",
    ),
    (
        "work.result.accepted",
        "work.accept_result: submitted → verified",
        "work.accept_result: an active WorkItem has no result",
    ),
    (
        "work.failed",
        "work.fail: active → failed, reported by the Coordinator",
        "work.fail: a verified WorkItem stays verified",
    ),
    (
        "work.cancelled",
        "work.cancel: open → cancelled by the MissionOwner",
        "work.cancel: another human is not the MissionOwner",
    ),
    (
        "artifact.published",
        "artifact.publish: the owner publishes its signed manifest",
        "artifact.publish: the manifest's producer is not the actor",
    ),
    (
        "ext.missionweaveprotocol.core.resource_usage_recorded",
        "resource_usage_record: the rest of the budget is used up exactly",
        "resource_usage_record: an overflow after 8 tool calls charges nothing",
    ),
    (
        "ext.missionweaveprotocol.identity.session_opened",
        "identity.session_open: a replacement Session (epoch 1 → 2)",
        "identity.session_open: a stale expectedRevision",
    ),
    (
        "ext.missionweaveprotocol.registry.agent_card_registered",
        "registry.agent_card_register: a newer version replaces the card",
        "registry.agent_card_register: a lower version than the registered one",
    ),
    (
        "ext.missionweaveprotocol.core.work_execution_lease_revoked",
        "Session replacement: the active WorkItem returns to queued",
        "Session replacement refused: the active WorkItem keeps its lease",
    ),
    (
        "group.snapshot.created",
        "group_archive: an approved Mission's Group is archived",
        "group_archive: an active Mission's Group is not archived",
    ),
    (
        "group.archived",
        "group_archive: an approved Mission's Group is archived",
        "group_archive: an active Mission's Group is not archived",
    ),
    (
        "membership.delegation.granted",
        "membership.grant_delegation: a Cooperation Override Grant lifts the depth limit once",
        "membership.grant_delegation: deeper than Organization policy is rate limited",
    ),
    (
        "policy.cooperation_override.granted",
        "policy.grant_cooperation_override: the MissionOwner grants a one-shot override",
        "policy.grant_cooperation_override: another human is not the MissionOwner",
    ),
];

const NON_TERMINAL_MISSION: &[&str] = &["active", "awaiting_approval"];
const UNFINISHED: &[&str] = &[
    "open",
    "offered",
    "queued",
    "active",
    "blocked",
    "submitted",
];

type TransitionRow = (
    u8,
    &'static [&'static str],
    Trigger,
    &'static [&'static str],
    Evidence,
);

fn covered(positive: &'static str, negative: &'static str) -> Evidence {
    Evidence::Scenarios { positive, negative }
}

/// §7.1, verbatim order (digest §2.1).
fn mission_rows() -> Vec<TransitionRow> {
    use Trigger::Command as C;
    vec![
        (
            1,
            &["none"],
            C(&["mission.create"]),
            &["active"],
            covered(
                "mission.create: none → active",
                "mission.create: an existing Mission ID is refused",
            ),
        ),
        (
            2,
            &["none"],
            C(&["mission.create_follow_up"]),
            &["active"],
            covered(
                "mission.create_follow_up: none → active, following the approved Mission",
                "mission.create_follow_up: the followed Mission is not approved",
            ),
        ),
        (
            3,
            &["none"],
            C(&["mission.create_child"]),
            &["active"],
            covered(
                "mission.create_child: none → active, a child of W1 in its own Group",
                "mission.create_child: a stale Coordinator Epoch is fenced",
            ),
        ),
        (
            4,
            &["active"],
            C(&["mission.submit_for_approval"]),
            &["awaiting_approval"],
            covered(
                "mission.submit_for_approval: active → awaiting_approval",
                "mission.submit_for_approval: already awaiting approval",
            ),
        ),
        (
            5,
            &["awaiting_approval"],
            C(&["mission.request_changes"]),
            &["active"],
            covered(
                "mission.request_changes: awaiting_approval → active",
                "mission.request_changes: an active Mission has nothing to review",
            ),
        ),
        (
            6,
            &["awaiting_approval"],
            C(&["mission.approve"]),
            &["approved"],
            covered(
                "mission.approve: awaiting_approval → approved",
                "mission.approve: another revision than the submitted one",
            ),
        ),
        (
            7,
            NON_TERMINAL_MISSION,
            C(&["mission.cancel"]),
            &["cancelled"],
            covered(
                "mission.cancel: active → cancelled by the MissionOwner",
                "mission.cancel: an approved Mission is not reopened",
            ),
        ),
        (
            8,
            NON_TERMINAL_MISSION,
            C(&["mission.terminate"]),
            &["failed"],
            covered(
                "mission.terminate: active → failed by the Coordinator",
                "mission.terminate: an approved Mission stays approved",
            ),
        ),
    ]
}

/// §10.2, verbatim order (digest §2.2).
fn work_rows() -> Vec<TransitionRow> {
    use Trigger::Command as C;
    vec![
        (
            1,
            &["none"],
            C(&["work.propose"]),
            &["open"],
            covered(
                "work.propose: none → open Work Proposal",
                "work.propose: an incomplete Work Contract (no goal)",
            ),
        ),
        (
            2,
            &["none"],
            C(&["work.authorize"]),
            &["open"],
            covered(
                "work.authorize: none → open",
                "work.authorize: an existing WorkItem is not re-created",
            ),
        ),
        (
            3,
            &["open", "offered", "queued", "active", "blocked", "failed"],
            C(&["work.offer"]),
            &["offered"],
            covered(
                "work.offer: open → offered",
                "work.offer: an owner with a live lease is not re-offered",
            ),
        ),
        (
            4,
            &["offered"],
            C(&["work.accept_offer"]),
            &["queued"],
            covered(
                "work.accept_offer: offered → queued",
                "work.accept_offer: no offer was made",
            ),
        ),
        (
            5,
            &["offered"],
            Trigger::Time,
            &["offered"],
            covered(
                "offer expiry: offered stays offered, nothing appended",
                "offer expiry: acceptance at expiry is refused",
            ),
        ),
        (
            6,
            &["queued"],
            C(&["approval.grant_execution"]),
            &["queued"],
            covered(
                "approval.grant_execution: the MissionOwner approves a queued WorkItem",
                "approval.grant_execution: a stale Ownership Epoch is fenced",
            ),
        ),
        (
            7,
            &["queued"],
            C(&["work.start"]),
            &["active"],
            covered(
                "work.start: queued → active",
                "work.start: a stale Ownership Epoch is fenced",
            ),
        ),
        (
            8,
            &["active"],
            C(&["work.checkpoint"]),
            &["queued"],
            covered(
                "work.checkpoint: active → queued",
                "work.checkpoint: an older Ownership Epoch is fenced",
            ),
        ),
        (
            9,
            &["active"],
            C(&["work.block"]),
            &["blocked"],
            covered(
                "work.block: active → blocked",
                "work.block: a lapsed Execution Lease",
            ),
        ),
        (
            10,
            &["blocked"],
            C(&["work.unblock"]),
            &["queued", "open"],
            covered(
                "work.unblock: blocked → queued",
                "work.unblock: an active WorkItem is not blocked",
            ),
        ),
        (
            11,
            &["active"],
            C(&["work.submit"]),
            &["submitted"],
            covered(
                "work.submit: active → submitted",
                "work.submit: a submission without Evidence",
            ),
        ),
        (
            12,
            &["submitted"],
            C(&["work.accept_result"]),
            &["verified"],
            covered(
                "work.accept_result: submitted → verified",
                "work.accept_result: an active WorkItem has no result",
            ),
        ),
        (
            13,
            UNFINISHED,
            C(&["work.fail"]),
            &["failed"],
            covered(
                "work.fail: active → failed, reported by the Coordinator",
                "work.fail: a verified WorkItem stays verified",
            ),
        ),
        (
            14,
            UNFINISHED,
            C(&["work.cancel"]),
            &["cancelled"],
            covered(
                "work.cancel: open → cancelled by the MissionOwner",
                "work.cancel: a verified WorkItem stays verified",
            ),
        ),
        (
            15,
            &["open", "offered", "queued", "active", "blocked"],
            C(&["mission.create_child"]),
            &["blocked"],
            covered(
                "mission.create_child: W1 open → blocked, held through the child",
                "mission.create_child: a submitted WorkItem cannot be promoted",
            ),
        ),
        (
            16,
            &["blocked"],
            C(&["mission.approve"]),
            &["verified"],
            covered(
                "Child Mission approval verifies the parent WorkItem: blocked → verified",
                "Child Mission approval of another Artifact set leaves W1 blocked",
            ),
        ),
        (
            17,
            &["blocked"],
            C(&["mission.terminate"]),
            &["blocked", "failed"],
            covered(
                "Child Mission failure fails the parent WorkItem as declared: blocked → failed",
                "Child Mission failure refused: the Parent Coordinator is not the child's",
            ),
        ),
        (
            18,
            UNFINISHED,
            C(&["mission.cancel", "mission.terminate"]),
            &["failed", "cancelled"],
            covered(
                "Mission cancellation propagates: open → cancelled",
                "Mission cancellation refused: the WorkItem stays open",
            ),
        ),
    ]
}

/// The trigger's name in a row ID.
fn trigger_name(trigger: &Trigger, table: Category, number: u8) -> String {
    match (trigger, table, number) {
        (Trigger::Time, _, _) => "offer expiry".to_owned(),
        (_, Category::WorkItemTransition, 16) => "linked child Mission approval".to_owned(),
        (_, Category::WorkItemTransition, 17) => "linked child Mission failure".to_owned(),
        (_, Category::WorkItemTransition, 18) => {
            "parent Mission failure or cancellation".to_owned()
        }
        (Trigger::Command(kinds), _, _) => kinds.join(" or "),
    }
}

/// The variants of a Command row: further applied or refused scenarios of the kind (other
/// refusal reasons, the ingress authorizer's and the engine's).
const COMMAND_VARIANTS: &[(&str, &[&str])] = &[
    (
        "ext.missionweaveprotocol.identity.session_open",
        &[
            "identity.session_open: a stale expectedRevision",
            "identity.session_open: an agentId that is not a URI",
            "Session replacement: the active WorkItem returns to queued",
            "Session replacement refused: the active WorkItem keeps its lease",
        ],
    ),
    (
        "ext.missionweaveprotocol.registry.agent_card_register",
        &[
            "registry.agent_card_register: sent by the policy service, not the identity service",
            "registry.agent_card_register: a newer version replaces the card",
            "registry.agent_card_register: a lower version than the registered one",
        ],
    ),
    (
        "approval.grant_execution",
        &[
            "approval.grant_execution: an Agent cannot sign a human decision",
            "approval.grant_execution: another human is not the MissionOwner",
            "approval.grant_execution: an operation outside the Work Contract",
            "approval.grant_execution: a future Ownership Epoch is fenced",
        ],
    ),
    (
        "ext.missionweaveprotocol.core.resource_usage_record",
        &[
            "resource_usage_record: the rest of the budget is used up exactly",
            "resource_usage_record: an overflow after 8 tool calls charges nothing",
            "resource_usage_record: a child WorkItem's usage overflowing its parent WorkItem",
        ],
    ),
    (
        "mission.create_child",
        &["mission.create_child: a future Coordinator Epoch is fenced"],
    ),
    (
        "mission.renew_coordinator",
        &[
            "mission.renew_coordinator: a future Coordinator Epoch is fenced",
            "mission.renew_coordinator: a reused Action ID with other content",
            "mission.renew_coordinator: issued before the freshness window",
        ],
    ),
    (
        "mission.terminate",
        &["mission.terminate: a future Coordinator Epoch is fenced"],
    ),
    (
        "ext.missionweaveprotocol.core.group_archive",
        &[
            "group_archive: a snapshot not signed by the snapshot authority",
            "group_archive: a snapshot that misses the Group's last Event",
        ],
    ),
    (
        "membership.grant_delegation",
        &[
            "membership.grant_delegation: another Agent is not the Coordinator",
            "membership.grant_delegation: deeper than Organization policy is rate limited",
            "membership.grant_delegation: a Cooperation Override Grant lifts the depth limit once",
        ],
    ),
    (
        "message.post",
        &[
            "message.post: a Message claiming authority never commits",
            "message.post: mentioning an Agent that is not a member",
            "message.post: a member Worker mentions the Coordinator",
            "message.post: an unknown Conversation",
            "message.post: an older Membership Epoch is fenced",
            "message.post: a newer Membership Epoch is fenced",
            "message.post: the current Membership Epoch posts",
        ],
    ),
    (
        "work.authorize",
        &[
            "work.authorize: the grantee adds a linked descendant under its Grant",
            "work.authorize: a forged Delegation Grant authorizes nothing",
            "work.authorize: citing a Message as its Delegation Grant is forbidden",
        ],
    ),
    (
        "work.offer",
        &[
            "work.offer: the grantee offers the Grant's target",
            "work.offer: a WorkItem outside the Grant's subtree",
            "work.offer: a future Coordinator Epoch is fenced",
        ],
    ),
];

/// The variants of a transition row (`scenarios/variants.rs`).
fn variants(category: Category, number: u8) -> Vec<&'static str> {
    match (category, number) {
        (Category::MissionTransition, 7) => vec![
            "mission.cancel: awaiting_approval → cancelled",
            "mission.cancel: a stale expectedRevision",
            "mission.cancel: a future expectedRevision",
            "mission.cancel: a payload member no kind defines",
            "Parent cancellation propagates to the child Mission: active → cancelled",
        ],
        (Category::MissionTransition, 8) => vec![
            "mission.terminate: awaiting_approval → failed by Organization policy",
            "Declared child-failure propagation fails the parent Mission: active → failed",
        ],
        (Category::WorkItemTransition, 1) => {
            vec!["work.propose: the Mission is approved (terminal)"]
        }
        (Category::WorkItemTransition, 2) => vec![
            "work.authorize: an open Work Proposal → open",
            "work.authorize: the Mission is approved (terminal)",
        ],
        (Category::WorkItemTransition, 3) => vec![
            "work.offer: blocked by a failed child Mission → offered",
            "work.offer: failed → offered",
            "work.offer: queued, the owner's lease lapsed → offered",
            "work.offer: active, the owner's Execution Lease lapsed → offered",
            "work.offer: blocked, the blocked lease is live",
        ],
        (Category::WorkItemTransition, 4) => vec![
            "work.accept_offer: the losing candidate",
            "work.accept_offer: an Agent that never opened a Session",
        ],
        (Category::WorkItemTransition, 6) => vec![
            "approval.grant_execution: an Agent cannot sign a human decision",
            "approval.grant_execution: another human is not the MissionOwner",
            "approval.grant_execution: an operation outside the Work Contract",
            "approval.grant_execution: an active WorkItem is no longer queued",
            "approval.grant_execution: a future Ownership Epoch is fenced",
        ],
        (Category::WorkItemTransition, 7) => vec![
            "work.start: a gated WorkItem under its Execution Approval",
            "work.start: a gated WorkItem without an Execution Approval",
            "work.start: the Execution Approval has expired",
            "work.start: the approval does not cover the high-risk operation",
            "work.start: a stale expectedRevision",
            "work.start: a future expectedRevision",
            "work.start: a future Ownership Epoch is fenced",
            "work.start: a Session Epoch never issued is fenced",
            "work.start: the replacement Session starts the re-leased WorkItem",
            "work.start: a runtime of a replaced Session is fenced",
            "work.start: a fifth active WorkItem of the Worker is rate limited",
        ],
        (Category::WorkItemTransition, 8) => {
            vec![
                "work.checkpoint: a queued WorkItem is not executing",
                "work.checkpoint: the current epoch citing another lease",
            ]
        }
        (Category::WorkItemTransition, 10) => {
            vec!["work.unblock: blocked past its blocked lease → open"]
        }
        (Category::WorkItemTransition, 11) => vec![
            "work.submit: after the Execution Lease lapsed",
            "work.submit: Evidence about another WorkItem",
        ],
        (Category::WorkItemTransition, 12) => {
            vec![
                "work.accept_result: a stale Coordinator Epoch is fenced",
                "work.accept_result: a future Coordinator Epoch is fenced",
            ]
        }
        (Category::WorkItemTransition, 13) => vec![
            "work.fail: active → failed, reported by the Worker",
            "work.fail: submitted → failed",
            "work.fail: no failure Evidence",
        ],
        (Category::WorkItemTransition, 14) => {
            vec!["work.cancel: submitted → cancelled by Organization policy"]
        }
        (Category::WorkItemTransition, 15) => vec![
            "mission.create_child: queued → blocked, the Worker's ownership fenced",
            "mission.create_child: a budget beyond the WorkItem's",
            "mission.create_child: capabilities beyond the WorkItem's",
            "mission.create_child: a second child while the first runs",
        ],
        (Category::WorkItemTransition, 17) => {
            vec!["Child Mission failure blocks the parent WorkItem by default: blocked → blocked"]
        }
        (Category::WorkItemTransition, 18) => vec![
            "Mission termination propagates: active → failed",
            "Mission termination by Organization policy propagates: submitted → failed",
        ],
        _ => Vec::new(),
    }
}

fn transition_rows(category: Category, table: &str, rows: Vec<TransitionRow>) -> Vec<Row> {
    rows.into_iter()
        .map(|(number, from, trigger, to, evidence)| Row {
            variants: if matches!(evidence, Evidence::Scenarios { .. }) {
                variants(category, number)
            } else {
                Vec::new()
            },
            id: format!(
                "{table} row {number}: {} --{}--> {}",
                from.join("|"),
                trigger_name(&trigger, category, number),
                to.join("|")
            ),
            category,
            subject: Subject::Transition { from, trigger, to },
            evidence,
        })
        .collect()
}

fn kind_evidence(kind: &str, table: &[(&'static str, &'static str, &'static str)]) -> Evidence {
    if let Some((_, positive, negative)) = table.iter().find(|(k, _, _)| *k == kind) {
        return covered(positive, negative);
    }
    let reason = NOT_COVERED
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or("no scenario", |(_, r)| r);
    Evidence::NotCovered(reason)
}

impl Matrix {
    /// The full matrix: kinds from the embedded pinned schemas, the §7.1 and §10.2 rows, and
    /// every scenario of [`crate::scenarios`].
    pub fn standard() -> Result<Self, String> {
        let kinds = KindCatalogue::embedded()?;
        let mut rows = Vec::new();
        for kind in &kinds.commands {
            rows.push(Row {
                id: format!("command {kind}"),
                category: Category::Command,
                subject: Subject::Command(kind.clone()),
                evidence: kind_evidence(kind, COMMANDS),
                variants: COMMAND_VARIANTS
                    .iter()
                    .find(|(k, _)| k == kind)
                    .map_or_else(Vec::new, |(_, v)| v.to_vec()),
            });
        }
        for kind in &kinds.events {
            rows.push(Row {
                id: format!("event {kind}"),
                category: Category::Event,
                subject: Subject::Event(kind.clone()),
                evidence: kind_evidence(kind, EVENTS),
                variants: Vec::new(),
            });
        }
        rows.extend(transition_rows(
            Category::MissionTransition,
            "mission §7.1",
            mission_rows(),
        ));
        rows.extend(transition_rows(
            Category::WorkItemTransition,
            "work item §10.2",
            work_rows(),
        ));
        // A kind with scenarios that the schemas do not name is a matrix error, not evidence.
        for (kind, _, _) in COMMANDS {
            if !kinds.commands.iter().any(|k| k == kind) {
                return Err(format!("scenarios for {kind}, which no schema names"));
            }
        }
        for (kind, _, _) in EVENTS {
            if !kinds.events.iter().any(|k| k == kind) {
                return Err(format!("scenarios for {kind}, which no schema names"));
            }
        }
        Ok(Self {
            rows,
            rules: crate::rules::RULES.to_vec(),
            scenarios: scenarios::all(),
        })
    }
}
