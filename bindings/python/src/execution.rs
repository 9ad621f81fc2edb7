//! Bounded retries and side-effect idempotency keys (§11.4).

use missionweaveprotocol_kernel::resources::MAX_SAFE_INTEGER;
use missionweaveprotocol_kernel::retry::{
    self as core_exec, AttemptOutcome, Backoff, RetryController as CoreController,
    RetryPolicy as CorePolicy, RetrySchedule as CoreSchedule,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::convert::{self, type_name};
use crate::errors;
use crate::instant::{millis_arg, opt_datetime, opt_millis_arg, to_datetime};
use crate::resources::{ResourceUsage, usage_arg};
use crate::values::PyEnum;

fn backoff_arg(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Backoff> {
    let text = convert::str_arg(py, value, "backoff")?;
    Ok(match text.as_ref() {
        "none" => Backoff::None,
        "fixed" => Backoff::Fixed,
        "exponential" => Backoff::Exponential,
        other => {
            return Err(errors::invalid_input(
                py,
                format!("backoff must be none, fixed or exponential, not {other:?}"),
            ));
        }
    })
}

const fn backoff_str(b: Backoff) -> &'static str {
    match b {
        Backoff::None => "none",
        Backoff::Fixed => "fixed",
        Backoff::Exponential => "exponential",
    }
}

/// `RetryPolicy(*, max_attempts, backoff, max_delay_ms, initial_delay_ms=None,
/// retryable_failures=())`: a Work Contract's retry policy with durations in milliseconds
/// (`initial_delay_ms` defaults to `min(1000, max_delay_ms)`). `from_dict` reads the
/// contract's `retryPolicy` object.
#[pyclass(module = "missionweaveprotocol._native", frozen, eq)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    inner: CorePolicy,
}

#[pymethods]
impl RetryPolicy {
    #[new]
    #[pyo3(signature = (*, max_attempts, backoff, max_delay_ms, initial_delay_ms=None, retryable_failures=None))]
    fn py_new(
        py: Python<'_>,
        max_attempts: &Bound<'_, PyAny>,
        backoff: &Bound<'_, PyAny>,
        max_delay_ms: &Bound<'_, PyAny>,
        initial_delay_ms: Option<&Bound<'_, PyAny>>,
        retryable_failures: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let max_delay_ms = convert::uint_arg(py, max_delay_ms, "max_delay_ms", MAX_SAFE_INTEGER)?;
        Ok(Self {
            inner: CorePolicy {
                max_attempts: convert::uint_arg(
                    py,
                    max_attempts,
                    "max_attempts",
                    u64::from(u32::MAX),
                )? as u32,
                backoff: backoff_arg(py, backoff)?,
                initial_delay_ms: match convert::present(initial_delay_ms) {
                    Some(v) => convert::uint_arg(py, v, "initial_delay_ms", MAX_SAFE_INTEGER)?,
                    None => max_delay_ms.min(1_000),
                },
                max_delay_ms,
                retryable_failures: match convert::present(retryable_failures) {
                    Some(v) => convert::str_list_arg(py, v, "retryable_failures")?,
                    None => Vec::new(),
                },
            },
        })
    }

    /// Reads a Work Contract's `retryPolicy` object (`maxAttempts`, `backoff`, `maxDelay`,
    /// `retryableFailures`; nothing else).
    #[staticmethod]
    fn from_dict(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let value = crate::canonical_value(py, data)?;
        CorePolicy::from_contract(&value)
            .map(|inner| Self { inner })
            .ok_or_else(|| {
                errors::invalid_input(
                    py,
                    "not a work-contract retryPolicy object (maxAttempts ≥ 1, backoff, maxDelay duration, unique retryableFailures, no other members)",
                )
            })
    }

    #[getter]
    fn max_attempts(&self) -> u32 {
        self.inner.max_attempts
    }
    #[getter]
    fn backoff<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        PyEnum::Backoff.member(py, backoff_str(self.inner.backoff))
    }
    #[getter]
    fn initial_delay_ms(&self) -> u64 {
        self.inner.initial_delay_ms
    }
    #[getter]
    fn max_delay_ms(&self) -> u64 {
        self.inner.max_delay_ms
    }
    #[getter]
    fn retryable_failures<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.inner.retryable_failures)
    }

    /// Delay in ms after the `failures`-th failed attempt (1-based).
    fn delay_after(&self, py: Python<'_>, failures: &Bound<'_, PyAny>) -> PyResult<u64> {
        let n = convert::uint_arg(py, failures, "failures", u64::from(u32::MAX))? as u32;
        Ok(self.inner.delay_after(n))
    }

    fn __repr__(&self) -> String {
        format!(
            "RetryPolicy(max_attempts={}, backoff={:?}, max_delay_ms={}, initial_delay_ms={})",
            self.inner.max_attempts,
            backoff_str(self.inner.backoff),
            self.inner.max_delay_ms,
            self.inner.initial_delay_ms
        )
    }
}

