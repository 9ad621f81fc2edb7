//! The Agent runtime's sessions and Group-isolated execution contexts (§6.3, §11.3, §12) for
//! the package's `AgentRuntime` (`js/src/api.mjs`, Node entry only): conversions only, over
//! `missionweaveprotocol_ffi::agent`. `prepare` reads the user's own Scheduler (a `Handle` of
//! class `scheduler`), never a copy: the Group a run may read is that Scheduler's record.

use missionweaveprotocol_ffi::agent::AgentHandle;
use missionweaveprotocol_ffi::finish;
use napi_derive::napi;

use crate::{Handle, freed};

/// One Agent's sessions: `call(method, argsJson)` and `prepare(argsJson, scheduler)`.
#[napi]
#[derive(Debug)]
pub struct AgentSessions {
    inner: Option<AgentHandle>,
    /// `{"ok":null}`, or why construction failed.
    status: String,
}

impl AgentSessions {
    fn inner(&mut self) -> Result<&mut AgentHandle, String> {
        if self.status.starts_with("{\"error\"") {
            return Err(self.status.clone());
        }
        self.inner.as_mut().ok_or_else(|| freed("AgentRuntime"))
    }
}

#[napi]
impl AgentSessions {
    #[napi(constructor)]
    pub fn new(agent_id: String) -> Self {
        match AgentHandle::new(&agent_id) {
            Ok(inner) => Self {
                inner: Some(inner),
                status: finish(Ok(missionweaveprotocol::json::Value::Null)),
            },
            Err(failure) => Self {
                inner: None,
                status: finish(Err(failure)),
            },
        }
    }

    /// `{"ok":null}`, or the error that refused construction.
    #[napi(catch_unwind)]
    pub fn status(&self) -> String {
        self.status.clone()
    }

    /// `state`, `startSession`, `closeSession`, `installContext`, `installCredentials`.
    #[napi(catch_unwind)]
    pub fn call(&mut self, method: String, args: String) -> String {
        match self.inner() {
            Ok(inner) => finish(inner.call(&method, &args)),
            Err(envelope) => envelope,
        }
    }

    /// `[session, dispatch]` against `scheduler`, the user's Scheduler.
    #[napi(catch_unwind)]
    pub fn prepare(&mut self, args: String, scheduler: &Handle) -> String {
        let inner = match self.inner() {
            Ok(inner) => inner,
            Err(envelope) => return envelope,
        };
        match scheduler.0.scheduler() {
            Ok(core) => finish(inner.prepare(&args, core)),
            Err(envelope) => envelope,
        }
    }

    /// Drops the native state now (idempotent).
    #[napi(catch_unwind)]
    pub fn free(&mut self) {
        self.inner = None;
    }
}
