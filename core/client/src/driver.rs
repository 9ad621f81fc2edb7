//! The task that hosts the session machine: it owns the WebSocket and the
//! [`Session`], moves bytes both ways, runs the timers, routes verified Events to the Group
//! streams, resolves Commands, and reconnects. Every protocol decision is the machine's.
//!
//! ```text
//! connected:   requests ─▶ Session ─poll_output▶ socket     socket ─on_text▶ Session ─poll_event▶ routes
//!              (the socket is read only while the Group streams have room)
//! lost:        backoff (bounded, jitter) ─▶ TCP/TLS/WS ─▶ HELLO ─▶ SUBSCRIBE from the durable
//!              cursors ─▶ pending Commands: the same bytes, or re-signed, or ResignRequired
//! ```

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures_util::{FutureExt, SinkExt, StreamExt};
use missionweaveprotocol::json::{Document, ParseLimits, Value};
use missionweaveprotocol::schema_formats::is_protocol_id;
use missionweaveprotocol::{Principal, PrincipalType, WireCode};
use missionweaveprotocol_gateway::client::{
    ClientConfig, CommandTicket, DeliveredEvent, Session, SessionEvent,
};
use missionweaveprotocol_gateway::frames::{Attention, ErrorBody, SubscribeGroup};
use missionweaveprotocol_host::{OsRandom, SystemClock};
use missionweaveprotocol_kernel::random::RandomSource;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;

use crate::error::ClientError;
use crate::notice::{ConnectionState, Notice};
use crate::options::ClientOptions;
use crate::transport::{self, Endpoint, Ws};

/// The gateway's `max_groups_per_subscribe` default: larger resubscriptions are split.
const GROUPS_PER_SUBSCRIBE: usize = 256;
/// Messages read in one go before the loop looks at its other inputs.
const READ_BURST: usize = 256;

pub(crate) type Reply<T> = oneshot::Sender<Result<T, ClientError>>;

/// A verified Event (the machine checked its Group Authority signature).
pub type VerifiedEvent = DeliveredEvent;

/// What the [`Client`](crate::Client) handle asks the task.
pub(crate) enum Request {
    Subscribe {
        groups: Vec<ResolvedSubscription>,
        reply: Reply<()>,
    },
    Send {
        command: Vec<u8>,
        reply: Reply<Vec<VerifiedEvent>>,
    },
    Ack {
        group_id: String,
        sequence: u64,
        reply: Reply<()>,
    },
    Ping {
        reply: Reply<Duration>,
    },
    Close {
        reply: oneshot::Sender<()>,
    },
}

/// A subscription with its position resolved by the handle (`None`: continue after what was
/// delivered).
pub(crate) struct ResolvedSubscription {
    pub group_id: String,
    pub after_sequence: Option<u64>,
    pub attention: Option<Attention>,
}

/// One Group's stream slot: the sender the task fills, the receiver until the app takes it.
struct Slot {
    tx: mpsc::Sender<VerifiedEvent>,
    rx: Option<mpsc::Receiver<VerifiedEvent>>,
}

/// What the handle and the task share.
pub(crate) struct Shared {
    streams: Mutex<HashMap<String, Slot>>,
    closed: Mutex<bool>,
    capacity: usize,
    notices: Mutex<Option<broadcast::Sender<Notice>>>,
    pub state: watch::Sender<ConnectionState>,
}

impl Shared {
    pub fn new(capacity: usize, notice_capacity: usize, state: ConnectionState) -> Self {
        let (notices, _) = broadcast::channel(notice_capacity.max(1));
        let (state, _) = watch::channel(state);
        Self {
            streams: Mutex::new(HashMap::new()),
            closed: Mutex::new(false),
            capacity: capacity.max(1),
            notices: Mutex::new(Some(notices)),
            state,
        }
    }

    fn streams(&self) -> MutexGuard<'_, HashMap<String, Slot>> {
        self.streams.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn new_slot(&self) -> Slot {
        let (tx, rx) = mpsc::channel(self.capacity);
        Slot { tx, rx: Some(rx) }
    }

    /// The sender of `group`'s stream (created on first use; a stream whose receiver was
    /// dropped gets a new channel).
    fn sender(&self, group: &str) -> Option<mpsc::Sender<VerifiedEvent>> {
        if self.is_closed() {
            return None;
        }
        let mut streams = self.streams();
        let slot = streams
            .entry(group.to_owned())
            .or_insert_with(|| self.new_slot());
        Some(slot.tx.clone())
    }

    /// Takes `group`'s receiver: one consumer per Group; after the previous consumer dropped
    /// its stream, a new one may take over.
    pub fn take_receiver(&self, group: &str) -> Result<mpsc::Receiver<VerifiedEvent>, ClientError> {
        if self.is_closed() {
            return Err(ClientError::Closed);
        }
        let mut streams = self.streams();
        let slot = streams
            .entry(group.to_owned())
            .or_insert_with(|| self.new_slot());
        if slot.rx.is_none() && slot.tx.is_closed() {
            *slot = self.new_slot();
        }
        slot.rx
            .take()
            .ok_or_else(|| ClientError::StreamTaken(group.to_owned()))
    }

