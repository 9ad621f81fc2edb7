//! The sans-IO server machines of `missionweaveprotocol-gateway` (`docs/network.md`) for
//! `missionweaveprotocol.gateway.GroupGateway`: conversions only. Every frame decision —
//! HELLO, SUBSCRIBE, COMMAND, ACK, PING, errors, close codes, backpressure — is the Rust
//! `server::Connection`'s; Python moves bytes between the WebSocket and it.
//!
//! Each input call feeds the machine and drains it in one GIL release (the machine may block
//! on the store): it returns `(frames, close, moved, acknowledged, wanted)` — the text frames to
//! write in order, the close `(code, reason)` after them (or `None`), the `(group, sequence)`
//! heads this connection's Commands moved (the host wakes `wake_list(group, id)`), and, for a
//! gateway keeping the host's Cursor store (`host_cursors=True`, `server/host_cursors.rs`), the
//! `(agent, group, sequence, ack_frame_id)` Cursors to write into it and the
//! `(agent, [group, …], subscribe_frame_id)` question a held SUBSCRIBE waits on
//! (`on_stored_cursors` answers it).

use std::sync::{Arc, Mutex, MutexGuard};

use missionweaveprotocol_gateway::server::{
    Close, Connection, CoreGateway, DurableCursors, Gateway, GatewayCore, Limits, Output,
};
use missionweaveprotocol_host::OsRandom;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use crate::auth::NativeSessionAuthority;
use crate::convert;
use crate::core::NativeCore;
use crate::errors;

/// What one drain gives the host.
struct Drained {
    frames: Vec<Vec<u8>>,
    close: Option<Close>,
    moved: Vec<(String, u64)>,
    acknowledged: Vec<(String, String, u64, String)>,
    wanted: Option<(String, Vec<String>, String)>,
}

fn drain(connection: &mut Connection, now: UnixMillis) -> Drained {
    let mut frames = Vec::new();
    let mut close = None;
    while let Some(output) = connection.poll_output(now) {
        match output {
            Output::Frame(bytes) => frames.push(bytes),
            Output::Close(c) => {
                close = Some(c);
                break;
            }
        }
    }
    let mut moved = Vec::new();
    while let Some(m) = connection.poll_notification() {
        moved.push((m.group_id, m.sequence));
    }
    let mut acknowledged = Vec::new();
    while let Some(a) = connection.poll_acknowledged() {
        acknowledged.push((a.agent_id, a.group_id, a.sequence, a.frame_id));
    }
    let wanted = connection
        .poll_cursors_wanted()
        .map(|w| (w.agent_id, w.group_ids, w.frame_id));
    Drained {
        frames,
        close,
        moved,
        acknowledged,
        wanted,
    }
}

type DrainTuple<'py> = (
    Bound<'py, PyList>,
    Option<(u16, &'static str)>,
    Vec<(String, u64)>,
    Vec<(String, String, u64, String)>,
    Option<(String, Vec<String>, String)>,
);

fn to_python<'py>(py: Python<'py>, drained: Drained) -> PyResult<DrainTuple<'py>> {
    let frames = PyList::new(py, drained.frames.iter().map(|f| PyBytes::new(py, f)))?;
    Ok((
        frames,
        drained.close.map(|c| (c.code, c.reason)),
        drained.moved,
        drained.acknowledged,
        drained.wanted,
    ))
}

/// The limits a host may set (the rest keep `Limits::default()`); the gateway checks them.
fn limits_arg(py: Python<'_>, limits: Option<&Bound<'_, PyAny>>) -> PyResult<Limits> {
    let mut out = Limits::default();
    let Some(limits) = convert::present(limits) else {
        return Ok(out);
    };
    for (name, value) in convert::mapping_items(py, limits, "limits")? {
        let name = convert::str_arg(py, &name, "limit name")?;
        let count = || convert::count_arg(py, &value, &name);
        match name.as_ref() {
            "max_frame_bytes" => out.max_frame_bytes = count()?,
            "handshake_timeout_ms" => out.handshake_timeout_ms = count()? as u64,
            "max_hello_attempts" => {
                out.max_hello_attempts = u32::try_from(count()?)
                    .map_err(|_| errors::invalid_input(py, "max_hello_attempts is too large"))?;
            }
            "max_connections_per_agent" => out.max_connections_per_agent = count()?,
            "max_groups_per_subscribe" => out.max_groups_per_subscribe = count()?,
            "max_subscriptions" => out.max_subscriptions = count()?,
            "max_queue_frames" => out.max_queue_frames = count()?,
            "group_share_frames" => out.group_share_frames = count()?,
            "poll_interval_ms" => out.poll_interval_ms = count()? as u64,
            other => {
                return Err(errors::invalid_input(
                    py,
                    format!("{other:?} is not a gateway limit a host may set"),
                ));
            }
        }
    }
    Ok(out)
}

