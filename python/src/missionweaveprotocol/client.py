"""An asyncio Agent client over the Rust sans-IO client session
(``missionweaveprotocol-gateway::client::Session``, ``docs/network.md``).

The reference ships no client module (its proof of concept drives ``websockets`` by hand);
this one is ours. :class:`AgentClient` connects over ``wss://`` (the standard library's
``ssl``; pass an :class:`ssl.SSLContext` trusting a custom CA) or ``ws://`` (tests on
loopback), authenticates with a ``SigningKey``-like object (HELLO, §6.3), subscribes with the
Cursors of a :class:`~missionweaveprotocol.local_store.SQLiteAgentStore` (§16), sends signed
Commands and awaits their Event or a typed :class:`CommandRefused`, hands verified Events in
Group order through :meth:`AgentClient.events` (an async iterator per Group), acknowledges
(:meth:`AgentClient.acknowledge`: the Cursor is stored durably first, then ``ACK``), and
reconnects with exponential backoff, resubscribing from the Cursors.

Every protocol decision is the Rust session's: frame building, the HELLO signature over the
challenge transcript, verification of every Event (six stages against the Organization
Registry, and the signer must be the Group Authority), deduplication by Event ID, ordering per
Group (an Event is handed on only when it is the next of its Group: ``in_order``), refusing an
``ACK`` past the contiguous Cursor, and Command outcomes. This module moves bytes and time.

A Command is signed with a Session Epoch; after a reconnect the epoch is new, so a Command
awaiting its outcome when the connection dropped fails with :class:`ConnectionLost` and the
caller re-signs it (§15.1: resending the same Action ID after it was applied returns the
original Event).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl as _ssl
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import (
    Any,
    AsyncIterator,
    Callable,
    Dict,
    Iterable,
    List,
    Mapping,
    Optional,
    Tuple,
    Union,
)

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from . import _native
from .errors import AuthenticationError
from .local_store import SQLiteAgentStore
from .registry import AgentRegistryKeyResolver

__all__ = [
    "AgentClient",
    "ClientSessionError",
    "CommandRefused",
    "CommandTimedOut",
    "ConnectionLost",
    "DeliveredEvent",
]

Clock = Callable[[], datetime]
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_RECENT_EVENTS = 1024


class ClientSessionError(ValueError):
    """A call the Rust session refuses (``kind``: ``not_authenticated``,
    ``ack_beyond_cursor``, ``unknown_group``, ``not_a_command``,
    ``too_many_pending_commands``, ``protocol``, ``frame``, ...)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


class CommandRefused(Exception):
    """The gateway answered a Command with an ``ERROR`` (nothing was applied): ``code`` is the
    §19 wire code, ``retryable`` whether an unchanged retry may succeed, ``error`` the wire
    object."""

    def __init__(self, error: Mapping[str, Any]) -> None:
        self.error: Dict[str, Any] = dict(error)
        self.code: str = str(self.error.get("code"))
        self.retryable: bool = bool(self.error.get("retryable"))
        super().__init__(f"{self.code}: {self.error.get('message')}")


class CommandTimedOut(Exception):
    """No outcome within the command timeout (resending the same bytes is safe, §15.1)."""


class ConnectionLost(Exception):
    """The connection dropped while the Command awaited its outcome: re-sign and resend."""


@dataclass(frozen=True)
class DeliveredEvent:
    """A verified Event: its Group, sequence, ID, the signed bytes as received, the document,
    and whether it came in Group order (only those move a Cursor, §16)."""

    group_id: Optional[str]
    sequence: int
    event_id: str
    signed_bytes: bytes
    in_order: bool
    document: Dict[str, Any] = field(repr=False, compare=False, hash=False)

    @property
    def kind(self) -> str:
        return str(self.document.get("kind"))


@dataclass
class _Subscription:
    after: int
    attention: Optional[Dict[str, Any]]
    queue: "asyncio.Queue[DeliveredEvent]"


