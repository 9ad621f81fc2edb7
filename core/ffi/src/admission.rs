//! Admission through JavaScript: a host object answers the Admission Log calls and supplies
//! the trusted acceptance context; replies use the admission bundle's outcome vocabulary
//! (`found`, `authoritative-absence`, `committed`, `existing`, `conflict`, `unauthenticated`,
//! `integrity-failed`, `unavailable`, `indeterminate`, `commit-failed`). A host call that fails
//! or answers outside that vocabulary is `indeterminate`: admission fails closed.

use std::cell::Cell;

use missionweaveprotocol::admission::{
    AdmissionFlow, AdmissionLog, AdmissionMode, AdmissionStep, AdmittedDocument, AppendOutcome,
    AuthenticatedRecord, FirstAdmissionRecord, InMemoryAdmissionLog, LookupOutcome,
    TrustedAcceptanceContext, admit_first, replay_historical,
};
use missionweaveprotocol::json::{Value, canonical_bytes};
use missionweaveprotocol::signed_documents::SignedDocumentCodec;
use missionweaveprotocol::signed_documents::VerifiedSignedDocument;
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

/// A lookup reply as a core outcome, read fail-closed by the core
/// ([`LookupOutcome::from_reply`]).
fn lookup_outcome(reply: Option<Reply>) -> LookupOutcome {
    let Some(reply) = reply else {
        return LookupOutcome::from_reply(None, None);
    };
    let status = reply.status.clone();
    LookupOutcome::from_reply(Some(&status), authenticated(reply))
}

/// An append reply as a core outcome, read fail-closed by the core
/// ([`AppendOutcome::from_reply`]).
fn append_outcome(reply: Option<Reply>) -> AppendOutcome {
    let Some(reply) = reply else {
        return AppendOutcome::from_reply(None, None);
    };
    let status = reply.status.clone();
    AppendOutcome::from_reply(Some(&status), authenticated(reply))
}

/// The candidate record as RFC 8785 text (what JavaScript logs receive).
fn candidate_text(candidate: &FirstAdmissionRecord) -> String {
    canonical_bytes(&candidate.to_value())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

/// A trusted-context reply as the core's context; `None` when missing or malformed.
fn trusted_context(reply: Option<ContextReply>) -> Option<TrustedAcceptanceContext> {
    let reply = reply?;
    let kind = PrincipalType::parse(&reply.accepted_by_type)?;
    Some(TrustedAcceptanceContext {
        admission_record_id: reply.admission_record_id,
        trusted_accepted_at: reply.trusted_accepted_at,
        accepted_by: Principal::new(kind, reply.accepted_by_id),
    })
}

/// The stand-in for a missing context: its empty trusted time is rejected before anything is
/// appended, so admission fails closed.
fn no_context() -> TrustedAcceptanceContext {
    TrustedAcceptanceContext {
        admission_record_id: String::new(),
        trusted_accepted_at: String::new(),
        accepted_by: Principal::new(PrincipalType::Service, ""),
    }
}

/// The core's `AdmissionLog` over a JavaScript host.
struct HostLog<'h, H: Host + ?Sized>(&'h H);

