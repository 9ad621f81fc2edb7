//! The sans-IO server machines of `missionweaveprotocol-gateway` (`docs/network.md`) for the
//! package's `GroupGateway` (`js/src/api/gateway.mjs`, a `ws` host): conversions only. Every
//! frame decision — HELLO, SUBSCRIBE, COMMAND, ACK, PING, errors, close codes, backpressure —
//! is the Rust `server::Connection`'s; JavaScript moves bytes between the WebSocket and it.
//!
//! Each input of a connection is a napi `AsyncTask` (the machine may block on the store, so it
//! runs on the libuv thread pool, never on the event loop): it feeds the machine and drains it,
//! resolving to a `GatewayDrain` — the text frames to write in order, the close after them (if
//! any), the heads this connection's Commands moved (the host wakes `wakeList(group, id)`),
//! and the state the host reads between inputs (`wantsInput`, `closed`, the Agent and epoch),
//! so no getter has to wait for a running task. A drain takes at most 8 frames / 512 KiB
//! (`more`: the host writes them, then `poll`s), so the socket's backpressure holds.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol_ffi::{Failure, finish};
use missionweaveprotocol_gateway::server::{
    Connection, ConnectionId, CoreGateway, DurableCursors, Gateway, GatewayCore, Limits, Output,
};
use missionweaveprotocol_host::OsRandom;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use napi::bindgen_prelude::{AsyncTask, Buffer, Either};
use napi::{Env, Task};
use napi_derive::napi;

use crate::auth::AuthSessionAuthority;
use crate::authority_core::Core;

/// An argument the host got wrong (`ArgumentError`, `invalid-argument`).
fn invalid(detail: impl Into<String>) -> String {
    finish(Err(Failure::argument(detail)))
}

/// A JavaScript number as integer milliseconds (negative or fractional: the epoch).
fn millis(now: f64) -> UnixMillis {
    // Saturating conversion: the host passes `Date.now()`.
    #[allow(clippy::cast_possible_truncation)]
    UnixMillis(now as i64)
}

/// The limits a host may set (the rest keep `Limits::default()`; the gateway checks them),
/// from a JSON object with the reference's camelCase names (`maxFrameBytes`, …).
fn limits_arg(text: Option<&str>) -> Result<Limits, String> {
    let mut out = Limits::default();
    let Some(text) = text else { return Ok(out) };
    let value = json::parse(text.as_bytes()).map_err(|e| finish(Err(Failure::error(&e))))?;
    let Value::Object(members) = value else {
        return Err(invalid("limits must be an object"));
    };
    for (name, value) in members.iter() {
        let name = name.to_lossy();
        let name = name.as_ref();
        let count = value
            .as_number()
            .and_then(missionweaveprotocol::json::Number::as_u64)
            .ok_or_else(|| invalid(format!("limit {name} must be a non-negative integer")))?;
        let size = usize::try_from(count).map_err(|_| invalid(format!("{name} is too large")))?;
        match name {
            "maxFrameBytes" => out.max_frame_bytes = size,
            "handshakeTimeoutMs" => out.handshake_timeout_ms = count,
            "maxHelloAttempts" => {
                out.max_hello_attempts =
                    u32::try_from(count).map_err(|_| invalid("maxHelloAttempts is too large"))?;
            }
            "maxConnectionsPerAgent" => out.max_connections_per_agent = size,
            "maxGroupsPerSubscribe" => out.max_groups_per_subscribe = size,
            "maxSubscriptions" => out.max_subscriptions = size,
            "maxQueueFrames" => out.max_queue_frames = size,
            "groupShareFrames" => out.group_share_frames = size,
            "pollIntervalMs" => out.poll_interval_ms = count,
            other => {
                return Err(invalid(format!(
                    "{other:?} is not a gateway limit a host may set"
                )));
            }
        }
    }
    Ok(out)
}

/// What every connection of one server shares: the Core seam over a `Core`, a twin of the
/// `SessionAuthority` (same secret and lifetimes), the delivery hub. The constructor never
/// throws: `status()` is the envelope of the construction.
#[napi]
#[derive(Debug)]
pub struct GatewayHost(Result<Arc<Gateway>, String>);

