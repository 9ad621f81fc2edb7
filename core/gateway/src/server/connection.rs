//! [`Connection`]: the per-WebSocket machine of the server (`docs/network.md`, "Connection
//! machine"; digest §2.10, §2.11). Sans-IO: the host feeds what the socket received (a text
//! frame's bytes, "a binary message", "closed"), the time (`now`, every call) and delivery
//! wake-ups (a Group's head moved); it takes back frames to write, at most one close, and
//! notifications of heads this connection's own Commands moved.
//!
//! ```text
//! Open ──HELLO/client_init──▶ Challenged ──HELLO/client_response──▶ Authenticated
//!   any other frame before: ERROR AUTH_REQUIRED (open; the handshake timeout closes, 1008)
//! Authenticated: SUBSCRIBE · COMMAND · ACK · PING, each refusal one ERROR, the socket open
//! framing violations (oversized 1009 · not UTF-8/JSON 1007 · binary 1003 · not a frame 1008):
//!   one ERROR (fatal), then Close
//! ```
//!
//! Calls that may read or write the store through the Core (every input, `on_tick`,
//! `on_group_moved`, and `poll_output` when a paused Group resumes) block on it: hosts run the
//! machine where blocking is allowed (`docs/store.md`).
//!
//! Bounded: see [`Limits::connection_memory_bound`](super::Limits::connection_memory_bound).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use missionweaveprotocol::json::{Document, ParseLimits, Value};
use missionweaveprotocol::schema_formats::is_protocol_id;
use missionweaveprotocol::wire::{self, Frame, FrameError, FrameType, ReceivedFrame};
use missionweaveprotocol::{Principal, WireCode};
use missionweaveprotocol_agent::auth::Handshake;
use missionweaveprotocol_kernel::random::{RandomSource, RandomUnavailable};
use missionweaveprotocol_kernel::unix_millis::{
    MAX_RFC3339_MILLIS, MIN_RFC3339_MILLIS, UnixMillis,
};

use super::Gateway;
use super::delivery::Subscription;
use super::errors;
use super::host_cursors::HostCursors;
use super::hub::ConnectionId;
use super::outbound::{Class, Outbound};
use crate::frames::{self, ErrorBody, FrameIds};

/// WebSocket close code 1003: a binary message (§17.1: binary messages carry no protocol
/// object in 0.1).
pub const CLOSE_UNSUPPORTED_DATA: u16 = 1003;
/// WebSocket close code 1007: a text message that is not UTF-8 or not JSON.
pub const CLOSE_INVALID_PAYLOAD: u16 = 1007;
/// WebSocket close code 1008: a policy violation (not a frame of the schema, the handshake
/// timeout, input fed past the outbound bound).
pub const CLOSE_POLICY: u16 = 1008;
/// WebSocket close code 1009: a frame over `Limits::max_frame_bytes`.
pub const CLOSE_TOO_BIG: u16 = 1009;

/// How the connection ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Close {
    /// The WebSocket close code.
    pub code: u16,
    /// The close reason (short, ASCII; the `ERROR` frame before it says more).
    pub reason: &'static str,
}

/// What the host does next for this connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Write this text frame.
    Frame(Vec<u8>),
    /// Close the WebSocket with this code, after the frames before it.
    Close(Close),
}

/// A Group's head moved because of a Command this connection performed: the host wakes the
/// other local subscribers (`Hub::wake_list`) and tells other processes (`NOTIFY`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMoved {
    /// The Group.
    pub group_id: String,
    /// Its new last sequence.
    pub sequence: u64,
}

/// Notifications kept for a host that does not take them: the oldest is dropped beyond this
/// (a dropped one only delays other subscribers until their head poll).
pub const MAX_NOTIFICATIONS: usize = 256;

/// The authenticated session of a connection.
#[derive(Debug, Clone)]
pub(super) struct Session {
    /// The authenticated principal: an Agent, or a human (docs/network.md "Human sessions").
    pub principal: Principal,
    pub key_id: String,
    pub epoch: u64,
}

