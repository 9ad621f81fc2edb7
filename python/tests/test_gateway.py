"""``missionweaveprotocol.gateway.GroupGateway`` through ``fastapi.testclient.TestClient``:
the Rust client session is the peer (it signs the HELLO challenge and verifies Events), the
frames travel over the ASGI WebSocket. HELLO success and failure, SUBSCRIBE, COMMAND → EVENT
fan-out to another subscriber, ERROR frames with their §19 codes (the connection stays open),
framing violations closing with their WebSocket codes, and non-disclosure (§17.2)."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest
from fastapi.testclient import TestClient
from starlette.testclient import WebSocketTestSession
from starlette.websockets import WebSocketDisconnect

from core_support import COORDINATOR, GROUP, OWNER, WORKER
from gateway_support import (
    ABSENT_GROUP,
    OTHER_GROUP,
    events_of,
    frame,
    later,
    now_ms,
    peer,
    post,
    world,
)
from missionweaveprotocol import _native
from missionweaveprotocol.auth import AgentKeyRegistry, SessionAuthority
from missionweaveprotocol.errors import InvalidInputError
from missionweaveprotocol.gateway import (
    CommandAdmissionError,
    CoreGatewayAdapter,
    CursorStore,
    GatewayCore,
    GatewaySchemaError,
    GroupGateway,
    InMemoryCursorStore,
    SubscriptionDenied,
    UnknownCriticalExtension,
)


def pump(ws: WebSocketTestSession, session: _native.NativeClientSession, ms: int,
         replies: int) -> List[Any]:
    """Sends the session's frames, feeds ``replies`` server frames back; its events."""
    for out in session.poll_output():
        ws.send_text(out.decode())
    for _ in range(replies):
        session.on_text(ws.receive_text().encode(), ms)
    return list(session.poll_events())


def handshake(ws: WebSocketTestSession, session: _native.NativeClientSession, ms: int) -> List[Any]:
    session.start(ms)
    events: List[Any] = []
    # server_challenge then server_accept, or an ERROR at either step.
    while not events_of(events, "authenticated") and not events_of(events, "handshake_failed"):
        events += pump(ws, session, ms, 1)
    return events


def test_hello_subscribe_command_fan_out() -> None:
    clock, core, gateway = world()
    ms = now_ms(clock)
    with TestClient(gateway.app) as client, client.websocket_connect("/ws") as a, \
            client.websocket_connect("/ws") as b:
        coordinator, worker = peer(COORDINATOR), peer(WORKER)
        assert events_of(handshake(a, coordinator, ms), "authenticated")[0][1] == 1
        assert events_of(handshake(b, worker, ms), "authenticated")[0][1] == 1
        # Replay: the worker sees GROUP after its visibility start (sequence 1 on).
        head = core.store.last_sequence(GROUP)
        worker.subscribe([(GROUP, 0, None)], ms)
        replayed = events_of(pump(b, worker, ms, head), "event")
        assert [e[2] for e in replayed] == list(range(1, head + 1))
        assert all(e[5] for e in replayed)  # in Group order
        coordinator.subscribe([(GROUP, head, None)], ms)
        assert pump(a, coordinator, ms, 0) == []
        # COMMAND → the sender's EVENT, and the same Event to the other subscriber.
        coordinator.send_command(post(COORDINATOR), ms)
        sent = pump(a, coordinator, ms, 1)
        accepted = events_of(sent, "command_accepted")[0]
        assert accepted[5] == head + 1
        fanned = events_of(pump(b, worker, ms, 1), "event")
        assert [(e[1], e[2], e[3]) for e in fanned] == [(GROUP, head + 1, accepted[3])]
        # ACK advances the durable Cursor; past the contiguous Cursor the session refuses.
        worker.acknowledge([(GROUP, head + 1)], ms)
        assert pump(b, worker, ms, 0) == []
        # PING is answered with replyToNonce.
        nonce = worker.ping(None, ms)
        assert events_of(pump(b, worker, ms, 1), "pong") == [("pong", nonce)]
        assert gateway.connection_count == 2


