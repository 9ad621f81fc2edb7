//! First Admission and historical replay: the core flows, the native in-memory log, and an
//! adapter for Admission Logs written in Python (`lookup`/`append` returning outcome objects).

use std::cell::RefCell;

use missionweaveprotocol::admission::{
    self as core_adm, AdmissionLog, AppendOutcome as CoreAppend, AuthenticatedRecord as CoreRecord,
    LookupOutcome as CoreLookup,
};
use missionweaveprotocol::json::parse;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::codec::VerifiedSignedDocument;
use crate::convert;
use crate::errors;
use crate::registry::is_interrupt;
use crate::values::{PrincipalEvidence, ProtectedTime, PyEnum};

const LOOKUP_STATUSES: [&str; 6] = [
    "found",
    "authoritative-absence",
    "unauthenticated",
    "integrity-failed",
    "unavailable",
    "indeterminate",
];
const APPEND_STATUSES: [&str; 8] = [
    "committed",
    "existing",
    "conflict",
    "unauthenticated",
    "integrity-failed",
    "unavailable",
    "indeterminate",
    "commit-failed",
];

fn principal_arg(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    what: &str,
) -> PyResult<PrincipalEvidence> {
    value
        .cast::<PrincipalEvidence>()
        .map(|p| p.get().clone())
        .map_err(|_| {
            errors::invalid_input(
                py,
                format!(
                    "{what} must be a PrincipalEvidence, not {}",
                    convert::type_name(value)
                ),
            )
        })
}

/// `AuthenticatedRecord(record_bytes, authenticated_service)`: record bytes as the log returned
/// them, with the service the log authenticated.
#[pyclass(module = "missionweaveprotocol._native", frozen, from_py_object)]
#[derive(Debug, Clone)]
pub struct AuthenticatedRecord {
    bytes: Vec<u8>,
    #[pyo3(get)]
    authenticated_service: PrincipalEvidence,
}

#[pymethods]
impl AuthenticatedRecord {
    #[new]
    fn py_new(
        py: Python<'_>,
        record_bytes: &Bound<'_, PyAny>,
        authenticated_service: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        Ok(Self {
            bytes: convert::bytes_arg(py, record_bytes, "record_bytes", false)?.into_owned(),
            authenticated_service: principal_arg(
                py,
                authenticated_service,
                "authenticated_service",
            )?,
        })
    }

    #[getter]
    fn record_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.bytes)
    }
}

impl AuthenticatedRecord {
    fn from_core(record: &CoreRecord) -> Self {
        Self {
            bytes: record.bytes.clone(),
            authenticated_service: PrincipalEvidence::from_core(&record.authenticated_service),
        }
    }

    fn to_core(&self) -> Option<CoreRecord> {
        Some(CoreRecord {
            bytes: self.bytes.clone(),
            authenticated_service: self.authenticated_service.to_core()?,
        })
    }
}

fn record_arg(
    py: Python<'_>,
    record: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<AuthenticatedRecord>> {
    match record.filter(|r| !r.is_none()) {
        None => Ok(None),
        Some(record) => record
            .cast::<AuthenticatedRecord>()
            .map(|r| Some(r.get().clone()))
            .map_err(|_| {
                errors::invalid_input(
                    py,
                    format!(
                        "record must be an AuthenticatedRecord, not {}",
                        convert::type_name(record)
                    ),
                )
            }),
    }
}

fn outcome_new(
    py: Python<'_>,
    status: &Bound<'_, PyAny>,
    record: Option<AuthenticatedRecord>,
    statuses: &[&str],
    with_record: &[&str],
) -> PyResult<(String, Option<AuthenticatedRecord>)> {
    let status = convert::str_arg(py, status, "status")?.into_owned();
    if !statuses.contains(&status.as_str()) {
        return Err(errors::invalid_input(
            py,
            format!("status must be one of {statuses:?}, not {status:?}"),
        ));
    }
    if with_record.contains(&status.as_str()) != record.is_some() {
        return Err(errors::invalid_input(
            py,
            format!(
                "a {status:?} outcome {} a record",
                if record.is_some() {
                    "takes no"
                } else {
                    "needs"
                }
            ),
        ));
    }
    Ok((status, record))
}

/// `LookupOutcome(status, record=None)`: an Admission Log lookup result.
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug)]
pub struct LookupOutcome {
    #[pyo3(get)]
    status: String,
    #[pyo3(get)]
    record: Option<AuthenticatedRecord>,
}

