//! Presence staleness (§6.2) for `registry.AgentRegistry`: the core's rule
//! (`missionweaveprotocol_kernel::presence`), Python converts times only.

use missionweaveprotocol_kernel::presence;
use pyo3::prelude::*;

use crate::errors;
use crate::instant::{micros_arg, timedelta_micros};

fn ttl_micros(py: Python<'_>, ttl: &Bound<'_, PyAny>) -> PyResult<Result<i64, String>> {
    let micros = timedelta_micros(py, ttl)?
        .ok_or_else(|| errors::invalid_input(py, "presence_ttl must be a timedelta"))?;
    Ok(presence::presence_ttl(micros).map_err(|e| e.to_string()))
}

/// `presence_ttl_problem(ttl)`: why `ttl` is not a presence TTL (the core's message), or `None`.
#[pyfunction]
pub fn presence_ttl_problem(py: Python<'_>, ttl: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    Ok(ttl_micros(py, ttl)?.err())
}

/// `presence_is_stale(heartbeat_at, now, ttl)`: whether a record last heard at `heartbeat_at`
/// reads as offline at `now` (more than `ttl` ago).
#[pyfunction]
pub fn presence_is_stale(
    py: Python<'_>,
    heartbeat_at: &Bound<'_, PyAny>,
    now: &Bound<'_, PyAny>,
    ttl: &Bound<'_, PyAny>,
) -> PyResult<bool> {
    let ttl = ttl_micros(py, ttl)?.map_err(|text| errors::invalid_input(py, text))?;
    Ok(presence::is_stale(
        micros_arg(py, heartbeat_at, "heartbeat_at")?,
        micros_arg(py, now, "now")?,
        ttl,
    ))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("PRESENCE_STALE_STATUS", presence::STALE_STATUS)?;
    m.add(
        "PRESENCE_STALE_AVAILABLE_SLOTS",
        presence::STALE_AVAILABLE_SLOTS,
    )?;
    m.add_function(wrap_pyfunction!(presence_ttl_problem, m)?)?;
    m.add_function(wrap_pyfunction!(presence_is_stale, m)?)?;
    Ok(())
}
