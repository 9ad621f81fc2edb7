"""The console entry points (``reference-python.md`` §1.29, §2.3) and the pieces of the
reference's ``cli`` module that users import.

The three console scripts of the wheel:

- ``missionweaveprotocol-server`` → :func:`server`: the **Rust server** (``core/server``) run
  in-process with the GIL released, not uvicorn. Its flags, environment variables, defaults,
  messages and exit codes are the Rust binary's, parsed by the same Rust code (the reference's
  flags plus ``--dev`` and a few limits; ``--help`` lists them): 0 after a graceful shutdown
  (SIGINT or SIGTERM: open connections are closed with 1001), 1 when start-up fails (a card
  refused, an unusable Registry, store or certificate), 2 for a flag problem (TLS or
  ``--dev`` required unless ``--allow-insecure``, missing secrets, a short session secret...).
- ``missionweaveprotocol-demo`` → :func:`demo`: the proof of concept has not landed yet; it
  says so on standard error and exits 2.
- ``missionweaveprotocol-conformance`` → :func:`conformance`: the Rust conformance command
  (:func:`missionweaveprotocol.conformance.main`).

For uvicorn users, :func:`create_gateway_app` returns the :class:`~.gateway.GroupGateway`
FastAPI app over an SQL store (:func:`tls13_context_factory` pins uvicorn's TLS to 1.3), and
:func:`load_agent_cards` reads and checks an Agent Card file exactly as the server's
``--registry`` is checked.

Where this differs from the reference, on purpose:

- ``server_app``, ``demo_app`` and ``conformance_app`` are the entry-point functions
  themselves (``app(argv=None) -> int``), not Typer apps: the flags are parsed by the Rust
  server's parser (one source of truth) and the package does not depend on Typer.
- :func:`load_agent_cards` verifies every card (six stages, Agent Card profile) against the
  Organization's Registry evidence ``registry`` — as the server does — and returns the signed
  card documents (what the Core registers), not the compact ``models.AgentCard`` projection.
  Cards are refused unless signed (the reference accepts unsigned cards without a trust key).
"""

from __future__ import annotations

import os
import signal
import ssl
import sys
import threading
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from types import FrameType
from typing import (
    TYPE_CHECKING,
    Any,
    Optional,
    Protocol,
    Union,
)

from . import _native
from .conformance import main as _conformance_main
from .core import DEFAULT_AUTHORITY_KEY_ID
from .documents import ProtocolDocument

if TYPE_CHECKING:  # FastAPI is the optional ``network`` dependency.
    from fastapi import FastAPI

    from .registry import AgentRegistryKeyResolver

__all__ = [
    "POCReport",
    "POCRunner",
    "conformance",
    "conformance_app",
    "create_gateway_app",
    "demo",
    "demo_app",
    "load_agent_cards",
    "server",
    "server_app",
    "tls13_context_factory",
]

PathLike = Union[str, "os.PathLike[str]"]
RegistryLike = Union["AgentRegistryKeyResolver", bytes]

class POCReport(Protocol):
    """What the proof of concept reports (the reference's ``POCReport`` Protocol)."""

    @property
    def passed(self) -> bool: ...

    def to_dict(self) -> dict[str, Any]: ...


#: The reference's proof-of-concept runner: ``runner(workdir) -> POCReport``.
POCRunner = Callable[[Optional["os.PathLike[str]"]], POCReport]


def tls13_context_factory(
    _config: object, default_factory: Callable[[], ssl.SSLContext]
) -> ssl.SSLContext:
    """uvicorn's ``ssl_context_factory``: the context ``default_factory`` builds, limited to
    TLS 1.3 (minimum = maximum), as §17.1 requires::

        uvicorn.run(app, ssl_certfile=..., ssl_keyfile=...,
                    ssl_context_factory=tls13_context_factory)
    """
    context = default_factory()
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    context.maximum_version = ssl.TLSVersion.TLSv1_3
    return context


def load_agent_cards(
    path: PathLike,
    *,
    organization_public_key: str | None = None,
    registry: RegistryLike,
) -> tuple[ProtocolDocument, ...]:
    """The Agent Cards of the file at ``path`` (a JSON list of signed cards or
    ``{"agentCards": [...]}``), checked by the server's own code: not empty, unique
    ``agentId``, each signed and verified against the Registry evidence ``registry`` (an
    ``AgentRegistryKeyResolver`` or its bytes) and, with ``organization_public_key``
    (base64url), signed by that key. ``ValueError`` with the server's message otherwise
    (unreadable, not JSON, not a list, unsigned, tampered, foreign-signed, duplicate, empty)."""
    cards = _native.load_agent_cards(os.fspath(path), registry, organization_public_key)
    return tuple(_document(card) for card in cards)


def _document(card: bytes) -> ProtocolDocument:
    value = _native.parse_json(card)
    assert isinstance(value, dict)
    return dict(value)


