//! The `signing_key` argument of `SignedDocumentCodec.sign`: the native `SigningKey`, or any
//! object satisfying the reference's `SigningKey` Protocol (`algorithm`, `key_id`,
//! `public_key_bytes`, `sign(message) -> bytes`), which is how HSMs and KMS plug in.
//!
//! A duck-typed key is wrapped in [`PythonSigner`], a core [`Signer`]: the core checks what it
//! hands back (algorithm, public key point, signature length, `S < L`, the equation) exactly as
//! for a native key. The GIL is released while the core works and re-acquired only for the
//! `sign` call. An `Exception` raised by the object becomes `SignedDocumentSigningError` (the
//! original is its `__cause__`); `KeyboardInterrupt`, `SystemExit` and other non-`Exception`
//! `BaseException`s propagate unchanged.

use std::sync::Mutex;

use missionweaveprotocol::Stage;
use missionweaveprotocol::crypto::{PointError, PublicKey, Signer, SignerError};
use missionweaveprotocol::signed_documents::SigningError;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::convert;
use crate::errors;
use crate::keys::SigningKey;

/// A Python object satisfying the `SigningKey` Protocol, as a core signer.
#[derive(Debug)]
pub struct PythonSigner {
    object: Py<PyAny>,
    key_id: String,
    algorithm: String,
    public_key_bytes: [u8; 32],
    public_key: Result<PublicKey, PointError>,
    /// The exception the object raised while signing, re-raised (or chained) afterwards.
    raised: Mutex<Option<PyErr>>,
}

impl Signer for PythonSigner {
    fn key_id(&self) -> &str {
        &self.key_id
    }

    fn algorithm(&self) -> &str {
        &self.algorithm
    }

    fn public_key_bytes(&self) -> [u8; 32] {
        self.public_key_bytes
    }

    fn public_key(&self) -> Result<PublicKey, PointError> {
        self.public_key
    }

    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, SignerError> {
        Python::attach(|py| {
            let result = self
                .object
                .bind(py)
                .call_method1("sign", (PyBytes::new(py, message),));
            match result {
                Ok(signature) => convert::bytes_arg(py, &signature, "signature", false)
                    .map(|bytes| bytes.into_owned())
                    .map_err(|_| {
                        SignerError::new(format!(
                            "sign() returned {}, not bytes",
                            convert::type_name(&signature)
                        ))
                    }),
                Err(error) => {
                    let detail = format!("sign() raised {error}");
                    let mut slot = self.raised.lock().unwrap_or_else(|e| e.into_inner());
                    *slot = Some(error);
                    Err(SignerError::new(detail))
                }
            }
        })
    }
}

/// The `signing_key` argument.
#[derive(Debug)]
pub enum SignerArg {
    Native(Py<SigningKey>),
    Python(Box<PythonSigner>),
}

/// A `SignedDocumentSigningError` for a failure of the signing key's own code, with the
/// original exception as its `__cause__`, or the original itself when it is not an `Exception`
/// (`KeyboardInterrupt`, `SystemExit`, …), so those still stop the program.
pub fn signer_failure(py: Python<'_>, stage: Stage, what: &str, raised: PyErr) -> PyErr {
    if !raised.is_instance_of::<PyException>(py) {
        return raised;
    }
    let error = errors::signing_error(
        py,
        &SigningError::new(stage, format!("{what} raised {raised}")),
    );
    error.set_cause(py, Some(raised));
    error
}

impl SignerArg {
    pub fn extract(py: Python<'_>, object: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(native) = object.cast::<SigningKey>() {
            return Ok(Self::Native(native.clone().unbind()));
        }
        let missing: Vec<&str> = ["algorithm", "key_id", "public_key_bytes", "sign"]
            .into_iter()
            // A property that raises counts as present: the error is reported when it is read.
            .filter(|name| !object.hasattr(*name).unwrap_or(true))
            .collect();
        if !missing.is_empty() {
            return Err(errors::invalid_input(
                py,
                format!(
                    "signing_key must satisfy the SigningKey protocol (algorithm, key_id, \
                     public_key_bytes, sign), but {} has no {}",
                    convert::type_name(object),
                    missing.join(", ")
                ),
            ));
        }
        let property = |name: &str, stage: Stage| {
            object
                .getattr(name)
                .map_err(|raised| signer_failure(py, stage, &format!("signing_key.{name}"), raised))
        };
        let key_id = property("key_id", Stage::SignatureEnvelope)?;
        let key_id = convert::str_arg(py, &key_id, "signing_key.key_id")?.into_owned();
        let algorithm = property("algorithm", Stage::SignatureEnvelope)?;
        let algorithm = convert::str_arg(py, &algorithm, "signing_key.algorithm")?.into_owned();
        let public = property("public_key_bytes", Stage::KeyResolution)?;
        let public = convert::bytes_arg(py, &public, "signing_key.public_key_bytes", false)?;
        let public_key = PublicKey::from_bytes(&public);
        Ok(Self::Python(Box::new(PythonSigner {
            object: object.clone().unbind(),
            key_id,
            algorithm,
            public_key_bytes: public_key.map(|k| *k.as_bytes()).unwrap_or([0; 32]),
            public_key,
            raised: Mutex::new(None),
        })))
    }

    /// The exception the Python object raised during the last signing, if any.
    pub fn take_raised(&self) -> Option<PyErr> {
        match self {
            Self::Native(_) => None,
            Self::Python(signer) => signer
                .raised
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take(),
        }
    }
}
