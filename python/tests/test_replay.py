"""``replay.AgentReplay``: the §16 delivery rules (the Rust core's ``replay::GroupReplay``),
awaiting duck-typed async sources and projectors."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import pytest

from missionweaveprotocol.local_store import LocalStoreError, SQLiteAgentStore
from missionweaveprotocol.replay import (
    AgentReplay,
    EventProjection,
    GroupReplayResult,
    ReplayError,
    ReplayGroupError,
    ReplayProjectionError,
    ReplaySequenceError,
    ReplaySnapshot,
)
from missionweaveprotocol.scheduler import Scheduler, SchedulerPolicy, WorkOffer

A = "urn:missionweaveprotocol:agent:worker"
NOW = datetime(2026, 7, 15, 9, 30, tzinfo=timezone.utc)


@dataclass(frozen=True)
class Ev:
    """Duck-typed Event: the reference's ``id``, ``group_id``, ``sequence``."""

    id: str
    group_id: Optional[str]
    sequence: Optional[int]


def log(group: str, n: int) -> List[Ev]:
    return [Ev(f"{group}/e{s}", group, s) for s in range(1, n + 1)]


class Source:
    def __init__(self, logs: Dict[str, List[Ev]]) -> None:
        self.logs = logs
        self.calls: List[tuple] = []

    async def __call__(self, group_id: str, *, after: int) -> Sequence[Ev]:
        self.calls.append((group_id, after))
        return [e for e in self.logs.get(group_id, []) if (e.sequence or 0) > after]


class Projector:
    def __init__(self, fail_at: Optional[int] = None) -> None:
        self.seen: List[str] = []
        self.fail_at = fail_at

    async def __call__(self, event: Ev) -> Optional[EventProjection]:
        if event.sequence == self.fail_at:
            raise RuntimeError("projector down")
        self.seen.append(event.id)
        if (event.sequence or 0) % 2 == 0:
            return EventProjection((WorkOffer(f"{event.id}/w", event.group_id or ""),))
        return None


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def replay(store: SQLiteAgentStore, source: Any, projector: Any, **kw: Any) -> AgentReplay:
    return AgentReplay(A, store, source, projector, clock=lambda: NOW, **kw)


def test_projects_and_admits_before_advancing_and_deduplicates() -> None:
    store = SQLiteAgentStore(":memory:")
    source, projector = Source({"g": log("g", 5)}), Projector()
    r = replay(store, source, projector)
    result = run(r.reconcile("g"))["g"]
    assert isinstance(result, GroupReplayResult)
    assert (result.start_cursor, result.end_cursor, result.applied_events) == (0, 5, 5)
    assert [d.work_id for d in result.admissions] == ["g/e2/w", "g/e4/w"]
    assert all(d.accepted for d in result.admissions)
    assert store.cursor(A, "g") == 5 and len(r.scheduler) == 2
    stored = store.load_scheduler(A)
    assert stored is not None and len(stored) == 2

    # A source that resends everything: duplicates, never projected again.
    async def resend(group_id: str, *, after: int) -> Sequence[Ev]:
        return log("g", 5)

    again = run(replay(store, resend, projector, scheduler=r.scheduler).reconcile(["g"]))["g"]
    assert (again.applied_events, again.duplicate_events) == (0, 5)
    assert len(projector.seen) == 5


def test_a_duplicate_event_id_cannot_move() -> None:
    store = SQLiteAgentStore(":memory:")
    run(replay(store, Source({"g": log("g", 3)}), Projector()).reconcile("g"))
    moved = Source({"g": log("g", 3) + [Ev("g/e2", "g", 4)]})
    with pytest.raises(ReplaySequenceError) as error:
        run(replay(store, moved, Projector()).reconcile("g"))
    assert error.value.code == "PROTOCOL_VIOLATION"
    assert isinstance(error.value, ReplayError) and isinstance(error.value, ValueError)
    assert store.cursor(A, "g") == 3


