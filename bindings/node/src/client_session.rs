//! The sans-IO client session `missionweaveprotocol-gateway::client::Session` for the
//! package's `AgentClient` (`js/src/api/client.mjs`): conversions only. The handshake, frame
//! building, Event verification (six stages, Group Authority signer), deduplication, Group
//! ordering, ACK bounds and Command outcomes are the Rust session's; the Node host moves bytes
//! and time.
//!
//! Calls answer envelopes (`{"ok":…}` / `{"error":…}`) as everywhere in this addon. A refusal
//! of the session is class `ClientSessionError` with `reason` naming the `ClientError` variant
//! (`not_authenticated`, `ack_beyond_cursor`, …) and the session's own message. `pollEvents`
//! answers the `SessionEvent`s in order, each `{kind, …}` (camelCase members); an Event's
//! signed bytes cross as its RFC 8785 text (`body`), an `error` as the wire `error` object
//! (without `occurredAt`).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use missionweaveprotocol::crypto::{Signer, SigningKey};
use missionweaveprotocol::json::{self, Number, Value};
use missionweaveprotocol::{Principal, PrincipalType};
use missionweaveprotocol_ffi::{Failure, Obj, finish};
use missionweaveprotocol_gateway::client::{ClientConfig, ClientError, Session, SessionEvent};
use missionweaveprotocol_gateway::frames::{Attention, ErrorBody, SubscribeGroup};
use missionweaveprotocol_host::OsRandom;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use napi_derive::napi;

use missionweaveprotocol_ffi::RegistryHandle;
use napi::bindgen_prelude::Either;

use crate::{RegistryArg, freed};

/// The session's refusal as an envelope: class `ClientSessionError`, `reason` the variant.
fn client_error(error: &ClientError) -> String {
    let kind = match error {
        ClientError::RandomUnavailable => "random_unavailable",
        ClientError::AlreadyStarted => "already_started",
        ClientError::NotAuthenticated => "not_authenticated",
        ClientError::Frame(_) => "frame",
        ClientError::Protocol(_) => "protocol",
        ClientError::NotACommand => "not_a_command",
        ClientError::TooManyPendingCommands => "too_many_pending_commands",
        ClientError::AckBeyondCursor { .. } => "ack_beyond_cursor",
        ClientError::UnknownGroup(_) => "unknown_group",
    };
    let body = Obj::new()
        .str("class", "ClientSessionError")
        .str("code", "PROTOCOL_VIOLATION")
        .str("reason", kind)
        .str("message", error.to_string())
        .bool("retryable", false)
        .build();
    format!(r#"{{"error":{}}}"#, json_text(&body))
}

fn json_text(value: &Value) -> String {
    json::canonical_bytes(value)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .unwrap_or_else(|| "null".to_owned())
}

fn ok(value: Value) -> String {
    finish(Ok(value))
}

fn invalid(detail: impl Into<String>) -> String {
    finish(Err(Failure::argument(detail)))
}

fn millis(now: f64) -> UnixMillis {
    #[allow(clippy::cast_possible_truncation)]
    UnixMillis(now as i64)
}

fn num(n: u64) -> Value {
    Value::Number(Number::from_u64(n))
}

fn error_value(body: &ErrorBody) -> Value {
    let mut object = body.to_object("1970-01-01T00:00:00Z");
    object.remove("occurredAt");
    Value::Object(object)
}

fn event_value(event: SessionEvent) -> Value {
    match event {
        SessionEvent::Authenticated {
            session_epoch,
            session_token: _,
            expires_at,
        } => Obj::new()
            .str("kind", "authenticated")
            .num("sessionEpoch", session_epoch)
            .str("expiresAt", expires_at)
            .build(),
        SessionEvent::HandshakeFailed(body) => Obj::new()
            .str("kind", "handshake_failed")
            .value("error", error_value(&body))
            .build(),
        SessionEvent::Event(event) => Obj::new()
            .str("kind", "event")
            .value("groupId", event.group_id.map_or(Value::Null, Value::string))
            .num("sequence", event.sequence)
            .str("eventId", event.event_id)
            .str("body", String::from_utf8_lossy(&event.bytes).into_owned())
            .bool("inOrder", event.in_order)
            .build(),
        SessionEvent::CommandAccepted {
            ticket,
            event_id,
            group_id,
            sequence,
        } => Obj::new()
            .str("kind", "command_accepted")
            .str("frameId", ticket.frame_id)
            .str("actionId", ticket.action_id)
            .str("eventId", event_id)
            .value("groupId", group_id.map_or(Value::Null, Value::string))
            .num("sequence", sequence)
            .build(),
        SessionEvent::CommandRefused { ticket, error } => Obj::new()
            .str("kind", "command_refused")
            .str("frameId", ticket.frame_id)
            .str("actionId", ticket.action_id)
            .value("error", error_value(&error))
            .build(),
        SessionEvent::CommandTimedOut(ticket) => Obj::new()
            .str("kind", "command_timed_out")
            .str("frameId", ticket.frame_id)
            .str("actionId", ticket.action_id)
            .build(),
        SessionEvent::CursorTooOld {
            group_id,
            snapshot_artifact_hash,
        } => Obj::new()
            .str("kind", "cursor_too_old")
            .str("groupId", group_id)
            .opt_str("snapshotArtifactHash", snapshot_artifact_hash)
            .build(),
        SessionEvent::Gap { group_id, cursor } => Obj::new()
            .str("kind", "gap")
            .str("groupId", group_id)
            .num("cursor", cursor)
            .build(),
        SessionEvent::Rejected { event_id, reason } => Obj::new()
            .str("kind", "rejected")
            .opt_str("eventId", event_id)
            .str("reason", reason)
            .build(),
        SessionEvent::Error(body) => Obj::new()
            .str("kind", "error")
            .value("error", error_value(&body))
            .build(),
        SessionEvent::Pong { nonce } => Obj::new().str("kind", "pong").str("nonce", nonce).build(),
    }
}

/// A JSON argument (strict parse).
fn parse(text: &str) -> Result<Value, String> {
    json::parse(text.as_bytes()).map_err(|e| finish(Err(Failure::error(&e))))
}

/// A JSON number that must be a non-negative safe integer.
fn count(value: Option<&Value>, what: &str) -> Result<u64, String> {
    value
        .and_then(Value::as_number)
        .and_then(Number::as_u64)
        .ok_or_else(|| invalid(format!("{what} must be a non-negative integer")))
}

fn text<'a>(value: Option<&'a Value>, what: &str) -> Result<&'a str, String> {
    value
        .and_then(Value::as_str)
        .ok_or_else(|| invalid(format!("{what} must be a string")))
}

