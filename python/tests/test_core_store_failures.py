"""The store's own failures are :class:`core.StoreError` (family ``store_failure``), never
:class:`core.RevisionConflict` (issue 22, item 8: a caller retrying on conflicts must not retry
on corruption): damaged data at rest (an Event or aggregate row changed behind the store's back,
a damaged database page), a database file that cannot grow (disk full), a closed store.
``retryable`` is true only where an unchanged retry can succeed; ``stored`` and ``locator`` name
the damaged row. A genuine revision conflict (§15.3) stays a :class:`RevisionConflict`. The
family is the Rust core's (``ErrorFamily::of``), chosen by the reason of an ``INTERNAL_ERROR``;
real files and real OS limits throughout (the failures are SQLite's and the kernel's own)."""

from __future__ import annotations

import asyncio
import os
import resource
import sqlite3
from pathlib import Path
from typing import Any, Coroutine, TypeVar

import pytest

from core_support import COORDINATOR, GROUP, MISSION, OWNER, authorize, create, make_core, signed
from missionweaveprotocol import _native
from missionweaveprotocol.core import (
    ErrorCode,
    MissionWeaveProtocolError,
    RevisionConflict,
    StoreError,
    _native_refusal,
)
from missionweaveprotocol.store import SQLiteStore

T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


def test_store_error_is_a_core_error_and_no_revision_conflict() -> None:
    assert issubclass(StoreError, MissionWeaveProtocolError)
    assert not issubclass(StoreError, RevisionConflict)
    assert not issubclass(RevisionConflict, StoreError)
    assert StoreError.code is ErrorCode.STORE_FAILURE
    assert ErrorCode("store_failure") is ErrorCode.STORE_FAILURE
    import missionweaveprotocol.core as core_module

    assert "StoreError" in core_module.__all__


@pytest.mark.parametrize(
    "reason",
    ["store_corrupt", "integrity_key_refused", "backend_failure", "store_closed",
     "store_not_initialized", "corrupt_aggregate"],
)
def test_every_store_failure_reason_is_the_store_family(reason: str) -> None:
    assert _native.error_family("INTERNAL_ERROR", reason) == "store_failure"
    error = _native_refusal("store_failure", "INTERNAL_ERROR", reason, "text",
                            {"stored": "event", "locator": "g #3"}, False)
    assert type(error) is StoreError
    assert (error.reason, error.retryable, error.wire_code) == (reason, False, "INTERNAL_ERROR")
    assert (error.stored, error.locator) == ("event", "g #3")
    assert dict(error.fields) == error.details == {"stored": "event", "locator": "g #3"}
    assert error.as_dict()["code"] == "store_failure"


@pytest.mark.parametrize("reason", ["contended", "already_applied", "event_unsignable"])
def test_conflicts_and_other_internal_errors_are_not_store_failures(reason: str) -> None:
    assert _native.error_family("INTERNAL_ERROR", reason) == "revision_conflict"
    assert _native.error_family("REVISION_CONFLICT", "revision_conflict") == "revision_conflict"
    # Only an INTERNAL_ERROR's reason selects the store family.
    assert _native.error_family("PROTOCOL_VIOLATION", "store_corrupt") == "invalid_command"


def test_a_store_error_without_a_row_has_no_locator() -> None:
    error = _native_refusal("store_failure", "INTERNAL_ERROR", "backend_failure",
                            "the store failed: busy", {}, True)
    assert error.retryable is True and error.locator is None and error.stored is None
    assert dict(error.fields) == {}


def test_a_row_changed_behind_the_stores_back_is_a_store_error_naming_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "damaged.db"

    async def write() -> None:
        store = SQLiteStore(path)
        await store.initialize()
        core = make_core(store=store)
        await core.perform(create())
        await core.perform(authorize())
        await store.close()

    run(write())
    with sqlite3.connect(path) as raw:
        changed = raw.execute(
            "UPDATE events SET body = CAST('{\"forged\":true}' AS BLOB) "
            "WHERE group_id = ? AND sequence = 2",
            (GROUP,),
        ).rowcount
    assert changed == 1

    async def read() -> StoreError:
        store = SQLiteStore(path)
        await store.initialize()
        core = make_core(store=store, sessions=False)
        try:
            with pytest.raises(StoreError) as caught:
                await core.replay(GROUP)
            # The first Event is intact and still served alone.
            assert len(await core.replay(GROUP, limit=1)) == 1
            return caught.value
        finally:
            await store.close()

    error = run(read())
    assert not isinstance(error, RevisionConflict)
    assert error.code is ErrorCode.STORE_FAILURE
    assert (error.wire_code, error.reason) == ("INTERNAL_ERROR", "store_corrupt")
    assert error.retryable is False, "damaged data stays damaged"
    assert error.stored == "event"
    assert error.locator == f"{GROUP} #2"
    assert error.fields["locator"] == error.locator
    assert "integrity" in str(error)


