"""``store.PostgreSQLStore`` / ``SQLStore("postgresql://…")`` against a real server (issue 11,
Python; the server of ``MWP_POSTGRES_URL`` or a private cluster, ``pg_support``; never skipped):
a Core over PostgreSQL works as over SQLite and ``InMemoryStore``; a new Core over a new store on
the same database replays the same Events and continues; every URL spelling reaches the server;
an unreachable server is a ``RuntimeError`` at ``initialize`` and the store stays unopened;
``initialize`` waits off the event loop with the GIL released; the store's own failures (a row
changed behind its back, a closed store) are ``core.StoreError``, never ``RevisionConflict``."""

from __future__ import annotations

import asyncio
import subprocess
import time
from typing import Any, Coroutine, List, TypeVar

import pytest

from core_support import GROUP, MISSION, OWNER, authorize, create, make_core, offer, signed
from durable_flow import first_flow, second_flow
from missionweaveprotocol.core import MissionWeaveProtocolError, RevisionConflict, StoreError
from missionweaveprotocol.models import Event
from missionweaveprotocol.store import PostgreSQLStore, SQLStore
from pg_support import Database, SilentServer, closed_port, database, psql

__all__ = ["database"]  # the fixture, used by name

T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


async def opened(store: SQLStore) -> SQLStore:
    await store.initialize()
    return store


def test_a_flow_on_postgresql_then_a_new_core_over_a_new_store_replays_and_continues(
    database: Database,
) -> None:
    async def first() -> List[Event]:
        store = await opened(PostgreSQLStore(database.url("postgresql+asyncpg")))
        assert store.dialect_name == "postgresql"
        return await first_flow(store)

    events = run(first())

    async def second() -> None:
        # A new store (its own connections, as a later process) through the generic class.
        await second_flow(await opened(SQLStore(database.url("postgresql"))), events)

    run(second())


@pytest.mark.parametrize("scheme", [
    "postgresql", "postgres", "postgresql+asyncpg", "postgresql+psycopg", "postgresql+psycopg2",
])
def test_every_postgresql_url_spelling_reaches_the_server(
    database: Database, scheme: str,
) -> None:
    async def main() -> None:
        store = await opened(PostgreSQLStore(database.url(scheme)))
        assert store.url == database.url(scheme)  # no password to mask
        core = make_core(store=store)
        assert (await core.perform(create())).sequence == 1
        await store.close()
        # The same database under the libpq spelling.
        again = await opened(SQLStore(database.url()))
        assert again.last_sequence(GROUP) == 1
        await again.close()
    run(main())


def test_a_password_is_masked_and_options_reach_libpq(database: Database) -> None:
    """Trust authentication ignores the password; libpq reads the percent-encoded form and the
    query options."""
    scheme, _, rest = database.url("postgresql+asyncpg").partition("://")
    user, _, host = rest.partition("@")
    url = f"{scheme}://{user}:s%40cret@{host}?application_name=mwp-py&connect_timeout=5"

    async def main() -> None:
        store = await opened(PostgreSQLStore(url))
        assert store.url == f"{scheme}://{user}:***@{host}?application_name=mwp-py&connect_timeout=5"
        assert "cret" not in repr(store)
        assert store.last_sequence(GROUP) == 0
        await store.close()
    run(main())


def test_concurrent_awaits_on_postgresql_keep_one_contiguous_sequence(
    database: Database,
) -> None:
    async def main() -> None:
        store = await opened(PostgreSQLStore(database.url()))
        core = make_core(store=store)
        await core.perform(create())
        others = [create(f"{MISSION}-{i}", f"{GROUP}-{i}") for i in range(8)]
        results = await asyncio.gather(*(core.perform(raw) for raw in others),
                                       core.perform(authorize()), core.perform(offer()))
        assert all(isinstance(r, Event) for r in results)
        assert [e.sequence for e in await core.replay(GROUP)] == [1, 2, 3]
        assert all(store.last_sequence(f"{GROUP}-{i}") == 1 for i in range(8))
        await store.close()
        # After close the Core is refused, typed; nothing half-applied.
        with pytest.raises(MissionWeaveProtocolError) as refused:
            await core.perform(create(f"{MISSION}-late", f"{GROUP}-late"))
        assert type(refused.value) is StoreError
        assert not isinstance(refused.value, RevisionConflict)
        assert refused.value.wire_code == "INTERNAL_ERROR"
        assert refused.value.reason == "store_closed"
        assert refused.value.retryable is False
    run(main())


def test_an_unreachable_server_is_a_runtime_error_and_the_store_stays_unopened() -> None:
    store = PostgreSQLStore(f"postgresql+asyncpg://mwp:secret@127.0.0.1:{closed_port()}/mwp")
    with pytest.raises(RuntimeError, match="could not be opened") as caught:
        run(store.initialize())
    assert getattr(caught.value, "reason") == "backend_failure"
    assert getattr(caught.value, "wire_code") == "INTERNAL_ERROR"
    assert "secret" not in str(caught.value)
    with pytest.raises(RuntimeError, match="not initialized"):
        store.last_sequence(GROUP)
    with pytest.raises(RuntimeError, match="not initialized"):
        make_core(store=store)
    run(store.close())  # allowed, and final
    with pytest.raises(RuntimeError, match="closed"):
        run(store.initialize())