/// `NativeGateway(core, sessions, limits=None, host_cursors=False)`: what every connection of
/// one server shares (the Core seam over the Python `Core`'s engine, a twin of `sessions`, the
/// delivery hub). `host_cursors`: SUBSCRIBE resumes from the host's Cursor store and ACKs are
/// reported for it (`DurableCursors::Host`).
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug)]
pub struct NativeGateway {
    inner: Arc<Gateway>,
}

#[pymethods]
impl NativeGateway {
    #[new]
    #[pyo3(signature = (core, sessions, limits = None, host_cursors = false))]
    fn py_new(
        py: Python<'_>,
        core: &Bound<'_, PyAny>,
        sessions: &Bound<'_, PyAny>,
        limits: Option<&Bound<'_, PyAny>>,
        host_cursors: bool,
    ) -> PyResult<Self> {
        let core = convert::typed::<NativeCore>(py, core, "core", "Core")?;
        let sessions =
            convert::typed::<NativeSessionAuthority>(py, sessions, "sessions", "SessionAuthority")?;
        let authority = sessions
            .get()
            .twin()
            .map_err(|e| errors::describe(py, &e))?;
        let seam: Arc<dyn GatewayCore> = Arc::new(CoreGateway::new(Arc::clone(&core.get().inner)));
        let limits = limits_arg(py, limits)?;
        let cursors = if host_cursors {
            DurableCursors::Host
        } else {
            DurableCursors::Core
        };
        let inner = Gateway::with_durable_cursors(seam, authority, limits, cursors)
            .map_err(|e| errors::invalid_input(py, e.to_string()))?;
        Ok(Self { inner })
    }

    /// A machine for a newly accepted WebSocket at `now_ms`.
    fn connect(&self, py: Python<'_>, now_ms: i64) -> PyResult<NativeConnection> {
        let connection = self
            .inner
            .connect(UnixMillis(now_ms), Box::new(OsRandom))
            .map_err(|_| errors::invalid_input(py, "no randomness available from the OS"))?;
        Ok(NativeConnection {
            inner: Mutex::new(connection),
        })
    }

    /// The other connections subscribed to `group_id` (to wake after `except_id`'s Command).
    fn wake_list(&self, group_id: &str, except_id: u64) -> Vec<u64> {
        self.inner
            .hub()
            .wake_list(
                group_id,
                missionweaveprotocol_gateway::server::ConnectionId(except_id),
            )
            .into_iter()
            .map(|id| id.0)
            .collect()
    }

    /// Authenticated connections of `agent_id`.
    fn agent_connections(&self, agent_id: &str) -> usize {
        self.inner.agents().count(agent_id)
    }

    /// Open connections (authenticated or not).
    #[getter]
    fn connection_count(&self) -> usize {
        self.inner.hub().connection_count()
    }
}

/// One WebSocket's `server::Connection`. Every input returns `(frames, close, moved)`.
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug)]
pub struct NativeConnection {
    inner: Mutex<Connection>,
}

impl NativeConnection {
    fn locked(&self) -> MutexGuard<'_, Connection> {
        // One host task drives a connection; a panic inside the machine is a bug, and the
        // machine's state stays whatever it was (it never half-applies a frame).
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn run<'py>(
        &self,
        py: Python<'py>,
        now_ms: i64,
        input: impl FnOnce(&mut Connection, UnixMillis) + Send,
    ) -> PyResult<DrainTuple<'py>> {
        let now = UnixMillis(now_ms);
        let drained = py.detach(|| {
            let mut connection = self.locked();
            input(&mut connection, now);
            drain(&mut connection, now)
        });
        to_python(py, drained)
    }
}

