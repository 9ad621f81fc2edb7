//! The rules of §6.3, §7, §10, §12 and §15, each with its own negative evidence: scenarios
//! that must pass, refused with the code named here, for the rule to count. A row (`matrix.rs`)
//! proves a Command kind, Event kind or transition has a positive and a negative case; a rule
//! proves that *this* check refuses. So two checks that overlap (the lease and the Session, the
//! lease and the Ownership Epoch) each have a case only the lease check can refuse, and every
//! fence (Session, Membership, Coordinator and Ownership Epochs, `expectedRevision`) has an older
//! and a newer stale value.

use missionweaveprotocol::WireCode;

/// One rule and its negative evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// `§N what is refused`.
    pub id: &'static str,
    /// The scenarios and the code each must be refused with.
    pub negatives: &'static [(&'static str, WireCode)],
}

/// Every rule with its negative evidence.
pub const RULES: &[Rule] = &[
    Rule {
        id: "§6.3 an Agent Command without an opened Session is not authenticated",
        negatives: &[(
            "work.accept_offer: an Agent that never opened a Session",
            WireCode::AuthRequired,
        )],
    },
    Rule {
        id: "§6.3 an older Session Epoch is fenced",
        negatives: &[(
            "work.start: a runtime of a replaced Session is fenced",
            WireCode::AuthStaleSession,
        )],
    },
    Rule {
        id: "§6.3 a newer Session Epoch (never issued) is fenced",
        negatives: &[(
            "work.start: a Session Epoch never issued is fenced",
            WireCode::AuthStaleSession,
        )],
    },
    Rule {
        id: "§6.3 only the identity service opens a Session",
        negatives: &[(
            "identity.session_open: sent by the policy service, not the identity service",
            WireCode::AuthForbidden,
        )],
    },
    Rule {
        id: "§6.3 a Session opening binds the Session's revision",
        negatives: &[(
            "identity.session_open: a stale expectedRevision",
            WireCode::RevisionConflict,
        )],
    },
    Rule {
        id: "§7.1 a Mission ID is never reused",
        negatives: &[(
            "mission.create: an existing Mission ID is refused",
            WireCode::InvalidStateTransition,
        )],
    },
    Rule {
        id: "§7.1 a follow-up follows an approved Mission",
        negatives: &[(
            "mission.create_follow_up: the followed Mission is not approved",
            WireCode::InvalidStateTransition,
        )],
    },
    Rule {
        id: "§7.1 submission only from active",
        negatives: &[(
            "mission.submit_for_approval: already awaiting approval",
            WireCode::InvalidStateTransition,
        )],
    },
    Rule {
        id: "§7.1 changes are requested only of a submission",
        negatives: &[(
            "mission.request_changes: an active Mission has nothing to review",
            WireCode::InvalidStateTransition,
        )],
    },
    Rule {
        id: "§7.1 an approval binds the submitted revision",
        negatives: &[(
            "mission.approve: another revision than the submitted one",
            WireCode::RevisionConflict,
        )],
    },
    Rule {
        id: "§7.1 only the MissionOwner or Organization policy cancels",
        negatives: &[(
            "mission.cancel: the Coordinator must not cancel",
            WireCode::AuthForbidden,
        )],
    },
    Rule {
        id: "§7.1 a terminal Mission is never reopened",
        negatives: &[
            (
                "mission.cancel: an approved Mission is not reopened",
                WireCode::InvalidStateTransition,
            ),
            (
                "mission.terminate: an approved Mission stays approved",
                WireCode::InvalidStateTransition,
            ),
        ],
    },
    Rule {
        id: "§7.2 an older Coordinator Epoch is fenced",
        negatives: &[
            (
                "mission.renew_coordinator: a stale Coordinator Epoch is fenced",
                WireCode::AuthStaleCoordinator,
            ),
            (
                "mission.terminate: a stale Coordinator Epoch is fenced",
                WireCode::AuthStaleCoordinator,
            ),
            (
                "mission.create_child: a stale Coordinator Epoch is fenced",
                WireCode::AuthStaleCoordinator,
            ),
            (
                "work.offer: a stale Coordinator Epoch is fenced",
                WireCode::AuthStaleCoordinator,
            ),
            (
                "work.accept_result: a stale Coordinator Epoch is fenced",
                WireCode::AuthStaleCoordinator,
            ),
        ],
    },
    Rule {
        id: "§7.2 a newer Coordinator Epoch is fenced",
        negatives: &[
            (
                "mission.renew_coordinator: a future Coordinator Epoch is fenced",
                WireCode::AuthStaleCoordinator,
            ),
            (
                "mission.terminate: a future Coordinator Epoch is fenced",
                WireCode::AuthStaleCoordinator,
            ),
            (
                "mission.create_child: a future Coordinator Epoch is fenced",
                WireCode::AuthStaleCoordinator,
            ),
            (
                "work.offer: a future Coordinator Epoch is fenced",
                WireCode::AuthStaleCoordinator,
            ),
            (
                "work.accept_result: a future Coordinator Epoch is fenced",
                WireCode::AuthStaleCoordinator,
            ),
        ],
    },
    Rule {
        id: "§7.2 only the MissionOwner or the control plane appoints a Coordinator",
        negatives: &[(
            "mission.assign_coordinator: another human is refused",
            WireCode::AuthForbidden,
        )],
    },
    Rule {
        id: "§7.2 Coordinator-only kinds need the current Coordinator",
        negatives: &[(
            "work.authorize: the MissionOwner is not the Coordinator",
            WireCode::AuthForbidden,
        )],
    },
    Rule {
        id: "§7.4 only a terminal Mission's Group is archived",
        negatives: &[(
            "group_archive: an active Mission's Group is not archived",
            WireCode::InvalidStateTransition,
        )],
    },
    Rule {
        id: "§7.4 an archived Group accepts nothing more",
        negatives: &[(
            "membership.change: an archived Group accepts no further Command",
            WireCode::InvalidStateTransition,
        )],
    },
    Rule {
        id: "§7.4 a snapshot covers the Group's whole log",
        negatives: &[(
            "group_archive: a snapshot that misses the Group's last Event",
            WireCode::RevisionConflict,
        )],
    },
    Rule {
        id: "§10.1 a Work Contract must be complete",
        negatives: &[(
            "work.propose: an incomplete Work Contract (no goal)",
            WireCode::WorkContractIncomplete,
        )],
    },
    Rule {
        id: "§10.2 a WorkItem is never re-created",
        negatives: &[(
            "work.authorize: an existing WorkItem is not re-created",
            WireCode::InvalidStateTransition,
        )],
    },
    Rule {
        id: "§10.2 a terminal Mission accepts no WorkItem Command",
        negatives: &[
            (
                "work.propose: the Mission is approved (terminal)",
                WireCode::InvalidStateTransition,
            ),
            (
                "work.authorize: the Mission is approved (terminal)",
                WireCode::InvalidStateTransition,
            ),
        ],
    },
    Rule {
        id: "§10.3 an owner with a live lease is not re-offered",
        negatives: &[(
            "work.offer: an owner with a live lease is not re-offered",
            WireCode::InvalidStateTransition,
        )],
    },
    Rule {
        id: "§10.3 only an offered Agent accepts",
        negatives: &[
            (
                "work.accept_offer: an Agent with no offer",
                WireCode::AuthForbidden,
            ),
            (
                "work.accept_offer: no offer was made",
                WireCode::InvalidStateTransition,
            ),
        ],
    },
    Rule {
        id: "§10.3 an expired offer cannot be accepted",
        negatives: &[(
            "offer expiry: acceptance at expiry is refused",
            WireCode::WorkOfferExpired,
        )],
    },
    Rule {
        id: "§10.3 exclusive ownership: the losing candidate is refused",
        negatives: &[(
            "work.accept_offer: the losing candidate",
            WireCode::WorkAlreadyOwned,
        )],
    },
    Rule {
        id: "§10.3 an older Ownership Epoch is fenced",
        negatives: &[
            (
                "work.start: a stale Ownership Epoch is fenced",
                WireCode::WorkStaleOwnership,
            ),
            (
                "work.checkpoint: an older Ownership Epoch is fenced",
                WireCode::WorkStaleOwnership,
            ),
            (
                "approval.grant_execution: a stale Ownership Epoch is fenced",
                WireCode::WorkStaleOwnership,
            ),
        ],
    },
    Rule {
        id: "§10.3 a newer Ownership Epoch is fenced",
        negatives: &[
            (
                "work.start: a future Ownership Epoch is fenced",
                WireCode::WorkStaleOwnership,
            ),
            (
                "approval.grant_execution: a future Ownership Epoch is fenced",
                WireCode::WorkStaleOwnership,
            ),
        ],
    },
    Rule {
        id: "§10.2 a lapsed Execution Lease refuses the owner (Session and Ownership Epoch current: only the lease check can)",
        negatives: &[
            (
                "work.block: a lapsed Execution Lease",
                WireCode::WorkLeaseExpired,
            ),
            (
                "Execution Lease renewal: a lapsed Execution Lease",
                WireCode::WorkLeaseExpired,
            ),
            (
                "work.submit: after the Execution Lease lapsed",
                WireCode::WorkLeaseExpired,
            ),
        ],
    },
    Rule {
        id: "§10.2 a Command citing another lease than the one it needs is refused (Ownership Epoch current: only the lease check can)",
        negatives: &[(
            "work.checkpoint: the current epoch citing another lease",
            WireCode::WorkLeaseExpired,
        )],
    },
    Rule {
        id: "§10.2 checkpoint only while executing",
        negatives: &[(
            "work.checkpoint: a queued WorkItem is not executing",
            WireCode::InvalidStateTransition,
        )],
    },
    Rule {
        id: "§10.2 unblock only a blocked WorkItem",
        negatives: &[(
            "work.unblock: an active WorkItem is not blocked",
            WireCode::InvalidStateTransition,
        )],
    },
    Rule {
        id: "§10.2 a submission needs Evidence about the WorkItem",
        negatives: &[
            (
                "work.submit: a submission without Evidence",
                WireCode::InvalidCommand,
            ),
            (
                "work.submit: Evidence about another WorkItem",
                WireCode::InvalidCommand,
            ),
        ],
    },
    Rule {
        id: "§10.2 a submission cites published Artifacts",
        negatives: &[(
            "work.submit: an Artifact not published for the WorkItem",
            WireCode::InvalidCommand,
        )],
    },
    Rule {
        id: "§10.2 a result is accepted only when submitted",
        negatives: &[(
            "work.accept_result: an active WorkItem has no result",
            WireCode::InvalidStateTransition,
        )],
    },
    Rule {
        id: "§10.2 a failure needs failure Evidence",
        negatives: &[("work.fail: no failure Evidence", WireCode::InvalidCommand)],
    },
    Rule {
        id: "§10.2 a verified WorkItem stays verified",
        negatives: &[
            (
                "work.fail: a verified WorkItem stays verified",
                WireCode::InvalidStateTransition,
            ),
            (
                "work.cancel: a verified WorkItem stays verified",
                WireCode::InvalidStateTransition,
            ),
        ],
    },
    Rule {
        id: "§10.2 only the Coordinator, the MissionOwner or policy cancels a WorkItem",
        negatives: &[(
            "work.cancel: another human is not the MissionOwner",
            WireCode::AuthForbidden,
        )],
    },
    Rule {
        id: "§10.2 row 15 a submitted WorkItem is not promoted, nor one with a running child",
        negatives: &[
            (
                "mission.create_child: a submitted WorkItem cannot be promoted",
                WireCode::InvalidStateTransition,
            ),
            (
                "mission.create_child: a second child while the first runs",
                WireCode::InvalidStateTransition,
            ),
        ],
    },
    Rule {
        id: "§10.4 a dependency cycle is refused",
        negatives: &[(
            "dependency insertion: a cycle is refused",
            WireCode::InvalidCommand,
        )],
    },
    Rule {
        id: "§12 a WorkItem's hard budget is never exceeded",
        negatives: &[
            (
                "resource_usage_record: 11 tool calls overflow the WorkItem's 10",
                WireCode::BudgetExceeded,
            ),
            (
                "resource_usage_record: an overflow after 8 tool calls charges nothing",
                WireCode::BudgetExceeded,
            ),
        ],
    },
    Rule {
        id: "§12 an ancestor's hard budget is never exceeded either, and nothing is charged",
        negatives: &[(
            "resource_usage_record: a child WorkItem's usage overflowing its parent WorkItem",
            WireCode::BudgetExceeded,
        )],
    },
    Rule {
        id: "§12 a child allocation fits its parent's budget",
        negatives: &[(
            "mission.create_child: a budget beyond the WorkItem's",
            WireCode::BudgetExceeded,
        )],
    },
    Rule {
        id: "§12 a high-risk start needs a current, covering Execution Approval",
        negatives: &[
            (
                "work.start: a gated WorkItem without an Execution Approval",
                WireCode::ApprovalRequired,
            ),
            (
                "work.start: the Execution Approval has expired",
                WireCode::ApprovalRequired,
            ),
            (
                "work.start: the approval does not cover the high-risk operation",
                WireCode::ApprovalRequired,
            ),
        ],
    },
    Rule {
        id: "§12 an Execution Approval is the MissionOwner's, not another human's",
        negatives: &[(
            "approval.grant_execution: another human is not the MissionOwner",
            WireCode::AuthForbidden,
        )],
    },
    Rule {
        id: "§12 an Execution Approval is a human decision",
        negatives: &[(
            "approval.grant_execution: an Agent cannot sign a human decision",
            WireCode::AuthForbidden,
        )],
    },
    Rule {
        id: "§12 an Execution Approval stays within the Work Contract",
        negatives: &[(
            "approval.grant_execution: an operation outside the Work Contract",
            WireCode::InvalidCommand,
        )],
    },
    Rule {
        id: "§15.1 the same Action ID with other content collides",
        negatives: &[(
            "mission.renew_coordinator: a reused Action ID with other content",
            WireCode::ActionIdCollision,
        )],
    },
    Rule {
        id: "§15.1 a Command outside the freshness window is refused",
        negatives: &[(
            "mission.renew_coordinator: issued before the freshness window",
            WireCode::AuthInvalidSignature,
        )],
    },
    Rule {
        id: "§15.1 an older Membership Epoch is fenced",
        negatives: &[(
            "message.post: an older Membership Epoch is fenced",
            WireCode::MembershipStale,
        )],
    },
    Rule {
        id: "§15.1 a newer Membership Epoch is fenced",
        negatives: &[(
            "message.post: a newer Membership Epoch is fenced",
            WireCode::MembershipStale,
        )],
    },
    Rule {
        id: "§15.1 a payload member the kind does not define is refused",
        negatives: &[(
            "mission.cancel: a payload member no kind defines",
            WireCode::SchemaValidationFailed,
        )],
    },
    Rule {
        id: "§15.3 an older expectedRevision is refused",
        negatives: &[
            (
                "work.start: a stale expectedRevision",
                WireCode::RevisionConflict,
            ),
            (
                "mission.cancel: a stale expectedRevision",
                WireCode::RevisionConflict,
            ),
        ],
    },
    Rule {
        id: "§15.3 a newer expectedRevision is refused",
        negatives: &[
            (
                "work.start: a future expectedRevision",
                WireCode::RevisionConflict,
            ),
            (
                "mission.cancel: a future expectedRevision",
                WireCode::RevisionConflict,
            ),
        ],
    },
];
