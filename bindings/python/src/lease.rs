//! Fenced leases (§11.3): `ExecutionLease` (all four lease types; immutable — `renew` and the
//! closures return a new lease, like the reference).

use missionweaveprotocol::json;
use missionweaveprotocol_kernel::lease::{
    Lease as CoreLease, LeaseBinding, LeaseClaim, LeaseState, LeaseWindow,
};
use missionweaveprotocol_kernel::resources::MAX_SAFE_INTEGER;
use pyo3::prelude::*;

use crate::convert;
use crate::errors;
use crate::instant::{millis_arg, opt_datetime, opt_millis_arg, to_datetime};
use crate::values::PyEnum;

/// `lease_closure_reason(reason)`: the reason as a lease records it (trimmed; blank or over
/// 512 characters is `LeaseError`), the core's `lease::closure_reason`.
#[pyfunction]
pub fn lease_closure_reason(py: Python<'_>, reason: &Bound<'_, PyAny>) -> PyResult<String> {
    let text = convert::str_arg(py, reason, "reason")?;
    missionweaveprotocol_kernel::lease::closure_reason(&text)
        .map(str::to_owned)
        .map_err(|e| errors::lease_error(py, &e))
}

fn binding(
    py: Python<'_>,
    lease_id: &Bound<'_, PyAny>,
    mission_id: &Bound<'_, PyAny>,
    group_id: &Bound<'_, PyAny>,
    holder_agent_id: &Bound<'_, PyAny>,
    session_epoch: &Bound<'_, PyAny>,
) -> PyResult<LeaseBinding> {
    Ok(LeaseBinding {
        lease_id: convert::str_arg(py, lease_id, "lease_id")?.into_owned(),
        mission_id: convert::str_arg(py, mission_id, "mission_id")?.into_owned(),
        group_id: convert::str_arg(py, group_id, "group_id")?.into_owned(),
        holder_agent_id: convert::str_arg(py, holder_agent_id, "holder_agent_id")?.into_owned(),
        session_epoch: epoch(py, session_epoch, "session_epoch")?,
    })
}

fn epoch(py: Python<'_>, value: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    convert::uint_arg(py, value, what, MAX_SAFE_INTEGER)
}

fn window(
    py: Python<'_>,
    issued_at: &Bound<'_, PyAny>,
    starts_at: &Bound<'_, PyAny>,
    expires_at: &Bound<'_, PyAny>,
) -> PyResult<LeaseWindow> {
    Ok(LeaseWindow {
        issued_at: millis_arg(py, issued_at, "issued_at")?,
        starts_at: millis_arg(py, starts_at, "starts_at")?,
        expires_at: millis_arg(py, expires_at, "expires_at")?,
    })
}

fn state_arg(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<LeaseState> {
    let text = convert::str_arg(py, value, "state")?;
    LeaseState::parse(text.as_ref()).ok_or_else(|| {
        errors::invalid_input(py, format!("state must be a LeaseState, not {text:?}"))
    })
}

/// `ExecutionLease(*, lease_id, mission_id, group_id, work_item_id, holder_agent_id,
/// session_epoch, ownership_epoch, issued_at, starts_at, expires_at)`: a fenced lease record.
/// The constructor makes an Execution Lease; `ownership`, `blocked` and `coordinator` make the
/// other lease types. Instants are timezone-aware datetimes (millisecond precision).
#[pyclass(module = "missionweaveprotocol._native", frozen, eq)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutionLease {
    inner: CoreLease,
}

#[pymethods]
impl ExecutionLease {
    #[new]
    #[pyo3(signature = (*, lease_id, mission_id, group_id, work_item_id, holder_agent_id, session_epoch, ownership_epoch, issued_at, starts_at, expires_at))]
    #[allow(clippy::too_many_arguments)]
    fn py_new(
        py: Python<'_>,
        lease_id: &Bound<'_, PyAny>,
        mission_id: &Bound<'_, PyAny>,
        group_id: &Bound<'_, PyAny>,
        work_item_id: &Bound<'_, PyAny>,
        holder_agent_id: &Bound<'_, PyAny>,
        session_epoch: &Bound<'_, PyAny>,
        ownership_epoch: &Bound<'_, PyAny>,
        issued_at: &Bound<'_, PyAny>,
        starts_at: &Bound<'_, PyAny>,
        expires_at: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let b = binding(
            py,
            lease_id,
            mission_id,
            group_id,
            holder_agent_id,
            session_epoch,
        )?;
        let item = convert::str_arg(py, work_item_id, "work_item_id")?;
        let ownership = epoch(py, ownership_epoch, "ownership_epoch")?;
        let w = window(py, issued_at, starts_at, expires_at)?;
        CoreLease::execution(b, &item, ownership, w)
            .map(|inner| Self { inner })
            .map_err(|e| errors::lease_error(py, &e))
    }

