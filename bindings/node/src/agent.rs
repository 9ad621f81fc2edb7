//! The Agent runtime's sessions and Group-isolated execution contexts (§6.3, §11.3, §12) for
//! the package's `AgentRuntime`: conversions only, over `missionweaveprotocol_ffi::agent`.
//! `prepare` reads the user's own Scheduler, never a copy: the Group a run may read is that
//! Scheduler's record.

use missionweaveprotocol_ffi::Held;
use missionweaveprotocol_ffi::agent::AgentHandle;
use napi_derive::napi;

use crate::scheduler::Scheduler;

/// One Agent's sessions.
#[napi]
#[derive(Debug)]
pub struct AgentSessions(Held<AgentHandle>);

#[napi]
impl AgentSessions {
    #[napi(constructor)]
    pub fn new(agent_id: String) -> Self {
        Self(Held::made(AgentHandle::new(&agent_id)))
    }

    /// `{"ok":null}`, or the error that refused construction.
    #[napi(catch_unwind)]
    pub fn status(&self) -> String {
        self.0.status()
    }

    /// `[session, dispatch]` against `scheduler`, the user's Scheduler.
    #[napi(catch_unwind)]
    pub fn prepare(&self, args: String, scheduler: &Scheduler) -> String {
        self.0
            .with(|agent| scheduler.0.with(|s| agent.prepare(&args, s.core())))
    }

    /// Drops the native state now (idempotent).
    #[napi(catch_unwind)]
    pub fn free(&mut self) {
        self.0.free("AgentRuntime");
    }
}

ops!(AgentSessions {
    state();
    start_session(args);
    close_session(args);
    install_context(args);
    install_credentials(args);
});
