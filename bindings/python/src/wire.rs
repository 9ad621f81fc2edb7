//! Frames (§17): strict parsing, the exact bytes of a received Command, encoding.

use missionweaveprotocol::WireCode;
use missionweaveprotocol::wire::{self as core_wire, ReceivedFrame};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::convert::{self, ToJsonError};
use crate::errors;

/// A schema-valid frame.
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug)]
pub struct Frame {
    inner: core_wire::Frame,
}

#[pymethods]
impl Frame {
    #[getter]
    fn frame_type(&self) -> &'static str {
        self.inner.frame_type.as_str()
    }
    #[getter]
    fn frame_id(&self) -> &str {
        self.inner.frame_id()
    }
    #[getter]
    fn protocol_version(&self) -> Option<&str> {
        self.inner
            .value
            .get("protocolVersion")
            .and_then(|v| v.as_str())
    }
    #[getter]
    fn phase(&self) -> Option<&str> {
        self.inner.phase()
    }
    /// The frame as plain Python values.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_python(py, &self.inner.value)
    }
    fn __repr__(&self) -> String {
        format!(
            "Frame(frame_type={:?}, frame_id={:?})",
            self.inner.frame_type.as_str(),
            self.inner.frame_id()
        )
    }
}

/// A received `COMMAND` frame: envelope checked, Command bytes exactly as received.
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug)]
pub struct ReceivedCommandFrame {
    inner: core_wire::ReceivedCommandFrame,
}

#[pymethods]
impl ReceivedCommandFrame {
    #[getter]
    fn protocol_version(&self) -> &str {
        &self.inner.protocol_version
    }
    #[getter]
    fn frame_id(&self) -> &str {
        &self.inner.frame_id
    }
    #[getter]
    fn command_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.command_bytes)
    }
    fn __repr__(&self) -> String {
        format!("ReceivedCommandFrame(frame_id={:?})", self.inner.frame_id)
    }
}

/// Strictly parses a frame (`str` or bytes) and validates it against the frame schema.
#[pyfunction]
pub fn parse_frame(py: Python<'_>, payload: &Bound<'_, PyAny>) -> PyResult<Frame> {
    let bytes = convert::bytes_arg(py, payload, "payload", true)?;
    py.detach(|| core_wire::parse_frame(&bytes))
        .map(|inner| Frame { inner })
        .map_err(|e| errors::frame_error(py, &e))
}

/// Parses a received frame; a `COMMAND` frame keeps its nested Command's exact bytes.
#[pyfunction]
pub fn parse_received_frame<'py>(
    py: Python<'py>,
    payload: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let bytes = convert::bytes_arg(py, payload, "payload", true)?;
    match py.detach(|| core_wire::parse_received_frame(&bytes)) {
        Ok(ReceivedFrame::Command(inner)) => {
            Ok(Bound::new(py, ReceivedCommandFrame { inner })?.into_any())
        }
        Ok(ReceivedFrame::Other(inner)) => Ok(Bound::new(py, Frame { inner })?.into_any()),
        Err(error) => Err(errors::frame_error(py, &error)),
    }
}

/// Validates a frame (a `Frame` or a dict) and encodes it as RFC 8785 JSON text.
#[pyfunction]
pub fn encode_frame(py: Python<'_>, frame: &Bound<'_, PyAny>) -> PyResult<String> {
    let value = if let Ok(parsed) = frame.cast::<Frame>() {
        parsed.get().inner.value.clone()
    } else {
        convert::to_value(frame).map_err(|e| match e {
            ToJsonError::Python(error) => error,
            ToJsonError::Unsupported(text) => errors::invalid_input(py, text),
            ToJsonError::Parse(error) => errors::parse_error(py, &error),
        })?
    };
    let bytes = core_wire::encode_frame(&value).map_err(|e| errors::frame_error(py, &e))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Builds an `ERROR` frame (§19); `retryable` follows the code.
#[pyfunction]
#[pyo3(signature = (frame_id, code, message, occurred_at, related_frame_id = None))]
pub fn error_frame(
    py: Python<'_>,
    frame_id: &Bound<'_, PyAny>,
    code: &Bound<'_, PyAny>,
    message: &Bound<'_, PyAny>,
    occurred_at: &Bound<'_, PyAny>,
    related_frame_id: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    let text = |value: &Bound<'_, PyAny>, what: &str| {
        convert::str_arg(py, value, what).map(std::borrow::Cow::into_owned)
    };
    let code = text(code, "code")?;
    let code = WireCode::parse(&code)
        .ok_or_else(|| errors::invalid_input(py, format!("{code:?} is not a wire code")))?;
    let related = match related_frame_id.filter(|r| !r.is_none()) {
        Some(related) => Some(text(related, "related_frame_id")?),
        None => None,
    };
    let bytes = core_wire::error_frame(
        &text(frame_id, "frame_id")?,
        code,
        &text(message, "message")?,
        &text(occurred_at, "occurred_at")?,
        related.as_deref(),
    )
    .map_err(|e| errors::frame_error(py, &e))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