/// The server's machine for one WebSocket.
#[derive(Debug)]
pub struct Connection {
    pub(super) gateway: Arc<Gateway>,
    pub(super) id: ConnectionId,
    pub(super) ids: FrameIds,
    pub(super) random: Box<dyn RandomSource>,
    pub(super) opened_at: UnixMillis,
    pub(super) handshake: Handshake,
    pub(super) hello_attempts: u32,
    pub(super) session: Option<Session>,
    pub(super) subscriptions: HashMap<Arc<str>, Subscription>,
    /// The attention-filter cost of all subscriptions (`Limits::max_attention_bytes`).
    pub(super) attention_bytes: usize,
    /// Groups waiting for the queue to drain, oldest first (resumed round-robin).
    pub(super) blocked: VecDeque<Arc<str>>,
    pub(super) outbound: Outbound,
    pub(super) notifications: VecDeque<GroupMoved>,
    pub(super) presence: Option<Vec<u8>>,
    /// The `SUBSCRIBE` frame being handled: delivery errors while it subscribes answer it.
    pub(super) relating: Option<String>,
    pub(super) closing: Option<Close>,
    pub(super) closed: bool,
    pub(super) released: bool,
    /// Inside [`Connection::in_memory`]: reads the Core would do from its store are not done.
    pub(super) memory_only: bool,
    /// The Groups whose delivery stopped for a store read in memory-only mode, each once
    /// (at most one entry per subscription), for [`Connection::finish_io`]; `true` when the
    /// Group's head itself must be read (a wake-up without its sequence).
    pub(super) io_pending: Vec<(Arc<str>, bool)>,
    /// The host's durable Cursors (`host_cursors.rs`): a held SUBSCRIBE, reports of ACKs.
    pub(super) host_cursors: HostCursors,
}

/// `now` as a §2 timestamp (clamped into years 0001–9999, which `now` never leaves in
/// practice: a timestamp must always be writable).
pub(super) fn timestamp(now: UnixMillis) -> String {
    let clamped = UnixMillis(now.0.clamp(MIN_RFC3339_MILLIS, MAX_RFC3339_MILLIS));
    clamped.to_rfc3339().unwrap_or_default()
}

impl Gateway {
    /// A connection machine for a newly accepted WebSocket, drawing frame IDs and nonces from
    /// `random` (the host's source).
    pub fn connect(
        self: &Arc<Self>,
        now: UnixMillis,
        random: Box<dyn RandomSource>,
    ) -> Result<Connection, RandomUnavailable> {
        Connection::new(Arc::clone(self), now, random)
    }
}

impl Connection {
    /// A connection of `gateway` opened at `now`.
    pub fn new(
        gateway: Arc<Gateway>,
        now: UnixMillis,
        mut random: Box<dyn RandomSource>,
    ) -> Result<Self, RandomUnavailable> {
        let ids = FrameIds::new(&mut *random)?;
        let id = gateway.hub().register();
        Ok(Self {
            gateway,
            id,
            ids,
            random,
            opened_at: now,
            handshake: Handshake::Open,
            hello_attempts: 0,
            session: None,
            subscriptions: HashMap::new(),
            attention_bytes: 0,
            blocked: VecDeque::new(),
            outbound: Outbound::default(),
            notifications: VecDeque::new(),
            presence: None,
            relating: None,
            closing: None,
            closed: false,
            released: false,
            memory_only: false,
            io_pending: Vec::new(),
            host_cursors: HostCursors::default(),
        })
    }

    /// This connection's ID in the gateway's hub.
    pub fn id(&self) -> ConnectionId {
        self.id
    }

    /// The authenticated Agent, once `server_accept` was sent.
    pub fn agent_id(&self) -> Option<&str> {
        self.session.as_ref().map(|s| s.principal.id.as_str())
    }

    /// The Session Epoch of the authenticated session.
    pub fn session_epoch(&self) -> Option<u64> {
        self.session.as_ref().map(|s| s.epoch)
    }

    /// The Groups this connection subscribes to.
    pub fn subscribed_groups(&self) -> impl Iterator<Item = &str> {
        self.subscriptions.keys().map(|g| &**g)
    }

    /// Whether `group` is subscribed and its delivery paused by `BACKPRESSURE`.
    pub fn is_paused(&self, group: &str) -> bool {
        self.subscriptions
            .get(group)
            .is_some_and(Subscription::is_paused)
    }

    /// How many subscribed Groups are paused by `BACKPRESSURE` (one pass over the
    /// subscriptions, no lookups: the server reads it after every step for `/metrics`).
    pub fn paused_groups(&self) -> usize {
        self.subscriptions
            .values()
            .filter(|s| s.is_paused())
            .count()
    }

    /// How many Groups are subscribed.
    pub fn subscription_count(&self) -> usize {
        self.subscriptions.len()
    }

    /// Frames waiting for the host.
    pub fn queued_frames(&self) -> usize {
        self.outbound.len()
    }

    /// Bytes of the frames waiting for the host.
    pub fn queued_bytes(&self) -> usize {
        self.outbound.data_bytes + self.outbound.reply_bytes
    }