    pub fn is_closed(&self) -> bool {
        *self.closed.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn close(&self) {
        *self.closed.lock().unwrap_or_else(PoisonError::into_inner) = true;
        // The senders go: every stream ends once the app has read what it holds.
        self.streams().clear();
        self.state.send_replace(ConnectionState::Closed);
        // Readers get what was sent, then `None`.
        self.notices
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
    }

    pub fn notice(&self, notice: Notice) {
        // No reader is fine: notices are informational, the typed results carry the outcome.
        if let Some(notices) = &*self.notices.lock().unwrap_or_else(PoisonError::into_inner) {
            let _ = notices.send(notice);
        }
    }

    /// A new reader of the notices (one that ends at once when the client is closed).
    pub fn subscribe_notices(&self) -> broadcast::Receiver<Notice> {
        match &*self.notices.lock().unwrap_or_else(PoisonError::into_inner) {
            Some(notices) => notices.subscribe(),
            None => broadcast::channel(1).1,
        }
    }
}

/// One Group as the task sees it.
#[derive(Debug)]
struct GroupState {
    attention: Option<Attention>,
    /// The highest contiguous sequence handed to the stream: an in-order Event at or below it
    /// is a duplicate (a replay after a reconnect, §16).
    delivered: u64,
    /// The highest sequence the app acknowledged (never above `delivered`).
    ack_wanted: u64,
    /// What this connection's session acknowledged.
    ack_sent: u64,
    /// Subscribed (false after `CURSOR_TOO_OLD` or `GROUP_NOT_FOUND` until subscribed again).
    active: bool,
}

/// A Command awaiting its outcome.
struct Waiter {
    /// The bytes as the app sent them (a second `send` of them joins this waiter).
    original: Vec<u8>,
    /// The bytes to send (re-signed after a reconnect, when a resigner did so).
    command: Vec<u8>,
    replies: Vec<Reply<Vec<VerifiedEvent>>>,
    /// The `COMMAND` frame of this connection, if sent on it.
    frame_id: Option<String>,
    /// Sent on some connection.
    sent: bool,
    /// Re-signed for a later Session Epoch.
    resigned: bool,
    /// `ACTION_ID_COLLISION` answered the re-signed Command: the first attempt was applied;
    /// its Events are awaited from the subscription.
    collision: Option<ErrorBody>,
    /// The first Event (from `CommandAccepted`, or the first Event seen with this cause).
    first: Option<String>,
    collected: Vec<VerifiedEvent>,
    deadline: Instant,
    order: u64,
}

/// A live connection.
pub(crate) struct Conn {
    pub ws: Ws,
    pub session: Session,
    pub epoch: u64,
    last_rx: Instant,
    last_tx: Instant,
}

/// How serving a connection ended.
enum End {
    /// The app closed the client (or dropped it).
    Closed(Option<oneshot::Sender<()>>),
    /// The connection was lost.
    Lost(String),
}

fn now() -> UnixMillis {
    SystemClock.now()
}

fn io_error(error: impl core::fmt::Display) -> ClientError {
    ClientError::WebSocket(error.to_string())
}

/// A member of a JSON document, when it is a protocol ID.
fn protocol_id(bytes: &[u8], name: &str) -> Option<String> {
    let document = Document::parse(bytes, &ParseLimits::DOCUMENT).ok()?;
    document
        .root()
        .get(name)
        .and_then(|v| v.as_str())
        .filter(|id| is_protocol_id(id))
        .map(str::to_owned)
}

/// The `sessionEpoch` a Command carries.
fn session_epoch_of(bytes: &[u8]) -> Option<u64> {
    let document = Document::parse(bytes, &ParseLimits::DOCUMENT).ok()?;
    document
        .root()
        .get("sessionEpoch")
        .and_then(|v| v.as_number())
        .and_then(|n| n.as_u64())
}

/// The Action ID whose Command caused `document`, when the actor is `agent`.
fn caused_by(document: &Value, agent: &Principal) -> Option<String> {
    if document.pointer("/cause/type").and_then(Value::as_str) != Some("command") {
        return None;
    }
    if document
        .get("actor")
        .and_then(Principal::from_value)
        .as_ref()
        != Some(agent)
    {
        return None;
    }
    document
        .pointer("/cause/id")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// A uniform number in `[0, 1)` from the operating system (jitter).
fn unit_random() -> f64 {
    let mut bytes = [0u8; 8];
    if OsRandom.fill(&mut bytes).is_err() {
        return 0.5;
    }
    (u64::from_le_bytes(bytes) >> 11) as f64 / (1u64 << 53) as f64
}

/// The session machine's configuration for `options`.
fn session_config(options: &ClientOptions) -> ClientConfig {
    let limits = &options.limits;
    let mut config = ClientConfig::new(
        options.agent_id.clone(),
        Arc::clone(&options.registry),
        options.group_authority.clone(),
    );
    config.max_buffered_events = limits.max_buffered_events;
    config.max_buffered_bytes = limits.max_buffered_bytes;
    config.dedup_window = limits.dedup_window;
    config.max_pending_commands = limits.max_pending_commands;
    // The host keeps each Command's deadline across reconnects; the machine's own timer only
    // backs it up.
    config.command_timeout_ms =
        u64::try_from(limits.command_timeout.as_millis().saturating_mul(2)).unwrap_or(u64::MAX);
    config
}

/// Writes every frame the session queued and flushes.
async fn flush_session(ws: &mut Ws, session: &mut Session) -> Result<bool, ClientError> {
    let mut wrote = false;
    while let Some(bytes) = session.poll_output() {
        let text = String::from_utf8(bytes).map_err(io_error)?;
        ws.feed(Message::text(text)).await.map_err(io_error)?;
        wrote = true;
    }
    ws.flush().await.map_err(io_error)?;
    Ok(wrote)
}

/// TCP, TLS 1.3, WebSocket, then `HELLO` until `server_accept` (§6.3).
pub(crate) async fn establish(
    options: &ClientOptions,
    endpoint: &Endpoint,
    tls: Option<&Arc<rustls::ClientConfig>>,
) -> Result<Conn, ClientError> {
    let mut ws = transport::open(endpoint, &options.tls, tls, &options.limits).await?;
    let mut session = Session::new(
        session_config(options),
        Arc::clone(&options.signer),
        Box::new(OsRandom),
    )?;
    session.start(now())?;
    let deadline = Instant::now() + options.limits.hello_timeout;
    loop {
        flush_session(&mut ws, &mut session).await?;
        while let Some(event) = session.poll_event() {
            match event {
                SessionEvent::Authenticated { session_epoch, .. } => {
                    let at = Instant::now();
                    return Ok(Conn {
                        ws,
                        session,
                        epoch: session_epoch,
                        last_rx: at,
                        last_tx: at,
                    });
                }
                SessionEvent::HandshakeFailed(error) => {
                    let _ = ws.close(None).await;
                    return Err(ClientError::Handshake(Box::new(error)));
                }
                _ => {}
            }
        }
        let message = tokio::time::timeout_at(deadline, ws.next())
            .await
            .map_err(|_| ClientError::Timeout("HELLO"))?;
        match message {
            Some(Ok(Message::Text(text))) => session.on_text(text.as_bytes(), now())?,
            Some(Ok(Message::Close(_))) | None => {
                return Err(ClientError::WebSocket(
                    "the server closed the connection during HELLO".into(),
                ));
            }
            Some(Err(error)) => return Err(io_error(error)),
            Some(Ok(_)) => {}
        }
    }
}

/// Whether a failed reconnection attempt is worth another.
fn retry_connect(error: &ClientError) -> bool {
    match error {
        ClientError::Handshake(body) => body.retryable,
        ClientError::InvalidUrl(_)
        | ClientError::PlaintextNotAllowed
        | ClientError::NoTrustRoots
        | ClientError::TrustRoots(_)
        | ClientError::Session(_) => false,
        _ => true,
    }
}

/// The task.
pub(crate) struct Driver {
    options: Arc<ClientOptions>,
    agent: Principal,
    endpoint: Endpoint,
    tls: Option<Arc<rustls::ClientConfig>>,
    shared: Arc<Shared>,
    requests: mpsc::UnboundedReceiver<Request>,
    groups: BTreeMap<String, GroupState>,
    waiters: HashMap<String, Waiter>,
    pings: HashMap<String, (Instant, Reply<Duration>)>,
    backlog: VecDeque<(String, VerifiedEvent)>,
    next_order: u64,
}

impl Driver {
    pub fn new(
        options: Arc<ClientOptions>,
        endpoint: Endpoint,
        tls: Option<Arc<rustls::ClientConfig>>,
        shared: Arc<Shared>,
        requests: mpsc::UnboundedReceiver<Request>,
    ) -> Self {
        let agent = Principal::new(PrincipalType::Agent, options.agent_id.as_str());
        Self {
            options,
            agent,
            endpoint,
            tls,
            shared,
            requests,
            groups: BTreeMap::new(),
            waiters: HashMap::new(),
            pings: HashMap::new(),
            backlog: VecDeque::new(),
            next_order: 0,
        }
    }

    /// Serves connections until the client is closed or reconnection gives up.
    pub async fn run(mut self, mut conn: Conn) {
        self.shared.state.send_replace(ConnectionState::Connected {
            session_epoch: conn.epoch,
        });
        loop {
            match self.serve(&mut conn).await {
                End::Closed(reply) => {
                    let _ = tokio::time::timeout(Duration::from_secs(1), conn.ws.close(None)).await;
                    self.shutdown(&ClientError::Closed);
                    if let Some(reply) = reply {
                        let _ = reply.send(());
                    }
                    return;
                }
                End::Lost(reason) => {
                    let _ = tokio::time::timeout(Duration::from_secs(1), conn.ws.close(None)).await;
                    self.shared.notice(Notice::Disconnected { reason });
                    match self.reconnect().await {
                        Some(next) => conn = next,
                        None => return,
                    }
                }
            }
        }
    }

    // ---- one connection ---------------------------------------------------------------------

    async fn serve(&mut self, conn: &mut Conn) -> End {
        let limits = self.options.limits;
        let mut tick = tokio::time::interval(limits.tick_interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            self.drain_backlog();
            match tokio::time::timeout(
                limits.idle_timeout,
                flush_session(&mut conn.ws, &mut conn.session),
            )
            .await
            {
                Ok(Ok(true)) => conn.last_tx = Instant::now(),
                Ok(Ok(false)) => {}
                Ok(Err(error)) => return End::Lost(error.to_string()),
                Err(_) => return End::Lost("writing to the socket timed out".into()),
            }
            let reading = self.backlog.is_empty();
            let head = self.backlog_head_sender();
            tokio::select! {
                biased;
                request = self.requests.recv() => match request {
                    None => return End::Closed(None),
                    Some(Request::Close { reply }) => return End::Closed(Some(reply)),
                    Some(request) => self.on_request(request, Some(conn)),
                },
                permit = async { match head { Some(tx) => tx.reserve_owned().await.ok(), None => std::future::pending().await } }, if !reading => {
                    match permit {
                        Some(permit) => {
                            if let Some((_, event)) = self.backlog.pop_front() {
                                permit.send(event);
                            }
                        }
                        // The stream's consumer is gone: its Events are dropped.
                        None => self.drop_backlog_head_group(),
                    }
                }
                message = conn.ws.next(), if reading => {
                    if let Err(reason) = self.on_message(conn, message) {
                        return End::Lost(reason);
                    }
                    let mut burst = 0;
                    while self.backlog.is_empty() && burst < READ_BURST {
                        let Some(message) = conn.ws.next().now_or_never() else { break };
                        if let Err(reason) = self.on_message(conn, message) {
                            return End::Lost(reason);
                        }
                        burst += 1;
                    }
                    self.settle();
                }
                _ = tick.tick() => {
                    conn.session.on_tick(now());
                    if let Err(reason) = self.process_events(conn) {
                        return End::Lost(reason);
                    }
                    self.settle();
                    self.expire();
                    if !self.backlog.is_empty() {
                        // Not reading on purpose (a full stream): silence is ours, not the
                        // server's.
                        conn.last_rx = Instant::now();
                    }
                    if conn.last_rx.elapsed() > limits.idle_timeout {
                        return End::Lost("nothing received within the idle timeout".into());
                    }
                    if conn.last_tx.elapsed() >= limits.ping_interval {
                        let _ = conn.session.ping(None, now());
                    }
                }
            }
        }
    }

    fn on_message(
        &mut self,
        conn: &mut Conn,
        message: Option<Result<Message, tokio_tungstenite::tungstenite::Error>>,
    ) -> Result<(), String> {
        match message {
            None => Err("the server closed the connection".into()),
            Some(Err(error)) => Err(error.to_string()),
            Some(Ok(Message::Text(text))) => {
                conn.last_rx = Instant::now();
                conn.session
                    .on_text(text.as_bytes(), now())
                    .map_err(|e| e.to_string())?;
                self.process_events(conn)
            }
            Some(Ok(Message::Binary(_))) => Err("the server sent a binary message (§17.1)".into()),
            Some(Ok(Message::Close(frame))) => Err(match frame {
                Some(frame) => format!(
                    "closed by the server: {} {}",
                    u16::from(frame.code),
                    frame.reason
                ),
                None => "closed by the server".into(),
            }),
            Some(Ok(_)) => {
                conn.last_rx = Instant::now();
                Ok(())
            }
        }
    }

    /// Everything the machine reported.
    fn process_events(&mut self, conn: &mut Conn) -> Result<(), String> {
        while let Some(event) = conn.session.poll_event() {
            match event {
                SessionEvent::Authenticated { .. } => {}
                SessionEvent::HandshakeFailed(error) => {
                    return Err(format!(
                        "the session failed: {} {}",
                        error.code.as_str(),
                        error.message
                    ));
                }
                SessionEvent::Event(event) => self.on_event(event),
                SessionEvent::CommandAccepted {
                    ticket, event_id, ..
                } => {
                    if let Some(waiter) = self.waiters.get_mut(&ticket.action_id)
                        && waiter.first.is_none()
                    {
                        waiter.first = Some(event_id);
                    }
                }
                SessionEvent::CommandRefused { ticket, error } => self.on_refused(&ticket, error),
                // The host keeps each Command's deadline (`expire`), across reconnects too.
                SessionEvent::CommandTimedOut(_) => {}
                SessionEvent::CursorTooOld {
                    group_id,
                    snapshot_artifact_hash,
                } => {
                    if let Some(group) = self.groups.get_mut(&group_id) {
                        group.active = false;
                    }
                    self.shared.notice(Notice::CursorTooOld {
                        group_id,
                        snapshot_artifact_hash,
                    });
                }
                SessionEvent::Gap { group_id, cursor } => {
                    self.shared.notice(Notice::Gap {
                        group_id: group_id.clone(),
                        cursor,
                    });
                    // The buffer overflowed: what was dropped comes again after the Cursor.
                    let attention = self.groups.get(&group_id).and_then(|g| g.attention.clone());
                    let _ = conn.session.subscribe(
                        &[SubscribeGroup {
                            group_id,
                            after_sequence: cursor,
                            attention,
                        }],
                        now(),
                    );
                }
                SessionEvent::Rejected { event_id, reason } => {
                    self.shared.notice(Notice::Rejected { event_id, reason });
                }
                SessionEvent::Error(error) => self.on_error(error),
                SessionEvent::Pong { nonce } => {
                    if let Some((sent, reply)) = self.pings.remove(&nonce) {
                        let _ = reply.send(Ok(sent.elapsed()));
                    }
                }
            }
        }
        self.flush_acks(conn);
        self.drain_backlog();
        Ok(())
    }

    fn on_error(&mut self, error: ErrorBody) {
        match (error.code, error.group_id.clone()) {
            (WireCode::GroupNotFound, Some(group_id)) => {
                if let Some(group) = self.groups.get_mut(&group_id) {
                    group.active = false;
                }
                self.shared.notice(Notice::GroupRefused { group_id, error });
            }
            (WireCode::Backpressure, group_id) => self.shared.notice(Notice::Backpressure {
                group_id,
                retry_after_ms: error.retry_after_ms,
            }),
            _ => self.shared.notice(Notice::Error(error)),
        }
    }

    fn on_refused(&mut self, ticket: &CommandTicket, error: ErrorBody) {
        let Some(waiter) = self.waiters.get_mut(&ticket.action_id) else {
            return;
        };
        if waiter.frame_id.as_deref() != Some(ticket.frame_id.as_str()) {
            return;
        }
        if waiter.resigned && error.code == WireCode::ActionIdCollision {
            // The first attempt was applied before the disconnect: its Events come through
            // the subscription (the Core never applies an Action ID twice, §15.1).
            waiter.collision = Some(error);
            return;
        }
        if let Some(waiter) = self.waiters.remove(&ticket.action_id) {
            for reply in waiter.replies {
                let _ = reply.send(Err(ClientError::Refused(Box::new(error.clone()))));
            }
        }
    }

    /// A verified Event: it may answer a Command, and goes to its Group's stream when in order
    /// (deduplicated across reconnects) or, on a filtered subscription, as attention.
    fn on_event(&mut self, event: VerifiedEvent) {
        if let Some(action_id) = caused_by(&event.document, &self.agent)
            && let Some(waiter) = self.waiters.get_mut(&action_id)
            && !waiter
                .collected
                .iter()
                .any(|e| e.event_id == event.event_id)
        {
            if waiter.first.is_none() {
                waiter.first = Some(event.event_id.clone());
            }
            waiter.collected.push(event.clone());
        }
        let Some(group_id) = event.group_id.clone() else {
            return;
        };
        let Some(group) = self.groups.get_mut(&group_id) else {
            return;
        };
        if event.in_order {
            if event.sequence <= group.delivered {
                return;
            }
            group.delivered = event.sequence;
            self.backlog.push_back((group_id, event));
        } else if group.attention.is_some() {
            self.backlog.push_back((group_id, event));
        }
    }

    /// Commands whose first Event arrived are answered with every Event of theirs read so far
    /// (the rest of an atomic batch arrives in the same burst; all of them reach the Group
    /// streams anyway).
    fn settle(&mut self) {
        let done: Vec<String> = self
            .waiters
            .iter()
            .filter(|(_, w)| {
                w.first
                    .as_ref()
                    .is_some_and(|first| w.collected.iter().any(|e| &e.event_id == first))
            })
            .map(|(id, _)| id.clone())
            .collect();
        for action_id in done {
            if let Some(mut waiter) = self.waiters.remove(&action_id) {
                waiter
                    .collected
                    .sort_by(|a, b| (&a.group_id, a.sequence).cmp(&(&b.group_id, b.sequence)));
                for reply in waiter.replies {
                    let _ = reply.send(Ok(waiter.collected.clone()));
                }
            }
        }
    }

    /// Commands past their deadline.
    fn expire(&mut self) {
        let at = Instant::now();
        let expired: Vec<String> = self
            .waiters
            .iter()
            .filter(|(_, w)| w.deadline <= at)
            .map(|(id, _)| id.clone())
            .collect();
        for action_id in expired {
            if let Some(waiter) = self.waiters.remove(&action_id) {
                let error = match waiter.collision {
                    Some(error) => ClientError::Refused(Box::new(error)),
                    None => ClientError::CommandTimedOut {
                        action_id: action_id.clone(),
                    },
                };
                for reply in waiter.replies {
                    let _ = reply.send(Err(error.clone()));
                }
            }
        }
    }

    /// Acknowledgements the app asked for, up to what this session delivered in order.
    fn flush_acks(&mut self, conn: &mut Conn) {
        let at = now();
        for (group_id, group) in &mut self.groups {
            if !group.active || group.ack_wanted <= group.ack_sent {
                continue;
            }
            let Some(cursor) = conn.session.cursor(group_id) else {
                continue;
            };
            let sequence = group.ack_wanted.min(cursor);
            if sequence > group.ack_sent
                && conn
                    .session
                    .acknowledge(&[(group_id.as_str(), sequence)], at)
                    .is_ok()
            {
                group.ack_sent = sequence;
            }
        }
    }

    // ---- the Group streams ------------------------------------------------------------------

    fn backlog_head_sender(&self) -> Option<mpsc::Sender<VerifiedEvent>> {
        let (group, _) = self.backlog.front()?;
        self.shared.sender(group)
    }

    fn drop_backlog_head_group(&mut self) {
        if let Some((group, _)) = self.backlog.front().cloned() {
            self.backlog.retain(|(g, _)| g != &group);
        }
    }

    /// Hands queued Events to their streams while they have room, in order.
    fn drain_backlog(&mut self) {
        while let Some((group, _)) = self.backlog.front() {
            let Some(tx) = self.shared.sender(group) else {
                self.backlog.clear();
                return;
            };
            let Some((group, event)) = self.backlog.pop_front() else {
                return;
            };
            match tx.try_send(event) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(event)) => {
                    self.backlog.push_front((group, event));
                    return;
                }
                Err(mpsc::error::TrySendError::Closed(_)) => {
                    self.backlog.retain(|(g, _)| g != &group);
                }
            }
        }
    }

