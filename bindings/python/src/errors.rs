//! The one place where core errors become Python exceptions, generically: every core error
//! describes itself ([`DescribeError`]: class, wire code, reason slug, message, stage,
//! structured fields), and [`describe`] turns any of them into the exception class the core
//! names, defined in `missionweaveprotocol/errors.py`. There is no per-variant table here; the
//! named functions below are one-line conveniences for the call sites.

use missionweaveprotocol::admission::AdmissionError;
use missionweaveprotocol::bundle::BundleVerificationError;
use missionweaveprotocol::json::{CanonicalError, ParseError};
use missionweaveprotocol::schema::SchemaIssue;
use missionweaveprotocol::schema_formats::TimestampError;
use missionweaveprotocol::signed_documents::{SigningError, VerificationError};
use missionweaveprotocol::wire::FrameError;
use missionweaveprotocol::{ArgumentError, DescribeError, ErrorClass, FieldValue, Stage};
use missionweaveprotocol_agent::auth::AuthError;
use missionweaveprotocol_agent::replay::{LocalStoreError, ReplayError};
use missionweaveprotocol_agent::runtime::AgentError;
use missionweaveprotocol_kernel::budget::BudgetError;
use missionweaveprotocol_kernel::delegation::DelegationViolation;
use missionweaveprotocol_kernel::lease::{LeaseDocumentError, LeaseError};
use missionweaveprotocol_kernel::offline::OfflineError;
use missionweaveprotocol_kernel::retry::RetryError;
use missionweaveprotocol_kernel::scheduler::SchedulerError;
use missionweaveprotocol_kernel::snapshot_json::SnapshotFormatError;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

const ERRORS_MODULE: &str = "missionweaveprotocol.errors";

static CLASSES: [PyOnceLock<Py<PyType>>; ErrorClass::ALL.len()] =
    [const { PyOnceLock::new() }; ErrorClass::ALL.len()];

fn class_object<'py>(py: Python<'py>, class: ErrorClass) -> PyResult<&'py Bound<'py, PyType>> {
    let index = ErrorClass::ALL
        .iter()
        .position(|c| *c == class)
        .unwrap_or_default();
    CLASSES[index].import(py, ERRORS_MODULE, class.python_name())
}

pub(crate) fn field<'py>(py: Python<'py>, value: &FieldValue) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        FieldValue::Text(text) => text.into_pyobject(py)?.into_any(),
        FieldValue::Integer(n) => n.into_pyobject(py)?.into_any(),
        FieldValue::Bool(flag) => flag.into_pyobject(py)?.to_owned().into_any(),
        FieldValue::Texts(items) => PyTuple::new(py, items)?.into_any(),
        // The reference's `AccountRef`: `("mission" | "work_item", id)`.
        FieldValue::Account { kind, id } => PyTuple::new(py, [*kind, id.as_str()])?.into_any(),
    })
}

/// The exception instance for any core error (not raised): for batch results.
pub fn exception<'py>(py: Python<'py>, error: &dyn DescribeError) -> PyResult<Bound<'py, PyAny>> {
    let cls = class_object(py, error.class())?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("code", error.wire_code().as_str())?;
    kwargs.set_item("stage", error.stage().map(Stage::as_str))?;
    kwargs.set_item("reason", error.reason())?;
    kwargs.set_item("detail", error.detail())?;
    kwargs.set_item("retryable", error.retryable())?;
    let fields = PyDict::new(py);
    for (name, value) in error.fields().iter() {
        fields.set_item(*name, field(py, value)?)?;
    }
    kwargs.set_item("fields", fields)?;
    cls.call_method("_from_core", (error.to_string(),), Some(&kwargs))
}

/// Any core error as a raised exception. If the exception class itself cannot be built, that
/// failure is returned instead (never a panic).
pub fn describe(py: Python<'_>, error: &dyn DescribeError) -> PyErr {
    exception(py, error)
        .map(PyErr::from_value)
        .unwrap_or_else(|e| e)
}

