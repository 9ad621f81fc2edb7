//! `SignedDocumentCodec` (six-stage verification, strict signing, batches), its results and
//! `SigningKey`. The GIL is released while the core verifies or signs.

use missionweaveprotocol::crypto;
use missionweaveprotocol::json::canonical_bytes;
use missionweaveprotocol::schema_formats::decode_base64url;
use missionweaveprotocol::signed_documents::{self as core_sd, SignedDocumentKind};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use crate::convert::{self, ToJsonError};
use crate::errors;
use crate::limits::{ParseLimits, limits_arg};
use crate::registry::Resolver;
use crate::signer::{SignerArg, signer_failure};
use crate::values::{
    KeyValidityEvidence, PrincipalEvidence, ProtectedTime, PyEnum, ResolvedKeyEvidence,
    SignatureMaterial,
};

/// A `SignedDocumentKind` (or its profile ID as `str`).
pub fn kind_arg(py: Python<'_>, kind: &Bound<'_, PyAny>) -> PyResult<SignedDocumentKind> {
    let text = convert::str_arg(py, kind, "kind")?;
    SignedDocumentKind::parse(&text)
        .ok_or_else(|| errors::invalid_input(py, format!("{text:?} is not a SignedDocumentKind")))
}

/// A `SignedDocumentKind` member, as the reference's `SignedDocumentCodec.sign` / `verify`
/// require: a plain `str` (even `"command"`) is `TypeError` there, and `InvalidInputError`
/// (a `TypeError`, wire code `PROTOCOL_VIOLATION`) here.
fn enum_kind_arg(py: Python<'_>, kind: &Bound<'_, PyAny>) -> PyResult<SignedDocumentKind> {
    if !PyEnum::SignedDocumentKind.is_member(py, kind)? {
        return Err(errors::invalid_input(
            py,
            format!(
                "kind must be a SignedDocumentKind, not {}",
                kind.get_type().name()?
            ),
        ));
    }
    kind_arg(py, kind)
}

fn signature_material(key_id: &str, protected: &ProtectedTime, value: &str) -> SignatureMaterial {
    SignatureMaterial {
        algorithm: "Ed25519".to_owned(),
        key_id: key_id.to_owned(),
        created_at: protected.clone(),
        value: value.to_owned(),
        raw: decode_base64url(value).unwrap_or_default(),
    }
}

/// A document that passed all six stages: cryptographically verified, not admitted, not
/// authorized.
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug)]
pub struct VerifiedSignedDocument {
    pub inner: core_sd::VerifiedSignedDocument,
    received: Py<PyAny>,
}

impl VerifiedSignedDocument {
    /// Wraps a core verification result of the caller's `received` bytes object.
    pub(crate) fn from_core(
        py: Python<'_>,
        inner: core_sd::VerifiedSignedDocument,
        object: &Bound<'_, PyAny>,
        bytes: &[u8],
    ) -> Self {
        Self {
            inner,
            received: received(py, object, bytes),
        }
    }
}

#[pymethods]
impl VerifiedSignedDocument {
    #[getter]
    fn kind<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        PyEnum::SignedDocumentKind.member(py, self.inner.kind.as_str())
    }

    /// The document, deep-frozen (`FrozenJsonObject`, `FrozenJsonArray`), as the reference's.
    #[getter]
    fn document<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::view_to_frozen_python(py, self.inner.view())
    }

    /// The exact bytes that were verified.
    #[getter]
    fn received_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.received.bind(py).clone()
    }

    /// The JCS signing bytes (stage 5).
    #[getter]
    fn canonical_signing_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.signing_bytes)
    }

    #[getter]
    fn signing_hash(&self) -> &str {
        &self.inner.signing_hash
    }

    /// The JCS of the whole document including `signature`.
    #[getter]
    fn canonical_document_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes =
            canonical_bytes(self.inner.document()).map_err(|e| errors::canonical_error(py, &e))?;
        Ok(PyBytes::new(py, &bytes))
    }

    #[getter]
    fn document_hash(&self) -> String {
        self.inner.signed_document_hash()
    }

    #[getter]
    fn protected_time(&self) -> ProtectedTime {
        ProtectedTime::from_core(&self.inner.protected_time)
    }

    #[getter]
    fn signature(&self) -> SignatureMaterial {
        signature_material(
            &self.inner.key_id,
            &self.protected_time(),
            &self.inner.signature,
        )
    }

    #[getter]
    fn resolved_key(&self) -> ResolvedKeyEvidence {
        ResolvedKeyEvidence {
            organization_id: self.inner.organization_id.clone(),
            key_id: self.inner.key_id.clone(),
            principal: PrincipalEvidence::from_core(&self.inner.principal),
            algorithm: "Ed25519".to_owned(),
            validity: KeyValidityEvidence {
                valid_from: ProtectedTime::from_core(&self.inner.valid_from),
                valid_until: self
                    .inner
                    .valid_until
                    .as_ref()
                    .map(ProtectedTime::from_core),
                revoked_at: self.inner.revoked_at.as_ref().map(ProtectedTime::from_core),
            },
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "VerifiedSignedDocument(kind={:?}, key_id={:?}, signing_hash={:?})",
            self.inner.kind.as_str(),
            self.inner.key_id,
            self.inner.signing_hash
        )
    }
}