class AgentClient:
    """``AgentClient(url, *, agent_id, signing_key, registry, authority_id, store=None,
    ssl=None, clock=None, reconnect=True, initial_backoff=0.1, max_backoff=5.0,
    command_timeout=30 s)``; ``async with`` it, or :meth:`connect` and :meth:`close`."""

    def __init__(
        self,
        url: str,
        *,
        agent_id: str,
        signing_key: Any,
        registry: Union[AgentRegistryKeyResolver, bytes],
        authority_id: str,
        store: Optional[SQLiteAgentStore] = None,
        ssl: Optional[_ssl.SSLContext] = None,
        clock: Optional[Clock] = None,
        reconnect: bool = True,
        initial_backoff: float = 0.1,
        max_backoff: float = 5.0,
        command_timeout: timedelta = timedelta(seconds=30),
    ) -> None:
        if url.startswith("wss://"):
            self._ssl: Optional[_ssl.SSLContext] = ssl or _ssl.create_default_context()
        elif url.startswith("ws://"):
            if ssl is not None:
                raise ValueError("an ssl context needs a wss:// URL")
            self._ssl = None
        else:
            raise ValueError("url must be ws:// or wss://")
        self.url = url
        self.agent_id = agent_id
        self._signing_key = signing_key
        self._registry = registry
        self._authority_id = authority_id
        self._store = store
        self._clock = clock
        self._reconnect = reconnect
        self._initial_backoff = initial_backoff
        self._max_backoff = max_backoff
        self._timeout_ms = command_timeout // timedelta(milliseconds=1)
        self._groups: Dict[str, _Subscription] = {}
        self._session: Optional[_native.NativeClientSession] = None
        self._socket: Optional[ClientConnection] = None
        self._pending: Dict[str, "asyncio.Future[DeliveredEvent]"] = {}
        self._accepted: Dict[str, "asyncio.Future[DeliveredEvent]"] = {}
        self._recent: "OrderedDict[str, DeliveredEvent]" = OrderedDict()
        self._authenticated: Optional["asyncio.Future[int]"] = None
        self._runner: Optional["asyncio.Task[None]"] = None
        self._closed = False
        self.connections = 0
        self.errors: List[Dict[str, Any]] = []

    # ---- lifecycle -------------------------------------------------------------------------

    async def __aenter__(self) -> "AgentClient":
        await self.connect()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    def _now_ms(self) -> int:
        now = self._clock() if self._clock is not None else datetime.now(timezone.utc)
        return (now - _EPOCH) // timedelta(milliseconds=1)

    async def connect(self) -> int:
        """Connects and authenticates; the Session Epoch. A refused HELLO raises
        :class:`AuthenticationError` (with the wire code) and does not reconnect."""
        if self._runner is None:
            self._runner = asyncio.ensure_future(self._run())
        return await self.authenticated()

    async def authenticated(self) -> int:
        """Waits for the current (or next) connection's ``server_accept``."""
        while True:
            if self._authenticated is not None:
                current = self._authenticated
                try:
                    return await asyncio.shield(current)
                except ConnectionLost:
                    # The connection dropped before `server_accept`: wait for the next one,
                    # unless there is none (closed, or not reconnecting): then this is final.
                    await asyncio.sleep(0)
                    if self._closed or (self._runner is not None and self._runner.done()):
                        raise
            if self._closed or (self._runner is not None and self._runner.done()):
                raise ConnectionLost("the client is closed")
            await asyncio.sleep(0.01)

    @property
    def session_epoch(self) -> Optional[int]:
        return None if self._session is None else self._session.session_epoch

    async def close(self) -> None:
        """Closes the connection and stops reconnecting."""
        self._closed = True
        if self._socket is not None:
            await self._socket.close()
        if self._runner is not None:
            self._runner.cancel()
            with contextlib.suppress(BaseException):
                await self._runner
        self._fail_pending(ConnectionLost("the client closed"))

    async def drop(self) -> None:
        """Closes the current socket only (reconnects as after a network failure); returns
        once the client is reconnecting (:meth:`authenticated` then awaits the new session)."""
        current = self._authenticated
        if self._socket is not None:
            await self._socket.close()
        while self._authenticated is current and not self._closed:
            await asyncio.sleep(0.01)

    # ---- calls -----------------------------------------------------------------------------

    async def subscribe(
        self,
        groups: Union[Iterable[str], Mapping[str, Optional[Mapping[str, Any]]]],
    ) -> None:
        """Subscribes ``groups`` (IDs, or ``{group_id: attention filter or None}``) from their
        durable Cursors (the store's; 0 without a store); kept across reconnects."""
        items = groups.items() if isinstance(groups, Mapping) else ((g, None) for g in groups)
        entries: List[Tuple[str, int, Optional[Dict[str, Any]]]] = []
        for group_id, attention in items:
            after = self._durable_cursor(group_id)
            current = self._groups.get(group_id)
            queue: "asyncio.Queue[DeliveredEvent]" = (
                current.queue if current is not None else asyncio.Queue()
            )
            if current is not None:
                after = max(after, current.after)
            filt = None if attention is None else dict(attention)
            self._groups[group_id] = _Subscription(after, filt, queue)
            entries.append((group_id, after, filt))
        if self._session is not None and self._session.is_authenticated and entries:
            self._session.subscribe(entries, self._now_ms())
            await self._flush()

    async def send(self, command: bytes) -> DeliveredEvent:
        """Sends the signed Command's exact bytes; its first Event, or :class:`CommandRefused`
        (:class:`CommandTimedOut`, :class:`ConnectionLost`)."""
        await self.authenticated()
        session = self._session
        assert session is not None
        frame_id, _action_id = session.send_command(command, self._now_ms())
        future: "asyncio.Future[DeliveredEvent]" = asyncio.get_running_loop().create_future()
        self._pending[frame_id] = future
        await self._flush()
        return await future

    async def acknowledge(self, event: DeliveredEvent) -> None:
        """Durable progress (§16): the store's Cursor first, then ``ACK``. Only an in-order
        Event of a subscribed Group (the session refuses an ``ACK`` past its Cursor)."""
        if not event.in_order or event.group_id is None:
            raise ClientSessionError(
                "only an Event delivered in Group order is acknowledged", "not_in_order"
            )
        if self._store is not None:
            self._store.acknowledge(self.agent_id, event.group_id, event.sequence)
        session = self._session
        if session is not None and session.is_authenticated:
            session.acknowledge([(event.group_id, event.sequence)], self._now_ms())
            await self._flush()

    async def events(self, group_id: str) -> AsyncIterator[DeliveredEvent]:
        """The verified Events of a subscribed Group, in Group order, across reconnects."""
        subscription = self._groups.get(group_id)
        if subscription is None:
            raise ClientSessionError(f"{group_id} is not subscribed", "unknown_group")
        while True:
            yield await subscription.queue.get()

    async def next_event(self, group_id: str) -> DeliveredEvent:
        """The next verified Event of ``group_id`` in Group order."""
        subscription = self._groups.get(group_id)
        if subscription is None:
            raise ClientSessionError(f"{group_id} is not subscribed", "unknown_group")
        return await subscription.queue.get()

    def cursor(self, group_id: str) -> int:
        """The Group's position as handed on (in order) by this client."""
        subscription = self._groups.get(group_id)
        return 0 if subscription is None else subscription.after

    # ---- the loop --------------------------------------------------------------------------

    def _durable_cursor(self, group_id: str) -> int:
        if self._store is None:
            return 0
        return self._store.cursor(self.agent_id, group_id)

    async def _run(self) -> None:
        backoff = self._initial_backoff
        while not self._closed:
            loop = asyncio.get_running_loop()
            self._authenticated = loop.create_future()
            cause: Optional[BaseException] = None
            try:
                authenticated = await self._connection()
                if authenticated:
                    backoff = self._initial_backoff
            except AuthenticationError as refused:
                if not self._authenticated.done():
                    self._authenticated.set_exception(refused)
                return
            except (OSError, ConnectionClosed, asyncio.TimeoutError, ClientSessionError) as error:
                # A TLS refusal (`ssl.SSLError`) is an OSError: kept as the cause.
                cause = error
            finally:
                self._socket = None
                self._session = None
                self._fail_pending(ConnectionLost("the connection dropped"))
                if not self._authenticated.done():
                    lost = ConnectionLost(f"the connection dropped: {cause!r}")
                    lost.__cause__ = cause
                    self._authenticated.set_exception(lost)
                    # Retrieved here so an unawaited failure is not reported.
                    self._authenticated.exception()
            if not self._reconnect or self._closed:
                return
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, self._max_backoff)

    async def _connection(self) -> bool:
        session = _native.NativeClientSession(
            self.agent_id,
            self._registry,
            self._authority_id,
            self._signing_key,
            command_timeout_ms=self._timeout_ms,
        )
        async with connect(self.url, ssl=self._ssl, max_size=(4 << 20) + 4096) as socket:
            self._socket = socket
            self._session = session
            self.connections += 1
            session.start(self._now_ms())
            entries = [(g, s.after, s.attention) for g, s in self._groups.items()]
            if entries:
                session.subscribe(entries, self._now_ms())
            await self._flush()
            ticker = asyncio.ensure_future(self._tick(session))
            try:
                async for message in socket:
                    data = message.encode("utf-8") if isinstance(message, str) else message
                    session.on_text(data, self._now_ms())
                    self._dispatch(session)
                    await self._flush()
            finally:
                ticker.cancel()
                with contextlib.suppress(BaseException):
                    await ticker
        return session.is_authenticated

    async def _tick(self, session: _native.NativeClientSession) -> None:
        while True:
            await asyncio.sleep(1.0)
            session.on_tick(self._now_ms())
            self._dispatch(session)

    async def _flush(self) -> None:
        session, socket = self._session, self._socket
        if session is None or socket is None:
            return
        for frame in session.poll_output():
            await socket.send(frame.decode("utf-8"))

    def _dispatch(self, session: _native.NativeClientSession) -> None:
        for item in session.poll_events():
            kind = item[0]
            if kind == "authenticated":
                if self._authenticated is not None and not self._authenticated.done():
                    self._authenticated.set_result(int(item[1]))
            elif kind == "handshake_failed":
                error = item[1]
                raise AuthenticationError(
                    str(error.get("message")), code=str(error.get("code")), reason="handshake"
                )
            elif kind == "event":
                _, group_id, sequence, event_id, raw, in_order = item
                event = DeliveredEvent(
                    group_id, int(sequence), event_id, bytes(raw), bool(in_order),
                    dict(_native.parse_json(raw)),
                )
                self._remember(event)
                waiter = self._accepted.pop(event_id, None)
                if waiter is not None and not waiter.done():
                    waiter.set_result(event)
                subscription = self._groups.get(group_id) if group_id is not None else None
                if subscription is not None and in_order:
                    subscription.after = max(subscription.after, event.sequence)
                    subscription.queue.put_nowait(event)
            elif kind == "command_accepted":
                future = self._pending.pop(item[1], None)
                if future is not None and not future.done():
                    seen = self._recent.get(item[3])
                    if seen is not None:
                        future.set_result(seen)
                    else:
                        self._accepted[item[3]] = future
            elif kind == "command_refused":
                future = self._pending.pop(item[1], None)
                if future is not None and not future.done():
                    future.set_exception(CommandRefused(item[3]))
            elif kind == "command_timed_out":
                future = self._pending.pop(item[1], None)
                if future is not None and not future.done():
                    future.set_exception(CommandTimedOut(item[2]))
            elif kind == "error":
                self.errors.append(dict(item[1]))

    def _remember(self, event: DeliveredEvent) -> None:
        self._recent[event.event_id] = event
        while len(self._recent) > _RECENT_EVENTS:
            self._recent.popitem(last=False)

    def _fail_pending(self, error: Exception) -> None:
        for futures in (self._pending, self._accepted):
            for future in futures.values():
                if not future.done():
                    future.set_exception(error)
            futures.clear()
