//! `SigningKey`: an Ed25519 key (RFC 8032, deterministic) with its Registry key ID, made from a
//! 32-byte seed. The core holds no randomness, so `generate` takes its seed from `os.urandom`.

use missionweaveprotocol::crypto;
use missionweaveprotocol::schema_formats::{decode_base64url, encode_base64url};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::convert;
use crate::errors;

/// A 32-byte seed from bytes, or from its base64url text (padded or not, as the reference's
/// `load_private_key` accepts it). Anything else is `InvalidInputError`.
pub fn seed_arg(py: Python<'_>, seed: &Bound<'_, PyAny>, what: &str) -> PyResult<[u8; 32]> {
    let bytes = if let Ok(text) = seed.cast::<PyString>() {
        let text = text.to_cow().map_err(|_| {
            errors::invalid_input(py, format!("{what} holds an unpaired surrogate"))
        })?;
        decode_key_text(&text).ok_or_else(|| {
            errors::invalid_input(py, format!("{what} is not base64url of 32 bytes"))
        })?
    } else {
        convert::bytes_arg(py, seed, what, false)?.into_owned()
    };
    bytes.as_slice().try_into().map_err(|_| {
        errors::invalid_input(py, format!("{what} must be 32 bytes, not {}", bytes.len()))
    })
}

/// Base64url key text: the canonical unpadded form, or the same with its `=` padding.
pub fn decode_key_text(text: &str) -> Option<Vec<u8>> {
    let unpadded = text.trim_end_matches('=');
    let padding = text.len() - unpadded.len();
    if padding > 0 && (padding > 2 || !text.len().is_multiple_of(4)) {
        return None;
    }
    decode_base64url(unpadded)
}

/// An Ed25519 signing key (RFC 8032, deterministic) with its Registry key ID. It satisfies the
/// `SigningKey` Protocol (`algorithm`, `key_id`, `public_key_bytes`, `sign`).
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug)]
pub struct SigningKey {
    pub inner: crypto::SigningKey,
}

impl SigningKey {
    fn from_parts(py: Python<'_>, key_id: &Bound<'_, PyAny>, seed: [u8; 32]) -> PyResult<Self> {
        let key_id = convert::str_arg(py, key_id, "key_id")?;
        Ok(Self {
            inner: crypto::SigningKey::from_seed(key_id.as_ref(), &seed),
        })
    }
}

#[pymethods]
impl SigningKey {
    /// `SigningKey(key_id, seed)`: `seed` is 32 bytes or their base64url text (as
    /// `generate_keypair()` returns it).
    #[new]
    fn py_new(
        py: Python<'_>,
        key_id: &Bound<'_, PyAny>,
        seed: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let seed = seed_arg(py, seed, "seed")?;
        Self::from_parts(py, key_id, seed)
    }

    /// The same as the constructor.
    #[staticmethod]
    fn from_seed(
        py: Python<'_>,
        key_id: &Bound<'_, PyAny>,
        seed: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        Self::py_new(py, key_id, seed)
    }

    /// A key from the base64url text of its seed (padded or not).
    #[staticmethod]
    fn from_base64url(
        py: Python<'_>,
        key_id: &Bound<'_, PyAny>,
        text: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let text = convert::str_arg(py, text, "text")?;
        let seed = decode_key_text(&text)
            .and_then(|bytes| <[u8; 32]>::try_from(bytes.as_slice()).ok())
            .ok_or_else(|| errors::invalid_input(py, "text is not base64url of 32 bytes"))?;
        Self::from_parts(py, key_id, seed)
    }

    /// A fresh key whose seed comes from the operating system (`os.urandom(32)`).
    #[staticmethod]
    fn generate(py: Python<'_>, key_id: &Bound<'_, PyAny>) -> PyResult<Self> {
        let random = py.import("os")?.call_method1("urandom", (32,))?;
        let seed = seed_arg(py, &random, "os.urandom(32)")?;
        Self::from_parts(py, key_id, seed)
    }

    /// The 32-byte seed (the private key). Secret: store it, never log it.
    fn seed_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.seed_bytes())
    }

    /// The seed as canonical unpadded base64url (what `generate_keypair()` returns first).
    fn to_base64url(&self) -> String {
        encode_base64url(&self.inner.seed_bytes())
    }

    #[getter]
    fn algorithm(&self) -> &'static str {
        self.inner.algorithm()
    }

    #[getter]
    fn key_id(&self) -> &str {
        self.inner.key_id()
    }

    #[getter]
    fn public_key_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.public_key_bytes())
    }

    /// The public key as unpadded base64url (the Registry's `publicKey` text).
    #[getter]
    fn public_key(&self) -> String {
        encode_base64url(&self.inner.public_key_bytes())
    }

    /// The 64-byte Ed25519 signature of `message`.
    fn sign<'py>(
        &self,
        py: Python<'py>,
        message: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let message = convert::bytes_arg(py, message, "message", false)?;
        let signature = py.detach(|| self.inner.sign(&message));
        Ok(PyBytes::new(py, &signature))
    }

    fn __repr__(&self) -> String {
        format!(
            "SigningKey(key_id={:?}, public_key={:?})",
            self.inner.key_id(),
            self.public_key()
        )
    }
}

/// The 32 bytes of a key given as bytes or as base64url text (padded or not); anything else is
/// `InvalidInputError`. Backs the `crypto` helpers (`load_private_key`, `load_public_key`).
#[pyfunction]
#[pyo3(signature = (value, what = None))]
pub fn key_bytes<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
    what: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let what = match convert::present(what) {
        Some(what) => convert::str_arg(py, what, "what")?.into_owned(),
        None => "key".to_owned(),
    };
    Ok(PyBytes::new(py, &seed_arg(py, value, &what)?))
}

/// `verify_detached(public_key, message, signature) -> bool`: strict Ed25519 verification (the
/// §6.4 point and scalar rules, no Registry) of the base64url `signature` text over `message`
/// with the 32-byte `public_key`. Never raises for a bad signature or key: `False`. Backs
/// `crypto.verify_canonical` / `crypto.verify_bytes`.
#[pyfunction]
pub fn verify_detached(
    py: Python<'_>,
    public_key: &Bound<'_, PyAny>,
    message: &Bound<'_, PyAny>,
    signature: &Bound<'_, PyAny>,
) -> PyResult<bool> {
    let public_key = convert::bytes_arg(py, public_key, "public_key", false)?;
    let message = convert::bytes_arg(py, message, "message", false)?;
    let Ok(signature) = signature.cast::<PyString>() else {
        return Ok(false);
    };
    let Some(signature) = signature
        .to_cow()
        .ok()
        .and_then(|text| decode_base64url(&text))
    else {
        return Ok(false);
    };
    Ok(py.detach(|| crypto::verify_detached(&public_key, &message, &signature)))
}