#[napi]
impl GatewayHost {
    /// `limits`: JSON text of the limits a host may set, or absent. `host_cursors`: SUBSCRIBE
    /// resumes from the host's Cursor store and ACKs are reported for it
    /// (`DurableCursors::Host`, `server/host_cursors.rs`).
    #[napi(constructor, catch_unwind)]
    pub fn new(
        core: &Core,
        sessions: &AuthSessionAuthority,
        limits: Option<String>,
        host_cursors: Option<bool>,
    ) -> Self {
        Self((|| {
            let core = core.handle()?.core();
            let authority = sessions
                .held()?
                .twin(Box::new(OsRandom))
                .map_err(|e| finish(Err(Failure::error(&e))))?;
            let limits = limits_arg(limits.as_deref())?;
            let seam: Arc<dyn GatewayCore> = Arc::new(CoreGateway::new(core));
            let cursors = if host_cursors == Some(true) {
                DurableCursors::Host
            } else {
                DurableCursors::Core
            };
            Gateway::with_durable_cursors(seam, authority, limits, cursors)
                .map_err(|e| invalid(e.to_string()))
        })())
    }

    /// `{"ok":null}`, or why the construction was refused.
    #[napi(catch_unwind)]
    pub fn status(&self) -> String {
        match &self.0 {
            Ok(_) => finish(Ok(Value::Null)),
            Err(envelope) => envelope.clone(),
        }
    }

    /// The largest text message a connection takes (the `ws` server's `maxPayload`).
    #[napi(catch_unwind)]
    pub fn max_frame_bytes(&self) -> f64 {
        self.0
            .as_ref()
            .map_or(0.0, |g| g.limits().max_frame_bytes as f64)
    }

    /// A machine for a newly accepted WebSocket at `now` (ms); the envelope if there is none.
    #[napi(catch_unwind)]
    pub fn connect(&self, now: f64) -> Either<GatewayConnection, String> {
        let gateway = match &self.0 {
            Ok(gateway) => gateway,
            Err(envelope) => return Either::B(envelope.clone()),
        };
        match gateway.connect(millis(now), Box::new(OsRandom)) {
            Ok(connection) => Either::A(GatewayConnection {
                id: connection.id().0 as f64,
                inner: Some(Arc::new(Mutex::new(connection))),
            }),
            Err(_) => Either::B(invalid("no randomness available from the OS")),
        }
    }

    /// The other connections subscribed to `group_id` (to wake after `except`'s Command).
    #[napi(catch_unwind)]
    pub fn wake_list(&self, group_id: String, except: f64) -> Vec<f64> {
        let Ok(gateway) = &self.0 else {
            return Vec::new();
        };
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let except = ConnectionId(except as u64);
        gateway
            .hub()
            .wake_list(&group_id, except)
            .into_iter()
            .map(|id| id.0 as f64)
            .collect()
    }

    /// Authenticated connections of `agent_id`.
    #[napi(catch_unwind)]
    pub fn agent_connections(&self, agent_id: String) -> u32 {
        self.0.as_ref().map_or(0, |g| {
            u32::try_from(g.agents().count(&agent_id)).unwrap_or(u32::MAX)
        })
    }

    /// Open connections (authenticated or not).
    #[napi(catch_unwind)]
    pub fn connection_count(&self) -> u32 {
        self.0.as_ref().map_or(0, |g| {
            u32::try_from(g.hub().connection_count()).unwrap_or(u32::MAX)
        })
    }

    /// Drops this object's gateway now (connections keep theirs); idempotent.
    #[napi(catch_unwind)]
    pub fn free(&mut self) {
        self.0 = Err(crate::freed("GroupGateway"));
    }
}

/// A head a Command moved.
#[napi(object)]
#[derive(Debug)]
pub struct GroupMovedJs {
    pub group_id: String,
    pub sequence: f64,
}

/// A durable Cursor to write into the host's store (an `ACK` moved it forward).
#[napi(object)]
#[derive(Debug)]
pub struct CursorAcknowledgedJs {
    pub agent_id: String,
    pub group_id: String,
    pub sequence: f64,
    /// The `ACK` (for `onCursorStoreFailed`).
    pub frame_id: String,
}