#[pymethods]
impl NativeConnection {
    /// A text message's bytes (exactly as received).
    fn on_text<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
        now_ms: i64,
    ) -> PyResult<DrainTuple<'py>> {
        let bytes = convert::bytes_arg(py, data, "data", true)?.into_owned();
        self.run(py, now_ms, move |c, now| c.on_text(&bytes, now))
    }

    /// A binary message arrived (§17.1: none carries a protocol object in 0.1).
    fn on_binary<'py>(&self, py: Python<'py>, now_ms: i64) -> PyResult<DrainTuple<'py>> {
        self.run(py, now_ms, |c, now| c.on_binary(now))
    }

    /// A message over `max_frame_bytes` that the host refused from its header (§17.1: one
    /// `ERROR`, close 1009). ASGI servers enforce their own message limit before the app sees
    /// the message; hosts that read frame headers themselves call this.
    fn on_too_big<'py>(&self, py: Python<'py>, now_ms: i64) -> PyResult<DrainTuple<'py>> {
        self.run(py, now_ms, |c, now| c.on_too_big(now))
    }

    /// The host's timer (≈ 1 s): handshake timeout, head polls, resumes.
    fn on_tick<'py>(&self, py: Python<'py>, now_ms: i64) -> PyResult<DrainTuple<'py>> {
        self.run(py, now_ms, |c, now| c.on_tick(now))
    }

    /// A Group's head moved (another connection's Command, or another process).
    #[pyo3(signature = (group_id, sequence, now_ms))]
    fn on_group_moved<'py>(
        &self,
        py: Python<'py>,
        group_id: String,
        sequence: Option<u64>,
        now_ms: i64,
    ) -> PyResult<DrainTuple<'py>> {
        self.run(py, now_ms, move |c, now| {
            c.on_group_moved(&group_id, sequence, now);
        })
    }

    /// A liveness `PING` (§17.3).
    fn ping<'py>(&self, py: Python<'py>, now_ms: i64) -> PyResult<DrainTuple<'py>> {
        self.run(py, now_ms, |c, now| c.ping(now))
    }

    /// Drains what is ready without input (after the socket drained: paused Groups resume).
    fn poll<'py>(&self, py: Python<'py>, now_ms: i64) -> PyResult<DrainTuple<'py>> {
        self.run(py, now_ms, |_, _| {})
    }

    /// The host's answer to the held SUBSCRIBE's question: one stored Cursor per Group in its
    /// order, or `None` when the store failed (each must be an int in 0..2^64; anything else
    /// counts as a failed store: the SUBSCRIBE is refused with a retryable `INTERNAL_ERROR`).
    #[pyo3(signature = (cursors, now_ms))]
    fn on_stored_cursors<'py>(
        &self,
        py: Python<'py>,
        cursors: Option<Vec<Bound<'py, PyAny>>>,
        now_ms: i64,
    ) -> PyResult<DrainTuple<'py>> {
        // A value that is not a non-negative int (a bool included) is the store's failure,
        // not the caller's: the machine answers it on the wire.
        let values: Option<Vec<u64>> = cursors.and_then(|items| {
            items
                .iter()
                .map(|item| {
                    if item.is_instance_of::<pyo3::types::PyBool>() {
                        None
                    } else {
                        item.extract::<u64>().ok()
                    }
                })
                .collect()
        });
        self.run(py, now_ms, move |c, now| match &values {
            Some(values) => c.on_stored_cursors(Ok(values), now),
            None => c.on_stored_cursors(Err(()), now),
        })
    }

    /// The host's store failed to write the Cursor of `group_id` reported for the `ACK`
    /// `frame_id`: a retryable `INTERNAL_ERROR` answers that `ACK`.
    fn on_cursor_store_failed<'py>(
        &self,
        py: Python<'py>,
        group_id: String,
        frame_id: String,
        now_ms: i64,
    ) -> PyResult<DrainTuple<'py>> {
        self.run(py, now_ms, move |c, now| {
            c.on_cursor_store_failed(&group_id, &frame_id, now);
        })
    }

    /// The socket closed: leave the hub and the per-Agent count.
    fn on_closed(&self, py: Python<'_>) {
        py.detach(|| self.locked().on_closed());
    }

    /// The hub ID.
    #[getter]
    fn id(&self) -> u64 {
        self.locked().id().0
    }

    /// The authenticated Agent, if any.
    #[getter]
    fn agent_id(&self) -> Option<String> {
        self.locked().agent_id().map(str::to_owned)
    }

    /// The Session Epoch, once authenticated.
    #[getter]
    fn session_epoch(&self) -> Option<u64> {
        self.locked().session_epoch()
    }

    /// False while the reply queue is at its bound: stop reading the socket.
    #[getter]
    fn wants_input(&self) -> bool {
        self.locked().wants_input()
    }

    /// Whether the machine closed.
    #[getter]
    fn is_closed(&self) -> bool {
        self.locked().is_closed()
    }

    /// The subscribed Groups, sorted.
    fn subscribed_groups(&self) -> Vec<String> {
        let mut groups: Vec<String> = self
            .locked()
            .subscribed_groups()
            .map(str::to_owned)
            .collect();
        groups.sort();
        groups
    }

    /// Whether `group_id` is paused by backpressure.
    fn is_paused(&self, group_id: &str) -> bool {
        self.locked().is_paused(group_id)
    }

    /// The ephemeral Presence Record (§6.2), as plain values.
    fn presence<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let presence = self.locked().presence();
        presence.map(|v| convert::to_python(py, &v)).transpose()
    }
}
