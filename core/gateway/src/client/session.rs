//! [`Session`]: the client's sans-IO machine for one connection (`docs/network.md`, "Client
//! session machine"). The host moves bytes (`on_text`, `poll_output`), passes the time, and
//! reads what happened (`poll_event`); it never builds or parses a frame itself.
//!
//! ```text
//! start ─▶ client_init ─server_challenge▶ client_response (signed transcript) ─server_accept▶
//!   Authenticated: SUBSCRIBE (queued until then) · COMMAND · ACK · PING
//! ```
//!
//! Every Event is verified before anything else looks at it: the six stages against the
//! Organization Registry (§6.4, Event profile), and the verified signer must be the Group
//! Authority (§15.2). Then it may resolve a pending Command (`cause` = that Command's Action
//! ID), is deduplicated by Event ID and ordered per Group (`ordering.rs`, §16).
//!
//! Reconnection: a new `Session` subscribes from the Agent's durable Cursors (for instance an
//! `agent::replay::AgentLocalStore`'s, or [`Session::cursors`] of the previous session); the
//! server may replay Events around the disconnect again, which are dropped as duplicates.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use missionweaveprotocol::crypto::Signer;
use missionweaveprotocol::json::{Document, ParseLimits, Value};
use missionweaveprotocol::schema_formats::{encode_base64url, is_protocol_id};
use missionweaveprotocol::wire::{Frame, FrameType};
use missionweaveprotocol::{
    Principal, PrincipalType, SignedDocumentCodec, SignedDocumentKind, WireCode,
};
use missionweaveprotocol_agent::auth::HelloPhase;
use missionweaveprotocol_kernel::random::RandomSource;
use missionweaveprotocol_kernel::unix_millis::{
    MAX_RFC3339_MILLIS, MIN_RFC3339_MILLIS, UnixMillis,
};

use super::config::ClientConfig;
use super::ordering::{GroupOrder, Offer, RecentIds, Seen};
use super::outcome::{ClientError, CommandTicket, DeliveredEvent, SessionEvent, SessionToken};
use crate::frames::{
    self, Acknowledgement, ErrorBody, FrameIds, ReceivedServerFrame, SubscribeGroup,
};

/// Our outstanding `PING` nonces (older ones are forgotten: a late reply is just ignored).
const MAX_OUTSTANDING_PINGS: usize = 16;

#[derive(Debug)]
enum Phase {
    Idle,
    InitSent {
        frame_id: String,
        client_nonce: String,
    },
    ResponseSent {
        frame_id: String,
    },
    Authenticated {
        epoch: u64,
    },
    Failed,
}

#[derive(Debug)]
struct Pending {
    ticket: CommandTicket,
    sent_at: UnixMillis,
}

fn timestamp(now: UnixMillis) -> String {
    UnixMillis(now.0.clamp(MIN_RFC3339_MILLIS, MAX_RFC3339_MILLIS))
        .to_rfc3339()
        .unwrap_or_default()
}

/// One Agent connection, client side.
pub struct Session {
    config: ClientConfig,
    signer: Arc<dyn Signer + Send + Sync>,
    random: Box<dyn RandomSource>,
    ids: FrameIds,
    codec: SignedDocumentCodec<'static>,
    phase: Phase,
    outbound: VecDeque<Vec<u8>>,
    /// `SUBSCRIBE` frames built before authentication, sent on `server_accept`.
    held: Vec<Vec<u8>>,
    events: VecDeque<SessionEvent>,
    groups: HashMap<String, GroupOrder>,
    pending: HashMap<String, Pending>,
    by_action: HashMap<String, String>,
    recent: RecentIds,
    pings: VecDeque<String>,
}

impl core::fmt::Debug for Session {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Session")
            .field("agent_id", &self.config.agent_id)
            .field("phase", &self.phase)
            .field("groups", &self.groups.len())
            .field("pending", &self.pending.len())
            .finish_non_exhaustive()
    }
}

