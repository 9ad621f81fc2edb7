"""``await core.perform(...)`` per second through Python (issue 10: ≥ 20,000/s target).

    python python/benchmarks/bench_core.py [N]

Signs N ``mission.create`` Commands (N Missions in N Groups, so that Commands never contend)
and N ``mission.renew_coordinator`` Commands of one Group before the clock starts, then prints
one JSON line per measurement:

- ``native_perform_many``: the Rust core alone (one GIL release for the whole list);
- ``await_sequential_executor``: one ``await core.perform(raw)`` at a time (the shipped path:
  the engine on an executor thread, GIL released, the loop free);
- ``await_concurrent_executor``: ``asyncio.gather`` of windows of 64 awaits;
- ``direct_call_blocking``: the same Rust call made on the loop thread (blocks the loop while
  it runs; measured for comparison only, not shipped).

Wire bytes in, verified (six stages, freshness, authorization), performed, Event parsed into a
frozen ``models.Event``. Needs an installed release wheel (``scripts/test-python.sh`` builds one).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from typing import Any, Callable, Dict, List

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

import core_support as s  # noqa: E402  (the tests' fixture: keys, Registry, payloads)
from missionweaveprotocol.models import Event  # noqa: E402

NOW = datetime(2026, 7, 15, 9, 30, tzinfo=timezone.utc)
NOW_MS = int(NOW.timestamp()) * 1000


def creates(n: int, tag: str) -> List[bytes]:
    return [s.create(f"{s.MISSION}-{tag}-{i}", f"{s.GROUP}-{tag}-{i}") for i in range(n)]


def renewals(n: int) -> List[bytes]:
    return [s.by_coordinator("mission.renew_coordinator", {"leaseSeconds": 300})
            for _ in range(n)]


def report(name: str, n: int, seconds: float, cpu: float, **extra: Any) -> None:
    # Wall time and the process's CPU time (all threads): on a shared machine the second is
    # the steadier figure (per CPU-second).
    line: Dict[str, Any] = {"bench": name, "commands": n, "seconds": round(seconds, 3),
                            "per_second": round(n / seconds), "cpu_seconds": round(cpu, 3),
                            "per_cpu_second": round(n / cpu)}
    line.update(extra)
    print(json.dumps(line), flush=True)


async def sequential(core: Any, commands: List[bytes]) -> float:
    started = time.perf_counter()
    for raw in commands:
        await core.perform(raw)
    return time.perf_counter() - started


async def concurrent(core: Any, commands: List[bytes], window: int = 64) -> float:
    started = time.perf_counter()
    for i in range(0, len(commands), window):
        await asyncio.gather(*(core.perform(raw) for raw in commands[i:i + window]))
    return time.perf_counter() - started


async def direct(core: Any, commands: List[bytes]) -> float:
    native = core._native
    started = time.perf_counter()
    for raw in commands:
        events, _group, _duplicate = native.perform(raw, NOW_MS)
        Event.from_signed_bytes(events[0])
        await asyncio.sleep(0)
    return time.perf_counter() - started


def fresh(**extra: Any) -> Any:
    return s.make_core(s.Clock(NOW), event_id_prefix=None, **extra)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    started = time.perf_counter()
    work = {tag: creates(n, tag) for tag in ("a", "b", "c", "d", "e")}
    renew = renewals(n)
    print(json.dumps({"signed": 6 * n, "seconds": round(time.perf_counter() - started, 1)}),
          flush=True)

    core = fresh()
    t0, c0 = time.perf_counter(), time.process_time()
    results = core._native.perform_many(work["a"], NOW_MS)
    report("native_perform_many", n, time.perf_counter() - t0, time.process_time() - c0,
           kind="mission.create")
    assert all(isinstance(r, tuple) for r in results)

    runs: Dict[str, Callable[[Any, List[bytes]], Any]] = {
        "await_sequential_executor": sequential,
        "await_concurrent_executor": concurrent,
        "direct_call_blocking": direct,
    }
    def timed(name: str, run: Callable[[], float], **extra: Any) -> None:
        c0 = time.process_time()
        seconds = run()
        report(name, n, seconds, time.process_time() - c0, **extra)

    for (name, run), tag in zip(runs.items(), ("b", "c", "d")):
        core = fresh(executor=ThreadPoolExecutor(max_workers=2))
        timed(name, lambda: asyncio.run(run(core, work[tag])), kind="mission.create")

    core = fresh(executor=ThreadPoolExecutor(max_workers=2))
    asyncio.run(core.perform(s.create()))
    timed("await_sequential_executor", lambda: asyncio.run(sequential(core, renew)),
          kind="mission.renew_coordinator (one Group)")
    core = fresh(executor=ThreadPoolExecutor(max_workers=2))
    timed("await_concurrent_executor", lambda: asyncio.run(concurrent(core, work["e"], 256)),
          kind="mission.create", window=256)


if __name__ == "__main__":
    main()