#[pymethods]
impl LookupOutcome {
    #[new]
    #[pyo3(signature = (status, record = None))]
    fn py_new(
        py: Python<'_>,
        status: &Bound<'_, PyAny>,
        record: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let record = record_arg(py, record)?;
        let (status, record) = outcome_new(py, status, record, &LOOKUP_STATUSES, &["found"])?;
        Ok(Self { status, record })
    }

    fn __repr__(&self) -> String {
        format!("LookupOutcome(status={:?})", self.status)
    }
}

impl LookupOutcome {
    fn from_core(outcome: &CoreLookup) -> Self {
        let record = match outcome {
            CoreLookup::Found(record) => Some(AuthenticatedRecord::from_core(record)),
            _ => None,
        };
        Self {
            status: outcome.status().to_owned(),
            record,
        }
    }

    /// Read fail-closed by the core ([`CoreLookup::from_reply`]).
    fn to_core(&self) -> CoreLookup {
        let record = self.record.as_ref().and_then(AuthenticatedRecord::to_core);
        CoreLookup::from_reply(Some(&self.status), record)
    }
}

/// `AppendOutcome(status, record=None)`: an append-or-return-existing result.
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug)]
pub struct AppendOutcome {
    #[pyo3(get)]
    status: String,
    #[pyo3(get)]
    record: Option<AuthenticatedRecord>,
}

#[pymethods]
impl AppendOutcome {
    #[new]
    #[pyo3(signature = (status, record = None))]
    fn py_new(
        py: Python<'_>,
        status: &Bound<'_, PyAny>,
        record: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let record = record_arg(py, record)?;
        let (status, record) = outcome_new(
            py,
            status,
            record,
            &APPEND_STATUSES,
            &["committed", "existing"],
        )?;
        Ok(Self { status, record })
    }

    fn __repr__(&self) -> String {
        format!("AppendOutcome(status={:?})", self.status)
    }
}

impl AppendOutcome {
    fn from_core(outcome: &CoreAppend) -> Self {
        let record = match outcome {
            CoreAppend::Committed(record) | CoreAppend::Existing(record) => {
                Some(AuthenticatedRecord::from_core(record))
            }
            _ => None,
        };
        Self {
            status: outcome.status().to_owned(),
            record,
        }
    }

    /// Read fail-closed by the core ([`CoreAppend::from_reply`]).
    fn to_core(&self) -> CoreAppend {
        let record = self.record.as_ref().and_then(AuthenticatedRecord::to_core);
        CoreAppend::from_reply(Some(&self.status), record)
    }
}

/// `TrustedAcceptanceContext(admission_record_id, trusted_accepted_at, accepted_by)`: from a
/// trusted seam, never from the signer.
#[pyclass(module = "missionweaveprotocol._native", frozen, from_py_object)]
#[derive(Debug, Clone)]
pub struct TrustedAcceptanceContext {
    #[pyo3(get)]
    admission_record_id: String,
    #[pyo3(get)]
    trusted_accepted_at: String,
    #[pyo3(get)]
    accepted_by: PrincipalEvidence,
}

#[pymethods]
impl TrustedAcceptanceContext {
    #[new]
    fn py_new(
        py: Python<'_>,
        admission_record_id: &Bound<'_, PyAny>,
        trusted_accepted_at: &Bound<'_, PyAny>,
        accepted_by: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        Ok(Self {
            admission_record_id: convert::str_arg(py, admission_record_id, "admission_record_id")?
                .into_owned(),
            trusted_accepted_at: convert::str_arg(py, trusted_accepted_at, "trusted_accepted_at")?
                .into_owned(),
            accepted_by: principal_arg(py, accepted_by, "accepted_by")?,
        })
    }
}

impl TrustedAcceptanceContext {
    fn to_core(&self) -> Option<core_adm::TrustedAcceptanceContext> {
        Some(core_adm::TrustedAcceptanceContext {
            admission_record_id: self.admission_record_id.clone(),
            trusted_accepted_at: self.trusted_accepted_at.clone(),
            accepted_by: self.accepted_by.to_core()?,
        })
    }
}

