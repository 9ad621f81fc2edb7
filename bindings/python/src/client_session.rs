//! The sans-IO client session `missionweaveprotocol-gateway::client::Session` for
//! `missionweaveprotocol.client`: conversions only. The handshake, frame building, Event
//! verification (six stages, Group Authority signer), deduplication, Group ordering, ACK
//! bounds and Command outcomes are the Rust session's; the asyncio host moves bytes and time.
//!
//! `poll_events` hands each `SessionEvent` as a tuple whose first item names it:
//! `("authenticated", epoch, token, expires_at)`, `("handshake_failed", error)`,
//! `("event", group_id, sequence, event_id, bytes, in_order)`,
//! `("command_accepted", frame_id, action_id, event_id, group_id, sequence)`,
//! `("command_refused", frame_id, action_id, error)`, `("command_timed_out", frame_id,
//! action_id)`, `("cursor_too_old", group_id, snapshot_artifact_hash)`, `("gap", group_id,
//! cursor)`, `("rejected", event_id, reason)`, `("error", error)`, `("pong", nonce)`; an
//! `error` is the wire `error` object as a dict (without `occurredAt`).

use std::sync::{Arc, Mutex, MutexGuard};

use missionweaveprotocol::crypto::Signer;
use missionweaveprotocol::{Principal, PrincipalType};
use missionweaveprotocol_gateway::client::{ClientConfig, ClientError, Session, SessionEvent};
use missionweaveprotocol_gateway::frames::{Attention, ErrorBody, SubscribeGroup};
use missionweaveprotocol_host::OsRandom;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

use crate::convert;
use crate::core::registry_arg;
use crate::signer::SignerArg;

/// A refusal of the session: `ValueError` subclass `ClientSessionError` of
/// `missionweaveprotocol.client`, with `kind` naming the `ClientError` variant.
fn client_error(py: Python<'_>, error: &ClientError) -> PyErr {
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
    let build = || -> PyResult<PyErr> {
        let class = py
            .import("missionweaveprotocol.client")?
            .getattr("ClientSessionError")?;
        Ok(PyErr::from_value(class.call1((error.to_string(), kind))?))
    };
    build().unwrap_or_else(|e| e)
}

fn error_dict<'py>(py: Python<'py>, body: &ErrorBody) -> PyResult<Bound<'py, PyAny>> {
    let mut object = body.to_object("1970-01-01T00:00:00Z");
    object.remove("occurredAt");
    convert::to_python(py, &missionweaveprotocol::json::Value::Object(object))
}

fn event_tuple<'py>(py: Python<'py>, event: SessionEvent) -> PyResult<Bound<'py, PyTuple>> {
    let items: Vec<Bound<'py, PyAny>> = match event {
        SessionEvent::Authenticated {
            session_epoch,
            session_token,
            expires_at,
        } => vec![
            "authenticated".into_pyobject(py)?.into_any(),
            session_epoch.into_pyobject(py)?.into_any(),
            session_token.expose().into_pyobject(py)?.into_any(),
            expires_at.into_pyobject(py)?.into_any(),
        ],
        SessionEvent::HandshakeFailed(body) => vec![
            "handshake_failed".into_pyobject(py)?.into_any(),
            error_dict(py, &body)?,
        ],
        SessionEvent::Event(event) => vec![
            "event".into_pyobject(py)?.into_any(),
            event.group_id.into_pyobject(py)?.into_any(),
            event.sequence.into_pyobject(py)?.into_any(),
            event.event_id.into_pyobject(py)?.into_any(),
            PyBytes::new(py, &event.bytes).into_any(),
            pyo3::types::PyBool::new(py, event.in_order)
                .to_owned()
                .into_any(),
        ],
        SessionEvent::CommandAccepted {
            ticket,
            event_id,
            group_id,
            sequence,
        } => vec![
            "command_accepted".into_pyobject(py)?.into_any(),
            ticket.frame_id.into_pyobject(py)?.into_any(),
            ticket.action_id.into_pyobject(py)?.into_any(),
            event_id.into_pyobject(py)?.into_any(),
            group_id.into_pyobject(py)?.into_any(),
            sequence.into_pyobject(py)?.into_any(),
        ],
        SessionEvent::CommandRefused { ticket, error } => vec![
            "command_refused".into_pyobject(py)?.into_any(),
            ticket.frame_id.into_pyobject(py)?.into_any(),
            ticket.action_id.into_pyobject(py)?.into_any(),
            error_dict(py, &error)?,
        ],
        SessionEvent::CommandTimedOut(ticket) => vec![
            "command_timed_out".into_pyobject(py)?.into_any(),
            ticket.frame_id.into_pyobject(py)?.into_any(),
            ticket.action_id.into_pyobject(py)?.into_any(),
        ],
        SessionEvent::CursorTooOld {
            group_id,
            snapshot_artifact_hash,
        } => vec![
            "cursor_too_old".into_pyobject(py)?.into_any(),
            group_id.into_pyobject(py)?.into_any(),
            snapshot_artifact_hash.into_pyobject(py)?.into_any(),
        ],
        SessionEvent::Gap { group_id, cursor } => vec![
            "gap".into_pyobject(py)?.into_any(),
            group_id.into_pyobject(py)?.into_any(),
            cursor.into_pyobject(py)?.into_any(),
        ],
        SessionEvent::Rejected { event_id, reason } => vec![
            "rejected".into_pyobject(py)?.into_any(),
            event_id.into_pyobject(py)?.into_any(),
            reason.into_pyobject(py)?.into_any(),
        ],
        SessionEvent::Error(body) => vec![
            "error".into_pyobject(py)?.into_any(),
            error_dict(py, &body)?,
        ],
        SessionEvent::Pong { nonce } => vec![
            "pong".into_pyobject(py)?.into_any(),
            nonce.into_pyobject(py)?.into_any(),
        ],
    };
    PyTuple::new(py, items)
}

