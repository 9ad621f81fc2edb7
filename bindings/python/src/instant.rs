//! Instants: timezone-aware `datetime` ⇄ the core's [`UnixMillis`] (floor to the millisecond),
//! and the one RFC 3339 renderer every Python module uses (`render_instant`, over the kernel's
//! [`render_rfc3339`]). Naive datetimes are refused with `InvalidInputError`: the core never
//! guesses a time zone.

use missionweaveprotocol_kernel::unix_millis::{Fraction, UnixMillis, render_rfc3339};
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
static ONE_US: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

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

fn one_us(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    ONE_US
        .get_or_try_init(py, || {
            let kwargs = PyDict::new(py);
            kwargs.set_item("microseconds", 1)?;
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
    Ok(UnixMillis(units_since_epoch(py, value, what, one_ms(py)?)?))
}

/// A timezone-aware `datetime` as Unix microseconds (exact: a `datetime` has no finer part).
pub fn micros_arg(py: Python<'_>, value: &Bound<'_, PyAny>, what: &str) -> PyResult<i64> {
    units_since_epoch(py, value, what, one_us(py)?)
}

/// A `timedelta` in microseconds (exact), or `None` when `value` is not a `timedelta`.
pub fn timedelta_micros(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Option<i128>> {
    if !value.is_instance(TIMEDELTA.import(py, "datetime", "timedelta")?)? {
        return Ok(None);
    }
    let part = |name: &str| -> PyResult<i128> { value.getattr(name)?.extract::<i128>() };
    Ok(Some(
        part("days")? * 86_400_000_000 + part("seconds")? * 1_000_000 + part("microseconds")?,
    ))
}

/// An aware `datetime` rendered by the core's one RFC 3339 renderer with `fraction`; a naive
/// one, or one outside years 0001–9999 in UTC, is `InvalidInputError`.
pub fn render(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    what: &str,
    fraction: Fraction,
) -> PyResult<String> {
    let micros = micros_arg(py, value, what)?;
    render_rfc3339(micros, fraction).ok_or_else(|| {
        let shown = value
            .str()
            .map(|s| s.to_string())
            .unwrap_or_else(|_| format!("{micros} µs"));
        errors::invalid_input(
            py,
            format!("{what} {shown} is outside years 0001-9999 in UTC"),
        )
    })
}

/// `render_instant(value, *, fraction="millis")`: an aware `datetime` in RFC 3339 UTC (`Z`),
/// the fraction of a second written as `fraction` says — `"millis"` (always three digits,
/// floored: `.006Z`), `"micros"` (six digits, none for a whole second: the reference's form) or
/// `"shortest"` (trailing zeros trimmed, none for a whole second). `InvalidInputError` for a
/// naive datetime, an unknown form, or an instant outside years 0001–9999 in UTC.
#[pyfunction]
#[pyo3(signature = (value, *, fraction="millis"))]
pub fn render_instant(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    fraction: &str,
) -> PyResult<String> {
    let form = Fraction::parse(fraction).ok_or_else(|| {
        let names: Vec<&str> = Fraction::ALL.iter().map(|f| f.as_str()).collect();
        errors::invalid_input(
            py,
            format!(
                "fraction must be one of {}, not {fraction:?}",
                names.join(", ")
            ),
        )
    })?;
    render(py, value, "instant", form)
}

fn units_since_epoch(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    what: &str,
    unit: &Bound<'_, PyAny>,
) -> PyResult<i64> {
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
    let units = value
        .sub(epoch(py)?)
        .and_then(|delta| delta.call_method1("__floordiv__", (unit,)))
        .map_err(raised)?;
    units.extract::<i64>().map_err(raised)
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
