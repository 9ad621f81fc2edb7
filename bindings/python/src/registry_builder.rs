//! `RegistryBuilder`: Registry evidence for one's own Agents (own keys → Registry → sign →
//! verify). The core builder checks every input and runs the stage-4 rules over the result.

use missionweaveprotocol::principal::{Principal, PrincipalType};
use missionweaveprotocol::registry::{
    RegistryBuilder as CoreBuilder, ValidityRecord as CoreRecord,
};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::convert;
use crate::errors;
use crate::instant;
use crate::keys::decode_key_text;
use crate::registry::registry_error;
use crate::values::PrincipalEvidence;
use missionweaveprotocol_kernel::unix_millis::Fraction;

/// A timestamp argument: RFC 3339 text, or a timezone-aware `datetime` (written to the
/// millisecond, `…Z`).
fn time_arg(py: Python<'_>, value: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    if value.is_instance_of::<PyString>() {
        return Ok(convert::str_arg(py, value, what)?.into_owned());
    }
    instant::render(py, value, what, Fraction::Millis)
}

fn opt_time_arg(
    py: Python<'_>,
    value: Option<&Bound<'_, PyAny>>,
    what: &str,
) -> PyResult<Option<String>> {
    convert::present(value)
        .map(|v| time_arg(py, v, what))
        .transpose()
}

/// A principal: `PrincipalEvidence`, a `{"type", "id"}` mapping or a `(type, id)` pair.
fn principal_arg(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Principal> {
    let (kind, id) = if let Ok(evidence) = value.cast::<PrincipalEvidence>() {
        let evidence = evidence.get();
        (evidence.kind.clone(), evidence.id.clone())
    } else if let Ok((kind, id)) = value.extract::<(String, String)>() {
        (kind, id)
    } else if let (Ok(kind), Ok(id)) = (value.get_item("type"), value.get_item("id")) {
        (
            convert::str_arg(py, &kind, "principal type")?.into_owned(),
            convert::str_arg(py, &id, "principal id")?.into_owned(),
        )
    } else {
        return Err(errors::invalid_input(
            py,
            format!(
                "principal must be a PrincipalEvidence, a {{\"type\", \"id\"}} mapping or a \
                 (type, id) pair, not {}",
                convert::type_name(value)
            ),
        ));
    };
    let kind = PrincipalType::parse(&kind).ok_or_else(|| {
        errors::invalid_input(
            py,
            format!("Principal type must be agent, human or service, not {kind:?}"),
        )
    })?;
    Ok(Principal::new(kind, id))
}

/// A public key: 32 bytes, their base64url text, or a key object with `public_key_bytes`.
fn public_key_arg(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(text) = value.cast::<PyString>() {
        let text = text.to_cow().unwrap_or_default();
        return decode_key_text(&text)
            .ok_or_else(|| errors::invalid_input(py, "public_key is not base64url"));
    }
    if !value.is_instance_of::<PyBytes>() && value.hasattr("public_key_bytes")? {
        let bytes = value.getattr("public_key_bytes")?;
        return Ok(
            convert::bytes_arg(py, &bytes, "public_key.public_key_bytes", false)?.into_owned(),
        );
    }
    Ok(convert::bytes_arg(py, value, "public_key", false)?.into_owned())
}

/// One validity-history record of a binding: appended at `recorded_at`, it may set (only
/// earlier) `valid_until` and `revoked_at` (§6.4 stage 4).
#[pyclass(module = "missionweaveprotocol._native", frozen, get_all)]
#[derive(Debug, Clone)]
pub struct ValidityRecord {
    recorded_at: String,
    valid_until: Option<String>,
    revoked_at: Option<String>,
}

#[pymethods]
impl ValidityRecord {
    #[new]
    #[pyo3(signature = (recorded_at, valid_until = None, revoked_at = None))]
    fn py_new(
        py: Python<'_>,
        recorded_at: &Bound<'_, PyAny>,
        valid_until: Option<&Bound<'_, PyAny>>,
        revoked_at: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Ok(Self {
            recorded_at: time_arg(py, recorded_at, "recorded_at")?,
            valid_until: opt_time_arg(py, valid_until, "valid_until")?,
            revoked_at: opt_time_arg(py, revoked_at, "revoked_at")?,
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "ValidityRecord(recorded_at={:?}, valid_until={:?}, revoked_at={:?})",
            self.recorded_at, self.valid_until, self.revoked_at
        )
    }
}

/// `RegistryBuilder(organization_id)`: add your Agents' keys, then `build()` the Registry
/// snapshot bytes that `AgentRegistryKeyResolver` takes. Every problem a verifier would find
/// at stage 4 is raised here (`SignedDocumentVerificationError`, stage `key-resolution`).
#[pyclass(module = "missionweaveprotocol._native")]
#[derive(Debug)]
pub struct RegistryBuilder {
    organization_id: String,
    inner: CoreBuilder,
}

#[pymethods]
impl RegistryBuilder {
    #[new]
    fn py_new(py: Python<'_>, organization_id: &Bound<'_, PyAny>) -> PyResult<Self> {
        let organization_id = convert::str_arg(py, organization_id, "organization_id")?;
        Ok(Self {
            inner: CoreBuilder::new(organization_id.as_ref()),
            organization_id: organization_id.into_owned(),
        })
    }

    /// Binds `key_id` to `principal` with an Ed25519 public key valid from `valid_from`, with an
    /// optional validity `history` (rotation, revocation). Returns the builder.
    #[pyo3(signature = (key_id, principal, public_key, valid_from, history = None))]
    fn add_key<'py>(
        slf: Bound<'py, Self>,
        key_id: &Bound<'py, PyAny>,
        principal: &Bound<'py, PyAny>,
        public_key: &Bound<'py, PyAny>,
        valid_from: &Bound<'py, PyAny>,
        history: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, Self>> {
        let py = slf.py();
        let key_id = convert::str_arg(py, key_id, "key_id")?.into_owned();
        let principal = principal_arg(py, principal)?;
        let public_key = public_key_arg(py, public_key)?;
        let valid_from = time_arg(py, valid_from, "valid_from")?;
        let mut records = Vec::new();
        if let Some(history) = convert::present(history) {
            for item in convert::iter_arg(py, history, "history")? {
                let item = item?;
                let record =
                    convert::typed::<ValidityRecord>(py, &item, "history item", "ValidityRecord")?
                        .get();
                records.push(CoreRecord {
                    recorded_at: record.recorded_at.clone(),
                    valid_until: record.valid_until.clone(),
                    revoked_at: record.revoked_at.clone(),
                });
            }
        }
        slf.borrow_mut()
            .inner
            .add_key_with_history(&key_id, principal, &public_key, &valid_from, &records)
            .map_err(|e| registry_error(py, &e))?;
        Ok(slf)
    }

    /// The canonical (RFC 8785) Registry snapshot bytes, validated by the stage-4 rules.
    fn build<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let (bytes, _) = self.inner.build().map_err(|e| registry_error(py, &e))?;
        Ok(PyBytes::new(py, &bytes))
    }

    fn __repr__(&self) -> String {
        format!("RegistryBuilder({:?})", self.organization_id)
    }
}