    // ---- requests ---------------------------------------------------------------------------

    fn on_request(&mut self, request: Request, conn: Option<&mut Conn>) {
        match request {
            Request::Subscribe { groups, reply } => {
                let _ = reply.send(self.subscribe(groups, conn));
            }
            Request::Send { command, reply } => self.send(command, reply, conn),
            Request::Ack {
                group_id,
                sequence,
                reply,
            } => {
                let result = match self.groups.get_mut(&group_id) {
                    None => Err(ClientError::NotSubscribed(group_id)),
                    Some(group) if sequence > group.delivered => {
                        Err(ClientError::AckBeyondCursor {
                            group_id,
                            delivered: group.delivered,
                        })
                    }
                    Some(group) => {
                        group.ack_wanted = group.ack_wanted.max(sequence);
                        if let Some(conn) = conn {
                            self.flush_acks(conn);
                        }
                        Ok(())
                    }
                };
                let _ = reply.send(result);
            }
            Request::Ping { reply } => match conn {
                None => {
                    let _ = reply.send(Err(ClientError::Disconnected));
                }
                Some(conn) => match conn.session.ping(None, now()) {
                    Ok(nonce) => {
                        self.pings.insert(nonce, (Instant::now(), reply));
                    }
                    Err(error) => {
                        let _ = reply.send(Err(error.into()));
                    }
                },
            },
            // Handled by the loops.
            Request::Close { reply } => {
                let _ = reply.send(());
            }
        }
    }

