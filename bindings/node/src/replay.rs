//! Durable Agent-side replay (§16) for the package's `AgentReplay` (`js/src/api.mjs`, Node
//! entry only). The JavaScript driver awaits the replay source and the projector; between
//! those awaits it hands each Event and its projection to this object, which runs the core's
//! per-Group steps (`replay::GroupReplay`): routing by Group, `sequence == cursor + 1`, an Event
//! ID never moves, duplicates skipped, admission with rollback on a collision, and the atomic
//! batch commit of inbox rows, cursor and Scheduler snapshot. The batch size rule (at least
//! `DEFAULT_BATCH_EVENTS`, at least four Events per Scheduler item) is the core's
//! `AgentReplay::batch_limit`, applied here. Conversions only, as in
//! `bindings/python/src/replay.rs`.
//!
//! The Worker's Scheduler is the user's own (`Scheduler` of the package, its native object), passed
//! to `apply` and `commit`: replay admits into it and commits its snapshot, never a copy (the
//! wrapper rebuilds it from the store's snapshot when none is given, as Python's does).

use std::sync::Arc;

use missionweaveprotocol::json::{Number, Value};
use missionweaveprotocol_agent::replay::{
    DEFAULT_BATCH_EVENTS, EventCheck, EventProjection, GroupReplay as CoreGroupReplay,
    GroupReplayResult, ReplayError, ReplaySnapshot, batch_limit,
};
use missionweaveprotocol_ffi::shapes::scheduler::{AdmissionDecisionAnswer, WorkOfferInput};
use missionweaveprotocol_ffi::shapes::{answer, read};
use missionweaveprotocol_ffi::{Failure, Obj, finish};
use missionweaveprotocol_kernel::scheduler::Scheduler;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use missionweaveprotocol_store_sqlite::SqliteAgentStore;
use napi_derive::napi;

use crate::freed;
use crate::local_store::{AgentStore, count};
use crate::scheduler::Scheduler as SchedulerObject;

/// A replay error: the shared envelope of the core's description (`ReplayError` describes
/// itself: the class of its reference family, or the class of the store or Scheduler error
/// inside it).
fn replay_error(error: &ReplayError) -> String {
    finish(Err(Failure::error(error)))
}

fn failure(f: Failure) -> String {
    finish(Err(f))
}

fn now_of(now: f64) -> Result<UnixMillis, String> {
    if now.is_finite() && now.fract() == 0.0 && now.abs() <= 9_007_199_254_740_991.0 {
        Ok(UnixMillis(now as i64))
    } else {
        Err(failure(Failure::argument(
            "now: expected integer milliseconds since the epoch",
        )))
    }
}

/// The projection of `text` (JSON text of an array of WorkOffers).
fn projection(text: &str) -> Result<EventProjection, String> {
    let work_offers = read::<Vec<WorkOfferInput>>(text, "workOffers")
        .map_err(failure)?
        .into_iter()
        .map(WorkOfferInput::into_offer)
        .collect::<Result<Vec<_>, _>>()
        .map_err(failure)?;
    Ok(EventProjection { work_offers })
}