impl Session {
    /// A session for `config.agent_id`, signing the HELLO challenge with `signer` (its key ID
    /// is the `keyId` of `client_init`), drawing frame IDs and nonces from `random`.
    pub fn new(
        config: ClientConfig,
        signer: Arc<dyn Signer + Send + Sync>,
        mut random: Box<dyn RandomSource>,
    ) -> Result<Self, ClientError> {
        let ids = FrameIds::new(&mut *random).map_err(|_| ClientError::RandomUnavailable)?;
        let recent = RecentIds::new(config.dedup_window);
        Ok(Self {
            config,
            signer,
            random,
            ids,
            codec: SignedDocumentCodec::new(),
            phase: Phase::Idle,
            outbound: VecDeque::new(),
            held: Vec::new(),
            events: VecDeque::new(),
            groups: HashMap::new(),
            pending: HashMap::new(),
            by_action: HashMap::new(),
            recent,
            pings: VecDeque::new(),
        })
    }

    /// The kind of principal this session acts as: the Registry's binding of the signing key
    /// when it names `agent_id` as a human (the MissionOwner's page, docs/network.md "Human
    /// sessions"), else an Agent.
    fn kind(&self) -> PrincipalType {
        match self.config.registry.binding(self.signer.key_id()) {
            Some(b)
                if b.principal.kind == PrincipalType::Human
                    && b.principal.id == self.config.agent_id =>
            {
                PrincipalType::Human
            }
            _ => PrincipalType::Agent,
        }
    }

    /// Queues `HELLO/client_init` (§6.3 step 1) with a fresh nonce.
    pub fn start(&mut self, _now: UnixMillis) -> Result<(), ClientError> {
        if !matches!(self.phase, Phase::Idle) {
            return Err(ClientError::AlreadyStarted);
        }
        let client_nonce =
            frames::random_nonce(&mut *self.random).map_err(|_| ClientError::RandomUnavailable)?;
        let frame_id = self.ids.next_id();
        let bytes = frames::hello_client_init(
            &frame_id,
            &self.config.agent_id,
            self.signer.key_id(),
            &client_nonce,
            &[frames::PROTOCOL_VERSION],
        )?;
        self.outbound.push_back(bytes);
        self.phase = Phase::InitSent {
            frame_id,
            client_nonce,
        };
        Ok(())
    }

    /// Whether `server_accept` was received.
    pub fn is_authenticated(&self) -> bool {
        matches!(self.phase, Phase::Authenticated { .. })
    }

    /// The Session Epoch Agent Commands must carry.
    pub fn session_epoch(&self) -> Option<u64> {
        match self.phase {
            Phase::Authenticated { epoch } => Some(epoch),
            _ => None,
        }
    }

    /// Every subscribed Group with its contiguous Cursor (what a reconnecting session
    /// subscribes from).
    pub fn cursors(&self) -> Vec<(String, u64)> {
        let mut cursors: Vec<_> = self
            .groups
            .iter()
            .map(|(g, order)| (g.clone(), order.cursor()))
            .collect();
        cursors.sort();
        cursors
    }

    /// The contiguous Cursor of `group`.
    pub fn cursor(&self, group: &str) -> Option<u64> {
        self.groups.get(group).map(GroupOrder::cursor)
    }

    /// Out-of-order Events buffered for `group`.
    pub fn buffered(&self, group: &str) -> usize {
        self.groups.get(group).map_or(0, GroupOrder::buffered)
    }

    /// Commands awaiting their outcome.
    pub fn pending_commands(&self) -> usize {
        self.pending.len()
    }

    /// The next frame to send.
    pub fn poll_output(&mut self) -> Option<Vec<u8>> {
        self.outbound.pop_front()
    }

    /// The next thing that happened.
    pub fn poll_event(&mut self) -> Option<SessionEvent> {
        self.events.pop_front()
    }

    // ---- host calls ------------------------------------------------------------------------

    /// Subscribes `groups` from their Cursors (§17.2). Each Group's Cursor becomes its
    /// `afterSequence`; a Group with an attention filter delivers live Events past its gaps as
    /// attention (`DeliveredEvent::in_order` false). Before authentication the frame waits for
    /// `server_accept`. Returns the `SUBSCRIBE` frame ID.
    pub fn subscribe(
        &mut self,
        groups: &[SubscribeGroup],
        _now: UnixMillis,
    ) -> Result<String, ClientError> {
        if matches!(self.phase, Phase::Failed) {
            return Err(ClientError::NotAuthenticated);
        }
        let frame_id = self.ids.next_id();
        let subscription_id = self.ids.next_id();
        let bytes = frames::subscribe(&frame_id, &subscription_id, groups)?;
        for group in groups {
            self.groups.insert(
                group.group_id.clone(),
                GroupOrder::new(group.after_sequence, group.attention.is_some()),
            );
        }
        if self.is_authenticated() {
            self.outbound.push_back(bytes);
        } else {
            self.held.push(bytes);
        }
        Ok(frame_id)
    }

