"""``await core.replay(...)`` beside Python's own ``sqlite3`` reading the same rows (issue 27,
item 3: replay at store speed, target ≥ 50 % of the ``sqlite3`` rate).

    python python/benchmarks/bench_replay.py [N]

Writes one Group of N ``mission.renew_coordinator`` Events (plus its creation) into a SQLite
file through a Core, then, in one run, prints one JSON line per measurement:

- ``sqlite3_rows``: Python's ``sqlite3`` reading the Group's Event bodies (``bytes``) from the
  same file, in sequence order, pages of 1,000 — the floor Python itself sets;
- ``replay_first``: a fresh Core over the reopened file replays the Group once (every Event is
  checked in full: strict parse, position, Group Authority signature);
- ``replay_again``: the same Core replays it again (Events it has checked are recognised by
  their digest, ``docs/store.md`` "Data at rest"; the store's chain checks still run);
- ``native_replay_again``: the same Core's native replay (``Core._native.replay``, the
  Rust call with the GIL released, one ``bytes`` per Event) without building ``Event``s;
- ``event_parse``: ``Event.from_signed_bytes`` (pydantic ``model_validate_json``) of the same
  Events' bytes, alone — together with the line above, where ``replay_again`` spends its time;
- the ratio of each rate to the ``sqlite3`` rate;
- the same lines suffixed ``_keyed`` for a second file opened with an ``integrity_key`` since
  its creation, whose Events the Core serves without signature checks (``replay_first_keyed``
  is then no slower than ``replay_again``).

Needs an installed release wheel (``scripts/test-python.sh`` builds one).
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

import core_support as s  # noqa: E402  (the tests' fixture: keys, Registry, payloads)
from missionweaveprotocol.models import Event  # noqa: E402
from missionweaveprotocol.store import SQLiteStore  # noqa: E402

PAGE = 1000
KEY = b"bench_replay integrity key 32 B."


def report(name: str, events: int, seconds: float, **extra: Any) -> Dict[str, Any]:
    line: Dict[str, Any] = {"bench": name, "events": events, "seconds": round(seconds, 3),
                            "per_second": round(events / seconds)}
    line.update(extra)
    print(json.dumps(line), flush=True)
    return line


async def write(path: str, n: int, key: Optional[bytes] = None) -> None:
    store = SQLiteStore(path, integrity_key=key)
    await store.initialize()
    core = s.make_core(store=store)
    await core.perform(s.create())
    renew = [s.by_coordinator("mission.renew_coordinator", {"leaseSeconds": 300})
             for _ in range(n)]
    # Windows of 256 concurrent awaits on one Group: the engine takes them in turn (its Group
    # lanes), sharing commits.
    for start in range(0, n, 256):
        await asyncio.gather(*(core.perform(raw) for raw in renew[start:start + 256]))
    await store.close()


def sqlite3_read(path: str) -> int:
    count = 0
    with sqlite3.connect(path) as conn:
        after = 0
        while True:
            rows = conn.execute(
                "SELECT sequence, body FROM events WHERE group_id = ? AND sequence > ? "
                "ORDER BY sequence LIMIT ?", (s.GROUP, after, PAGE)).fetchall()
            if not rows:
                return count
            count += sum(1 for _, body in rows if isinstance(body, bytes))
            after = rows[-1][0]


async def replay_all(core: Any) -> int:
    count, after = 0, 0
    while True:
        events, continuation, _last = await core.replay_page(s.GROUP, after=after, limit=PAGE)
        count += len(events)
        if continuation is None:
            return count
        after = continuation


async def native_all(core: Any) -> List[bytes]:
    out: List[bytes] = []
    after = 0
    while True:
        raw, continuation, _last = core._native.replay(s.GROUP, after, PAGE)
        out.extend(raw)
        if continuation is None:
            return out
        after = continuation


async def replays(path: str, key: Optional[bytes] = None) -> Dict[str, float]:
    store = SQLiteStore(path, integrity_key=key)
    await store.initialize()
    core = s.make_core(store=store, sessions=False)
    started = time.perf_counter()
    first = await replay_all(core)
    first_s = time.perf_counter() - started
    started = time.perf_counter()
    again = await replay_all(core)
    again_s = time.perf_counter() - started
    started = time.perf_counter()
    raw = await native_all(core)
    native_s = time.perf_counter() - started
    started = time.perf_counter()
    for body in raw:
        Event.from_signed_bytes(body)
    parse_s = time.perf_counter() - started
    await store.close()
    assert first == again == len(raw)
    return {"events": first, "first": first_s, "again": again_s, "native_replay_again": native_s,
            "event_parse": parse_s}


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    with tempfile.TemporaryDirectory() as scratch:
        # An unkeyed file (each Event's signature checked once per Core), then a file keyed
        # since its creation (served without signature checks: the keyed chain is the check).
        for key, suffix in ((None, ""), (KEY, "_keyed")):
            path = os.path.join(scratch, f"replay{suffix}.db")
            asyncio.run(write(path, n, key))
            sqlite3_read(path)  # warm the page cache as the replays will find it
            started = time.perf_counter()
            rows = sqlite3_read(path)
            floor = report(f"sqlite3_rows{suffix}", rows, time.perf_counter() - started)
            measured = asyncio.run(replays(path, key))
            events = int(measured["events"])
            assert events == rows, (events, rows)
            for name in ("first", "again", "native_replay_again", "event_parse"):
                rate = events / measured[name]
                label = f"replay_{name}" if name in ("first", "again") else name
                report(label + suffix, events, measured[name],
                       ratio_to_sqlite3=round(rate / floor["per_second"], 3))


if __name__ == "__main__":
    main()
