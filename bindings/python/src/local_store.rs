//! `AgentStore`: the Agent-local SQLite store (`SqliteAgentStore`), for
//! `missionweaveprotocol.local_store.SQLiteAgentStore`. Conversions only.

use std::sync::Arc;

use missionweaveprotocol_agent::replay::LocalStoreError;
use missionweaveprotocol_store_sqlite::SqliteAgentStore;
use pyo3::prelude::*;

use crate::convert::{self, typed};
use crate::errors::local_store_error;
use crate::scheduler::SchedulerSnapshot;

fn json_arg(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
) -> PyResult<missionweaveprotocol::json::Value> {
    crate::canonical_value(py, value)
}

/// `AgentStore(path)`: WAL, `synchronous=FULL`; every write is one transaction.
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug, Clone)]
pub struct AgentStore {
    pub(crate) inner: Arc<SqliteAgentStore>,
}

#[pymethods]
impl AgentStore {
    #[new]
    fn py_new(py: Python<'_>, path: &Bound<'_, PyAny>) -> PyResult<Self> {
        let path = convert::str_arg(py, path, "path")?;
        let inner = if path == ":memory:" {
            SqliteAgentStore::in_memory()
        } else {
            SqliteAgentStore::open(&*path)
        }
        .map_err(|e| local_store_error(py, &e))?;
        Ok(Self {
            inner: Arc::new(inner),
        })
    }

    fn acknowledge(
        &self,
        py: Python<'_>,
        agent_id: &str,
        group_id: &str,
        sequence: u64,
    ) -> PyResult<()> {
        self.inner
            .acknowledge(agent_id, group_id, sequence)
            .map_err(|e| local_store_error(py, &e))
    }

    fn cursor(&self, py: Python<'_>, agent_id: &str, group_id: &str) -> PyResult<u64> {
        self.inner
            .cursor(agent_id, group_id)
            .map_err(|e| local_store_error(py, &e))
    }

    #[pyo3(signature = (agent_id, event_id, group_id=None, sequence=None))]
    fn remember_event(
        &self,
        py: Python<'_>,
        agent_id: &str,
        event_id: &str,
        group_id: Option<&str>,
        sequence: Option<u64>,
    ) -> PyResult<bool> {
        let position = match (group_id, sequence) {
            (Some(g), Some(s)) => Some((g, s)),
            (None, None) => None,
            _ => {
                return Err(local_store_error(
                    py,
                    &LocalStoreError::new(
                        missionweaveprotocol_agent::replay::LocalStoreErrorKind::InvalidArgument,
                        "group_id and sequence go together",
                    ),
                ));
            }
        };
        self.inner
            .remember_event(agent_id, event_id, position)
            .map_err(|e| local_store_error(py, &e))
    }

    fn has_event(&self, py: Python<'_>, agent_id: &str, event_id: &str) -> PyResult<bool> {
        self.inner
            .has_event(agent_id, event_id)
            .map_err(|e| local_store_error(py, &e))
    }

    fn event_position(
        &self,
        py: Python<'_>,
        agent_id: &str,
        event_id: &str,
    ) -> PyResult<Option<(String, u64)>> {
        Ok(self
            .inner
            .event_position(agent_id, event_id)
            .map_err(|e| local_store_error(py, &e))?
            .map(|p| (p.group_id, p.sequence)))
    }

    fn enqueue_action(
        &self,
        py: Python<'_>,
        agent_id: &str,
        action_id: &str,
        payload: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let payload = json_arg(py, payload)?;
        self.inner
            .enqueue_action(agent_id, action_id, &payload)
            .map_err(|e| local_store_error(py, &e))
    }

    fn pending_actions<'py>(
        &self,
        py: Python<'py>,
        agent_id: &str,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        self.inner
            .pending_actions(agent_id)
            .map_err(|e| local_store_error(py, &e))?
            .iter()
            .map(|p| convert::to_python(py, &p.payload))
            .collect()
    }

    fn mark_action_sent(&self, py: Python<'_>, agent_id: &str, action_id: &str) -> PyResult<bool> {
        self.inner
            .mark_action_sent(agent_id, action_id)
            .map_err(|e| local_store_error(py, &e))
    }

    fn save_group_context(
        &self,
        py: Python<'_>,
        agent_id: &str,
        group_id: &str,
        revision: u64,
        values: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let values = json_arg(py, values)?;
        self.inner
            .save_group_context(agent_id, group_id, revision, &values)
            .map_err(|e| local_store_error(py, &e))
    }

    fn group_context<'py>(
        &self,
        py: Python<'py>,
        agent_id: &str,
        group_id: &str,
    ) -> PyResult<Option<(u64, Bound<'py, PyAny>)>> {
        match self
            .inner
            .group_context(agent_id, group_id)
            .map_err(|e| local_store_error(py, &e))?
        {
            Some((r, v)) => Ok(Some((r, convert::to_python(py, &v)?))),
            None => Ok(None),
        }
    }

    fn save_checkpoint(
        &self,
        py: Python<'_>,
        agent_id: &str,
        group_id: &str,
        work_id: &str,
        checkpoint_id: &str,
        content: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let content = json_arg(py, content)?;
        self.inner
            .save_checkpoint(agent_id, group_id, work_id, checkpoint_id, &content)
            .map_err(|e| local_store_error(py, &e))
    }

    fn load_checkpoint<'py>(
        &self,
        py: Python<'py>,
        agent_id: &str,
        group_id: &str,
        work_id: &str,
        checkpoint_id: &str,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.inner
            .load_checkpoint(agent_id, group_id, work_id, checkpoint_id)
            .map_err(|e| local_store_error(py, &e))?
            .map(|v| convert::to_python(py, &v))
            .transpose()
    }

    fn delete_checkpoint(
        &self,
        py: Python<'_>,
        agent_id: &str,
        group_id: &str,
        work_id: &str,
        checkpoint_id: &str,
    ) -> PyResult<bool> {
        self.inner
            .delete_checkpoint(agent_id, group_id, work_id, checkpoint_id)
            .map_err(|e| local_store_error(py, &e))
    }

    fn save_scheduler(
        &self,
        py: Python<'_>,
        agent_id: &str,
        snapshot: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let snapshot =
            typed::<SchedulerSnapshot>(py, snapshot, "snapshot", "SchedulerSnapshot")?.get();
        self.inner
            .save_scheduler(agent_id, snapshot.core())
            .map_err(|e| local_store_error(py, &e))
    }

    fn load_scheduler(
        &self,
        py: Python<'_>,
        agent_id: &str,
    ) -> PyResult<Option<SchedulerSnapshot>> {
        Ok(self
            .inner
            .load_scheduler(agent_id)
            .map_err(|e| local_store_error(py, &e))?
            .map(SchedulerSnapshot::from_core))
    }
}
