"""``store.SQLStore`` / ``SQLiteStore`` / ``PostgreSQLStore`` (issue 11, Python): a Core over a
SQLite file works as over ``InMemoryStore``; a new Core over a new store on the same file replays
the same Events and continues; URL forms and errors; the life cycle (``initialize``, ``close``,
``RuntimeError`` outside it); database I/O with the GIL released."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Coroutine, List, TypeVar

import pytest

from core_support import GROUP, MISSION, NOW, Clock, authorize, create, make_core, offer
from durable_flow import first_flow, second_flow
from missionweaveprotocol.core import (
    ErrorCode,
    MissionWeaveProtocolError,
    RevisionConflict,
    StoreError,
)
from missionweaveprotocol.errors import InvalidInputError
from missionweaveprotocol.models import Event
from missionweaveprotocol.store import InMemoryStore, PostgreSQLStore, SQLiteStore, SQLStore

T = TypeVar("T")
NOW_MS = int(NOW.timestamp()) * 1000


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


async def opened(store: SQLStore) -> SQLStore:
    await store.initialize()
    return store


def test_a_flow_on_a_file_then_a_new_core_over_a_new_store_replays_and_continues(
    tmp_path: Path,
) -> None:
    path = tmp_path / "authority.db"

    async def first() -> List[Event]:
        store = await opened(SQLiteStore(path))
        assert store.dialect_name == "sqlite"
        assert store.url == f"sqlite:///{path}"
        return await first_flow(store)

    events = run(first())
    assert path.exists()
    run(second_flow_on(SQLiteStore(str(path)), events))


async def second_flow_on(store: SQLStore, events: List[Event]) -> None:
    await second_flow(await opened(store), events)


def test_concurrent_awaits_on_a_file_keep_one_contiguous_sequence(tmp_path: Path) -> None:
    async def main() -> None:
        store = await opened(SQLiteStore(tmp_path / "c.db"))
        core = make_core(store=store)
        await core.perform(create())
        # Several Groups at once and several Commands of one Group at once.
        others = [create(f"{MISSION}-{i}", f"{GROUP}-{i}") for i in range(8)]
        results = await asyncio.gather(*(core.perform(raw) for raw in others),
                                       core.perform(authorize()), core.perform(offer()))
        assert all(isinstance(r, Event) for r in results)
        assert [e.sequence for e in await core.replay(GROUP)] == [1, 2, 3]
        assert all(store.last_sequence(f"{GROUP}-{i}") == 1 for i in range(8))
        await store.close()
    run(main())


def test_an_in_memory_sqlite_store_is_private_to_its_object() -> None:
    async def main() -> None:
        store = await opened(SQLiteStore())
        assert store.url == "sqlite:///:memory:"
        core = make_core(store=store)
        assert (await core.perform(create())).sequence == 1
        assert store.last_sequence(GROUP) == 1
        other = await opened(SQLiteStore(":memory:"))
        assert other.last_sequence(GROUP) == 0
        by_url = await opened(SQLStore("sqlite:///:memory:"))
        assert by_url.last_sequence(GROUP) == 0
        for s in (store, other, by_url):
            await s.close()
    run(main())


def test_url_forms_dialects_and_masking() -> None:
    assert SQLStore("sqlite:///relative.db").dialect_name == "sqlite"
    assert SQLStore("sqlite:////abs/path.db").url == "sqlite:////abs/path.db"
    assert SQLStore("sqlite+aiosqlite:///./missionweaveprotocol.db").dialect_name == "sqlite"
    pg = SQLStore("postgresql+asyncpg://app:secret@db.internal:5432/mwp")
    assert pg.dialect_name == "postgresql"
    assert pg.url == "postgresql+asyncpg://app:***@db.internal:5432/mwp"
    assert "secret" not in repr(pg)
    assert SQLStore("postgres://db/mwp").dialect_name == "postgresql"
    assert PostgreSQLStore("postgresql://app:pw@db/mwp").url == "postgresql://app:***@db/mwp"
    assert isinstance(PostgreSQLStore("postgres://db/mwp"), SQLStore)
    assert isinstance(SQLiteStore(), SQLStore)
    assert SQLiteStore(echo=True).echo is True


@pytest.mark.parametrize("url", [
    "", "relative.db", "mysql://u:secret@h/db", "sqlite3:///x.db", "sqlite+asyncpg:///x.db",
    "sqlite:///", "sqlite:///x.db?mode=ro", "sqlite://host/x.db", " sqlite:///x.db",
])
def test_other_urls_are_value_errors(url: str) -> None:
    with pytest.raises(ValueError) as caught:
        SQLStore(url)
    assert isinstance(caught.value, InvalidInputError)
    assert caught.value.code == "PROTOCOL_VIOLATION"
    assert caught.value.reason is not None and "store" in caught.value.reason
    assert "secret" not in str(caught.value)


def test_postgresql_store_takes_postgres_urls_only() -> None:
    for url in ("sqlite:///x.db", "mysql://h/db", ""):
        with pytest.raises(ValueError):
            PostgreSQLStore(url)
    with pytest.raises(ValueError, match="postgresql"):
        PostgreSQLStore("sqlite:///x.db")
    with pytest.raises(ValueError):
        SQLiteStore("")
    with pytest.raises(TypeError):
        SQLStore(42)  # type: ignore[arg-type]


def test_use_before_initialize_is_a_runtime_error(tmp_path: Path) -> None:
    path = tmp_path / "later.db"
    store = SQLiteStore(path)
    with pytest.raises(RuntimeError, match="not initialized") as caught:
        store.last_sequence(GROUP)
    assert getattr(caught.value, "reason") == "store-not-initialized"
    with pytest.raises(RuntimeError, match="not initialized"):
        make_core(store=store)
    assert not path.exists()  # nothing was opened
    run(store.initialize())
    assert path.exists() and store.last_sequence(GROUP) == 0
    run(store.initialize())  # idempotent while open
    run(store.close())


def test_close_is_idempotent_and_final(tmp_path: Path) -> None:
    async def main() -> None:
        store = await opened(SQLiteStore(tmp_path / "closed.db"))
        core = make_core(store=store)
        await core.perform(create())
        await store.close()
        await store.close()  # idempotent
        with pytest.raises(RuntimeError, match="closed") as caught:
            store.last_sequence(GROUP)
        assert getattr(caught.value, "reason") == "store-closed"
        with pytest.raises(RuntimeError, match="closed"):
            await store.initialize()
        with pytest.raises(RuntimeError, match="closed"):
            make_core(store=store)
        # The Core built before close no longer reaches the database: a store failure (not a
        # conflict to retry on), and not retryable: the same call fails the same way.
        with pytest.raises(StoreError) as refused:
            await core.perform(authorize())
        assert isinstance(refused.value, MissionWeaveProtocolError)
        assert not isinstance(refused.value, RevisionConflict)
        assert refused.value.code is ErrorCode.STORE_FAILURE
        assert refused.value.wire_code == "INTERNAL_ERROR"
        assert refused.value.reason == "store_closed"
        assert refused.value.retryable is False
        assert refused.value.locator is None and dict(refused.value.fields) == {}
        with pytest.raises(StoreError, match="closed"):
            await core.replay(GROUP)
        # Nothing was lost or half-applied: a new store on the file has the one Event.
        again = await opened(SQLiteStore(tmp_path / "closed.db"))
        assert again.last_sequence(GROUP) == 1
        await again.close()
    run(main())


def test_in_memory_store_still_works_and_core_checks_the_store_type() -> None:
    core = make_core(store=InMemoryStore())
    assert isinstance(core.store, InMemoryStore)
    with pytest.raises(TypeError, match="InMemoryStore or an SQLStore"):
        make_core(store="sqlite:///x.db")


# Holds SQLite locks in another process: SQLite's POSIX locks do not separate two SQLite
# libraries of one process (Python's sqlite3 and the wheel's own), so the holder must be a
# process of its own. It runs its statements, says "locked", and rolls back on a line of input.
_HOLDER = """
import sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
for statement in sys.argv[2:]:
    c.execute(statement)
