//! The Agent runtime's sessions and Group-isolated contexts (`missionweaveprotocol.agent`).
//! The rules live in `missionweaveprotocol_agent::runtime`; this converts and maps the core's
//! refusals are raised through the shared error model (`AgentError` describes itself: the
//! reference's `ActiveSessionError`, `StaleSessionEpochError`, `ClosedSessionError`,
//! `StaleContextError`, or `AgentError` for argument and dispatch refusals).

use std::sync::Arc;

use missionweaveprotocol_agent::runtime::{AgentSessions, SessionDescriptor};
use missionweaveprotocol_kernel::resources::MAX_SAFE_INTEGER;
use missionweaveprotocol_kernel::scheduler::Dispatch;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::convert;
use crate::errors::agent_error;
use crate::scheduler::Scheduler;

fn descriptor_tuple<'py>(py: Python<'py>, d: &SessionDescriptor) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(
        py,
        [
            d.agent_id.clone().into_pyobject(py)?.into_any(),
            d.session_id.clone().into_pyobject(py)?.into_any(),
            d.session_epoch.into_pyobject(py)?.into_any(),
        ],
    )
}

/// `NativeAgentSessions(agent_id)`: one Agent's active session, epochs and Group-scoped
/// installs. Sessions are passed as `(agent_id, session_id, session_epoch)`.
#[pyclass(module = "missionweaveprotocol._native")]
#[derive(Debug, Clone)]
pub struct NativeAgentSessions {
    inner: AgentSessions,
}

fn session_arg(
    py: Python<'_>,
    agent_id: &Bound<'_, PyAny>,
    session_id: &Bound<'_, PyAny>,
    session_epoch: &Bound<'_, PyAny>,
) -> PyResult<SessionDescriptor> {
    Ok(SessionDescriptor {
        agent_id: convert::str_arg(py, agent_id, "agent_id")?.into_owned(),
        session_id: convert::str_arg(py, session_id, "session_id")?.into_owned(),
        session_epoch: convert::uint_arg(py, session_epoch, "session_epoch", MAX_SAFE_INTEGER)?,
    })
}

#[pymethods]
impl NativeAgentSessions {
    #[new]
    fn py_new(py: Python<'_>, agent_id: &Bound<'_, PyAny>) -> PyResult<Self> {
        let agent_id = convert::str_arg(py, agent_id, "agent_id")?;
        AgentSessions::new(&agent_id)
            .map(|inner| Self { inner })
            .map_err(|e| agent_error(py, &e))
    }

    #[getter]
    fn agent_id(&self) -> &str {
        self.inner.agent_id()
    }

    /// The active session as `(agent_id, session_id, session_epoch)`, or `None`.
    #[getter]
    fn active_session<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        self.inner
            .active_session()
            .map(|d| descriptor_tuple(py, d))
            .transpose()
    }

    #[getter]
    fn last_session_epoch(&self) -> u64 {
        self.inner.last_session_epoch()
    }

    #[pyo3(signature = (session_epoch, session_id=None))]
    fn start_session<'py>(
        &mut self,
        py: Python<'py>,
        session_epoch: &Bound<'py, PyAny>,
        session_id: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        if session_epoch.is_instance_of::<pyo3::types::PyBool>()
            || !session_epoch.is_instance_of::<pyo3::types::PyInt>()
        {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "session_epoch must be an int",
            ));
        }
        let epoch: i128 = session_epoch.extract()?;
        let epoch = u64::try_from(epoch).unwrap_or(0);
        let session_id = convert::opt_str_arg(py, session_id, "session_id")?;
        let d = self
            .inner
            .start_session(epoch, session_id.as_deref())
            .map_err(|e| agent_error(py, &e))?;
        descriptor_tuple(py, &d)
    }

    fn close_session(
        &mut self,
        py: Python<'_>,
        agent_id: &Bound<'_, PyAny>,
        session_id: &Bound<'_, PyAny>,
        session_epoch: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let session = session_arg(py, agent_id, session_id, session_epoch)?;
        Ok(self.inner.close_session(&session))
    }

    #[pyo3(signature = (agent_id, session_id, session_epoch, group_id, values, *, revision, credentials=false))]
    #[allow(clippy::too_many_arguments)]
    fn install(
        &mut self,
        py: Python<'_>,
        agent_id: &Bound<'_, PyAny>,
        session_id: &Bound<'_, PyAny>,
        session_epoch: &Bound<'_, PyAny>,
        group_id: &Bound<'_, PyAny>,
        values: &Bound<'_, PyAny>,
        revision: &Bound<'_, PyAny>,
        credentials: bool,
    ) -> PyResult<()> {
        let session = session_arg(py, agent_id, session_id, session_epoch)?;
        let group_id = convert::str_arg(py, group_id, "group_id")?;
        let values = crate::canonical_value(py, values)?;
        let revision = convert::uint_arg(py, revision, "revision", MAX_SAFE_INTEGER)?;
        let result = if credentials {
            self.inner
                .install_group_credentials(&session, &group_id, &values, revision)
        } else {
            self.inner
                .install_group_context(&session, &group_id, &values, revision)
        };
        result.map_err(|e| agent_error(py, &e))
    }

    /// The execution context of a dispatch (`work_id`, `group_id`, `generation`) against
    /// `scheduler` (a native Scheduler), as a dict with the `ExecutionContext` fields.
    #[allow(clippy::too_many_arguments)]
    fn prepare<'py>(
        &self,
        py: Python<'py>,
        agent_id: &Bound<'py, PyAny>,
        session_id: &Bound<'py, PyAny>,
        session_epoch: &Bound<'py, PyAny>,
        scheduler: PyRef<'py, Scheduler>,
        work_id: &Bound<'py, PyAny>,
        group_id: &Bound<'py, PyAny>,
        generation: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let session = session_arg(py, agent_id, session_id, session_epoch)?;
        let dispatch = Dispatch {
            work_id: Arc::from(convert::str_arg(py, work_id, "work_id")?.as_ref()),
            group_id: Arc::from(convert::str_arg(py, group_id, "group_id")?.as_ref()),
            generation: convert::uint_arg(py, generation, "generation", u64::from(u32::MAX))?
                as u32,
            slots: 1,
            resume_from: None,
        };
        let context = self
            .inner
            .prepare(&session, scheduler.core(), &dispatch)
            .map_err(|e| agent_error(py, &e))?;
        let out = PyDict::new(py);
        out.set_item("agent_id", context.agent_id)?;
        out.set_item("session_id", context.session_id)?;
        out.set_item("session_epoch", context.session_epoch)?;
        out.set_item("work_id", context.work_id)?;
        out.set_item("group_id", context.group_id)?;
        out.set_item("context_revision", context.context_revision)?;
        out.set_item("values", convert::to_python(py, &context.values)?)?;
        out.set_item("credential_revision", context.credential_revision)?;
        out.set_item("credentials", convert::to_python(py, &context.credentials)?)?;
        Ok(out)
    }
}