    /// The host learned its `visibilityStartSequence` in `group` (§8: a late member's history
    /// starts there; the server replays after `visibilityStartSequence − 1`): the Cursor moves
    /// up to it and buffered Events that became contiguous are delivered.
    pub fn set_visibility_start(&mut self, group: &str, start: u64) -> Result<(), ClientError> {
        let order = self
            .groups
            .get_mut(group)
            .ok_or_else(|| ClientError::UnknownGroup(group.to_owned()))?;
        for event in order.raise_to(start.saturating_sub(1)) {
            self.events.push_back(SessionEvent::Event(event));
        }
        Ok(())
    }

    /// Sends a signed Command (its exact bytes, §15.1) in a `COMMAND` frame with a fresh frame
    /// ID. Its outcome arrives as `CommandAccepted` (its first Event), `CommandRefused` (an
    /// `ERROR` naming this frame) or `CommandTimedOut`.
    pub fn send_command(
        &mut self,
        command: &[u8],
        now: UnixMillis,
    ) -> Result<CommandTicket, ClientError> {
        if !self.is_authenticated() {
            return Err(ClientError::NotAuthenticated);
        }
        if self.pending.len() >= self.config.max_pending_commands {
            return Err(ClientError::TooManyPendingCommands);
        }
        let action_id = Document::parse(command, &ParseLimits::DOCUMENT)
            .ok()
            .and_then(|d| {
                d.root()
                    .get("actionId")
                    .and_then(|v| v.as_str())
                    .filter(|id| is_protocol_id(id))
                    .map(str::to_owned)
            })
            .ok_or(ClientError::NotACommand)?;
        let frame_id = self.ids.next_id();
        let bytes = frames::command(&frame_id, command)?;
        let ticket = CommandTicket {
            frame_id: frame_id.clone(),
            action_id: action_id.clone(),
        };
        // The same Action ID sent again (an unchanged retry, §19) answers the latest frame.
        if let Some(previous) = self.by_action.insert(action_id, frame_id.clone()) {
            self.pending.remove(&previous);
        }
        self.pending.insert(
            frame_id,
            Pending {
                ticket: ticket.clone(),
                sent_at: now,
            },
        );
        self.outbound.push_back(bytes);
        Ok(ticket)
    }

    /// Acknowledges durable progress (§16): each `(group, sequence)` at most the Group's
    /// contiguous Cursor, never over a gap.
    pub fn acknowledge(
        &mut self,
        cursors: &[(&str, u64)],
        now: UnixMillis,
    ) -> Result<(), ClientError> {
        if !self.is_authenticated() {
            return Err(ClientError::NotAuthenticated);
        }
        for (group, sequence) in cursors {
            let cursor = self
                .groups
                .get(*group)
                .map(GroupOrder::cursor)
                .ok_or_else(|| ClientError::UnknownGroup((*group).to_owned()))?;
            if *sequence > cursor {
                return Err(ClientError::AckBeyondCursor {
                    group_id: (*group).to_owned(),
                    cursor,
                });
            }
        }
        let acknowledgements: Vec<Acknowledgement<'_>> = cursors
            .iter()
            .map(|(group_id, sequence)| Acknowledgement {
                group_id,
                sequence: *sequence,
            })
            .collect();
        let frame_id = self.ids.next_id();
        let bytes = frames::ack(&frame_id, &acknowledgements, &timestamp(now))?;
        self.outbound.push_back(bytes);
        Ok(())
    }