/// One connection's client session. The constructor never throws: `status()` is the envelope
/// of the construction.
#[napi]
#[derive(Debug)]
pub struct ClientSession(Result<Mutex<Session>, String>);

impl ClientSession {
    fn with(&self, call: impl FnOnce(&mut Session) -> String) -> String {
        match &self.0 {
            Ok(session) => call(&mut session.lock().unwrap_or_else(PoisonError::into_inner)),
            Err(envelope) => envelope.clone(),
        }
    }

    fn locked(&self) -> Option<MutexGuard<'_, Session>> {
        self.0
            .as_ref()
            .ok()
            .map(|s| s.lock().unwrap_or_else(PoisonError::into_inner))
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
        let snapshot = |handle: &RegistryHandle| {
            handle
                .resolver()
                .snapshot()
                .map(Clone::clone)
                .map_err(|e| finish(Err(Failure::error(e))))
        };
        let made = (|| {
            let snapshot = match registry {
                Either::A(object) => object
                    .0
                    .as_ref()
                    .ok_or_else(|| freed("Registry"))
                    .and_then(snapshot)?,
                Either::B(bytes) => snapshot(&RegistryHandle::new(bytes))?,
            };
            let seed: &[u8; 32] = seed
                .try_into()
                .map_err(|_| invalid("the signing seed must be 32 bytes"))?;
            let signer: Arc<dyn Signer + Send + Sync> =
                Arc::new(SigningKey::from_seed(key_id, seed));
            let mut config = ClientConfig::new(
                agent_id,
                snapshot,
                Principal::new(PrincipalType::Service, authority_id),
            );
            if let Some(timeout) = command_timeout_ms {
                if !(timeout.is_finite() && timeout >= 1.0) {
                    return Err(invalid("commandTimeoutMs must be a positive number"));
                }
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                {
                    config.command_timeout_ms = timeout as u64;
                }
            }
            Session::new(config, signer, Box::new(OsRandom)).map_err(|e| client_error(&e))
        })();
        Self(made.map(Mutex::new))
    }

    /// `{"ok":null}`, or why the construction was refused.
    #[napi(catch_unwind)]
    pub fn status(&self) -> String {
        match &self.0 {
            Ok(_) => ok(Value::Null),
            Err(envelope) => envelope.clone(),
        }
    }

    /// Queues `HELLO/client_init`.
    #[napi(catch_unwind)]
    pub fn start(&self, now: f64) -> String {
        self.with(|s| match s.start(millis(now)) {
            Ok(()) => ok(Value::Null),
            Err(e) => client_error(&e),
        })
    }

    /// `SUBSCRIBE`: `groups` is JSON `[{groupId, afterSequence, attention?}]`; the frame ID.
    #[napi(catch_unwind)]
    pub fn subscribe(&self, groups: String, now: f64) -> String {
        let entries = (|| {
            let Value::Array(items) = parse(&groups)? else {
                return Err(invalid("groups must be an array"));
            };
            items
                .iter()
                .map(|item| {
                    Ok(SubscribeGroup {
                        group_id: text(item.get("groupId"), "groupId")?.to_owned(),
                        after_sequence: count(item.get("afterSequence"), "afterSequence")?,
                        attention: match item.get("attention") {
                            None | Some(Value::Null) => None,
                            Some(value) => Some(Attention::from_value(value)),
                        },
                    })
                })
                .collect::<Result<Vec<_>, String>>()
        })();
        let entries = match entries {
            Ok(entries) => entries,
            Err(envelope) => return envelope,
        };
        self.with(|s| match s.subscribe(&entries, millis(now)) {
            Ok(frame_id) => ok(Value::string(frame_id)),
            Err(e) => client_error(&e),
        })
    }

    /// A signed Command's exact bytes in a `COMMAND`: `{frameId, actionId}`.
    #[napi(catch_unwind)]
    pub fn send_command(&self, command: &[u8], now: f64) -> String {
        self.with(|s| match s.send_command(command, millis(now)) {
            Ok(ticket) => ok(Obj::new()
                .str("frameId", ticket.frame_id)
                .str("actionId", ticket.action_id)
                .build()),
            Err(e) => client_error(&e),
        })
    }

    /// `ACK` of one Group's Cursor (at most its contiguous Cursor).
    #[napi(catch_unwind)]
    pub fn acknowledge(&self, group_id: String, sequence: f64, now: f64) -> String {
        if !(sequence.is_finite() && sequence >= 0.0 && sequence.fract() == 0.0) {
            return invalid("sequence must be a non-negative integer");
        }
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let sequence = sequence as u64;
        self.with(
            |s| match s.acknowledge(&[(group_id.as_str(), sequence)], millis(now)) {
                Ok(()) => ok(Value::Null),
                Err(e) => client_error(&e),
            },
        )
    }

    /// A `PING`, optionally with a Presence Record (JSON); its nonce.
    #[napi(catch_unwind)]
    pub fn ping(&self, presence: Option<String>, now: f64) -> String {
        let presence = match presence.as_deref().map(parse).transpose() {
            Ok(presence) => presence,
            Err(envelope) => return envelope,
        };
        self.with(|s| match s.ping(presence.as_ref(), millis(now)) {
            Ok(nonce) => ok(Value::string(nonce)),
            Err(e) => client_error(&e),
        })
    }

    /// Command timeouts.
    #[napi(catch_unwind)]
    pub fn on_tick(&self, now: f64) {
        if let Some(mut session) = self.locked() {
            session.on_tick(millis(now));
        }
    }

    /// A text frame from the server (Events are verified here); a frame out of place is a
    /// `ClientSessionError` (close and reconnect).
    #[napi(catch_unwind)]
    pub fn on_text(&self, data: &[u8], now: f64) -> String {
        self.with(|s| match s.on_text(data, millis(now)) {
            Ok(()) => ok(Value::Null),
            Err(e) => client_error(&e),
        })
    }

    /// The frames to send, in order, as one JSON array of their texts (each frame is RFC 8785
    /// text built by the session).
    #[napi(catch_unwind)]
    pub fn poll_output(&self) -> Vec<String> {
        let Some(mut session) = self.locked() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        while let Some(frame) = session.poll_output() {
            out.push(String::from_utf8_lossy(&frame).into_owned());
        }
        out
    }

    /// What happened, in order (`{"ok":[{kind, …}, …]}`).
    #[napi(catch_unwind)]
    pub fn poll_events(&self) -> String {
        self.with(|s| {
            let mut events = Vec::new();
            while let Some(event) = s.poll_event() {
                events.push(event_value(event));
            }
            ok(Value::Array(events))
        })
    }

    /// A late member's `visibilityStartSequence` in `group_id`.
    #[napi(catch_unwind)]
    pub fn set_visibility_start(&self, group_id: String, start: f64) -> String {
        if !(start.is_finite() && start >= 0.0 && start.fract() == 0.0) {
            return invalid("start must be a non-negative integer");
        }
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let start = start as u64;
        self.with(|s| match s.set_visibility_start(&group_id, start) {
            Ok(()) => ok(Value::Null),
            Err(e) => client_error(&e),
        })
    }

    /// Each subscribed Group's contiguous Cursor: `{"ok":{groupId: cursor}}`.
    #[napi(catch_unwind)]
    pub fn cursors(&self) -> String {
        self.with(|s| {
            let mut object = json::Object::new();
            for (group, cursor) in s.cursors() {
                object.insert(&group, num(cursor));
            }
            ok(Value::Object(object))
        })
    }

    /// Events buffered out of order in `group_id`.
    #[napi(catch_unwind)]
    pub fn buffered(&self, group_id: String) -> u32 {
        self.locked().map_or(0, |s| {
            u32::try_from(s.buffered(&group_id)).unwrap_or(u32::MAX)
        })
    }

    /// Whether `server_accept` arrived.
    #[napi(catch_unwind)]
    pub fn is_authenticated(&self) -> bool {
        self.locked().is_some_and(|s| s.is_authenticated())
    }

    /// The Session Epoch, once authenticated.
    #[napi(catch_unwind)]
    pub fn session_epoch(&self) -> Option<f64> {
        self.locked()?.session_epoch().map(|e| e as f64)
    }

    /// Commands awaiting their outcome.
    #[napi(catch_unwind)]
    pub fn pending_commands(&self) -> u32 {
        self.locked().map_or(0, |s| {
            u32::try_from(s.pending_commands()).unwrap_or(u32::MAX)
        })
    }

    /// Drops the session (its key with it) now; idempotent.
    #[napi(catch_unwind)]
    pub fn free(&mut self) {
        self.0 = Err(freed("ClientSession"));
    }
}
