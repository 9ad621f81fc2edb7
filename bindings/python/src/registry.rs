//! Key resolution: the native `AgentRegistryKeyResolver`, the `KeyRegistrySnapshot` value, and an
//! adapter that lets any Python object with `resolve(request)` serve stage 4.

use std::sync::{Arc, Mutex};

use missionweaveprotocol::ArgumentError;
use missionweaveprotocol::registry::{
    self as core_registry, ExpectedSigner, KeyResolutionRequest as CoreRequest, KeyResolver,
    RegistryError, RegistryErrorReason,
};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::convert;
use crate::errors;
use crate::values::{PrincipalEvidence, ProtectedTime, PyEnum};

/// The only completeness the verifier accepts.
pub const ORGANIZATION_WIDE: &str = "organization-wide";

/// Registry evidence that fails the stage-4 rules, raised as the verifier would report it:
/// `SignedDocumentVerificationError`, stage `key-resolution`, `AUTH_INVALID_SIGNATURE`, with the
/// protected reason. (Kept here until `errors.rs` maps `RegistryError` itself.)
pub fn registry_error(py: Python<'_>, error: &RegistryError) -> PyErr {
    errors::describe(py, error)
}

/// Validates Registry bytes now (through the core's digest-keyed cache): malformed evidence is
/// refused where it is made, as in JavaScript.
fn validated(py: Python<'_>, bytes: &[u8]) -> PyResult<Arc<core_registry::KeyRegistrySnapshot>> {
    py.detach(|| core_registry::KeyRegistrySnapshot::from_bytes_cached(bytes))
        .map_err(|e| registry_error(py, &e))
}

/// `KeyRegistrySnapshot(completeness, registry_bytes)`: Registry evidence as a resolver returns
/// it. The completeness must be a `KeyRegistryCompleteness` member and the bytes are validated
/// by the stage-4 rules, both at construction.
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug)]
pub struct KeyRegistrySnapshot {
    completeness: String,
    bytes: Py<PyBytes>,
    /// The validated snapshot, held so that resolving never re-hashes or re-validates the
    /// bytes, even after the process-wide cache evicted them.
    validated: Arc<core_registry::KeyRegistrySnapshot>,
}

#[pymethods]
impl KeyRegistrySnapshot {
    #[new]
    fn py_new(
        py: Python<'_>,
        completeness: &Bound<'_, PyAny>,
        registry_bytes: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let completeness = convert::str_arg(py, completeness, "completeness")?.into_owned();
        // Issue 9, item 11: only a KeyRegistryCompleteness member can be built; the stage-4
        // check below stays for evidence that arrives some other way.
        if PyEnum::KeyRegistryCompleteness
            .member(py, &completeness)
            .is_err()
        {
            return Err(errors::describe(
                py,
                &ArgumentError::new(
                    "completeness",
                    format!("{completeness:?} is not a KeyRegistryCompleteness"),
                ),
            ));
        }
        let bytes = convert::bytes_arg(py, registry_bytes, "registry_bytes", false)?;
        let validated = validated(py, &bytes)?;
        Ok(Self {
            completeness,
            bytes: PyBytes::new(py, &bytes).unbind(),
            validated,
        })
    }

    #[getter]
    fn completeness<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        PyEnum::KeyRegistryCompleteness
            .member(py, &self.completeness)
            .or_else(|_| Ok(self.completeness.clone().into_pyobject(py)?.into_any()))
    }

    #[getter]
    fn registry_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        self.bytes.bind(py).clone()
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "KeyRegistrySnapshot(completeness={:?}, registry_bytes=<{} bytes>)",
            self.completeness,
            self.bytes.bind(py).as_bytes().len()
        )
    }
}

/// `AgentRegistryKeyResolver(registry_bytes)`: complete Organization-wide evidence given as
/// bytes, validated at construction (malformed evidence raises
/// `SignedDocumentVerificationError`, stage `key-resolution`).
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug)]
pub struct AgentRegistryKeyResolver {
    pub inner: core_registry::AgentRegistryKeyResolver,
    bytes: Py<PyBytes>,
}

#[pymethods]
impl AgentRegistryKeyResolver {
    #[new]
    fn py_new(py: Python<'_>, registry_bytes: &Bound<'_, PyAny>) -> PyResult<Self> {
        let bytes = convert::bytes_arg(py, registry_bytes, "registry_bytes", false)?;
        let inner = py.detach(|| core_registry::AgentRegistryKeyResolver::new(&bytes));
        if let Err(error) = inner.snapshot() {
            return Err(registry_error(py, error));
        }
        Ok(Self {
            inner,
            bytes: PyBytes::new(py, &bytes).unbind(),
        })
    }