    /// The latest Presence Record of a `PING` (§6.2: ephemeral, never in the log).
    pub fn presence(&self) -> Option<Value> {
        self.presence
            .as_ref()
            .and_then(|bytes| missionweaveprotocol::json::parse(bytes).ok())
    }

    /// Whether the host should read the next message from the socket: false while the reply
    /// queue is at its bound (the peer sends faster than it reads) and once closing. A frame fed
    /// anyway closes the connection (1008) rather than growing the queue.
    pub fn wants_input(&self) -> bool {
        let limits = self.gateway.limits();
        !self.closed
            && self.closing.is_none()
            && self.outbound.reply_frames < limits.max_reply_frames
            && self.outbound.reply_bytes < limits.max_reply_bytes
    }

    /// Whether the connection is closed (its `Close` was taken, or the peer closed).
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    // ---- inputs ---------------------------------------------------------------------------

    /// A text message arrived.
    pub fn on_text(&mut self, bytes: &[u8], now: UnixMillis) {
        if self.closed || self.closing.is_some() {
            return;
        }
        self.settle_parked(now);
        if !self.wants_input() {
            let mut body = ErrorBody::new(
                WireCode::Backpressure,
                "the peer kept sending while its replies were not read",
            );
            body.retry_after_ms = Some(self.gateway.limits().backpressure_retry_after_ms);
            return self.fatal(body, CLOSE_POLICY, "outbound queue overflow", now);
        }
        if bytes.len() > self.gateway.limits().max_frame_bytes {
            return self.on_too_big(now);
        }
        if core::str::from_utf8(bytes).is_err() {
            let body = errors::violation("a text frame must be UTF-8");
            return self.fatal(body, CLOSE_INVALID_PAYLOAD, "not UTF-8", now);
        }
        match wire::parse_received_frame(bytes) {
            Ok(ReceivedFrame::Command(command)) => self.on_command(command, now),
            Ok(ReceivedFrame::Other(frame)) => self.on_frame(&frame, now),
            Err(error) => self.on_bad_frame(bytes, &error, now),
        }
    }

    /// A message over `Limits::max_frame_bytes` arrived that the host's WebSocket library
    /// refused before reading it (its message limit is `max_frame_bytes`): the same `ERROR`
    /// (fatal) and close 1009 as an oversized frame fed to [`on_text`](Self::on_text).
    pub fn on_too_big(&mut self, now: UnixMillis) {
        if self.closed || self.closing.is_some() {
            return;
        }
        let max = self.gateway.limits().max_frame_bytes;
        let body = errors::violation(&format!("a frame may hold at most {max} bytes"));
        self.fatal(body, CLOSE_TOO_BIG, "frame too large", now);
    }

    /// A binary message arrived (§17.1: "Binary WebSocket messages MUST NOT carry
    /// MissionWeaveProtocol objects"): one `ERROR`, then close 1003.
    pub fn on_binary(&mut self, now: UnixMillis) {
        if self.closed || self.closing.is_some() {
            return;
        }
        let body = errors::violation("binary messages carry no protocol object (§17.1)");
        self.fatal(body, CLOSE_UNSUPPORTED_DATA, "binary message", now);
    }

    /// The peer closed the socket (or the host gave up on it): everything is released.
    pub fn on_closed(&mut self) {
        self.closed = true;
        self.outbound.clear();
        self.release();
    }

    /// Time passed: the handshake timeout, and the periodic head poll of subscriptions.
    pub fn on_tick(&mut self, now: UnixMillis) {
        if self.closed || self.closing.is_some() {
            return;
        }
        if self.session.is_none() {
            let timeout = self.gateway.limits().handshake_timeout_ms;
            if now >= self.opened_at.saturating_add_ms(timeout) {
                let body = ErrorBody::new(
                    WireCode::AuthRequired,
                    "the handshake did not complete in time",
                );
                self.fatal(body, CLOSE_POLICY, "handshake timeout", now);
            }
            return;
        }
        self.poll_heads(now);
    }

    /// A Group's head moved (a local commit, or a `NOTIFY` from another process):
    /// `sequence` is its new last sequence when known, otherwise the Core is asked.
    pub fn on_group_moved(&mut self, group: &str, sequence: Option<u64>, now: UnixMillis) {
        if self.closed || self.closing.is_some() {
            return;
        }
        let Some(group) = self
            .subscriptions
            .get_key_value(group)
            .map(|(g, _)| Arc::clone(g))
        else {
            return;
        };
        match sequence {
            Some(sequence) => self.wake(&group, sequence, now),
            None if self.memory_only => self.wait_for_io(&group, true),
            None => self.read_head_and_wake(&group, now),
        }
    }

