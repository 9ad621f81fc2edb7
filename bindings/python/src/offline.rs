//! Bounded offline execution (`missionweaveprotocol.offline`): the Worker's policy, the
//! rebase, the binding reader and an in-memory outbox. The rules live in
//! `missionweaveprotocol_agent::offline`; refusals become `OfflinePolicyError` (a
//! `ValueError`) with `code` (§19) and `kind`. The outbox is any object with the local
//! store's `enqueue_action(agent_id, action_id, payload)`, `pending_actions(agent_id)` and
//! `mark_action_sent(agent_id, action_id)`; an exception it raises propagates unchanged.

use std::sync::Mutex;

use missionweaveprotocol::json::Value;
use missionweaveprotocol_agent::offline::{
    self as core_offline, OfflineAssignment, OfflineExecutionPolicy, OfflineOutbox, OutboxError,
    RebaseInput,
};
use missionweaveprotocol_kernel::offline::{OfflineError, OfflineLimits};
use missionweaveprotocol_kernel::resources::{MAX_SAFE_INTEGER, Resources};
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::convert;
use crate::errors::offline_error;
use crate::instant::{millis_arg, timedelta_micros, to_datetime};
use crate::resources::{ResourceUsage, usage_arg};
use crate::signer::{SignerArg, signer_failure};

/// A Python outbox as a core [`OfflineOutbox`]; the first exception it raised is kept.
struct PyOutbox<'a, 'py> {
    object: &'a Bound<'py, PyAny>,
    raised: Mutex<Option<PyErr>>,
}

impl PyOutbox<'_, '_> {
    fn fail(&self, error: PyErr) -> OutboxError {
        let detail = error.to_string();
        let mut slot = self.raised.lock().unwrap_or_else(|e| e.into_inner());
        slot.get_or_insert(error);
        OutboxError::Backend(detail)
    }
}

impl OfflineOutbox for PyOutbox<'_, '_> {
    fn enqueue_action(
        &mut self,
        agent_id: &str,
        action_id: &str,
        payload: &Value,
    ) -> Result<(), OutboxError> {
        let py = self.object.py();
        let payload = convert::to_python(py, payload).map_err(|e| self.fail(e))?;
        self.object
            .call_method1("enqueue_action", (agent_id, action_id, payload))
            .map(|_| ())
            .map_err(|e| self.fail(e))
    }

    fn pending_actions(&self, agent_id: &str) -> Result<Vec<Value>, OutboxError> {
        let list = self
            .object
            .call_method1("pending_actions", (agent_id,))
            .map_err(|e| self.fail(e))?;
        let mut out = Vec::new();
        for item in list.try_iter().map_err(|e| self.fail(e))? {
            let item = item.map_err(|e| self.fail(e))?;
            out.push(convert::to_value(&item).map_err(|_| {
                OutboxError::Backend("pending_actions returned a non-JSON value".into())
            })?);
        }
        Ok(out)
    }

    fn mark_action_sent(&mut self, agent_id: &str, action_id: &str) -> Result<(), OutboxError> {
        self.object
            .call_method1("mark_action_sent", (agent_id, action_id))
            .map(|_| ())
            .map_err(|e| self.fail(e))
    }
}

/// `NativeOfflinePolicy(*, agent_id, group_id, work_item_id, conversation_id, session_epoch,
/// ownership_epoch, execution_lease_id, execution_lease_expires_at, disconnected_at,
/// max_disconnect_grace_ms, max_actions, max_usage)`.
#[pyclass(module = "missionweaveprotocol._native")]
#[derive(Debug, Clone)]
pub struct NativeOfflinePolicy {
    inner: OfflineExecutionPolicy,
}