/// `NativeClientSession(agent_id, registry, authority_id, signing_key, *, command_timeout_ms)`:
/// one connection's client session. `registry` is the Organization Registry (an
/// `AgentRegistryKeyResolver` or its bytes) every Event is verified against; `authority_id`
/// the Group Authority service whose key must sign every Event; `signing_key` a `SigningKey`
/// or any object of the `SigningKey` Protocol (it signs the HELLO challenge).
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug)]
pub struct NativeClientSession {
    inner: Mutex<Session>,
}

impl NativeClientSession {
    fn locked(&self) -> MutexGuard<'_, Session> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[pymethods]
impl NativeClientSession {
    #[new]
    #[pyo3(signature = (agent_id, registry, authority_id, signing_key, *, command_timeout_ms = None))]
    fn py_new(
        py: Python<'_>,
        agent_id: &Bound<'_, PyAny>,
        registry: &Bound<'_, PyAny>,
        authority_id: &Bound<'_, PyAny>,
        signing_key: &Bound<'_, PyAny>,
        command_timeout_ms: Option<u64>,
    ) -> PyResult<Self> {
        let agent_id = convert::str_arg(py, agent_id, "agent_id")?.into_owned();
        let authority = convert::str_arg(py, authority_id, "authority_id")?.into_owned();
        let registry = registry_arg(py, registry)?;
        let signer: Arc<dyn Signer + Send + Sync> = match SignerArg::extract(py, signing_key)? {
            SignerArg::Native(key) => Arc::new(key.get().inner.clone()),
            SignerArg::Python(signer) => Arc::from(signer as Box<dyn Signer + Send + Sync>),
        };
        let mut config = ClientConfig::new(
            agent_id,
            registry,
            Principal::new(PrincipalType::Service, authority),
        );
        if let Some(timeout) = command_timeout_ms {
            config.command_timeout_ms = timeout;
        }
        let session =
            Session::new(config, signer, Box::new(OsRandom)).map_err(|e| client_error(py, &e))?;
        Ok(Self {
            inner: Mutex::new(session),
        })
    }

    /// Queues `HELLO/client_init`.
    fn start(&self, py: Python<'_>, now_ms: i64) -> PyResult<()> {
        self.locked()
            .start(UnixMillis(now_ms))
            .map_err(|e| client_error(py, &e))
    }