    /// An ownership lease (queued ownership with a start-by deadline inside the window).
    #[staticmethod]
    #[pyo3(signature = (*, lease_id, mission_id, group_id, work_item_id, holder_agent_id, session_epoch, ownership_epoch, issued_at, starts_at, expires_at, start_by))]
    #[allow(clippy::too_many_arguments)]
    fn ownership(
        py: Python<'_>,
        lease_id: &Bound<'_, PyAny>,
        mission_id: &Bound<'_, PyAny>,
        group_id: &Bound<'_, PyAny>,
        work_item_id: &Bound<'_, PyAny>,
        holder_agent_id: &Bound<'_, PyAny>,
        session_epoch: &Bound<'_, PyAny>,
        ownership_epoch: &Bound<'_, PyAny>,
        issued_at: &Bound<'_, PyAny>,
        starts_at: &Bound<'_, PyAny>,
        expires_at: &Bound<'_, PyAny>,
        start_by: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let b = binding(
            py,
            lease_id,
            mission_id,
            group_id,
            holder_agent_id,
            session_epoch,
        )?;
        let item = convert::str_arg(py, work_item_id, "work_item_id")?;
        let ownership = epoch(py, ownership_epoch, "ownership_epoch")?;
        let w = window(py, issued_at, starts_at, expires_at)?;
        let start_by = millis_arg(py, start_by, "start_by")?;
        CoreLease::ownership(b, &item, ownership, start_by, w)
            .map(|inner| Self { inner })
            .map_err(|e| errors::lease_error(py, &e))
    }

    /// A blocked lease (ownership retained while blocked), optionally with a grace bound.
    #[staticmethod]
    #[pyo3(signature = (*, lease_id, mission_id, group_id, work_item_id, holder_agent_id, session_epoch, ownership_epoch, issued_at, starts_at, expires_at, grace_expires_at=None))]
    #[allow(clippy::too_many_arguments)]
    fn blocked(
        py: Python<'_>,
        lease_id: &Bound<'_, PyAny>,
        mission_id: &Bound<'_, PyAny>,
        group_id: &Bound<'_, PyAny>,
        work_item_id: &Bound<'_, PyAny>,
        holder_agent_id: &Bound<'_, PyAny>,
        session_epoch: &Bound<'_, PyAny>,
        ownership_epoch: &Bound<'_, PyAny>,
        issued_at: &Bound<'_, PyAny>,
        starts_at: &Bound<'_, PyAny>,
        expires_at: &Bound<'_, PyAny>,
        grace_expires_at: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let b = binding(
            py,
            lease_id,
            mission_id,
            group_id,
            holder_agent_id,
            session_epoch,
        )?;
        let item = convert::str_arg(py, work_item_id, "work_item_id")?;
        let ownership = epoch(py, ownership_epoch, "ownership_epoch")?;
        let w = window(py, issued_at, starts_at, expires_at)?;
        let grace = opt_millis_arg(py, grace_expires_at, "grace_expires_at")?;
        CoreLease::blocked(b, &item, ownership, w, grace)
            .map(|inner| Self { inner })
            .map_err(|e| errors::lease_error(py, &e))
    }

