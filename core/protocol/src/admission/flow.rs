//! The two admission flows of §6.4 and the validation of a returned record.

use super::error::{AdmissionError, AdmissionReason as R};
use super::log::{AdmissionLog, AppendOutcome, AuthenticatedRecord, LookupOutcome};
use super::record::{FirstAdmissionRecord, TrustedAcceptanceContext};
use crate::json::{Value, parse};
use crate::principal::Principal;
use crate::schema::SchemaCatalog;
use crate::schema_formats::{Instant, Timestamp};
use crate::signed_documents::{SignedDocumentKind, VerifiedSignedDocument};

/// A verified document anchored by a validated First-Admission Record.
#[derive(Debug, Clone)]
pub struct AdmittedDocument {
    pub record: FirstAdmissionRecord,
    /// The record bytes as the log returned them.
    pub record_bytes: Vec<u8>,
    /// True when the record already existed (idempotent retry or replay).
    pub existing: bool,
}

fn interval(verified: &VerifiedSignedDocument, t: &Instant) -> Result<(), AdmissionError> {
    let outside = |detail: String| AdmissionError::new(R::TrustedTimeOutsideKeyInterval, detail);
    if t < verified.valid_from.instant() {
        return Err(outside(format!(
            "trusted time is before validFrom {}",
            verified.valid_from
        )));
    }
    if let Some(until) = &verified.valid_until
        && t >= until.instant()
    {
        return Err(outside(format!(
            "trusted time is not before validUntil {until}"
        )));
    }
    if let Some(revoked) = &verified.revoked_at
        && t >= revoked.instant()
    {
        return Err(outside(format!(
            "trusted time is not before revokedAt {revoked}"
        )));
    }
    Ok(())
}

