//! The sans-IO client session `missionweaveprotocol-gateway::client::Session` as envelopes, for
//! the `AgentClient` of the browser build (bindings/wasm `ClientSession`): conversions only.
//! The handshake, frame building, Event verification (six stages, Group Authority signer),
//! deduplication, Group ordering, ACK bounds and Command outcomes are the Rust session's; the
//! host moves bytes and time.
//!
//! Calls answer envelopes (`{"ok":…}` / `{"error":…}`). A refusal of the session is class
//! `ClientSessionError` with `reason` naming the `ClientError` variant (`not_authenticated`,
//! `ack_beyond_cursor`, …) and the session's own message. `poll_events` answers the
//! `SessionEvent`s in order, each `{kind, …}` (camelCase members); an Event's signed bytes cross
//! as its RFC 8785 text (`body`), an `error` as the wire `error` object (without `occurredAt`).
//! The same shapes as the napi addon's `ClientSession` (bindings/node/src/client_session.rs).

use std::sync::Arc;

use missionweaveprotocol::crypto::{Signer, SigningKey};
use missionweaveprotocol::json::{self, Number, Value};
use missionweaveprotocol::{Principal, PrincipalType};
use missionweaveprotocol_gateway::client::{ClientConfig, ClientError, Session, SessionEvent};
use missionweaveprotocol_gateway::frames::{Attention, ErrorBody, SubscribeGroup};
use missionweaveprotocol_kernel::random::RandomSource;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

use crate::{Failure, Obj, RegistryHandle, finish, freed};

