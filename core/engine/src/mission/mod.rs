//! The Mission aggregate and the pure decisions of the Mission lifecycle (§7.1, §7.2, §7.3;
//! `spec-digest.md` 2.1 and 2.4).
//!
//! | Command | row (from → to) | Event | authority |
//! | --- | --- | --- | --- |
//! | `mission.create` | none → `active` | `mission.created` | human MissionOwner |
//! | `mission.create_follow_up` | none → `active`, linked to an approved Mission | `mission.follow_up.created` | the same human MissionOwner |
//! | `mission.submit_for_approval` | `active` → `awaiting_approval` | `mission.submitted_for_approval` | current Coordinator |
//! | `mission.request_changes` | `awaiting_approval` → `active` | `mission.changes_requested` | MissionOwner |
//! | `mission.approve` | `awaiting_approval` → `approved` | `mission.approved` | MissionOwner |
//! | `mission.cancel` | non-terminal → `cancelled` | `mission.cancelled` | MissionOwner or Organization policy |
//! | `mission.terminate` | non-terminal → `failed` | `mission.terminated` | Coordinator or Organization policy |
//! | `mission.assign_coordinator` | non-terminal, state unchanged; epoch + 1 | `mission.coordinator.assigned` | MissionOwner or control plane |
//! | `mission.renew_coordinator` | non-terminal, state unchanged | `mission.coordinator.renewed` | current Coordinator |
//!
//! | `mission.create_child` | none → `active`, linked to a parent WorkItem (→ `blocked`) | `mission.child.created` (parent Group) + `mission.created` (child Group) | Parent Coordinator as child MissionOwner |
//!
//! Child Missions (§14): [`child`] decides creation, [`cascade`] what a child's approval,
//! failure or cancellation and a parent's closure do to the rest of the tree, in one commit.
//!
//! Every decision is a pure function of what [`read`] returned, the verified Command and
//! `now`; the engine ([`crate::engine`]) does the reading, signing and committing.

pub(crate) mod aggregate;
mod approval;
mod cascade;
mod child;
mod closure;
mod coordinator;
mod create;
pub(crate) mod link;
mod projection;
pub(crate) mod read;
pub(crate) mod rules;
mod state;

pub use aggregate::{Coordinator, CoordinatorLease, GROUP_KIND, MISSION_KIND, Mission, Submission};
pub use cascade::Family;
pub use child::{ChildRead, DEFAULT_MAX_DEPTH};
pub use link::{CHILDREN_KIND, ChildLink, FailurePolicy, ITEM_CHILD_KIND, LINK_KIND};
pub use projection::rebuild;
pub use read::{GroupRead, MissionRead, full_document, read};
pub use state::MissionState;

use crate::decision::Decision;
use crate::error::EngineError;
use crate::ingress::VerifiedCommand;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The Command kinds this module decides.
pub const KINDS: [&str; 10] = [
    "mission.create",
    "mission.create_follow_up",
    "mission.create_child",
    "mission.assign_coordinator",
    "mission.renew_coordinator",
    "mission.submit_for_approval",
    "mission.approve",
    "mission.request_changes",
    "mission.cancel",
    "mission.terminate",
];

/// Whether [`decide`] handles `kind`.
pub fn handles(kind: &str) -> bool {
    KINDS.contains(&kind)
}

/// The decision for a `mission.*` Command: pure, deterministic in its inputs.
pub fn decide(
    read: &MissionRead,
    command: &VerifiedCommand,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    match command.kind() {
        "mission.create" => create::decide(read, command, now, false),
        "mission.create_follow_up" => create::decide(read, command, now, true),
        "mission.create_child" => child::decide(read, command, now),
        "mission.assign_coordinator" => coordinator::assign(read, command, now),
        "mission.renew_coordinator" => coordinator::renew(read, command, now),
        "mission.submit_for_approval" => approval::submit(read, command, now),
        "mission.approve" => approval::approve(read, command, now),
        "mission.request_changes" => approval::request_changes(read, command, now),
        "mission.cancel" => closure::cancel(read, command, now),
        "mission.terminate" => closure::terminate(read, command, now),
        other => Err(EngineError::invalid(
            "unsupported_kind",
            format!("{other} is not a Mission Command"),
        )),
    }
}
