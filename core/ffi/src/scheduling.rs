//! The Worker-local Scheduler through JavaScript. The handle owns one core [`Scheduler`] and has
//! one method per operation: `schedule` and `apply` take the hot path's plain arguments (a
//! number, the transition's JSON text), every other method one JSON argument array. The call and answer
//! shapes are the types of [`crate::shapes::scheduler`].

use missionweaveprotocol::json::Value;
use missionweaveprotocol_kernel::scheduler::{
    self, Scheduler, SchedulerError, SchedulerPolicy, SchedulerSnapshot,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

use crate::authority::{snapshot_failure, snapshot_text};
use crate::envelope::{Failure, finish};
use crate::shapes::common::Millis;
use crate::shapes::scheduler::{
    AdmissionDecisionAnswer, GroupPolicyInput, ScheduleActionAnswer, ScheduleDisclosureAnswer,
    SchedulerPolicyInput, SchedulerStatsAnswer, TransitionInput, WorkOfferInput,
};
use crate::shapes::{Call, Res, answer, ok_text, read, run};

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

    /// `[policy]` (absent or `null`: the core's default policy).
    pub fn new(args: &str) -> Res<Self> {
        let a = Call::parse(args)?;
        Scheduler::new(policy(&a, 0)?)
            .map(Self)
            .map_err(|e| scheduler_failure(&e))
    }

    /// `[snapshotText, policy]`: exact restore (the same inputs give the same decisions).
    pub fn restore(args: &str) -> Res<Self> {
        let a = Call::parse(args)?;
        let snap = read_snapshot(&a)?;
        Scheduler::restore(policy(&a, 1)?, &snap)
            .map(Self)
            .map_err(|e| scheduler_failure(&e))
    }

    /// `[snapshotText, policy, now]`: after a restart, running work resumes from a durable safe
    /// checkpoint or blocks.
    pub fn rebuild(args: &str) -> Res<Self> {
        let a = Call::parse(args)?;
        let snap = read_snapshot(&a)?;
        let now: Millis = a.arg(2, "now")?;
        Scheduler::rebuild_after_restart(policy(&a, 1)?, &snap, now.0)
            .map(Self)
            .map_err(|e| scheduler_failure(&e))
    }

    /// `[offers, policy, now]`: a Scheduler holding `offers`, each admitted at `now` in order
    /// (the reference's `Scheduler.rebuild(offers)`, [`Scheduler::from_offers`]): an offer the
    /// Scheduler declines refuses the rebuild (`offer_declined`).
    pub fn from_offers(args: &str) -> Res<Self> {
        let a = Call::parse(args)?;
        let offers = a
            .arg::<Vec<WorkOfferInput>>(0, "source")?
            .into_iter()
            .map(WorkOfferInput::into_offer)
            .collect::<Res<Vec<_>>>()?;
        let now: Millis = a.arg(2, "now")?;
        Scheduler::from_offers(policy(&a, 1)?, &offers, now.0)
            .map(Self)
            .map_err(|e| scheduler_failure(&e))
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

    /// `[offer, now]` → [`AdmissionDecisionAnswer`].
    pub fn admit(&mut self, args: &str) -> String {
        run(args, |a| {
            let o = a.arg::<WorkOfferInput>(0, "offer")?.into_offer()?;
            let now = time(a, 1)?;
            answer(&AdmissionDecisionAnswer::new(
                &o.work_id,
                self.0.admit(&o, now),
            ))
        })
    }

    /// `[workId, now]`.
    pub fn unblock(&mut self, args: &str) -> String {
        run(args, |a| {
            let id = work_id(a)?;
            done(self.0.unblock(&id, time(a, 1)?))
        })
    }

    /// `[workId]`.
    pub fn cancel(&mut self, args: &str) -> String {
        run(args, |a| done(self.0.cancel(&work_id(a)?)))
    }

    /// `[workId, priority]`.
    pub fn reprioritize(&mut self, args: &str) -> String {
        run(args, |a| {
            let priority =
                scheduler::priority(a.arg(1, "priority")?).map_err(|e| scheduler_failure(&e))?;
            done(self.0.reprioritize(&work_id(a)?, priority))
        })
    }

    /// `[capacitySlots]`.
    pub fn set_capacity(&mut self, args: &str) -> String {
        run(args, |a| {
            done(self.0.set_capacity(a.arg(0, "capacitySlots")?))
        })
    }

    /// `[groupId, groupPolicy]`.
    pub fn set_group_policy(&mut self, args: &str) -> String {
        run(args, |a| {
            let gp = a.arg::<GroupPolicyInput>(1, "groupPolicy")?;
            done(
                self.0
                    .set_group_policy(&a.arg::<String>(0, "groupId")?, gp.into()),
            )
        })
    }

    /// `[workId]` → the WorkState of a non-terminal item, or `null`.
    pub fn state(&self, args: &str) -> String {
        run(args, |a| {
            answer(&self.0.state(&work_id(a)?).map(|st| st.as_str()))
        })
    }

    /// `[workId]`.
    pub fn generation(&self, args: &str) -> String {
        run(args, |a| answer(&self.0.generation(&work_id(a)?)))
    }

    /// `[workId]`.
    pub fn is_terminal(&self, args: &str) -> String {
        run(args, |a| answer(&self.0.is_terminal(&work_id(a)?)))
    }

    /// `[workId]`.
    pub fn forget(&mut self, args: &str) -> String {
        run(args, |a| answer(&self.0.forget(&work_id(a)?)))
    }

    /// `[workId, now]` → [`ScheduleDisclosureAnswer`] or `null`.
    pub fn disclose(&self, args: &str) -> String {
        run(args, |a| {
            let id = work_id(a)?;
            let disclosure = self.0.disclose(&id, time(a, 1)?);
            answer(&disclosure.map(ScheduleDisclosureAnswer::from))
        })
    }

    /// [`SchedulerStatsAnswer`].
    pub fn stats(&self) -> String {
        let s = &self.0;
        finish(answer(&SchedulerStatsAnswer {
            size: u32::try_from(s.len()).unwrap_or(u32::MAX),
            used_slots: s.used_slots(),
            capacity_slots: s.capacity_slots(),
            horizon_ms: s.policy().horizon_ms().max(0) as u64,
        }))
    }

    /// The snapshot's JSON form.
    pub fn snapshot(&self) -> String {
        finish(Ok(self.0.snapshot().to_value()))
    }
}

fn work_id(a: &Call<'_>) -> Res<String> {
    a.arg::<String>(0, "workId")
}

fn time(a: &Call<'_>, index: usize) -> Res<UnixMillis> {
    a.arg::<Millis>(index, "now").map(|m| m.0)
}

fn done(result: Result<(), SchedulerError>) -> Res<Value> {
    result
        .map(|()| Value::Null)
        .map_err(|e| scheduler_failure(&e))
}
