//! The two admission flows of §6.4 and the validation of a returned record.

use std::borrow::Borrow;

use super::error::{AdmissionError, AdmissionReason as R};
use super::log::{AdmissionLog, AppendOutcome, AuthenticatedRecord, LookupOutcome};
use super::record::{FirstAdmissionRecord, TrustedAcceptanceContext};
use crate::json::{Value, parse_state};
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
    let parsed = parse_state(&record.bytes);
    if verified.kind == SignedDocumentKind::Event
        && let Ok(value) = &parsed
        && value.view().json_eq(&verified.view())
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

/// What the admission flow needs next from its environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AdmissionStep {
    /// Look up `(organization_id, signing_hash)` in the Admission Log, then call
    /// [`AdmissionFlow::on_lookup`].
    Lookup {
        organization_id: String,
        signing_hash: String,
    },
    /// Obtain trusted acceptance context from the trusted seam, then call
    /// [`AdmissionFlow::on_trusted_context`].
    TrustedContext,
    /// Append-or-return-existing `candidate` (stored as exactly `candidate_bytes`), then call
    /// [`AdmissionFlow::on_append`].
    Append {
        candidate: Box<FirstAdmissionRecord>,
        candidate_bytes: Vec<u8>,
    },
    /// Finished: call [`AdmissionFlow::result`].
    Done,
}

/// Which of the two flows of §6.4 runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdmissionMode {
    FirstAdmission,
    HistoricalReplay,
}

/// The admission flows of §6.4 as a sans-IO state machine: the caller performs each
/// [`AdmissionStep`] (synchronously or asynchronously, against any log) and feeds the typed
/// outcome back. [`admit_first`] and [`replay_historical`] drive it over an [`AdmissionLog`].
///
/// `V` is how the flow holds the verified document: a reference for a flow driven in one call,
/// or the document itself for a flow that lives across calls (an asynchronous host).
#[derive(Debug)]
pub struct AdmissionFlow<V: Borrow<VerifiedSignedDocument>> {
    verified: V,
    mode: AdmissionMode,
    step: AdmissionStep,
    result: Option<Result<AdmittedDocument, AdmissionError>>,
}

impl<V: Borrow<VerifiedSignedDocument>> AdmissionFlow<V> {
    /// Starts a flow for a document that passed all six stages.
    pub fn new(verified: V, mode: AdmissionMode) -> Self {
        let document = verified.borrow();
        Self {
            step: AdmissionStep::Lookup {
                organization_id: document.organization_id.clone(),
                signing_hash: document.signing_hash.clone(),
            },
            verified,
            mode,
            result: None,
        }
    }

    /// The next thing to do.
    pub fn step(&self) -> &AdmissionStep {
        &self.step
    }

    fn finish(&mut self, result: Result<AdmittedDocument, AdmissionError>) {
        if result.is_err() {
            // An admission refusal is `AUTH_INVALID_SIGNATURE`, the wire error of a stage-3, 4
            // or 6 rejection (§6.4), so its cost must not tell it apart either: those decode
            // `R` strictly before they report, which a verified document skipped. Do the same
            // decoding here (its verdict is already known good and is discarded).
            equalize_rejection_work(self.verified.borrow());
        }
        self.step = AdmissionStep::Done;
        self.result = Some(result);
    }

    fn unexpected(&mut self, what: &str) {
        // Feeding an outcome out of order never succeeds: fail closed.
        let detail = format!("{what} outcome delivered out of order");
        self.finish(Err(AdmissionError::new(R::LogIndeterminate, detail)));
    }

    fn finish_with_record(&mut self, record: &AuthenticatedRecord, existing: bool) {
        let result =
            validate_record(record, self.verified.borrow()).map(|validated| AdmittedDocument {
                record: validated,
                record_bytes: record.bytes.clone(),
                existing,
            });
        self.finish(result);
    }

