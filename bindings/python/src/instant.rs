//! Instants: timezone-aware `datetime` ⇄ the core's [`UnixMillis`] (floor to the millisecond).
//! Naive datetimes are refused with `InvalidInputError`: the core never guesses a time zone.

use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};

use missionweaveprotocol::ArgumentError;

use crate::convert::{host_failure, present, type_name};
use crate::errors;

static DATETIME: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static TIMEDELTA: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static EPOCH: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static ONE_MS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

fn epoch(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    EPOCH
        .get_or_try_init(py, || {
            let utc = py.import("datetime")?.getattr("timezone")?.getattr("utc")?;
            let kwargs = PyDict::new(py);
            kwargs.set_item("tzinfo", utc)?;
            Ok::<_, PyErr>(
                DATETIME
                    .import(py, "datetime", "datetime")?
                    .call((1970, 1, 1), Some(&kwargs))?
                    .unbind(),
            )
        })
        .map(|e| e.bind(py))
}

fn one_ms(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    ONE_MS
        .get_or_try_init(py, || {
            let kwargs = PyDict::new(py);
            kwargs.set_item("milliseconds", 1)?;
            Ok::<_, PyErr>(
                TIMEDELTA
                    .import(py, "datetime", "timedelta")?
                    .call((), Some(&kwargs))?
                    .unbind(),
            )
        })
        .map(|e| e.bind(py))
}

/// A timezone-aware `datetime` as Unix milliseconds (sub-millisecond parts are floored).
pub fn millis_arg(py: Python<'_>, value: &Bound<'_, PyAny>, what: &str) -> PyResult<UnixMillis> {
    let datetime = DATETIME.import(py, "datetime", "datetime")?;
    if !value.is_instance(datetime)? {
        return Err(errors::invalid_input(
            py,
            format!(
                "{what} must be a timezone-aware datetime, not {}",
                type_name(value)
            ),
        ));
    }
    // The tzinfo is caller code: an exception from it (or an offset the datetime arithmetic
    // refuses) is an argument error, except `KeyboardInterrupt`/`SystemExit`.
    let raised = |raised: PyErr| {
        let detail = format!("its time zone cannot be read ({raised})");
        host_failure(py, raised, ArgumentError::new(what, detail))
    };
    if value.call_method0("utcoffset").map_err(raised)?.is_none() {
        return Err(errors::invalid_input(
            py,
            format!(
                "{what} is a naive datetime; pass a timezone-aware one (e.g. tzinfo=timezone.utc)"
            ),
        ));
    }
    let millis = value
        .sub(epoch(py)?)
        .and_then(|delta| delta.call_method1("__floordiv__", (one_ms(py)?,)))
        .map_err(raised)?;
    Ok(UnixMillis(millis.extract::<i64>().map_err(raised)?))
}

/// An optional instant (`None` or omitted → `None`).
pub fn opt_millis_arg(
    py: Python<'_>,
    value: Option<&Bound<'_, PyAny>>,
    what: &str,
) -> PyResult<Option<UnixMillis>> {
    present(value).map(|v| millis_arg(py, v, what)).transpose()
}

/// Unix milliseconds as an aware UTC `datetime`.
pub fn to_datetime(py: Python<'_>, at: UnixMillis) -> PyResult<Bound<'_, PyAny>> {
    let build = || -> PyResult<Bound<'_, PyAny>> {
        let kwargs = PyDict::new(py);
        kwargs.set_item("milliseconds", at.0)?;
        let delta = TIMEDELTA
            .import(py, "datetime", "timedelta")?
            .call((), Some(&kwargs))?;
        epoch(py)?.add(delta)
    };
    build()
        .map_err(|_| errors::invalid_input(py, format!("{}ms is outside the datetime range", at.0)))
}

/// An optional instant as `datetime | None`.
pub fn opt_datetime(py: Python<'_>, at: Option<UnixMillis>) -> PyResult<Bound<'_, PyAny>> {
    match at {
        Some(at) => to_datetime(py, at),
        None => Ok(py.None().into_bound(py)),
    }
}