def test_a_closed_store_is_a_store_error_that_is_not_retryable(tmp_path: Path) -> None:
    async def main() -> None:
        store = SQLiteStore(tmp_path / "closed.db")
        await store.initialize()
        core = make_core(store=store)
        await core.perform(create())
        await store.close()
        for call in (lambda: core.perform(authorize()), lambda: core.replay(GROUP)):
            with pytest.raises(StoreError) as caught:
                await call()
            error = caught.value
            assert (error.reason, error.retryable, error.locator) == ("store_closed", False, None)
            assert str(error) == "the store was closed: make a new store to open it again"

    run(main())


async def _opened(path: Path) -> SQLiteStore:
    store = SQLiteStore(path)
    await store.initialize()
    return store


def _written(path: Path) -> None:
    """A SQLite file holding a Group with a Mission and a WorkItem (sequences 1 and 2)."""

    async def write() -> None:
        store = await _opened(path)
        core = make_core(store=store)
        await core.perform(create())
        await core.perform(authorize())
        await store.close()

    run(write())


def test_an_aggregate_changed_behind_the_stores_back_is_a_store_error_naming_it(
    tmp_path: Path,
) -> None:
    """A Mission's stored budget raised by hand (the checksum left as it was): the next Command
    on the Mission is refused as damaged data, every time (not retryable), and nothing is
    appended. Before item 8 this was the ``revision_conflict`` family."""
    path = tmp_path / "aggregate.db"
    _written(path)
    with sqlite3.connect(path) as raw:
        changed = raw.execute(
            "UPDATE aggregates SET value = CAST(replace(CAST(value AS TEXT), ?, ?) AS BLOB) "
            "WHERE kind = 'mission' AND id = ?",
            ('"financialLimit":50,', '"financialLimit":5000,', MISSION),
        ).rowcount
    assert changed == 1

    async def main() -> None:
        store = await _opened(path)
        core = make_core(store=store, sessions=False)
        try:
            for _ in range(2):  # the same answer again: damaged data stays damaged
                with pytest.raises(StoreError) as caught:
                    await core.perform(
                        signed("mission.cancel", OWNER, {"reason": "no"}, expectedRevision=1)
                    )
                error = caught.value
                assert not isinstance(error, RevisionConflict)
                assert (error.wire_code, error.reason, error.retryable) == (
                    "INTERNAL_ERROR", "store_corrupt", False)
                assert error.stored == "aggregate"
                assert error.locator == f"mission {MISSION}"
                assert "checksum" in str(error)
            assert store.last_sequence(GROUP) == 2, "nothing appended"
        finally:
            await store.close()

    run(main())


def test_a_damaged_database_page_is_a_store_error_of_the_file(tmp_path: Path) -> None:
    """The first page of the Event table overwritten with garbage: SQLite's own verdict
    (``SQLITE_CORRUPT``, "database disk image is malformed") is damaged data at rest, located
    at the file, not a failing backend to retry."""
    path = tmp_path / "page.db"
    _written(path)
    with sqlite3.connect(path) as raw:
        page = raw.execute("PRAGMA page_size").fetchone()[0]
        root = raw.execute("SELECT rootpage FROM sqlite_master WHERE name = 'events'").fetchone()[0]
    raw.close()
    assert not Path(f"{path}-wal").exists() or os.path.getsize(f"{path}-wal") == 0
    with open(path, "r+b") as file:
        file.seek((root - 1) * page)
        file.write(b"\xff" * 16)  # the b-tree page header: no valid page type

    async def main() -> None:
        store = await _opened(path)
        core = make_core(store=store, sessions=False)
        try:
            with pytest.raises(StoreError) as caught:
                await core.replay(GROUP)
        finally:
            await store.close()
        error = caught.value
        assert not isinstance(error, RevisionConflict)
        assert (error.wire_code, error.reason, error.retryable) == (
            "INTERNAL_ERROR", "store_corrupt", False)
        assert (error.stored, error.locator) == ("database", "file")
        assert "malformed" in str(error)

    run(main())


