"""The Rust server (the ``missionweaveprotocol-server`` console script: the Rust server in the
Python process) over a SQLite file seeded by a Python Core, for the Python client: two Groups,
the Coordinator a member of both, the Worker of the first. The same Organization as the
console-script tests (``cli_support``), Agent Cards signed by the registrar, ``--dev`` TLS 1.3
with its certificate as the client's CA."""

from __future__ import annotations

import asyncio
import ssl
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator, Optional

from cli_support import (
    AUTHORITY, COORDINATOR, KEYS, WORKER, Org, ServerProcess, registry_bytes,
)
from core_support import Clock, signed
from gateway_support import MAIN, OTHER_GROUP, OTHER_MISSION, seed_commands
from missionweaveprotocol.client import AgentClient
from missionweaveprotocol.core import Core
from missionweaveprotocol.models import Principal
from missionweaveprotocol.registry import AgentRegistryKeyResolver
from missionweaveprotocol.store import SQLiteStore

GROUP = "urn:missionweaveprotocol:group:finance"
_MESSAGES = iter(range(1, 1 << 62))


def seed(org: Org) -> None:
    """The gateway tests' two Missions and the Worker's Membership (``seed_commands``),
    committed by a Python Core holding the server's authority key, into the server's SQLite
    file."""
    registry = AgentRegistryKeyResolver(org.registry)

    async def run() -> None:
        store = SQLiteStore(org.path("authority.db"))
        await store.initialize()
        core = Core(store, clock=Clock(), registry=registry, authority_key=KEYS[AUTHORITY],
                    authority=Principal.service(AUTHORITY))
        # The server runs on the real clock: the fixtures' deadlines are in the past by now.
        for command in seed_commands(deadline="2099-01-01T00:00:00Z"):
            await core.perform(command)
        await store.close()

    asyncio.run(run())


@contextmanager
def rust_server(directory: Path) -> Iterator[ServerProcess]:
    org = Org(directory)
    seed(org)
    server = ServerProcess(org.dev_args()).ready()
    try:
        yield server
    finally:
        server.stop()


def tls(directory: Path) -> ssl.SSLContext:
    """Trusts the server's ``--dev`` certificate only."""
    context = ssl.create_default_context(cafile=str(directory / "dev-cert.pem"))
    return context


def client(url: str, agent: str, directory: Path, **extra: Any) -> AgentClient:
    """``agent``'s AgentClient over ``wss`` trusting only the server's certificate."""
    return AgentClient(
        url, agent_id=agent, signing_key=KEYS[agent],
        registry=AgentRegistryKeyResolver(registry_bytes()),
        authority_id=AUTHORITY, ssl=tls(directory), initial_backoff=0.05, **extra,
    )


def post(actor: str, epoch: int, group: str = GROUP, text: str = "hello",
         now: Optional[datetime] = None) -> bytes:
    """``message.post`` by ``actor`` for Session Epoch ``epoch``, issued now (the server's
    freshness window is the real clock's)."""
    payload = {
        "messageId": f"urn:missionweaveprotocol:message:rs-{next(_MESSAGES)}",
        "conversationId": MAIN if group == GROUP
        else "urn:missionweaveprotocol:conversation:payroll-main",
        "content": [{"type": "text", "text": text}],
    }
    issued = now or datetime.now(timezone.utc)
    return signed("message.post", actor, payload, sessionEpoch=epoch, groupId=group,
                  issued_at=issued)


__all__ = ["COORDINATOR", "GROUP", "OTHER_GROUP", "OTHER_MISSION", "WORKER", "client", "post",
           "rust_server", "seed", "tls"]
