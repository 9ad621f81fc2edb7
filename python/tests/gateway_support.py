"""Shared set-up of the gateway and client tests: a Core with two Groups (the Coordinator a
member of both, the Worker of ``GROUP`` only), a :class:`GroupGateway` over it, a peer driven
by the Rust client session, and uvicorn on loopback."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
from pathlib import Path
from datetime import datetime, timedelta
from typing import Any, AsyncIterator, Dict, List, Optional, Tuple

import uvicorn

from core_support import (
    AUTHORITY,
    COORDINATOR,
    GROUP,
    KEYS,
    OWNER,
    REGISTRY,
    WORKER,
    Clock,
    create_payload,
    make_core,
    signed,
)
from missionweaveprotocol import _native
from missionweaveprotocol.auth import AgentKeyRegistry, SessionAuthority
from missionweaveprotocol.core import Core
from missionweaveprotocol.gateway import GroupGateway

OTHER_GROUP = "urn:missionweaveprotocol:group:payroll"
OTHER_MISSION = "urn:missionweaveprotocol:mission:run-payroll"
ABSENT_GROUP = "urn:missionweaveprotocol:group:nowhere"
MAIN = "urn:missionweaveprotocol:conversation:finance-main"
_MESSAGES = iter(range(1, 1_000_000))


def seed_commands(deadline: Optional[str] = None) -> List[bytes]:
    """The two Missions (GROUP, OTHER_GROUP; the Coordinator a member of both) and the
    Worker's Membership in GROUP, signed by the MissionOwner; ``deadline`` replaces the
    Missions' (a server on the real clock needs one still ahead)."""
    first, other = create_payload(), _other_payload()
    if deadline is not None:
        first, other = dict(first, deadline=deadline), dict(other, deadline=deadline)
    return [
        signed("mission.create", OWNER, first, groupId=GROUP),
        signed("mission.create", OWNER, other, groupId=OTHER_GROUP),
        signed(
            "membership.change",
            OWNER,
            {"member": {"type": "agent", "id": WORKER}, "role": "worker",
             "scopes": ["work:execute"], "visibilityStartSequence": 1},
        ),
    ]


def world(clock: Optional[Clock] = None) -> Tuple[Clock, Core, GroupGateway]:
    clock = clock or Clock()
    core = make_core(clock, sessions=False)
    now_ms = int(clock().timestamp() * 1000)
    for command in seed_commands():
        core._native.perform(command, now_ms)
    sessions = SessionAuthority(AgentKeyRegistry(), secret=b"k" * 32, clock=clock)
    return clock, core, GroupGateway(core, sessions, clock=clock)


def _other_payload() -> Dict[str, Any]:
    from core_support import create_payload

    payload = create_payload(OTHER_MISSION)
    payload["mainConversationId"] = "urn:missionweaveprotocol:conversation:payroll-main"
    payload["coordinator"] = dict(payload["coordinator"], leaseId="urn:missionweaveprotocol:lease:c2")
    return payload


def post(actor: str, epoch: int = 1, group: str = GROUP, text: str = "hello") -> bytes:
    """``message.post`` by ``actor`` signed for Session Epoch ``epoch``."""
    payload = {
        "messageId": f"urn:missionweaveprotocol:message:gw-{next(_MESSAGES)}",
        "conversationId": MAIN if group == GROUP else "urn:missionweaveprotocol:conversation:payroll-main",
        "content": [{"type": "text", "text": text}],
    }
    return signed("message.post", actor, payload, sessionEpoch=epoch, groupId=group)


def now_ms(clock: Clock) -> int:
    return int(clock().timestamp() * 1000)


def peer(agent: str, key_agent: Optional[str] = None) -> _native.NativeClientSession:
    """The Rust client session of ``agent`` (signing with ``key_agent``'s key)."""
    return _native.NativeClientSession(agent, REGISTRY, AUTHORITY, KEYS[key_agent or agent])


def frame(raw: str) -> Dict[str, Any]:
    value = json.loads(raw)
    assert isinstance(value, dict)
    return value


def loopback_certificate(directory: Path) -> Tuple[Path, Path]:
    """A throwaway self-signed certificate for 127.0.0.1 (``openssl``): ``(cert, key)``. The
    certificate is its own CA: a client trusts it with ``load_verify_locations``."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )
    return cert, key


@contextlib.asynccontextmanager
async def serving(
    gateway: GroupGateway, tls: Optional[Tuple[Path, Path]] = None
) -> AsyncIterator[str]:
    """``gateway.app`` under uvicorn on a loopback port: its ``ws://`` (``wss://`` with
    ``tls``) URL."""
    extra: Dict[str, Any] = {}
    if tls is not None:
        extra = {"ssl_certfile": str(tls[0]), "ssl_keyfile": str(tls[1])}
    config = uvicorn.Config(gateway.app, host="127.0.0.1", port=0, log_level="warning",
                            lifespan="off", **extra)
    server = uvicorn.Server(config)
    task = asyncio.ensure_future(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"{'wss' if tls else 'ws'}://127.0.0.1:{port}/ws"
    finally:
        server.should_exit = True
        await task


def later(clock: Clock, seconds: float) -> None:
    clock.now = clock.now + timedelta(seconds=seconds)


def events_of(items: List[Any], kind: str) -> List[Any]:
    return [i for i in items if i[0] == kind]


__all__ = ["datetime"]