    fn subscribe(
        &mut self,
        groups: Vec<ResolvedSubscription>,
        conn: Option<&mut Conn>,
    ) -> Result<(), ClientError> {
        let mut frame = Vec::with_capacity(groups.len());
        for subscription in groups {
            let group = self
                .groups
                .entry(subscription.group_id.clone())
                .or_insert(GroupState {
                    attention: None,
                    delivered: 0,
                    ack_wanted: 0,
                    ack_sent: 0,
                    active: true,
                });
            group.attention = subscription.attention.clone();
            group.active = true;
            let after = match subscription.after_sequence {
                // An explicit position replays from there, even what was delivered before.
                Some(after) => {
                    group.delivered = after;
                    group.ack_wanted = group.ack_wanted.min(after);
                    after
                }
                None => group.delivered,
            };
            // A (re)subscription replaces the server's cursor for the Group.
            group.ack_sent = group.ack_sent.min(after);
            frame.push(SubscribeGroup {
                group_id: subscription.group_id,
                after_sequence: after,
                attention: subscription.attention,
            });
        }
        if let Some(conn) = conn {
            for chunk in frame.chunks(GROUPS_PER_SUBSCRIBE) {
                conn.session.subscribe(chunk, now())?;
            }
        }
        Ok(())
    }

    fn send(
        &mut self,
        command: Vec<u8>,
        reply: Reply<Vec<VerifiedEvent>>,
        conn: Option<&mut Conn>,
    ) {
        let Some(action_id) = protocol_id(&command, "actionId") else {
            let _ = reply.send(Err(ClientError::Session(
                missionweaveprotocol_gateway::client::ClientError::NotACommand,
            )));
            return;
        };
        if let Some(waiter) = self.waiters.get_mut(&action_id) {
            if waiter.original == command {
                waiter.replies.push(reply);
            } else {
                let _ = reply.send(Err(ClientError::ActionIdInFlight(action_id)));
            }
            return;
        }
        if self.waiters.len() >= self.options.limits.max_pending_commands {
            let _ = reply.send(Err(ClientError::Session(
                missionweaveprotocol_gateway::client::ClientError::TooManyPendingCommands,
            )));
            return;
        }
        let mut waiter = Waiter {
            original: command.clone(),
            command,
            replies: vec![reply],
            frame_id: None,
            sent: false,
            resigned: false,
            collision: None,
            first: None,
            collected: Vec::new(),
            deadline: Instant::now() + self.options.limits.command_timeout,
            order: self.next_order,
        };
        self.next_order += 1;
        if let Some(conn) = conn {
            match conn.session.send_command(&waiter.command, now()) {
                Ok(ticket) => {
                    waiter.frame_id = Some(ticket.frame_id);
                    waiter.sent = true;
                }
                Err(error) => {
                    for reply in waiter.replies {
                        let _ = reply.send(Err(error.clone().into()));
                    }
                    return;
                }
            }
        }
        self.waiters.insert(action_id, waiter);
    }

