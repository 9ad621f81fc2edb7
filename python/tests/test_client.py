"""``missionweaveprotocol.client.AgentClient`` against ``GroupGateway.app`` under uvicorn on
loopback (a real socket, the ``websockets`` client): authenticate, subscribe to two Groups
with Cursors from ``SQLiteAgentStore``, send Commands and await their Events or typed errors,
receive the other Agent's Events in Group order, ACK, drop the connection and resume from the
Cursor; a refused HELLO raises; ``wss://`` needs a TLS context."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import List

import pytest

from core_support import AUTHORITY, COORDINATOR, GROUP, KEYS, REGISTRY, WORKER
from gateway_support import ABSENT_GROUP, OTHER_GROUP, loopback_certificate, post, serving, world
from missionweaveprotocol.client import (
    AgentClient,
    CommandRefused,
    ConnectionLost,
    DeliveredEvent,
)
from missionweaveprotocol.errors import AuthenticationError
from missionweaveprotocol.local_store import SQLiteAgentStore
from missionweaveprotocol.signed_documents import SignedDocumentCodec
from missionweaveprotocol.signed_documents import SignedDocumentKind


def client(url: str, agent: str, clock: object, **extra: object) -> AgentClient:
    return AgentClient(
        url, agent_id=agent, signing_key=KEYS[agent], registry=REGISTRY,
        authority_id=AUTHORITY, clock=clock, initial_backoff=0.05,  # type: ignore[arg-type]
        **extra,  # type: ignore[arg-type]
    )


def test_end_to_end_two_groups_fan_out_ack_and_resume(tmp_path: Path) -> None:
    clock, core, gateway = world()
    store = SQLiteAgentStore(tmp_path / "coordinator.sqlite3")

    async def scenario() -> None:
        async with serving(gateway) as url:
            async with client(url, COORDINATOR, clock, store=store) as coordinator, \
                    client(url, WORKER, clock) as worker:
                assert coordinator.session_epoch == 1
                await coordinator.subscribe([GROUP, OTHER_GROUP])
                await worker.subscribe([GROUP])
                heads = {g: core.store.last_sequence(g) for g in (GROUP, OTHER_GROUP)}
                # Replay of both Groups, in order, verified.
                for group in (GROUP, OTHER_GROUP):
                    seen: List[int] = []
                    while len(seen) < heads[group]:
                        event = await asyncio.wait_for(coordinator.next_event(group), 10)
                        assert event.in_order
                        seen.append(event.sequence)
                        await coordinator.acknowledge(event)
                    assert seen == list(range(1, heads[group] + 1))
                for _ in range(heads[GROUP]):
                    await asyncio.wait_for(worker.next_event(GROUP), 10)
                # COMMAND → its Event at the sender, and fanned out to the other subscriber.
                event = await asyncio.wait_for(worker.send(post(WORKER)), 10)
                assert isinstance(event, DeliveredEvent)
                assert (event.group_id, event.sequence) == (GROUP, heads[GROUP] + 1)
                assert event.kind == "message.posted"
                SignedDocumentCodec().verify(SignedDocumentKind.EVENT, event.signed_bytes, REGISTRY)
                fanned = await asyncio.wait_for(coordinator.next_event(GROUP), 10)
                assert fanned.event_id == event.event_id
                await coordinator.acknowledge(fanned)
                assert store.cursor(COORDINATOR, GROUP) == heads[GROUP] + 1
                # A typed error, the connection kept: the Worker cannot see OTHER_GROUP.
                with pytest.raises(CommandRefused) as refused:
                    await asyncio.wait_for(
                        worker.send(post(WORKER, group=OTHER_GROUP)), 10
                    )
                assert refused.value.code == "GROUP_NOT_FOUND"
                # ... answered exactly like a Group that does not exist (§17.2).
                with pytest.raises(CommandRefused) as absent:
                    await asyncio.wait_for(
                        worker.send(post(WORKER, group=ABSENT_GROUP)), 10
                    )
                hidden_error, absent_error = dict(refused.value.error), dict(absent.value.error)
                for error in (hidden_error, absent_error):
                    for member in ("groupId", "relatedFrameId", "relatedActionId"):
                        error.pop(member, None)
                assert hidden_error == absent_error
                assert worker.connections == 1
                # Drop the coordinator's socket; meanwhile the worker posts twice.
                await coordinator.drop()
                posted = [await asyncio.wait_for(worker.send(post(WORKER)), 10)
                          for _ in range(2)]
                epoch = await asyncio.wait_for(coordinator.authenticated(), 10)
                assert epoch == 2 and coordinator.connections == 2
                # Resumed from the Cursor: exactly the two missed Events, in order.
                resumed = [await asyncio.wait_for(coordinator.next_event(GROUP), 10)
                           for _ in range(2)]
                assert [e.event_id for e in resumed] == [e.event_id for e in posted]
                assert coordinator.cursor(GROUP) == heads[GROUP] + 3
                # Commands carry the new Session Epoch.
                mine = await asyncio.wait_for(coordinator.send(post(COORDINATOR, epoch=2)), 10)
                assert mine.sequence == heads[GROUP] + 4
                with pytest.raises(CommandRefused) as stale:
                    await asyncio.wait_for(coordinator.send(post(COORDINATOR, epoch=1)), 10)
                assert stale.value.code == "AUTH_STALE_SESSION"

    asyncio.run(scenario())
    store.close()


def test_refused_hello_raises_and_does_not_reconnect() -> None:
    clock, _core, gateway = world()

    async def scenario() -> None:
        async with serving(gateway) as url:
            impostor = AgentClient(
                url, agent_id=WORKER, signing_key=KEYS[COORDINATOR], registry=REGISTRY,
                authority_id=AUTHORITY, clock=clock,  # type: ignore[arg-type]
            )
            with pytest.raises(AuthenticationError) as refused:
                await asyncio.wait_for(impostor.connect(), 10)
            assert refused.value.code == "AUTH_INVALID_SIGNATURE"
            await impostor.close()
            assert impostor.connections == 1

    asyncio.run(scenario())


def test_urls_and_tls() -> None:
    with pytest.raises(ValueError):
        AgentClient("http://x", agent_id=WORKER, signing_key=KEYS[WORKER], registry=REGISTRY,
                    authority_id=AUTHORITY)
    import ssl

    with pytest.raises(ValueError):
        AgentClient("ws://x", agent_id=WORKER, signing_key=KEYS[WORKER], registry=REGISTRY,
                    authority_id=AUTHORITY, ssl=ssl.create_default_context())


def test_wss_with_a_custom_ca_and_tls_13(tmp_path: Path) -> None:
    import ssl

    clock, core, gateway = world()
    cert, key = loopback_certificate(tmp_path)

    async def scenario() -> None:
        async with serving(gateway, tls=(cert, key)) as url:
            assert url.startswith("wss://")
            trusted = ssl.create_default_context(cafile=str(cert))
            trusted.minimum_version = ssl.TLSVersion.TLSv1_3
            async with client(url, WORKER, clock, ssl=trusted) as worker:
                await worker.subscribe([GROUP])
                head = core.store.last_sequence(GROUP)
                for sequence in range(1, head + 1):
                    event = await asyncio.wait_for(worker.next_event(GROUP), 10)
                    assert event.sequence == sequence
                event = await asyncio.wait_for(worker.send(post(WORKER)), 10)
                assert event.sequence == head + 1
            # Without the CA the certificate is refused: no session, a TLS error.
            untrusting = AgentClient(
                url, agent_id=WORKER, signing_key=KEYS[WORKER], registry=REGISTRY,
                authority_id=AUTHORITY, clock=clock, reconnect=False,  # type: ignore[arg-type]
            )
            with pytest.raises(Exception) as refused:
                await asyncio.wait_for(untrusting.connect(), 10)
            assert untrusting.connections == 0
            assert isinstance(refused.value, ConnectionLost)
            assert isinstance(refused.value.__cause__, ssl.SSLError)
            await untrusting.close()

    asyncio.run(scenario())


@pytest.mark.parametrize(
    "message,code,close",
    [("not json", "PROTOCOL_VIOLATION", 1007), (b"\x00", "PROTOCOL_VIOLATION", 1003),
     ('{"frameType":"NOPE"}', "SCHEMA_VALIDATION_FAILED", 1008)],
)
def test_raw_socket_framing_violations_under_uvicorn(message: object, code: str, close: int) -> None:
    import json

    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    _clock, _core, gateway = world()

    async def scenario() -> None:
        async with serving(gateway) as url, connect(url) as socket:
            # Before HELLO any valid frame is AUTH_REQUIRED, and the socket stays open.
            await socket.send(
                '{"frameId":"urn:missionweaveprotocol:frame:r1","frameType":"PING",'
                '"nonce":"AAAA","protocolVersion":"0.1","sentAt":"2026-07-15T09:30:00Z"}'
            )
            first = json.loads(await asyncio.wait_for(socket.recv(), 10))["error"]
            assert (first["code"], first.get("fatal")) == ("AUTH_REQUIRED", None)
            await socket.send(message)  # type: ignore[arg-type]
            error = json.loads(await asyncio.wait_for(socket.recv(), 10))["error"]
            assert (error["code"], error["fatal"]) == (code, True)
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(socket.recv(), 10)
            assert socket.close_code == close

    asyncio.run(scenario())