/// A freshly signed document; `canonical_document_bytes` are the bytes to send.
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug)]
pub struct SignedDocument {
    inner: core_sd::SignedDocument,
    key_id: String,
}

impl SignedDocument {
    /// Wraps a core signed document signed with `key_id`.
    pub(crate) fn from_core(inner: core_sd::SignedDocument, key_id: String) -> Self {
        Self { inner, key_id }
    }
}

#[pymethods]
impl SignedDocument {
    #[getter]
    fn kind<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        PyEnum::SignedDocumentKind.member(py, self.inner.kind.as_str())
    }

    /// The document as signed, deep-frozen (`FrozenJsonObject`, `FrozenJsonArray`), as the
    /// reference's: read from `canonical_document_bytes`, so a host number is what was signed
    /// and sent — an integer beyond 2^53 its binary64 value, `1.0` the integer `1` (§6.4
    /// stage 5 canonicalizes numbers as binary64, as the reference's codec does).
    #[getter]
    fn document<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let signed = missionweaveprotocol::json::parse_state(&self.inner.bytes)
            .map_err(|e| errors::parse_error(py, &e))?;
        convert::view_to_frozen_python(py, signed.view())
    }

    #[getter]
    fn canonical_signing_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.signing_bytes)
    }

    #[getter]
    fn signing_hash(&self) -> &str {
        &self.inner.signing_hash
    }

    #[getter]
    fn canonical_document_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.bytes)
    }

    #[getter]
    fn document_hash(&self) -> &str {
        &self.inner.document_hash
    }

    #[getter]
    fn protected_time(&self) -> ProtectedTime {
        ProtectedTime::from_core(&self.inner.protected_time)
    }

    #[getter]
    fn signature(&self) -> SignatureMaterial {
        signature_material(&self.key_id, &self.protected_time(), &self.inner.signature)
    }

    fn __repr__(&self) -> String {
        format!(
            "SignedDocument(kind={:?}, key_id={:?}, signing_hash={:?})",
            self.inner.kind.as_str(),
            self.key_id,
            self.inner.signing_hash
        )
    }
}

/// Six-stage verification and strict signing over the embedded, pinned schemas.
///
/// `limits` (a `ParseLimits`, default `ParseLimits.DOCUMENT`) bounds what received bytes may
/// cost; bytes over a limit are rejected at stage `parse` with reason `limit-exceeded`.
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug)]
pub struct SignedDocumentCodec {
    limits: missionweaveprotocol::json::ParseLimits,
}

impl SignedDocumentCodec {
    fn core(&self) -> core_sd::SignedDocumentCodec<'static> {
        core_sd::SignedDocumentCodec::new().with_limits(self.limits)
    }
}

