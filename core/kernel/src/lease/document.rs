//! Reading a lease back from its `lease.schema.json` document, so that leases survive
//! persistence and cross language boundaries in both directions. The document is checked
//! against the schema, then rebuilt through the same constructors and consistency rules that
//! created it: a document the record type could not have produced is refused.

use super::{Lease, LeaseBinding, LeaseError, LeaseState, LeaseType, LeaseWindow};
use crate::unix_millis::UnixMillis;
use missionweaveprotocol::WireCode;
use missionweaveprotocol::json::{ParseError, Value, parse_state};
use missionweaveprotocol::schema::{SchemaCatalog, SchemaIssue};
use missionweaveprotocol::schema_formats::Timestamp;

/// Why a lease document cannot be read back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LeaseDocumentError {
    /// Not strict JSON.
    Parse(ParseError),
    /// Not valid against `lease.schema.json`.
    Schema(SchemaIssue),
    /// Schema-valid, but a timestamp has finer than millisecond precision.
    Precision(&'static str),
    /// Schema-valid, but inconsistent with the lease rules (the error says which).
    Inconsistent(LeaseError),
}

impl LeaseDocumentError {
    /// The §19 wire code: `PROTOCOL_VIOLATION` for bytes, `SCHEMA_VALIDATION_FAILED` for the
    /// schema, the broken rule's own code for a lease the rules forbid.
    pub fn code(&self) -> WireCode {
        match self {
            Self::Parse(_) => WireCode::ProtocolViolation,
            Self::Schema(_) => WireCode::SchemaValidationFailed,
            Self::Precision(_) => WireCode::InvalidCommand,
            // The rule the document breaks, with that rule's own code.
            Self::Inconsistent(error) => error.code(),
        }
    }
}

/// The message is the wrapped error's own (a parse error, a schema issue, or the broken lease
/// rule), so that a refused document reads the same in every binding (§19, `docs/errors.md`).
impl core::fmt::Display for LeaseDocumentError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Parse(error) => error.fmt(f),
            Self::Schema(issue) => issue.fmt(f),
            Self::Precision(field) => LeaseError::InvalidField(field).fmt(f),
            Self::Inconsistent(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for LeaseDocumentError {}

fn text<'v>(document: &'v Value, name: &str) -> Option<&'v str> {
    document.get(name).and_then(Value::as_str)
}

fn count(document: &Value, name: &str) -> Option<u64> {
    document
        .get(name)
        .and_then(Value::as_number)
        .and_then(|n| n.as_u64())
}

/// A schema timestamp as milliseconds; sub-millisecond precision cannot be kept, so it is refused.
fn millis(document: &Value, name: &'static str) -> Result<Option<UnixMillis>, LeaseDocumentError> {
    let Some(raw) = text(document, name) else {
        return Ok(None);
    };
    // The schema already asserted the timestamp profile, so this parse cannot fail.
    let Ok(timestamp) = Timestamp::parse(raw) else {
        return Err(LeaseDocumentError::Precision(name));
    };
    if timestamp.instant().fraction_digits().len() > 3 {
        return Err(LeaseDocumentError::Precision(name));
    }
    Ok(Some(UnixMillis(timestamp.instant().unix_millis())))
}

fn required(
    value: Option<UnixMillis>,
    name: &'static str,
) -> Result<UnixMillis, LeaseDocumentError> {
    value.ok_or(LeaseDocumentError::Inconsistent(LeaseError::InvalidField(
        name,
    )))
}

impl Lease {
    /// Reads a lease from its document bytes (strict JSON).
    pub fn from_json(bytes: &[u8]) -> Result<Lease, LeaseDocumentError> {
        let value = parse_state(bytes).map_err(LeaseDocumentError::Parse)?;
        Lease::from_value(&value)
    }