/// A validated First-Admission Record.
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug)]
pub struct FirstAdmissionRecord {
    inner: core_adm::FirstAdmissionRecord,
}

#[pymethods]
impl FirstAdmissionRecord {
    #[getter]
    fn admission_record_id(&self) -> &str {
        &self.inner.admission_record_id
    }
    #[getter]
    fn organization_id(&self) -> &str {
        &self.inner.organization_id
    }
    #[getter]
    fn document_kind<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        PyEnum::SignedDocumentKind.member(py, self.inner.document_kind.as_str())
    }
    #[getter]
    fn signing_hash(&self) -> &str {
        &self.inner.signing_hash
    }
    #[getter]
    fn key_id(&self) -> &str {
        &self.inner.key_id
    }
    #[getter]
    fn principal(&self) -> PrincipalEvidence {
        PrincipalEvidence::from_core(&self.inner.principal)
    }
    #[getter]
    fn trusted_accepted_at(&self) -> ProtectedTime {
        ProtectedTime::from_core(&self.inner.trusted_accepted_at)
    }
    #[getter]
    fn accepted_by(&self) -> PrincipalEvidence {
        PrincipalEvidence::from_core(&self.inner.accepted_by)
    }
    /// The record as a JSON object (`first-admission-record.schema.json`).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_python(py, &self.inner.to_value())
    }
    /// The record bytes in the layout of the admission bundle's fixtures.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.to_bytes())
    }
}

/// A verified document anchored by a validated First-Admission Record.
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug)]
pub struct AdmittedDocument {
    #[pyo3(get)]
    record: Py<FirstAdmissionRecord>,
    bytes: Vec<u8>,
    #[pyo3(get)]
    existing: bool,
}

#[pymethods]
impl AdmittedDocument {
    /// The record bytes as the log returned them.
    #[getter]
    fn record_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.bytes)
    }

    /// The record parsed into plain Python values.
    fn record_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match parse(&self.bytes) {
            Ok(value) => convert::to_python(py, &value),
            Err(error) => Err(errors::parse_error(py, &error)),
        }
    }
}

fn admitted(py: Python<'_>, admitted: core_adm::AdmittedDocument) -> PyResult<AdmittedDocument> {
    Ok(AdmittedDocument {
        record: Py::new(
            py,
            FirstAdmissionRecord {
                inner: admitted.record,
            },
        )?,
        bytes: admitted.record_bytes,
        existing: admitted.existing,
    })
}

/// An in-memory Admission Log whose writes are attributed to one accepting service.
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug)]
pub struct InMemoryAdmissionLog {
    inner: core_adm::InMemoryAdmissionLog,
}