    #[getter]
    fn registry_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        self.bytes.bind(py).clone()
    }

    /// The reference's call shape: the evidence for any request.
    fn resolve(&self, py: Python<'_>, request: &Bound<'_, PyAny>) -> PyResult<KeyRegistrySnapshot> {
        if !request.is_instance_of::<KeyResolutionRequest>() {
            return Err(errors::invalid_input(
                py,
                format!(
                    "request must be a KeyResolutionRequest, not {}",
                    convert::type_name(request)
                ),
            ));
        }
        // Validated at construction, so this is the held snapshot.
        let validated = self
            .inner
            .snapshot()
            .map(Arc::clone)
            .map_err(|error| registry_error(py, error))?;
        Ok(KeyRegistrySnapshot {
            completeness: ORGANIZATION_WIDE.to_owned(),
            bytes: self.bytes.clone_ref(py),
            validated,
        })
    }

    /// The Organization the evidence covers, or `None` when the evidence is invalid.
    #[getter]
    fn organization_id(&self) -> Option<String> {
        self.inner
            .snapshot()
            .ok()
            .map(|snapshot| snapshot.organization_id().to_owned())
    }

    /// Why the evidence is unusable (the protected stage-4 reason), or `None` when it is valid.
    #[getter]
    fn evidence_error(&self) -> Option<String> {
        self.inner.snapshot().err().map(ToString::to_string)
    }

    fn __repr__(&self) -> String {
        format!(
            "AgentRegistryKeyResolver(organization_id={:?})",
            self.organization_id()
        )
    }
}

/// `ExpectedSignerEvidence(rule, principal)`.
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug)]
pub struct ExpectedSignerEvidence {
    rule: &'static str,
    #[pyo3(get)]
    principal: Option<PrincipalEvidence>,
}

#[pymethods]
impl ExpectedSignerEvidence {
    #[getter]
    fn rule<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        PyEnum::ExpectedSignerRule.member(py, self.rule)
    }
}

/// `KeyResolutionRequest(kind, key_id, expected_signer, protected_time)`: what stage 4 asks a
/// Python resolver. The key ID is routing context only.
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug)]
pub struct KeyResolutionRequest {
    kind: &'static str,
    #[pyo3(get)]
    key_id: String,
    #[pyo3(get)]
    expected_signer: Py<ExpectedSignerEvidence>,
    #[pyo3(get)]
    protected_time: ProtectedTime,
}

#[pymethods]
impl KeyResolutionRequest {
    #[getter]
    fn kind<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        PyEnum::SignedDocumentKind.member(py, self.kind)
    }

    fn __repr__(&self) -> String {
        format!(
            "KeyResolutionRequest(kind={:?}, key_id={:?})",
            self.kind, self.key_id
        )
    }
}

fn unavailable(detail: String) -> RegistryError {
    RegistryError {
        reason: RegistryErrorReason::EvidenceUnavailable,
        detail,
    }
}

/// A Python object with `resolve(request) -> KeyRegistrySnapshot`, as a core resolver. Anything
/// but an organization-wide `KeyRegistrySnapshot` fails closed at stage 4, except a
/// `BaseException` that is not an `Exception` (`KeyboardInterrupt`, `SystemExit`): the core's
/// trait cannot carry it, so it is kept here and re-raised once the core returns.
#[derive(Debug)]
pub struct PythonKeyResolver {
    object: Py<PyAny>,
    interrupt: Mutex<Option<PyErr>>,
}

/// Whether a Python exception must stop the program rather than fail closed: anything that is
/// not an `Exception` (`KeyboardInterrupt`, `SystemExit`, `GeneratorExit`).
pub fn is_interrupt(py: Python<'_>, error: &PyErr) -> bool {
    !error.is_instance_of::<PyException>(py)
}

impl PythonKeyResolver {
    fn request(py: Python<'_>, request: &CoreRequest<'_>) -> PyResult<KeyResolutionRequest> {
        let (rule, principal) = match request.expected_signer {
            ExpectedSigner::ServicePrincipal => ("service-principal", None),
            ExpectedSigner::Principal(p) => {
                ("exact-principal", Some(PrincipalEvidence::from_core(p)))
            }
        };
        Ok(KeyResolutionRequest {
            kind: request.kind.as_str(),
            key_id: request.key_id.to_owned(),
            expected_signer: Py::new(py, ExpectedSignerEvidence { rule, principal })?,
            protected_time: ProtectedTime::from_core(request.protected_time),
        })
    }
}

