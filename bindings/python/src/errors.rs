//! The one place where core errors become Python exceptions. The exception classes are defined
//! in `missionweaveprotocol/errors.py`; this module picks the class and passes the wire code,
//! stage, protected reason/detail and `retryable` the core reports.

use missionweaveprotocol::WireCode;
use missionweaveprotocol::admission::AdmissionError;
use missionweaveprotocol::bundle::BundleVerificationError;
use missionweaveprotocol::json::{CanonicalError, ParseError};
use missionweaveprotocol::schema::SchemaIssue;
use missionweaveprotocol::schema_formats::TimestampError;
use missionweaveprotocol::signed_documents::{SigningError, VerificationError};
use missionweaveprotocol::wire::FrameError;
use missionweaveprotocol_authority::budget::{AccountId, AccountKind, BudgetError};
use missionweaveprotocol_authority::delegation::DelegationViolation;
use missionweaveprotocol_authority::execution::RetryError;
use missionweaveprotocol_authority::lease::LeaseError;
use missionweaveprotocol_authority::resources::Dimension;
use missionweaveprotocol_authority::scheduler::SchedulerError;
use missionweaveprotocol_authority::snapshot_json::SnapshotFormatError;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyString, PyTuple, PyType};

const ERRORS_MODULE: &str = "missionweaveprotocol.errors";

/// The Python exception classes, by name in `errors.py`.
#[derive(Debug, Clone, Copy)]
enum Class {
    InvalidInput,
    JsonParse,
    Canonicalization,
    SchemaValidation,
    Verification,
    Signing,
    Admission,
    Bundle,
    Frame,
    Timestamp,
    Lease,
    BudgetLedger,
    Delegation,
    Policy,
    RetryExhausted,
    Scheduler,
    SchedulerState,
}

impl Class {
    const fn name(self) -> &'static str {
        match self {
            Self::InvalidInput => "InvalidInputError",
            Self::JsonParse => "JsonParseError",
            Self::Canonicalization => "CanonicalizationError",
            Self::SchemaValidation => "SchemaValidationError",
            Self::Verification => "SignedDocumentVerificationError",
            Self::Signing => "SignedDocumentSigningError",
            Self::Admission => "AdmissionError",
            Self::Bundle => "BundleVerificationError",
            Self::Frame => "FrameError",
            Self::Timestamp => "TimestampError",
            Self::Lease => "LeaseError",
            Self::BudgetLedger => "BudgetLedgerError",
            Self::Delegation => "DelegationViolation",
            Self::Policy => "PolicyError",
            Self::RetryExhausted => "RetryExhausted",
            Self::Scheduler => "SchedulerError",
            Self::SchedulerState => "SchedulerStateError",
        }
    }
}

static CLASSES: [PyOnceLock<Py<PyType>>; 17] = [const { PyOnceLock::new() }; 17];

/// Instantiates `class(*args, **kwargs)` as a `PyErr`. If the class itself cannot be loaded, the
/// failure to load it is returned instead (never a panic).
fn raise<'py>(
    py: Python<'py>,
    class: Class,
    args: Bound<'py, PyTuple>,
    kwargs: &[(&str, Bound<'py, PyAny>)],
) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let cls = CLASSES[class as usize].import(py, ERRORS_MODULE, class.name())?;
        let dict = PyDict::new(py);
        for (name, value) in kwargs {
            dict.set_item(*name, value)?;
        }
        Ok(PyErr::from_value(cls.call(args, Some(&dict))?))
    };
    build().unwrap_or_else(|error| error)
}

fn common<'py>(
    py: Python<'py>,
    code: WireCode,
    stage: Option<&str>,
    reason: Option<&str>,
    detail: Option<&str>,
    retryable: bool,
) -> Vec<(&'static str, Bound<'py, PyAny>)> {
    let text = |t: Option<&str>| match t {
        Some(t) => PyString::new(py, t).into_any(),
        None => py.None().into_bound(py),
    };
    vec![
        ("code", text(Some(code.as_str()))),
        ("stage", text(stage)),
        ("reason", text(reason)),
        ("detail", text(detail)),
        (
            "retryable",
            PyBool::new(py, retryable).to_owned().into_any(),
        ),
    ]
}

fn message<'py>(py: Python<'py>, text: &str) -> Bound<'py, PyTuple> {
    PyTuple::new(py, [text]).unwrap_or_else(|_| PyTuple::empty(py))
}

