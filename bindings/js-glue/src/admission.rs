//! Admission through JavaScript: a host object answers the Admission Log calls and supplies
//! the trusted acceptance context; replies use the admission bundle's outcome vocabulary
//! (`found`, `authoritative-absence`, `committed`, `existing`, `conflict`, `unauthenticated`,
//! `integrity-failed`, `unavailable`, `indeterminate`, `commit-failed`). A host call that fails
//! or answers outside that vocabulary is `indeterminate`: admission fails closed.

use std::cell::Cell;

use missionweaveprotocol::admission::{
    AdmissionLog, AdmittedDocument, AppendOutcome, AuthenticatedRecord, FirstAdmissionRecord,
    InMemoryAdmissionLog, LookupOutcome, TrustedAcceptanceContext, admit_first, replay_historical,
};
use missionweaveprotocol::json::{Value, canonical_bytes};
use missionweaveprotocol::signed_documents::SignedDocumentCodec;
use missionweaveprotocol::{Principal, PrincipalType};

use crate::envelope::{Failure, Obj, finish};
use crate::{RegistryHandle, kind};

/// One Admission Log reply from JavaScript.
#[derive(Debug, Clone, Default)]
pub struct Reply {
    pub status: String,
    pub record: Option<Vec<u8>>,
    pub service_type: Option<String>,
    pub service_id: Option<String>,
}

/// The trusted acceptance context from JavaScript.
#[derive(Debug, Clone, Default)]
pub struct ContextReply {
    pub admission_record_id: String,
    pub trusted_accepted_at: String,
    pub accepted_by_type: String,
    pub accepted_by_id: String,
}

/// What a binding implements over its JavaScript host object. `None` means the call failed.
pub trait Host {
    fn lookup(&self, organization_id: &str, signing_hash: &str) -> Option<Reply>;
    /// `candidate` is the record as RFC 8785 text; `candidate_bytes` are the bytes to store.
    fn append(&self, candidate: &str, candidate_bytes: &[u8]) -> Option<Reply>;
    fn context(&self) -> Option<ContextReply>;
}

fn authenticated(reply: Reply) -> Option<AuthenticatedRecord> {
    let kind = PrincipalType::parse(reply.service_type.as_deref()?)?;
    Some(AuthenticatedRecord {
        bytes: reply.record?,
        authenticated_service: Principal::new(kind, reply.service_id?),
    })
}

/// The core's `AdmissionLog` over a JavaScript host.
struct HostLog<'h, H: Host + ?Sized>(&'h H);

impl<H: Host + ?Sized> AdmissionLog for HostLog<'_, H> {
    fn lookup(&self, organization_id: &str, signing_hash: &str) -> LookupOutcome {
        let Some(reply) = self.0.lookup(organization_id, signing_hash) else {
            return LookupOutcome::Indeterminate;
        };
        match reply.status.as_str() {
            "found" => {
                authenticated(reply).map_or(LookupOutcome::Indeterminate, LookupOutcome::Found)
            }
            "authoritative-absence" => LookupOutcome::AuthoritativeAbsence,
            "unauthenticated" => LookupOutcome::Unauthenticated,
            "integrity-failed" => LookupOutcome::IntegrityFailed,
            "unavailable" => LookupOutcome::Unavailable,
            _ => LookupOutcome::Indeterminate,
        }
    }

    fn append(&self, candidate: &FirstAdmissionRecord, candidate_bytes: &[u8]) -> AppendOutcome {
        let text = canonical_bytes(&candidate.to_value())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        let Some(reply) = self.0.append(&text, candidate_bytes) else {
            return AppendOutcome::Indeterminate;
        };
        match reply.status.as_str() {
            "committed" => {
                authenticated(reply).map_or(AppendOutcome::Indeterminate, AppendOutcome::Committed)
            }
            "existing" => {
                authenticated(reply).map_or(AppendOutcome::Indeterminate, AppendOutcome::Existing)
            }
            "conflict" => AppendOutcome::Conflict,
            "unauthenticated" => AppendOutcome::Unauthenticated,
            "integrity-failed" => AppendOutcome::IntegrityFailed,
            "unavailable" => AppendOutcome::Unavailable,
            "commit-failed" => AppendOutcome::CommitFailed,
            _ => AppendOutcome::Indeterminate,
        }
    }
}

/// The in-memory Admission Log, held by a JavaScript `InMemoryAdmissionLog`.
#[derive(Debug)]
pub struct MemoryLog(InMemoryAdmissionLog);

impl MemoryLog {
    /// `None` for an unknown Principal type.
    pub fn new(service_type: &str, service_id: &str) -> Option<Self> {
        let kind = PrincipalType::parse(service_type)?;
        Some(Self(InMemoryAdmissionLog::new(Principal::new(
            kind, service_id,
        ))))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Which log an admission call uses.
#[derive(Debug, Clone, Copy)]
pub enum Log<'l> {
    Memory(&'l MemoryLog),
    Host,
}

/// First admission or historical replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    FirstAdmission,
    HistoricalReplay,
}

fn admitted_value(admitted: &AdmittedDocument) -> Value {
    Obj::new()
        .value("record", admitted.record.to_value())
        .str(
            "recordBytes",
            String::from_utf8_lossy(&admitted.record_bytes).into_owned(),
        )
        .bool("existing", admitted.existing)
        .build()
}

/// Verifies the document (six stages) and admits it. The trusted context is asked of the
/// host only when the log reports authoritative absence (first admission).
pub fn admit<H: Host + ?Sized>(
    mode: Mode,
    kind_name: &str,
    bytes: &[u8],
    registry: &RegistryHandle,
    log: Log<'_>,
    host: &H,
) -> String {
    finish((|| {
        let kind = kind(kind_name)?;
        let verified = SignedDocumentCodec::new()
            .verify(kind, bytes, registry.resolver())
            .map_err(|e| Failure::verification(&e))?;
        let host_log = HostLog(host);
        let log: &dyn AdmissionLog = match log {
            Log::Memory(memory) => &memory.0,
            Log::Host => &host_log,
        };
        let bad_context = Cell::new(false);
        let mut context = || match host.context().and_then(|c| {
            let kind = PrincipalType::parse(&c.accepted_by_type)?;
            Some(TrustedAcceptanceContext {
                admission_record_id: c.admission_record_id,
                trusted_accepted_at: c.trusted_accepted_at,
                accepted_by: Principal::new(kind, c.accepted_by_id),
            })
        }) {
            Some(context) => context,
            None => {
                // Fail closed: an empty trusted time is rejected before anything is appended.
                bad_context.set(true);
                TrustedAcceptanceContext {
                    admission_record_id: String::new(),
                    trusted_accepted_at: String::new(),
                    accepted_by: Principal::new(PrincipalType::Service, ""),
                }
            }
        };
        let outcome = match mode {
            Mode::FirstAdmission => admit_first(&verified, log, &mut context),
            Mode::HistoricalReplay => replay_historical(&verified, log),
        };
        if bad_context.get() {
            return Err(Failure::argument(
                "the trusted acceptance context is missing or malformed",
            ));
        }
        outcome
            .map(|admitted| admitted_value(&admitted))
            .map_err(|e| Failure::admission(&e))
    })())
}

/// A host that has no log and no context (historical replay with the in-memory log).
#[derive(Debug, Clone, Copy)]
pub struct NoHost;

impl Host for NoHost {
    fn lookup(&self, _: &str, _: &str) -> Option<Reply> {
        None
    }

    fn append(&self, _: &str, _: &[u8]) -> Option<Reply> {
        None
    }

    fn context(&self) -> Option<ContextReply> {
        None
    }
}