#[pymethods]
impl InMemoryAdmissionLog {
    #[new]
    fn py_new(py: Python<'_>, service: &Bound<'_, PyAny>) -> PyResult<Self> {
        let service = principal_arg(py, service, "service")?;
        let service = service
            .to_core()
            .ok_or_else(|| errors::invalid_input(py, "service is not a Principal"))?;
        Ok(Self {
            inner: core_adm::InMemoryAdmissionLog::new(service),
        })
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn lookup(
        &self,
        py: Python<'_>,
        organization_id: &Bound<'_, PyAny>,
        signing_hash: &Bound<'_, PyAny>,
    ) -> PyResult<LookupOutcome> {
        let organization_id = convert::str_arg(py, organization_id, "organization_id")?;
        let signing_hash = convert::str_arg(py, signing_hash, "signing_hash")?;
        Ok(LookupOutcome::from_core(
            &self.inner.lookup(&organization_id, &signing_hash),
        ))
    }

    fn append(
        &self,
        candidate: &Bound<'_, PyAny>,
        candidate_bytes: &Bound<'_, PyAny>,
    ) -> PyResult<AppendOutcome> {
        let py = candidate.py();
        let candidate = candidate
            .cast::<FirstAdmissionRecord>()
            .map_err(|_| errors::invalid_input(py, "candidate must be a FirstAdmissionRecord"))?;
        let bytes = convert::bytes_arg(py, candidate_bytes, "candidate_bytes", false)?;
        Ok(AppendOutcome::from_core(
            &self.inner.append(&candidate.get().inner, &bytes),
        ))
    }
}

/// The log argument: the native log, or any object with `lookup` and `append`.
enum Log<'a, 'py> {
    Native(&'a core_adm::InMemoryAdmissionLog),
    Python(PythonLog<'a, 'py>),
}

/// A duck-typed reply (any object with a `status` string and an optional `record`): read by the
/// core like a JavaScript log's plain-object reply, so both bindings agree. A record that is
/// not an `AuthenticatedRecord` with a usable service cannot be authenticated.
fn duck_reply<'py>(
    log: &PythonLog<'_, 'py>,
    reply: &Bound<'py, PyAny>,
) -> (Option<String>, Option<core_adm::AuthenticatedRecord>) {
    let status = log
        .called(reply.getattr("status"))
        .and_then(|s| s.extract::<String>().ok());
    let record = log.called(reply.getattr("record")).and_then(|r| {
        r.cast::<AuthenticatedRecord>()
            .ok()
            .and_then(|r| r.get().to_core())
    });
    (status, record)
}

/// A Python Admission Log. Outcome objects (or duck-typed replies) are read fail-closed by the
/// core; an exception raised by the log is `indeterminate`, except a `BaseException` that is not
/// an `Exception` (`KeyboardInterrupt`, `SystemExit`): the core's trait cannot carry it, so it is
/// kept here and raised once the core returns.
struct PythonLog<'a, 'py> {
    object: &'a Bound<'py, PyAny>,
    interrupt: RefCell<Option<PyErr>>,
}

impl<'py> PythonLog<'_, 'py> {
    /// The result of a call into the log, `None` when it raised (fail closed); an interrupt is
    /// kept for [`Log::take_interrupt`].
    fn called(&self, result: PyResult<Bound<'py, PyAny>>) -> Option<Bound<'py, PyAny>> {
        match result {
            Ok(value) => Some(value),
            Err(error) => {
                if is_interrupt(self.object.py(), &error) {
                    self.interrupt.borrow_mut().get_or_insert(error);
                }
                None
            }
        }
    }
}

impl AdmissionLog for PythonLog<'_, '_> {
    fn lookup(&self, organization_id: &str, signing_hash: &str) -> CoreLookup {
        self.called(
            self.object
                .call_method1("lookup", (organization_id, signing_hash)),
        )
        .map(|r| match r.cast::<LookupOutcome>() {
            Ok(outcome) => outcome.get().to_core(),
            Err(_) => {
                let (status, record) = duck_reply(self, &r);
                CoreLookup::from_reply(status.as_deref(), record)
            }
        })
        .unwrap_or_else(|| CoreLookup::from_reply(None, None))
    }

    fn append(
        &self,
        candidate: &core_adm::FirstAdmissionRecord,
        candidate_bytes: &[u8],
    ) -> CoreAppend {
        let py = self.object.py();
        let Ok(record) = Py::new(
            py,
            FirstAdmissionRecord {
                inner: candidate.clone(),
            },
        ) else {
            return CoreAppend::Indeterminate;
        };
        self.called(
            self.object
                .call_method1("append", (record, PyBytes::new(py, candidate_bytes))),
        )
        .map(|r| match r.cast::<AppendOutcome>() {
            Ok(outcome) => outcome.get().to_core(),
            Err(_) => {
                let (status, record) = duck_reply(self, &r);
                CoreAppend::from_reply(status.as_deref(), record)
            }
        })
        .unwrap_or_else(|| CoreAppend::from_reply(None, None))
    }
}

impl<'a, 'py> Log<'a, 'py> {
    fn extract(py: Python<'py>, object: &'a Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(native) = object.cast::<InMemoryAdmissionLog>() {
            return Ok(Self::Native(&native.get().inner));
        }
        if object.hasattr("lookup")? && object.hasattr("append")? {
            return Ok(Self::Python(PythonLog {
                object,
                interrupt: RefCell::new(None),
            }));
        }
        Err(errors::invalid_input(
            py,
            format!(
                "log must be an AdmissionLog (lookup and append), not {}",
                convert::type_name(object)
            ),
        ))
    }

    fn as_dyn(&self) -> &dyn AdmissionLog {
        match self {
            Self::Native(native) => *native,
            Self::Python(python) => python,
        }
    }