/// Bad input from Python (wrong type, wrong length): `InvalidInputError` (a `TypeError` and a
/// `ValueError`), `PROTOCOL_VIOLATION`.
pub fn invalid_input(py: Python<'_>, text: impl AsRef<str>) -> PyErr {
    let text = text.as_ref();
    let kwargs = common(
        py,
        WireCode::ProtocolViolation,
        None,
        None,
        Some(text),
        false,
    );
    raise(py, Class::InvalidInput, message(py, text), &kwargs)
}

/// Strict parsing failed (stage `parse`).
pub fn parse_error(py: Python<'_>, error: &ParseError) -> PyErr {
    let text = error.to_string();
    let kwargs = common(
        py,
        missionweaveprotocol::Stage::Parse.wire_code(),
        Some("parse"),
        Some("invalid-json"),
        Some(&text),
        false,
    );
    raise(py, Class::JsonParse, message(py, &text), &kwargs)
}

/// The value is outside the I-JSON data model (stage `canonicalization`).
pub fn canonical_error(py: Python<'_>, error: &CanonicalError) -> PyErr {
    canonical_text(py, &error.to_string())
}

/// A Python value that has no JSON form (stage `canonicalization`).
pub fn canonical_text(py: Python<'_>, text: &str) -> PyErr {
    let kwargs = common(
        py,
        missionweaveprotocol::Stage::Canonicalization.wire_code(),
        Some("canonicalization"),
        Some("outside-i-json"),
        Some(text),
        false,
    );
    raise(py, Class::Canonicalization, message(py, text), &kwargs)
}

/// An instance does not match its schema.
pub fn schema_issue(py: Python<'_>, issue: &SchemaIssue) -> PyErr {
    let text = issue.to_string();
    let mut kwargs = common(
        py,
        missionweaveprotocol::Stage::Schema.wire_code(),
        Some("schema"),
        Some(issue.keyword),
        Some(&text),
        false,
    );
    for (name, value) in [
        ("instance_path", issue.instance_path.as_str()),
        ("schema_location", issue.schema_location.as_str()),
    ] {
        kwargs.push((name, PyString::new(py, value).into_any()));
    }
    raise(py, Class::SchemaValidation, message(py, &text), &kwargs)
}

/// A six-stage verification failure: `SignedDocumentVerificationError(stage, reason, detail)`.
pub fn verification_error(py: Python<'_>, error: &VerificationError) -> PyErr {
    verification_exception(py, error)
        .map(PyErr::from_value)
        .unwrap_or_else(|e| e)
}

/// The exception instance (not raised), for batch results.
pub fn verification_exception<'py>(
    py: Python<'py>,
    error: &VerificationError,
) -> PyResult<Bound<'py, PyAny>> {
    let cls = CLASSES[Class::Verification as usize].import(
        py,
        ERRORS_MODULE,
        Class::Verification.name(),
    )?;
    let args = PyTuple::new(
        py,
        [error.stage.as_str(), error.reason, error.detail.as_str()],
    )?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("code", error.wire_code().as_str())?;
    kwargs.set_item("retryable", error.retryable())?;
    cls.call(args, Some(&kwargs))
}

/// Signing refused: `SignedDocumentSigningError`, with the stage the document would fail at.
pub fn signing_error(py: Python<'_>, error: &SigningError) -> PyErr {
    let text = error.to_string();
    let kwargs = common(
        py,
        error.stage.wire_code(),
        Some(error.stage.as_str()),
        None,
        Some(&error.detail),
        false,
    );
    raise(py, Class::Signing, message(py, &text), &kwargs)
}

/// A signing input that is not a JSON object of JSON values.
pub fn signing_text(py: Python<'_>, text: &str) -> PyErr {
    let kwargs = common(
        py,
        missionweaveprotocol::Stage::Schema.wire_code(),
        Some("schema"),
        None,
        Some(text),
        false,
    );
    raise(py, Class::Signing, message(py, text), &kwargs)
}

/// Admission failed: `AdmissionError`, stage `admission`, `AUTH_INVALID_SIGNATURE`.
pub fn admission_error(py: Python<'_>, error: &AdmissionError) -> PyErr {
    let text = error.to_string();
    let kwargs = common(
        py,
        error.wire_code(),
        Some(error.stage().as_str()),
        Some(error.reason.as_str()),
        Some(&error.detail),
        false,
    );
    raise(py, Class::Admission, message(py, &text), &kwargs)
}

