"""The Scheduler through the reference runtime's shapes: EstimateBand, SchedulingEstimate,
frozen-dataclass WorkOffer / GroupSchedulingPolicy / SchedulerPolicy with the reference's field
names and defaults, ``Scheduler(policy, *, clock)`` with ``now=None``, and the documented
mapping of the reference's float weights onto the Rust core (exact, or refused)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, List

import pytest

from missionweaveprotocol.errors import InvalidInputError
from missionweaveprotocol.scheduler import (
    EFFORT_UNIT_MS,
    AdmissionReason,
    Dispatch,
    EstimateBand,
    GroupSchedulingPolicy,
    Preempt,
    Scheduler,
    SchedulerError,
    SchedulerPolicy,
    SchedulingEstimate,
    TransitionKind,
    WorkOffer,
    WorkState,
    WorkTransition,
)

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def defaults(cls: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name.startswith("_"):
            continue
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
    return out


def test_estimate_band_and_estimate_are_the_references() -> None:
    assert issubclass(EstimateBand, int)
    assert [(b.name, int(b)) for b in EstimateBand] == [
        ("TINY", 1), ("SMALL", 2), ("MEDIUM", 4), ("UNKNOWN", 6), ("LARGE", 8), ("HUGE", 16)]
    est = SchedulingEstimate()
    assert (est.effort, est.slots) == (EstimateBand.UNKNOWN, 1)
    assert dataclasses.is_dataclass(est)
    with pytest.raises(dataclasses.FrozenInstanceError):
        est.slots = 2  # type: ignore[misc]
    assert SchedulingEstimate(4).effort is EstimateBand.MEDIUM, "an int band is read as the band"
    for bad in ({"effort": 3}, {"slots": 0}, {"slots": True}):
        with pytest.raises(SchedulerError) as info:
            SchedulingEstimate(**bad)
        assert info.value.kind == "invalid_argument" and isinstance(info.value, ValueError)
    assert EstimateBand.TINY.duration_ms == EFFORT_UNIT_MS
    assert EstimateBand.UNKNOWN.duration_ms is None


def test_dataclass_fields_and_defaults_match_the_reference() -> None:
    assert list(defaults(WorkOffer))[:5] == [
        "organizational_priority", "deadline", "estimate", "capability", "preemptible"]
    assert [f.name for f in dataclasses.fields(WorkOffer)][:2] == ["work_id", "group_id"]
    offer = defaults(WorkOffer)
    assert (offer["organizational_priority"], offer["deadline"], offer["capability"],
            offer["preemptible"]) == (0, None, None, True)
    assert offer["estimate"] == SchedulingEstimate()
    group = defaults(GroupSchedulingPolicy)
    assert group == {"weight": 1, "slot_quota": None, "priority_bias": 0}
    policy = defaults(SchedulerPolicy)
    reference = {
        "capacity_slots": 1, "groups": {}, "default_group": GroupSchedulingPolicy(),
        "supported_capabilities": None, "allowed_groups": None, "max_work_items": 10_000,
        "max_work_items_per_group": 1_000, "decline_expired": False,
        "aging_interval": timedelta(minutes=5), "deadline_horizon": timedelta(hours=1),
        "priority_weight": 100.0, "deadline_weight": 1000.0, "aging_weight": 25.0,
        "fairness_weight": 10.0, "quota_pressure_weight": 50.0, "estimate_weight": 1.0,
        "preemption_margin": 1.0,
    }
    assert list(policy)[: len(reference)] == list(reference)
    assert {k: policy[k] for k in reference} == reference
    for cls in (WorkOffer, GroupSchedulingPolicy, SchedulerPolicy):
        assert cls.__dataclass_params__.frozen  # type: ignore[attr-defined]


def test_reference_program_admits_schedules_and_completes_with_a_clock() -> None:
    now = [at(0)]
    s = Scheduler(SchedulerPolicy(capacity_slots=2), clock=lambda: now[0])
    # Positional, as the reference's dataclass allows.
    first = WorkOffer("urn:w:1", "urn:g:a", 10, None, SchedulingEstimate(EstimateBand.SMALL), None, True)
    decision = s.admit(first)
    assert decision.accepted and decision.reason is AdmissionReason.ACCEPTED
    assert s.admit(WorkOffer("urn:w:2", "urn:g:b", estimate=SchedulingEstimate(slots=2))).accepted
    now[0] = at(1)
    actions = s.schedule()
    assert [a.work_id for a in actions if isinstance(a, Dispatch)] == ["urn:w:1"]
    run = actions[0]
    assert isinstance(run, Dispatch) and run.run_id == f"urn:w:1:{run.generation}"
    s.apply(WorkTransition(run.work_id, TransitionKind.COMPLETED, generation=run.generation))
    assert s.is_terminal("urn:w:1")
    two = [a for a in s.schedule() if isinstance(a, Dispatch)]
    assert [(d.work_id, d.slots) for d in two] == [("urn:w:2", 2)]
    assert s.clock() == at(1) and s.policy.capacity_slots == 2


def test_estimate_band_is_the_core_duration() -> None:
    # decline_infeasible_deadlines exposes the duration the band became: 15 s fit a TINY
    # estimate (10 s) but not a SMALL one (20 s).
    s = Scheduler(SchedulerPolicy(decline_infeasible_deadlines=True))
    tiny = WorkOffer("urn:w:t", "urn:g:1", deadline=at(15), estimate=SchedulingEstimate(EstimateBand.TINY))
    small = WorkOffer("urn:w:s", "urn:g:1", deadline=at(15), estimate=SchedulingEstimate(EstimateBand.SMALL))
    assert s.admit(tiny, now=at(0)).accepted
    assert s.admit(small, now=at(0)).reason is AdmissionReason.DEADLINE_EXPIRED
    # UNKNOWN leaves it to the policy's default estimate.
    quick = Scheduler(SchedulerPolicy(decline_infeasible_deadlines=True, default_estimate_ms=1_000))
    assert quick.admit(WorkOffer("urn:w:u", "urn:g:1", deadline=at(2)), now=at(0)).accepted
    # Our own arguments still work and override the band.
    exact = WorkOffer("urn:w:e", "urn:g:1", deadline=at(15), estimate=SchedulingEstimate(EstimateBand.HUGE),
                      estimated_duration_ms=5_000)
    assert s.admit(exact, now=at(0)).accepted
    with pytest.raises(SchedulerError):
        WorkOffer("urn:w:x", "urn:g:1", estimate=SchedulingEstimate(slots=2), slots=3)
    assert Scheduler(SchedulerPolicy(capacity_slots=1)).admit(
        WorkOffer("urn:w:big", "urn:g:1", estimate=SchedulingEstimate(slots=2)), now=at(0)
    ).reason is AdmissionReason.EXCEEDS_CAPACITY


def test_expired_deadlines_are_declined_even_with_decline_expired_false() -> None:
    # Deliberate difference: the reference admits already-expired work unless decline_expired;
    # the core never queues work whose deadline has passed (§10.3).
    s = Scheduler(SchedulerPolicy(decline_expired=False))
    decision = s.admit(WorkOffer("urn:w:late", "urn:g:1", deadline=at(-1)), now=at(0))
    assert not decision.accepted and decision.reason is AdmissionReason.DEADLINE_EXPIRED
    assert s.admit(WorkOffer("urn:w:ok", "urn:g:1", deadline=at(3600)), now=at(0)).accepted


class Requirement:
    def __init__(self, id: str, minimum_version: int) -> None:
        self.id = id
        self.minimum_version = minimum_version


def test_capabilities_accept_the_reference_forms() -> None:
    s = Scheduler(SchedulerPolicy(supported_capabilities=["code.review", ("test.run", "2.1.0")]))
    assert s.admit(WorkOffer("urn:w:1", "urn:g:1", capability="code.review"), now=at(0)).accepted
    assert s.admit(WorkOffer("urn:w:2", "urn:g:1", capability=Requirement("test.run", 2)), now=at(0)).accepted
    for i, cap in enumerate(["deploy", Requirement("test.run", 3), {"id": "code.review", "minimum_version": 1}]):
        d = s.admit(WorkOffer(f"urn:w:no{i}", "urn:g:1", capability=cap), now=at(0))
        assert d.reason is AdmissionReason.UNSUPPORTED_CAPABILITY, cap
    with pytest.raises(SchedulerError):
        WorkOffer("urn:w:3", "urn:g:1", capability=42)


def test_float_weights_map_exactly_onto_the_core() -> None:
    core = SchedulerPolicy().core_policy
    assert (core.priority_step_ms, core.deadline_horizon_ms, core.preemption_margin) == (3_000, 600_000, 50)
    mapped = SchedulerPolicy(aging_interval=timedelta(seconds=3), priority_weight=100.0,
                             aging_weight=25.0, deadline_horizon=timedelta(minutes=30),
                             preemption_margin=150.0).core_policy
    assert mapped.priority_step_ms == 12_000  # 3 s × 100 / 25: one priority point = 12 s waiting
    assert mapped.deadline_horizon_ms == 1_800_000
    assert mapped.preemption_margin == 2  # ceil(150 / 100) priority points
    decimal = SchedulerPolicy(aging_interval=timedelta(seconds=1), priority_weight=0.3,
                              aging_weight=0.1).core_policy
    assert decimal.priority_step_ms == 3_000, "0.3 / 0.1 is 3 as written, not as binary floats"
    ours = SchedulerPolicy(priority_step_ms=500, preemption_margin_points=7).core_policy
    assert (ours.priority_step_ms, ours.preemption_margin) == (500, 7)
    assert GroupSchedulingPolicy(2.0).weight == 2.0
    assert SchedulerPolicy(groups={"urn:g:1": GroupSchedulingPolicy(2.0)}).core_policy.groups["urn:g:1"].weight == 2


@pytest.mark.parametrize(
    ("kwargs", "kind"),
    [
        ({"priority_weight": 1.0, "aging_weight": 3.0, "aging_interval": timedelta(milliseconds=1)},
         "unsupported_policy"),  # 1/3 ms per priority point
        ({"aging_interval": timedelta(microseconds=1500)}, "unsupported_policy"),
        ({"deadline_horizon": timedelta(microseconds=1)}, "unsupported_policy"),
        ({"fairness_weight": 0.0}, "invalid_argument"),
        ({"fairness_weight": -10.0}, "invalid_argument"),
        ({"fairness_weight": float("nan")}, "invalid_argument"),
        ({"fairness_weight": 1e-30}, "invalid_argument"),  # a lag of 10^31 slots
        ({"fairness_weight": 100.0, "fairness_lag_slots": 0}, "invalid_argument"),
        ({"deadline_weight": 1.0}, "unsupported_policy"),
        ({"quota_pressure_weight": 0.0}, "unsupported_policy"),
        ({"estimate_weight": 2.0}, "unsupported_policy"),
        ({"priority_weight": 50.0, "priority_step_ms": 10}, "invalid_argument"),
        ({"deadline_horizon": timedelta(minutes=1), "deadline_horizon_ms": 1}, "invalid_argument"),
        ({"preemption_margin": 2.0, "preemption_margin_points": 1}, "invalid_argument"),
        ({"preemption_margin": -1.0}, "invalid_argument"),
        ({"aging_weight": 0.0}, "invalid_argument"),
        ({"preemption_margin": 1e9}, "invalid_argument"),
        ({"preemption_margin": float("nan")}, "invalid_argument"),
        ({"priority_weight": float("inf")}, "invalid_argument"),
    ],
)
def test_weights_the_core_cannot_honour_are_refused(kwargs: dict[str, Any], kind: str) -> None:
    with pytest.raises(SchedulerError) as info:
        SchedulerPolicy(**kwargs)
    assert info.value.kind == kind and info.value.code == "INVALID_COMMAND"


def test_group_policy_bias_and_weights() -> None:
    for bad, kind in [((1.5,), "unsupported_policy"), ((1, None, 5), "unsupported_policy"),
                      ((1, None, 101), "invalid_argument"), ((0,), "invalid_argument")]:
        with pytest.raises(SchedulerError) as info:
            GroupSchedulingPolicy(*bad)
        assert info.value.kind == kind, bad
    # The weight range is the core's rule, with the core's own error (as a Scheduler refuses it).
    for bad_weight in (0, 1_000_001):
        with pytest.raises(SchedulerError) as info:
            GroupSchedulingPolicy(bad_weight)
        assert (info.value.code, info.value.reason, info.value.fields) == (
            "INVALID_COMMAND", "invalid_argument", {"field": "weight"})
        assert str(info.value) == "invalid weight"
    top = SchedulerPolicy(groups={"urn:g:1": GroupSchedulingPolicy(1_000_000)})
    assert top.core_policy.groups["urn:g:1"].weight == 1_000_000
    # Weight shares slots (stride scheduling): weight 3 gets three dispatches per one.
    s = Scheduler(SchedulerPolicy(groups={"urn:g:heavy": GroupSchedulingPolicy(3)}, fairness_lag_slots=0))
    for i in range(8):
        s.admit(WorkOffer(f"urn:w:h{i}", "urn:g:heavy"), now=at(0))
        s.admit(WorkOffer(f"urn:w:l{i}", "urn:g:light"), now=at(0))
    order: List[str] = []
    for step in range(8):
        (d,) = [a for a in s.schedule(now=at(1 + step)) if isinstance(a, Dispatch)]
        order.append(d.group_id)
        s.apply(WorkTransition(d.work_id, "completed", generation=d.generation), now=at(1 + step))
    assert order.count("urn:g:heavy") == 6 and order.count("urn:g:light") == 2
    with pytest.raises(SchedulerError):
        s.set_group_policy("urn:g:light", "heavy")  # type: ignore[arg-type]


def _urgent_vs_routine(policy: SchedulerPolicy) -> str:
    """Group codes of the first eight dispatches on one slot: "u"rgent priority-100 work vs
    "r"outine priority-0 work, equal Group weights."""
    s = Scheduler(policy)
    for i in range(8):
        s.admit(WorkOffer(f"urn:w:u{i}", "urn:g:urgent", organizational_priority=100), now=at(0))
        s.admit(WorkOffer(f"urn:w:r{i}", "urn:g:routine"), now=at(0))
    order = ""
    for step in range(8):
        (d,) = [a for a in s.schedule(now=at(1 + step)) if isinstance(a, Dispatch)]
        order += d.group_id[len("urn:g:")]
        s.apply(WorkTransition(d.work_id, "completed", generation=d.generation), now=at(1 + step))
    return order


def test_fairness_weight_sets_how_far_priority_may_run_ahead() -> None:
    # The reference's fairness_weight=100 (issue 25): accepted, a lag of 0.1 slot
    # (priority_weight / (10 · fairness_weight)), so the Groups alternate.
    strict = SchedulerPolicy(fairness_weight=100.0)
    assert strict.core_policy.fairness_lag_pass == (1 << 40) // 10
    assert _urgent_vs_routine(strict) == "urururur"
    # The default (10) keeps the core's lag of 1 slot: priority runs one dispatch ahead.
    assert SchedulerPolicy().core_policy.fairness_lag_pass is None
    assert _urgent_vs_routine(SchedulerPolicy()) == "uurururu"
    # A weaker weight lets priority run further ahead, but boundedly (2.5 → 4 slots).
    loose = SchedulerPolicy(fairness_weight=2.5)
    assert loose.core_policy.fairness_lag_pass == 4 << 40
    assert _urgent_vs_routine(loose) == "uuuuurur"
    # The lag is relative to priority_weight, as the reference's score is.
    assert SchedulerPolicy(
        priority_weight=200.0, aging_weight=50.0, fairness_weight=20.0
    ).core_policy.fairness_lag_pass == 1 << 40
    # The own field alone still works.
    assert SchedulerPolicy(fairness_lag_slots=0).core_policy.fairness_lag_slots == 0


def test_preemption_with_the_reference_margin() -> None:
    # Reference margin 1.0 score unit = ceil(1/100) = 1 priority point.
    s = Scheduler(SchedulerPolicy(preemption_margin=99.0))
    s.admit(WorkOffer("urn:w:low", "urn:g:1", organizational_priority=0), now=at(0))
    s.schedule(now=at(1))
    s.admit(WorkOffer("urn:w:high", "urn:g:1", organizational_priority=1), now=at(2))
    assert [a for a in s.schedule(now=at(3)) if isinstance(a, Preempt)][0].work_id == "urn:w:low"


def test_rebuild_from_a_snapshot_treats_the_runtime_as_lost_like_the_reference() -> None:
    s = Scheduler(clock=lambda: at(5))
    s.admit(WorkOffer("urn:w:1", "urn:g:1"))
    s.schedule()
    restarted = Scheduler.rebuild(s.snapshot(), clock=lambda: at(6))
    assert restarted.state("urn:w:1") is WorkState.BLOCKED and restarted.used_slots == 0
    assert Scheduler.rebuild(s.snapshot(), exact=True).state("urn:w:1") is WorkState.RUNNING
    fresh = Scheduler.rebuild([WorkOffer("urn:w:a", "urn:g:1"), WorkOffer("urn:w:b", "urn:g:2")],
                              now=at(0))
    assert len(fresh) == 2 and fresh.state("urn:w:a") is WorkState.READY
    with pytest.raises(SchedulerError):
        Scheduler.rebuild([WorkOffer("urn:w:a", "urn:g:1")] * 2 + [WorkOffer("urn:w:a", "urn:g:2")], now=at(0))


@pytest.mark.parametrize("source", [None, 5, [], (), iter(()), "[]", b"{}"],
                         ids=["None", "int", "empty list", "empty tuple", "empty iterator", "str",
                              "bytes"])
def test_rebuild_refuses_what_is_neither_a_snapshot_nor_offers(source: Any) -> None:
    """Issue 22, item 8: ``rebuild(None)`` and ``rebuild(5)`` raised a bare ``TypeError`` and
    ``rebuild([])`` gave an empty Scheduler; each is API misuse, refused with the typed argument
    error (``PROTOCOL_VIOLATION``, ``invalid-argument``, argument ``source``), by the core."""
    with pytest.raises(InvalidInputError) as caught:
        Scheduler.rebuild(source, now=at(0))
    error = caught.value
    assert (error.code, error.reason, error.argument) == (
        "PROTOCOL_VIOLATION", "invalid-argument", "source")
    assert dict(error.fields) == {"argument": "source"}
    # One offer is a rebuild (the boundary of the empty one).
    assert len(Scheduler.rebuild([WorkOffer("urn:w:a", "urn:g:1")], now=at(0))) == 1


class Contract:
    def __init__(self, deadline: datetime, seconds: int) -> None:
        self.deadline = deadline
        self.estimated_duration_seconds = seconds
        self.required_capabilities = [Requirement("code.review", 1)]


class Item:
    def __init__(self, id: str, group_id: str, contract: Contract) -> None:
        self.id, self.group_id, self.contract = id, group_id, contract


def test_from_work_item_reads_objects_and_mappings() -> None:
    offer = WorkOffer.from_work_item(Item("urn:w:1", "urn:g:1", Contract(at(100), 30)),
                                     organizational_priority=5)
    assert (offer.work_id, offer.group_id, offer.deadline, offer.organizational_priority) == (
        "urn:w:1", "urn:g:1", at(100), 5)
    assert offer.estimated_duration_ms == 30_000
    from_map = WorkOffer.from_work_item(
        {"id": "urn:w:2", "groupId": "urn:g:1", "contract": {"deadline": at(50)}},
        estimate=SchedulingEstimate(EstimateBand.LARGE), capability="code.review")
    assert from_map.estimate.effort is EstimateBand.LARGE and from_map.estimated_duration_ms is None
    s = Scheduler(SchedulerPolicy(supported_capabilities=[("code.review", "1.0.0")]))
    assert s.admit(offer, now=at(0)).accepted and s.admit(from_map, now=at(0)).accepted
    with pytest.raises(Exception):
        WorkOffer.from_work_item({"groupId": "urn:g:1"})


def test_replace_revalidates() -> None:
    offer = WorkOffer("urn:w:1", "urn:g:1")
    assert dataclasses.replace(offer, organizational_priority=100).organizational_priority == 100
    with pytest.raises(Exception):
        dataclasses.replace(offer, organizational_priority=101)


@dataclass
class ReferenceCheckpoint:  # the reference's CheckpointRef fields
    checkpoint_id: str
    work_id: str
    group_id: str
    run_id: str
    created_at: datetime
    durable: bool = True
    safe: bool = True


def test_transitions_in_the_reference_shape() -> None:
    s = Scheduler(SchedulerPolicy(capacity_slots=1, preemption_margin_points=1), clock=lambda: at(0))
    s.admit(WorkOffer("urn:w:low", "urn:g:1"))
    (run,) = s.schedule(now=at(1))
    assert isinstance(run, Dispatch)
    # run_id names the run, as in the reference.
    saved = ReferenceCheckpoint("urn:c:1", run.work_id, run.group_id, run.run_id, at(2))
    s.apply(WorkTransition(run.work_id, TransitionKind.CHECKPOINT_SAVED, run.run_id, saved), now=at(2))
    with pytest.raises(Exception) as early:  # not asked to yield yet
        s.apply(WorkTransition(run.work_id, TransitionKind.PREEMPTED, run.run_id, saved), now=at(2))
    assert getattr(early.value, "kind", None) == "invalid_transition"
    s.admit(WorkOffer("urn:w:high", "urn:g:1", organizational_priority=5), now=at(3))
    (preempt,) = [a for a in s.schedule(now=at(3)) if isinstance(a, Preempt)]
    assert preempt.run_id == run.run_id
    s.apply(WorkTransition(run.work_id, "preemption_failed", run.run_id), now=at(4))
    assert s.state("urn:w:low") is WorkState.RUNNING
    (preempt,) = [a for a in s.schedule(now=at(5)) if isinstance(a, Preempt)]
    s.apply_many([WorkTransition(run.work_id, "preempted", run_id=run.run_id, checkpoint=saved)], now=at(6))
    assert s.state("urn:w:low") is WorkState.READY
    (high,) = [a for a in s.schedule(now=at(7)) if isinstance(a, Dispatch)]
    assert high.work_id == "urn:w:high"
    s.apply(WorkTransition(high.work_id, TransitionKind.CANCELLED), now=at(8))
    assert s.state("urn:w:high") is None and s.used_slots == 0
    for bad in [dict(run_id="urn:w:other:1"), dict(run_id=f"{run.work_id}:x"),
                dict(run_id=run.run_id, generation=run.generation + 1), dict()]:
        with pytest.raises(SchedulerError):
            WorkTransition(run.work_id, "completed", **bad)  # type: ignore[arg-type]