#[pymethods]
impl NativeOfflinePolicy {
    #[new]
    #[pyo3(signature = (*, agent_id, group_id, work_item_id, conversation_id, session_epoch,
        ownership_epoch, execution_lease_id, execution_lease_expires_at, disconnected_at,
        max_disconnect_grace_ms, max_actions, max_usage))]
    #[allow(clippy::too_many_arguments)]
    fn py_new(
        py: Python<'_>,
        agent_id: &Bound<'_, PyAny>,
        group_id: &Bound<'_, PyAny>,
        work_item_id: &Bound<'_, PyAny>,
        conversation_id: Option<&Bound<'_, PyAny>>,
        session_epoch: &Bound<'_, PyAny>,
        ownership_epoch: &Bound<'_, PyAny>,
        execution_lease_id: &Bound<'_, PyAny>,
        execution_lease_expires_at: &Bound<'_, PyAny>,
        disconnected_at: &Bound<'_, PyAny>,
        max_disconnect_grace_ms: &Bound<'_, PyAny>,
        max_actions: &Bound<'_, PyAny>,
        max_usage: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let assignment = OfflineAssignment {
            agent_id: convert::str_arg(py, agent_id, "agent_id")?.into_owned(),
            group_id: convert::str_arg(py, group_id, "group_id")?.into_owned(),
            work_item_id: convert::str_arg(py, work_item_id, "work_item_id")?.into_owned(),
            conversation_id: convert::opt_str_arg(py, conversation_id, "conversation_id")?,
            session_epoch: convert::uint_arg(py, session_epoch, "session_epoch", MAX_SAFE_INTEGER)?,
            ownership_epoch: convert::uint_arg(
                py,
                ownership_epoch,
                "ownership_epoch",
                MAX_SAFE_INTEGER,
            )?,
            execution_lease_id: convert::str_arg(py, execution_lease_id, "execution_lease_id")?
                .into_owned(),
            execution_lease_expires_at: millis_arg(
                py,
                execution_lease_expires_at,
                "execution_lease_expires_at",
            )?,
        };
        let limits = OfflineLimits {
            max_disconnect_grace_ms: convert::uint_arg(
                py,
                max_disconnect_grace_ms,
                "max_disconnect_grace_ms",
                MAX_SAFE_INTEGER,
            )?,
            max_actions: convert::uint_arg(py, max_actions, "max_actions", u64::from(u32::MAX))?
                as u32,
            max_usage: usage_arg(py, max_usage, "max_usage")?,
        };
        let disconnected_at = millis_arg(py, disconnected_at, "disconnected_at")?;
        OfflineExecutionPolicy::new(assignment, disconnected_at, limits)
            .map(|inner| Self { inner })
            .map_err(|e| offline_error(py, &e))
    }

    #[getter]
    fn grace_deadline<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_datetime(py, self.inner.grace_deadline())
    }

    #[getter]
    fn disconnected_at<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_datetime(py, self.inner.disconnected_at())
    }

    /// The buffered wire Commands (dicts), in buffer order.
    #[getter]
    fn buffered_actions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items = self
            .inner
            .buffered_actions()
            .iter()
            .map(|v| convert::to_python(py, v))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    #[getter]
    fn cumulative_usage(&self) -> ResourceUsage {
        ResourceUsage::new(self.inner.cumulative_usage())
    }

    /// Checks, binds, re-signs with `signing_key` and queues `command` (a wire Command dict)
    /// in `outbox`; returns the signed wire Command.
    #[pyo3(signature = (outbox, signing_key, command, *, usage, now))]
    fn buffer<'py>(
        &mut self,
        py: Python<'py>,
        outbox: &Bound<'py, PyAny>,
        signing_key: &Bound<'py, PyAny>,
        command: &Bound<'py, PyAny>,
        usage: &Bound<'py, PyAny>,
        now: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let command = crate::canonical_value(py, command)?;
        let usage = usage_arg(py, usage, "usage")?;
        let now = millis_arg(py, now, "now")?;
        let signer = SignerArg::extract(py, signing_key)?;
        let key: &(dyn missionweaveprotocol::crypto::Signer + Sync) = match &signer {
            SignerArg::Native(native) => &native.get().inner,
            SignerArg::Python(python) => python.as_ref(),
        };
        let mut queue = PyOutbox {
            object: outbox,
            raised: Mutex::new(None),
        };
        let result = self.inner.buffer(&mut queue, key, &command, usage, now);
        if let Some(raised) = queue.raised.into_inner().unwrap_or_else(|e| e.into_inner()) {
            return Err(raised);
        }
        match result {
            Ok(signed) => convert::to_python(py, &signed),
            Err(error) => Err(match signer.take_raised() {
                Some(raised) => signer_failure(
                    py,
                    missionweaveprotocol::Stage::Signature,
                    "signing_key.sign()",
                    raised,
                ),
                None => offline_error(py, &error),
            }),
        }
    }
}