impl<H: Host + ?Sized> AdmissionLog for HostLog<'_, H> {
    fn lookup(&self, organization_id: &str, signing_hash: &str) -> LookupOutcome {
        lookup_outcome(self.0.lookup(organization_id, signing_hash))
    }

    fn append(&self, candidate: &FirstAdmissionRecord, candidate_bytes: &[u8]) -> AppendOutcome {
        append_outcome(self.0.append(&candidate_text(candidate), candidate_bytes))
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
            .map_err(|e| Failure::error(&e))?;
        let host_log = HostLog(host);
        let log: &dyn AdmissionLog = match log {
            Log::Memory(memory) => &memory.0,
            Log::Host => &host_log,
        };
        let bad_context = Cell::new(false);
        let mut context = || {
            trusted_context(host.context()).unwrap_or_else(|| {
                bad_context.set(true);
                no_context()
            })
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
            .map_err(|e| Failure::error(&e))
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

/// An admission that lives across calls, for hosts whose log answers asynchronously: the host
/// reads [`Session::step`], performs it (awaiting as it likes) and feeds the reply back. Built on
/// the core's sans-IO `AdmissionFlow`, so the rules are the core's.
#[derive(Debug)]
pub struct Session {
    flow: Result<AdmissionFlow<VerifiedSignedDocument>, String>,
    bad_context: bool,
}

impl Session {
    /// Verifies the document (six stages) and starts the flow. A verification failure makes a
    /// session that is already done, with that failure as its result.
    pub fn start(mode: Mode, kind_name: &str, bytes: &[u8], registry: &RegistryHandle) -> Self {
        let flow = kind(kind_name)
            .and_then(|kind| {
                SignedDocumentCodec::new()
                    .verify(kind, bytes, registry.resolver())
                    .map_err(|e| Failure::error(&e))
            })
            .map(|verified| {
                let mode = match mode {
                    Mode::FirstAdmission => AdmissionMode::FirstAdmission,
                    Mode::HistoricalReplay => AdmissionMode::HistoricalReplay,
                };
                AdmissionFlow::new(verified, mode)
            })
            .map_err(|failure| finish(Err(failure)));
        Self {
            flow,
            bad_context: false,
        }
    }

    /// A session that is already done, with `envelope` (an error envelope) as its result: for a
    /// binding whose Registry or session object was freed.
    pub fn failed(envelope: String) -> Self {
        Self {
            flow: Err(envelope),
            bad_context: false,
        }
    }

    /// The next step as JSON: `{"step":"lookup","organizationId","signingHash"}`,
    /// `{"step":"trustedContext"}`, `{"step":"append","candidate","candidateBytes"}` or
    /// `{"step":"done"}`.
    pub fn step(&self) -> String {
        let value = match self.flow.as_ref().map(AdmissionFlow::step) {
            Ok(AdmissionStep::Lookup {
                organization_id,
                signing_hash,
            }) => Obj::new()
                .str("step", "lookup")
                .str("organizationId", organization_id.clone())
                .str("signingHash", signing_hash.clone())
                .build(),
            Ok(AdmissionStep::TrustedContext) => Obj::new().str("step", "trustedContext").build(),
            Ok(AdmissionStep::Append {
                candidate,
                candidate_bytes,
            }) => Obj::new()
                .str("step", "append")
                .str("candidate", candidate_text(candidate))
                .str(
                    "candidateBytes",
                    String::from_utf8_lossy(candidate_bytes).into_owned(),
                )
                .build(),
            Ok(AdmissionStep::Done) | Err(_) => Obj::new().str("step", "done").build(),
        };
        canonical_bytes(&value).map_or_else(
            |_| "{\"step\":\"done\"}".into(),
            |b| String::from_utf8_lossy(&b).into_owned(),
        )
    }

    pub fn on_lookup(&mut self, reply: Option<Reply>) {
        if let Ok(flow) = &mut self.flow {
            flow.on_lookup(lookup_outcome(reply));
        }
    }

    pub fn on_context(&mut self, reply: Option<ContextReply>) {
        if let Ok(flow) = &mut self.flow {
            let context = trusted_context(reply).unwrap_or_else(|| {
                self.bad_context = true;
                no_context()
            });
            flow.on_trusted_context(context);
        }
    }

    pub fn on_append(&mut self, reply: Option<Reply>) {
        if let Ok(flow) = &mut self.flow {
            flow.on_append(append_outcome(reply));
        }
    }

    /// The result envelope once done (an admitted document or the failure); before that, an
    /// `indeterminate` admission failure (fail closed).
    pub fn result(&mut self) -> String {
        let flow = match std::mem::replace(&mut self.flow, Err(String::new())) {
            Ok(flow) => flow,
            Err(envelope) if !envelope.is_empty() => return envelope,
            Err(_) => {
                return finish(Err(Failure::argument(
                    "the admission session was already finished",
                )));
            }
        };
        if self.bad_context {
            return finish(Err(Failure::argument(
                "the trusted acceptance context is missing or malformed",
            )));
        }
        finish(match flow.result() {
            Some(outcome) => outcome
                .map(|admitted| admitted_value(&admitted))
                .map_err(|e| Failure::error(&e)),
            None => Err(Failure::error(
                &missionweaveprotocol::admission::AdmissionError::unfinished(),
            )),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_session_is_done_and_answers_its_envelope_once() {
        let envelope = finish(Err(Failure::argument("this Registry was freed")));
        let mut session = Session::failed(envelope.clone());
        assert_eq!(session.step(), r#"{"step":"done"}"#);
        // Replies delivered to a finished session change nothing.
        session.on_lookup(None);
        session.on_append(None);
        assert_eq!(session.result(), envelope);
        assert!(session.result().contains("already finished"));
    }

    #[test]
    fn a_session_whose_document_fails_verification_is_done_with_that_failure() {
        let registry = RegistryHandle::new(b"not a registry");
        let mut session = Session::start(Mode::FirstAdmission, "command", b"{}", &registry);
        assert_eq!(session.step(), r#"{"step":"done"}"#);
        let result = session.result();
        assert!(
            result.contains(r#""class":"VerificationError""#),
            "{result}"
        );
        assert!(!result.contains("freed"), "{result}");
    }
}
