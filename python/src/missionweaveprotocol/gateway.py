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
- **Durable delivery Cursors live in the Core's store** (``ACK``, §16), written by the Rust
  gateway; a ``cursors`` store given here is not consulted for replay (replay starts from the
  ``afterSequence`` the Agent names, after its visibility start). It is kept as
  :attr:`GroupGateway.cursors` for the reference's signature only.
"""

from __future__ import annotations

import asyncio
import contextlib
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
    """Durable per-(Agent, Group) delivery Cursors."""

    def acknowledge(self, agent_id: str, group_id: str, sequence: int) -> None: ...

    def cursor(self, agent_id: str, group_id: str) -> int: ...


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


_Drain = Tuple[List[bytes], Optional[Tuple[int, str]], List[Tuple[str, int]]]


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
        self.cursors: CursorStore = cursors if cursors is not None else InMemoryCursorStore()
        self._clock = clock
        self._native = _native.NativeGateway(_native_core(core), sessions._native, limits)
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
        """Writes the frames, wakes the other subscribers, closes if told; True once closed."""
        frames, close, moved = drained
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
