//! Immutable evidence values (the reference's frozen dataclasses) and the Python enums they use.

use missionweaveprotocol::principal::{Principal, PrincipalType};
use missionweaveprotocol::schema_formats::Timestamp;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

use crate::errors;

const TYPES_MODULE: &str = "missionweaveprotocol._types";

/// The str-valued enums of `missionweaveprotocol/_types.py`.
#[derive(Debug, Clone, Copy)]
pub enum PyEnum {
    SignedDocumentKind,
    ExpectedSignerRule,
    KeyRegistryCompleteness,
    LeaseState,
    LeaseType,
    Backoff,
    RetryReason,
    AdmissionReason,
    WorkState,
    Confidence,
    CapacityStatus,
}

static ENUMS: [PyOnceLock<Py<PyType>>; 11] = [const { PyOnceLock::new() }; 11];

impl PyEnum {
    const fn name(self) -> &'static str {
        match self {
            Self::SignedDocumentKind => "SignedDocumentKind",
            Self::ExpectedSignerRule => "ExpectedSignerRule",
            Self::KeyRegistryCompleteness => "KeyRegistryCompleteness",
            Self::LeaseState => "LeaseState",
            Self::LeaseType => "LeaseType",
            Self::Backoff => "Backoff",
            Self::RetryReason => "RetryReason",
            Self::AdmissionReason => "AdmissionReason",
            Self::WorkState => "WorkState",
            Self::Confidence => "Confidence",
            Self::CapacityStatus => "CapacityStatus",
        }
    }

    /// The enum member whose value is `value`.
    pub fn member<'py>(self, py: Python<'py>, value: &str) -> PyResult<Bound<'py, PyAny>> {
        ENUMS[self as usize]
            .import(py, TYPES_MODULE, self.name())?
            .call1((value,))
    }

    /// Whether `value` is a member of the enum (not merely a `str` equal to one).
    pub fn is_member(self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<bool> {
        value.is_instance(ENUMS[self as usize].import(py, TYPES_MODULE, self.name())?)
    }
}

/// `PrincipalEvidence(type, id)`: a Principal.
#[pyclass(
    module = "missionweaveprotocol._native",
    frozen,
    eq,
    hash,
    from_py_object
)]
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PrincipalEvidence {
    #[pyo3(get, name = "type")]
    pub kind: String,
    #[pyo3(get)]
    pub id: String,
}

#[pymethods]
impl PrincipalEvidence {
    #[new]
    #[pyo3(signature = (r#type, id))]
    fn py_new(py: Python<'_>, r#type: &Bound<'_, PyAny>, id: &Bound<'_, PyAny>) -> PyResult<Self> {
        let kind = crate::convert::str_arg(py, r#type, "type")?;
        if PrincipalType::parse(&kind).is_none() {
            return Err(errors::invalid_input(
                py,
                format!("Principal type must be agent, human or service, not {kind:?}"),
            ));
        }
        Ok(Self {
            kind: kind.into_owned(),
            id: crate::convert::str_arg(py, id, "id")?.into_owned(),
        })
    }

    fn __repr__(&self) -> String {
        format!("PrincipalEvidence(type={:?}, id={:?})", self.kind, self.id)
    }
}

impl PrincipalEvidence {
    pub fn from_core(principal: &Principal) -> Self {
        Self {
            kind: principal.kind.as_str().to_owned(),
            id: principal.id.clone(),
        }
    }

    pub fn to_core(&self) -> Option<Principal> {
        PrincipalType::parse(&self.kind).map(|kind| Principal::new(kind, self.id.clone()))
    }
}

/// `ProtectedInstant(epoch_second, fraction)`: an exact instant with arbitrary fraction digits.
#[pyclass(
    module = "missionweaveprotocol._native",
    frozen,
    eq,
    ord,
    hash,
    from_py_object
)]
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProtectedInstant {
    #[pyo3(get)]
    pub epoch_second: i64,
    /// Fraction digits without trailing zeros; compared digit-wise, which orders them exactly.
    #[pyo3(get)]
    pub fraction: String,
}

