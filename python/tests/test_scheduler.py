"""The Scheduler through Python: admission, fairness, priority, blocking, preemption,
snapshots, typed errors, and the Rust-pinned dispatch order of the 10,000-item benchmark."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta, timezone
from typing import List, Sequence

import pytest

from missionweaveprotocol.errors import InvalidInputError
from missionweaveprotocol.scheduler import (
    AdmissionReason,
    CheckpointRef,
    Confidence,
    Dispatch,
    GroupSchedulingPolicy,
    Preempt,
    Scheduler,
    SchedulerError,
    SchedulerPolicy,
    SchedulerSnapshot,
    SchedulerStateError,
    TransitionKind,
    WorkOffer,
    WorkState,
    WorkTransition,
)

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)  # 1_767_225_600_000 ms
# Pinned by core/protocol/tests/scheduling_bench_order.rs for the same workload in Rust.
RUST_ORDER_DIGEST_10000 = "sha256:bc78291af65e56f6bbf1087e258e2cb689e772e7623f6150c86dbf87e1534916"


def at(ms: int) -> datetime:
    return T0 + timedelta(milliseconds=ms)


def policy(slots: int = 1, **kw: object) -> SchedulerPolicy:
    return SchedulerPolicy(capacity_slots=slots, max_work_items=1_000_000,
                           max_work_items_per_group=1_000_000, **kw)  # type: ignore[arg-type]


def dispatched(actions: Sequence[object]) -> List[Dispatch]:
    return [a for a in actions if isinstance(a, Dispatch)]


def done(d: Dispatch) -> WorkTransition:
    return WorkTransition(d.work_id, TransitionKind.COMPLETED, generation=d.generation)


def drain(s: Scheduler, start_ms: int = 1) -> List[str]:
    """Completes everything one schedule() at a time; returns the dispatch order."""
    order: List[str] = []
    now = start_ms
    while True:
        ds = dispatched(s.schedule(now=at(now)))
        if not ds:
            return order
        s.apply_many([done(d) for d in ds], now=at(now))
        order.extend(d.work_id for d in ds)
        now += 1


def test_weighted_fair_share() -> None:
    s = Scheduler(policy(1, groups={"heavy": GroupSchedulingPolicy(3)}, fairness_lag_slots=0))
    for i in range(40):
        s.admit_many([WorkOffer(f"h{i}", "heavy"), WorkOffer(f"l{i}", "light")], now=at(0))
    order = drain(s)
    assert sum(1 for w in order[:40] if w.startswith("h")) == 30
    assert len(order) == 80 and len(s) == 0


def test_priority_and_reprioritization() -> None:
    s = Scheduler(policy())
    for wid, p in [("low", -50), ("mid", 0), ("high", 80)]:
        assert s.admit(WorkOffer(wid, "g", organizational_priority=p), now=at(0)).accepted
    s.reprioritize("low", 100)
    assert drain(s) == ["low", "high", "mid"]


def test_aging_bounds_overtaking() -> None:
    p = policy()
    horizon = p.horizon_ms()
    s = Scheduler(p)
    s.admit(WorkOffer("blocker", "g"), now=at(0))
    assert [d.work_id for d in dispatched(s.schedule(now=at(0)))] == ["blocker"]
    s.admit(WorkOffer("old-low", "g", organizational_priority=-100), now=at(1))
    for i, t in enumerate([10, horizon // 2, horizon + 2, horizon + 100]):
        s.admit(WorkOffer(f"hot{i}", "g", organizational_priority=100), now=at(t))
    s.apply(WorkTransition("blocker", "completed", generation=1), now=at(horizon + 200))
    assert drain(s, horizon + 200) == ["hot0", "hot1", "old-low", "hot2", "hot3"]


def test_admission_declines_with_reasons() -> None:
    s = Scheduler(policy(2, supported_capabilities=[("code.review", "1.2.0")],
                         allowed_groups=["g", "q"], groups={"q": GroupSchedulingPolicy(1, 0)}))
    cases = [
        (WorkOffer("a", "other"), AdmissionReason.GROUP_NOT_ALLOWED, "authorization"),
        (WorkOffer("b", "q"), AdmissionReason.GROUP_QUOTA_DISABLED, "capacity"),
        (WorkOffer("c", "g", slots=3), AdmissionReason.EXCEEDS_CAPACITY, "capacity"),
        (WorkOffer("d", "g", required_capabilities=[("code.review", "1.3.0")]),
         AdmissionReason.UNSUPPORTED_CAPABILITY, "capability"),
        (WorkOffer("e", "g", deadline=at(0)), AdmissionReason.DEADLINE_EXPIRED, "deadline"),
        (WorkOffer("f", "g", authorized=False), AdmissionReason.NOT_AUTHORIZED, "authorization"),
        (WorkOffer("h", "g", dependencies_ready=False), AdmissionReason.DEPENDENCY_UNSATISFIED,
         "dependency"),
        (WorkOffer("i", "g", budget_available=False), AdmissionReason.BUDGET_UNAVAILABLE, "budget"),
    ]
    for offer, reason, category in cases:
        d = s.admit(offer, now=at(0))
        assert (d.accepted, d.reason, d.decline_category, d.work_id) == (
            False, reason, category, offer.work_id)
    ok = WorkOffer("ok", "g", required_capabilities=[("code.review", "1.1.0")])
    assert s.admit(ok, now=at(0)).reason is AdmissionReason.ACCEPTED
    assert s.admit(ok, now=at(1)).reason is AdmissionReason.DUPLICATE
    clash = s.admit(WorkOffer("ok", "g", organizational_priority=5), now=at(1))
    assert (clash.accepted, clash.reason) == (False, AdmissionReason.IDENTIFIER_COLLISION)
    full = Scheduler(SchedulerPolicy(max_work_items=1))
    full.admit(WorkOffer("x", "g"), now=at(0))
    assert full.admit(WorkOffer("y", "g"), now=at(0)).reason is AdmissionReason.WORKER_FULL


def test_blocking_releases_the_slot_and_returns_when_due() -> None:
    s = Scheduler(policy())
    s.admit_many([WorkOffer("a", "g"), WorkOffer("b", "g")], now=at(0))
    (d,) = dispatched(s.schedule(now=at(1)))
    assert d.work_id == "a" and d.run_id == "a:1" and d.resume_from is None
    s.apply(WorkTransition("a", "blocked", generation=1, checkpoint=CheckpointRef("ck"),
                           retry_at=at(100), reason="waiting for approval"), now=at(2))
    assert s.state("a") is WorkState.BLOCKED and s.used_slots == 0
    (d2,) = dispatched(s.schedule(now=at(3)))
    assert d2.work_id == "b"
    s.apply(done(d2), now=at(4))
    assert s.schedule(now=at(99)) == ()
    (d3,) = dispatched(s.schedule(now=at(100)))
    assert (d3.work_id, d3.generation, d3.resume_from) == ("a", 2, CheckpointRef("ck"))
    # The stale first run is fenced.
    with pytest.raises(SchedulerStateError) as info:
        s.apply(WorkTransition("a", "completed", generation=1), now=at(101))
    assert (info.value.kind, info.value.code) == ("stale_run", "WORK_LEASE_EXPIRED")
    s.apply(done(d3), now=at(101))
    assert s.is_terminal("a") and s.state("a") is None
    assert s.admit(WorkOffer("a", "g"), now=at(102)).reason is AdmissionReason.ALREADY_TERMINAL


def test_cooperative_preemption_needs_a_safe_checkpoint() -> None:
    s = Scheduler(policy())
    s.admit(WorkOffer("low", "g", organizational_priority=-50), now=at(0))
    (run,) = dispatched(s.schedule(now=at(1)))
    s.admit(WorkOffer("urgent", "g", organizational_priority=100), now=at(2))
    actions = s.schedule(now=at(3))
    preempts = [a for a in actions if isinstance(a, Preempt)]
    assert len(preempts) == 1 and preempts[0].run_id == "low:1"
    assert s.state("low") is WorkState.PREEMPTING
    with pytest.raises(SchedulerError) as info:
        s.apply(WorkTransition("low", "checkpoint_saved", generation=1,
                               checkpoint=CheckpointRef("c", durable=False)), now=at(4))
    assert (info.value.kind, info.value.code) == ("unsafe_checkpoint", "INVALID_COMMAND")
    with pytest.raises(SchedulerStateError) as state:
        s.apply(WorkTransition("low", "released", generation=1), now=at(4))
    assert (state.value.kind, state.value.code) == ("invalid_transition",
                                                    "INVALID_STATE_TRANSITION")
    s.apply(WorkTransition("low", "checkpoint_saved", generation=1,
                           checkpoint=CheckpointRef("c")), now=at(5))
    assert [d.work_id for d in dispatched(s.schedule(now=at(6)))] == ["urgent"]
    assert s.state("low") is WorkState.READY


def test_disclosure_and_capacity() -> None:
    s = Scheduler(policy(1))
    s.admit_many([WorkOffer("a", "g", estimated_duration_ms=1000), WorkOffer("b", "g")], now=at(0))
    head = s.disclose("a", now=at(0))
    assert head is not None and head.confidence is Confidence.HIGH
    assert head.earliest_start == at(0) and head.calculated_at == at(0)
    assert s.disclose("missing", now=at(0)) is None
    s.set_capacity(2)
    assert len(dispatched(s.schedule(now=at(1)))) == 2
    with pytest.raises(SchedulerError):
        s.set_capacity(0)


def test_bad_input_is_typed() -> None:
    s = Scheduler(policy())
    with pytest.raises(InvalidInputError):
        s.schedule(now=datetime(2026, 1, 1))
    with pytest.raises(InvalidInputError):
        s.admit("offer", now=at(0))  # type: ignore[arg-type]
    with pytest.raises(SchedulerError) as info:  # the core's range rule, as in every binding
        WorkOffer("a", "g", organizational_priority=101)
    assert info.value.code == "INVALID_COMMAND" and info.value.reason == "invalid_argument"
    with pytest.raises(InvalidInputError):
        WorkTransition("a", "blocked", generation=1)
    with pytest.raises(InvalidInputError):
        WorkTransition("a", "exploded", generation=1)
    with pytest.raises(SchedulerError):
        GroupSchedulingPolicy(0)
    with pytest.raises(SchedulerError):
        SchedulerPolicy(capacity_slots=0)
    with pytest.raises(SchedulerStateError) as info:
        s.cancel("nothing")
    assert info.value.kind == "unknown_work"


def test_snapshot_rebuild_round_trips_through_json() -> None:
    s = Scheduler(policy(3))
    for i in range(12):
        s.admit(WorkOffer(f"w{i}", f"g{i % 3}", organizational_priority=(i * 37) % 201 - 100,
                          deadline=at(3_600_000 + i) if i % 4 == 0 else None), now=at(i))
    ds = dispatched(s.schedule(now=at(20)))
    s.apply(WorkTransition(ds[0].work_id, "blocked", generation=1, checkpoint=CheckpointRef("k0"),
                           retry_at=at(5000), reason="input"), now=at(21))
    s.apply(done(ds[1]), now=at(22))
    data = json.loads(json.dumps(s.snapshot().to_dict()))
    assert data["version"] == 1 and isinstance(data["virtualTime"], str)
    restored = Scheduler.rebuild(data, s.policy, exact=True)
    assert restored.snapshot() == s.snapshot()
    assert SchedulerSnapshot.from_json(s.snapshot().to_json()) == s.snapshot()
    s.apply(done(ds[2]), now=at(23))
    restored.apply(done(ds[2]), now=at(23))
    for step in range(60):
        now = at(30 + step * 100)
        a, b = s.schedule(now=now), restored.schedule(now=now)
        assert a == b, step
        for x in (s, restored):
            x.apply_many([done(d) for d in dispatched(a)], now=now)
    assert len(s) == len(restored) == 0
    # After a restart, running work without a checkpoint waits blocked.
    r = Scheduler(policy(1))
    r.admit(WorkOffer("x", "g"), now=at(0))
    r.schedule(now=at(1))
    lost = Scheduler.rebuild(r.snapshot(), r.policy, now=at(50))
    assert lost.state("x") is WorkState.BLOCKED and lost.used_slots == 0
    bad = json.loads(json.dumps(data))
    bad["records"][0]["state"] = "flying"
    with pytest.raises(SchedulerError) as info:
        Scheduler.rebuild(bad)
    assert (info.value.kind, info.value.path) == ("malformed_snapshot", "/records/0/state")
    dup = json.loads(json.dumps(data))
    dup["records"][1]["offer"]["workId"] = dup["records"][0]["offer"]["workId"]
    with pytest.raises(SchedulerError) as corrupt:
        Scheduler.rebuild(dup)
    assert (corrupt.value.kind, corrupt.value.code) == ("corrupt_snapshot", "INTERNAL_ERROR")


def bench_offers(n: int) -> List[WorkOffer]:
    return [
        WorkOffer(f"urn:uuid:00000000-0000-4000-8000-{i:012x}",
                  f"urn:uuid:6a1f0000-0000-4000-8000-{i % 8:012x}",
                  organizational_priority=(i * 37) % 201 - 100)
        for i in range(n)
    ]


def test_dispatch_order_matches_rust_for_the_benchmark_workload() -> None:
    n = 10_000
    s = Scheduler(SchedulerPolicy(capacity_slots=8, max_work_items=n, max_work_items_per_group=n))
    assert all(d.accepted for d in s.admit_many(bench_offers(n), now=T0))
    order: List[str] = []
    t = 0
    while len(order) < n:
        t += 1
        ds = dispatched(s.schedule(now=at(t)))
        assert ds, "stalled"
        s.apply_many([done(d) for d in ds], now=at(t))
        order.extend(d.work_id for d in ds)
    digest = "sha256:" + hashlib.sha256("\n".join(order).encode()).hexdigest()
    assert order[0] == "urn:uuid:00000000-0000-4000-8000-000000000026"
    assert digest == RUST_ORDER_DIGEST_10000
