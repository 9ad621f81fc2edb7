//! Guards shared by the Mission rows: existence, optimistic concurrency (§15.3), the authority
//! column of the §7.1 table, Coordinator Epoch fencing and lease validity (§7.2).

use missionweaveprotocol::PrincipalType;
use missionweaveprotocol::json::{Object, Value};

use crate::input::rfc3339;

use super::aggregate::{GROUP_KIND, MISSION_KIND, Mission};
use super::read::MissionRead;
use crate::decision::Decision;
use crate::error::EngineError;
use crate::events::EventDraft;
use crate::ingress::VerifiedCommand;
use crate::mission::state::MissionState;
use crate::store::AggregateKey;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The default and largest Coordinator lease duration a Command may ask for, in seconds (the
/// reference's default is 300; a day bounds a lease that is never renewed).
pub(crate) const DEFAULT_LEASE_SECONDS: u64 = 300;
pub(crate) const MAX_LEASE_SECONDS: u64 = 86_400;

/// The Group and its Mission, or `GROUP_NOT_FOUND` (§17.2).
pub(crate) fn existing(read: &MissionRead) -> Result<(u64, Mission), EngineError> {
    let not_found = || EngineError::GroupNotFound {
        group: read.group_id.clone(),
    };
    let group = read.group.as_ref().ok_or_else(not_found)?;
    let mission = read.mission.clone().ok_or_else(not_found)?;
    Ok((group.revision, mission))
}

/// §15.3: an `expectedRevision` that differs from the Mission's revision is refused.
pub(crate) fn expected_revision(
    command: &VerifiedCommand,
    mission: &Mission,
) -> Result<(), EngineError> {
    match command.expected_revision() {
        Some(expected) if expected != mission.revision() => Err(EngineError::RevisionConflict {
            key: AggregateKey::new(MISSION_KIND, mission.mission_id()),
            expected,
            current: mission.revision(),
        }),
        _ => Ok(()),
    }
}

/// The transition's `from` column: `allowed` must hold for the current state.
pub(crate) fn require_state(
    command: &VerifiedCommand,
    mission: &Mission,
    allowed: fn(MissionState) -> bool,
) -> Result<(), EngineError> {
    if allowed(mission.state()) {
        Ok(())
    } else {
        Err(EngineError::InvalidStateTransition {
            aggregate: MISSION_KIND,
            id: mission.mission_id().to_owned(),
            state: mission.state().as_str().to_owned(),
            command: command.kind().to_owned(),
        })
    }
}

/// The MissionOwner (§7.1 authority column).
pub(crate) fn require_owner(
    command: &VerifiedCommand,
    mission: &Mission,
) -> Result<(), EngineError> {
    if command.actor() == mission.owner() {
        Ok(())
    } else {
        Err(EngineError::forbidden(
            "not_mission_owner",
            format!(
                "{} {} is not the MissionOwner of {}",
                command.actor().kind.as_str(),
                command.actor().id,
                mission.mission_id()
            ),
        ))
    }
}

/// The current Coordinator (§7.2): the Command's Coordinator Epoch must be the current one
/// (`AUTH_STALE_COORDINATOR` otherwise, even from the same Agent), the actor must be the Agent
/// holding it, and its lease must not have expired at `now` (`WORK_LEASE_EXPIRED`).
pub(crate) fn require_coordinator(
    command: &VerifiedCommand,
    mission: &Mission,
    now: UnixMillis,
) -> Result<(), EngineError> {
    let current = mission.coordinator().coordinator_epoch;
    if command.coordinator_epoch() != Some(current) {
        return Err(EngineError::StaleCoordinator {
            presented: command.coordinator_epoch(),
            current,
        });
    }
    let actor = command.actor();
    if actor.kind != PrincipalType::Agent || actor.id != mission.coordinator().agent_id {
        return Err(EngineError::forbidden(
            "not_current_coordinator",
            format!(
                "{} {} does not hold Coordinator Epoch {current}",
                actor.kind.as_str(),
                actor.id
            ),
        ));
    }
    if now.0 >= mission.lease.expires_at.0 {
        return Err(EngineError::LeaseExpired {
            lease_id: mission.coordinator().lease_id.clone(),
            expired_at: rfc3339(mission.lease.expires_at),
        });
    }
    Ok(())
}

/// A lease duration member in seconds: default [`DEFAULT_LEASE_SECONDS`], 1 to
/// [`MAX_LEASE_SECONDS`].
pub(crate) fn lease_seconds(payload: &Value, name: &str) -> Result<u64, EngineError> {
    let seconds = crate::input::opt_u64(payload, name)?.unwrap_or(DEFAULT_LEASE_SECONDS);
    if (1..=MAX_LEASE_SECONDS).contains(&seconds) {
        Ok(seconds)
    } else {
        Err(EngineError::invalid(
            "lease_duration_out_of_range",
            format!("{name} must lie between 1 and {MAX_LEASE_SECONDS} seconds"),
        ))
    }
}

/// An Event payload starting with `missionId` and the Mission's `state` after the transition.
pub(crate) fn event_payload(mission: &Mission) -> Object {
    let mut o = Object::new();
    o.insert("missionId", Value::string(mission.mission_id()));
    o.insert("state", Value::string(mission.state().as_str()));
    o
}

/// The decision of a row that rewrites an existing Mission: the Mission's next revision, a
/// check that the Group did not change, and one Event in the Group at the new revision.
pub(crate) fn rewrite(
    command: &VerifiedCommand,
    group_revision: u64,
    read_revision: u64,
    mission: &Mission,
    event_kind: &str,
    payload: Object,
) -> Result<Decision, EngineError> {
    let draft = EventDraft::for_command(command, event_kind, payload);
    Ok(Decision::default()
        .put(
            AggregateKey::new(MISSION_KIND, mission.mission_id()),
            read_revision,
            mission.to_blob()?,
        )
        .check(
            AggregateKey::new(GROUP_KIND, mission.group_id()),
            group_revision,
        )
        .event(draft, mission.group_id(), mission.revision()))
}