    // ---- reconnection -----------------------------------------------------------------------

    /// Backoff, connect, authenticate, resume; `None` when closed or given up.
    async fn reconnect(&mut self) -> Option<Conn> {
        for waiter in self.waiters.values_mut() {
            waiter.frame_id = None;
        }
        for (_, (_, reply)) in self.pings.drain() {
            let _ = reply.send(Err(ClientError::Disconnected));
        }
        let backoff = self.options.backoff;
        let mut attempt: u32 = 0;
        loop {
            attempt = attempt.saturating_add(1);
            if let Some(max) = backoff.max_attempts
                && attempt > max
            {
                self.shared.notice(Notice::GaveUp { attempts: max });
                self.shutdown(&ClientError::GaveUp { attempts: max });
                return None;
            }
            let delay = backoff.delay(attempt, unit_random());
            self.shared
                .state
                .send_replace(ConnectionState::Reconnecting { attempt });
            self.shared.notice(Notice::Reconnecting { attempt, delay });
            if let Some(reply) = self.wait(delay).await {
                self.shutdown(&ClientError::Closed);
                if let Some(reply) = reply {
                    let _ = reply.send(());
                }
                return None;
            }
            match establish(&self.options, &self.endpoint, self.tls.as_ref()).await {
                Ok(mut conn) => match self.resume(&mut conn).await {
                    Ok(()) => {
                        self.shared.state.send_replace(ConnectionState::Connected {
                            session_epoch: conn.epoch,
                        });
                        self.shared.notice(Notice::Connected {
                            session_epoch: conn.epoch,
                        });
                        return Some(conn);
                    }
                    Err(error) => self.shared.notice(Notice::ConnectFailed { attempt, error }),
                },
                Err(error) if retry_connect(&error) => {
                    self.shared.notice(Notice::ConnectFailed { attempt, error });
                }
                Err(error) => {
                    self.shared.notice(Notice::ConnectFailed {
                        attempt,
                        error: error.clone(),
                    });
                    self.shutdown(&error);
                    return None;
                }
            }
        }
    }

