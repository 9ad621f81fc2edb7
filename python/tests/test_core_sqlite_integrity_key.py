"""``SQLiteStore(path, integrity_key=...)``: every row authenticated with HMAC-SHA256 under a key
kept outside the file (``docs/store.md``, "Data at rest"). The file opens with its key only; a
row changed behind the store's back is refused on replay by the store's keyed check (the Core
runs no signature check on such a store: ``core/store-sqlite/tests/served_events.rs`` counts
them); the Events read back are the bytes the Core signed."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any, Coroutine, List, Optional, TypeVar

import pytest

from core_support import GROUP, authorize, create, make_core
from missionweaveprotocol.core import StoreError
from missionweaveprotocol.store import SQLiteStore

T = TypeVar("T")
KEY = b"an integrity key of 32 bytes...."


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


def written(path: Path) -> List[bytes]:
    async def main() -> List[bytes]:
        store = SQLiteStore(path, integrity_key=KEY)
        await store.initialize()
        try:
            core = make_core(store=store)
            await core.perform(create())
            await core.perform(authorize())
            return [e.signed_bytes for e in await core.replay(GROUP)]
        finally:
            await store.close()

    return run(main())


def replayed(path: Path, key: Optional[bytes]) -> List[bytes]:
    async def main() -> List[bytes]:
        store = SQLiteStore(path, integrity_key=key)
        await store.initialize()
        try:
            core = make_core(store=store, sessions=False)
            return [e.signed_bytes for e in await core.replay(GROUP)]
        finally:
            await store.close()

    return run(main())


def test_a_keyed_file_replays_its_events_and_opens_with_its_key_only(tmp_path: Path) -> None:
    path = tmp_path / "keyed.db"
    events = written(path)
    assert len(events) >= 2
    assert replayed(path, KEY) == events
    for other in (None, b"another integrity key, 32 bytes."):
        with pytest.raises(RuntimeError) as caught:
            replayed(path, other)
        assert getattr(caught.value, "reason") == "integrity_key_refused"


def test_a_tampered_event_in_a_keyed_file_is_refused_on_replay(tmp_path: Path) -> None:
    path = tmp_path / "tampered.db"
    events = written(path)
    with sqlite3.connect(path) as raw:
        body = raw.execute("SELECT body FROM events WHERE group_id = ? AND sequence = 2",
                           (GROUP,)).fetchone()[0]
        forged = bytearray(body)
        forged[len(forged) // 2] ^= 0x01
        changed = raw.execute("UPDATE events SET body = ? WHERE group_id = ? AND sequence = 2",
                              (bytes(forged), GROUP)).rowcount
    assert changed == 1

    async def main() -> StoreError:
        store = SQLiteStore(path, integrity_key=KEY)
        await store.initialize()
        try:
            core = make_core(store=store, sessions=False)
            with pytest.raises(StoreError) as caught:
                await core.replay(GROUP)
            # The first Event is intact and still served alone.
            first = await core.replay(GROUP, limit=1)
            assert [e.signed_bytes for e in first] == events[:1]
            return caught.value
        finally:
            await store.close()

    error = run(main())
    assert (error.wire_code, error.reason, error.retryable) == (
        "INTERNAL_ERROR", "store_corrupt", False)
    assert (error.stored, error.locator) == ("event", f"{GROUP} #2")


def test_an_integrity_key_shorter_than_32_bytes_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        SQLiteStore(tmp_path / "short.db", integrity_key=b"31 bytes are one byte too short")
    SQLiteStore(tmp_path / "exact.db", integrity_key=KEY)