print("locked", flush=True)
sys.stdin.readline()
c.execute("ROLLBACK")
"""


class LockHolder:
    def __init__(self, path: Path, *statements: str) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-c", _HOLDER, str(path), *statements],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self._process.stdout is not None
        assert self._process.stdout.readline().strip() == "locked"

    def release(self) -> None:
        assert self._process.stdin is not None
        self._process.stdin.write("\n")
        self._process.stdin.flush()
        assert self._process.wait(timeout=10) == 0


def test_other_threads_run_while_a_native_database_call_waits(tmp_path: Path) -> None:
    """A Command's commit waits for SQLite's write lock, held by another process: while it waits
    inside the native call, this thread runs Python (the GIL is released). Had the call kept the
    GIL, this thread could not release the lock, and the commit would fail after SQLite's busy
    timeout (5 s) instead of succeeding."""
    path = tmp_path / "locked.db"
    store = run(opened(SQLiteStore(path)))
    core = make_core(store=store, clock=Clock(NOW))
    holder = LockHolder(path, "BEGIN IMMEDIATE")  # the write lock
    outcome: List[Any] = []
    entered = threading.Event()

    def perform() -> None:
        entered.set()
        try:
            outcome.append(core._native.perform(create(), NOW_MS))
        except BaseException as error:  # reported by the assertions below
            outcome.append(error)

    worker = threading.Thread(target=perform)
    worker.start()
    entered.wait()
    time.sleep(0.3)  # the worker is now inside the native commit, waiting for the lock
    ticks = 0
    deadline = time.monotonic() + 0.2
    while time.monotonic() < deadline:
        ticks += 1
    assert worker.is_alive() and not outcome, f"the commit did not wait for the lock: {outcome}"
    assert ticks > 1000
    holder.release()
    worker.join(timeout=10)
    assert len(outcome) == 1 and isinstance(outcome[0], tuple), outcome
    events, group, duplicate = outcome[0]
    assert group == GROUP and not duplicate and len(events) == 1
    assert store.last_sequence(GROUP) == 1
    run(store.close())


def test_initialize_runs_off_the_event_loop(tmp_path: Path) -> None:
    """``await initialize()`` of a new file another process holds locked: the event loop keeps
    running other tasks while the native open waits for the lock on a worker thread."""
    path = tmp_path / "init.db"
    holder = LockHolder(path, "BEGIN EXCLUSIVE", "CREATE TABLE pending (x)")

    async def main() -> int:
        store = SQLiteStore(path)
        task = asyncio.ensure_future(store.initialize())
        ticks = 0
        for _ in range(20):
            await asyncio.sleep(0.01)
            ticks += 1
        assert not task.done()
        holder.release()  # rolls the table back: the file holds no foreign schema
        await task
        assert store.last_sequence(GROUP) == 0
        await store.close()
        return ticks

    assert run(main()) == 20


def test_stores_are_exported_with_their_reference_names() -> None:
    import missionweaveprotocol.store as module

    assert {"SQLStore", "SQLiteStore", "PostgreSQLStore", "InMemoryStore"} <= set(module.__all__)
    assert not hasattr(SQLStore, "transact") and not hasattr(SQLStore, "inspect")
