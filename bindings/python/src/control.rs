//! The human control interface (`missionweaveprotocol.control`): conversions only, over
//! `missionweaveprotocol_engine::control`. A refusal is the core's `ControlError`
//! (`InvalidInputError`, a `ValueError` as the reference's).

use missionweaveprotocol::json::Value;
use missionweaveprotocol_engine::control;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{self, ToJsonError};
use crate::errors;

fn dict_arg(py: Python<'_>, value: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
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

/// The unsigned wire Command of a control request (see `control/operations.rs`).
#[pyfunction]
pub fn control_command<'py>(
    py: Python<'py>,
    request: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let request = dict_arg(py, request, "request")?;
    let command = control::build(&request).map_err(|e| errors::describe(py, &e))?;
    convert::to_python(py, &command)
}

/// The unsigned Approval Decision of an accepted `mission.approve`
/// (`{"command", "event", "mission"}`).
#[pyfunction]
pub fn control_approval<'py>(
    py: Python<'py>,
    request: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let request = dict_arg(py, request, "request")?;
    let document = control::approval_document(&request).map_err(|e| errors::describe(py, &e))?;
    convert::to_python(py, &document)
}

/// Whether `command` carries a valid signature by `key_id` and the 32-byte `public_key`.
#[pyfunction]
pub fn control_verify(
    py: Python<'_>,
    command: &Bound<'_, PyAny>,
    key_id: &str,
    public_key: &[u8],
) -> PyResult<bool> {
    let command = dict_arg(py, command, "command")?;
    Ok(control::verify_signature(&command, key_id, public_key))
}

/// `control_default_key_id(human_id)`: the key ID a new human key gets when none is given.
#[pyfunction]
pub fn control_default_key_id(human_id: &str) -> String {
    control::default_key_id(human_id)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(control_default_key_id, m)?)?;
    m.add_function(wrap_pyfunction!(control_command, m)?)?;
    m.add_function(wrap_pyfunction!(control_approval, m)?)?;
    m.add_function(wrap_pyfunction!(control_verify, m)?)?;
    m.add("CONTROL_OPERATIONS", control::OPERATIONS.to_vec())?;
    Ok(())
}
