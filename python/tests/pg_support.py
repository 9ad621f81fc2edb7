"""The PostgreSQL server the store tests run against, and a fresh database per test.

The server is ``MWP_POSTGRES_URL`` (``scripts/test-python.sh`` starts a private cluster and
exports it); when unset, the private cluster is started here with ``scripts/pg-cluster.sh
start`` (which installs PostgreSQL from Debian's packages when missing). The tests never skip.
Databases are created and dropped with ``psql`` (installed with the server)."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import threading
import uuid
from functools import lru_cache
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parents[2]


@lru_cache(maxsize=None)
def server_url() -> str:
    url = os.environ.get("MWP_POSTGRES_URL", "")
    if url:
        return url
    started = subprocess.run(["bash", str(ROOT / "scripts" / "pg-cluster.sh"), "start"],
                             check=False, capture_output=True, text=True)
    assert started.returncode == 0, f"scripts/pg-cluster.sh start failed:\n{started.stderr}"
    return started.stdout.strip().splitlines()[-1]


@lru_cache(maxsize=None)
def psql() -> str:
    """``psql`` on PATH, or the newest in Debian's versioned server directories."""
    found = shutil.which("psql")
    if found:
        return found
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"),
                        key=lambda p: [int(x) if x.isdigit() else 0 for x in p.split("/")])
    assert candidates, "psql not found (scripts/pg-cluster.sh installs it with the server)"
    return candidates[-1]


def run_sql(statement: str) -> None:
    done = subprocess.run([psql(), server_url(), "-v", "ON_ERROR_STOP=1", "-qc", statement],
                          check=False, capture_output=True, text=True)
    assert done.returncode == 0, f"psql {statement!r} failed:\n{done.stderr}"


def with_database(url: str, database: str) -> str:
    """``url`` naming ``database`` instead of its own (the query, if any, kept)."""
    base, sep, query = url.partition("?")
    scheme, _, rest = base.partition("://")
    authority = rest.split("/", 1)[0]
    return f"{scheme}://{authority}/{database}{sep}{query}"


class Database:
    """A database of its own on the test server."""

    def __init__(self, name: str) -> None:
        self.name = name

    def url(self, scheme: str = "postgresql") -> str:
        """The libpq URL of this database, with ``scheme`` (e.g. ``postgresql+asyncpg``)."""
        rest = with_database(server_url(), self.name).partition("://")[2]
        return f"{scheme}://{rest}"


@pytest.fixture
def database() -> Iterator[Database]:
    """A fresh database, dropped (with any connection still open) after the test."""
    name = f"mwp_py_{os.getpid()}_{uuid.uuid4().hex[:12]}"
    run_sql(f'CREATE DATABASE "{name}"')
    yield Database(name)
    run_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def closed_port() -> int:
    """A loopback port nothing listens on (a listener bound and closed)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


class SilentServer:
    """A loopback listener that accepts connections, says nothing for ``hold`` seconds, then
    closes them: a PostgreSQL client connecting to it waits that long, then fails."""

    def __init__(self, hold: float) -> None:
        import socket

        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen()
        self.port: int = self._socket.getsockname()[1]
        self._hold = hold
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        import time

        try:
            connection, _ = self._socket.accept()
        except OSError:
            return
        time.sleep(self._hold)
        connection.close()

    def close(self) -> None:
        self._socket.close()
        self._thread.join(timeout=10)
