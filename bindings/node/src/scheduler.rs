//! The Worker-local Scheduler (`missionweaveprotocol_ffi::scheduling`): one method per
//! operation. `schedule` and `apply` take the dispatch loop's plain arguments; the others one
//! JSON argument array. The Agent runtime and Agent replay work on this object's core
//! Scheduler (the user's own), never a copy.

use missionweaveprotocol_ffi::Held;
use missionweaveprotocol_ffi::scheduling::SchedulerHandle;
use napi_derive::napi;

/// `new Scheduler(args)` (`[policy]`); `schedulerRestore` and `schedulerRebuild` make one from
/// a snapshot, `schedulerFromOffers` from offers.
#[napi]
#[derive(Debug)]
pub struct Scheduler(pub(crate) Held<SchedulerHandle>);

#[napi]
impl Scheduler {
    #[napi(constructor, catch_unwind)]
    pub fn new(args: String) -> Self {
        Self(Held::made(SchedulerHandle::new(&args)))
    }

    #[napi(catch_unwind)]
    pub fn status(&self) -> String {
        self.0.status()
    }

    /// The actions due at `now` (the hot path: a number, no argument array).
    #[napi(catch_unwind)]
    pub fn schedule(&mut self, now: f64) -> String {
        self.0.with_mut(|s| s.schedule(now))
    }

    /// `apply(workId, transitionJson, now)` (the hot path).
    #[napi(catch_unwind)]
    pub fn apply(&mut self, work_id: String, transition: String, now: f64) -> String {
        self.0.with_mut(|s| s.apply(&work_id, &transition, now))
    }

    #[napi(catch_unwind)]
    pub fn free(&mut self) {
        self.0.free("Scheduler");
    }
}

ops!(Scheduler {
    admit(args);
    admit_many(args);
    unblock(args);
    cancel(args);
    reprioritize(args);
    set_capacity(args);
    set_group_policy(args);
    state(args);
    generation(args);
    is_terminal(args);
    forget(args);
    disclose(args);
    stats();
    snapshot();
});

/// `[snapshotText, policy]`: exact restore.
#[napi(catch_unwind)]
pub fn scheduler_restore(args: String) -> Scheduler {
    Scheduler(Held::made(SchedulerHandle::restore(&args)))
}

/// `[snapshotText, policy, now]`: after a restart.
#[napi(catch_unwind)]
pub fn scheduler_rebuild(args: String) -> Scheduler {
    Scheduler(Held::made(SchedulerHandle::rebuild(&args)))
}

/// `[offers, policy, now]`: a Scheduler holding the offers (a declined one refuses it).
#[napi(catch_unwind)]
pub fn scheduler_from_offers(args: String) -> Scheduler {
    Scheduler(Held::made(SchedulerHandle::from_offers(&args)))
}