    /// `SUBSCRIBE` of `(group_id, after_sequence, attention | None)` items; the frame ID.
    fn subscribe(
        &self,
        py: Python<'_>,
        groups: &Bound<'_, PyAny>,
        now_ms: i64,
    ) -> PyResult<String> {
        let mut entries = Vec::new();
        for item in convert::iter_arg(py, groups, "groups")? {
            let (group_id, after_sequence, attention): (String, u64, Option<Bound<'_, PyAny>>) =
                item?.extract()?;
            let attention = match convert::present(attention.as_ref()) {
                Some(value) => Some(Attention::from_value(&crate::canonical_value(py, value)?)),
                None => None,
            };
            entries.push(SubscribeGroup {
                group_id,
                after_sequence,
                attention,
            });
        }
        self.locked()
            .subscribe(&entries, UnixMillis(now_ms))
            .map_err(|e| client_error(py, &e))
    }

    /// A signed Command's exact bytes in a `COMMAND`: `(frame_id, action_id)`.
    fn send_command(
        &self,
        py: Python<'_>,
        command: &Bound<'_, PyAny>,
        now_ms: i64,
    ) -> PyResult<(String, String)> {
        let bytes = convert::bytes_arg(py, command, "command", false)?.into_owned();
        self.locked()
            .send_command(&bytes, UnixMillis(now_ms))
            .map(|t| (t.frame_id, t.action_id))
            .map_err(|e| client_error(py, &e))
    }

    /// `ACK` of `(group_id, sequence)` pairs, each at most the Group's contiguous Cursor.
    fn acknowledge(
        &self,
        py: Python<'_>,
        cursors: Vec<(String, u64)>,
        now_ms: i64,
    ) -> PyResult<()> {
        let refs: Vec<(&str, u64)> = cursors.iter().map(|(g, s)| (g.as_str(), *s)).collect();
        self.locked()
            .acknowledge(&refs, UnixMillis(now_ms))
            .map_err(|e| client_error(py, &e))
    }

    /// A `PING`, optionally with a Presence Record; its nonce.
    #[pyo3(signature = (presence, now_ms))]
    fn ping(
        &self,
        py: Python<'_>,
        presence: Option<&Bound<'_, PyAny>>,
        now_ms: i64,
    ) -> PyResult<String> {
        let presence = match convert::present(presence) {
            Some(value) => Some(crate::canonical_value(py, value)?),
            None => None,
        };
        self.locked()
            .ping(presence.as_ref(), UnixMillis(now_ms))
            .map_err(|e| client_error(py, &e))
    }

    /// Command timeouts.
    fn on_tick(&self, now_ms: i64) {
        self.locked().on_tick(UnixMillis(now_ms));
    }

    /// A text frame from the server (Events verified with the GIL released); a frame out of
    /// place raises `ClientSessionError` (close and reconnect).
    fn on_text(&self, py: Python<'_>, data: &Bound<'_, PyAny>, now_ms: i64) -> PyResult<()> {
        let bytes = convert::bytes_arg(py, data, "data", true)?.into_owned();
        let result = py.detach(|| self.locked().on_text(&bytes, UnixMillis(now_ms)));
        result.map_err(|e| client_error(py, &e))
    }

    /// The frames to send, in order.
    fn poll_output<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mut session = self.locked();
        let mut out = Vec::new();
        while let Some(frame) = session.poll_output() {
            out.push(frame);
        }
        drop(session);
        PyList::new(py, out.iter().map(|f| PyBytes::new(py, f)))
    }

    /// What happened, in order (tuples: see the module).
    fn poll_events<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mut session = self.locked();
        let mut events = Vec::new();
        while let Some(event) = session.poll_event() {
            events.push(event);
        }
        drop(session);
        let out = PyList::empty(py);
        for event in events {
            out.append(event_tuple(py, event)?)?;
        }
        Ok(out)
    }

    /// A late member's `visibilityStartSequence` in `group_id`.
    fn set_visibility_start(&self, py: Python<'_>, group_id: &str, start: u64) -> PyResult<()> {
        self.locked()
            .set_visibility_start(group_id, start)
            .map_err(|e| client_error(py, &e))
    }

    /// Each subscribed Group's contiguous Cursor.
    fn cursors<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for (group, cursor) in self.locked().cursors() {
            out.set_item(group, cursor)?;
        }
        Ok(out)
    }

    /// One Group's Cursor (`None`: not subscribed).
    fn cursor(&self, group_id: &str) -> Option<u64> {
        self.locked().cursor(group_id)
    }

    /// Events buffered out of order in `group_id`.
    fn buffered(&self, group_id: &str) -> usize {
        self.locked().buffered(group_id)
    }

    /// Whether `server_accept` arrived.
    #[getter]
    fn is_authenticated(&self) -> bool {
        self.locked().is_authenticated()
    }

    /// The Session Epoch, once authenticated.
    #[getter]
    fn session_epoch(&self) -> Option<u64> {
        self.locked().session_epoch()
    }

    /// Commands awaiting their outcome.
    #[getter]
    fn pending_commands(&self) -> usize {
        self.locked().pending_commands()
    }
}