/// The session's refusal as an envelope: class `ClientSessionError`, `reason` the variant.
pub fn client_error(error: &ClientError) -> String {
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

/// JavaScript time (milliseconds, a double) as the session's clock.
pub fn millis(now: f64) -> UnixMillis {
    #[allow(clippy::cast_possible_truncation)]
    UnixMillis(now as i64)
}

/// A JavaScript number that must be a non-negative integer.
fn whole(value: f64, what: &str) -> Result<u64, String> {
    if value.is_finite() && value >= 0.0 && value.fract() == 0.0 {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        Ok(value as u64)
    } else {
        Err(invalid(format!("{what} must be a non-negative integer")))
    }
}

fn num(n: u64) -> Value {
    Value::Number(Number::from_u64(n))
}

fn error_value(body: &ErrorBody) -> Value {
    let mut object = body.to_object("1970-01-01T00:00:00Z");
    object.remove("occurredAt");
    Value::Object(object)
}

/// One `SessionEvent` as `{kind, …}`.
pub fn event_value(event: SessionEvent) -> Value {
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

/// `SUBSCRIBE` entries from JSON `[{groupId, afterSequence, attention?}]`.
pub fn subscribe_groups(groups: &str) -> Result<Vec<SubscribeGroup>, String> {
    let Value::Array(items) = parse(groups)? else {
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
        .collect()
}

/// One connection's client session, or the envelope of why it could not be made (or was freed).
#[derive(Debug)]
pub struct ClientSessionHandle(Result<Session, String>);

impl ClientSessionHandle {
    /// `registry`: the Organization Registry every Event is verified against; `authority_id`:
    /// the Group Authority service whose key must sign every Event; `key_id` and `seed`: the
    /// Agent's signing key (it signs the HELLO challenge); `command_timeout_ms`: absent keeps
    /// the session's default; `random`: the host's randomness (frame IDs, the HELLO nonce).
    pub fn new(
        agent_id: &str,
        registry: &RegistryHandle,
        authority_id: &str,
        key_id: &str,
        seed: &[u8],
        command_timeout_ms: Option<f64>,
        random: Box<dyn RandomSource>,
    ) -> Self {
        let made = (|| {
            let snapshot = registry
                .resolver()
                .snapshot()
                .map(Clone::clone)
                .map_err(|e| finish(Err(Failure::error(e))))?;
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
            Session::new(config, signer, random).map_err(|e| client_error(&e))
        })();
        Self(made)
    }

    fn with(&mut self, call: impl FnOnce(&mut Session) -> String) -> String {
        match &mut self.0 {
            Ok(session) => call(session),
            Err(envelope) => envelope.clone(),
        }
    }

    fn unit(result: Result<(), ClientError>) -> String {
        match result {
            Ok(()) => ok(Value::Null),
            Err(e) => client_error(&e),
        }
    }

    /// `{"ok":null}`, or why the construction was refused.
    pub fn status(&self) -> String {
        match &self.0 {
            Ok(_) => ok(Value::Null),
            Err(envelope) => envelope.clone(),
        }
    }

    /// Queues `HELLO/client_init`.
    pub fn start(&mut self, now: f64) -> String {
        self.with(|s| Self::unit(s.start(millis(now))))
    }

    /// `SUBSCRIBE`: `groups` is JSON `[{groupId, afterSequence, attention?}]`; the frame ID.
    pub fn subscribe(&mut self, groups: &str, now: f64) -> String {
        let entries = match subscribe_groups(groups) {
            Ok(entries) => entries,
            Err(envelope) => return envelope,
        };
        self.with(|s| match s.subscribe(&entries, millis(now)) {
            Ok(frame_id) => ok(Value::string(frame_id)),
            Err(e) => client_error(&e),
        })
    }

    /// A signed Command's exact bytes in a `COMMAND`: `{frameId, actionId}`.
    pub fn send_command(&mut self, command: &[u8], now: f64) -> String {
        self.with(|s| match s.send_command(command, millis(now)) {
            Ok(ticket) => ok(Obj::new()
                .str("frameId", ticket.frame_id)
                .str("actionId", ticket.action_id)
                .build()),
            Err(e) => client_error(&e),
        })
    }

    /// `ACK` of one Group's Cursor (at most its contiguous Cursor).
    pub fn acknowledge(&mut self, group_id: &str, sequence: f64, now: f64) -> String {
        let sequence = match whole(sequence, "sequence") {
            Ok(sequence) => sequence,
            Err(envelope) => return envelope,
        };
        self.with(|s| Self::unit(s.acknowledge(&[(group_id, sequence)], millis(now))))
    }

    /// A `PING`, optionally with a Presence Record (JSON); its nonce.
    pub fn ping(&mut self, presence: Option<&str>, now: f64) -> String {
        let presence = match presence.map(parse).transpose() {
            Ok(presence) => presence,
            Err(envelope) => return envelope,
        };
        self.with(|s| match s.ping(presence.as_ref(), millis(now)) {
            Ok(nonce) => ok(Value::string(nonce)),
            Err(e) => client_error(&e),
        })
    }

    /// Command timeouts.
    pub fn on_tick(&mut self, now: f64) {
        if let Ok(session) = &mut self.0 {
            session.on_tick(millis(now));
        }
    }

    /// A text frame from the server (Events are verified here); a frame out of place is a
    /// `ClientSessionError` (close and reconnect).
    pub fn on_text(&mut self, data: &[u8], now: f64) -> String {
        self.with(|s| Self::unit(s.on_text(data, millis(now))))
    }

    /// The frames to send, in order (each RFC 8785 text built by the session).
    pub fn poll_output(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        if let Ok(session) = &mut self.0 {
            while let Some(frame) = session.poll_output() {
                out.push(String::from_utf8_lossy(&frame).into_owned());
            }
        }
        out
    }

    /// What happened, in order (`{"ok":[{kind, …}, …]}`).
    pub fn poll_events(&mut self) -> String {
        self.with(|s| {
            let mut events = Vec::new();
            while let Some(event) = s.poll_event() {
                events.push(event_value(event));
            }
            ok(Value::Array(events))
        })
    }

    /// A late member's `visibilityStartSequence` in `group_id`.
    pub fn set_visibility_start(&mut self, group_id: &str, start: f64) -> String {
        let start = match whole(start, "start") {
            Ok(start) => start,
            Err(envelope) => return envelope,
        };
        self.with(|s| Self::unit(s.set_visibility_start(group_id, start)))
    }

    /// Each subscribed Group's contiguous Cursor: `{"ok":{groupId: cursor}}`.
    pub fn cursors(&mut self) -> String {
        self.with(|s| {
            let mut object = json::Object::new();
            for (group, cursor) in s.cursors() {
                object.insert(&group, num(cursor));
            }
            ok(Value::Object(object))
        })
    }

    /// Events buffered out of order in `group_id`.
    pub fn buffered(&self, group_id: &str) -> u32 {
        self.0.as_ref().map_or(0, |s| {
            u32::try_from(s.buffered(group_id)).unwrap_or(u32::MAX)
        })
    }

    /// Whether `server_accept` arrived.
    pub fn is_authenticated(&self) -> bool {
        self.0.as_ref().is_ok_and(Session::is_authenticated)
    }

    /// The Session Epoch, once authenticated.
    #[allow(clippy::cast_precision_loss)]
    pub fn session_epoch(&self) -> Option<f64> {
        self.0.as_ref().ok()?.session_epoch().map(|e| e as f64)
    }

    /// Commands awaiting their outcome.
    pub fn pending_commands(&self) -> u32 {
        self.0.as_ref().map_or(0, |s| {
            u32::try_from(s.pending_commands()).unwrap_or(u32::MAX)
        })
    }

    /// Drops the session (its key with it) now; idempotent.
    pub fn free(&mut self) {
        self.0 = Err(freed("ClientSession"));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use missionweaveprotocol::json::parse;
    use missionweaveprotocol::registry::RegistryBuilder;
    use missionweaveprotocol_kernel::random::RandomUnavailable;

    use super::*;

    const AGENT: &str = "urn:missionweaveprotocol:agent:a";
    const AUTHORITY: &str = "urn:missionweaveprotocol:service:authority";
    const KEY: &str = "urn:missionweaveprotocol:key:a";

    fn registry() -> RegistryHandle {
        let key = SigningKey::from_seed(KEY, &[7; 32]);
        let mut builder = RegistryBuilder::new("urn:missionweaveprotocol:organization:acme");
        builder
            .add_key(
                key.key_id(),
                Principal::new(PrincipalType::Agent, AGENT),
                &key.public_key_bytes(),
                "2026-01-01T00:00:00Z",
            )
            .unwrap();
        RegistryHandle::new(&builder.build().unwrap().0)
    }

    /// Deterministic bytes: frame IDs and the HELLO nonce draw from it.
    #[derive(Debug)]
    struct Counter(u8);

    impl RandomSource for Counter {
        fn fill(&mut self, out: &mut [u8]) -> Result<(), RandomUnavailable> {
            for byte in out {
                self.0 = self.0.wrapping_add(1);
                *byte = self.0;
            }
            Ok(())
        }
    }

    fn session(seed: &[u8]) -> ClientSessionHandle {
        ClientSessionHandle::new(
            AGENT,
            &registry(),
            AUTHORITY,
            KEY,
            seed,
            None,
            Box::new(Counter(0)),
        )
    }

    fn error_of(envelope: &str) -> Value {
        parse(envelope.as_bytes())
            .unwrap()
            .get("error")
            .cloned()
            .expect("an error envelope")
    }

    fn member<'a>(value: &'a Value, name: &str) -> &'a str {
        value.get(name).and_then(Value::as_str).unwrap()
    }

    #[test]
    fn start_queues_a_hello_and_subscribe_waits_for_authentication() {
        let mut s = session(&[7; 32]);
        assert_eq!(s.status(), r#"{"ok":null}"#);
        assert_eq!(s.start(1.0), r#"{"ok":null}"#);
        let frames = s.poll_output();
        assert_eq!(frames.len(), 1);
        let hello = parse(frames[0].as_bytes()).unwrap();
        assert_eq!(member(&hello, "frameType"), "HELLO");
        // Before server_accept: a SUBSCRIBE is held (its frame ID answered, nothing sent yet);
        // a Command or an ACK is the session's refusal, typed.
        let held = parse(
            s.subscribe(r#"[{"groupId":"urn:g","afterSequence":0}]"#, 2.0)
                .as_bytes(),
        )
        .unwrap();
        assert!(held.get("ok").and_then(Value::as_str).is_some());
        assert!(s.poll_output().is_empty());
        let refused = error_of(&s.send_command(br#"{"actionId":"urn:uuid:x"}"#, 2.0));
        assert_eq!(member(&refused, "class"), "ClientSessionError");
        assert_eq!(member(&refused, "reason"), "not_authenticated");
        let refused = error_of(&s.acknowledge("urn:g", 1.0, 2.0));
        assert_eq!(member(&refused, "reason"), "not_authenticated");
        assert_eq!(
            member(&error_of(&s.start(3.0)), "reason"),
            "already_started"
        );
        assert!(!s.is_authenticated());
        assert_eq!(s.session_epoch(), None);
        assert_eq!(s.poll_events(), r#"{"ok":[]}"#);
    }

    #[test]
    fn bad_arguments_are_argument_errors_and_a_freed_session_refuses() {
        let bad_seed = session(&[7; 31]);
        assert!(
            bad_seed
                .status()
                .contains("the signing seed must be 32 bytes")
        );
        let mut s = session(&[7; 32]);
        for envelope in [
            s.subscribe("{}", 1.0),
            s.subscribe(r#"[{"groupId":"urn:g","afterSequence":-1}]"#, 1.0),
            s.acknowledge("urn:g", 1.5, 1.0),
            s.set_visibility_start("urn:g", -1.0),
            s.ping(Some("{"), 1.0),
        ] {
            let error = error_of(&envelope);
            assert_ne!(member(&error, "class"), "ClientSessionError", "{envelope}");
        }
        // A frame out of place (an Event before HELLO completes) is the session's refusal.
        let refused = error_of(&s.on_text(br#"{"frameType":"PONG"}"#, 1.0));
        assert_eq!(member(&refused, "class"), "ClientSessionError");
        s.free();
        assert!(s.status().contains("ClientSession"));
        assert!(s.poll_output().is_empty());
        assert!(!s.is_authenticated());
    }
}