/// Bad input from Python (wrong type, shape or range): `InvalidInputError` (a `TypeError` and
/// a `ValueError`), `PROTOCOL_VIOLATION`, reason `invalid-argument`.
pub fn invalid_input(py: Python<'_>, text: impl AsRef<str>) -> PyErr {
    describe(py, &ArgumentError::general(text.as_ref()))
}

/// Converts a pyo3 argument-conversion `TypeError` into `InvalidInputError`.
pub fn retype(py: Python<'_>, error: PyErr) -> PyErr {
    if error.is_instance_of::<PyTypeError>(py) {
        invalid_input(py, error.value(py).to_string())
    } else {
        error
    }
}

/// A Python value that has no JSON form (stage `canonicalization`).
pub fn canonical_text(py: Python<'_>, text: &str) -> PyErr {
    describe(py, &CanonicalError::NotJson(text.to_owned()))
}

/// A signing input that is not a JSON object of JSON values: it would fail at stage `schema`.
pub fn signing_text(py: Python<'_>, text: &str) -> PyErr {
    describe(py, &SigningError::new(Stage::Schema, text))
}

/// A bundle root that cannot be opened.
pub fn bundle_text(py: Python<'_>, text: &str) -> PyErr {
    describe(
        py,
        &BundleVerificationError {
            problems: vec![text.to_owned()],
        },
    )
}

/// The exception instance of a verification failure, for batch results.
pub fn verification_exception<'py>(
    py: Python<'py>,
    error: &VerificationError,
) -> PyResult<Bound<'py, PyAny>> {
    exception(py, error)
}

macro_rules! conveniences {
    ($($(#[$doc:meta])* $name:ident: $ty:ty;)*) => {
        $(
            $(#[$doc])*
            pub fn $name(py: Python<'_>, error: &$ty) -> PyErr {
                describe(py, error)
            }
        )*
    };
}

conveniences! {
    /// Strict parsing failed (stage `parse`).
    parse_error: ParseError;
    /// A value outside the I-JSON data model (stage `canonicalization`).
    canonical_error: CanonicalError;
    /// An instance does not match its schema.
    schema_issue: SchemaIssue;
    /// A six-stage verification failure.
    verification_error: VerificationError;
    /// Signing refused.
    signing_error: SigningError;
    /// Admission failed.
    admission_error: AdmissionError;
    /// The bundle failed its integrity checks.
    bundle_error: BundleVerificationError;
    /// A frame failed strict parsing or the frame schema.
    frame_error: FrameError;
    /// A timestamp outside the protocol's RFC 3339 profile.
    timestamp_error: TimestampError;
    /// A lease document that cannot be read back: described by the error inside it (the core's
    /// `DescribeError` for `LeaseDocumentError` delegates), as in every binding.
    lease_document_error: LeaseDocumentError;
    /// A lease operation or lease-bound Command refused.
    lease_error: LeaseError;
    /// A ledger failure.
    budget_error: BudgetError;
    /// A refused Grant use.
    delegation_violation: DelegationViolation;
    /// A retry-controller refusal.
    retry_error: RetryError;
    /// A Scheduler refusal.
    scheduler_error: SchedulerError;
    /// A malformed budget snapshot document.
    budget_snapshot_error: SnapshotFormatError;
    /// A malformed scheduler snapshot document.
    scheduler_snapshot_error: SnapshotFormatError;
    /// A refused authentication step (`AuthenticationError`).
    auth_error: AuthError;
    /// An Agent runtime refusal (`ActiveSessionError`, …, or `AgentError`).
    agent_error: AgentError;
    /// An offline refusal (`OfflinePolicyError`).
    offline_error: OfflineError;
    /// A replay stopped (`ReplayGroupError`, …; a store or snapshot failure as its own class).
    replay_error: ReplayError;
    /// An Agent-local store refusal (`LocalStoreError`).
    local_store_error: LocalStoreError;
}