/// A held `SUBSCRIBE` waits for the stored Cursors of these Groups (`onStoredCursors`).
#[napi(object)]
#[derive(Debug)]
pub struct CursorsWantedJs {
    pub agent_id: String,
    pub group_ids: Vec<String>,
    pub frame_id: String,
}

/// What one input gives the host: the frames to write in order, the close after them (code
/// and reason, or absent), the heads this connection's Commands moved, the Cursors to write
/// into the host's store and the question a held SUBSCRIBE waits on (host Cursor store only),
/// and the machine's state afterwards.
#[napi(object)]
pub struct GatewayDrain {
    pub frames: Vec<Buffer>,
    pub close_code: Option<u32>,
    pub close_reason: Option<String>,
    pub moved: Vec<GroupMovedJs>,
    pub acknowledged: Vec<CursorAcknowledgedJs>,
    pub wanted: Option<CursorsWantedJs>,
    /// The drain stopped at its bound: write these, then `poll` for the rest.
    pub more: bool,
    pub wants_input: bool,
    pub closed: bool,
    pub agent_id: Option<String>,
    pub session_epoch: Option<f64>,
}

impl std::fmt::Debug for GatewayDrain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewayDrain")
            .field("frames", &self.frames.len())
            .field("close_code", &self.close_code)
            .finish_non_exhaustive()
    }
}

