//! WorkItem Command payloads → the `work` module's typed inputs.
//!
//! `command.schema.json` gives every payload only `{"type": "object"}` (digest §8 item 1); the
//! members read here are listed in docs/work.md, "Engine wiring". Lease IDs and expiries are
//! never taken from the payload: the engine grants them ([`super::plan::lease_grant`]).

use missionweaveprotocol::json::Value;

use crate::error::EngineError;
use crate::ingress::VerifiedCommand;
use crate::input::{member, opt_text, text, u64_member};
use crate::mission::rules::lease_seconds;
use crate::work::evidence::EvidenceRef;
use crate::work::fencing::WorkClaim;
use crate::work::offers::OfferCandidate;

/// The WorkItem a Command addresses: the envelope `workItemId` (§15.1), else the payload's.
pub(crate) fn work_item_id(command: &VerifiedCommand) -> Result<String, EngineError> {
    if let Some(id) = command.work_item_id() {
        if opt_text(command.payload(), "workItemId")?.is_some_and(|inner| inner != id) {
            return Err(EngineError::invalid(
                "work_item_mismatch",
                "payload workItemId differs from the envelope's",
            ));
        }
        return Ok(id.to_owned());
    }
    Ok(text(command.payload(), "workItemId")?.to_owned())
}

/// The claim of a lease-bound Command (§11.3): the acting Agent, its envelope Session Epoch,
/// and the payload's `ownershipEpoch` and `leaseId`.
pub(crate) fn claim(command: &VerifiedCommand) -> Result<WorkClaim, EngineError> {
    let payload = command.payload();
    Ok(WorkClaim {
        agent_id: command.actor().id.clone(),
        session_epoch: session_epoch(command)?,
        ownership_epoch: u64_member(payload, "ownershipEpoch")?,
        lease_id: text(payload, "leaseId")?.to_owned(),
    })
}

/// The envelope Session Epoch a lease binds to (§11.3); required on Worker Commands.
pub(crate) fn session_epoch(command: &VerifiedCommand) -> Result<u64, EngineError> {
    command.session_epoch().ok_or_else(|| {
        EngineError::invalid(
            "missing_member",
            "sessionEpoch is required: leases bind to the Worker's Session Epoch (§11.3)",
        )
    })
}

/// `leaseSeconds?` (default 300, 1–86,400), as for the Coordinator lease.
pub(crate) fn lease_length(command: &VerifiedCommand) -> Result<u64, EngineError> {
    lease_seconds(command.payload(), "leaseSeconds")
}

/// A required object member.
pub(crate) fn object(payload: &Value, name: &str) -> Result<Value, EngineError> {
    let value = member(payload, name)?;
    if matches!(value, Value::Object(_)) {
        Ok(value.clone())
    } else {
        Err(wrong(name, "an object"))
    }
}

/// A required array member.
pub(crate) fn array<'a>(payload: &'a Value, name: &str) -> Result<&'a [Value], EngineError> {
    member(payload, name)?
        .as_array()
        .ok_or_else(|| wrong(name, "an array"))
}

/// A required array of non-empty strings.
pub(crate) fn strings(payload: &Value, name: &str) -> Result<Vec<String>, EngineError> {
    array(payload, name)?
        .iter()
        .map(|v| {
            v.as_str()
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .ok_or_else(|| wrong(name, "an array of non-empty strings"))
        })
        .collect()
}

/// `evidence`: the Evidence documents (their `evidenceId`, `workItemId`, `type`,
/// `criterionIds`, `result`; §13.2).
pub(crate) fn evidence(payload: &Value) -> Result<Vec<EvidenceRef>, EngineError> {
    array(payload, "evidence")?
        .iter()
        .map(|doc| {
            EvidenceRef::from_document(doc).ok_or_else(|| {
                wrong(
                    "evidence",
                    "Evidence with evidenceId, workItemId, type, criterionIds and result",
                )
            })
        })
        .collect()
}

/// `candidates`: `[{offerId, agentId, agentCardVersion}]` (§10.3).
pub(crate) fn candidates(payload: &Value) -> Result<Vec<OfferCandidate>, EngineError> {
    array(payload, "candidates")?
        .iter()
        .map(|c| {
            Ok(OfferCandidate {
                offer_id: text(c, "offerId")?.to_owned(),
                agent_id: text(c, "agentId")?.to_owned(),
                agent_card_version: u64_member(c, "agentCardVersion")?,
            })
        })
        .collect()
}

/// An optional boolean member.
pub(crate) fn opt_bool(payload: &Value, name: &str) -> Result<Option<bool>, EngineError> {
    match payload.get(name) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(wrong(name, "a boolean")),
    }
}

fn wrong(name: &str, what: &str) -> EngineError {
    EngineError::invalid("invalid_member", format!("{name} must be {what}"))
}
