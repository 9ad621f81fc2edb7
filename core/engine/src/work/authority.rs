//! Who may send which WorkItem Command (§9.1, §10.2 notes, §15.1) — the checks the `work`
//! module leaves to the engine because they need the Mission.
//!
//! - Coordinator kinds (`work.authorize`, `work.offer`, `work.unblock`, `work.accept_result`,
//!   `ext.missionweaveprotocol.core.work_dependency_add`): the Agent holding the current Coordinator Epoch with a live
//!   lease (`AUTH_STALE_COORDINATOR`, `AUTH_FORBIDDEN`, `WORK_LEASE_EXPIRED`). A `work.authorize`
//!   or `work.offer` citing `delegationGrantId` is instead authorized by that Grant (§9.1): only
//!   an Agent passes here, the Grant itself is checked by `delegation/`.
//! - Worker kinds (`work.accept_offer`, `work.start`, `work.checkpoint`, `work.block`,
//!   `work.submit`, `ext.missionweaveprotocol.core.work_execution_lease_renew`): an Agent (`AUTH_FORBIDDEN` otherwise); that it is the
//!   offered candidate or the owner is the `work` module's check (`AUTH_FORBIDDEN`,
//!   `WORK_STALE_OWNERSHIP`, …).
//! - `work.cancel`: the Coordinator, the MissionOwner or Organization policy (a service).
//! - `work.fail`: the Coordinator (carrying its epoch) or the owning Worker (with its claim).
//! - `work.propose`: any Group member (§10.2 row 1); Membership is not modelled yet.

use missionweaveprotocol::PrincipalType;

use crate::error::EngineError;
use crate::ingress::VerifiedCommand;
use crate::mission::aggregate::Mission;
use crate::mission::rules::require_coordinator;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// Who authorizes a WorkItem Command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// Anyone (a Group member).
    Member,
    /// The current Coordinator.
    Coordinator,
    /// An Agent acting as candidate or owner.
    Worker,
    /// Coordinator, MissionOwner or service.
    Canceller,
    /// Coordinator (with epoch) or Worker (without).
    Failer,
}

/// The role `kind` needs.
pub(crate) fn role(kind: &str) -> Role {
    match kind {
        "work.propose" => Role::Member,
        "work.authorize"
        | "work.offer"
        | "work.unblock"
        | "work.accept_result"
        | "ext.missionweaveprotocol.core.work_dependency_add" => Role::Coordinator,
        "work.cancel" => Role::Canceller,
        "work.fail" => Role::Failer,
        _ => Role::Worker,
    }
}

/// Refuses the Command unless its actor holds `role` on `mission`. Returns whether the actor
/// acts as the Coordinator (for `work.fail`: no Worker claim then).
pub(crate) fn authorize(
    command: &VerifiedCommand,
    mission: &Mission,
    now: UnixMillis,
) -> Result<bool, EngineError> {
    match role(command.kind()) {
        Role::Member => Ok(false),
        Role::Coordinator if cites_grant(command) => require_agent(command).map(|()| false),
        Role::Coordinator => coordinator(command, mission, now),
        Role::Worker => require_agent(command).map(|()| false),
        Role::Canceller => match command.actor().kind {
            PrincipalType::Service => Ok(false),
            _ if command.actor() == mission.owner() => Ok(false),
            PrincipalType::Human => Err(EngineError::forbidden(
                "not_mission_owner",
                "work.cancel is sent by the Coordinator, the MissionOwner or Organization policy",
            )),
            PrincipalType::Agent => coordinator(command, mission, now),
        },
        Role::Failer => {
            if command.coordinator_epoch().is_some() {
                coordinator(command, mission, now)
            } else {
                require_agent(command).map(|()| false)
            }
        }
    }
}

/// §9.1: a delegated `work.authorize` / `work.offer` cites a persisted Grant ID.
fn cites_grant(command: &VerifiedCommand) -> bool {
    matches!(command.kind(), "work.authorize" | "work.offer")
        && command.payload().get("delegationGrantId").is_some()
}

/// Only an Agent can hold the Coordinator lease (§7.2): other actors are `AUTH_FORBIDDEN`
/// before any epoch comparison; an Agent is then fenced by its Coordinator Epoch.
fn coordinator(
    command: &VerifiedCommand,
    mission: &Mission,
    now: UnixMillis,
) -> Result<bool, EngineError> {
    if command.actor().kind != PrincipalType::Agent {
        return Err(EngineError::forbidden(
            "not_current_coordinator",
            format!("{} is sent by the current Coordinator", command.kind()),
        ));
    }
    require_coordinator(command, mission, now).map(|()| true)
}

fn require_agent(command: &VerifiedCommand) -> Result<(), EngineError> {
    if command.actor().kind == PrincipalType::Agent {
        Ok(())
    } else {
        Err(EngineError::forbidden(
            "not_an_agent",
            format!("{} is sent by the Worker Agent", command.kind()),
        ))
    }
}