/// Rebases a buffered wire Command onto the current session and re-signs it (§11.5).
#[pyfunction]
#[pyo3(signature = (command, signing_key, *, session_epoch, membership_epoch, issued_at, execution_lease_id=None))]
pub fn rebase_offline_command<'py>(
    py: Python<'py>,
    command: &Bound<'py, PyAny>,
    signing_key: &Bound<'py, PyAny>,
    session_epoch: &Bound<'py, PyAny>,
    membership_epoch: &Bound<'py, PyAny>,
    issued_at: &Bound<'py, PyAny>,
    execution_lease_id: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let command = crate::canonical_value(py, command)?;
    let lease = convert::opt_str_arg(py, execution_lease_id, "execution_lease_id")?;
    let input = RebaseInput {
        session_epoch: convert::uint_arg(py, session_epoch, "session_epoch", MAX_SAFE_INTEGER)?,
        membership_epoch: convert::uint_arg(
            py,
            membership_epoch,
            "membership_epoch",
            MAX_SAFE_INTEGER,
        )?,
        issued_at: millis_arg(py, issued_at, "issued_at")?,
        execution_lease_id: lease.as_deref(),
    };
    let signer = SignerArg::extract(py, signing_key)?;
    let key: &(dyn missionweaveprotocol::crypto::Signer + Sync) = match &signer {
        SignerArg::Native(native) => &native.get().inner,
        SignerArg::Python(python) => python.as_ref(),
    };
    match core_offline::rebase_offline_command(&command, key, &input) {
        Ok(signed) => convert::to_python(py, &signed),
        Err(error) => Err(match signer.take_raised() {
            Some(raised) => signer_failure(
                py,
                missionweaveprotocol::Stage::Signature,
                "signing_key.sign()",
                raised,
            ),
            None => offline_error(py, &error),
        }),
    }
}

/// The offline binding a wire Command carries (its JSON form), or `None`; `OfflinePolicyError`
/// if the extension is present but not critical, of another version or malformed.
#[pyfunction]
pub fn offline_binding_of<'py>(
    py: Python<'py>,
    command: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let command = crate::canonical_value(py, command)?;
    match core_offline::offline_binding_of(&command) {
        Ok(None) => Ok(None),
        Ok(Some(binding)) => {
            let value = binding.to_value().map_err(|e| offline_error(py, &e))?;
            convert::to_python(py, &value).map(Some)
        }
        Err(error) => Err(offline_error(py, &error)),
    }
}

/// Validates the JSON form of an `OfflineProgressBinding` (strict members, ordered window, no
/// external actions); returns it unchanged.
#[pyfunction]
pub fn validate_offline_binding<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let value = crate::canonical_value(py, data)?;
    core_offline::OfflineProgressBinding::from_value(&value).map_err(|e| offline_error(py, &e))?;
    Ok(data.clone())
}

/// An in-memory outbox (the core's), with the local store's three outbox methods.
#[pyclass(module = "missionweaveprotocol._native")]
#[derive(Debug, Clone, Default)]
pub struct InMemoryOutbox {
    inner: core_offline::InMemoryOutbox,
}