#[pymethods]
impl SignedDocumentCodec {
    #[new]
    #[pyo3(signature = (*, limits = None))]
    fn py_new(py: Python<'_>, limits: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        Ok(Self {
            limits: limits_arg(
                py,
                limits,
                missionweaveprotocol::json::ParseLimits::DOCUMENT,
            )?,
        })
    }

    /// The parse limits received bytes are held to.
    #[getter]
    fn limits(&self) -> ParseLimits {
        ParseLimits { inner: self.limits }
    }

    /// Verifies the exact received bytes as a document of `kind`.
    fn verify(
        &self,
        py: Python<'_>,
        kind: &Bound<'_, PyAny>,
        raw_utf8_json_bytes: &Bound<'_, PyAny>,
        key_resolver: &Bound<'_, PyAny>,
    ) -> PyResult<VerifiedSignedDocument> {
        let kind = enum_kind_arg(py, kind)?;
        let resolver = Resolver::extract(py, key_resolver)?;
        let bytes = convert::bytes_arg(py, raw_utf8_json_bytes, "raw_utf8_json_bytes", false)?;
        let result = py.detach(|| self.core().verify(kind, &bytes, resolver.as_dyn()));
        if let Some(interrupt) = resolver.take_interrupt() {
            return Err(interrupt);
        }
        match result {
            Ok(inner) => Ok(VerifiedSignedDocument {
                inner,
                received: received(py, raw_utf8_json_bytes, &bytes),
            }),
            Err(error) => Err(errors::verification_error(py, &error)),
        }
    }

    /// The kinds whose schema the (strictly parsed) document satisfies.
    fn detect_kinds<'py>(
        &self,
        py: Python<'py>,
        raw_utf8_json_bytes: &Bound<'py, PyAny>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let bytes = convert::bytes_arg(py, raw_utf8_json_bytes, "raw_utf8_json_bytes", false)?;
        let document = missionweaveprotocol::json::Document::parse(&bytes, &self.limits)
            .map_err(|e| errors::parse_error(py, &e))?;
        self.core()
            .detect_kinds_of(document.root())
            .into_iter()
            .map(|kind| PyEnum::SignedDocumentKind.member(py, kind.as_str()))
            .collect()
    }

    /// The stage-5 signing bytes of a document (RFC 8785 without the top-level `signature`),
    /// whether or not its signature verifies.
    fn signing_bytes<'py>(
        &self,
        py: Python<'py>,
        raw_utf8_json_bytes: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = convert::bytes_arg(py, raw_utf8_json_bytes, "raw_utf8_json_bytes", false)?;
        let document = missionweaveprotocol::json::Document::parse(&bytes, &self.limits)
            .map_err(|e| errors::parse_error(py, &e))?;
        let signing = core_sd::signing_bytes_of(document.root())
            .map_err(|e| errors::verification_error(py, &e))?;
        Ok(PyBytes::new(py, &signing))
    }

    /// Verifies many `(kind, bytes)` items in one call on up to `threads` OS threads (0: one
    /// per CPU). Results are in input order: a `VerifiedSignedDocument` or the
    /// `SignedDocumentVerificationError` for that item (not raised).
    #[pyo3(signature = (items, key_resolver, threads = None))]
    fn verify_many<'py>(
        &self,
        py: Python<'py>,
        items: &Bound<'py, PyAny>,
        key_resolver: &Bound<'py, PyAny>,
        threads: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let threads = match threads {
            Some(threads) => convert::count_arg(py, threads, "threads")?,
            None => 0,
        };
        let resolver = Resolver::extract(py, key_resolver)?;
        let mut objects = Vec::new();
        for item in items.try_iter().map_err(|e| errors::retype(py, e))? {
            let item = item?;
            let (kind, bytes): (Bound<'py, PyAny>, Bound<'py, PyAny>) = item
                .extract()
                .map_err(|_| errors::invalid_input(py, "each item must be a (kind, bytes) pair"))?;
            objects.push((kind_arg(py, &kind)?, bytes));
        }
        let mut owned = Vec::with_capacity(objects.len());
        for (kind, bytes) in &objects {
            owned.push((*kind, convert::bytes_arg(py, bytes, "item bytes", false)?));
        }
        let batch: Vec<core_sd::BatchItem<'_>> = owned
            .iter()
            .map(|(kind, bytes)| (*kind, bytes.as_ref()))
            .collect();
        let threads = if threads == 0 {
            std::thread::available_parallelism().map_or(1, usize::from)
        } else {
            threads
        };
        let results = py.detach(|| self.core().verify_many(&batch, resolver.as_dyn(), threads));
        if let Some(interrupt) = resolver.take_interrupt() {
            return Err(interrupt);
        }
        let list = PyList::empty(py);
        for (result, ((_, object), (_, bytes))) in
            results.into_iter().zip(objects.iter().zip(&owned))
        {
            match result {
                Ok(inner) => list.append(VerifiedSignedDocument {
                    inner,
                    received: received(py, object, bytes),
                })?,
                Err(error) => list.append(errors::verification_exception(py, &error)?)?,
            }
        }
        Ok(list)
    }

    /// Signs a JSON object (no top-level `signature`) as a document of `kind` with a native
    /// `SigningKey` or any object satisfying the `SigningKey` Protocol (HSM, KMS).
    fn sign(
        &self,
        py: Python<'_>,
        kind: &Bound<'_, PyAny>,
        unsigned_json_object: &Bound<'_, PyAny>,
        signing_key: &Bound<'_, PyAny>,
    ) -> PyResult<SignedDocument> {
        let kind = enum_kind_arg(py, kind)?;
        // A `models.Command` (the reference's call shape `sign(COMMAND, command, key)`) is
        // signed as its wire form: what `Command.signing_payload()` returns, which converts a
        // compact payload (or names the member it lacks) before anything is signed.
        let converted;
        let unsigned_json_object = if !unsigned_json_object.is_instance_of::<pyo3::types::PyDict>()
            && unsigned_json_object.hasattr("to_wire_command")?
        {
            converted = unsigned_json_object.call_method0("signing_payload")?;
            &converted
        } else {
            unsigned_json_object
        };
        if !unsigned_json_object.is_instance_of::<pyo3::types::PyDict>() {
            return Err(errors::signing_text(
                py,
                &format!(
                    "the unsigned document must be a dict, not {}",
                    convert::type_name(unsigned_json_object)
                ),
            ));
        }
        let value = convert::to_value(unsigned_json_object).map_err(|e| match e {
            ToJsonError::Python(error) => error,
            ToJsonError::Unsupported(text) => errors::signing_text(py, &text),
            ToJsonError::Parse(error) => errors::signing_text(py, &error.to_string()),
        })?;
        let signer = SignerArg::extract(py, signing_key)?;
        let key: &(dyn crypto::Signer + Sync) = match &signer {
            SignerArg::Native(native) => &native.get().inner,
            SignerArg::Python(python) => python.as_ref(),
        };
        let signed = py.detach(|| core_sd::SignedDocumentCodec::new().sign(kind, &value, key));
        match signed {
            Ok(inner) => Ok(SignedDocument {
                key_id: key.key_id().to_owned(),
                inner,
            }),
            Err(error) => Err(match signer.take_raised() {
                Some(raised) => signer_failure(py, error.stage, "signing_key.sign()", raised),
                None => errors::signing_error(py, &error),
            }),
        }
    }
}