fn result_value(r: GroupReplayResult) -> Result<Value, String> {
    let admissions = r
        .admissions
        .iter()
        .map(|a| answer(&AdmissionDecisionAnswer::new(&a.work_id, a.decision)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(failure)?;
    Ok(Obj::new()
        .str("groupId", r.group_id)
        .num("startCursor", r.start_cursor)
        .num("endCursor", r.end_cursor)
        .num("appliedEvents", r.applied_events)
        .num("duplicateEvents", r.duplicate_events)
        .value("admissions", Value::Array(admissions))
        .build())
}

struct State {
    store: Arc<SqliteAgentStore>,
    agent_id: String,
    group: Option<CoreGroupReplay>,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("agent_id", &self.agent_id)
            .field("group", &self.group.as_ref().map(CoreGroupReplay::group_id))
            .finish_non_exhaustive()
    }
}

/// The raw replay of one Agent into one store.
#[napi]
#[derive(Debug)]
pub struct AgentReplay {
    state: Option<State>,
    /// `{"ok":null}`, or why construction failed.
    status: String,
}

impl AgentReplay {
    fn state(&mut self) -> Result<&mut State, String> {
        if self.status.starts_with("{\"error\"") {
            return Err(self.status.clone());
        }
        self.state.as_mut().ok_or_else(|| freed("AgentReplay"))
    }

    /// Runs `use_` on the current Group's replay (after `begin`).
    fn with_group<T>(
        &mut self,
        use_: impl FnOnce(&Arc<SqliteAgentStore>, &mut CoreGroupReplay) -> Result<T, String>,
    ) -> Result<T, String> {
        let State { store, group, .. } = self.state()?;
        let group = group
            .as_mut()
            .ok_or_else(|| failure(Failure::argument("AgentReplay: begin(groupId) first")))?;
        use_(store, group)
    }
}

fn env(result: Result<Value, String>) -> String {
    match result {
        Ok(value) => finish(Ok(value)),
        Err(envelope) => envelope,
    }
}

#[napi]
impl AgentReplay {
    /// The replay of `agentId` into `store`; the Scheduler is passed to `apply` and `commit`.
    #[napi(constructor)]
    pub fn new(store: &AgentStore, agent_id: String) -> Self {
        let made = (|| -> Result<State, String> {
            if agent_id.is_empty() {
                return Err(replay_error(&ReplayError::InvalidArgument("agent_id")));
            }
            let store = store.shared()?;
            Ok(State {
                store,
                agent_id,
                group: None,
            })
        })();
        match made {
            Ok(state) => Self {
                state: Some(state),
                status: finish(Ok(Value::Null)),
            },
            Err(status) => Self {
                state: None,
                status,
            },
        }
    }

    /// `{"ok":null}`, or the error that refused construction.
    #[napi(catch_unwind)]
    pub fn status(&self) -> String {
        self.status.clone()
    }

    /// Starts reconciling `groupId` at the store's cursor: `{"ok": cursor}`.
    #[napi(catch_unwind)]
    pub fn begin(&mut self, group_id: String) -> String {
        env(self.state().and_then(|st| {
            let group = CoreGroupReplay::begin(&*st.store, &st.agent_id, &group_id)
                .map_err(|e| replay_error(&e))?;
            let cursor = group.cursor();
            st.group = Some(group);
            Ok(Value::Number(Number::from_u64(cursor)))
        }))
    }

    /// The cursor including staged Events (the source is asked after it): `{"ok": n}`.
    #[napi(catch_unwind)]
    pub fn cursor(&mut self) -> String {
        env(self.with_group(|_, g| Ok(Value::Number(Number::from_u64(g.cursor())))))
    }

    /// `{"ok": true}` when the Event is new (project it and `apply`), `false` for a duplicate;
    /// a wrong Group, a gap, a missing sequence or a moved Event ID is the family's error.
    #[napi(catch_unwind)]
    pub fn check(&mut self, event_id: String, group_id: String, sequence: f64) -> String {
        env(self.with_group(|store, g| {
            let sequence = count(sequence, "sequence")?;
            let check = g
                .check(&**store, &event_id, &group_id, sequence)
                .map_err(|e| replay_error(&e))?;
            Ok(Value::Bool(check == EventCheck::New))
        }))
    }

    /// Admits the projection's offers (`offers`: JSON text of an array of WorkOffers, absent
    /// for a projector that answered `null`) into `scheduler` (the user's) at `now` and stages
    /// the Event; commits the batch when it reaches the core's batch size. `{"ok":
    /// [decision…]}` of this Event.
    #[napi(catch_unwind)]
    pub fn apply(
        &mut self,
        scheduler: &mut SchedulerObject,
        event_id: String,
        sequence: f64,
        offers: Option<String>,
        now: f64,
    ) -> String {
        let scheduler: &mut Scheduler = match scheduler.0.get_mut() {
            Ok(handle) => handle.core_mut(),
            Err(envelope) => return envelope,
        };
        env(self.with_group(|store, g| {
            let sequence = count(sequence, "sequence")?;
            let now = now_of(now)?;
            let projection = match offers {
                Some(text) => Some(projection(&text)?),
                None => None,
            };
            let before = g.admission_count();
            g.apply(scheduler, &event_id, sequence, projection, now)
                .map_err(|e| replay_error(&e))?;
            let decided = g
                .admissions_since(before)
                .iter()
                .map(|a| answer(&AdmissionDecisionAnswer::new(&a.work_id, a.decision)))
                .collect::<Result<Vec<_>, _>>()
                .map_err(failure)?;
            // The core's rule for when a batch is full (`replay::batch_limit`).
            if g.staged() >= batch_limit(DEFAULT_BATCH_EVENTS, scheduler.len()) {
                g.commit(&**store, scheduler)
                    .map_err(|e| replay_error(&e))?;
            }
            Ok(Value::Array(decided))
        }))
    }

    /// Restores a `CURSOR_TOO_OLD` snapshot (§16, the core's `GroupReplay::install_snapshot`):
    /// commits what is staged, admits `offers` (JSON text of the snapshot's WorkOffers), moves
    /// the cursor to `throughSequence` and records `artifactHash`, in one atomic commit. A
    /// snapshot not after the cursor is a `ReplaySequenceError`. `{"ok": [decision…]}`.
    #[napi(catch_unwind)]
    pub fn install_snapshot(
        &mut self,
        scheduler: &mut SchedulerObject,
        artifact_hash: String,
        through_sequence: f64,
        offers: String,
        now: f64,
    ) -> String {
        let scheduler: &mut Scheduler = match scheduler.0.get_mut() {
            Ok(handle) => handle.core_mut(),
            Err(envelope) => return envelope,
        };
        env(self.with_group(|store, g| {
            let snapshot = ReplaySnapshot {
                artifact_hash,
                through_sequence: count(through_sequence, "throughSequence")?,
                projection: projection(&offers)?,
            };
            let now = now_of(now)?;
            let before = g.admission_count();
            g.install_snapshot(&**store, scheduler, snapshot, now)
                .map_err(|e| replay_error(&e))?;
            g.admissions_since(before)
                .iter()
                .map(|a| answer(&AdmissionDecisionAnswer::new(&a.work_id, a.decision)))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array)
                .map_err(failure)
        }))
    }

    /// Commits the staged Events with `scheduler`'s snapshot, atomically.
    #[napi(catch_unwind)]
    pub fn commit(&mut self, scheduler: &mut SchedulerObject) -> String {
        let scheduler: &mut Scheduler = match scheduler.0.get_mut() {
            Ok(handle) => handle.core_mut(),
            Err(envelope) => return envelope,
        };
        env(self.with_group(|store, g| {
            g.commit(&**store, scheduler)
                .map_err(|e| replay_error(&e))?;
            Ok(Value::Null)
        }))
    }

    /// What the current Group's reconcile committed: `{groupId, startCursor, endCursor,
    /// appliedEvents, duplicateEvents, admissions}`.
    #[napi(catch_unwind)]
    pub fn result(&mut self) -> String {
        env(self.with_group(|_, g| result_value(g.result())))
    }

    /// Drops the native state now (idempotent); the store and the Scheduler stay with their
    /// other users.
    #[napi(catch_unwind)]
    pub fn free(&mut self) {
        self.state = None;
    }
}
