//! Content-addressed Artifact bytes: `missionweaveprotocol_host::LocalArtifactStore`
//! and the manifest rules of `artifact::content`, converted for `missionweaveprotocol.artifacts`.
//! Every rule (hash, layout, size check, manifest building, signing, verification) is in Rust;
//! this file only converts arguments and errors. The GIL is released while the store hashes,
//! signs and touches the filesystem.

use missionweaveprotocol::DescribeError as _;
use missionweaveprotocol::crypto;
use missionweaveprotocol_engine::artifact::content;
use missionweaveprotocol_host::LocalArtifactStore;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::codec::{SignedDocument, VerifiedSignedDocument};
use crate::convert::{self, ToJsonError};
use crate::errors;
use crate::registry::Resolver;
use crate::signer::{SignerArg, signer_failure};

/// A JSON object argument (`dict`) as a core value.
fn object_arg(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    what: &str,
) -> PyResult<missionweaveprotocol::json::Value> {
    if !value.is_instance_of::<PyDict>() {
        return Err(errors::invalid_input(
            py,
            format!("{what} must be a dict, not {}", convert::type_name(value)),
        ));
    }
    convert::to_value(value).map_err(|e| match e {
        ToJsonError::Python(error) => error,
        ToJsonError::Unsupported(text) => errors::invalid_input(py, format!("{what}: {text}")),
        ToJsonError::Parse(error) => errors::invalid_input(py, format!("{what}: {error}")),
    })
}

/// The native store under `missionweaveprotocol.artifacts.LocalArtifactStore`.
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug)]
pub struct NativeArtifactStore {
    inner: LocalArtifactStore,
}

#[pymethods]
impl NativeArtifactStore {
    #[new]
    fn py_new(py: Python<'_>, root: &Bound<'_, PyAny>) -> PyResult<Self> {
        let root: std::path::PathBuf = root.extract().map_err(|_| {
            errors::invalid_input(
                py,
                format!(
                    "root must be a str or os.PathLike, not {}",
                    convert::type_name(root)
                ),
            )
        })?;
        Ok(Self {
            inner: LocalArtifactStore::new(root),
        })
    }

    /// The root directory.
    #[getter]
    fn root(&self) -> String {
        self.inner.root().display().to_string()
    }

    /// `<root>/<hex[:2]>/<hex[2:]>` of a `sha256:<hex>` content hash.
    fn path_of(&self, py: Python<'_>, content_hash: &Bound<'_, PyAny>) -> PyResult<String> {
        let hash = convert::str_arg(py, content_hash, "content_hash")?;
        self.inner
            .path_of(&hash)
            .map(|p| p.display().to_string())
            .map_err(|e| errors::describe(py, &e))
    }

    /// Signs the manifest of `content` described by `metadata` (the Artifact document without
    /// `contentHash`, `sizeBytes`, `signature`) with `signing_key`, then stores the bytes.
    fn put(
        &self,
        py: Python<'_>,
        content: &Bound<'_, PyAny>,
        metadata: &Bound<'_, PyAny>,
        signing_key: &Bound<'_, PyAny>,
    ) -> PyResult<SignedDocument> {
        let bytes = convert::bytes_arg(py, content, "content", false)?;
        let metadata = object_arg(py, metadata, "metadata")?;
        let signer = SignerArg::extract(py, signing_key)?;
        let key: &(dyn crypto::Signer + Sync) = match &signer {
            SignerArg::Native(native) => &native.get().inner,
            SignerArg::Python(python) => python.as_ref(),
        };
        let result = py.detach(|| self.inner.put(&bytes, &metadata, key));
        match result {
            Ok(signed) => Ok(SignedDocument::from_core(signed, key.key_id().to_owned())),
            Err(error) => Err(match (signer.take_raised(), error.stage()) {
                (Some(raised), Some(stage)) => {
                    signer_failure(py, stage, "signing_key.sign()", raised)
                }
                _ => errors::describe(py, &error),
            }),
        }
    }

    /// The bytes of a manifest (a dict), re-hashed and size-checked.
    fn get<'py>(
        &self,
        py: Python<'py>,
        manifest: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let manifest = object_arg(py, manifest, "manifest")?;
        let content = py
            .detach(|| self.inner.get(&manifest))
            .map_err(|e| errors::describe(py, &e))?;
        Ok(PyBytes::new(py, &content))
    }

    fn __repr__(&self) -> String {
        format!(
            "LocalArtifactStore({:?})",
            self.inner.root().display().to_string()
        )
    }
}

/// `sha256:<hex>` of `content`.
#[pyfunction]
pub fn artifact_content_hash(py: Python<'_>, content: &Bound<'_, PyAny>) -> PyResult<String> {
    let bytes = convert::bytes_arg(py, content, "content", false)?;
    Ok(py.detach(|| content::content_hash(&bytes)))
}

/// Checks `content` against a manifest dict (`sizeBytes`, then the re-computed
/// `contentHash`); raises `ArtifactError`.
#[pyfunction]
pub fn artifact_check_content(
    py: Python<'_>,
    manifest: &Bound<'_, PyAny>,
    content: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let manifest = object_arg(py, manifest, "manifest")?;
    let bytes = convert::bytes_arg(py, content, "content", false)?;
    py.detach(|| content::check_content(&manifest, &bytes))
        .map_err(|e| errors::describe(py, &e))
}

/// Six-stage verification of a manifest's exact bytes (Artifact profile); a rejection is
/// `ArtifactError` with the verifier's wire code and stage.
#[pyfunction]
pub fn verify_artifact_manifest(
    py: Python<'_>,
    raw_utf8_json_bytes: &Bound<'_, PyAny>,
    key_resolver: &Bound<'_, PyAny>,
) -> PyResult<VerifiedSignedDocument> {
    let resolver = Resolver::extract(py, key_resolver)?;
    let bytes = convert::bytes_arg(py, raw_utf8_json_bytes, "raw_utf8_json_bytes", false)?;
    let result = py.detach(|| content::verify_manifest(&bytes, resolver.as_dyn()));
    if let Some(interrupt) = resolver.take_interrupt() {
        return Err(interrupt);
    }
    result
        .map(|inner| VerifiedSignedDocument::from_core(py, inner, raw_utf8_json_bytes, &bytes))
        .map_err(|e| errors::describe(py, &e))
}
