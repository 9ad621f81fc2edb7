"""``GroupGateway(core, sessions, *, cursors=...)``: the ``CursorStore`` is consulted as the
reference does (``reference-python.md`` §1.26) — an ``ACK`` that moves a Cursor forward is
written into it, ``SUBSCRIBE`` from ``afterSequence`` 0 replays after the stored Cursor (a
Cursor the Agent names is honoured, §16), a duplicate
or older ``ACK`` is never written, a failing store is answered with a retryable
``INTERNAL_ERROR``. The decisions are the Rust machine's (``server/host_cursors.rs``); these
tests drive it over the ASGI socket with the Rust client session as the peer."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
from fastapi.testclient import TestClient
from starlette.testclient import WebSocketTestSession

from core_support import GROUP, OWNER, WORKER, signed
from gateway_support import MAIN, events_of, frame, now_ms, peer, world
from missionweaveprotocol import _native
from missionweaveprotocol.auth import AgentKeyRegistry, SessionAuthority
from missionweaveprotocol.gateway import CursorStore, GroupGateway, InMemoryCursorStore
from missionweaveprotocol.local_store import SQLiteAgentStore
from test_gateway import handshake, pump


class Recording:
    """A store that keeps every write as given (not monotonic itself): what the gateway asks."""

    def __init__(self, stored: int = 0) -> None:
        self.stored = stored
        self.writes: List[Tuple[str, str, int]] = []
        self.reads: List[Tuple[str, str]] = []

    def acknowledge(self, agent_id: str, group_id: str, sequence: int) -> None:
        self.writes.append((agent_id, group_id, sequence))
        self.stored = sequence

    def cursor(self, agent_id: str, group_id: str) -> int:
        self.reads.append((agent_id, group_id))
        return self.stored


class AsyncStore:
    """The same Protocol with ``async`` methods."""

    def __init__(self, stored: int) -> None:
        self.stored = stored
        self.writes: List[int] = []

    async def acknowledge(self, agent_id: str, group_id: str, sequence: int) -> None:
        self.writes.append(sequence)

    async def cursor(self, agent_id: str, group_id: str) -> int:
        return self.stored


class Failing:
    def acknowledge(self, agent_id: str, group_id: str, sequence: int) -> None:
        raise OSError("disk full")

    def cursor(self, agent_id: str, group_id: str) -> int:
        raise OSError("disk gone")


def gateway_with(cursors: Any) -> Tuple[int, Any, GroupGateway]:
    """The gateway world with three Messages more in GROUP (room for a Cursor to move)."""
    clock, core, _plain = world()
    ms = now_ms(clock)
    for i in range(3):
        payload = {"messageId": f"urn:missionweaveprotocol:message:cursor-seed-{i}",
                   "conversationId": MAIN, "content": [{"type": "text", "text": f"seed {i}"}]}
        core._native.perform(signed("message.post", OWNER, payload, groupId=GROUP), ms)
    sessions = SessionAuthority(AgentKeyRegistry(), secret=b"k" * 32, clock=clock)
    return ms, core, GroupGateway(core, sessions, cursors=cursors, clock=clock)


def send(ws: WebSocketTestSession, session: _native.NativeClientSession) -> None:
    for out in session.poll_output():
        ws.send_text(out.decode())


def raw_sequences(ws: WebSocketTestSession, count: int) -> List[int]:
    """The next ``count`` frames: each must be an EVENT; their sequences."""
    sequences = []
    for _ in range(count):
        value = frame(ws.receive_text())
        assert value["frameType"] == "EVENT", value
        sequences.append(value["event"]["sequence"])
    return sequences


def synced(ws: WebSocketTestSession, session: _native.NativeClientSession, ms: int) -> None:
    """A PING and its reply: every frame sent before it was handled (and the store called)."""
    nonce = session.ping(None, ms)
    assert events_of(pump(ws, session, ms, 1), "pong") == [("pong", nonce)]


def test_acks_are_stored_and_subscribe_resumes_from_the_store() -> None:
    cursors = InMemoryCursorStore()
    ms, core, gateway = gateway_with(cursors)
    head = core.store.last_sequence(GROUP)
    assert head >= 4
    with TestClient(gateway.app) as client:
        with client.websocket_connect("/ws") as ws:
            worker = peer(WORKER)
            handshake(ws, worker, ms)
            worker.subscribe([(GROUP, 0, None)], ms)
            assert [e[2] for e in events_of(pump(ws, worker, ms, head), "event")] == list(
                range(1, head + 1)
            )
            worker.acknowledge([(GROUP, 2)], ms)
            synced(ws, worker, ms)
            assert cursors.cursor(WORKER, GROUP) == 2
        # A new connection subscribing from 0 gets only what follows the stored Cursor.
        with client.websocket_connect("/ws") as ws:
            worker = peer(WORKER)
            handshake(ws, worker, ms)
            worker.subscribe([(GROUP, 0, None)], ms)
            send(ws, worker)
            assert raw_sequences(ws, head - 2) == list(range(3, head + 1))
        # A Cursor the Agent names is honoured (§16), above or below the stored one.
        for named in (head - 1, 1):
            with client.websocket_connect("/ws") as ws:
                worker = peer(WORKER)
                handshake(ws, worker, ms)
                worker.subscribe([(GROUP, named, None)], ms)
                events = events_of(pump(ws, worker, ms, head - named), "event")
                assert [e[2] for e in events] == list(range(named + 1, head + 1))


def test_duplicate_and_older_acks_never_move_the_stored_cursor_back() -> None:
    cursors = Recording()
    ms, core, gateway = gateway_with(cursors)
    head = core.store.last_sequence(GROUP)
    assert head >= 3
    with TestClient(gateway.app) as client, client.websocket_connect("/ws") as ws:
        worker = peer(WORKER)
        handshake(ws, worker, ms)
        worker.subscribe([(GROUP, 0, None)], ms)
        pump(ws, worker, ms, head)
        assert cursors.reads == [(WORKER, GROUP)]
        for sequence in (3, 3, 1, 2, 3):
            worker.acknowledge([(GROUP, sequence)], ms)
        synced(ws, worker, ms)
        assert cursors.writes == [(WORKER, GROUP, 3)]
        worker.acknowledge([(GROUP, head)], ms)
        synced(ws, worker, ms)
        assert cursors.writes == [(WORKER, GROUP, 3), (WORKER, GROUP, head)]


def test_a_stored_cursor_below_the_acks_of_another_connection_is_not_written_again() -> None:
    # The stored Cursor read at SUBSCRIBE counts as known: an ACK at or below it is no write.
    cursors = Recording(stored=3)
    ms, core, gateway = gateway_with(cursors)
    head = core.store.last_sequence(GROUP)
    with TestClient(gateway.app) as client, client.websocket_connect("/ws") as ws:
        worker = peer(WORKER)
        handshake(ws, worker, ms)
        worker.subscribe([(GROUP, 3, None)], ms)
        pump(ws, worker, ms, head - 3)
        worker.acknowledge([(GROUP, 3)], ms)
        synced(ws, worker, ms)
        assert cursors.writes == []


def test_async_store_methods_are_awaited() -> None:
    cursors = AsyncStore(stored=1)
    ms, core, gateway = gateway_with(cursors)
    head = core.store.last_sequence(GROUP)
    with TestClient(gateway.app) as client, client.websocket_connect("/ws") as ws:
        worker = peer(WORKER)
        handshake(ws, worker, ms)
        worker.subscribe([(GROUP, 1, None)], ms)
        events = events_of(pump(ws, worker, ms, head - 1), "event")
        assert [e[2] for e in events] == list(range(2, head + 1))
        worker.acknowledge([(GROUP, head)], ms)
        synced(ws, worker, ms)
        assert cursors.writes == [head]


def test_a_failing_store_is_a_retryable_internal_error_and_the_socket_stays_open() -> None:
    ms, core, gateway = gateway_with(Failing())
    with TestClient(gateway.app) as client, client.websocket_connect("/ws") as ws:
        worker = peer(WORKER)
        handshake(ws, worker, ms)
        frame_id = worker.subscribe([(GROUP, 0, None)], ms)
        send(ws, worker)
        error: Dict[str, Any] = frame(ws.receive_text())["error"]
        assert (error["code"], error["retryable"]) == ("INTERNAL_ERROR", True)
        assert error["relatedFrameId"] == frame_id
        assert "disk" not in error["message"]
        # Nothing subscribed; an ACK the store cannot write is answered for its Group.
        ack = ('{"acknowledgements":[{"groupId":"' + GROUP + '","sequence":1}],'
               '"frameId":"urn:missionweaveprotocol:frame:ack-1","frameType":"ACK",'
               '"protocolVersion":"0.1","sentAt":"2026-07-15T09:30:00Z"}')
        ws.send_text(ack)
        error = frame(ws.receive_text())["error"]
        assert (error["code"], error["retryable"]) == ("INTERNAL_ERROR", True)
        assert error["groupId"] == GROUP
        assert error["relatedFrameId"] == "urn:missionweaveprotocol:frame:ack-1"
        synced(ws, worker, ms)


def test_a_store_answering_garbage_counts_as_failing() -> None:
    class Garbage(Recording):
        def cursor(self, agent_id: str, group_id: str) -> Any:
            return -1

    ms, core, gateway = gateway_with(Garbage())
    with TestClient(gateway.app) as client, client.websocket_connect("/ws") as ws:
        worker = peer(WORKER)
        handshake(ws, worker, ms)
        worker.subscribe([(GROUP, 0, None)], ms)
        send(ws, worker)
        assert frame(ws.receive_text())["error"]["code"] == "INTERNAL_ERROR"


def test_a_durable_store_survives_a_new_gateway(tmp_path: Path) -> None:
    # The reference's "disconnect/reconnect replays only after durable ACK", across a restart
    # of the gateway over the same Core: the SQLiteAgentStore is the CursorStore.
    store = SQLiteAgentStore(tmp_path / "gateway-cursors.sqlite3")
    assert isinstance(store, CursorStore)
    ms, core, gateway = gateway_with(store)
    head = core.store.last_sequence(GROUP)
    with TestClient(gateway.app) as client, client.websocket_connect("/ws") as ws:
        worker = peer(WORKER)
        handshake(ws, worker, ms)
        worker.subscribe([(GROUP, 0, None)], ms)
        pump(ws, worker, ms, head)
        worker.acknowledge([(GROUP, head - 1)], ms)
        synced(ws, worker, ms)
    store.close()
    reopened = SQLiteAgentStore(tmp_path / "gateway-cursors.sqlite3")
    assert reopened.cursor(WORKER, GROUP) == head - 1
    clock = gateway._clock
    sessions = SessionAuthority(AgentKeyRegistry(), secret=b"k" * 32, clock=clock)
    again = GroupGateway(core, sessions, cursors=reopened, clock=clock)
    with TestClient(again.app) as client, client.websocket_connect("/ws") as ws:
        worker = peer(WORKER)
        handshake(ws, worker, ms)
        worker.subscribe([(GROUP, 0, None)], ms)
        send(ws, worker)
        assert raw_sequences(ws, 1) == [head]


def test_a_cursors_object_without_the_protocol_is_refused() -> None:
    clock, core, _gateway = world()
    sessions = SessionAuthority(AgentKeyRegistry(), secret=b"k" * 32, clock=clock)
    with pytest.raises(TypeError):
        GroupGateway(core, sessions, cursors=object())  # type: ignore[arg-type]