fn outbox_error(py: Python<'_>, error: &OutboxError) -> PyErr {
    let mapped = match error {
        OutboxError::Collision { action_id } => OfflineError::ActionIdCollision {
            action_id: action_id.clone(),
        },
        OutboxError::Backend(detail) => OfflineError::Outbox {
            detail: detail.clone(),
        },
    };
    offline_error(py, &mapped)
}

#[pymethods]
impl InMemoryOutbox {
    #[new]
    fn py_new() -> Self {
        Self::default()
    }

    fn enqueue_action(
        &mut self,
        py: Python<'_>,
        agent_id: &Bound<'_, PyAny>,
        action_id: &Bound<'_, PyAny>,
        payload: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let payload = crate::canonical_value(py, payload)?;
        self.inner
            .enqueue_action(
                &convert::str_arg(py, agent_id, "agent_id")?,
                &convert::str_arg(py, action_id, "action_id")?,
                &payload,
            )
            .map_err(|e| outbox_error(py, &e))
    }

    fn pending_actions<'py>(
        &self,
        py: Python<'py>,
        agent_id: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let pending = self
            .inner
            .pending_actions(&convert::str_arg(py, agent_id, "agent_id")?)
            .map_err(|e| outbox_error(py, &e))?;
        let items = pending
            .iter()
            .map(|v| convert::to_python(py, v))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    fn mark_action_sent(
        &mut self,
        py: Python<'_>,
        agent_id: &Bound<'_, PyAny>,
        action_id: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        self.inner
            .mark_action_sent(
                &convert::str_arg(py, agent_id, "agent_id")?,
                &convert::str_arg(py, action_id, "action_id")?,
            )
            .map_err(|e| outbox_error(py, &e))
    }
}

/// `offline_check_limits(max_disconnect_grace, max_actions)`: the core's check of the offline
/// bounds (`OfflineLimits::validate`: a positive grace, at least one action); returns the grace
/// in whole milliseconds (floored). `OfflinePolicyError` (`invalid_argument`) otherwise.
#[pyfunction]
pub fn offline_check_limits(
    py: Python<'_>,
    max_disconnect_grace: &Bound<'_, PyAny>,
    max_actions: &Bound<'_, PyAny>,
) -> PyResult<u64> {
    let refuse = |name| offline_error(py, &OfflineError::InvalidArgument(name));
    let grace_us = timedelta_micros(py, max_disconnect_grace)?
        .ok_or_else(|| refuse("max_disconnect_grace"))?;
    let max_disconnect_grace_ms = u64::try_from(grace_us.div_euclid(1000)).unwrap_or(0);
    let max_actions = if convert::plain_int(max_actions) {
        max_actions
            .extract::<u32>()
            .map_err(|_| refuse("max_actions"))?
    } else {
        return Err(refuse("max_actions"));
    };
    let limits = OfflineLimits {
        max_disconnect_grace_ms,
        max_actions,
        max_usage: Resources::ZERO,
    };
    limits.validate().map_err(|e| offline_error(py, &e))?;
    Ok(max_disconnect_grace_ms)
}

/// Registers this module's classes, functions and constants.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(offline_check_limits, m)?)?;
    m.add(
        "OFFLINE_EXECUTION_EXTENSION",
        core_offline::OFFLINE_EXECUTION_EXTENSION,
    )?;
    m.add(
        "OFFLINE_EXECUTION_EXTENSION_VERSION",
        core_offline::OFFLINE_EXECUTION_EXTENSION_VERSION,
    )?;
    m.add(
        "OFFLINE_REVERSIBLE_KINDS",
        core_offline::REVERSIBLE_KINDS.to_vec(),
    )?;
    m.add_class::<NativeOfflinePolicy>()?;
    m.add_class::<InMemoryOutbox>()?;
    m.add_function(wrap_pyfunction!(rebase_offline_command, m)?)?;
    m.add_function(wrap_pyfunction!(offline_binding_of, m)?)?;
    m.add_function(wrap_pyfunction!(validate_offline_binding, m)?)?;
    Ok(())
}