    /// Reads `group`'s head from the store (recording it for the other connections' polls)
    /// and delivers up to it.
    pub(super) fn read_head_and_wake(&mut self, group: &Arc<str>, now: UnixMillis) {
        match self.gateway.core().head(group) {
            Ok(head) => {
                self.gateway.polled_heads().record(group, head, now);
                self.wake(group, head, now);
            }
            Err(error) => self.reply_error(errors::core_error(&error, Some(group)), now),
        }
    }

    // ---- outputs --------------------------------------------------------------------------

    /// The next thing to do: a frame to write, then (once) the close. Taking an `EVENT` frame
    /// gives its Group's share back; a paused Group resumes (reading the Core) once the queue
    /// is below its low-water mark.
    pub fn poll_output(&mut self, now: UnixMillis) -> Option<Output> {
        if self.closed {
            return None;
        }
        if let Some(queued) = self.outbound.pop() {
            if let Class::Data(group) = &queued.class {
                self.delivered(group, queued.bytes.len());
            }
            if self.closing.is_none() {
                self.resume(now);
            }
            return Some(Output::Frame(queued.bytes));
        }
        let close = self.closing.take()?;
        self.closed = true;
        self.release();
        Some(Output::Close(close))
    }

    /// Runs `work` (wake-ups, taking outputs) without store reads: delivery the Event tail and
    /// the known Agent views can serve happens; where a store read is needed the Group waits,
    /// and the answer is `false` — the host then calls [`finish_io`](Self::finish_io) from a
    /// context that may block. Lets a host deliver live Events on its event loop and keep
    /// blocking threads for what needs the store (`docs/network.md`, "The server").
    pub fn in_memory<T>(&mut self, work: impl FnOnce(&mut Self) -> T) -> (T, bool) {
        self.memory_only = true;
        let result = work(self);
        self.memory_only = false;
        (result, self.io_pending.is_empty())
    }

    /// Whether Groups wait for a store read ([`in_memory`](Self::in_memory) answered `false`).
    pub fn needs_io(&self) -> bool {
        !self.io_pending.is_empty()
    }

    /// Goes on with the delivery [`in_memory`](Self::in_memory) left for a store read (may
    /// block on the store).
    pub fn finish_io(&mut self, now: UnixMillis) {
        for (group, read_head) in std::mem::take(&mut self.io_pending) {
            if read_head {
                self.on_group_moved(&group, None, now);
            } else if let Some(head) = self.subscriptions.get(&group).map(|s| s.known_head()) {
                self.wake(&group, head, now);
            }
        }
    }

    /// Records that `group` waits for a store read (memory-only mode).
    pub(super) fn wait_for_io(&mut self, group: &Arc<str>, read_head: bool) {
        match self.io_pending.iter_mut().find(|(g, _)| g == group) {
            Some((_, pending)) => *pending |= read_head,
            None => self.io_pending.push((Arc::clone(group), read_head)),
        }
    }

    /// The next head this connection's own Commands moved.
    pub fn poll_notification(&mut self) -> Option<GroupMoved> {
        self.notifications.pop_front()
    }

    // ---- helpers shared by the frame handlers ---------------------------------------------

    pub(super) fn reply(&mut self, bytes: Vec<u8>) {
        self.outbound.push_reply(bytes);
    }

    pub(super) fn notify(&mut self, moved: GroupMoved) {
        if self.notifications.len() >= MAX_NOTIFICATIONS {
            self.notifications.pop_front();
        }
        self.notifications.push_back(moved);
    }

    /// Queues an `ERROR` frame (a builder failure — an identifier that is not a protocol ID —
    /// drops the optional members rather than the error).
    pub(super) fn reply_error(&mut self, body: ErrorBody, now: UnixMillis) {
        let occurred_at = timestamp(now);
        let frame_id = self.ids.next_id();
        let bytes = frames::error(&frame_id, &body, &occurred_at).or_else(|_| {
            let mut plain = ErrorBody::new(body.code, body.message.clone());
            plain.retryable = body.retryable;
            frames::error(&frame_id, &plain, &occurred_at)
        });
        if let Ok(bytes) = bytes {
            self.reply(bytes);
        }
    }

