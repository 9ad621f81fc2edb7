"""The authenticated, multiplexed WebSocket gateway (§17) as a FastAPI app, over the Rust
sans-IO gateway (``missionweaveprotocol-gateway``, ``docs/network.md``).

The reference's names and class kinds: :class:`GroupGateway` (``GroupGateway(core, sessions,
*, cursors=None, app=None, clock=None)``, attribute ``app``, WebSocket route ``/ws``),
:class:`CoreGatewayAdapter`, the :class:`GatewayCore` and :class:`CursorStore` Protocols,
:class:`InMemoryCursorStore`, and the exceptions :class:`GatewaySchemaError`,
:class:`SubscriptionDenied`, :class:`UnknownCriticalExtension`,
:class:`CommandAdmissionError`.

Every frame decision is Rust's: each WebSocket gets a ``server::Connection`` machine; this
module only moves a received text message's bytes (and the time) into it, writes the frames it
returns, closes with the code it names, wakes the other subscribers of a Group whose head a
Command moved (the machine reads their Events from the Core), and runs the one-second timer
(handshake timeout, head polls, resumes after backpressure). The machine runs on a worker
thread with the GIL released, so the event loop never blocks on the store.

Where this differs from the reference, on purpose (reference gaps, ``reference-python.md``
§1.26):

- **An error does not end the connection.** One ``ERROR`` frame answers the frame it refuses
  and the socket stays open; only what §17.1 makes fatal closes it — a text message that is not
  JSON (1007), a binary message (1003), not a frame of the schema (1008), a frame over the size
  limit (1009), the handshake timeout (1008) — each after one ``ERROR`` with ``fatal: true``.
- **``retryable`` follows §19** (``BACKPRESSURE``, ``RATE_LIMITED``, ``REVISION_CONFLICT``, ...
  are retryable; the reference always sends ``false``), and every §19 code the gateway can
  meet is produced (``AUTH_REQUIRED`` before HELLO, ``UNSUPPORTED_VERSION``,
  ``GROUP_NOT_FOUND``, ``CURSOR_TOO_OLD``, ``BACKPRESSURE``, ``RATE_LIMITED``,
  ``PROTOCOL_VIOLATION``, ...).
- **Non-disclosure** (§17.2): a Group the Agent may not see is answered byte for byte like one
  that does not exist (``GROUP_NOT_FOUND``), not ``MEMBERSHIP_REQUIRED``.
- **The Session Epoch is the Core's**: HELLO opens it with the bootstrap Command
  ``…identity.session_open`` signed by the Group Authority, so several gateways on one store
  agree; ``sessions`` lends its secret and lifetimes (tokens verify at both).

The ``cursors`` store is consulted as the reference does: every ``ACK`` that moves an Agent's
durable Cursor forward is written into it (``cursors.acknowledge(agent_id, group_id,
sequence)``; a duplicate or older ``ACK`` is never written, so it never moves back), and a
Group subscribed with ``afterSequence`` 0 (the reference's ``GroupCursor`` default: the Agent
names no Cursor) replays after ``cursors.cursor(agent_id, group_id)`` (then the visibility
start; a stored Cursor past the Group's head counts as the head). A Cursor the Agent names is
honoured as §16 says, where the reference takes the higher of the two: a client behind the
stored Cursor gets what it lacks rather than a gap, one ahead gets nothing twice. Which ``ACK``
is written and where replay starts are the Rust machine's decisions
(``server/host_cursors.rs``); this module only calls the store. A store that raises is
answered on the wire with a retryable ``INTERNAL_ERROR`` (the ``SUBSCRIBE`` subscribes nothing;
the ``ACK`` may be sent again). The store's methods may be plain or ``async``; plain ones run
on the event loop, as in the reference. The Core's store keeps its own delivery Cursor too.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import (
    Any,
    Callable,
    Dict,
    List,
    Mapping,
    Optional,
    Protocol,
    Tuple,
    Union,
    runtime_checkable,
)

from fastapi import FastAPI, WebSocket
from starlette.websockets import WebSocketDisconnect

from . import _native
from .auth import SessionAuthority, SessionGrant
from .core import Core
from .errors import AuthenticationError

__all__ = [
    "CommandAdmissionError",
    "CoreGatewayAdapter",
    "CursorStore",
    "GatewayCore",
    "GatewaySchemaError",
    "GroupGateway",
    "InMemoryCursorStore",
    "SubscriptionDenied",
    "UnknownCriticalExtension",
]

_LOG = logging.getLogger(__name__)

Clock = Callable[[], datetime]
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
# How often each connection's timer runs (handshake timeout, head polls, resumes).
_TICK_SECONDS = 1.0
# Socket messages read ahead of the machine, per connection.
_MAX_UNREAD = 8


class GatewaySchemaError(ValueError):
    """A frame or document that fails its schema (wire ``SCHEMA_VALIDATION_FAILED``)."""

    def __init__(self, message: str, *, details: Optional[Mapping[str, Any]] = None) -> None:
        super().__init__(message)
        self.details: Optional[Mapping[str, Any]] = details


class SubscriptionDenied(ValueError):
    """A Group the Agent may not read (on the wire: ``GROUP_NOT_FOUND``, as if absent)."""


class UnknownCriticalExtension(ValueError):
    """A critical extension profile this gateway does not support at that version."""

    def __init__(
        self, profile_uri: str, received_version: str, supported_version: Optional[str]
    ) -> None:
        super().__init__(f"unsupported critical extension {profile_uri} {received_version}")
        self.profile_uri = profile_uri
        self.received_version = received_version
        self.supported_version = supported_version
        self.details: Dict[str, Optional[str]] = {
            "profileUri": profile_uri,
            "receivedVersion": received_version,
            "supportedVersion": supported_version,
        }


class CommandAdmissionError(AuthenticationError):
    """A Command refused before the Core (its session checks)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason, code="AUTH_INVALID_SIGNATURE", reason="command_admission")