def test_a_failed_projection_leaves_the_event_replayable() -> None:
    store = SQLiteAgentStore(":memory:")
    source = Source({"g": log("g", 6)})
    with pytest.raises(RuntimeError):
        run(replay(store, source, Projector(fail_at=4)).reconcile("g"))
    assert store.cursor(A, "g") == 3
    assert not store.has_event(A, "g/e4")
    projector = Projector()
    result = run(replay(store, source, projector).reconcile("g"))["g"]
    assert projector.seen == ["g/e4", "g/e5", "g/e6"]
    assert (result.start_cursor, result.end_cursor) == (3, 6)


def test_sequence_gaps_are_rejected_without_advancing() -> None:
    store = SQLiteAgentStore(":memory:")
    events = log("g", 5)
    del events[2]
    with pytest.raises(ReplaySequenceError) as gap:
        run(replay(store, Source({"g": events}), Projector()).reconcile("g"))
    assert gap.value.reason == "sequence_gap"
    assert (gap.value.group_id, gap.value.cursor, gap.value.sequence) == ("g", 2, 4)
    assert not isinstance(gap.value, ReplayGroupError)
    assert store.cursor(A, "g") == 2

    async def unordered(group_id: str, *, after: int) -> Sequence[Ev]:
        return [Ev("x", "g", None)]

    with pytest.raises(ReplaySequenceError) as missing:
        run(replay(store, unordered, Projector()).reconcile("g"))
    assert missing.value.reason == "missing_sequence"


def test_wrong_group_events_are_rejected() -> None:
    store = SQLiteAgentStore(":memory:")
    with pytest.raises(ReplayGroupError):
        run(replay(store, Source({"g": [Ev("x", "h", 1)]}), Projector()).reconcile("g"))

    async def organization_scoped(group_id: str, *, after: int) -> Sequence[Ev]:
        return [Ev("x", None, None)]

    with pytest.raises(ReplayGroupError):
        run(replay(store, organization_scoped, Projector()).reconcile("g"))
    with pytest.raises(ReplayGroupError):
        run(replay(store, Source({}), Projector()).reconcile(""))
    assert store.cursor(A, "g") == 0


def test_a_colliding_offer_is_a_projection_error_and_the_scheduler_keeps_the_prefix() -> None:
    store = SQLiteAgentStore(":memory:")

    async def colliding(event: Ev) -> Optional[EventProjection]:
        if event.sequence == 1:
            return EventProjection((WorkOffer("w", "g"),))
        if event.sequence == 3:
            return EventProjection((WorkOffer("w2", "g"), WorkOffer("w", "g", 5)))
        return None

    r = replay(store, Source({"g": log("g", 4)}), colliding)
    with pytest.raises(ReplayProjectionError):
        run(r.reconcile("g"))
    assert store.cursor(A, "g") == 2
    assert r.scheduler.state("w") is not None and r.scheduler.state("w2") is None
    assert len(store.load_scheduler(A) or ()) == 1


def test_restart_restores_the_scheduler_and_replays_only_the_durable_tail(tmp_path: Path) -> None:
    path = tmp_path / "agent.sqlite"
    source = Source({"g": log("g", 4)})
    run(replay(SQLiteAgentStore(path), source, Projector()).reconcile("g"))
    source.logs["g"] = log("g", 7)
    projector = Projector()
    r = replay(SQLiteAgentStore(path), source, projector)
    assert len(r.scheduler) == 2
    result = run(r.reconcile("g"))["g"]
    assert projector.seen == ["g/e5", "g/e6", "g/e7"]
    assert result.start_cursor == 4 and len(r.scheduler) == 3


