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
        }
    }
}

static CLASSES: [PyOnceLock<Py<PyType>>; 10] = [const { PyOnceLock::new() }; 10];

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