@runtime_checkable
class GatewayCore(Protocol):
    """What a :class:`GroupGateway` serves: the authoritative Core (the reference's seam)."""

    async def perform(
        self, *, verify_session: Callable[[], SessionGrant], command_bytes: bytes
    ) -> Dict[str, Any]: ...

    async def replay(
        self, actor: str, group_id: str, *, after_sequence: int
    ) -> List[Dict[str, Any]]: ...


@runtime_checkable
class CursorStore(Protocol):
    """Durable per-(Agent, Group) delivery Cursors (the methods may also be ``async``).

    ``acknowledge`` must never move a Cursor backwards (the gateway only writes forward moves,
    but two connections of one Agent may race); ``cursor`` is 0 for an unknown pair.
    """

    def acknowledge(self, agent_id: str, group_id: str, sequence: int) -> Any: ...

    def cursor(self, agent_id: str, group_id: str) -> Any: ...


class InMemoryCursorStore:
    """A :class:`CursorStore` in a dict; a Cursor never moves backwards (§16)."""

    def __init__(self) -> None:
        self._cursors: Dict[Tuple[str, str], int] = {}

    def acknowledge(self, agent_id: str, group_id: str, sequence: int) -> None:
        if isinstance(sequence, bool) or not isinstance(sequence, int) or sequence < 0:
            raise ValueError("sequence must be a non-negative int")
        key = (agent_id, group_id)
        self._cursors[key] = max(self._cursors.get(key, 0), sequence)

    def cursor(self, agent_id: str, group_id: str) -> int:
        return self._cursors.get((agent_id, group_id), 0)