/// The bundle failed its integrity checks. A local fault, never fixed by retrying.
pub fn bundle_error(py: Python<'_>, error: &BundleVerificationError) -> PyErr {
    let text = error.to_string();
    let mut kwargs = common(py, WireCode::InternalError, None, None, Some(&text), false);
    if let Ok(problems) = PyTuple::new(py, &error.problems) {
        kwargs.push(("problems", problems.into_any()));
    }
    raise(py, Class::Bundle, message(py, &text), &kwargs)
}

/// A bundle root that cannot be opened.
pub fn bundle_text(py: Python<'_>, text: &str) -> PyErr {
    let mut kwargs = common(py, WireCode::InternalError, None, None, Some(text), false);
    if let Ok(problems) = PyTuple::new(py, [text]) {
        kwargs.push(("problems", problems.into_any()));
    }
    raise(py, Class::Bundle, message(py, text), &kwargs)
}

/// A frame failed strict parsing or the frame schema.
pub fn frame_error(py: Python<'_>, error: &FrameError) -> PyErr {
    let text = error.to_string();
    let kwargs = common(
        py,
        error.code,
        None,
        None,
        Some(&error.detail),
        error.code.retryable(),
    );
    raise(py, Class::Frame, message(py, &text), &kwargs)
}

/// A timestamp outside the protocol's RFC 3339 profile.
pub fn timestamp_error(py: Python<'_>, error: &TimestampError) -> PyErr {
    let text = error.to_string();
    let kwargs = common(
        py,
        WireCode::SchemaValidationFailed,
        Some("schema"),
        None,
        Some(&text),
        false,
    );
    raise(py, Class::Timestamp, message(py, &text), &kwargs)
}

/// Converts a pyo3 argument-conversion `TypeError` into `InvalidInputError`.
pub fn retype(py: Python<'_>, error: PyErr) -> PyErr {
    if error.is_instance_of::<PyTypeError>(py) {
        invalid_input(py, error.value(py).to_string())
    } else {
        error
    }
}

/// The bounded-authority and scheduling errors: `kind` names the rule, `code` is the core's
/// §19 code, `reason` repeats `kind`, `detail` is the message; `extra` adds class-specific fields.
fn authority_error<'py>(
    py: Python<'py>,
    class: Class,
    code: &str,
    kind: &str,
    text: &str,
    extra: Vec<(&'static str, Bound<'py, PyAny>)>,
) -> PyErr {
    let code = WireCode::parse(code).unwrap_or(WireCode::InternalError);
    let mut kwargs = common(py, code, None, Some(kind), Some(text), code.retryable());
    kwargs.push(("kind", PyString::new(py, kind).into_any()));
    kwargs.extend(extra);
    let full = format!("{}: {text}", code.as_str());
    raise(py, class, message(py, &full), &kwargs)
}

fn dimension_extra(py: Python<'_>, d: Option<Dimension>) -> Vec<(&'static str, Bound<'_, PyAny>)> {
    d.map(|d| {
        vec![(
            "dimension",
            PyString::new(py, crate::resources::dimension_name(d)).into_any(),
        )]
    })
    .unwrap_or_default()
}

/// A lease document that cannot be read back: a parse error, a schema error, or the
/// `LeaseError` of the rule it breaks.
pub fn lease_document_error(
    py: Python<'_>,
    error: &missionweaveprotocol_authority::lease::LeaseDocumentError,
) -> PyErr {
    use missionweaveprotocol_authority::lease::LeaseDocumentError as E;
    match error {
        E::Parse(parse) => parse_error(py, parse),
        E::Schema(issue) => schema_issue(py, issue),
        E::Precision(field) => lease_error(py, &LeaseError::InvalidField(field)),
        E::Inconsistent(inner) => lease_error(py, inner),
    }
}