    /// The `KeyboardInterrupt`/`SystemExit` a Python log raised during the last call into the
    /// core, to be raised instead of the core's (fail-closed) result.
    fn take_interrupt(&self) -> Option<PyErr> {
        match self {
            Self::Native(_) => None,
            Self::Python(python) => python.interrupt.borrow_mut().take(),
        }
    }
}

fn verified_arg<'a>(
    py: Python<'_>,
    verified: &'a Bound<'_, PyAny>,
) -> PyResult<&'a VerifiedSignedDocument> {
    verified
        .cast::<VerifiedSignedDocument>()
        .map(|v| v.get())
        .map_err(|_| {
            errors::invalid_input(
                py,
                format!(
                    "verified must be a VerifiedSignedDocument, not {}",
                    convert::type_name(verified)
                ),
            )
        })
}

/// First admission of a verified document; `context` (a `TrustedAcceptanceContext` or a
/// callable returning one) is used only on authoritative absence.
#[pyfunction]
pub fn admit_first(
    py: Python<'_>,
    verified: &Bound<'_, PyAny>,
    log: &Bound<'_, PyAny>,
    context: &Bound<'_, PyAny>,
) -> PyResult<AdmittedDocument> {
    let verified = verified_arg(py, verified)?;
    let log = Log::extract(py, log)?;
    if !context.is_instance_of::<TrustedAcceptanceContext>() && !context.is_callable() {
        return Err(errors::invalid_input(
            py,
            "context must be a TrustedAcceptanceContext or a callable returning one",
        ));
    }
    let mut failure: Option<PyErr> = None;
    let mut supply = || {
        let produced = if context.is_instance_of::<TrustedAcceptanceContext>() {
            Ok(context.clone())
        } else {
            context.call0()
        };
        let context = produced.and_then(|c| {
            c.extract::<TrustedAcceptanceContext>().map_err(|_| {
                errors::invalid_input(py, "context() must return a TrustedAcceptanceContext")
            })
        });
        match context.map(|c| c.to_core()) {
            Ok(Some(core)) => core,
            Ok(None) => unusable_context(),
            Err(error) => {
                failure = Some(error);
                unusable_context()
            }
        }
    };
    let result = core_adm::admit_first(&verified.inner, log.as_dyn(), &mut supply);
    if let Some(interrupt) = log.take_interrupt() {
        return Err(interrupt);
    }
    if let Some(error) = failure {
        return Err(error);
    }
    match result {
        Ok(document) => admitted(py, document),
        Err(error) => Err(errors::admission_error(py, &error)),
    }
}

/// Stands in for a context the caller could not supply: its empty time fails closed as
/// malformed trusted time, and the caller's exception is raised instead of that result.
fn unusable_context() -> core_adm::TrustedAcceptanceContext {
    core_adm::TrustedAcceptanceContext {
        admission_record_id: String::new(),
        trusted_accepted_at: String::new(),
        accepted_by: missionweaveprotocol::Principal::new(
            missionweaveprotocol::PrincipalType::Service,
            "",
        ),
    }
}

/// Historical replay: a record must already exist; nothing is appended.
#[pyfunction]
pub fn replay_historical(
    py: Python<'_>,
    verified: &Bound<'_, PyAny>,
    log: &Bound<'_, PyAny>,
) -> PyResult<AdmittedDocument> {
    let verified = verified_arg(py, verified)?;
    let log = Log::extract(py, log)?;
    let result = core_adm::replay_historical(&verified.inner, log.as_dyn());
    if let Some(interrupt) = log.take_interrupt() {
        return Err(interrupt);
    }
    match result {
        Ok(document) => admitted(py, document),
        Err(error) => Err(errors::admission_error(py, &error)),
    }
}

/// Validates a record an Admission Log returned against the six-stage evidence.
#[pyfunction]
pub fn validate_record(
    py: Python<'_>,
    record: &Bound<'_, PyAny>,
    verified: &Bound<'_, PyAny>,
) -> PyResult<FirstAdmissionRecord> {
    let verified = verified_arg(py, verified)?;
    let record = record
        .extract::<AuthenticatedRecord>()
        .map_err(|_| errors::invalid_input(py, "record must be an AuthenticatedRecord"))?;
    let core = record
        .to_core()
        .ok_or_else(|| errors::invalid_input(py, "authenticated_service is not a Principal"))?;
    core_adm::validate_record(&core, &verified.inner)
        .map(|inner| FirstAdmissionRecord { inner })
        .map_err(|e| errors::admission_error(py, &e))
}
