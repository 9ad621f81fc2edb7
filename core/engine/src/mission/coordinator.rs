//! The Coordinator lease rows (§7.2, digest 2.4): `mission.assign_coordinator` fences the old
//! epoch with a higher one; `mission.renew_coordinator` extends the current lease. Neither
//! changes the Mission `state`; both write a new Mission revision.
//!
//! Payloads (docs/engine.md): assign `{agentId, agentCardVersion, leaseId, leaseSeconds?}`;
//! renew `{leaseSeconds?}`.

use missionweaveprotocol::PrincipalType;
use missionweaveprotocol::json::Value;

use super::aggregate::{Coordinator, CoordinatorLease};
use super::read::MissionRead;
use super::rules::{
    event_payload, existing, expected_revision, lease_seconds, require_coordinator, require_owner,
    require_state, rewrite,
};
use crate::input::{num, rfc3339};
use crate::input::{text, u64_member};

use crate::decision::Decision;
use crate::error::EngineError;
use crate::ingress::VerifiedCommand;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// `mission.assign_coordinator` → `mission.coordinator.assigned`. Authority: the MissionOwner
/// or the Organization control plane (a service actor; which services may is the
/// authorizer's policy, §6.4). The new epoch is the current one plus one, so every Command of
/// the replaced Coordinator is fenced from now on (`AUTH_STALE_COORDINATOR`).
pub(crate) fn assign(
    read: &MissionRead,
    command: &VerifiedCommand,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let (group_revision, mut mission) = existing(read)?;
    expected_revision(command, &mission)?;
    if command.actor().kind != PrincipalType::Service {
        require_owner(command, &mission)?;
    }
    // An approved, cancelled or failed Mission is never rewritten (§7.1).
    require_state(command, &mission, |s| !s.is_terminal())?;
    let p = command.payload();
    let lease_id = text(p, "leaseId")?;
    if lease_id == mission.coordinator().lease_id {
        return Err(EngineError::invalid(
            "lease_id_reused",
            format!(
                "lease {lease_id} is the current Coordinator lease; a new lease needs a new ID"
            ),
        ));
    }
    let seconds = lease_seconds(p, "leaseSeconds")?;
    let read_revision = mission.revision();
    let previous_epoch = mission.coordinator().coordinator_epoch;
    let coordinator = Coordinator {
        agent_id: text(p, "agentId")?.to_owned(),
        agent_card_version: positive(u64_member(p, "agentCardVersion")?, "agentCardVersion")?,
        coordinator_epoch: previous_epoch + 1,
        lease_id: lease_id.to_owned(),
    };
    mission.set_coordinator(coordinator.clone());
    mission.lease = CoordinatorLease {
        issued_at: now,
        expires_at: now.saturating_add_ms(seconds * 1000),
        renewal_count: 0,
    };
    mission.bump();
    let mut payload = event_payload(&mission);
    payload.insert("coordinator", coordinator.value());
    payload.insert("previousCoordinatorEpoch", num(previous_epoch));
    payload.insert(
        "leaseExpiresAt",
        Value::string(rfc3339(mission.lease.expires_at)),
    );
    rewrite(
        command,
        group_revision,
        read_revision,
        &mission,
        "mission.coordinator.assigned",
        payload,
    )
}

/// `mission.renew_coordinator` → `mission.coordinator.renewed`. Authority: the current
/// Coordinator with its current epoch and an unexpired lease.
pub(crate) fn renew(
    read: &MissionRead,
    command: &VerifiedCommand,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let (group_revision, mut mission) = existing(read)?;
    require_coordinator(command, &mission, now)?;
    expected_revision(command, &mission)?;
    require_state(command, &mission, |s| !s.is_terminal())?;
    let seconds = lease_seconds(command.payload(), "leaseSeconds")?;
    let read_revision = mission.revision();
    mission.lease.expires_at = now.saturating_add_ms(seconds * 1000);
    mission.lease.renewal_count += 1;
    mission.bump();
    let mut payload = event_payload(&mission);
    payload.insert(
        "coordinatorEpoch",
        num(mission.coordinator().coordinator_epoch),
    );
    payload.insert("leaseId", Value::string(&mission.coordinator().lease_id));
    payload.insert("renewalCount", num(mission.lease.renewal_count));
    payload.insert("lastRenewedAt", Value::string(rfc3339(now)));
    payload.insert(
        "leaseExpiresAt",
        Value::string(rfc3339(mission.lease.expires_at)),
    );
    rewrite(
        command,
        group_revision,
        read_revision,
        &mission,
        "mission.coordinator.renewed",
        payload,
    )
}

fn positive(value: u64, name: &str) -> Result<u64, EngineError> {
    if value >= 1 {
        Ok(value)
    } else {
        Err(EngineError::invalid(
            "invalid_member",
            format!("payload member {name:?} must be a positive integer"),
        ))
    }
}