def test_hello_failures_answer_and_keep_the_socket() -> None:
    clock, _core, gateway = world()
    ms = now_ms(clock)
    with TestClient(gateway.app) as client, client.websocket_connect("/ws") as ws:
        # Signed with another Agent's key: the challenge's key is not this Agent's.
        impostor = peer(WORKER, key_agent=COORDINATOR)
        failed = events_of(handshake(ws, impostor, ms), "handshake_failed")
        assert failed and failed[0][1]["code"] == "AUTH_INVALID_SIGNATURE"
        assert failed[0][1]["retryable"] is False
        # The connection stays open: a correct HELLO on the same socket succeeds.
        honest = peer(WORKER)
        assert events_of(handshake(ws, honest, ms), "authenticated")


def test_frames_before_hello_are_auth_required_and_versions_are_negotiated() -> None:
    clock, _core, gateway = world()
    with TestClient(gateway.app) as client, client.websocket_connect("/ws") as ws:
        ws.send_text('{"frameId":"urn:missionweaveprotocol:frame:x1","frameType":"PING",'
                     '"nonce":"AAAA","protocolVersion":"0.1","sentAt":"2026-07-15T09:30:00Z"}')
        error = frame(ws.receive_text())["error"]
        assert (error["code"], error["retryable"]) == ("AUTH_REQUIRED", False)
        assert error["relatedFrameId"] == "urn:missionweaveprotocol:frame:x1"
        ws.send_text('{"agentId":"' + COORDINATOR + '","clientNonce":"AAAAAAAAAAAAAAAAAAAAAA",'
                     '"frameId":"urn:missionweaveprotocol:frame:x2","frameType":"HELLO",'
                     '"keyId":"urn:missionweaveprotocol:key:23","phase":"client_init",'
                     '"protocolVersion":"0.1","supportedVersions":["9.9"]}')
        assert frame(ws.receive_text())["error"]["code"] == "UNSUPPORTED_VERSION"


@pytest.mark.parametrize(
    "send,code,close",
    [
        (lambda ws: ws.send_text("not json"), "PROTOCOL_VIOLATION", 1007),
        (lambda ws: ws.send_bytes(b"\x00\x01"), "PROTOCOL_VIOLATION", 1003),
        (lambda ws: ws.send_text('{"frameType":"NOPE"}'), "SCHEMA_VALIDATION_FAILED", 1008),
    ],
)
def test_framing_violations_close_with_their_code(send: Any, code: str, close: int) -> None:
    _clock, _core, gateway = world()
    with TestClient(gateway.app) as client, client.websocket_connect("/ws") as ws:
        send(ws)
        error = frame(ws.receive_text())["error"]
        assert error["fatal"] is True
        assert error["code"] == code
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_text()
        assert closed.value.code == close


def test_hidden_group_is_answered_like_an_absent_one_and_errors_keep_the_socket() -> None:
    clock, core, gateway = world()
    ms = now_ms(clock)
    with TestClient(gateway.app) as client, client.websocket_connect("/ws") as ws:
        worker = peer(WORKER)
        handshake(ws, worker, ms)

        def refusal(group: str) -> Dict[str, Any]:
            worker.subscribe([(group, 0, None)], ms)
            errors = events_of(pump(ws, worker, ms, 1), "error")
            assert len(errors) == 1
            return dict(errors[0][1])

        hidden, absent = refusal(OTHER_GROUP), refusal(ABSENT_GROUP)
        assert hidden["code"] == absent["code"] == "GROUP_NOT_FOUND"
        assert (hidden["groupId"], absent["groupId"]) == (OTHER_GROUP, ABSENT_GROUP)
        for error in (hidden, absent):
            del error["groupId"], error["relatedFrameId"]
        assert hidden == absent
        # A COMMAND into the hidden Group: the same answer; the log does not move.
        before = core.store.last_sequence(OTHER_GROUP)
        worker.send_command(post(WORKER, group=OTHER_GROUP), ms)
        refused = events_of(pump(ws, worker, ms, 1), "command_refused")
        assert refused[0][3]["code"] == "GROUP_NOT_FOUND"
        assert core.store.last_sequence(OTHER_GROUP) == before
        # A Command for a stale Session Epoch: AUTH_STALE_SESSION, not retryable; still open.
        worker.subscribe([(GROUP, 0, None)], ms)
        pump(ws, worker, ms, core.store.last_sequence(GROUP))
        worker.send_command(post(WORKER, epoch=7), ms)
        stale = events_of(pump(ws, worker, ms, 1), "command_refused")[0][3]
        assert (stale["code"], stale["retryable"]) == ("AUTH_STALE_SESSION", False)
        # And the connection is still serving: a valid Command succeeds.
        worker.send_command(post(WORKER), ms)
        assert events_of(pump(ws, worker, ms, 1), "command_accepted")