def create_gateway_app(
    *,
    database_url: str,
    agent_cards: Sequence[Mapping[str, Any]],
    command_key_resolver: RegistryLike,
    session_secret: str | None = None,
    authority_key_id: str = DEFAULT_AUTHORITY_KEY_ID,
    authority_private_key: str | None = None,
) -> FastAPI:
    """The :class:`~.gateway.GroupGateway` FastAPI app (route ``/ws``) over the SQL store
    ``database_url``, a :class:`~.core.Core` verifying against ``command_key_resolver`` (the
    Registry evidence) and signing Events with ``authority_private_key`` (base64url seed) under
    ``authority_key_id`` — the key the Registry binds to the Group Authority — and a
    :class:`~.auth.SessionAuthority` with ``session_secret`` (at least 32 UTF-8 bytes; default
    random per process). Serve it with uvicorn (``ssl_context_factory=tls13_context_factory``).

    The store is opened here (the Core needs it); the app's lifespan registers
    ``agent_cards`` (e.g. from :func:`load_agent_cards`; checked again as the server checks a
    card file, ``ValueError``) with ``…registry.agent_card_register`` Commands, as the server
    does at start (``RuntimeError`` for a card whose version is not newer than the registered
    one's), and closes the store at shutdown. ``ValueError`` for a
    key or secret that is not usable, an authority key ID the Registry does not bind, or cards
    that fail the server's checks.
    """
    from fastapi import FastAPI

    from .auth import AgentKeyRegistry, SessionAuthority
    from .core import Core
    from .crypto import SigningKey
    from .gateway import GroupGateway
    from .models import Principal
    from .store import SQLStore

    if session_secret is not None and len(session_secret.encode("utf-8")) < 32:
        raise ValueError("session_secret must hold at least 32 UTF-8 bytes")
    if authority_private_key is None:
        authority_key = SigningKey.generate(authority_key_id)
    else:
        authority_key = SigningKey.from_base64url(authority_key_id, authority_private_key)
    kind, authority_id = _native.authority_principal(command_key_resolver, authority_key_id)
    cards = [dict(card) for card in agent_cards]
    store = SQLStore(database_url)
    store._native.initialize()
    try:
        core = Core(
            store,
            registry=command_key_resolver,
            authority_key=authority_key,
            authority=Principal(type=kind, id=authority_id),  # type: ignore[arg-type]
        )
    except BaseException:
        store._native.close()
        raise

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        _native.register_agent_cards(core._native, cards, command_key_resolver)
        try:
            yield
        finally:
            await store.close()

    sessions = SessionAuthority(
        AgentKeyRegistry(),
        secret=None if session_secret is None else session_secret.encode("utf-8"),
    )
    return GroupGateway(core, sessions, app=FastAPI(lifespan=lifespan)).app


class _Stop(Exception):
    """Raised by the SIGTERM handler: the Rust server sees the pending Python exception and
    shuts down gracefully (it consumes the exception)."""


def _raise_stop(_signum: int, _frame: FrameType | None) -> None:
    raise _Stop()


class _SigtermStops:
    """While running on the main thread: SIGTERM raises :class:`_Stop` (SIGINT already raises
    ``KeyboardInterrupt``), so both end the server gracefully."""

    def __enter__(self) -> None:
        self._previous: Any = None
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGTERM, _raise_stop)

    def __exit__(self, *_exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGTERM, self._previous)


def _args(argv: Sequence[str] | None) -> list[str]:
    return sys.argv[1:] if argv is None else list(argv)


def server(argv: Sequence[str] | None = None) -> int:
    """``missionweaveprotocol-server [OPTIONS]``: runs the Rust server in this process (GIL
    released) on ``argv`` (default ``sys.argv[1:]``) until SIGINT/SIGTERM, and returns its exit
    code (the console script exits with it). Call it from the main thread: only there do
    signals reach it."""
    with _SigtermStops():
        return _native.run_server(_args(argv), sys.stdout, sys.stderr)


def demo(argv: Sequence[str] | None = None) -> int:
    """``missionweaveprotocol-demo [--workdir DIR] [--database-url URL]``: runs the proof of
    concept (:func:`missionweaveprotocol.poc.run_poc_sync`) against a server process it starts,
    prints the report as one line of canonical JSON and exits 0 when every check passed, else
    1 with the failed checks named on stderr (2 for a usage problem)."""
    import argparse
    from pathlib import Path

    from .poc import run_poc_sync

    parser = argparse.ArgumentParser(
        prog="missionweaveprotocol-demo",
        description="The §22 proof of concept over wss against a missionweaveprotocol-server process.",
    )
    parser.add_argument("--workdir", type=Path, default=None,
                        help="where the server's database, certificate and the Agent stores go (default: a temporary directory)")
    parser.add_argument("--database-url", default=None,
                        help="the server's store (default: a SQLite file under the work directory; postgresql://… for an EMPTY PostgreSQL database)")
    try:
        options = parser.parse_args(_args(argv))
    except SystemExit as exit_:
        return int(exit_.code or 0)
    try:
        report = run_poc_sync(options.workdir, database_url=options.database_url)
    except (AssertionError, RuntimeError, ValueError, OSError) as error:
        print(f"Error: {error}", file=sys.stderr)
        return 1
    print(report.to_json())
    if not report.passed:
        print("failed checks: " + ", ".join(report.failed_checks), file=sys.stderr)
        return 1
    return 0


def conformance(argv: Sequence[str] | None = None) -> int:
    """``missionweaveprotocol-conformance``: the Rust conformance command (see ``--help``)."""
    return _conformance_main(argv)


server_app = server
demo_app = demo
conformance_app = conformance