def _big_post(number: int, parts: int) -> bytes:
    # A Message of ``parts`` 100,000-character text parts (the largest a part may be).
    return signed("message.post", COORDINATOR, {
        "messageId": f"urn:missionweaveprotocol:message:full-{number}",
        "conversationId": "urn:missionweaveprotocol:conversation:finance-main",
        "content": [{"type": "text", "text": "x" * 100_000}] * parts,
    })


def test_a_database_that_cannot_grow_is_a_retryable_store_error(tmp_path: Path) -> None:
    """Disk full, by the kernel: the process's file-size limit (``RLIMIT_FSIZE``, no root
    needed; Python ignores ``SIGXFSZ``) set just above the database's files, so SQLite's write
    of a 1 MB Event fails (``EFBIG``; SQLite reports a disk I/O error, as it reports
    ``SQLITE_FULL`` for ``ENOSPC``: both are the store's ``backend_failure``). Nothing is
    appended, the error is retryable, and once the limit is lifted the same signed Command
    applies, once."""
    path = tmp_path / "full.db"
    command = _big_post(1, 10)

    async def main() -> None:
        store = await _opened(path)
        core = make_core(store=store)
        try:
            await core.perform(create())
            sizes = [os.path.getsize(p) for p in (path, Path(f"{path}-wal")) if p.exists()]
            limit = max(sizes) + 64 * 1024
            assert limit < len(command) // 2, "the Event cannot fit under the limit"
            soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
            try:
                with pytest.raises(StoreError) as caught:
                    await core.perform(command)
            finally:
                resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
            error = caught.value
            assert not isinstance(error, RevisionConflict)
            assert error.code is ErrorCode.STORE_FAILURE
            assert (error.wire_code, error.reason) == ("INTERNAL_ERROR", "backend_failure")
            assert error.retryable is True, "space can come back: an unchanged retry may succeed"
            assert error.locator is None and error.stored is None, "no stored row is damaged"
            assert store.last_sequence(GROUP) == 1, "nothing half-applied"
            # The unchanged retry now succeeds, and applies the Command once.
            posted = await core.perform(command)
            assert posted.sequence == 2
            again = await core.perform(command)
            assert again.sequence == 2 and store.last_sequence(GROUP) == 2
            events = await core.replay(GROUP)
            assert [event.sequence for event in events] == [1, 2]
        finally:
            await store.close()

    run(main())


@pytest.mark.parametrize("stale", [0, 2], ids=["older", "newer"])
def test_a_genuine_revision_conflict_on_a_file_is_still_a_revision_conflict(
    tmp_path: Path, stale: int,
) -> None:
    """§15.3 on SQLite: an ``expectedRevision`` other than the Mission's current revision (1),
    older or newer, is :class:`RevisionConflict` (``REVISION_CONFLICT``), not a
    :class:`StoreError`; the current revision is accepted."""

    async def main() -> None:
        store = await _opened(tmp_path / "conflict.db")
        core = make_core(store=store)
        try:
            await core.perform(create())
            with pytest.raises(MissionWeaveProtocolError) as caught:
                await core.perform(
                    signed("mission.cancel", OWNER, {"reason": "no"}, expectedRevision=stale)
                )
            error = caught.value
            assert type(error) is RevisionConflict and not isinstance(error, StoreError)
            assert error.code is ErrorCode.REVISION_CONFLICT
            assert (error.wire_code, error.reason) == ("REVISION_CONFLICT", "revision_conflict")
            assert (error.details["expected_revision"], error.details["current_revision"]) == (
                stale, 1)
            assert store.last_sequence(GROUP) == 1
            cancelled = await core.perform(
                signed("mission.cancel", OWNER, {"reason": "no"}, expectedRevision=1)
            )
            assert cancelled.sequence == 2
        finally:
            await store.close()

    run(main())