def test_reference_names_and_kinds() -> None:
    _clock, core, gateway = world()
    assert isinstance(gateway, GroupGateway)
    assert [r.path for r in gateway.app.routes if getattr(r, "path", None) == "/ws"] == ["/ws"]
    adapter = CoreGatewayAdapter(core)
    assert isinstance(adapter, GatewayCore)
    store = InMemoryCursorStore()
    assert isinstance(store, CursorStore)
    store.acknowledge(WORKER, GROUP, 5)
    store.acknowledge(WORKER, GROUP, 3)
    assert store.cursor(WORKER, GROUP) == 5  # never backwards
    with pytest.raises(ValueError):
        store.acknowledge(WORKER, GROUP, -1)
    assert issubclass(GatewaySchemaError, ValueError)
    assert GatewaySchemaError("x", details={"a": 1}).details == {"a": 1}
    assert issubclass(SubscriptionDenied, ValueError)
    error = UnknownCriticalExtension("https://x.example/p", "2", None)
    assert error.details["supportedVersion"] is None
    assert issubclass(CommandAdmissionError, ValueError)
    with pytest.raises(TypeError):
        GroupGateway(core, object())  # type: ignore[arg-type]
    assert OWNER


def test_the_handshake_timeout_closes_on_the_hosts_timer() -> None:
    clock, _core, _gateway = world()
    # A gateway whose handshake must finish within 1 s of the (test) clock.
    gateway = GroupGateway(_core, SessionAuthority(AgentKeyRegistry(), secret=b"t" * 32),
                           clock=clock, limits={"handshake_timeout_ms": 1000})
    with TestClient(gateway.app) as client, client.websocket_connect("/ws") as ws:
        later(clock, 5)
        # The host's one-second timer feeds `on_tick`; the machine decides to close.
        error = frame(ws.receive_text())["error"]
        assert (error["code"], error["fatal"]) == ("AUTH_REQUIRED", True)
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_text()
        assert closed.value.code == 1008


def test_only_known_limits_are_accepted() -> None:
    _clock, core, _gateway = world()
    sessions = SessionAuthority(AgentKeyRegistry(), secret=b"t" * 32)
    with pytest.raises(InvalidInputError):
        GroupGateway(core, sessions, limits={"no_such_limit": 1})
    with pytest.raises(InvalidInputError):
        GroupGateway(core, sessions, limits={"max_frame_bytes": 0})


def test_the_client_session_verifies_every_event() -> None:
    clock, core, gateway = world()
    ms = now_ms(clock)
    with TestClient(gateway.app) as client, client.websocket_connect("/ws") as ws:
        worker = peer(WORKER)
        handshake(ws, worker, ms)
        worker.subscribe([(GROUP, 0, None)], ms)
        for out in worker.poll_output():
            ws.send_text(out.decode())
        first = ws.receive_text()
        # The same frame with its Event altered (the signature no longer verifies): rejected,
        # not delivered, the Cursor unmoved.
        tampered = first.replace('"sequence":1', '"sequence":1,"x":1', 1)
        assert tampered != first
        worker.on_text(tampered.encode(), ms)
        events = list(worker.poll_events())
        assert [e[0] for e in events] == ["rejected"]
        assert worker.cursor(GROUP) == 0
        # The genuine one is delivered in order.
        worker.on_text(first.encode(), ms)
        assert [(e[0], e[2], e[5]) for e in worker.poll_events()] == [("event", 1, True)]
        assert worker.cursor(GROUP) == 1
        assert core.store.last_sequence(GROUP) >= 1
