//! Bounded offline execution (§11.5) for the package's `OfflineExecutionPolicy`,
//! `offlineCommandToWire`, `OfflineProgressBinding` and `InMemoryOutbox` (`js/src/offline.mjs`,
//! Node entry only): conversions only, over `missionweaveprotocol_ffi::offline`.
//!
//! The outbox is the user's JavaScript store, reached through the wrapper's adapter object
//! `{enqueue(agentId, actionId, payloadJson) → true}`: a call that throws (the wrapper keeps
//! the exception and rethrows it unchanged, as the Python binding does) is the core's `outbox`
//! refusal, and the policy records nothing.

use missionweaveprotocol::json::{Value, canonical_bytes};
use missionweaveprotocol_agent::offline::{OfflineOutbox, OutboxError};
use missionweaveprotocol_ffi::offline::{self as ffi_offline, OfflineHandle, OutboxHandle};
use missionweaveprotocol_ffi::{Held, finish};
use napi::bindgen_prelude::{FnArgs, Function, Object};
use napi_derive::napi;

/// The wrapper's outbox adapter as a core [`OfflineOutbox`]; the policy only enqueues.
struct JsOutbox<'a>(&'a Object<'a>);

impl OfflineOutbox for JsOutbox<'_> {
    fn enqueue_action(
        &mut self,
        agent_id: &str,
        action_id: &str,
        payload: &Value,
    ) -> Result<(), OutboxError> {
        let text = canonical_bytes(payload)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|e| OutboxError::Backend(e.to_string()))?;
        let enqueue: Function<FnArgs<(String, String, String)>, bool> = self
            .0
            .get("enqueue")
            .ok()
            .flatten()
            .ok_or_else(|| OutboxError::Backend("the outbox has no enqueue()".into()))?;
        match enqueue.call((agent_id.to_owned(), action_id.to_owned(), text).into()) {
            Ok(true) => Ok(()),
            Ok(false) => Err(OutboxError::Backend("the outbox refused the action".into())),
            Err(e) => Err(OutboxError::Backend(e.reason.clone())),
        }
    }

    fn pending_actions(&self, _agent_id: &str) -> Result<Vec<Value>, OutboxError> {
        Err(OutboxError::Backend(
            "pendingActions is read by the wrapper, not the policy".into(),
        ))
    }

    fn mark_action_sent(&mut self, _agent_id: &str, _action_id: &str) -> Result<(), OutboxError> {
        Err(OutboxError::Backend(
            "markActionSent is called by the wrapper, not the policy".into(),
        ))
    }
}

/// One offline window's policy: `new OfflinePolicy(argsJson)` with `[assignment,
/// disconnectedAt, limits]`.
#[napi]
#[derive(Debug)]
pub struct OfflinePolicy(Held<OfflineHandle>);

#[napi]
impl OfflinePolicy {
    #[napi(constructor)]
    pub fn new(args: String) -> Self {
        Self(Held::made(OfflineHandle::new(&args)))
    }

    /// `{"ok":null}`, or the error that refused construction.
    #[napi(catch_unwind)]
    pub fn status(&self) -> String {
        self.0.status()
    }

    /// `{disconnectedAt, graceDeadline, bufferedActions, cumulativeUsage}`.
    #[napi(catch_unwind)]
    pub fn state(&self) -> String {
        self.0.with(OfflineHandle::state)
    }

    /// `[command, usage, now]`, signed with the seed of `keyId`, queued through `outbox`.
    #[napi(catch_unwind)]
    pub fn buffer(&mut self, outbox: Object, key_id: String, seed: &[u8], args: String) -> String {
        self.0
            .with_mut(|p| finish(p.buffer(&mut JsOutbox(&outbox), &key_id, seed, &args)))
    }

    /// Drops the native state now (idempotent).
    #[napi(catch_unwind)]
    pub fn free(&mut self) {
        self.0.free("OfflineExecutionPolicy");
    }
}

/// The core's in-memory outbox.
#[napi]
#[derive(Debug)]
pub struct OfflineOutboxMemory(Held<OutboxHandle>);

#[napi]
impl OfflineOutboxMemory {
    #[napi(constructor)]
    pub fn new() -> Self {
        Self(Held::of(OutboxHandle::default()))
    }

    /// Drops the native state now (idempotent).
    #[napi(catch_unwind)]
    pub fn free(&mut self) {
        self.0.free("InMemoryOutbox");
    }
}

impl Default for OfflineOutboxMemory {
    fn default() -> Self {
        Self::new()
    }
}

ops!(OfflineOutboxMemory {
    enqueue_action(args);
    pending_actions(args);
    mark_action_sent(args);
});

/// The extension URI, its version and the reversible kinds (§11.5).
#[napi(catch_unwind)]
pub fn offline_constants() -> String {
    ffi_offline::constants()
}

/// `[command, {sessionEpoch, membershipEpoch, issuedAt, executionLeaseId?}]`, re-signed with the
/// seed of `keyId`.
#[napi(catch_unwind)]
pub fn offline_rebase(key_id: String, seed: &[u8], args: String) -> String {
    finish(ffi_offline::rebase(&key_id, seed, &args))
}

/// `[command]`: its binding's JSON form, or null.
#[napi(catch_unwind)]
pub fn offline_binding_of(args: String) -> String {
    finish(ffi_offline::binding_of(&args))
}

/// `[data]`: the binding's normalized JSON form, or the core's refusal.
#[napi(catch_unwind)]
pub fn offline_validate_binding(args: String) -> String {
    finish(ffi_offline::validate_binding(&args))
}

/// `[limits]`: null, or the core's refusal of the bounds.
#[napi(catch_unwind)]
pub fn offline_validate_limits(args: String) -> String {
    finish(ffi_offline::validate_limits(&args))
}
