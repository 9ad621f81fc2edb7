//! Rows `non-terminal --mission.cancel--> cancelled` and
//! `non-terminal --mission.terminate--> failed` (§7.1, digest 2.1).
//!
//! The closure propagates, in the same transaction, to the Mission's unfinished WorkItems
//! (§10.2 row 18, "parent Mission failure or cancellation … Terminal Mission state propagates
//! to unfinished WorkItems"): `cancelled` → each becomes `cancelled`, `failed` → `failed`; one
//! Event per WorkItem (`work.cancelled` / `work.failed` with `cause`), after the Mission's.
//! Finished WorkItems (`verified`, `cancelled`, `failed`) are left alone.
//!
//! Payload (docs/engine.md): `{reason}`.

use missionweaveprotocol::PrincipalType;
use missionweaveprotocol::json::Value;

use super::read::MissionRead;
use super::rules::{
    event_payload, existing, expected_revision, require_coordinator, require_owner, require_state,
    rewrite,
};
use crate::decision::Decision;
use crate::error::EngineError;
use crate::ingress::VerifiedCommand;
use crate::input::text;
use crate::mission::state::MissionState;
use crate::work::plan::put_item;
use crate::work::state::WorkItemState;
use crate::work::transitions::closing::{MissionEnd, propagate_mission_end};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// `mission.cancel` → `mission.cancelled`. Authority: the MissionOwner or Organization policy
/// (a service actor). The Coordinator MUST NOT normally cancel (§7.1): it is refused with
/// `AUTH_FORBIDDEN` and may recommend cancellation instead.
pub(crate) fn cancel(
    read: &MissionRead,
    command: &VerifiedCommand,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let (group_revision, mission) = existing(read)?;
    expected_revision(command, &mission)?;
    match command.actor().kind {
        PrincipalType::Service => {}
        PrincipalType::Agent if command.actor().id == mission.coordinator().agent_id => {
            return Err(EngineError::forbidden(
                "coordinator_must_not_cancel",
                "the Coordinator must not cancel the Mission; it may recommend cancellation",
            ));
        }
        _ => require_owner(command, &mission)?,
    }
    require_state(command, &mission, |s| !s.is_terminal())?;
    close(
        read,
        command,
        group_revision,
        mission,
        MissionState::Cancelled,
        "mission.cancelled",
        now,
    )
}

/// `mission.terminate` → `mission.terminated` (state `failed`). Authority: the current
/// Coordinator (Agent with the current Coordinator Epoch) or Organization policy (a service
/// actor, which carries no Coordinator Epoch, §15.1).
pub(crate) fn terminate(
    read: &MissionRead,
    command: &VerifiedCommand,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let (group_revision, mission) = existing(read)?;
    match command.actor().kind {
        PrincipalType::Service => {}
        PrincipalType::Agent => require_coordinator(command, &mission, now)?,
        PrincipalType::Human => {
            return Err(EngineError::forbidden(
                "terminate_needs_coordinator_or_policy",
                "mission.terminate is issued by the Coordinator or Organization policy",
            ));
        }
    }
    expected_revision(command, &mission)?;
    require_state(command, &mission, |s| !s.is_terminal())?;
    close(
        read,
        command,
        group_revision,
        mission,
        MissionState::Failed,
        "mission.terminated",
        now,
    )
}

fn close(
    read: &MissionRead,
    command: &VerifiedCommand,
    group_revision: u64,
    mut mission: super::Mission,
    to: MissionState,
    event_kind: &str,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let reason = text(command.payload(), "reason")?;
    let previous = mission.state();
    let read_revision = mission.revision();
    mission.transition(to);
    let mut payload = event_payload(&mission);
    payload.insert("previousState", Value::string(previous.as_str()));
    payload.insert("reason", Value::string(reason));
    let mut decision = rewrite(
        command,
        group_revision,
        read_revision,
        &mission,
        event_kind,
        payload,
    )?;
    // The WorkItem propagation hook (§10.2 row 18).
    let end = match to {
        MissionState::Failed => MissionEnd::Failed,
        _ => MissionEnd::Cancelled,
    };
    for (item_revision, item) in &read.work_items {
        if !UNFINISHED.contains(&item.state) {
            continue;
        }
        let transition = propagate_mission_end(item, end, reason, now)?;
        decision = put_item(
            decision,
            command,
            &transition.state,
            *item_revision,
            transition.events,
        )?;
    }
    // §7.1, §14: descendants deepest first, and the link to the parent WorkItem.
    if let Some(family) = &read.family {
        decision =
            super::cascade::after_close(family, command, decision, &mission, to, reason, now)?;
    }
    Ok(decision)
}

/// The states row 18 leaves from (§10.2): `failed` WorkItems stay failed (digest §8).
const UNFINISHED: [WorkItemState; 6] = [
    WorkItemState::Open,
    WorkItemState::Offered,
    WorkItemState::Queued,
    WorkItemState::Active,
    WorkItemState::Blocked,
    WorkItemState::Submitted,
];
