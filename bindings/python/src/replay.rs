//! `GroupReplay`: the core's per-Group replay steps (`replay::GroupReplay`) for
//! `missionweaveprotocol.replay.AgentReplay`, which awaits the source and the projector between
//! them. Conversions only: ordering, deduplication, admission, rollback and the atomic batch
//! commit are the core's.

use missionweaveprotocol_agent::replay::{
    EventCheck, EventProjection, GroupReplay as CoreGroupReplay, ReplaySnapshot,
};
use pyo3::prelude::*;

use crate::convert::{self, typed};
use crate::errors;
use crate::instant::millis_arg;
use crate::local_store::AgentStore;
use crate::scheduler::{AdmissionDecision, Scheduler, WorkOffer};

/// `GroupReplay(store, agent_id, group_id)`: one Group's reconcile, starting at the store's
/// cursor.
#[pyclass(module = "missionweaveprotocol._native")]
#[derive(Debug)]
pub struct GroupReplay {
    store: AgentStore,
    inner: CoreGroupReplay,
}

#[pymethods]
impl GroupReplay {
    #[new]
    fn py_new(
        py: Python<'_>,
        store: &Bound<'_, PyAny>,
        agent_id: &str,
        group_id: &str,
    ) -> PyResult<Self> {
        let store = typed::<AgentStore>(py, store, "store", "AgentStore")?
            .get()
            .clone();
        let inner = CoreGroupReplay::begin(&*store.inner, agent_id, group_id)
            .map_err(|e| errors::replay_error(py, &e))?;
        Ok(Self { store, inner })
    }

    /// The cursor including staged Events (ask the source after it).
    #[getter]
    fn cursor(&self) -> u64 {
        self.inner.cursor()
    }

    /// Events staged, not yet committed.
    #[getter]
    fn staged(&self) -> usize {
        self.inner.staged()
    }

    /// Whether the staged Events fill a batch for a Scheduler of `scheduled` items (the core's
    /// `replay::batch_limit` at `DEFAULT_BATCH_EVENTS`): the driver commits then.
    fn batch_full(&self, scheduled: usize) -> bool {
        self.inner.staged()
            >= missionweaveprotocol_agent::replay::batch_limit(
                missionweaveprotocol_agent::replay::DEFAULT_BATCH_EVENTS,
                scheduled,
            )
    }

    /// `True` when the Event is new (project and `apply` it), `False` for a duplicate.
    fn check(
        &mut self,
        py: Python<'_>,
        event_id: &str,
        group_id: &str,
        sequence: u64,
    ) -> PyResult<bool> {
        let check = self
            .inner
            .check(&*self.store.inner, event_id, group_id, sequence)
            .map_err(|e| errors::replay_error(py, &e))?;
        Ok(check == EventCheck::New)
    }

    /// Admits `offers` (native `WorkOffer`s, or `None`) into `scheduler` at `now` and stages
    /// the Event. The decisions of this Event.
    #[pyo3(signature = (scheduler, event_id, sequence, offers, *, now))]
    fn apply(
        &mut self,
        py: Python<'_>,
        scheduler: &Bound<'_, PyAny>,
        event_id: &str,
        sequence: u64,
        offers: Option<&Bound<'_, PyAny>>,
        now: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<AdmissionDecision>> {
        let now = millis_arg(py, now, "now")?;
        let projection = match offers {
            Some(list) => Some(projection(py, list)?),
            None => None,
        };
        let scheduler = typed::<Scheduler>(py, scheduler, "scheduler", "Scheduler")?;
        let mut scheduler = scheduler.borrow_mut();
        let before = self.inner.admission_count();
        self.inner
            .apply(scheduler.core_mut(), event_id, sequence, projection, now)
            .map_err(|e| errors::replay_error(py, &e))?;
        Ok(self
            .inner
            .admissions_since(before)
            .iter()
            .map(|a| AdmissionDecision::from_core(a.decision, a.work_id.clone()))
            .collect())
    }

    /// Restores a `CURSOR_TOO_OLD` snapshot (§16, the core's `GroupReplay::install_snapshot`):
    /// commits what is staged, admits `offers` (the snapshot's projection), moves the cursor to
    /// `through_sequence` and records `artifact_hash`, in one atomic commit. A snapshot not
    /// after the cursor is a `ReplaySequenceError`. The decisions of the snapshot's offers.
    #[pyo3(signature = (scheduler, artifact_hash, through_sequence, offers, *, now))]
    fn install_snapshot(
        &mut self,
        py: Python<'_>,
        scheduler: &Bound<'_, PyAny>,
        artifact_hash: &str,
        through_sequence: u64,
        offers: &Bound<'_, PyAny>,
        now: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<AdmissionDecision>> {
        let now = millis_arg(py, now, "now")?;
        let snapshot = ReplaySnapshot {
            artifact_hash: artifact_hash.to_owned(),
            through_sequence,
            projection: projection(py, offers)?,
        };
        let scheduler = typed::<Scheduler>(py, scheduler, "scheduler", "Scheduler")?;
        let mut scheduler = scheduler.borrow_mut();
        let before = self.inner.admission_count();
        self.inner
            .install_snapshot(&*self.store.inner, scheduler.core_mut(), snapshot, now)
            .map_err(|e| errors::replay_error(py, &e))?;
        Ok(self
            .inner
            .admissions_since(before)
            .iter()
            .map(|a| AdmissionDecision::from_core(a.decision, a.work_id.clone()))
            .collect())
    }

    /// Commits the staged Events with the Scheduler's snapshot, atomically.
    fn commit(&mut self, py: Python<'_>, scheduler: &Bound<'_, PyAny>) -> PyResult<()> {
        let scheduler = typed::<Scheduler>(py, scheduler, "scheduler", "Scheduler")?;
        let mut scheduler = scheduler.borrow_mut();
        self.inner
            .commit(&*self.store.inner, scheduler.core_mut())
            .map_err(|e| errors::replay_error(py, &e))
    }

    /// `(start_cursor, end_cursor, applied_events, duplicate_events, admissions)` of what was
    /// committed.
    fn result(&self) -> (u64, u64, u64, u64, Vec<AdmissionDecision>) {
        let r = self.inner.result();
        (
            r.start_cursor,
            r.end_cursor,
            r.applied_events,
            r.duplicate_events,
            r.admissions
                .into_iter()
                .map(|a| AdmissionDecision::from_core(a.decision, a.work_id))
                .collect(),
        )
    }
}

/// The projection of `list` (native `WorkOffer`s).
fn projection(py: Python<'_>, list: &Bound<'_, PyAny>) -> PyResult<EventProjection> {
    let mut work_offers = Vec::new();
    for item in convert::iter_arg(py, list, "offers")? {
        let item = item?;
        work_offers.push(
            typed::<WorkOffer>(py, &item, "offers items", "WorkOffer")?
                .get()
                .core()
                .clone(),
        );
    }
    Ok(EventProjection { work_offers })
}
