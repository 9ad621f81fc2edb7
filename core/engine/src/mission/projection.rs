//! Rebuilding a Mission from its Group's Events (§16 replay, §7.4 "reconnection MAY use a
//! snapshot followed by later Events"): a replica that holds only the signed log reaches the
//! same aggregate, byte for byte, as the authority that wrote it.
//!
//! Each Event is applied in log order; its `aggregateRevision` must be the revision the Mission
//! reaches, so a missing or reordered Event is detected rather than silently skipped.

use missionweaveprotocol::json::{Number, Value};
use missionweaveprotocol::schema_formats::Timestamp;

use super::aggregate::{
    Coordinator, CoordinatorLease, MISSION_KIND, Mission, Submission, split_definition,
};
use crate::error::EngineError;
use crate::mission::state::MissionState;
use crate::store::AggregateKey;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// Folds the Mission Events among `events` (Event documents of one Group, in sequence order)
/// into the Mission they describe; `None` if no Mission was created in them. Events of other
/// kinds (WorkItems, Messages, …) are skipped.
pub fn rebuild<'a>(
    events: impl IntoIterator<Item = &'a Value>,
) -> Result<Option<Mission>, EngineError> {
    let mut mission: Option<Mission> = None;
    for event in events {
        let kind = event
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !kind.starts_with("mission.") {
            continue;
        }
        let payload = event
            .get("payload")
            .ok_or_else(|| broken("an Event without payload"))?;
        let at = millis(event.get("occurredAt"))?;
        match (kind, mission.as_mut()) {
            ("mission.created" | "mission.follow_up.created", None) => {
                let mut document = payload
                    .get("mission")
                    .and_then(Value::as_object)
                    .cloned()
                    .ok_or_else(|| broken("a creation Event without its Mission"))?;
                // The aggregate the authority stores keeps the definition apart (see
                // `aggregate::DEFINITION_MEMBERS`); the rebuilt one does the same, so the two
                // compare byte for byte (queries join it back: `read::full_document`).
                split_definition(&mut document);
                let lease = CoordinatorLease {
                    issued_at: at,
                    expires_at: millis(payload.get("coordinatorLeaseExpiresAt"))?,
                    renewal_count: 0,
                };
                mission = Some(Mission::create(document, lease).map_err(|d| broken(&d))?);
            }
            ("mission.coordinator.assigned", Some(m)) => {
                let c = payload
                    .get("coordinator")
                    .ok_or_else(|| broken("no coordinator"))?;
                m.set_coordinator(Coordinator {
                    agent_id: text(c, "agentId")?,
                    agent_card_version: int(c.get("agentCardVersion"))?,
                    coordinator_epoch: int(c.get("coordinatorEpoch"))?,
                    lease_id: text(c, "leaseId")?,
                });
                m.lease = CoordinatorLease {
                    issued_at: at,
                    expires_at: millis(payload.get("leaseExpiresAt"))?,
                    renewal_count: 0,
                };
                m.bump();
            }
            ("mission.coordinator.renewed", Some(m)) => {
                m.lease.expires_at = millis(payload.get("leaseExpiresAt"))?;
                m.lease.renewal_count = int(payload.get("renewalCount"))?;
                m.bump();
            }
            ("mission.submitted_for_approval", Some(m)) => {
                m.transition(MissionState::AwaitingApproval);
                let hashes = payload
                    .get("artifactHashes")
                    .and_then(Value::as_array)
                    .ok_or_else(|| broken("a submission without artifactHashes"))?;
                m.submission = Some(Submission {
                    mission_revision: int(payload.get("missionRevision"))?,
                    artifact_hashes: hashes
                        .iter()
                        .filter_map(|h| h.as_str().map(str::to_owned))
                        .collect(),
                });
            }
            ("mission.changes_requested", Some(m)) => m.transition(MissionState::Active),
            ("mission.approved", Some(m)) => m.transition(MissionState::Approved),
            ("mission.cancelled", Some(m)) => m.transition(MissionState::Cancelled),
            ("mission.terminated", Some(m)) => m.transition(MissionState::Failed),
            (other, _) => return Err(broken(&format!("{other} does not fit the Mission so far"))),
        }
        let revision = int(event.get("aggregateRevision"))?;
        let reached = mission.as_ref().map_or(0, Mission::revision);
        if revision != reached {
            return Err(broken(&format!(
                "Event at aggregateRevision {revision} after Mission revision {reached}"
            )));
        }
    }
    Ok(mission)
}

fn broken(detail: &str) -> EngineError {
    EngineError::Corrupt {
        key: AggregateKey::new(MISSION_KIND, "(replayed)"),
        detail: detail.to_owned(),
    }
}

fn text(value: &Value, name: &str) -> Result<String, EngineError> {
    value
        .get(name)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| broken(&format!("no {name}")))
}

fn int(value: Option<&Value>) -> Result<u64, EngineError> {
    value
        .and_then(Value::as_number)
        .and_then(Number::as_u64)
        .ok_or_else(|| broken("a missing or non-integer member"))
}

fn millis(value: Option<&Value>) -> Result<UnixMillis, EngineError> {
    let text = value
        .and_then(Value::as_str)
        .ok_or_else(|| broken("a missing timestamp"))?;
    let stamp = Timestamp::parse(text).map_err(|e| broken(&e.to_string()))?;
    Ok(UnixMillis(stamp.instant().unix_millis()))
}