    /// Reads a lease from its document: schema first, then the constructors' rules, then the
    /// recorded renewals and closure.
    pub fn from_value(document: &Value) -> Result<Lease, LeaseDocumentError> {
        SchemaCatalog::embedded()
            .validate("lease", document)
            .map_err(LeaseDocumentError::Schema)?;
        let inconsistent = LeaseDocumentError::Inconsistent;
        let binding = LeaseBinding {
            lease_id: text(document, "leaseId").unwrap_or_default().to_owned(),
            mission_id: text(document, "missionId").unwrap_or_default().to_owned(),
            group_id: text(document, "groupId").unwrap_or_default().to_owned(),
            holder_agent_id: text(document, "holderAgentId")
                .unwrap_or_default()
                .to_owned(),
            session_epoch: count(document, "sessionEpoch").unwrap_or_default(),
        };
        let window = LeaseWindow {
            issued_at: required(millis(document, "issuedAt")?, "issuedAt")?,
            starts_at: required(millis(document, "startsAt")?, "startsAt")?,
            expires_at: required(millis(document, "expiresAt")?, "expiresAt")?,
        };
        let work_item = text(document, "workItemId");
        let ownership_epoch = count(document, "ownershipEpoch");
        let coordinator_epoch = count(document, "coordinatorEpoch");
        let start_by = millis(document, "startBy")?;
        let grace = millis(document, "graceExpiresAt")?;
        let lease_type = match text(document, "leaseType") {
            Some("coordinator") => LeaseType::Coordinator,
            Some("ownership") => LeaseType::Ownership,
            Some("execution") => LeaseType::Execution,
            Some("blocked") => LeaseType::Blocked,
            _ => return Err(inconsistent(LeaseError::InvalidField("leaseType"))),
        };
        // Members that belong to other lease types are refused rather than dropped.
        let foreign = match lease_type {
            LeaseType::Coordinator => {
                work_item.is_some()
                    || ownership_epoch.is_some()
                    || start_by.is_some()
                    || grace.is_some()
            }
            LeaseType::Ownership => coordinator_epoch.is_some() || grace.is_some(),
            LeaseType::Execution => {
                coordinator_epoch.is_some() || start_by.is_some() || grace.is_some()
            }
            LeaseType::Blocked => coordinator_epoch.is_some() || start_by.is_some(),
        };
        if foreign {
            return Err(inconsistent(LeaseError::InvalidField("leaseType")));
        }
        let item = || work_item.ok_or(inconsistent(LeaseError::InvalidField("workItemId")));
        let epoch =
            || ownership_epoch.ok_or(inconsistent(LeaseError::InvalidField("ownershipEpoch")));
        let mut lease = match lease_type {
            LeaseType::Coordinator => Lease::coordinator(
                binding,
                coordinator_epoch
                    .ok_or(inconsistent(LeaseError::InvalidField("coordinatorEpoch")))?,
                window,
            ),
            LeaseType::Ownership => Lease::ownership(
                binding,
                item()?,
                epoch()?,
                required(start_by, "startBy")?,
                window,
            ),
            LeaseType::Execution => Lease::execution(binding, item()?, epoch()?, window),
            LeaseType::Blocked => Lease::blocked(binding, item()?, epoch()?, window, grace),
        }
        .map_err(inconsistent)?;
        lease
            .restore_history(
                count(document, "renewalCount").unwrap_or_default(),
                millis(document, "lastRenewedAt")?,
            )
            .map_err(inconsistent)?;
        let state = match text(document, "state") {
            Some("active") => LeaseState::Active,
            Some("released") => LeaseState::Released,
            Some("revoked") => LeaseState::Revoked,
            Some("expired") => LeaseState::Expired,
            _ => return Err(inconsistent(LeaseError::InvalidField("state"))),
        };
        let closed_at = millis(document, "closedAt")?;
        let reason = text(document, "closureReason");
        match (state, closed_at, reason) {
            (LeaseState::Active, None, None) => {}
            (LeaseState::Active, _, _) => {
                return Err(inconsistent(LeaseError::InvalidField("closedAt")));
            }
            (closed, Some(at), Some(reason)) => {
                lease.close(closed, at, reason).map_err(inconsistent)?;
            }
            _ => return Err(inconsistent(LeaseError::InvalidField("closureReason"))),
        }
        Ok(lease)
    }
}