/// Keeps the caller's `bytes` object as `received_bytes` without copying; other buffers are
/// frozen into a new `bytes`.
fn received(py: Python<'_>, object: &Bound<'_, PyAny>, bytes: &[u8]) -> Py<PyAny> {
    if object.is_instance_of::<PyBytes>() {
        object.clone().unbind()
    } else {
        PyBytes::new(py, bytes).into_any().unbind()
    }
}

/// `(pointer, principal type, principal ID)` of [`expected_signer`].
type NamedSigner = (&'static str, Option<&'static str>, Option<String>);

/// The signer a document of `kind` names under its profile's expected-signer rule (§6.4):
/// `(pointer, principal type, principal ID)`, the last two `None` when the member there is not
/// what the rule reads; `None` for a kind any service Principal signs (Agent Cards). The rule
/// is the verifier's own (`ExpectedSignerRule::resolve`).
#[pyfunction]
pub fn expected_signer(
    py: Python<'_>,
    kind: &Bound<'_, PyAny>,
    document: &Bound<'_, PyAny>,
) -> PyResult<Option<NamedSigner>> {
    let kind = kind_arg(py, kind)?;
    let value = convert::to_value(document).map_err(|e| match e {
        ToJsonError::Python(error) => error,
        ToJsonError::Unsupported(text) => errors::invalid_input(py, text),
        ToJsonError::Parse(error) => errors::invalid_input(py, error.to_string()),
    })?;
    let rule = kind.expected_signer_rule();
    let Some(pointer) = rule.pointer() else {
        return Ok(None);
    };
    Ok(Some(match rule.resolve(value.view()) {
        Ok(Some(principal)) => (pointer, Some(principal.kind.as_str()), Some(principal.id)),
        _ => (pointer, None, None),
    }))
}