impl PythonKeyResolver {
    /// Fails closed (evidence unavailable); an interrupt is also kept for [`Resolver::take_interrupt`].
    fn failed(&self, py: Python<'_>, error: PyErr, prefix: String) -> RegistryError {
        let detail = format!("{prefix}{error}");
        if is_interrupt(py, &error) {
            let mut slot = self.interrupt.lock().unwrap_or_else(|e| e.into_inner());
            slot.get_or_insert(error);
        }
        unavailable(detail)
    }
}

impl KeyResolver for PythonKeyResolver {
    fn registry_evidence(
        &self,
        request: &CoreRequest<'_>,
    ) -> Result<Arc<core_registry::KeyRegistrySnapshot>, RegistryError> {
        Python::attach(
            |py| -> Result<Arc<core_registry::KeyRegistrySnapshot>, RegistryError> {
                let py_request =
                    Self::request(py, request).map_err(|e| self.failed(py, e, String::new()))?;
                let result = self
                    .object
                    .bind(py)
                    .call_method1("resolve", (py_request,))
                    .map_err(|e| self.failed(py, e, "the resolver raised ".to_owned()))?;
                let snapshot = result.cast::<KeyRegistrySnapshot>().map_err(|_| {
                    unavailable(format!(
                        "the resolver returned {}, not a KeyRegistrySnapshot",
                        convert::type_name(&result)
                    ))
                })?;
                let snapshot = snapshot.get();
                if snapshot.completeness != ORGANIZATION_WIDE {
                    return Err(RegistryError {
                        reason: RegistryErrorReason::EvidenceIncomplete,
                        detail: format!(
                            "registry evidence completeness is {:?}, not organization-wide",
                            snapshot.completeness
                        ),
                    });
                }
                Ok(Arc::clone(&snapshot.validated))
            },
        )
    }
}

/// The resolver argument of `verify`: the native resolver (no Python calls during verification)
/// or any object with a `resolve` method.
#[derive(Debug)]
pub enum Resolver {
    Native(core_registry::AgentRegistryKeyResolver),
    Python(PythonKeyResolver),
}

impl Resolver {
    pub fn extract(py: Python<'_>, object: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(native) = object.cast::<AgentRegistryKeyResolver>() {
            return Ok(Self::Native(native.get().inner.clone()));
        }
        // An object whose attribute access raises is not a resolver: an argument error (with
        // the original as its cause), except `KeyboardInterrupt`/`SystemExit`, which propagate.
        let has_resolve = object.hasattr("resolve").map_err(|raised| {
            if !raised.is_instance_of::<PyException>(py) {
                return raised;
            }
            let error = errors::describe(
                py,
                &ArgumentError::new(
                    "key_resolver",
                    format!("reading its resolve attribute raised {raised}"),
                ),
            );
            error.set_cause(py, Some(raised));
            error
        })?;
        if has_resolve {
            return Ok(Self::Python(PythonKeyResolver {
                object: object.clone().unbind(),
                interrupt: Mutex::new(None),
            }));
        }
        Err(errors::invalid_input(
            py,
            format!(
                "key_resolver must be a KeyResolver (an object with resolve(request)), not {}",
                convert::type_name(object)
            ),
        ))
    }

    pub fn as_dyn(&self) -> &(dyn KeyResolver + Sync) {
        match self {
            Self::Native(native) => native,
            Self::Python(python) => python,
        }
    }

    /// The `KeyboardInterrupt`/`SystemExit` a Python resolver raised during the last call into
    /// the core, to be raised instead of the core's (fail-closed) result.
    pub fn take_interrupt(&self) -> Option<PyErr> {
        match self {
            Self::Native(_) => None,
            Self::Python(python) => python
                .interrupt
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take(),
        }
    }
}

/// `set_registry_cache_budget(budget)`: the byte budget of the process-wide cache of validated
/// Registry snapshots (0 disables it); evicts down to it at once. The policy is the core's
/// (`registry::cache`).
#[pyfunction]
pub fn set_registry_cache_budget(py: Python<'_>, budget: &Bound<'_, PyAny>) -> PyResult<()> {
    let budget = convert::uint_arg(py, budget, "budget", usize::MAX as u64)?;
    core_registry::set_registry_cache_budget(usize::try_from(budget).unwrap_or(usize::MAX));
    Ok(())
}

/// `registry_cache_stats()`: `{"entries", "bytes", "budget"}` of the process-wide cache.
#[pyfunction]
pub fn registry_cache_stats(py: Python<'_>) -> PyResult<Bound<'_, pyo3::types::PyDict>> {
    let stats = core_registry::registry_cache_stats();
    let dict = pyo3::types::PyDict::new(py);
    dict.set_item("entries", stats.entries)?;
    dict.set_item("bytes", stats.bytes)?;
    dict.set_item("budget", stats.budget)?;
    Ok(dict)
}