/// One started attempt: number, the stable idempotency key of the logical operation and the
/// derived per-attempt key.
#[pyclass(module = "missionweaveprotocol._native", frozen, eq)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    #[pyo3(get)]
    attempt_number: u32,
    #[pyo3(get)]
    idempotency_key: String,
    #[pyo3(get)]
    attempt_key: String,
    started_at: UnixMillis,
}

#[pymethods]
impl Attempt {
    #[getter]
    fn started_at<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_datetime(py, self.started_at)
    }

    fn __repr__(&self) -> String {
        format!(
            "Attempt(attempt_number={}, idempotency_key={:?})",
            self.attempt_number, self.idempotency_key
        )
    }
}

/// The decision after an attempt: retry or not, when, and why (`RetryReason`).
#[pyclass(module = "missionweaveprotocol._native", frozen, eq)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetrySchedule {
    inner: CoreSchedule,
}

#[pymethods]
impl RetrySchedule {
    #[getter]
    fn retry(&self) -> bool {
        self.inner.retry
    }
    #[getter]
    fn retry_at<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        opt_datetime(py, self.inner.retry_at)
    }
    #[getter]
    fn reason<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        PyEnum::RetryReason.member(py, self.inner.reason.as_str())
    }

    fn __repr__(&self) -> String {
        format!(
            "RetrySchedule(retry={}, retry_at={:?}, reason={:?})",
            self.inner.retry,
            self.inner.retry_at.map(|t| t.to_string()),
            self.inner.reason.as_str()
        )
    }
}

/// `RetryController(policy, *, mission_id, work_item_id, ownership_epoch, cost_budget,
/// deadline=None)`: enforces one WorkItem's attempt, backoff, deadline and cost budgets under
/// one Ownership Epoch (a zero cost dimension allows nothing).
#[pyclass(module = "missionweaveprotocol._native")]
#[derive(Debug, Clone)]
pub struct RetryController {
    inner: CoreController,
}

#[pymethods]
impl RetryController {
    #[new]
    #[pyo3(signature = (policy, *, mission_id, work_item_id, ownership_epoch, cost_budget, deadline=None))]
    fn py_new(
        py: Python<'_>,
        policy: &Bound<'_, PyAny>,
        mission_id: &Bound<'_, PyAny>,
        work_item_id: &Bound<'_, PyAny>,
        ownership_epoch: &Bound<'_, PyAny>,
        cost_budget: &Bound<'_, PyAny>,
        deadline: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let policy = policy
            .cast::<RetryPolicy>()
            .map_err(|_| {
                errors::invalid_input(
                    py,
                    format!("policy must be a RetryPolicy, not {}", type_name(policy)),
                )
            })?
            .get()
            .inner
            .clone();
        CoreController::new(
            policy,
            opt_millis_arg(py, deadline, "deadline")?,
            usage_arg(py, cost_budget, "cost_budget")?,
            &convert::str_arg(py, mission_id, "mission_id")?,
            &convert::str_arg(py, work_item_id, "work_item_id")?,
            convert::uint_arg(py, ownership_epoch, "ownership_epoch", u64::MAX)?,
        )
        .map(|inner| Self { inner })
        .map_err(|e| errors::retry_error(py, &e))
    }

    /// Attempts started so far.
    #[getter]
    fn attempts(&self) -> u32 {
        self.inner.attempts()
    }

    /// Cumulative cost charged so far.
    #[getter]
    fn usage(&self) -> ResourceUsage {
        ResourceUsage::new(self.inner.usage())
    }