/// The drain before it becomes JavaScript values (built on the worker thread).
#[derive(Debug, Default)]
pub struct Drained {
    frames: Vec<Vec<u8>>,
    close: Option<(u16, &'static str)>,
    moved: Vec<(String, u64)>,
    acknowledged: Vec<(String, String, u64, String)>,
    wanted: Option<(String, Vec<String>, String)>,
    more: bool,
    wants_input: bool,
    closed: bool,
    agent_id: Option<String>,
    session_epoch: Option<u64>,
}

/// Frames one drain takes at most (and their bytes): the host writes them, waits for the socket
/// to take them, then polls again (`more`). Taking a frame lets a blocked Group read its next
/// page from the Core, so an unbounded drain would pull a whole catch-up past the socket's
/// backpressure; the Rust server's writer holds the same bound in flight.
const DRAIN_FRAMES: usize = 8;
const DRAIN_BYTES: usize = 512 << 10;

fn drain(connection: &mut Connection, now: UnixMillis, bounded: bool) -> Drained {
    let mut out = Drained::default();
    let mut bytes = 0;
    loop {
        if bounded && (out.frames.len() >= DRAIN_FRAMES || bytes >= DRAIN_BYTES) {
            out.more = true;
            break;
        }
        match connection.poll_output(now) {
            Some(Output::Frame(frame)) => {
                bytes += frame.len();
                out.frames.push(frame);
            }
            Some(Output::Close(close)) => {
                out.close = Some((close.code, close.reason));
                break;
            }
            None => break,
        }
    }
    while let Some(moved) = connection.poll_notification() {
        out.moved.push((moved.group_id, moved.sequence));
    }
    while let Some(a) = connection.poll_acknowledged() {
        out.acknowledged
            .push((a.agent_id, a.group_id, a.sequence, a.frame_id));
    }
    out.wanted = connection
        .poll_cursors_wanted()
        .map(|w| (w.agent_id, w.group_ids, w.frame_id));
    out.wants_input = connection.wants_input();
    out.closed = connection.is_closed();
    out.agent_id = connection.agent_id().map(str::to_owned);
    out.session_epoch = connection.session_epoch();
    out
}

/// One input of a connection.
#[derive(Debug)]
enum Input {
    Text(Vec<u8>),
    Binary,
    TooBig,
    Tick,
    GroupMoved(String, Option<u64>),
    Ping,
    Poll,
    /// The host's stored Cursors (`None`: its store failed).
    StoredCursors(Option<Vec<u64>>),
    /// The host's store failed to write the Cursor of (group, `ACK` frame).
    CursorStoreFailed(String, String),
}

/// One input fed and drained on a libuv worker thread.
#[derive(Debug)]
pub struct ConnectionTask {
    connection: Arc<Mutex<Connection>>,
    input: Input,
    now: UnixMillis,
}

fn locked(connection: &Mutex<Connection>) -> MutexGuard<'_, Connection> {
    // One host loop drives a connection; a panic inside the machine is a bug, and the
    // machine never half-applies a frame, so its state stays usable.
    connection.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Task for ConnectionTask {
    type Output = Drained;
    type JsValue = GatewayDrain;

    fn compute(&mut self) -> napi::Result<Drained> {
        let now = self.now;
        let input = std::mem::replace(&mut self.input, Input::Poll);
        let connection = &self.connection;
        catch_unwind(AssertUnwindSafe(|| {
            let mut c = locked(connection);
            match input {
                Input::Text(bytes) => c.on_text(&bytes, now),
                Input::Binary => c.on_binary(now),
                Input::TooBig => c.on_too_big(now),
                Input::Tick => c.on_tick(now),
                Input::GroupMoved(group, sequence) => c.on_group_moved(&group, sequence, now),
                Input::Ping => c.ping(now),
                Input::Poll => {}
                Input::StoredCursors(Some(values)) => c.on_stored_cursors(Ok(&values), now),
                Input::StoredCursors(None) => c.on_stored_cursors(Err(()), now),
                Input::CursorStoreFailed(group, frame) => {
                    c.on_cursor_store_failed(&group, &frame, now);
                }
            }
            drain(&mut c, now, true)
        }))
        .map_err(|_| napi::Error::from_reason("the gateway panicked (a bug)"))
    }

    fn resolve(&mut self, _env: Env, out: Drained) -> napi::Result<GatewayDrain> {
        Ok(out.into_js())
    }
}

impl Drained {
    fn into_js(self) -> GatewayDrain {
        let out = self;
        GatewayDrain {
            frames: out.frames.into_iter().map(Buffer::from).collect(),
            close_code: out.close.map(|(code, _)| u32::from(code)),
            close_reason: out.close.map(|(_, reason)| reason.to_owned()),
            moved: out
                .moved
                .into_iter()
                .map(|(group_id, sequence)| GroupMovedJs {
                    group_id,
                    sequence: sequence as f64,
                })
                .collect(),
            acknowledged: out
                .acknowledged
                .into_iter()
                .map(
                    |(agent_id, group_id, sequence, frame_id)| CursorAcknowledgedJs {
                        agent_id,
                        group_id,
                        sequence: sequence as f64,
                        frame_id,
                    },
                )
                .collect(),
            wanted: out
                .wanted
                .map(|(agent_id, group_ids, frame_id)| CursorsWantedJs {
                    agent_id,
                    group_ids,
                    frame_id,
                }),
            more: out.more,
            wants_input: out.wants_input,
            closed: out.closed,
            agent_id: out.agent_id,
            session_epoch: out.session_epoch.map(|e| e as f64),
        }
    }
}

/// One WebSocket's `server::Connection`. Every input is a Promise of a `GatewayDrain`; the
/// host feeds one input at a time (in order) and writes what each drain gives.
#[napi]
#[derive(Debug)]
pub struct GatewayConnection {
    id: f64,
    inner: Option<Arc<Mutex<Connection>>>,
}

impl GatewayConnection {
    fn task(&self, input: Input, now: f64) -> Either<AsyncTask<ConnectionTask>, String> {
        match &self.inner {
            Some(connection) => Either::A(AsyncTask::new(ConnectionTask {
                connection: Arc::clone(connection),
                input,
                now: millis(now),
            })),
            None => Either::B(crate::freed("GatewayConnection")),
        }
    }
}

#[napi]
impl GatewayConnection {
    /// The hub ID.
    #[napi(getter)]
    pub fn id(&self) -> f64 {
        self.id
    }

    /// A text message's bytes, exactly as received.
    #[napi(catch_unwind)]
    pub fn on_text(&self, data: &[u8], now: f64) -> Either<AsyncTask<ConnectionTask>, String> {
        self.task(Input::Text(data.to_vec()), now)
    }

