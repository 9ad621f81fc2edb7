//! The sans-IO client session `missionweaveprotocol-gateway::client::Session` for the
//! package's `AgentClient` (`js/src/api/client.mjs`): the conversions are
//! `missionweaveprotocol_ffi::client` (shared with the browser build, bindings/wasm/src/client.rs);
//! this class adds the napi registration, a lock (napi objects are `&self`) and the OS randomness.
//! The handshake, frame building, Event verification (six stages, Group Authority signer),
//! deduplication, Group ordering, ACK bounds and Command outcomes are the Rust session's; the
//! Node host moves bytes and time.
//!
//! Calls answer envelopes (`{"ok":…}` / `{"error":…}`) as everywhere in this addon. A refusal
//! of the session is class `ClientSessionError` with `reason` naming the `ClientError` variant
//! (`not_authenticated`, `ack_beyond_cursor`, …) and the session's own message. `pollEvents`
//! answers the `SessionEvent`s in order, each `{kind, …}` (camelCase members).

use std::sync::{Mutex, MutexGuard, PoisonError};

use missionweaveprotocol_ffi::RegistryHandle;
use missionweaveprotocol_ffi::client::ClientSessionHandle;
use missionweaveprotocol_host::OsRandom;
use napi::bindgen_prelude::Either;
use napi_derive::napi;

use crate::{RegistryArg, freed};

/// One connection's client session. The constructor never throws: `status()` is the envelope
/// of the construction.
#[napi]
#[derive(Debug)]
pub struct ClientSession(Result<Mutex<ClientSessionHandle>, String>);

impl ClientSession {
    fn locked(&self) -> Result<MutexGuard<'_, ClientSessionHandle>, String> {
        self.0
            .as_ref()
            .map(|s| s.lock().unwrap_or_else(PoisonError::into_inner))
            .map_err(Clone::clone)
    }

    fn with(&self, call: impl FnOnce(&mut ClientSessionHandle) -> String) -> String {
        match self.locked() {
            Ok(mut session) => call(&mut session),
            Err(envelope) => envelope,
        }
    }
}

#[napi]
impl ClientSession {
    /// `registry`: the Organization Registry every Event is verified against; `authority_id`:
    /// the Group Authority service whose key must sign every Event; `key_id` and `seed`: the
    /// Agent's signing key (it signs the HELLO challenge); `command_timeout_ms`: absent keeps
    /// the session's default.
    #[napi(constructor, catch_unwind)]
    pub fn new(
        agent_id: String,
        registry: RegistryArg<'_>,
        authority_id: String,
        key_id: String,
        seed: &[u8],
        command_timeout_ms: Option<f64>,
    ) -> Self {
        let make = |handle: &RegistryHandle| {
            ClientSessionHandle::new(
                &agent_id,
                handle,
                &authority_id,
                &key_id,
                seed,
                command_timeout_ms,
                Box::new(OsRandom),
            )
        };
        let made = match registry {
            Either::A(object) => object.0.as_ref().ok_or_else(|| freed("Registry")).map(make),
            Either::B(bytes) => Ok(make(&RegistryHandle::new(bytes))),
        };
        Self(made.map(Mutex::new))
    }

    /// `{"ok":null}`, or why the construction was refused.
    #[napi(catch_unwind)]
    pub fn status(&self) -> String {
        self.with(|s| s.status())
    }

    /// Queues `HELLO/client_init`.
    #[napi(catch_unwind)]
    pub fn start(&self, now: f64) -> String {
        self.with(|s| s.start(now))
    }

    /// `SUBSCRIBE`: `groups` is JSON `[{groupId, afterSequence, attention?}]`; the frame ID.
    #[napi(catch_unwind)]
    pub fn subscribe(&self, groups: String, now: f64) -> String {
        self.with(|s| s.subscribe(&groups, now))
    }

    /// A signed Command's exact bytes in a `COMMAND`: `{frameId, actionId}`.
    #[napi(catch_unwind)]
    pub fn send_command(&self, command: &[u8], now: f64) -> String {
        self.with(|s| s.send_command(command, now))
    }

    /// `ACK` of one Group's Cursor (at most its contiguous Cursor).
    #[napi(catch_unwind)]
    pub fn acknowledge(&self, group_id: String, sequence: f64, now: f64) -> String {
        self.with(|s| s.acknowledge(&group_id, sequence, now))
    }

    /// A `PING`, optionally with a Presence Record (JSON); its nonce.
    #[napi(catch_unwind)]
    pub fn ping(&self, presence: Option<String>, now: f64) -> String {
        self.with(|s| s.ping(presence.as_deref(), now))
    }

    /// Command timeouts.
    #[napi(catch_unwind)]
    pub fn on_tick(&self, now: f64) {
        if let Ok(mut session) = self.locked() {
            session.on_tick(now);
        }
    }

    /// A text frame from the server (Events are verified here); a frame out of place is a
    /// `ClientSessionError` (close and reconnect).
    #[napi(catch_unwind)]
    pub fn on_text(&self, data: &[u8], now: f64) -> String {
        self.with(|s| s.on_text(data, now))
    }

    /// The frames to send, in order (each frame is RFC 8785 text built by the session).
    #[napi(catch_unwind)]
    pub fn poll_output(&self) -> Vec<String> {
        self.locked()
            .map(|mut s| s.poll_output())
            .unwrap_or_default()
    }

    /// What happened, in order (`{"ok":[{kind, …}, …]}`).
    #[napi(catch_unwind)]
    pub fn poll_events(&self) -> String {
        self.with(ClientSessionHandle::poll_events)
    }

    /// A late member's `visibilityStartSequence` in `group_id`.
    #[napi(catch_unwind)]
    pub fn set_visibility_start(&self, group_id: String, start: f64) -> String {
        self.with(|s| s.set_visibility_start(&group_id, start))
    }

    /// Each subscribed Group's contiguous Cursor: `{"ok":{groupId: cursor}}`.
    #[napi(catch_unwind)]
    pub fn cursors(&self) -> String {
        self.with(ClientSessionHandle::cursors)
    }

    /// Events buffered out of order in `group_id`.
    #[napi(catch_unwind)]
    pub fn buffered(&self, group_id: String) -> u32 {
        self.locked().map_or(0, |s| s.buffered(&group_id))
    }

    /// Whether `server_accept` arrived.
    #[napi(catch_unwind)]
    pub fn is_authenticated(&self) -> bool {
        self.locked().is_ok_and(|s| s.is_authenticated())
    }

    /// The Session Epoch, once authenticated.
    #[napi(catch_unwind)]
    pub fn session_epoch(&self) -> Option<f64> {
        self.locked().ok()?.session_epoch()
    }

    /// Commands awaiting their outcome.
    #[napi(catch_unwind)]
    pub fn pending_commands(&self) -> u32 {
        self.locked().map_or(0, |s| s.pending_commands())
    }

    /// Drops the session (its key with it) now; idempotent.
    #[napi(catch_unwind)]
    pub fn free(&mut self) {
        self.0 = Err(freed("ClientSession"));
    }
}
