//! The pure decisions of `membership.change` and `membership.end` (digest 2.7, §8).
//!
//! | from | Command | to | Event |
//! | --- | --- | --- | --- |
//! | none | `membership.change` (`provisional: true`) | `provisional`, epoch 1 | `membership.changed` |
//! | none | `membership.change` | `active`, epoch 1 | `membership.changed` |
//! | `active` | `membership.change` (role, scopes, visibility) | `active`, epoch + 1 | `membership.changed` |
//! | `provisional`, `active` | `membership.end` | `ended`, epoch + 1 | `membership.ended` |
//!
//! Authority (digest A, "unspecified"; §8 "Coordinator grants scoped provisional Membership"):
//! the Mission's MissionOwner or its current Coordinator. `provisional → active` is the
//! Worker's offer acceptance (JIT step 3), not a `membership.change`; an `ended` Membership
//! refuses every further change (`INVALID_STATE_TRANSITION`).

use missionweaveprotocol::Principal;
use missionweaveprotocol::json::{Object, Value};

use super::aggregate::{
    FIRST_MEMBERSHIP_EPOCH, MEMBERSHIP_KIND, Membership, MembershipState, membership_id,
    membership_key, num,
};
use super::read::MembershipRead;
use crate::decision::Decision;
use crate::error::EngineError;
use crate::events::EventDraft;
use crate::ingress::VerifiedCommand;
use crate::input::rfc3339;
use crate::input::{member, opt_u64, text};
use crate::mission::aggregate::{GROUP_KIND, MISSION_KIND, Mission};
use crate::store::AggregateKey;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// Roles whose Membership must see the whole Group history (§8).
const COMPLETE_VISIBILITY: [&str; 2] = ["mission_owner", "coordinator"];

/// `membership.change`.
pub(crate) fn change(
    read: &MembershipRead,
    command: &VerifiedCommand,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let mission = authorize(read, command)?;
    expected_revision(read, command)?;
    let p = command.payload();
    let role = text(p, "role")?;
    let scopes = member(p, "scopes")?.clone();
    let visibility = opt_u64(p, "visibilityStartSequence")?.unwrap_or(0);
    if COMPLETE_VISIBILITY.contains(&role) && visibility != 0 {
        return Err(EngineError::invalid(
            "incomplete_visibility",
            format!("a {role} Membership must have complete Group visibility (§8)"),
        ));
    }
    let at = rfc3339(now);
    let doc = match &read.target {
        None => {
            let mut doc = Object::new();
            doc.insert(
                "membershipId",
                Value::string(membership_id(&read.group_id, &read.member)),
            );
            doc.insert("missionId", Value::string(mission.mission_id()));
            doc.insert("groupId", Value::string(&read.group_id));
            doc.insert("member", read.member.to_value());
            doc.insert("role", Value::string(role));
            let provisional = p.get("provisional").and_then(Value::as_bool) == Some(true);
            let state = if provisional {
                MembershipState::Provisional
            } else {
                MembershipState::Active
            };
            doc.insert("state", Value::string(state.as_str()));
            doc.insert("membershipEpoch", num(FIRST_MEMBERSHIP_EPOCH));
            doc.insert("scopes", scopes);
            doc.insert("visibilityStartSequence", num(visibility));
            if provisional {
                // Digest 2.7 row 1: a provisional Membership names its Context Package and expiry.
                doc.insert(
                    "contextPackageId",
                    Value::string(text(p, "contextPackageId")?),
                );
                doc.insert(
                    "provisionalExpiresAt",
                    Value::string(text(p, "provisionalExpiresAt")?),
                );
            } else {
                doc.insert("activatedAt", Value::string(&at));
            }
            doc.insert("grantedAt", Value::string(&at));
            doc
        }
        Some(current) => {
            require_state(command, current, MembershipState::Active)?;
            // Digest 2.7 row 4: a change fences every Command of the old epoch.
            let mut doc = current.document().clone();
            doc.insert("role", Value::string(role));
            doc.insert("scopes", scopes);
            doc.insert("visibilityStartSequence", num(visibility));
            doc.insert("membershipEpoch", num(current.epoch() + 1));
            doc
        }
    };
    write(read, command, mission, doc, "membership.changed")
}