#[pymethods]
impl ProtectedInstant {
    fn __repr__(&self) -> String {
        format!(
            "ProtectedInstant(epoch_second={}, fraction={:?})",
            self.epoch_second, self.fraction
        )
    }
}

/// `ProtectedTime(text, instant)`: an RFC 3339 timestamp, text verbatim.
#[pyclass(
    module = "missionweaveprotocol._native",
    frozen,
    eq,
    hash,
    from_py_object
)]
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ProtectedTime {
    #[pyo3(get)]
    pub text: String,
    #[pyo3(get)]
    pub instant: ProtectedInstant,
}

#[pymethods]
impl ProtectedTime {
    fn __repr__(&self) -> String {
        format!("ProtectedTime(text={:?})", self.text)
    }

    fn __str__(&self) -> String {
        self.text.clone()
    }
}

impl ProtectedTime {
    pub fn from_core(time: &Timestamp) -> Self {
        Self {
            text: time.as_str().to_owned(),
            instant: ProtectedInstant {
                epoch_second: time.instant().unix_seconds(),
                fraction: time.instant().fraction_digits().to_owned(),
            },
        }
    }
}

/// `SignatureMaterial(algorithm, key_id, created_at, value, bytes)`: the signature envelope.
#[pyclass(module = "missionweaveprotocol._native", frozen, eq, from_py_object)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureMaterial {
    #[pyo3(get)]
    pub algorithm: String,
    #[pyo3(get)]
    pub key_id: String,
    pub created_at: ProtectedTime,
    #[pyo3(get)]
    pub value: String,
    pub raw: Vec<u8>,
}

#[pymethods]
impl SignatureMaterial {
    /// `signature.createdAt` as its text (a `str`, as the reference gives it): byte-equal to
    /// the document's protected time (§6.4 stage 3); `created_at_time` is the parsed value.
    #[getter]
    fn created_at(&self) -> &str {
        &self.created_at.text
    }

    /// `signature.createdAt` as a `ProtectedTime` (text and instant).
    #[getter]
    fn created_at_time(&self) -> ProtectedTime {
        self.created_at.clone()
    }

    /// The 64 signature bytes.
    #[getter]
    fn bytes<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
        pyo3::types::PyBytes::new(py, &self.raw)
    }

    fn __repr__(&self) -> String {
        format!(
            "SignatureMaterial(algorithm={:?}, key_id={:?}, value={:?})",
            self.algorithm, self.key_id, self.value
        )
    }
}

/// `KeyValidityEvidence(valid_from, valid_until, revoked_at)`: the effective key interval.
#[pyclass(module = "missionweaveprotocol._native", frozen, eq, from_py_object)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyValidityEvidence {
    #[pyo3(get)]
    pub valid_from: ProtectedTime,
    #[pyo3(get)]
    pub valid_until: Option<ProtectedTime>,
    #[pyo3(get)]
    pub revoked_at: Option<ProtectedTime>,
}

#[pymethods]
impl KeyValidityEvidence {
    fn __repr__(&self) -> String {
        format!(
            "KeyValidityEvidence(valid_from={:?}, valid_until={:?}, revoked_at={:?})",
            self.valid_from.text,
            self.valid_until.as_ref().map(|t| &t.text),
            self.revoked_at.as_ref().map(|t| &t.text)
        )
    }
}

/// `ResolvedKeyEvidence(organization_id, key_id, principal, algorithm, validity)`: the Registry
/// binding stage 4 selected.
#[pyclass(module = "missionweaveprotocol._native", frozen, eq, from_py_object)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedKeyEvidence {
    #[pyo3(get)]
    pub organization_id: String,
    #[pyo3(get)]
    pub key_id: String,
    #[pyo3(get)]
    pub principal: PrincipalEvidence,
    #[pyo3(get)]
    pub algorithm: String,
    #[pyo3(get)]
    pub validity: KeyValidityEvidence,
}

#[pymethods]
impl ResolvedKeyEvidence {
    fn __repr__(&self) -> String {
        format!(
            "ResolvedKeyEvidence(organization_id={:?}, key_id={:?}, principal={})",
            self.organization_id,
            self.key_id,
            self.principal.__repr__()
        )
    }
}