class CoreGatewayAdapter:
    """A :class:`Core` as a :class:`GatewayCore`.

    ``CoreGatewayAdapter(core, command_keys=None, command_key_resolver=None, **_)``. Our Core
    already verifies every Command against its Registry (six stages, freshness, signer
    authorization) and signs every Event with the Group Authority's key, so the reference's
    key arguments are not needed here: the HELLO keys are the Core Registry's Agent keys (a key
    works for the handshake exactly when Commands signed with it verify).
    """

    def __init__(
        self,
        core: Core,
        command_keys: Optional[object] = None,
        command_key_resolver: Optional[object] = None,
        **_options: Any,
    ) -> None:
        if not isinstance(core, Core):
            raise TypeError(f"core must be a missionweaveprotocol.core.Core, not {type(core).__name__}")
        self.core = core

    async def perform(
        self, *, verify_session: Callable[[], SessionGrant], command_bytes: bytes
    ) -> Dict[str, Any]:
        """Checks the session (``verify_session`` raises :class:`AuthenticationError`), then
        performs the Command: the Event's signed document as plain values."""
        verify_session()
        event = await self.core.perform(command_bytes)
        return dict(_native.parse_json(event.signed_bytes))

    async def replay(
        self, actor: str, group_id: str, *, after_sequence: int
    ) -> List[Dict[str, Any]]:
        """Events of ``group_id`` after ``after_sequence`` (a WebSocket subscriber gets only
        what its Membership lets it see: the Rust gateway checks that per read)."""
        events = await self.core.replay(group_id, after=after_sequence)
        return [dict(_native.parse_json(e.signed_bytes)) for e in events]


def _native_core(core: Union[Core, CoreGatewayAdapter, object]) -> _native.Core:
    if isinstance(core, CoreGatewayAdapter):
        core = core.core
    if isinstance(core, Core):
        return core._native
    raise TypeError(
        "core must be a missionweaveprotocol.core.Core or a CoreGatewayAdapter over one, "
        f"not {type(core).__name__}"
    )


_Drain = Tuple[
    List[bytes],
    Optional[Tuple[int, str]],
    List[Tuple[str, int]],
    List[Tuple[str, str, int, str]],
    Optional[Tuple[str, List[str], str]],
]


async def _settled(value: Any) -> Any:
    """A store method's result, awaited when it is awaitable."""
    if inspect.isawaitable(value):
        return await value
    return value


@dataclass
class _Link:
    """One WebSocket's machine and its input queue."""

    connection: _native.NativeConnection
    inbox: "asyncio.Queue[Tuple[str, Any]]"
    # Socket messages read but not yet fed: the reader stops at this bound, so a peer that
    # floods is held by TCP flow control, not by memory here.
    unread: asyncio.Semaphore


