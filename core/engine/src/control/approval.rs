//! What an approval decision binds and what it returns: the pending submission read from the
//! Group's Events, the Approval Decision document of an accepted `mission.approve`, and the
//! human's own check of a Command's signature.

use missionweaveprotocol::crypto::{PublicKey, split_signature};
use missionweaveprotocol::json::{Object, Value};
use missionweaveprotocol::schema_formats::decode_base64url;
use missionweaveprotocol::signed_documents::signing_bytes;

use super::error::ControlError;

/// A submission for approval (§7.3): the Mission revision it created and its Artifact set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Submission {
    /// The revision an Approval must name (`missionRevision`).
    pub mission_revision: u64,
    /// The Artifact set an Approval must name exactly.
    pub artifact_hashes: Vec<String>,
}

/// The latest `mission.submitted_for_approval` of `mission_id` among `events` (Event
/// documents in Group order), if any. The Mission document does not carry it
/// (`mission.schema.json` is closed), the Group log does.
pub fn latest_submission(mission_id: &str, events: &[Value]) -> Option<Submission> {
    events.iter().rev().find_map(|event| {
        if event.get("kind").and_then(Value::as_str) != Some("mission.submitted_for_approval") {
            return None;
        }
        let payload = event.get("payload")?;
        if payload.get("missionId").and_then(Value::as_str) != Some(mission_id) {
            return None;
        }
        let mission_revision = payload.get("missionRevision")?.as_number()?.as_u64()?;
        let artifact_hashes = payload
            .get("artifactHashes")?
            .as_array()?
            .iter()
            .map(|h| h.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()?;
        Some(Submission {
            mission_revision,
            artifact_hashes,
        })
    })
}

/// The unsigned Approval Decision (`approval.schema.json` without `signature`) of an accepted
/// `mission.approve`: `request` is `{"command", "event", "mission"}` (the Command as signed, its
/// `mission.approved` Event, the Mission document). The caller signs it with the approver's
/// key (Approval profile, §6.4: the signer is `approver`).
pub fn approval_document(request: &Value) -> Result<Value, ControlError> {
    let part = |name: &str| {
        request
            .get(name)
            .filter(|v| v.as_object().is_some())
            .ok_or_else(|| ControlError::missing(name))
    };
    let (command, event, mission) = (part("command")?, part("event")?, part("mission")?);
    if event.get("kind").and_then(Value::as_str) != Some("mission.approved") {
        return Err(ControlError::invalid("event", "a mission.approved Event"));
    }
    let payload = command
        .get("payload")
        .ok_or_else(|| ControlError::missing("command.payload"))?;
    let copy = |from: &Value, name: &str, path: &str| {
        from.get(name)
            .cloned()
            .ok_or_else(|| ControlError::missing(format!("{path}.{name}")))
    };
    let kind = if mission.get("parent").is_some() {
        "child_mission"
    } else {
        "mission_final"
    };
    let mut doc = Object::new();
    doc.insert(
        "approvalId",
        copy(payload, "approvalId", "command.payload")?,
    );
    doc.insert("kind", Value::string(kind));
    doc.insert("decision", Value::string("approved"));
    doc.insert("missionId", copy(mission, "missionId", "mission")?);
    doc.insert("groupId", copy(mission, "groupId", "mission")?);
    doc.insert(
        "missionRevision",
        copy(payload, "missionRevision", "command.payload")?,
    );
    doc.insert(
        "artifactHashes",
        copy(payload, "artifactHashes", "command.payload")?,
    );
    doc.insert(
        "acceptancePolicyVersion",
        payload
            .get("acceptancePolicyVersion")
            .cloned()
            .unwrap_or_else(|| Value::string("1.0.0")),
    );
    doc.insert("approver", copy(command, "actor", "command")?);
    doc.insert(
        "comments",
        payload
            .get("comments")
            .cloned()
            .unwrap_or_else(|| Value::string("")),
    );
    doc.insert("conditions", Value::Array(Vec::new()));
    doc.insert("occurredAt", copy(event, "occurredAt", "event")?);
    Ok(Value::Object(doc))
}

/// Whether `command` carries a valid Ed25519 signature by `key_id` / `public_key` over its
/// §6.4 signing bytes (the reference's `HumanIdentity.verify`): strict point and scalar
/// checks, no Registry (the Core checks Registry evidence when it performs the Command).
pub fn verify_signature(command: &Value, key_id: &str, public_key: &[u8]) -> bool {
    let Some(signature) = command.get("signature") else {
        return false;
    };
    let text = |name| signature.get(name).and_then(Value::as_str);
    if text("algorithm") != Some("Ed25519") || text("keyId") != Some(key_id) {
        return false;
    }
    let (Some(value), Ok(key)) = (
        text("value").and_then(decode_base64url),
        PublicKey::from_bytes(public_key),
    ) else {
        return false;
    };
    let (Ok(parts), Ok(message)) = (split_signature(&value), signing_bytes(command)) else {
        return false;
    };
    key.verify_equation(&parts.r, &parts.s, &message)
}
