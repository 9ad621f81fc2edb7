//! The Worker-local Scheduler through JavaScript. The handle owns one core [`Scheduler`];
//! `schedule` and `apply` have direct entry points (the dispatch loop's hot path), everything
//! else goes through [`SchedulerHandle::call`] with a JSON argument array. The call and answer
//! shapes are the types of [`crate::shapes::scheduler`].

use missionweaveprotocol::json::Value;
use missionweaveprotocol_kernel::scheduler::{
    self, Scheduler, SchedulerError, SchedulerPolicy, SchedulerSnapshot,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

use crate::authority::{snapshot_failure, snapshot_text, unknown_method};
use crate::envelope::{Failure, finish};
use crate::shapes::common::Millis;
use crate::shapes::scheduler::{
    AdmissionDecisionAnswer, GroupPolicyInput, ScheduleActionAnswer, ScheduleDisclosureAnswer,
    SchedulerPolicyInput, SchedulerStatsAnswer, TransitionInput, WorkOfferInput,
};
use crate::shapes::{Call, Res, answer, ok_text, read};

fn scheduler_failure(e: &SchedulerError) -> Failure {
    Failure::error(e)
}

/// The policy at `index`: absent or `null` is the core's default policy.
fn policy(a: &Call<'_>, index: usize) -> Res<SchedulerPolicy> {
    let p: Option<SchedulerPolicyInput> = a.arg(index, "policy")?;
    Ok(p.unwrap_or_default().into())
}

/// A time from the hot-path entry points (a JavaScript number).
fn now_of(now: f64) -> Res<UnixMillis> {
    if !now.is_finite() || now.fract() != 0.0 || now.abs() > 9_007_199_254_740_991.0 {
        return Err(Failure::argument(
            "now: expected integer milliseconds since the epoch",
        ));
    }
    Ok(UnixMillis(now as i64))
}

fn read_snapshot(a: &Call<'_>) -> Res<SchedulerSnapshot> {
    let doc = snapshot_text(&a.arg::<String>(0, "snapshot")?)?;
    SchedulerSnapshot::from_value(&doc).map_err(|e| snapshot_failure(&e))
}

/// One Worker-local Scheduler.
#[derive(Debug, Clone)]
pub struct SchedulerHandle(Scheduler);

impl SchedulerHandle {
    /// The core Scheduler, for the calls that read it with another object's state (the Agent
    /// runtime's `prepare`): the user's own Scheduler, never a copy.
    pub fn core(&self) -> &Scheduler {
        &self.0
    }

    /// The core Scheduler, for the calls that change it with another object's state (Agent
    /// replay admitting projected offers and committing its snapshot).
    pub fn core_mut(&mut self) -> &mut Scheduler {
        &mut self.0
    }

    /// `mode`: `new` (`[policy]`), `restore` (`[snapshotText, policy]`, exact) or `rebuild`
    /// (`[snapshotText, policy, now]`, after a restart: running work resumes or blocks).
    pub fn new(mode: &str, args: &str) -> Res<Self> {
        let a = Call::parse(args)?;
        let fail = |e: SchedulerError| scheduler_failure(&e);
        match mode {
            "new" => Scheduler::new(policy(&a, 0)?).map(Self).map_err(fail),
            "restore" => {
                let snap = read_snapshot(&a)?;
                Scheduler::restore(policy(&a, 1)?, &snap)
                    .map(Self)
                    .map_err(fail)
            }
            "rebuild" => {
                let snap = read_snapshot(&a)?;
                let now: Millis = a.arg(2, "now")?;
                Scheduler::rebuild_after_restart(policy(&a, 1)?, &snap, now.0)
                    .map(Self)
                    .map_err(fail)
            }
            other => Err(Failure::argument(format!(
                "unknown scheduler mode {other:?}"
            ))),
        }
    }

    /// `schedule(now)`: the actions due at `now`, as an envelope.
    pub fn schedule(&mut self, now: f64) -> String {
        match now_of(now) {
            Ok(now) => {
                let actions = self.0.schedule(now);
                let answers: Vec<_> = actions.iter().map(ScheduleActionAnswer::new).collect();
                ok_text(&answers)
            }
            Err(failure) => finish(Err(failure)),
        }
    }

    /// `admitMany(offers, now)`: every offer is read first, so a malformed batch admits nothing.
    pub fn admit_many(&mut self, args: &str) -> String {
        let read = (|| {
            let a = Call::parse(args)?;
            let now: Millis = a.arg(1, "now")?;
            let offers = a
                .arg::<Vec<WorkOfferInput>>(0, "offers")?
                .into_iter()
                .map(WorkOfferInput::into_offer)
                .collect::<Res<Vec<_>>>()?;
            Ok((offers, now.0))
        })();
        match read {
            Ok((offers, now)) => {
                let s = &mut self.0;
                let decided: Vec<_> = offers
                    .iter()
                    .map(|o| AdmissionDecisionAnswer::new(&o.work_id, s.admit(o, now)))
                    .collect();
                ok_text(&decided)
            }
            Err(failure) => finish(Err(failure)),
        }
    }

    /// `apply(workId, transitionJson, now)`.
    pub fn apply(&mut self, work_id: &str, transition_json: &str, now: f64) -> String {
        finish((|| {
            let now = now_of(now)?;
            let transition = read::<TransitionInput>(transition_json, "transition")?;
            self.0
                .apply(work_id, transition.into_transition()?, now)
                .map_err(|e| scheduler_failure(&e))?;
            Ok(Value::Null)
        })())
    }

    pub fn call(&mut self, method: &str, args: &str) -> Res<Value> {
        let a = Call::parse(args)?;
        let s = &mut self.0;
        let fail = |e: SchedulerError| scheduler_failure(&e);
        let work_id = || a.arg::<String>(0, "workId");
        let now = |index| a.arg::<Millis>(index, "now").map(|m| m.0);
        match method {
            "admit" => {
                let o = a.arg::<WorkOfferInput>(0, "offer")?.into_offer()?;
                answer(&AdmissionDecisionAnswer::new(
                    &o.work_id,
                    s.admit(&o, now(1)?),
                ))
            }
            "apply" => {
                let t = a
                    .arg::<TransitionInput>(1, "transition")?
                    .into_transition()?;
                s.apply(&work_id()?, t, now(2)?).map_err(fail)?;
                Ok(Value::Null)
            }
            "unblock" => {
                s.unblock(&work_id()?, now(1)?).map_err(fail)?;
                Ok(Value::Null)
            }
            "cancel" => {
                s.cancel(&work_id()?).map_err(fail)?;
                Ok(Value::Null)
            }
            "reprioritize" => {
                let priority = scheduler::priority(a.arg(1, "priority")?).map_err(fail)?;
                s.reprioritize(&work_id()?, priority).map_err(fail)?;
                Ok(Value::Null)
            }
            "setCapacity" => {
                s.set_capacity(a.arg(0, "capacitySlots")?).map_err(fail)?;
                Ok(Value::Null)
            }
            "setGroupPolicy" => {
                let gp = a.arg::<GroupPolicyInput>(1, "groupPolicy")?;
                s.set_group_policy(&a.arg::<String>(0, "groupId")?, gp.into())
                    .map_err(fail)?;
                Ok(Value::Null)
            }
            "state" => answer(&s.state(&work_id()?).map(|st| st.as_str())),
            "generation" => answer(&s.generation(&work_id()?)),
            "isTerminal" => answer(&s.is_terminal(&work_id()?)),
            "forget" => answer(&s.forget(&work_id()?)),
            "disclose" => answer(
                &s.disclose(&work_id()?, now(1)?)
                    .map(ScheduleDisclosureAnswer::from),
            ),
            "stats" => answer(&SchedulerStatsAnswer {
                size: u32::try_from(s.len()).unwrap_or(u32::MAX),
                used_slots: s.used_slots(),
                capacity_slots: s.capacity_slots(),
                horizon_ms: s.policy().horizon_ms().max(0) as u64,
            }),
            "snapshot" => Ok(s.snapshot().to_value()),
            other => Err(unknown_method("Scheduler", other)),
        }
    }
}
