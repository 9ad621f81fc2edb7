"""The end-to-end script of issue 24 through the Python ``AgentClient`` against the Rust server
(the ``missionweaveprotocol-server`` console script, ``--dev``: TLS 1.3 on loopback, its
certificate the only CA trusted): authenticate, subscribe to two Groups, send Commands and get
their Events, receive the other Agent's Events in Group order, ACK, drop the connection and
reconnect from the Cursor kept in ``SQLiteAgentStore``; a refusal is a typed ``CommandRefused``.
The same script runs from Rust (core/client/tests), Node (js/test/rust-server.test.mjs) and
against ``GroupGateway.app`` under uvicorn (test_client.py)."""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path
from typing import List

import pytest

from missionweaveprotocol.client import CommandRefused, ConnectionLost, DeliveredEvent
from missionweaveprotocol.local_store import SQLiteAgentStore
from rust_server_support import COORDINATOR, GROUP, OTHER_GROUP, WORKER, client, post, rust_server

WAIT = 60


async def read_until(agent: object, group: str, event_id: str, after: int) -> List[DeliveredEvent]:
    """Every Event of ``group`` after ``after`` up to ``event_id``: in order, gap-free, ACKed."""
    seen: List[DeliveredEvent] = []
    expected = after + 1
    while True:
        event = await asyncio.wait_for(agent.next_event(group), WAIT)  # type: ignore[attr-defined]
        assert event.group_id == group
        assert event.sequence == expected, "in Group order, without gaps or repeats"
        assert event.in_order
        await agent.acknowledge(event)  # type: ignore[attr-defined]
        seen.append(event)
        expected += 1
        if event.event_id == event_id:
            return seen


def test_end_to_end_against_the_rust_server(tmp_path: Path) -> None:
    store = SQLiteAgentStore(tmp_path / "worker.sqlite3")

    async def scenario(url: str) -> None:
        async with client(url, COORDINATOR, tmp_path) as coordinator:
            epoch = coordinator.session_epoch
            assert epoch is not None and epoch >= 1
            worker = client(url, WORKER, tmp_path, store=store)
            await worker.connect()
            await coordinator.subscribe([GROUP, OTHER_GROUP])
            await worker.subscribe([GROUP])
            # Commands -> their Events at the sender.
            first = await asyncio.wait_for(coordinator.send(post(COORDINATOR, epoch, GROUP, "one")), WAIT)
            assert (first.group_id, first.kind) == (GROUP, "message.posted")
            second = await asyncio.wait_for(
                coordinator.send(post(COORDINATOR, epoch, OTHER_GROUP, "two")), WAIT
            )
            assert second.group_id == OTHER_GROUP
            # The Worker gets its Group's Events in order from the start (Cursor 0).
            seen = await read_until(worker, GROUP, first.event_id, 0)
            assert store.cursor(WORKER, GROUP) == first.sequence
            assert len(seen) == first.sequence
            # A refusal is typed, the connection stays: the Worker cannot see OTHER_GROUP.
            assert worker.session_epoch is not None
            with pytest.raises(CommandRefused) as refused:
                await asyncio.wait_for(
                    worker.send(post(WORKER, worker.session_epoch, OTHER_GROUP)), WAIT
                )
            assert refused.value.code == "GROUP_NOT_FOUND"
            # The Worker's socket drops; it reconnects (a new Session Epoch) from its Cursor.
            before = worker.session_epoch
            await worker.drop()
            third = await asyncio.wait_for(coordinator.send(post(COORDINATOR, epoch, GROUP, "three")), WAIT)
            await read_until(worker, GROUP, third.event_id, first.sequence)
            assert worker.session_epoch is not None and worker.session_epoch > before
            # The Worker's own Command under its new epoch.
            own = await asyncio.wait_for(worker.send(post(WORKER, worker.session_epoch, GROUP, "four")), WAIT)
            await read_until(worker, GROUP, own.event_id, third.sequence)
            await worker.close()
            # A new client over the same store resumes after the acknowledged Cursor.
            assert store.cursor(WORKER, GROUP) == own.sequence
            fifth = await asyncio.wait_for(coordinator.send(post(COORDINATOR, epoch, GROUP, "five")), WAIT)
            async with client(url, WORKER, tmp_path, store=store) as resumed:
                await resumed.subscribe([GROUP])
                got = await read_until(resumed, GROUP, fifth.event_id, own.sequence)
                assert [e.sequence for e in got] == [own.sequence + 1]

    with rust_server(tmp_path) as server:
        asyncio.run(scenario(server.url))


def test_without_the_dev_certificate_the_handshake_fails(tmp_path: Path) -> None:
    async def scenario(url: str) -> None:
        untrusted = client(url, COORDINATOR, tmp_path, reconnect=False)
        untrusted._ssl = ssl.create_default_context()  # the system's CAs only
        with pytest.raises((ConnectionLost, ssl.SSLError, OSError)):
            await asyncio.wait_for(untrusted.connect(), WAIT)
        await untrusted.close()

    with rust_server(tmp_path) as server:
        asyncio.run(scenario(server.url))