    /// One last `ERROR` (fatal), then `Close`: what was queued is dropped (the socket is going
    /// away) and nothing more is read.
    pub(super) fn fatal(
        &mut self,
        mut body: ErrorBody,
        code: u16,
        reason: &'static str,
        now: UnixMillis,
    ) {
        self.outbound.clear();
        for subscription in self.subscriptions.values_mut() {
            subscription.forget_queue();
        }
        body.fatal = Some(true);
        self.reply_error(body, now);
        self.closing = Some(Close { code, reason });
    }

    fn release(&mut self) {
        if self.released {
            return;
        }
        self.released = true;
        self.gateway
            .hub()
            .release(self.id, self.subscriptions.keys());
        self.subscriptions.clear();
        self.blocked.clear();
        if let Some(session) = &self.session {
            self.gateway.agents().release(&session.principal.id);
        }
    }

    // ---- dispatch -------------------------------------------------------------------------

    fn on_frame(&mut self, frame: &Frame, now: UnixMillis) {
        let frame_id = frame.frame_id().to_owned();
        if frame.frame_type == FrameType::Hello {
            return self.on_hello(frame, now);
        }
        if self.session.is_none() {
            let body = ErrorBody::new(WireCode::AuthRequired, "authenticate with HELLO first")
                .related_to(&frame_id);
            return self.reply_error(body, now);
        }
        match frame.frame_type {
            FrameType::Subscribe => self.on_subscribe(frame, now),
            FrameType::Ack => self.on_ack(frame, now),
            FrameType::Ping => self.on_ping(frame, now),
            FrameType::Event => {
                let body =
                    errors::violation("EVENT frames are sent by the server").related_to(&frame_id);
                self.reply_error(body, now);
            }
            // A peer's ERROR is never answered (no error loops); it changes nothing here.
            FrameType::Error => {}
            FrameType::Hello | FrameType::Command => {}
        }
    }

    /// A frame that failed parsing or the schema. When it is still recognizably a frame of
    /// ours (a JSON object naming version 0.1, a frame type and a valid frame ID) the error
    /// answers it and the connection stays open; otherwise it is a framing violation.
    fn on_bad_frame(&mut self, bytes: &[u8], error: &FrameError, now: UnixMillis) {
        let Ok(document) = Document::parse(bytes, &ParseLimits::DOCUMENT) else {
            let body = errors::violation("a frame must be one JSON text");
            return self.fatal(body, CLOSE_INVALID_PAYLOAD, "not JSON", now);
        };
        let root = document.root();
        let text = |name: &str| root.get(name).and_then(|v| v.as_str());
        let version = text("protocolVersion");
        if let Some(version) = version
            && version != frames::PROTOCOL_VERSION
        {
            let body = ErrorBody::new(
                WireCode::UnsupportedVersion,
                "this server speaks protocol version 0.1",
            );
            return self.fatal(body, CLOSE_POLICY, "unsupported version", now);
        }
        let frame_id = text("frameId").filter(|id| is_protocol_id(id));
        let known_type = text("frameType").and_then(FrameType::parse);
        match (version, frame_id, known_type) {
            (Some(_), Some(frame_id), Some(FrameType::Hello))
                if text("phase") == Some("client_init")
                    && root
                        .get("supportedVersions")
                        .and_then(|v| v.as_array())
                        .is_some_and(|versions| {
                            !versions
                                .iter()
                                .any(|v| v.as_str() == Some(frames::PROTOCOL_VERSION))
                        }) =>
            {
                // §6.3 step 1 negotiates the version: offering none of ours is
                // `UNSUPPORTED_VERSION` (the schema admits only "0.1" in the list, so such a
                // frame fails it first), and the Agent may try again.
                let body = ErrorBody::new(
                    WireCode::UnsupportedVersion,
                    "no compatible protocol version: this server speaks 0.1",
                )
                .related_to(frame_id);
                self.reply_error(body, now);
            }
            (Some(_), Some(frame_id), Some(frame_type)) => {
                let mut body = ErrorBody::new(
                    error.code,
                    format!("the frame does not conform to its schema: {}", error.detail),
                )
                .related_to(frame_id);
                if frame_type == FrameType::Command {
                    body.related_action_id = root
                        .pointer("/command/actionId")
                        .and_then(|v| v.as_str())
                        .filter(|id| is_protocol_id(id))
                        .map(str::to_owned);
                }
                self.reply_error(body, now);
            }
            _ => {
                let body = ErrorBody::new(
                    error.code,
                    "the message is not a frame of websocket-frame.schema.json",
                );
                self.fatal(body, CLOSE_POLICY, "not a frame", now);
            }
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.release();
    }
}