    /// A Coordinator lease (§7.2), fenced by the Coordinator Epoch.
    #[staticmethod]
    #[pyo3(signature = (*, lease_id, mission_id, group_id, holder_agent_id, session_epoch, coordinator_epoch, issued_at, starts_at, expires_at))]
    #[allow(clippy::too_many_arguments)]
    fn coordinator(
        py: Python<'_>,
        lease_id: &Bound<'_, PyAny>,
        mission_id: &Bound<'_, PyAny>,
        group_id: &Bound<'_, PyAny>,
        holder_agent_id: &Bound<'_, PyAny>,
        session_epoch: &Bound<'_, PyAny>,
        coordinator_epoch: &Bound<'_, PyAny>,
        issued_at: &Bound<'_, PyAny>,
        starts_at: &Bound<'_, PyAny>,
        expires_at: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let b = binding(
            py,
            lease_id,
            mission_id,
            group_id,
            holder_agent_id,
            session_epoch,
        )?;
        let coordinator = epoch(py, coordinator_epoch, "coordinator_epoch")?;
        let w = window(py, issued_at, starts_at, expires_at)?;
        CoreLease::coordinator(b, coordinator, w)
            .map(|inner| Self { inner })
            .map_err(|e| errors::lease_error(py, &e))
    }

    #[getter]
    fn lease_id(&self) -> &str {
        self.inner.lease_id()
    }
    #[getter]
    fn lease_type<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        PyEnum::LeaseType.member(py, self.inner.lease_type().as_str())
    }
    #[getter]
    fn mission_id(&self) -> &str {
        &self.inner.binding().mission_id
    }
    #[getter]
    fn group_id(&self) -> &str {
        &self.inner.binding().group_id
    }
    #[getter]
    fn holder_agent_id(&self) -> &str {
        &self.inner.binding().holder_agent_id
    }
    #[getter]
    fn session_epoch(&self) -> u64 {
        self.inner.binding().session_epoch
    }
    #[getter]
    fn work_item_id(&self) -> Option<&str> {
        self.inner.work_item_id()
    }
    #[getter]
    fn ownership_epoch(&self) -> Option<u64> {
        self.inner.ownership_epoch()
    }
    #[getter]
    fn coordinator_epoch(&self) -> Option<u64> {
        self.inner.coordinator_epoch()
    }
    #[getter]
    fn issued_at<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_datetime(py, self.inner.window().issued_at)
    }
    #[getter]
    fn starts_at<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_datetime(py, self.inner.window().starts_at)
    }
    #[getter]
    fn expires_at<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_datetime(py, self.inner.window().expires_at)
    }
    #[getter]
    fn start_by<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        opt_datetime(py, self.inner.start_by())
    }
    #[getter]
    fn grace_expires_at<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        opt_datetime(py, self.inner.grace_expires_at())
    }
    /// The recorded state (see `state_at` for what an observer sees at an instant).
    #[getter]
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        PyEnum::LeaseState.member(py, self.inner.state().as_str())
    }
    #[getter]
    fn renewal_count(&self) -> u64 {
        self.inner.renewal_count()
    }
    #[getter]
    fn last_renewed_at<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        opt_datetime(py, self.inner.last_renewed_at())
    }
    #[getter]
    fn closed_at<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        opt_datetime(py, self.inner.closed_at())
    }
    #[getter]
    fn closure_reason(&self) -> Option<&str> {
        self.inner.closure_reason()
    }

    /// The state at `now`: an active lease past its expiry reads as expired.
    fn state_at<'py>(
        &self,
        py: Python<'py>,
        now: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let now = millis_arg(py, now, "now")?;
        PyEnum::LeaseState.member(py, self.inner.state_at(now).as_str())
    }

    /// True while active, started and unexpired at `now`.
    fn is_live(&self, py: Python<'_>, now: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.inner.is_live(millis_arg(py, now, "now")?))
    }

    /// A new lease renewed at `at` to `expires_at` (strictly monotonic, strictly extending,
    /// before expiry, within any grace bound).
    #[pyo3(signature = (*, at, expires_at))]
    fn renew(
        &self,
        py: Python<'_>,
        at: &Bound<'_, PyAny>,
        expires_at: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let at = millis_arg(py, at, "at")?;
        let new_expiry = millis_arg(py, expires_at, "expires_at")?;
        let mut next = self.inner.clone();
        next.renew(at, new_expiry)
            .map_err(|e| errors::lease_error(py, &e))?;
        Ok(Self { inner: next })
    }

    /// A new lease closed with `state` (`released`, `revoked` or `expired`). Repeating the
    /// identical closure returns an equal lease; any other closure of a closed lease fails.
    #[pyo3(signature = (state, *, at, reason))]
    fn close(
        &self,
        py: Python<'_>,
        state: &Bound<'_, PyAny>,
        at: &Bound<'_, PyAny>,
        reason: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let state = state_arg(py, state)?;
        let at = millis_arg(py, at, "at")?;
        let reason = convert::str_arg(py, reason, "reason")?;
        let mut next = self.inner.clone();
        next.close(state, at, &reason)
            .map_err(|e| errors::lease_error(py, &e))?;
        Ok(Self { inner: next })
    }

    /// Fencing check for a lease-bound Command at `now`; raises `LeaseError` with the wire code
    /// (`AUTH_FORBIDDEN`, `AUTH_STALE_SESSION`, `WORK_STALE_OWNERSHIP`,
    /// `AUTH_STALE_COORDINATOR`, `WORK_LEASE_EXPIRED`, …).
    #[pyo3(signature = (*, agent_id, lease_id, session_epoch, now, ownership_epoch=None, coordinator_epoch=None))]
    #[allow(clippy::too_many_arguments)]
    fn check_claim(
        &self,
        py: Python<'_>,
        agent_id: &Bound<'_, PyAny>,
        lease_id: &Bound<'_, PyAny>,
        session_epoch: &Bound<'_, PyAny>,
        now: &Bound<'_, PyAny>,
        ownership_epoch: Option<&Bound<'_, PyAny>>,
        coordinator_epoch: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let agent = convert::str_arg(py, agent_id, "agent_id")?;
        let lease = convert::str_arg(py, lease_id, "lease_id")?;
        let opt_epoch = |v: Option<&Bound<'_, PyAny>>, what: &str| {
            convert::present(v)
                .map(|v| convert::uint_arg(py, v, what, u64::MAX))
                .transpose()
        };
        let claim = LeaseClaim {
            agent_id: &agent,
            lease_id: &lease,
            session_epoch: convert::uint_arg(py, session_epoch, "session_epoch", u64::MAX)?,
            ownership_epoch: opt_epoch(ownership_epoch, "ownership_epoch")?,
            coordinator_epoch: opt_epoch(coordinator_epoch, "coordinator_epoch")?,
        };
        self.inner
            .check_claim(&claim, millis_arg(py, now, "now")?)
            .map_err(|e| errors::lease_error(py, &e))
    }

    /// For ownership leases: may work start at `now`? (start-by deadline, §11.5 missed start).
    fn check_start_by(&self, py: Python<'_>, now: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner
            .check_start_by(millis_arg(py, now, "now")?)
            .map_err(|e| errors::lease_error(py, &e))
    }

    /// Reads a lease back from its `lease.schema.json` document text (strict JSON, the schema,
    /// then the lease rules; sub-millisecond times are refused).
    #[staticmethod]
    fn from_json(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<Self> {
        let bytes = convert::bytes_arg(py, text, "text", true)?;
        CoreLease::from_json(&bytes)
            .map(|inner| Self { inner })
            .map_err(|e| errors::lease_document_error(py, &e))
    }

    /// Reads a lease back from its document as plain Python values (as `to_dict` gives).
    #[staticmethod]
    fn from_dict(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let value = crate::canonical_value(py, data)?;
        CoreLease::from_value(&value)
            .map(|inner| Self { inner })
            .map_err(|e| errors::lease_document_error(py, &e))
    }

    /// The `lease.schema.json` document in RFC 8785 canonical form.
    fn to_json(&self, py: Python<'_>) -> PyResult<String> {
        self.inner
            .to_json_string()
            .map_err(|e| errors::lease_error(py, &e))
    }

    /// The `lease.schema.json` document as plain Python values.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let text = self.to_json(py)?;
        let value = json::parse(text.as_bytes()).map_err(|e| errors::parse_error(py, &e))?;
        convert::to_python(py, &value)
    }

    fn __repr__(&self) -> String {
        format!(
            "ExecutionLease(lease_id={:?}, lease_type={:?}, state={:?}, expires_at={})",
            self.inner.lease_id(),
            self.inner.lease_type().as_str(),
            self.inner.state().as_str(),
            self.inner.window().expires_at
        )
    }
}