def test_a_missing_database_is_a_runtime_error(database: Database) -> None:
    store = PostgreSQLStore(database.url() + "_missing")
    with pytest.raises(RuntimeError, match="could not be opened"):
        run(store.initialize())
    with pytest.raises(RuntimeError, match="not initialized"):
        store.last_sequence(GROUP)


def test_initialize_waits_for_the_server_off_the_event_loop_without_the_gil() -> None:
    """A server that accepts and then says nothing for a second: ``initialize`` waits for it on
    a worker thread with the GIL released, so the event loop runs other tasks meanwhile (had the
    native call kept the GIL, the loop's thread could not run either), then fails typed."""
    server = SilentServer(hold=1.0)

    async def main() -> int:
        store = PostgreSQLStore(f"postgresql://mwp@127.0.0.1:{server.port}/mwp")
        task = asyncio.ensure_future(store.initialize())
        ticks = 0
        started = time.monotonic()
        while not task.done():
            await asyncio.sleep(0.01)
            ticks += 1
        assert time.monotonic() - started >= 0.9
        with pytest.raises(RuntimeError, match="could not be opened"):
            await task
        return ticks

    try:
        assert run(main()) >= 50
    finally:
        server.close()


def _tamper(database: Database, statement: str) -> int:
    """Runs ``statement`` in ``database`` with ``psql`` (behind the store's back); the row count."""
    done = subprocess.run(
        [psql(), database.url(), "-v", "ON_ERROR_STOP=1", "-qAtc", f"WITH t AS ({statement} "
         "RETURNING 1) SELECT count(*) FROM t"],
        check=False, capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout.strip())


def test_rows_changed_behind_the_stores_back_are_store_errors_naming_them(
    database: Database,
) -> None:
    """An Event body and a Mission aggregate edited in the database: replay and the next Command
    on the Mission are refused as damaged data (``store_corrupt``, not retryable, the row named),
    never as a revision conflict; nothing is appended."""

    async def write() -> None:
        store = await opened(PostgreSQLStore(database.url()))
        core = make_core(store=store)
        await core.perform(create())
        await core.perform(authorize())
        await store.close()

    run(write())
    assert _tamper(database, "UPDATE events SET body = convert_to('{\"forged\":true}', 'UTF8') "
                   f"WHERE group_id = '{GROUP}' AND sequence = 2") == 1
    assert _tamper(database, "UPDATE aggregates SET value = convert_to(replace(convert_from("
                   "value, 'UTF8'), '\"financialLimit\":50,', '\"financialLimit\":5000,'), "
                   f"'UTF8') WHERE kind = 'mission' AND id = '{MISSION}'") == 1

    async def read() -> None:
        store = await opened(PostgreSQLStore(database.url()))
        core = make_core(store=store, sessions=False)
        try:
            with pytest.raises(StoreError) as replayed:
                await core.replay(GROUP)
            assert len(await core.replay(GROUP, limit=1)) == 1  # the intact first Event
            with pytest.raises(StoreError) as performed:
                await core.perform(
                    signed("mission.cancel", OWNER, {"reason": "no"}, expectedRevision=1)
                )
            assert store.last_sequence(GROUP) == 2
        finally:
            await store.close()
        for error, stored, locator in (
            (replayed.value, "event", f"{GROUP} #2"),
            (performed.value, "aggregate", f"mission {MISSION}"),
        ):
            assert not isinstance(error, RevisionConflict)
            assert (error.wire_code, error.reason, error.retryable) == (
                "INTERNAL_ERROR", "store_corrupt", False)
            assert (error.stored, error.locator) == (stored, locator)

    run(read())


def test_a_genuine_revision_conflict_on_postgresql_is_still_a_revision_conflict(
    database: Database,
) -> None:
    async def main() -> None:
        store = await opened(PostgreSQLStore(database.url()))
        core = make_core(store=store)
        try:
            await core.perform(create())
            for stale in (0, 2):  # older and newer than the Mission's revision 1
                with pytest.raises(RevisionConflict) as caught:
                    await core.perform(
                        signed("mission.cancel", OWNER, {"reason": "no"}, expectedRevision=stale)
                    )
                assert not isinstance(caught.value, StoreError)
                assert caught.value.wire_code == "REVISION_CONFLICT"
            assert store.last_sequence(GROUP) == 1
            cancelled = await core.perform(
                signed("mission.cancel", OWNER, {"reason": "no"}, expectedRevision=1)
            )
            assert cancelled.sequence == 2
        finally:
            await store.close()

    run(main())
