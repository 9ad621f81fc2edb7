//! `ParseLimits`: the core's parse limits (docs/limits.md) as an immutable Python value. The
//! profiles' figures come from the core; this module only converts.

use missionweaveprotocol::json;
use pyo3::prelude::*;

use crate::convert;
use crate::errors;

/// Limits on one parsed JSON document; exceeding one is a stage-1 `JsonParseError` (or a
/// verification rejection at stage `parse`) with reason `limit-exceeded`, raised before the
/// work. `ParseLimits.DOCUMENT` is the default of `SignedDocumentCodec`, `ParseLimits.STATE`
/// that of `parse_json` and `canonicalize_json`.
#[pyclass(module = "missionweaveprotocol._native", frozen, eq)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseLimits {
    pub inner: json::ParseLimits,
}

#[pymethods]
impl ParseLimits {
    #[new]
    #[pyo3(signature = (*, max_document_bytes, max_container_entries, max_string_bytes, max_number_chars))]
    fn py_new(
        py: Python<'_>,
        max_document_bytes: &Bound<'_, PyAny>,
        max_container_entries: &Bound<'_, PyAny>,
        max_string_bytes: &Bound<'_, PyAny>,
        max_number_chars: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        checked(
            py,
            json::ParseLimits {
                max_document_bytes: convert::count_arg(
                    py,
                    max_document_bytes,
                    "max_document_bytes",
                )?,
                max_container_entries: convert::count_arg(
                    py,
                    max_container_entries,
                    "max_container_entries",
                )?,
                max_string_bytes: convert::count_arg(py, max_string_bytes, "max_string_bytes")?,
                max_number_chars: convert::count_arg(py, max_number_chars, "max_number_chars")?,
            },
        )
    }

    /// For one Signed Document or frame received from a peer.
    #[classattr]
    #[pyo3(name = "DOCUMENT")]
    fn document() -> Self {
        Self {
            inner: json::ParseLimits::DOCUMENT,
        }
    }

    /// For stored state (Registry, budget, scheduler and lease snapshots).
    #[classattr]
    #[pyo3(name = "STATE")]
    fn state() -> Self {
        Self {
            inner: json::ParseLimits::STATE,
        }
    }

    #[getter]
    fn max_document_bytes(&self) -> usize {
        self.inner.max_document_bytes
    }

    #[getter]
    fn max_container_entries(&self) -> usize {
        self.inner.max_container_entries
    }

    #[getter]
    fn max_string_bytes(&self) -> usize {
        self.inner.max_string_bytes
    }

    #[getter]
    fn max_number_chars(&self) -> usize {
        self.inner.max_number_chars
    }

    /// A copy with the given limits changed.
    #[pyo3(signature = (*, max_document_bytes=None, max_container_entries=None, max_string_bytes=None, max_number_chars=None))]
    fn replace(
        &self,
        py: Python<'_>,
        max_document_bytes: Option<&Bound<'_, PyAny>>,
        max_container_entries: Option<&Bound<'_, PyAny>>,
        max_string_bytes: Option<&Bound<'_, PyAny>>,
        max_number_chars: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mut inner = self.inner;
        if let Some(value) = max_document_bytes {
            inner.max_document_bytes = convert::count_arg(py, value, "max_document_bytes")?;
        }
        if let Some(value) = max_container_entries {
            inner.max_container_entries = convert::count_arg(py, value, "max_container_entries")?;
        }
        if let Some(value) = max_string_bytes {
            inner.max_string_bytes = convert::count_arg(py, value, "max_string_bytes")?;
        }
        if let Some(value) = max_number_chars {
            inner.max_number_chars = convert::count_arg(py, value, "max_number_chars")?;
        }
        checked(py, inner)
    }

    fn __hash__(&self) -> u64 {
        let l = &self.inner;
        (l.max_document_bytes as u64)
            ^ (l.max_container_entries as u64).rotate_left(16)
            ^ (l.max_string_bytes as u64).rotate_left(32)
            ^ (l.max_number_chars as u64).rotate_left(48)
    }

    fn __repr__(&self) -> String {
        let l = &self.inner;
        format!(
            "ParseLimits(max_document_bytes={}, max_container_entries={}, max_string_bytes={}, max_number_chars={})",
            l.max_document_bytes, l.max_container_entries, l.max_string_bytes, l.max_number_chars
        )
    }
}

/// The core's check of caller-chosen limits (each at least 1), as a Python error.
fn checked(py: Python<'_>, l: json::ParseLimits) -> PyResult<ParseLimits> {
    json::ParseLimits::checked(
        l.max_document_bytes,
        l.max_container_entries,
        l.max_string_bytes,
        l.max_number_chars,
    )
    .map(|inner| ParseLimits { inner })
    .map_err(|e| errors::describe(py, &e))
}

/// The limits a call was given, or `default`.
pub fn limits_arg(
    py: Python<'_>,
    value: Option<&Bound<'_, PyAny>>,
    default: json::ParseLimits,
) -> PyResult<json::ParseLimits> {
    match value {
        None => Ok(default),
        Some(value) if value.is_none() => Ok(default),
        Some(value) => value
            .cast::<ParseLimits>()
            .map(|limits| limits.get().inner)
            .map_err(|_| {
                errors::invalid_input(
                    py,
                    format!(
                        "limits must be a ParseLimits, not {}",
                        convert::type_name(value)
                    ),
                )
            }),
    }
}