class GroupGateway:
    """The WebSocket gateway: ``app`` (FastAPI) serves ``/ws``; mount it or serve it."""

    def __init__(
        self,
        core: Union[Core, CoreGatewayAdapter],
        sessions: SessionAuthority,
        *,
        cursors: Optional[CursorStore] = None,
        app: Optional[FastAPI] = None,
        clock: Optional[Clock] = None,
        limits: Optional[Mapping[str, int]] = None,
    ) -> None:
        if not isinstance(sessions, SessionAuthority):
            raise TypeError(
                f"sessions must be a SessionAuthority, not {type(sessions).__name__}"
            )
        self.core = core
        self.sessions = sessions
        if cursors is not None and not isinstance(cursors, CursorStore):
            raise TypeError(
                "cursors must have acknowledge(agent_id, group_id, sequence) and "
                f"cursor(agent_id, group_id), not {type(cursors).__name__}"
            )
        self.cursors: CursorStore = cursors if cursors is not None else InMemoryCursorStore()
        self._clock = clock
        self._native = _native.NativeGateway(
            _native_core(core), sessions._native, limits, host_cursors=True
        )
        self._links: Dict[int, _Link] = {}
        self.app = app if app is not None else FastAPI()
        self.app.add_api_websocket_route("/ws", self._endpoint)

    @property
    def connection_count(self) -> int:
        """Open WebSocket connections."""
        return self._native.connection_count

    def _now_ms(self) -> int:
        now = self._clock() if self._clock is not None else datetime.now(timezone.utc)
        if now.tzinfo is None or now.utcoffset() is None:
            raise RuntimeError("the gateway's clock must return timezone-aware datetimes")
        return (now - _EPOCH) // timedelta(milliseconds=1)

    async def _endpoint(self, websocket: WebSocket) -> None:
        await websocket.accept()
        loop = asyncio.get_running_loop()
        connection = self._native.connect(self._now_ms())
        link = _Link(connection, asyncio.Queue(), asyncio.Semaphore(_MAX_UNREAD))
        self._links[connection.id] = link
        reader = asyncio.ensure_future(self._read(websocket, link))
        ticker = asyncio.ensure_future(self._tick(link))
        try:
            while True:
                kind, value = await link.inbox.get()
                now = self._now_ms()
                drained: _Drain
                if kind == "text":
                    link.unread.release()
                    drained = await loop.run_in_executor(None, connection.on_text, value, now)
                elif kind == "binary":
                    link.unread.release()
                    drained = await loop.run_in_executor(None, connection.on_binary, now)
                elif kind == "moved":
                    group, sequence = value
                    drained = await loop.run_in_executor(
                        None, connection.on_group_moved, group, sequence, now
                    )
                elif kind == "tick":
                    drained = await loop.run_in_executor(None, connection.on_tick, now)
                else:  # "closed": the peer went away
                    break
                if await self._deliver(websocket, link, drained):
                    break
        finally:
            reader.cancel()
            ticker.cancel()
            with contextlib.suppress(BaseException):
                await reader
            with contextlib.suppress(BaseException):
                await ticker
            self._links.pop(connection.id, None)
            connection.on_closed()

    async def _deliver(self, websocket: WebSocket, link: _Link, drained: _Drain) -> bool:
        """Writes the frames, wakes the other subscribers, closes if told, then does what the
        machine asks of the Cursor store and delivers its answer; True once closed."""
        frames, close, moved, acknowledged, wanted = drained
        if await self._write(websocket, link, frames, close, moved):
            return True
        loop = asyncio.get_running_loop()
        connection = link.connection
        for agent_id, group_id, sequence, frame_id in acknowledged:
            try:
                await _settled(self.cursors.acknowledge(agent_id, group_id, sequence))
            except Exception:  # the store's failure is answered on the wire
                _LOG.exception("the cursor store failed to acknowledge %s %s", agent_id, group_id)
                follow = await loop.run_in_executor(
                    None, connection.on_cursor_store_failed, group_id, frame_id, self._now_ms()
                )
                if await self._deliver(websocket, link, follow):
                    return True
        if wanted is None:
            return False
        agent_id, group_ids, _frame_id = wanted
        stored: Optional[List[Any]]
        try:
            stored = [await _settled(self.cursors.cursor(agent_id, g)) for g in group_ids]
        except Exception:  # the store's failure is answered on the wire
            _LOG.exception("the cursor store failed to read the cursors of %s", agent_id)
            stored = None
        follow = await loop.run_in_executor(
            None, connection.on_stored_cursors, stored, self._now_ms()
        )
        return await self._deliver(websocket, link, follow)

    async def _write(
        self,
        websocket: WebSocket,
        link: _Link,
        frames: List[bytes],
        close: Optional[Tuple[int, str]],
        moved: List[Tuple[str, int]],
    ) -> bool:
        """Wakes the other subscribers, writes the frames, closes if told; True once closed."""
        for group, sequence in moved:
            for other in self._native.wake_list(group, link.connection.id):
                target = self._links.get(other)
                if target is not None:
                    target.inbox.put_nowait(("moved", (group, sequence)))
        try:
            for frame in frames:
                await websocket.send_text(frame.decode("utf-8"))
            if close is not None:
                code, reason = close
                await websocket.close(code=code, reason=reason)
                return True
        except (WebSocketDisconnect, RuntimeError, OSError):
            return True
        return False

    async def _read(self, websocket: WebSocket, link: _Link) -> None:
        try:
            while True:
                await link.unread.acquire()
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                text = message.get("text")
                if text is not None:
                    # The ASGI server decoded valid UTF-8 (it closes with 1007 otherwise):
                    # encoding gives back exactly the bytes received.
                    link.inbox.put_nowait(("text", text.encode("utf-8")))
                elif message.get("bytes") is not None:
                    link.inbox.put_nowait(("binary", None))
        except (WebSocketDisconnect, RuntimeError, OSError):
            pass
        finally:
            link.inbox.put_nowait(("closed", None))

    async def _tick(self, link: _Link) -> None:
        while True:
            await asyncio.sleep(_TICK_SECONDS)
            link.inbox.put_nowait(("tick", None))