/// Validates the record the log returned (§6.4 record validation): strict parse and schema,
/// exact binding to the six-stage evidence, the authenticated service, and the trusted time
/// inside the key interval. An Event never anchors itself.
pub fn validate_record(
    record: &AuthenticatedRecord,
    verified: &VerifiedSignedDocument,
) -> Result<FirstAdmissionRecord, AdmissionError> {
    let parsed = parse(&record.bytes);
    if verified.kind == SignedDocumentKind::Event
        && let Ok(value) = &parsed
        && value.json_eq(&verified.document)
    {
        return Err(AdmissionError::new(
            R::EventSelfAnchoring,
            "an Event cannot be its own First-Admission Record",
        ));
    }
    let value = parsed.map_err(|e| {
        AdmissionError::new(
            R::RecordSchemaInvalid,
            format!("record is not strict JSON: {e}"),
        )
    })?;
    SchemaCatalog::embedded()
        .validate("first-admission-record.schema.json", &value)
        .map_err(|issue| AdmissionError::new(R::RecordSchemaInvalid, issue.to_string()))?;
    let text = |name: &str| {
        value
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let trusted_text = text("trustedAcceptedAt");
    let trusted_accepted_at = Timestamp::parse(&trusted_text).map_err(|e| {
        AdmissionError::new(R::MalformedTrustedTime, format!("trustedAcceptedAt: {e}"))
    })?;
    let principal = value.get("principal").and_then(Principal::from_value);
    let mismatch = |field: &str| {
        AdmissionError::new(
            R::RecordBindingMismatch,
            format!("record {field} differs from the verified evidence"),
        )
    };
    if text("organizationId") != verified.organization_id {
        return Err(mismatch("organizationId"));
    }
    if text("documentKind") != verified.kind.as_str() {
        return Err(mismatch("documentKind"));
    }
    if text("signingHash") != verified.signing_hash {
        return Err(mismatch("signingHash"));
    }
    if text("keyId") != verified.key_id {
        return Err(mismatch("keyId"));
    }
    if principal.as_ref() != Some(&verified.principal) {
        return Err(mismatch("principal"));
    }
    let accepted_by = value
        .get("acceptedBy")
        .and_then(Principal::from_value)
        .ok_or_else(|| {
            AdmissionError::new(R::RecordSchemaInvalid, "acceptedBy is not a Principal")
        })?;
    if accepted_by != record.authenticated_service {
        return Err(AdmissionError::new(
            R::LogAuthenticationFailed,
            "acceptedBy is not the service the log authenticated",
        ));
    }
    interval(verified, trusted_accepted_at.instant())?;
    Ok(FirstAdmissionRecord {
        admission_record_id: text("admissionRecordId"),
        organization_id: verified.organization_id.clone(),
        document_kind: verified.kind,
        signing_hash: verified.signing_hash.clone(),
        key_id: verified.key_id.clone(),
        principal: verified.principal.clone(),
        trusted_accepted_at,
        accepted_by,
    })
}

fn not_established(outcome: &LookupOutcome) -> AdmissionError {
    match outcome {
        LookupOutcome::Unauthenticated | LookupOutcome::IntegrityFailed => AdmissionError::new(
            R::LogAuthenticationFailed,
            "the Admission Log lookup was not authenticated",
        ),
        LookupOutcome::Unavailable => {
            AdmissionError::new(R::LogUnavailable, "the Admission Log is unavailable")
        }
        _ => AdmissionError::new(
            R::LogIndeterminate,
            "the Admission Log lookup was indeterminate",
        ),
    }
}

/// The admission reason for an append that neither committed nor returned a record.
fn append_failure(outcome: &AppendOutcome) -> AdmissionError {
    let (reason, detail) = match outcome {
        AppendOutcome::Conflict => (
            R::RecordConflict,
            "a conflicting record exists for this signing hash",
        ),
        AppendOutcome::Unauthenticated => (
            R::LogAuthenticationFailed,
            "the append was not authenticated",
        ),
        AppendOutcome::IntegrityFailed => (
            R::AppendIntegrityNotEstablished,
            "append integrity was not established",
        ),
        AppendOutcome::Unavailable => (R::LogUnavailable, "the Admission Log is unavailable"),
        AppendOutcome::CommitFailed => (R::CommitFailed, "the append did not commit"),
        AppendOutcome::Indeterminate | AppendOutcome::Committed(_) | AppendOutcome::Existing(_) => {
            (R::LogIndeterminate, "the append outcome is indeterminate")
        }
    };
    AdmissionError::new(reason, detail)
}

/// First admission of a newly presented, verified document (verified with *current* Registry
/// evidence). `context` is asked only on authoritative absence.
pub fn admit_first(
    verified: &VerifiedSignedDocument,
    log: &dyn AdmissionLog,
    context: &mut dyn FnMut() -> TrustedAcceptanceContext,
) -> Result<AdmittedDocument, AdmissionError> {
    let outcome = log.lookup(&verified.organization_id, &verified.signing_hash);
    match &outcome {
        LookupOutcome::Found(record) => {
            let validated = validate_record(record, verified)?;
            return Ok(AdmittedDocument {
                record: validated,
                record_bytes: record.bytes.clone(),
                existing: true,
            });
        }
        LookupOutcome::AuthoritativeAbsence => {}
        other => return Err(not_established(other)),
    }
    let context = context();
    let trusted = Timestamp::parse(&context.trusted_accepted_at).map_err(|e| {
        AdmissionError::new(R::MalformedTrustedTime, format!("trustedAcceptedAt: {e}"))
    })?;
    interval(verified, trusted.instant())?;
    let candidate = FirstAdmissionRecord {
        admission_record_id: context.admission_record_id,
        organization_id: verified.organization_id.clone(),
        document_kind: verified.kind,
        signing_hash: verified.signing_hash.clone(),
        key_id: verified.key_id.clone(),
        principal: verified.principal.clone(),
        trusted_accepted_at: trusted,
        accepted_by: context.accepted_by,
    };
    let candidate_bytes = candidate.to_bytes();
    let (record, existing) = match log.append(&candidate, &candidate_bytes) {
        AppendOutcome::Committed(record) => (record, false),
        AppendOutcome::Existing(record) => (record, true),
        failure => return Err(append_failure(&failure)),
    };
    // Validate what the log returned, not the candidate: a concurrent winner may differ.
    let validated = validate_record(&record, verified)?;
    Ok(AdmittedDocument {
        record: validated,
        record_bytes: record.bytes,
        existing,
    })
}

/// Historical replay of a document verified with authoritative *historical* Registry evidence:
/// a record must already exist; nothing is appended and no new trusted context is issued.
pub fn replay_historical(
    verified: &VerifiedSignedDocument,
    log: &dyn AdmissionLog,
) -> Result<AdmittedDocument, AdmissionError> {
    match log.lookup(&verified.organization_id, &verified.signing_hash) {
        LookupOutcome::Found(record) => {
            let validated = validate_record(&record, verified)?;
            Ok(AdmittedDocument {
                record: validated,
                record_bytes: record.bytes,
                existing: true,
            })
        }
        LookupOutcome::AuthoritativeAbsence => Err(AdmissionError::new(
            R::RecordMissing,
            "no First-Admission Record exists for this document",
        )),
        other => Err(not_established(&other)),
    }
}