/// A lease operation or lease-bound Command refused: `LeaseError`.
pub fn lease_error(py: Python<'_>, error: &LeaseError) -> PyErr {
    let (kind, text) = match error {
        LeaseError::InvalidField(f) => ("invalid_field", format!("invalid {f}")),
        LeaseError::InvalidWindow => (
            "invalid_window",
            "the instants do not satisfy issuedAt ≤ startsAt < expiresAt (or a deadline lies outside the window, or the time is before the lease starts)".to_owned(),
        ),
        LeaseError::Expired => ("expired", "the lease has expired".to_owned()),
        LeaseError::Closed(state) => (
            "closed",
            format!("the lease is already {}", state.as_str()),
        ),
        LeaseError::ClosureConflict => (
            "closure_conflict",
            "the lease is already closed differently; closure is immutable".to_owned(),
        ),
        LeaseError::NonMonotonicRenewal => (
            "non_monotonic_renewal",
            "a renewal must be strictly after the previous one and not before the start".to_owned(),
        ),
        LeaseError::NotExtending => (
            "not_extending",
            "a renewal must strictly extend expiresAt and stay within the grace bound".to_owned(),
        ),
        LeaseError::StaleLease => ("stale_lease", "the Command cites another Lease ID".to_owned()),
        LeaseError::StaleOwnership => (
            "stale_ownership",
            "the Command's Ownership Epoch is fenced".to_owned(),
        ),
        LeaseError::StaleSession => (
            "stale_session",
            "the Command's Session Epoch is fenced".to_owned(),
        ),
        LeaseError::StaleCoordinator => (
            "stale_coordinator",
            "the Command's Coordinator Epoch is fenced".to_owned(),
        ),
        LeaseError::WrongHolder => (
            "wrong_holder",
            "the acting Agent does not hold the lease".to_owned(),
        ),
        LeaseError::UnrenderableTimestamp => (
            "unrenderable_timestamp",
            "a timestamp lies outside years 0001-9999".to_owned(),
        ),
    };
    authority_error(py, Class::Lease, error.code(), kind, &text, Vec::new())
}

fn account_tuple<'py>(py: Python<'py>, account: &AccountId) -> Bound<'py, PyAny> {
    let kind = match account.kind {
        AccountKind::Mission => "mission",
        AccountKind::WorkItem => "work_item",
    };
    PyTuple::new(py, [kind, account.id.as_str()])
        .map(Bound::into_any)
        .unwrap_or_else(|_| py.None().into_bound(py))
}

/// A ledger failure: `BudgetLedgerError` with `dimension` and `account` where they apply.
pub fn budget_error(py: Python<'_>, error: &BudgetError) -> PyErr {
    let (kind, text, account, dimension) = match error {
        BudgetError::Exceeded { account, dimension } => (
            "exceeded",
            format!(
                "charging would exceed the {} limit of {} {:?}",
                crate::resources::dimension_name(*dimension),
                account_kind(account),
                account.id
            ),
            Some(account),
            Some(*dimension),
        ),
        BudgetError::AllocationExceeded { parent, dimension } => (
            "allocation_exceeded",
            format!(
                "the {} limit does not fit in what {} {:?} has left unreserved",
                crate::resources::dimension_name(*dimension),
                account_kind(parent),
                parent.id
            ),
            Some(parent),
            Some(*dimension),
        ),
        BudgetError::UnknownAccount(a) => (
            "unknown_account",
            format!("no {} {:?}", account_kind(a), a.id),
            Some(a),
            None,
        ),
        BudgetError::Duplicate(a) => (
            "duplicate",
            format!("{} {:?} is already registered", account_kind(a), a.id),
            Some(a),
            None,
        ),
        BudgetError::CrossMissionParent(a) => (
            "cross_mission_parent",
            format!(
                "the parent WorkItem of {:?} belongs to another Mission",
                a.id
            ),
            Some(a),
            None,
        ),
        BudgetError::Currency(a) => (
            "currency",
            format!(
                "{} {:?}: a financial limit needs a currency, and a child Mission must use its parent's",
                account_kind(a),
                a.id
            ),
            Some(a),
            None,
        ),
        BudgetError::UnsafeInteger(d) => (
            "unsafe_integer",
            format!("{} exceeds 2^53 - 1", crate::resources::dimension_name(*d)),
            None,
            Some(*d),
        ),
        BudgetError::ZeroDelta => (
            "zero_delta",
            "a usage record must carry a nonzero delta".to_owned(),
            None,
            None,
        ),
        BudgetError::Cycle(a) => (
            "cycle",
            format!(
                "the snapshot's parent links form a cycle through {:?}",
                a.id
            ),
            Some(a),
            None,
        ),
        BudgetError::CorruptTotals(a) => (
            "corrupt_totals",
            format!("the snapshot's totals are inconsistent at {:?}", a.id),
            Some(a),
            None,
        ),
    };
    let mut extra = dimension_extra(py, dimension);
    if let Some(a) = account {
        extra.push(("account", account_tuple(py, a)));
    }
    authority_error(py, Class::BudgetLedger, error.code(), kind, &text, extra)
}

fn account_kind(a: &AccountId) -> &'static str {
    match a.kind {
        AccountKind::Mission => "Mission",
        AccountKind::WorkItem => "WorkItem",
    }
}