    /// Waits `delay` while serving requests and the streams; `Some` when the client closed.
    async fn wait(&mut self, delay: Duration) -> Option<Option<oneshot::Sender<()>>> {
        let until = Instant::now() + delay;
        loop {
            self.drain_backlog();
            self.expire();
            let head = if self.backlog.is_empty() {
                None
            } else {
                self.backlog_head_sender()
            };
            let has_head = head.is_some();
            tokio::select! {
                biased;
                request = self.requests.recv() => match request {
                    None => return Some(None),
                    Some(Request::Close { reply }) => return Some(Some(reply)),
                    Some(request) => self.on_request(request, None),
                },
                permit = async { match head { Some(tx) => tx.reserve_owned().await.ok(), None => std::future::pending().await } }, if has_head => {
                    match permit {
                        Some(permit) => {
                            if let Some((_, event)) = self.backlog.pop_front() {
                                permit.send(event);
                            }
                        }
                        None => self.drop_backlog_head_group(),
                    }
                }
                _ = tokio::time::sleep_until(until) => return None,
                _ = tokio::time::sleep(Duration::from_millis(250)) => {}
            }
        }
    }

    /// On a new connection: resubscribe every active Group from its durable cursor, then send
    /// what is pending (§16, §19).
    async fn resume(&mut self, conn: &mut Conn) -> Result<(), ClientError> {
        let active: Vec<String> = self
            .groups
            .iter()
            .filter(|(_, g)| g.active)
            .map(|(id, _)| id.clone())
            .collect();
        let durable = match &self.options.store {
            Some(store) => {
                let store = Arc::clone(store);
                let agent = self.options.agent_id.clone();
                let groups = active.clone();
                tokio::task::spawn_blocking(move || {
                    groups
                        .iter()
                        .map(|g| store.cursor(&agent, g))
                        .collect::<Result<Vec<u64>, _>>()
                })
                .await
                .map_err(|e| ClientError::Io(e.to_string()))??
                .into_iter()
                .map(Some)
                .collect()
            }
            None => vec![None; active.len()],
        };
        let mut frame = Vec::with_capacity(active.len());
        for (group_id, durable) in active.into_iter().zip(durable) {
            let Some(group) = self.groups.get_mut(&group_id) else {
                continue;
            };
            // From the durable cursor; what was delivered but not yet made durable comes
            // again and is dropped as a duplicate. A cursor ahead of the delivered position
            // (a snapshot restored by the app) moves it.
            let after = durable.unwrap_or(group.delivered);
            group.delivered = group.delivered.max(after);
            group.ack_sent = 0;
            frame.push(SubscribeGroup {
                group_id,
                after_sequence: after,
                attention: group.attention.clone(),
            });
        }
        for chunk in frame.chunks(GROUPS_PER_SUBSCRIBE) {
            conn.session.subscribe(chunk, now())?;
        }
        self.resend(conn);
        Ok(())
    }

