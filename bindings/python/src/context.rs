//! `missionweaveprotocol.context` (Context Packages, knowledge publications, Group Snapshots):
//! one call with the JSON arguments `missionweaveprotocol_agent::context::call` reads and
//! checks. The signing methods take a `signing_key` (the native `SigningKey` or any object of
//! the `SigningKey` Protocol); refusals become `ContextPackageError` or the codec's errors.

use missionweaveprotocol::crypto::Signer;
use missionweaveprotocol_agent::context;
use pyo3::prelude::*;

use crate::convert::{self, ToJsonError};
use crate::errors;
use crate::signer::SignerArg;

/// `context_call(method, args, signing_key=None)`: the answer of `context::call` as Python
/// values.
#[pyfunction]
#[pyo3(signature = (method, args, signing_key=None))]
fn context_call<'py>(
    py: Python<'py>,
    method: &str,
    args: &Bound<'py, PyAny>,
    signing_key: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let args = convert::to_value(args).map_err(|e| match e {
        ToJsonError::Python(error) => error,
        ToJsonError::Unsupported(text) => errors::invalid_input(py, format!("args: {text}")),
        ToJsonError::Parse(error) => errors::invalid_input(py, format!("args: {error}")),
    })?;
    let signer = signing_key
        .map(|key| SignerArg::extract(py, key))
        .transpose()?;
    let key: Option<&(dyn Signer + Sync)> = signer.as_ref().map(|s| match s {
        SignerArg::Native(native) => &native.get().inner as &(dyn Signer + Sync),
        SignerArg::Python(python) => python.as_ref() as &(dyn Signer + Sync),
    });
    let outcome = py.detach(|| context::call(method, &args, key.map(|k| k as &dyn Signer)));
    match outcome {
        Ok(value) => convert::to_python(py, &value),
        Err(error) => Err(match signer.as_ref().and_then(SignerArg::take_raised) {
            Some(raised) => raised,
            None => errors::describe(py, &error),
        }),
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(context_call, m)?)
}