/// `membership.end`.
pub(crate) fn end(
    read: &MembershipRead,
    command: &VerifiedCommand,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let mission = authorize(read, command)?;
    expected_revision(read, command)?;
    let current = read
        .target
        .as_ref()
        .ok_or_else(|| EngineError::MembershipRequired {
            group: read.group_id.clone(),
            member: read.member.clone(),
        })?;
    if current.state() == MembershipState::Ended {
        return Err(transition(command, current));
    }
    if current.member() == mission.owner() {
        // The root MissionOwner must keep inspecting the Mission (§7.4).
        return Err(EngineError::forbidden(
            "mission_owner_membership",
            "the MissionOwner's Membership cannot be ended",
        ));
    }
    let mut doc = current.document().clone();
    doc.insert("state", Value::string(MembershipState::Ended.as_str()));
    // Ending revokes the epoch (§8 "a revoked or stale epoch MUST be rejected").
    doc.insert("membershipEpoch", num(current.epoch() + 1));
    doc.insert("endedAt", Value::string(rfc3339(now)));
    write(read, command, mission, doc, "membership.ended")
}

fn write(
    read: &MembershipRead,
    command: &VerifiedCommand,
    mission: &Mission,
    doc: Object,
    kind: &str,
) -> Result<Decision, EngineError> {
    let read_revision = read.target.as_ref().map_or(0, Membership::revision);
    let next = Membership::from_document(doc, read_revision + 1)?;
    let mut payload = Object::new();
    payload.insert("missionId", Value::string(mission.mission_id()));
    payload.insert("membership", next.to_value());
    if let Some(previous) = &read.target {
        payload.insert("previousMembershipEpoch", num(previous.epoch()));
    }
    let group_revision = read.group_revision;
    Ok(Decision::default()
        .put(
            membership_key(&read.group_id, &read.member),
            read_revision,
            next.to_blob()?,
        )
        .check(
            AggregateKey::new(MISSION_KIND, mission.mission_id()),
            mission.revision(),
        )
        .check(
            AggregateKey::new(GROUP_KIND, &read.group_id),
            group_revision,
        )
        .event(
            EventDraft::for_command(command, kind, payload),
            &read.group_id,
            next.revision(),
        ))
}

/// The Group must exist; the actor must be its MissionOwner or current Coordinator (a
/// Coordinator Epoch, when carried, must be the current one: `AUTH_STALE_COORDINATOR`).
fn authorize<'a>(
    read: &'a MembershipRead,
    command: &VerifiedCommand,
) -> Result<&'a Mission, EngineError> {
    let mission = read
        .mission
        .as_ref()
        .ok_or_else(|| EngineError::GroupNotFound {
            group: read.group_id.clone(),
        })?;
    let actor = command.actor();
    if actor == mission.owner() {
        return Ok(mission);
    }
    let coordinator = mission.coordinator();
    if actor.id == coordinator.agent_id && actor.kind == missionweaveprotocol::PrincipalType::Agent
    {
        if let Some(presented) = command.coordinator_epoch()
            && presented != coordinator.coordinator_epoch
        {
            return Err(EngineError::StaleCoordinator {
                presented: Some(presented),
                current: coordinator.coordinator_epoch,
            });
        }
        return Ok(mission);
    }
    Err(EngineError::forbidden(
        "not_owner_or_coordinator",
        format!(
            "{} {} is neither the MissionOwner nor the current Coordinator of {}",
            actor.kind.as_str(),
            actor.id,
            mission.mission_id()
        ),
    ))
}

/// §15.3: `expectedRevision` names the target Membership's revision (0: absent).
fn expected_revision(read: &MembershipRead, command: &VerifiedCommand) -> Result<(), EngineError> {
    let current = read.target.as_ref().map_or(0, Membership::revision);
    match command.expected_revision() {
        Some(expected) if expected != current => Err(EngineError::RevisionConflict {
            key: membership_key(&read.group_id, &read.member),
            expected,
            current,
        }),
        _ => Ok(()),
    }
}

fn require_state(
    command: &VerifiedCommand,
    current: &Membership,
    allowed: MembershipState,
) -> Result<(), EngineError> {
    if current.state() == allowed {
        Ok(())
    } else {
        Err(transition(command, current))
    }
}

fn transition(command: &VerifiedCommand, current: &Membership) -> EngineError {
    EngineError::InvalidStateTransition {
        aggregate: MEMBERSHIP_KIND,
        id: current.membership_id().to_owned(),
        state: current.state().as_str().to_owned(),
        command: command.kind().to_owned(),
    }
}

/// The payload's `member` (an actor object), required.
pub(crate) fn payload_member(command: &VerifiedCommand) -> Result<Principal, EngineError> {
    let value = member(command.payload(), "member")?;
    Principal::from_value(value)
        .ok_or_else(|| EngineError::invalid("invalid_member", "member must be an actor {type, id}"))
}