    /// Sends a `PING` (§17.3), optionally with a Presence Record (§6.2); returns its nonce
    /// (a `Pong` with it follows the reply).
    pub fn ping(
        &mut self,
        presence: Option<&Value>,
        now: UnixMillis,
    ) -> Result<String, ClientError> {
        if !self.is_authenticated() {
            return Err(ClientError::NotAuthenticated);
        }
        let nonce =
            frames::random_nonce(&mut *self.random).map_err(|_| ClientError::RandomUnavailable)?;
        let frame_id = self.ids.next_id();
        let bytes = frames::ping(&frame_id, &nonce, None, &timestamp(now), presence)?;
        if self.pings.len() >= MAX_OUTSTANDING_PINGS {
            self.pings.pop_front();
        }
        self.pings.push_back(nonce.clone());
        self.outbound.push_back(bytes);
        Ok(nonce)
    }

    /// Time passed: Commands without an outcome past `command_timeout_ms` are reported.
    pub fn on_tick(&mut self, now: UnixMillis) {
        let timeout = self.config.command_timeout_ms;
        let mut expired: Vec<String> = self
            .pending
            .iter()
            .filter(|(_, p)| now >= p.sent_at.saturating_add_ms(timeout))
            .map(|(frame_id, _)| frame_id.clone())
            .collect();
        expired.sort();
        for frame_id in expired {
            if let Some(pending) = self.pending.remove(&frame_id) {
                self.by_action.remove(&pending.ticket.action_id);
                self.events
                    .push_back(SessionEvent::CommandTimedOut(pending.ticket));
            }
        }
    }

    // ---- received frames -------------------------------------------------------------------

    /// A text frame arrived from the server. A frame that is not one, or is out of place, is
    /// an error (the host closes the connection and reconnects); a bad Event is only
    /// `Rejected`.
    pub fn on_text(&mut self, bytes: &[u8], now: UnixMillis) -> Result<(), ClientError> {
        match frames::parse_server_frame(bytes)? {
            ReceivedServerFrame::Event(event) => {
                if !self.is_authenticated() {
                    return Err(ClientError::Protocol(
                        "an EVENT before server_accept".into(),
                    ));
                }
                self.on_event(&event.event_bytes);
                Ok(())
            }
            ReceivedServerFrame::Other(frame) => self.on_frame(&frame, now),
        }
    }

    fn on_frame(&mut self, frame: &Frame, now: UnixMillis) -> Result<(), ClientError> {
        match frame.frame_type {
            FrameType::Hello => self.on_hello(frame),
            FrameType::Error => {
                self.on_error(&frame.value);
                Ok(())
            }
            FrameType::Ping => {
                self.on_ping(&frame.value, now);
                Ok(())
            }
            other => Err(ClientError::Protocol(format!(
                "the server sent a {} frame",
                other.as_str()
            ))),
        }
    }

