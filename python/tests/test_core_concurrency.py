"""``core.Core`` under concurrency: awaiting ``perform`` never blocks the event loop, the engine
runs with the GIL released, and N concurrent ``work.accept_offer`` of one offer have exactly one
winner (the others a typed refusal, nothing half-applied)."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any, Callable, List, TypeVar

from core_support import (
    GROUP,
    MISSION,
    NOW,
    W1,
    accept,
    authorize,
    by_coordinator,
    create,
    make_core,
    offer,
)
from missionweaveprotocol.core import InvalidTransition, MissionWeaveProtocolError
from missionweaveprotocol.models import Event, Query, QueryKind

T = TypeVar("T")
NOW_MS = int(NOW.timestamp()) * 1000


class GatedExecutor(Executor):
    """Runs each job on a worker thread only once ``gate`` is set: a pending ``perform`` that
    lets the loop run proves the loop is not blocked by it."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.pool = ThreadPoolExecutor(max_workers=2)

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> "Future[T]":
        def gated() -> T:
            assert self.gate.wait(10), "the gate was never opened"
            return fn(*args, **kwargs)

        return self.pool.submit(gated)


def test_a_pending_perform_leaves_the_loop_running() -> None:
    async def main() -> None:
        executor = GatedExecutor()
        core = make_core(executor=executor)
        task = asyncio.ensure_future(core.perform(create()))
        ticks = 0
        for _ in range(20):
            await asyncio.sleep(0.001)
            ticks += 1
        assert ticks == 20 and not task.done()
        executor.gate.set()
        event = await task
        assert event.sequence == 1
        executor.pool.shutdown()
    asyncio.run(main())


def test_the_loop_stays_responsive_during_many_performs() -> None:
    async def main() -> None:
        # 400 Missions in 400 Groups awaited concurrently (the batching path: most performs
        # queue behind the two running jobs). The jobs wait for a gate, so the check does not
        # depend on the machine's speed or load: while every perform is pending, the loop keeps
        # running other tasks; once the gate opens, every perform completes.
        executor = GatedExecutor()
        core = make_core(executor=executor)
        commands = [create(f"{MISSION}-{i}", f"{GROUP}-{i}") for i in range(400)]
        pending = asyncio.ensure_future(asyncio.gather(*(core.perform(c) for c in commands)))
        ticks = 0
        for _ in range(20):
            await asyncio.sleep(0.001)
            ticks += 1
        assert ticks == 20 and not pending.done()
        executor.gate.set()
        events = await pending
        assert len({e.group_id for e in events}) == 400
        assert all(e.sequence == 1 for e in events)
        executor.pool.shutdown()
    asyncio.run(main())


def test_the_engine_runs_without_the_gil() -> None:
    core = make_core()
    commands = [create(f"{MISSION}-{i}", f"{GROUP}-{i}") for i in range(300)]
    native = core._native
    finished = threading.Event()
    results: List[Any] = []

    def worker() -> None:
        results.extend(native.perform_many(commands, NOW_MS))
        finished.set()

    thread = threading.Thread(target=worker)
    counter = 0
    thread.start()
    while not finished.is_set():
        counter += 1
    thread.join()
    assert all(isinstance(r, tuple) for r in results), results[:1]
    # With the GIL held for the whole batch this thread could not have counted meanwhile.
    assert counter > 1000, counter


def test_concurrent_accepts_have_exactly_one_winner() -> None:
    async def main() -> None:
        core = make_core(executor=ThreadPoolExecutor(max_workers=8))
        for raw in (create(), authorize(), offer()):
            await core.perform(raw)
        before = core.store.last_sequence(GROUP)
        accepts = [accept() for _ in range(8)]
        results = await asyncio.gather(*(core.perform(a) for a in accepts),
                                       return_exceptions=True)
        winners = [r for r in results if isinstance(r, Event)]
        losers = [r for r in results if isinstance(r, MissionWeaveProtocolError)]
        assert len(winners) == 1 and len(losers) == 7, results
        for error in losers:
            assert isinstance(error, InvalidTransition), (error.wire_code, error.reason)
        assert core.store.last_sequence(GROUP) == before + 1
        item = (await core.query(Query(kind=QueryKind.WORK_ITEM, entity_id=W1))).value
        assert item["owner"]["ownershipEpoch"] == 1 and item["state"] == "queued"
    asyncio.run(main())


def test_concurrent_commands_of_one_group_keep_the_log_contiguous() -> None:
    async def main() -> None:
        core = make_core(executor=ThreadPoolExecutor(max_workers=4))
        await core.perform(create())
        renewals = [by_coordinator("mission.renew_coordinator", {"leaseSeconds": 300})
                    for _ in range(40)]
        events = await asyncio.gather(*(core.perform(r) for r in renewals))
        assert sorted(e.sequence or 0 for e in events) == list(range(2, 42))
        replayed = await core.replay(GROUP)
        assert [e.sequence for e in replayed] == list(range(1, 42))
    asyncio.run(main())