    /// A binary message arrived (§17.1: none carries a protocol object in 0.1).
    #[napi(catch_unwind)]
    pub fn on_binary(&self, now: f64) -> Either<AsyncTask<ConnectionTask>, String> {
        self.task(Input::Binary, now)
    }

    /// A message the WebSocket library refused from its header (over `maxFrameBytes`).
    #[napi(catch_unwind)]
    pub fn on_too_big(&self, now: f64) -> Either<AsyncTask<ConnectionTask>, String> {
        self.task(Input::TooBig, now)
    }

    /// The same, answered at once on the calling thread: `ws` closes the socket with 1009
    /// right after reporting such a message, so the machine's `ERROR` must be written before
    /// (the machine only builds the error and its close here; it does not read the store).
    #[napi(catch_unwind)]
    pub fn on_too_big_now(&self, now: f64) -> Either<GatewayDrain, String> {
        let Some(connection) = &self.inner else {
            return Either::B(crate::freed("GatewayConnection"));
        };
        let now = millis(now);
        let mut c = locked(connection);
        c.on_too_big(now);
        Either::A(drain(&mut c, now, false).into_js())
    }

    /// The host's timer (≈ 1 s): handshake timeout, head polls, resumes.
    #[napi(catch_unwind)]
    pub fn on_tick(&self, now: f64) -> Either<AsyncTask<ConnectionTask>, String> {
        self.task(Input::Tick, now)
    }

    /// A Group's head moved (another connection's Command; `sequence` absent: unknown).
    #[napi(catch_unwind)]
    pub fn on_group_moved(
        &self,
        group_id: String,
        sequence: Option<f64>,
        now: f64,
    ) -> Either<AsyncTask<ConnectionTask>, String> {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let sequence = sequence
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(|s| s as u64);
        self.task(Input::GroupMoved(group_id, sequence), now)
    }

    /// A liveness `PING` (§17.3).
    #[napi(catch_unwind)]
    pub fn ping(&self, now: f64) -> Either<AsyncTask<ConnectionTask>, String> {
        self.task(Input::Ping, now)
    }

    /// Drains what is ready without input (after the socket drained: paused Groups resume).
    #[napi(catch_unwind)]
    pub fn poll(&self, now: f64) -> Either<AsyncTask<ConnectionTask>, String> {
        self.task(Input::Poll, now)
    }

    /// The host's answer to a held `SUBSCRIBE`'s question: one stored Cursor per Group in its
    /// order, or absent when the store failed. A value that is not a safe non-negative integer
    /// counts as a failed store (the machine refuses the `SUBSCRIBE` with a retryable
    /// `INTERNAL_ERROR`).
    #[napi(catch_unwind)]
    pub fn on_stored_cursors(
        &self,
        cursors: Option<Vec<f64>>,
        now: f64,
    ) -> Either<AsyncTask<ConnectionTask>, String> {
        const MAX_SAFE: f64 = 9_007_199_254_740_991.0;
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let values = cursors.and_then(|items| {
            items
                .into_iter()
                .map(|v| (v.fract() == 0.0 && (0.0..=MAX_SAFE).contains(&v)).then_some(v as u64))
                .collect::<Option<Vec<u64>>>()
        });
        self.task(Input::StoredCursors(values), now)
    }

    /// The host's store failed to write the Cursor of `group_id` reported for the `ACK`
    /// `frame_id`: a retryable `INTERNAL_ERROR` answers that `ACK`.
    #[napi(catch_unwind)]
    pub fn on_cursor_store_failed(
        &self,
        group_id: String,
        frame_id: String,
        now: f64,
    ) -> Either<AsyncTask<ConnectionTask>, String> {
        self.task(Input::CursorStoreFailed(group_id, frame_id), now)
    }

    /// The socket closed: leave the hub and the per-Agent count (idempotent), and drop the
    /// machine.
    #[napi(catch_unwind)]
    pub fn on_closed(&mut self) {
        if let Some(connection) = self.inner.take() {
            locked(&connection).on_closed();
        }
    }

    /// The same as `on_closed` (every class has `free()`).
    #[napi(catch_unwind)]
    pub fn free(&mut self) {
        self.on_closed();
    }
}