    /// Feeds the lookup outcome.
    pub fn on_lookup(&mut self, outcome: LookupOutcome) {
        if !matches!(self.step, AdmissionStep::Lookup { .. }) {
            return self.unexpected("lookup");
        }
        match (&outcome, self.mode) {
            (LookupOutcome::Found(record), _) => self.finish_with_record(record, true),
            (LookupOutcome::AuthoritativeAbsence, AdmissionMode::FirstAdmission) => {
                self.step = AdmissionStep::TrustedContext;
            }
            (LookupOutcome::AuthoritativeAbsence, AdmissionMode::HistoricalReplay) => {
                self.finish(Err(AdmissionError::new(
                    R::RecordMissing,
                    "no First-Admission Record exists for this document",
                )));
            }
            (other, _) => self.finish(Err(not_established(other))),
        }
    }

    /// Feeds the trusted acceptance context (first admission after authoritative absence).
    pub fn on_trusted_context(&mut self, context: TrustedAcceptanceContext) {
        if self.step != AdmissionStep::TrustedContext {
            return self.unexpected("trusted context");
        }
        let trusted = match Timestamp::parse(&context.trusted_accepted_at) {
            Ok(trusted) => trusted,
            Err(e) => {
                let detail = format!("trustedAcceptedAt: {e}");
                return self.finish(Err(AdmissionError::new(R::MalformedTrustedTime, detail)));
            }
        };
        if let Err(error) = interval(self.verified.borrow(), trusted.instant()) {
            return self.finish(Err(error));
        }
        let verified = self.verified.borrow();
        // Preparing the candidate appends nothing and implies no success (§6.4).
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
        self.step = AdmissionStep::Append {
            candidate: Box::new(candidate),
            candidate_bytes,
        };
    }

    /// Feeds the append-or-return-existing outcome. The record the log returned is validated,
    /// not the candidate: a concurrent winner's ID and trusted time may differ.
    pub fn on_append(&mut self, outcome: AppendOutcome) {
        if !matches!(self.step, AdmissionStep::Append { .. }) {
            return self.unexpected("append");
        }
        match &outcome {
            AppendOutcome::Committed(record) => self.finish_with_record(record, false),
            AppendOutcome::Existing(record) => self.finish_with_record(record, true),
            failure => self.finish(Err(append_failure(failure))),
        }
    }

    /// The result once [`AdmissionStep::Done`]; before that, `None`.
    pub fn result(self) -> Option<Result<AdmittedDocument, AdmissionError>> {
        self.result
    }
}

/// Drives a flow against a synchronous log.
fn drive(
    mut flow: AdmissionFlow<&VerifiedSignedDocument>,
    log: &dyn AdmissionLog,
    context: &mut dyn FnMut() -> TrustedAcceptanceContext,
) -> Result<AdmittedDocument, AdmissionError> {
    loop {
        match flow.step() {
            AdmissionStep::Lookup {
                organization_id,
                signing_hash,
            } => {
                let outcome = log.lookup(organization_id, signing_hash);
                flow.on_lookup(outcome);
            }
            AdmissionStep::TrustedContext => flow.on_trusted_context(context()),
            AdmissionStep::Append {
                candidate,
                candidate_bytes,
            } => {
                let outcome = log.append(candidate, candidate_bytes);
                flow.on_append(outcome);
            }
            AdmissionStep::Done => {
                return flow
                    .result()
                    .unwrap_or_else(|| Err(AdmissionError::unfinished()));
            }
        }
    }
}