    /// The final `RetryReason` once the loop ended, else `None`.
    #[getter]
    fn finished<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.inner
            .finished()
            .map(|r| PyEnum::RetryReason.member(py, r.as_str()))
            .transpose()
    }

    /// This WorkItem's idempotency key for a logical operation (same for every retry).
    fn idempotency_key(
        &self,
        py: Python<'_>,
        logical_operation_id: &Bound<'_, PyAny>,
    ) -> PyResult<String> {
        Ok(self.inner.idempotency_key(&convert::str_arg(
            py,
            logical_operation_id,
            "logical_operation_id",
        )?))
    }

    /// Starts the next attempt at `now` (`RetryExhausted` once attempts or the deadline are
    /// used up; `PolicyError` before the backoff delay or while an attempt runs).
    #[pyo3(signature = (logical_operation_id, *, now))]
    fn begin(
        &mut self,
        py: Python<'_>,
        logical_operation_id: &Bound<'_, PyAny>,
        now: &Bound<'_, PyAny>,
    ) -> PyResult<Attempt> {
        let op = convert::str_arg(py, logical_operation_id, "logical_operation_id")?;
        let now = millis_arg(py, now, "now")?;
        self.inner
            .begin(&op, now)
            .map(|a| Attempt {
                attempt_number: a.attempt_number,
                idempotency_key: a.idempotency_key,
                attempt_key: a.attempt_key,
                started_at: a.started_at,
            })
            .map_err(|e| errors::retry_error(py, &e))
    }

    /// Charges attempt cost atomically against the cost budget (`PolicyError` with code
    /// `BUDGET_EXCEEDED` and the `dimension`). Returns the cumulative usage.
    fn consume(&mut self, py: Python<'_>, usage: &Bound<'_, PyAny>) -> PyResult<ResourceUsage> {
        let delta = usage_arg(py, usage, "usage")?;
        self.inner
            .consume(&delta)
            .map(ResourceUsage::new)
            .map_err(|e| errors::retry_error(py, &e))
    }

    /// Ends the running attempt at `now` and decides whether to retry. A failure with a `code`
    /// outside the policy's `retryable_failures`, or `retryable=False`, is permanent.
    #[pyo3(signature = (*, success, now, retryable=None, code=None))]
    fn finish(
        &mut self,
        py: Python<'_>,
        success: &Bound<'_, PyAny>,
        now: &Bound<'_, PyAny>,
        retryable: Option<&Bound<'_, PyAny>>,
        code: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<RetrySchedule> {
        let success = convert::bool_arg(py, success, "success")?;
        let now = millis_arg(py, now, "now")?;
        let retryable = match convert::present(retryable) {
            Some(v) => convert::bool_arg(py, v, "retryable")?,
            None => true,
        };
        let code = convert::opt_str_arg(py, code, "code")?;
        let outcome = if success {
            AttemptOutcome::Succeeded
        } else {
            AttemptOutcome::Failed {
                code: code.as_deref(),
                retryable,
            }
        };
        self.inner
            .finish(outcome, now)
            .map(|inner| RetrySchedule { inner })
            .map_err(|e| errors::retry_error(py, &e))
    }

    /// This package's extension (the reference has none): the controller's whole state as a
    /// versioned JSON object (attempts, usage, backoff, final reason, the attempt in flight,
    /// `integrity`), for persisting across a Worker restart.
    fn snapshot<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_python(py, &self.inner.snapshot().to_value())
    }

    /// Rebuilds a controller from [`snapshot`]'s JSON object (or its bytes/str), refusing a
    /// malformed, tampered, other-version or unreachable state with `SnapshotError`.
    #[staticmethod]
    fn restore(py: Python<'_>, snapshot: &Bound<'_, PyAny>) -> PyResult<Self> {
        let parsed = if snapshot.is_instance_of::<pyo3::types::PyBytes>()
            || snapshot.is_instance_of::<pyo3::types::PyString>()
        {
            let bytes = convert::bytes_arg(py, snapshot, "snapshot", true)?;
            core_exec::RetrySnapshot::from_json_bytes(&bytes)
        } else {
            let value = convert::snapshot_mapping(
                py,
                snapshot,
                "snapshot",
                "the mapping of RetryController.snapshot() or its JSON text",
            )?;
            core_exec::RetrySnapshot::from_value(&value)
        };
        parsed
            .and_then(|s| CoreController::restore(&s))
            .map(|inner| Self { inner })
            .map_err(|e| errors::describe(py, &e))
    }

    /// The attempt in flight as `(logical_operation_id, started_at)`, or `None`.
    #[getter]
    fn current_attempt<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Option<(String, Bound<'py, PyAny>)>> {
        self.inner
            .current_attempt()
            .map(|(op, at)| Ok((op.to_owned(), to_datetime(py, at)?)))
            .transpose()
    }

    fn __repr__(&self) -> String {
        format!("RetryController(attempts={})", self.inner.attempts())
    }
}

/// `"sha256:" + hex(SHA-256(RFC 8785 {missionId, workItemId, ownershipEpoch,
/// logicalOperationId}))`: the idempotency key for external side effects (§11.4).
#[pyfunction]
pub fn idempotency_key(
    py: Python<'_>,
    mission_id: &Bound<'_, PyAny>,
    work_item_id: &Bound<'_, PyAny>,
    ownership_epoch: &Bound<'_, PyAny>,
    logical_operation_id: &Bound<'_, PyAny>,
) -> PyResult<String> {
    let epoch = convert::uint_arg(py, ownership_epoch, "ownership_epoch", MAX_SAFE_INTEGER)?;
    core_exec::idempotency_key(
        &convert::str_arg(py, mission_id, "mission_id")?,
        &convert::str_arg(py, work_item_id, "work_item_id")?,
        epoch,
        &convert::str_arg(py, logical_operation_id, "logical_operation_id")?,
    )
    .ok_or_else(|| errors::invalid_input(py, "ownership_epoch must be at least 1"))
}

/// The deterministic per-attempt key derived from an idempotency key.
#[pyfunction]
pub fn derived_attempt_key(
    py: Python<'_>,
    idempotency_key: &Bound<'_, PyAny>,
    attempt: &Bound<'_, PyAny>,
) -> PyResult<String> {
    Ok(core_exec::derived_attempt_key(
        &convert::str_arg(py, idempotency_key, "idempotency_key")?,
        convert::uint_arg(py, attempt, "attempt", u64::from(u32::MAX))? as u32,
    ))
}

/// The schema's `duration` (`P[nD][T[nH][nM][n[.f]S]]`) in milliseconds (sub-millisecond
/// fractions round up); `None` if malformed.
#[pyfunction]
pub fn parse_duration_ms(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
    Ok(core_exec::parse_duration_ms(&convert::str_arg(
        py, text, "text",
    )?))
}