    fn on_hello(&mut self, frame: &Frame) -> Result<(), ClientError> {
        let text = |name: &str| {
            frame
                .value
                .get(name)
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        match (frame.phase().and_then(HelloPhase::parse), &self.phase) {
            (Some(HelloPhase::ServerChallenge), Phase::InitSent { client_nonce, .. }) => {
                if text("selectedVersion") != frames::PROTOCOL_VERSION {
                    return self.handshake_failed(ErrorBody::new(
                        WireCode::UnsupportedVersion,
                        "the server selected a version this client does not speak",
                    ));
                }
                if text("clientNonce") != client_nonce {
                    return self.handshake_failed(ErrorBody::new(
                        WireCode::ProtocolViolation,
                        "the challenge does not echo our nonce",
                    ));
                }
                let Some(challenge) = frames::challenge_from_wire(
                    &self.config.agent_id,
                    self.signer.key_id(),
                    client_nonce,
                    text("serverNonce"),
                    text("selectedVersion"),
                    text("challenge"),
                ) else {
                    return self.handshake_failed(ErrorBody::new(
                        WireCode::ProtocolViolation,
                        "the challenge is not of the gateway's form",
                    ));
                };
                // The same transcript the server verifies (`agent::auth::Challenge`).
                let transcript = challenge
                    .signing_bytes()
                    .map_err(|e| ClientError::Protocol(e.to_string()))?;
                let signature = self
                    .signer
                    .sign(&transcript)
                    .map_err(|e| ClientError::Protocol(e.to_string()))?;
                let frame_id = self.ids.next_id();
                let bytes = frames::hello_client_response(
                    &frame_id,
                    &challenge.agent_id,
                    &challenge.key_id,
                    &challenge.client_nonce,
                    &challenge.server_nonce,
                    &encode_base64url(&signature),
                )?;
                self.outbound.push_back(bytes);
                self.phase = Phase::ResponseSent { frame_id };
                Ok(())
            }
            (Some(HelloPhase::ServerAccept), Phase::ResponseSent { .. }) => {
                let epoch = frame
                    .value
                    .get("sessionEpoch")
                    .and_then(Value::as_number)
                    .and_then(|n| n.as_u64())
                    .unwrap_or(0);
                self.phase = Phase::Authenticated { epoch };
                self.events.push_back(SessionEvent::Authenticated {
                    session_epoch: epoch,
                    session_token: SessionToken(text("sessionToken").to_owned()),
                    expires_at: text("expiresAt").to_owned(),
                });
                self.outbound.extend(self.held.drain(..));
                Ok(())
            }
            _ => Err(ClientError::Protocol("a HELLO phase out of order".into())),
        }
    }

    fn handshake_failed(&mut self, error: ErrorBody) -> Result<(), ClientError> {
        self.phase = Phase::Failed;
        self.held.clear();
        self.events.push_back(SessionEvent::HandshakeFailed(error));
        Ok(())
    }

    fn on_error(&mut self, value: &Value) {
        let Some(error) = value.get("error").and_then(ErrorBody::from_value) else {
            return;
        };
        let related = error.related_frame_id.clone();
        let handshake_frame = match &self.phase {
            Phase::InitSent { frame_id, .. } | Phase::ResponseSent { frame_id } => {
                Some(frame_id.clone())
            }
            _ => None,
        };
        if handshake_frame.is_some() && (related == handshake_frame || error.fatal == Some(true)) {
            let _ = self.handshake_failed(error);
            return;
        }
        if let Some(pending) = related.as_ref().and_then(|id| self.pending.remove(id)) {
            self.by_action.remove(&pending.ticket.action_id);
            self.events.push_back(SessionEvent::CommandRefused {
                ticket: pending.ticket,
                error,
            });
            return;
        }
        match (error.code, error.group_id.clone()) {
            (WireCode::CursorTooOld, Some(group_id)) => {
                self.groups.remove(&group_id);
                self.events.push_back(SessionEvent::CursorTooOld {
                    group_id,
                    snapshot_artifact_hash: error.snapshot_artifact_hash,
                });
            }
            (WireCode::GroupNotFound, Some(group_id)) => {
                self.groups.remove(&group_id);
                self.events.push_back(SessionEvent::Error(error));
            }
            _ => self.events.push_back(SessionEvent::Error(error)),
        }
    }

    fn on_ping(&mut self, value: &Value, now: UnixMillis) {
        let text = |name: &str| value.get(name).and_then(Value::as_str);
        if let Some(reply_to) = text("replyToNonce") {
            if let Some(at) = self.pings.iter().position(|n| n == reply_to) {
                self.pings.remove(at);
                self.events.push_back(SessionEvent::Pong {
                    nonce: reply_to.to_owned(),
                });
            }
            return;
        }
        let Some(nonce) = text("nonce").map(str::to_owned) else {
            return;
        };
        let frame_id = self.ids.next_id();
        let ours = frames::random_nonce(&mut *self.random)
            .unwrap_or_else(|_| encode_base64url(frame_id.as_bytes()));
        if let Ok(bytes) = frames::ping(&frame_id, &ours, Some(&nonce), &timestamp(now), None) {
            self.outbound.push_back(bytes);
        }
    }

    fn on_event(&mut self, bytes: &[u8]) {
        let verified =
            match self
                .codec
                .verify(SignedDocumentKind::Event, bytes, &self.config.registry)
            {
                Ok(verified) => verified,
                Err(error) => {
                    let event_id = Document::parse(bytes, &ParseLimits::DOCUMENT)
                        .ok()
                        .and_then(|d| {
                            d.root()
                                .get("eventId")
                                .and_then(|v| v.as_str())
                                .map(str::to_owned)
                        });
                    self.events.push_back(SessionEvent::Rejected {
                        event_id,
                        reason: format!(
                            "the Event does not verify ({} at stage {}: {})",
                            missionweaveprotocol::DescribeError::wire_code(&error).as_str(),
                            error.stage.as_str(),
                            error.reason
                        ),
                    });
                    return;
                }
            };
        let by_authority = verified.principal == self.config.group_authority;
        let document = verified.into_document();
        let event_id = document
            .get("eventId")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if !by_authority {
            self.events.push_back(SessionEvent::Rejected {
                event_id: Some(event_id),
                reason: "the Event is not signed by the Group Authority".into(),
            });
            return;
        }
        let group_id = document
            .get("groupId")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let sequence = document
            .get("sequence")
            .and_then(Value::as_number)
            .and_then(|n| n.as_u64())
            .unwrap_or(0);
        let seen = self.recent.check(&event_id, group_id.as_deref(), sequence);
        if seen == Seen::Moved {
            self.events.push_back(SessionEvent::Rejected {
                event_id: Some(event_id),
                reason: "the Event ID was seen at another position".into(),
            });
            return;
        }
        self.resolve(&document, &event_id, group_id.as_deref(), sequence);
        let event = DeliveredEvent {
            group_id: group_id.clone(),
            sequence,
            event_id: event_id.clone(),
            bytes: bytes.to_vec(),
            document,
            in_order: false,
        };
        let Some(order) = group_id.as_ref().and_then(|g| self.groups.get_mut(g)) else {
            // Not a subscribed Group (an Organization-scoped Event, or a Group only this
            // session's own Command touched): delivered outside any order, once.
            if seen == Seen::Same {
                return;
            }
            self.recent
                .remember(&event_id, group_id.as_deref(), sequence);
            self.events.push_back(SessionEvent::Event(event));
            return;
        };
        let max_events = self.config.max_buffered_events;
        let max_bytes = self.config.max_buffered_bytes;
        match order.offer(event, max_events, max_bytes) {
            Offer::Deliver(events) => {
                for event in events {
                    self.recent.remember(
                        &event.event_id,
                        event.group_id.as_deref(),
                        event.sequence,
                    );
                    self.events.push_back(SessionEvent::Event(event));
                }
            }
            // An Event delivered as attention comes again in order once its gap fills (the
            // host has not processed it durably, §16); as attention it comes only once.
            Offer::Attention(_) if seen == Seen::Same => {}
            Offer::Attention(event) => {
                self.recent
                    .remember(&event_id, group_id.as_deref(), sequence);
                self.events.push_back(SessionEvent::Event(event));
            }
            Offer::Buffered => {
                self.recent
                    .remember(&event_id, group_id.as_deref(), sequence);
            }
            Offer::Duplicate => {}
            Offer::Conflict => self.events.push_back(SessionEvent::Rejected {
                event_id: Some(event_id),
                reason: "another Event holds this Group position".into(),
            }),
            Offer::Overflow { first } => {
                if first && let Some(group_id) = group_id {
                    let cursor = order.cursor();
                    self.events
                        .push_back(SessionEvent::Gap { group_id, cursor });
                }
            }
        }
    }

    /// An Event caused by one of our pending Commands resolves it (§15.1: `cause` is the
    /// Command's Action ID; the actor is this Agent).
    fn resolve(&mut self, document: &Value, event_id: &str, group_id: Option<&str>, sequence: u64) {
        let cause_is_command =
            document.pointer("/cause/type").and_then(Value::as_str) == Some("command");
        let Some(action_id) = document
            .pointer("/cause/id")
            .and_then(Value::as_str)
            .filter(|_| cause_is_command)
        else {
            return;
        };
        let ours = document
            .get("actor")
            .and_then(Principal::from_value)
            .is_some_and(|actor| actor.kind == self.kind() && actor.id == self.config.agent_id);
        if !ours {
            return;
        }
        let Some(frame_id) = self.by_action.remove(action_id) else {
            return;
        };
        if let Some(pending) = self.pending.remove(&frame_id) {
            self.events.push_back(SessionEvent::CommandAccepted {
                ticket: pending.ticket,
                event_id: event_id.to_owned(),
                group_id: group_id.map(str::to_owned),
                sequence,
            });
        }
    }
}
