"""Scheduling and budget benchmarks through Python, printed as JSON lines (the same workloads as
``core/protocol/examples/bench_scheduling.rs``).

    python python/benchmarks/bench_scheduling.py [--items N] [--runs R]

- ``scheduler_admit_dispatch_<N>_over_8_groups.bulk``: admit N WorkItems over 8 Groups with one
  ``admit_many`` call, then ``schedule(now)`` / ``apply_many(completions)`` until empty (8 slots).
- ``….per_call``: the same with one ``admit`` and one ``apply`` call per WorkItem.
  Offers are built before the clock starts (as in the Rust benchmark); ``offer_build_ms`` is
  reported separately. Figures are the median (and best) of R runs.
- ``budget_consume_5_level_ancestry``: ``BudgetLedger.consume`` calls per second from Python on a
  WorkItem with five accounts above it (root Mission → WorkItem → child Mission → two WorkItems).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from datetime import datetime, timedelta, timezone
from typing import Callable, Dict, List

from missionweaveprotocol.budget import BudgetLedger, ResourceUsage
from missionweaveprotocol.scheduler import (
    Dispatch,
    Scheduler,
    SchedulerPolicy,
    TransitionKind,
    WorkOffer,
    WorkTransition,
)

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
GROUPS = 8
COMPLETED = TransitionKind.COMPLETED


def emit(name: str, **fields: object) -> None:
    line: Dict[str, object] = {"name": name}
    line.update(fields)
    print(json.dumps(line), flush=True)


def offers(n: int) -> List[WorkOffer]:
    return [
        WorkOffer(f"urn:uuid:00000000-0000-4000-8000-{i:012x}",
                  f"urn:uuid:6a1f0000-0000-4000-8000-{i % GROUPS:012x}",
                  organizational_priority=(i * 37) % 201 - 100)
        for i in range(n)
    ]


def policy(n: int) -> SchedulerPolicy:
    return SchedulerPolicy(capacity_slots=8, max_work_items=n, max_work_items_per_group=n)


def run_bulk(batch: List[WorkOffer]) -> float:
    s = Scheduler(policy(len(batch)))
    start = time.perf_counter()
    decisions = s.admit_many(batch, now=T0)
    done, tick = 0, 0
    while done < len(batch):
        tick += 1
        now = T0 + timedelta(milliseconds=tick)
        dispatched = [a for a in s.schedule(now=now) if isinstance(a, Dispatch)]
        if not dispatched:
            raise SystemExit("scheduler stalled")
        s.apply_many([WorkTransition(d.work_id, COMPLETED, generation=d.generation)
                      for d in dispatched], now=now)
        done += len(dispatched)
    elapsed = (time.perf_counter() - start) * 1e3
    assert all(d.accepted for d in decisions) and len(s) == 0
    return elapsed


def run_per_call(batch: List[WorkOffer]) -> float:
    s = Scheduler(policy(len(batch)))
    start = time.perf_counter()
    for offer in batch:
        if not s.admit(offer, now=T0).accepted:
            raise SystemExit("offer declined")
    done, tick = 0, 0
    while done < len(batch):
        tick += 1
        now = T0 + timedelta(milliseconds=tick)
        actions = s.schedule(now=now)
        if not actions:
            raise SystemExit("scheduler stalled")
        for a in actions:
            if isinstance(a, Dispatch):
                s.apply(WorkTransition(a.work_id, COMPLETED, generation=a.generation), now=now)
                done += 1
    elapsed = (time.perf_counter() - start) * 1e3
    assert len(s) == 0
    return elapsed


def bench_scheduler(n: int, runs: int) -> None:
    start = time.perf_counter()
    batch = offers(n)
    build_ms = (time.perf_counter() - start) * 1e3
    for label, run in (("bulk", run_bulk), ("per_call", run_per_call)):
        times: List[float] = sorted(run(batch) for _ in range(runs))
        median = statistics.median(times)
        emit(f"scheduler_admit_dispatch_{n}_over_{GROUPS}_groups.{label}",
             ms=round(median, 3), best_ms=round(times[0], 3),
             items_per_sec=round(n / (median / 1e3)), offer_build_ms=round(build_ms, 3),
             runs=runs)


def bench_budget(ops: int) -> None:
    ledger = BudgetLedger()
    limit = ResourceUsage.splat(1_000_000_000_000)
    ledger.register_mission("urn:m:root", limit, currency="USD")
    ledger.register_work_item("urn:w:1", "urn:m:root", limit)
    ledger.register_mission("urn:m:child", limit, parent_work_item_id="urn:w:1")
    ledger.register_work_item("urn:w:2", "urn:m:child", limit)
    ledger.register_work_item("urn:w:3", "urn:m:child", limit, parent_work_item_id="urn:w:2")
    delta = ResourceUsage(10, 100, 1, 1, 1, 0)
    consume: Callable[[str, ResourceUsage], ResourceUsage] = ledger.consume
    start = time.perf_counter()
    for _ in range(ops):
        consume("urn:w:3", delta)
    secs = time.perf_counter() - start
    assert ledger.usage(("mission", "urn:m:root")).tool_calls == ops
    emit("budget_consume_5_level_ancestry", ops_per_sec=round(ops / secs), ops=ops)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--budget-ops", type=int, default=500_000)
    args = parser.parse_args()
    bench_scheduler(1_000, max(args.runs, 5))
    bench_scheduler(args.items, args.runs)
    bench_budget(args.budget_ops)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