def test_independent_per_group_tails_on_reconnect() -> None:
    store = SQLiteAgentStore(":memory:")
    source = Source({"a": log("a", 2), "b": log("b", 3)})
    run(replay(store, source, Projector()).reconcile(["a", "b", "a"]))
    source.logs["a"] = log("a", 4)
    source.calls.clear()
    results = run(replay(store, source, Projector()).reconcile(["a", "b"]))
    assert (results["a"].start_cursor, results["a"].end_cursor) == (2, 4)
    assert (results["b"].applied_events, results["b"].end_cursor) == (0, 3)
    assert ("a", 2) in source.calls and ("b", 3) in source.calls


def test_constructor_refuses_an_empty_agent_and_both_scheduler_arguments() -> None:
    store = SQLiteAgentStore(":memory:")
    with pytest.raises(ValueError):
        AgentReplay("", store, Source({}), Projector())
    with pytest.raises(ValueError):
        AgentReplay(A, store, Source({}), Projector(), scheduler=Scheduler(), scheduler_policy=SchedulerPolicy())


def test_sync_callables_are_accepted_too() -> None:
    store = SQLiteAgentStore(":memory:")

    def source(group_id: str, *, after: int) -> Sequence[Ev]:
        return [e for e in log("g", 3) if (e.sequence or 0) > after]

    def projector(event: Ev) -> Optional[EventProjection]:
        return None

    assert run(replay(store, source, projector).reconcile("g"))["g"].end_cursor == 3


def test_a_store_refusal_is_a_local_store_error() -> None:
    store = SQLiteAgentStore(":memory:")
    # The inbox already holds another Event at g#2: the batch is refused whole.
    store.remember_event(A, "other", group_id="g", sequence=2)
    with pytest.raises(LocalStoreError) as refused:
        run(replay(store, Source({"g": log("g", 3)}), Projector()).reconcile("g"))
    assert refused.value.reason == "event_position_collision"
    assert store.cursor(A, "g") == 0


class TooOldSource:
    """A source whose online log starts after ``online_from``: a cursor before it answers the
    snapshot (§16 ``CURSOR_TOO_OLD``)."""

    def __init__(self, group: str, n: int, online_from: int, snapshot: ReplaySnapshot) -> None:
        self.events = log(group, n)
        self.online_from = online_from
        self.snapshot = snapshot
        self.calls: List[int] = []

    async def __call__(self, group_id: str, *, after: int) -> Any:
        self.calls.append(after)
        if after < self.online_from:
            return self.snapshot
        return [e for e in self.events if (e.sequence or 0) > after]


def test_cursor_too_old_restores_the_snapshot_then_replays_the_tail() -> None:
    store = SQLiteAgentStore(":memory:")
    snap = ReplaySnapshot(
        "sha256:" + "a" * 64, 6, EventProjection((WorkOffer("snap/w", "g"),))
    )
    source, projector = TooOldSource("g", 9, 6, snap), Projector()
    r = replay(store, source, projector)
    result = run(r.reconcile("g"))["g"]
    # The snapshot moved the cursor to 6; only Events 7..9 were asked for and projected.
    assert source.calls[:2] == [0, 6]
    assert projector.seen == ["g/e7", "g/e8", "g/e9"]
    assert (result.start_cursor, result.end_cursor, result.applied_events) == (0, 9, 3)
    assert store.cursor(A, "g") == 9
    assert [d.work_id for d in result.admissions] == ["snap/w", "g/e8/w"]
    assert len(r.scheduler) == 2
    # A restart does not ask for the snapshot again.
    again = replay(store, source, Projector())
    assert run(again.reconcile("g"))["g"].applied_events == 0


def test_a_snapshot_not_after_the_cursor_is_refused_and_keeps_the_progress() -> None:
    store = SQLiteAgentStore(":memory:")
    run(replay(store, Source({"g": log("g", 4)}), Projector()).reconcile("g"))
    stale = ReplaySnapshot("sha256:" + "b" * 64, 3)
    source = TooOldSource("g", 4, 10, stale)
    with pytest.raises(ReplaySequenceError) as raised:
        run(replay(store, source, Projector()).reconcile("g"))
    assert isinstance(raised.value, ReplayError)
    assert store.cursor(A, "g") == 4