    /// Pending Commands on a new connection: the same bytes when they carry no Session Epoch
    /// or this one (an unchanged retry keeps its Action ID, §19), re-signed by the resigner,
    /// or refused with `ResignRequired`.
    fn resend(&mut self, conn: &mut Conn) {
        let mut pending: Vec<(u64, String)> = self
            .waiters
            .iter()
            .map(|(id, w)| (w.order, id.clone()))
            .collect();
        pending.sort();
        for (_, action_id) in pending {
            let Some(mut waiter) = self.waiters.remove(&action_id) else {
                continue;
            };
            if waiter.collision.is_some() {
                // Already answered: awaiting the original Events.
                self.waiters.insert(action_id, waiter);
                continue;
            }
            let carries = session_epoch_of(&waiter.command);
            if carries.is_some() && carries != Some(conn.epoch) {
                let resigned = self
                    .options
                    .resigner
                    .as_ref()
                    .and_then(|r| r.resign(&waiter.command, conn.epoch).ok())
                    .filter(|bytes| protocol_id(bytes, "actionId").as_deref() == Some(&action_id));
                match resigned {
                    Some(bytes) => {
                        waiter.command = bytes;
                        waiter.resigned = true;
                    }
                    None => {
                        self.shared.notice(Notice::ResignRequired {
                            action_id: action_id.clone(),
                            session_epoch: conn.epoch,
                        });
                        let error = ClientError::ResignRequired {
                            action_id,
                            session_epoch: conn.epoch,
                            was_sent: waiter.sent,
                        };
                        for reply in waiter.replies {
                            let _ = reply.send(Err(error.clone()));
                        }
                        continue;
                    }
                }
            }
            match conn.session.send_command(&waiter.command, now()) {
                Ok(ticket) => {
                    waiter.frame_id = Some(ticket.frame_id);
                    waiter.sent = true;
                    self.waiters.insert(action_id, waiter);
                }
                Err(error) => {
                    for reply in waiter.replies {
                        let _ = reply.send(Err(error.clone().into()));
                    }
                }
            }
        }
    }

    /// The end: every waiting call fails with `error`, the streams end.
    fn shutdown(&mut self, error: &ClientError) {
        for (_, waiter) in self.waiters.drain() {
            for reply in waiter.replies {
                let _ = reply.send(Err(error.clone()));
            }
        }
        for (_, (_, reply)) in self.pings.drain() {
            let _ = reply.send(Err(error.clone()));
        }
        // What the streams have room for is still handed over before they end.
        self.drain_backlog();
        self.backlog.clear();
        self.requests.close();
        while let Ok(request) = self.requests.try_recv() {
            match request {
                Request::Subscribe { reply, .. } | Request::Ack { reply, .. } => {
                    let _ = reply.send(Err(error.clone()));
                }
                Request::Send { reply, .. } => {
                    let _ = reply.send(Err(error.clone()));
                }
                Request::Ping { reply } => {
                    let _ = reply.send(Err(error.clone()));
                }
                Request::Close { reply } => {
                    let _ = reply.send(());
                }
            }
        }
        self.shared.close();
    }
}