/// A snapshot document of the wrong shape, raised as `class` (`BudgetLedgerError` or
/// `SchedulerError`) with kind `malformed_snapshot` and the JSON Pointer in `path`.
fn snapshot_error(py: Python<'_>, class: Class, error: &SnapshotFormatError) -> PyErr {
    let extra = vec![("path", PyString::new(py, &error.path).into_any())];
    authority_error(
        py,
        class,
        error.code(),
        "malformed_snapshot",
        &error.to_string(),
        extra,
    )
}

/// A malformed budget snapshot document.
pub fn budget_snapshot_error(py: Python<'_>, error: &SnapshotFormatError) -> PyErr {
    snapshot_error(py, Class::BudgetLedger, error)
}

/// A malformed scheduler snapshot document.
pub fn scheduler_snapshot_error(py: Python<'_>, error: &SnapshotFormatError) -> PyErr {
    snapshot_error(py, Class::Scheduler, error)
}

/// A refused Grant use: `DelegationViolation` with `kind` and (for budgets) `dimension`.
pub fn delegation_violation(py: Python<'_>, v: &DelegationViolation) -> PyErr {
    let mut extra = dimension_extra(py, v.dimension);
    extra.push(("message", PyString::new(py, &v.message).into_any()));
    authority_error(
        py,
        Class::Delegation,
        v.code(),
        v.kind.as_str(),
        &v.message,
        extra,
    )
}

/// A retry-controller refusal: `RetryExhausted` when the loop is over for good, otherwise
/// `PolicyError`.
pub fn retry_error(py: Python<'_>, error: &RetryError) -> PyErr {
    let (class, kind, text, dimension) = match error {
        RetryError::InvalidArgument(f) => (
            Class::Policy,
            "invalid_argument",
            format!("invalid {f}"),
            None,
        ),
        RetryError::AttemptInFlight => (
            Class::Policy,
            "attempt_in_flight",
            "an attempt is already running".to_owned(),
            None,
        ),
        RetryError::NoAttemptInFlight => (
            Class::Policy,
            "no_attempt_in_flight",
            "no attempt is running".to_owned(),
            None,
        ),
        RetryError::Finished(reason) if reason.is_failure() => (
            Class::RetryExhausted,
            reason.as_str(),
            format!("the retry loop ended: {}", reason.as_str()),
            None,
        ),
        RetryError::Finished(reason) => (
            Class::Policy,
            reason.as_str(),
            format!("the retry loop ended: {}", reason.as_str()),
            None,
        ),
        RetryError::BackoffPending(at) => (
            Class::Policy,
            "backoff_pending",
            format!("the next attempt may start at {at}"),
            None,
        ),
        RetryError::DeadlineExhausted => (
            Class::RetryExhausted,
            "deadline_exhausted",
            "the contract deadline has passed".to_owned(),
            None,
        ),
        RetryError::BudgetExceeded(d) => (
            Class::Policy,
            "budget_exceeded",
            format!(
                "charging would exceed the {} cost budget",
                crate::resources::dimension_name(*d)
            ),
            Some(*d),
        ),
    };
    let extra = dimension_extra(py, dimension);
    authority_error(py, class, error.code(), kind, &text, extra)
}

/// A Scheduler refusal: `SchedulerStateError` for state and run problems, `SchedulerError` for
/// bad arguments, unsafe checkpoints and corrupt snapshots.
pub fn scheduler_error(py: Python<'_>, error: &SchedulerError) -> PyErr {
    let (class, kind, text) = match error {
        SchedulerError::UnknownWork(id) => (
            Class::SchedulerState,
            "unknown_work",
            format!("no non-terminal WorkItem {id:?} in this Scheduler"),
        ),
        SchedulerError::StaleRun { current, reported } => (
            Class::SchedulerState,
            "stale_run",
            format!("the report names run {reported}, the current run is {current}"),
        ),
        SchedulerError::InvalidTransition(state) => (
            Class::SchedulerState,
            "invalid_transition",
            format!("not allowed while the WorkItem is {}", state.as_str()),
        ),
        SchedulerError::UnsafeCheckpoint => (
            Class::Scheduler,
            "unsafe_checkpoint",
            "a checkpoint must be durable and safe to release a slot or resume from".to_owned(),
        ),
        SchedulerError::InvalidArgument(f) => {
            (Class::Scheduler, "invalid_argument", format!("invalid {f}"))
        }
        SchedulerError::CorruptSnapshot(t) => (
            Class::Scheduler,
            "corrupt_snapshot",
            format!("the snapshot cannot be restored: {t}"),
        ),
    };
    authority_error(py, class, error.code(), kind, &text, Vec::new())
}