/// First admission of a newly presented, verified document (verified with *current* Registry
/// evidence). `context` is asked only on authoritative absence.
///
/// ```
/// use missionweaveprotocol::admission::{InMemoryAdmissionLog, TrustedAcceptanceContext, admit_first};
/// use missionweaveprotocol::registry::AgentRegistryKeyResolver;
/// use missionweaveprotocol::{Principal, PrincipalType, SignedDocumentCodec, SignedDocumentKind};
///
/// # use missionweaveprotocol::crypto::SigningKey;
/// # use missionweaveprotocol::registry::RegistryBuilder;
/// # let key = SigningKey::from_seed("urn:missionweaveprotocol:key:planner-1", &[7; 32]);
/// # let mut builder = RegistryBuilder::new("urn:missionweaveprotocol:organization:acme");
/// # builder.add_key(
/// #     key.key_id(),
/// #     Principal::new(PrincipalType::Agent, "urn:missionweaveprotocol:agent:planner"),
/// #     &key.public_key_bytes(),
/// #     "2026-01-01T00:00:00Z",
/// # )?;
/// # let (registry_bytes, _) = builder.build()?;
/// # let command = missionweaveprotocol::json::parse_state(br#"{"protocolVersion": "0.1",
/// #     "actionId": "urn:uuid:0b6d1c1e-6f0a-4b7e-9a53-2f1f0c9e7d11",
/// #     "actor": {"type": "agent", "id": "urn:missionweaveprotocol:agent:planner"},
/// #     "sessionEpoch": 3, "membershipEpoch": 1, "groupId": "urn:missionweaveprotocol:group:finance",
/// #     "kind": "work.checkpoint", "correlationId": "urn:uuid:5e0c2a4b-1d3f-4e6a-8b7c-9d0e1f2a3b4c",
/// #     "issuedAt": "2026-07-15T09:30:00Z", "payload": {"step": 1}}"#)?;
/// # let received = SignedDocumentCodec::new()
/// #     .sign(SignedDocumentKind::Command, &command, &key)?
/// #     .bytes;
/// let resolver = AgentRegistryKeyResolver::new(&registry_bytes);
/// let verified =
///     SignedDocumentCodec::new().verify(SignedDocumentKind::Command, &received, &resolver)?;
///
/// let service = Principal::new(PrincipalType::Service, "urn:missionweaveprotocol:service:admission");
/// let log = InMemoryAdmissionLog::new(service.clone());
/// // The trusted seam (never the signer) supplies the record ID and the acceptance time.
/// let mut context = || TrustedAcceptanceContext {
///     admission_record_id: "urn:uuid:7f1e2d3c-4b5a-4968-8776-655443322110".into(),
///     trusted_accepted_at: "2026-07-15T09:30:05Z".into(),
///     accepted_by: service.clone(),
/// };
/// let admitted = admit_first(&verified, &log, &mut context)?;
/// assert!(!admitted.existing);
/// assert_eq!(admitted.record.signing_hash, verified.signing_hash);
/// // A retry finds the record instead of appending a second one.
/// assert!(admit_first(&verified, &log, &mut context)?.existing);
/// assert_eq!(log.len(), 1);
///
/// // A trusted time before the key's validFrom is refused (stage `admission`).
/// let early = InMemoryAdmissionLog::new(service.clone());
/// let error = admit_first(&verified, &early, &mut || TrustedAcceptanceContext {
///     admission_record_id: "urn:uuid:7f1e2d3c-4b5a-4968-8776-655443322111".into(),
///     trusted_accepted_at: "2025-12-31T23:59:59Z".into(),
///     accepted_by: service.clone(),
/// })
/// .unwrap_err();
/// assert_eq!(error.wire_code().as_str(), "AUTH_INVALID_SIGNATURE");
/// assert!(early.is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn admit_first(
    verified: &VerifiedSignedDocument,
    log: &dyn AdmissionLog,
    context: &mut dyn FnMut() -> TrustedAcceptanceContext,
) -> Result<AdmittedDocument, AdmissionError> {
    drive(
        AdmissionFlow::new(verified, AdmissionMode::FirstAdmission),
        log,
        context,
    )
}

/// Historical replay of a document verified with authoritative *historical* Registry evidence:
/// a record must already exist; nothing is appended and no new trusted context is issued.
pub fn replay_historical(
    verified: &VerifiedSignedDocument,
    log: &dyn AdmissionLog,
) -> Result<AdmittedDocument, AdmissionError> {
    let mut no_context = || TrustedAcceptanceContext {
        admission_record_id: String::new(),
        trusted_accepted_at: String::new(),
        accepted_by: Principal::new(crate::principal::PrincipalType::Service, ""),
    };
    drive(
        AdmissionFlow::new(verified, AdmissionMode::HistoricalReplay),
        log,
        &mut no_context,
    )
}

/// The strict decoding of the verified signature's `R` that every stage-3, 4 and 6 rejection
/// runs before reporting (`crypto::check_r`), so that an admission refusal of a genuine
/// document costs what a verification refusal does.
fn equalize_rejection_work(verified: &VerifiedSignedDocument) {
    let r = crate::schema_formats::decode_base64url(&verified.signature)
        .and_then(|bytes| bytes.get(..32).and_then(|r| <[u8; 32]>::try_from(r).ok()))
        .unwrap_or(crate::crypto::stand_in().r);
    let _ = core::hint::black_box(crate::crypto::check_r(&r));
}
