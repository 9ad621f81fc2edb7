"""The Worker-local weighted-fair Scheduler (§10.3 admission, §11.1 per-Group queues, §11.2
disclosure, §11.3 cooperative preemption, §11.4 blocking and retries).

Content-free: it sees IDs, Groups, priorities, deadlines, estimates, slots and capabilities,
never goals or data. Each Group queue is ordered by a fixed "virtual ready time" key (aging
needs no rescoring); Groups share slots by stride scheduling with weights and quotas; a
multi-slot head reserves slots; preemption is only requested, and a slot is taken back only
after a durable, safe checkpoint. Every operation is O(log n); the starvation bound is in the
Rust module documentation (``missionweaveprotocol_kernel::scheduler``).

The reference runtime's shapes are accepted as they are: :class:`EstimateBand`,
:class:`SchedulingEstimate`, :class:`WorkOffer`, :class:`GroupSchedulingPolicy` and
:class:`SchedulerPolicy` are frozen dataclasses with the reference's field names, order and
defaults (plus this package's own fields after them), and :class:`Scheduler` takes
``Scheduler(policy=None, *, clock=...)`` with ``now=None`` meaning ``clock()``. How the
reference's fields map onto the Rust scheduler is stated on each class; a value the core
cannot honour exactly is refused with :class:`SchedulerError` (``INVALID_COMMAND``, kind
``unsupported_policy`` or ``invalid_argument``), never silently approximated.

``schedule(now=...)`` returns a tuple of :class:`Dispatch` and at most one :class:`Preempt`;
the Worker reports back with :class:`WorkTransition` (``generation`` from the Dispatch, or the
Dispatch's ``run_id``). ``snapshot()`` → ``Scheduler.rebuild(snapshot, policy)`` restores
after a restart (running work resumes from a durable safe checkpoint or waits blocked, as in
the reference); ``exact=True`` restores the snapshot as it was. Bulk ``admit_many`` /
``apply_many`` take whole batches in one call.

State errors raise :class:`SchedulerStateError` (stale run → ``WORK_LEASE_EXPIRED``, wrong
state → ``INVALID_STATE_TRANSITION``); bad arguments, unsafe checkpoints and corrupt snapshots
raise :class:`SchedulerError` (a ``ValueError``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from enum import IntEnum
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Iterable,
    List,
    Mapping,
    Optional,
    Tuple,
    Union,
)

from . import _native
from ._native import (
    EFFORT_UNIT_MS,
    AdmissionDecision,
    CapabilityRef,
    CheckpointRef,
    Dispatch,
    Preempt,
    ScheduleDisclosure,
    SchedulerSnapshot,
)
from ._types import (
    AdmissionReason,
    CapacityStatus,
    Confidence,
    TransitionKind,
    WorkState,
)
from .errors import SchedulerError, SchedulerStateError

if TYPE_CHECKING:
    from ._native import Scheduler as _CoreScheduler

ScheduleAction = Union[Dispatch, Preempt]
Clock = Callable[[], datetime]

# ``EFFORT_UNIT_MS`` (imported above): one unit of :class:`EstimateBand` effort as a duration,
# the core's (``missionweaveprotocol_kernel::scheduler::reference``): ``TINY`` is 10 s,
# ``MEDIUM`` 40 s, ``HUGE`` 160 s, around the core's default estimate of 60 s.


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


def _bad(message: str) -> SchedulerError:
    return SchedulerError(message, code="INVALID_COMMAND", kind="invalid_argument")


class EstimateBand(IntEnum):
    """Relative effort of a WorkItem (the reference's bands). The core schedules on durations:
    a band is ``value × EFFORT_UNIT_MS`` milliseconds, except ``UNKNOWN``, which leaves the
    estimate to the policy's ``default_estimate_ms`` (60 s unless set)."""

    TINY = 1
    SMALL = 2
    MEDIUM = 4
    UNKNOWN = 6
    LARGE = 8
    HUGE = 16

    @property
    def duration_ms(self) -> Optional[int]:
        """The estimate handed to the core; ``None`` for ``UNKNOWN`` (the policy's default)."""
        return _native.scheduler_effort_duration_ms(int(self))


@dataclass(frozen=True)
class SchedulingEstimate:
    """``SchedulingEstimate(effort=EstimateBand.UNKNOWN, slots=1)``: effort band and the
    execution slots needed at once (≥ 1)."""

    effort: EstimateBand = EstimateBand.UNKNOWN
    slots: int = 1

    def __post_init__(self) -> None:
        try:
            band = EstimateBand(self.effort)
        except ValueError:
            raise _bad(f"effort must be an EstimateBand, not {self.effort!r}") from None
        object.__setattr__(self, "effort", band)
        if isinstance(self.slots, bool) or not isinstance(self.slots, int) or self.slots < 1:
            raise _bad(f"slots must be an integer ≥ 1, not {self.slots!r}")


def _capability(value: Any, what: str) -> Any:
    """A capability as the core takes it. Accepted: a ``CapabilityRef`` or ``(id, version)``
    pair (version = minimum SemVer); a bare id string (any version: ``0.0.0``); or an object or
    mapping with ``id`` and an integer ``minimum_version``/``version`` n (``n.0.0``)."""
    if isinstance(value, (CapabilityRef, tuple)):
        return value
    if isinstance(value, str):
        return CapabilityRef(value, _native.capability_reference_version())
    def read(name: str) -> Any:
        return value.get(name) if isinstance(value, Mapping) else getattr(value, name, None)

    ident = read("id")
    version = read("minimum_version")
    if version is None:
        version = read("minimumVersion")
    if version is None:
        version = read("version")
    if isinstance(ident, str) and isinstance(version, int) and not isinstance(version, bool):
        return CapabilityRef(ident, _native.capability_reference_version(version))
    if isinstance(ident, str) and isinstance(version, str):
        return CapabilityRef(ident, version)
    raise _bad(f"{what} must be a capability id, CapabilityRef or (id, version), not {value!r}")


@dataclass(frozen=True)
class WorkOffer:
    """A WorkItem offered to this Worker (content-free). The reference's fields come first:
    ``WorkOffer(work_id, group_id, organizational_priority=0, deadline=None,
    estimate=SchedulingEstimate(), capability=None, preemptible=True)``; then this package's:
    ``estimated_duration_ms`` (overrides the band's duration), ``slots`` (overrides
    ``estimate.slots``; both given and different is refused), ``required_capabilities`` (with
    ``capability`` added to them), and the §10.3 admission facts ``authorized``,
    ``dependencies_ready``, ``budget_available``.

    Mapping: duration = ``estimated_duration_ms``, else ``estimate.effort.duration_ms`` (band ×
    ``EFFORT_UNIT_MS``; ``UNKNOWN`` = the policy's default estimate);
    ``capability`` is read as described in :func:`_capability`. The core checks the rest
    (priority −100..100, slots ≥ 1, timezone-aware deadline) when the offer is made."""

    work_id: str
    group_id: str
    organizational_priority: int = 0
    deadline: Optional[datetime] = None
    estimate: SchedulingEstimate = field(default_factory=SchedulingEstimate)
    capability: Optional[Any] = None
    preemptible: bool = True
    estimated_duration_ms: Optional[int] = None
    slots: Optional[int] = None
    required_capabilities: Tuple[Any, ...] = ()
    authorized: bool = True
    dependencies_ready: bool = True
    budget_available: bool = True
    _core: Any = field(init=False, repr=False, compare=False, hash=False, default=None)

    def __post_init__(self) -> None:
        if not isinstance(self.estimate, SchedulingEstimate):
            raise _bad(f"estimate must be a SchedulingEstimate, not {self.estimate!r}")
        if self.slots is not None and self.slots != self.estimate.slots and self.estimate.slots != 1:
            raise _bad("slots and estimate.slots disagree")
        caps = [_capability(c, "required_capabilities") for c in self.required_capabilities]
        if self.capability is not None:
            caps.append(_capability(self.capability, "capability"))
        duration = self.estimated_duration_ms
        if duration is None:
            duration = self.estimate.effort.duration_ms
        core = _native.WorkOffer(
            self.work_id,
            self.group_id,
            organizational_priority=self.organizational_priority,
            deadline=self.deadline,
            estimated_duration_ms=duration,
            slots=self.estimate.slots if self.slots is None else self.slots,
            required_capabilities=caps,
            preemptible=self.preemptible,
            authorized=self.authorized,
            dependencies_ready=self.dependencies_ready,
            budget_available=self.budget_available,
        )
        object.__setattr__(self, "_core", core)

    @classmethod
    def from_work_item(
        cls,
        work_item: Any,
        *,
        organizational_priority: int = 0,
        estimate: Optional[SchedulingEstimate] = None,
        capability: Optional[Any] = None,
        preemptible: bool = True,
    ) -> "WorkOffer":
        """An offer for a WorkItem. ``work_item`` is any object or mapping with ``id``,
        ``group_id`` (or ``groupId``) and ``contract`` (with ``deadline`` and optionally
        ``estimated_duration_seconds``/``estimatedDurationSeconds``, used when no
        ``estimate`` is given; ``required_capabilities`` entries are added as requirements)."""

        def read(obj: Any, *names: str) -> Any:
            for name in names:
                value = obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)
                if value is not None:
                    return value
            return None

        contract = read(work_item, "contract")
        deadline = None if contract is None else read(contract, "deadline")
        seconds = None if contract is None else read(
            contract, "estimated_duration_seconds", "estimatedDurationSeconds"
        )
        required = () if contract is None else tuple(
            read(contract, "required_capabilities", "requiredCapabilities") or ()
        )
        duration = None
        if estimate is None and seconds is not None:
            duration = int(seconds) * 1000
        return cls(
            read(work_item, "id"),
            read(work_item, "group_id", "groupId"),
            organizational_priority,
            deadline,
            estimate if estimate is not None else SchedulingEstimate(),
            capability,
            preemptible,
            estimated_duration_ms=duration,
            required_capabilities=required,
        )


@dataclass(frozen=True)
class GroupSchedulingPolicy:
    """``GroupSchedulingPolicy(weight=1, slot_quota=None, priority_bias=0)``: a Group's
    fair-share weight (whole number 1..1,000,000; a float must hold a whole number), the most
    slots it may hold at once (``0`` disables the Group) and the reference's priority bias.

    ``priority_bias`` other than ``0`` is refused (``unsupported_policy``): the core orders
    each Group's queue by its own items' priorities and has no per-Group bias."""

    weight: float = 1
    slot_quota: Optional[int] = None
    priority_bias: int = 0
    _core: Any = field(init=False, repr=False, compare=False, hash=False, default=None)

    def __post_init__(self) -> None:
        # Every rule (a whole weight in 1..1,000,000, the bias range, no bias) is the core's
        # (``scheduler::reference::reference_group_policy``), with the core's errors.
        object.__setattr__(
            self,
            "_core",
            _native.scheduler_group_policy(self.weight, self.slot_quota, self.priority_bias),
        )


_DEFAULT_GROUP = GroupSchedulingPolicy()
# The reference's knob defaults and the core's own defaults, both from the core.
_REFERENCE_DEFAULTS: Dict[str, Any] = _native.scheduler_reference_defaults()
_CORE_DEFAULTS = _native.SchedulerPolicy()


@dataclass(frozen=True)
class SchedulerPolicy:
    """The reference's policy fields with its defaults, then this package's own.

    How the reference's fields reach the core:

    - ``capacity_slots``, ``groups``, ``default_group``, ``allowed_groups``, ``max_work_items``,
      ``max_work_items_per_group``: as they are. ``supported_capabilities`` entries are read as
      :class:`WorkOffer`'s ``capability``.
    - ``decline_expired``: accepted; an offer whose deadline has already passed is declined
      (``deadline_expired``) whatever its value — on purpose, a Worker never queues work it can
      no longer finish in time (§10.3). ``decline_infeasible_deadlines=True`` also declines
      offers whose estimate cannot end before the deadline.
    - ``priority_weight``, ``aging_weight``, ``aging_interval``: the reference trades one
      priority point against ``priority_weight / aging_weight`` aging intervals of waiting; the
      core's ``priority_step_ms`` is that waiting time. At their defaults the core's default
      ``priority_step_ms`` (3 s) applies; otherwise ``priority_step_ms = aging_interval ×
      priority_weight / aging_weight``, which must be a whole number of milliseconds.
    - ``deadline_horizon``: at its default (1 h) the core's default horizon (10 min) applies;
      otherwise it is the core's ``deadline_horizon_ms`` (whole milliseconds).
    - ``preemption_margin`` (score units in the reference): at its default the core's default
      margin (50 priority points) applies; otherwise the margin in priority points is
      ``ceil(preemption_margin / priority_weight)`` — exact, since priorities are integers.
    - ``fairness_weight``: the reference's score counts ``priority_weight / fairness_weight``
      fairness credits as one priority point (10 at the defaults, the core's default lag of 1
      slot). Otherwise the core's cross-Group lag is ``priority_weight / (10 ·
      fairness_weight)`` slots (``core_policy.fairness_lag_pass``, in 2^-40 slots):
      ``fairness_weight=100`` lets priority run at most 0.1 slot ahead of the other Groups'
      weighted share. It must be ``> 0`` and give a lag of at most 2^32 − 1 slots.
    - ``deadline_weight``, ``quota_pressure_weight``, ``estimate_weight``: the core ranks by
      deadline pull-forward and stride fairness, without these weights; only their defaults
      are accepted.

    A reference field left at its default and the matching own field set
    (``priority_step_ms``, ``deadline_horizon_ms``, ``preemption_margin_points``,
    ``fairness_lag_slots``) is fine; both set is refused. Every refusal is :class:`SchedulerError` (``unsupported_policy`` or
    ``invalid_argument``).
    """

    capacity_slots: int = _CORE_DEFAULTS.capacity_slots
    groups: Mapping[str, GroupSchedulingPolicy] = field(default_factory=dict)
    default_group: GroupSchedulingPolicy = _DEFAULT_GROUP
    supported_capabilities: Optional[Iterable[Any]] = None
    allowed_groups: Optional[Iterable[str]] = None
    max_work_items: int = _CORE_DEFAULTS.max_work_items
    max_work_items_per_group: int = _CORE_DEFAULTS.max_work_items_per_group
    decline_expired: bool = False
    aging_interval: timedelta = _REFERENCE_DEFAULTS["aging_interval"]
    deadline_horizon: timedelta = _REFERENCE_DEFAULTS["deadline_horizon"]
    priority_weight: float = _REFERENCE_DEFAULTS["priority_weight"]
    deadline_weight: float = _REFERENCE_DEFAULTS["deadline_weight"]
    aging_weight: float = _REFERENCE_DEFAULTS["aging_weight"]
    fairness_weight: float = _REFERENCE_DEFAULTS["fairness_weight"]
    quota_pressure_weight: float = _REFERENCE_DEFAULTS["quota_pressure_weight"]
    estimate_weight: float = _REFERENCE_DEFAULTS["estimate_weight"]
    preemption_margin: float = _REFERENCE_DEFAULTS["preemption_margin"]
    # This package's own fields.
    decline_infeasible_deadlines: bool = False
    priority_step_ms: Optional[int] = None
    deadline_horizon_ms: Optional[int] = None
    fairness_lag_slots: Optional[int] = None
    preemption_margin_points: Optional[int] = None
    default_estimate_ms: Optional[int] = None
    _core: Any = field(init=False, repr=False, compare=False, hash=False, default=None)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_core", self._to_core())

    def _to_core(self) -> Any:
        # The reference knobs' mapping and every refusal are the core's
        # (``scheduler::reference::map_reference_policy``).
        step, horizon, margin, lag_slots, lag_pass = _native.scheduler_reference_policy(
            aging_interval=self.aging_interval,
            deadline_horizon=self.deadline_horizon,
            priority_weight=self.priority_weight,
            deadline_weight=self.deadline_weight,
            aging_weight=self.aging_weight,
            fairness_weight=self.fairness_weight,
            quota_pressure_weight=self.quota_pressure_weight,
            estimate_weight=self.estimate_weight,
            preemption_margin=self.preemption_margin,
            priority_step_ms=self.priority_step_ms,
            deadline_horizon_ms=self.deadline_horizon_ms,
            preemption_margin_points=self.preemption_margin_points,
            fairness_lag_slots=self.fairness_lag_slots,
        )
        groups = {}
        for group_id, group in dict(self.groups).items():
            if not isinstance(group, GroupSchedulingPolicy):
                raise _bad(f"groups[{group_id!r}] must be a GroupSchedulingPolicy")
            groups[group_id] = group._core
        if not isinstance(self.default_group, GroupSchedulingPolicy):
            raise _bad("default_group must be a GroupSchedulingPolicy")
        supported = self.supported_capabilities
        return _native.SchedulerPolicy(
            capacity_slots=self.capacity_slots,
            groups=groups,
            default_group=self.default_group._core,
            supported_capabilities=None
            if supported is None
            else [_capability(c, "supported_capabilities") for c in supported],
            allowed_groups=None if self.allowed_groups is None else list(self.allowed_groups),
            max_work_items=self.max_work_items,
            max_work_items_per_group=self.max_work_items_per_group,
            decline_infeasible_deadlines=self.decline_infeasible_deadlines,
            priority_step_ms=step,
            deadline_horizon_ms=horizon,
            fairness_lag_slots=lag_slots,
            preemption_margin=margin,
            default_estimate_ms=self.default_estimate_ms,
            fairness_lag_pass=lag_pass,
        )

    @property
    def core_policy(self) -> Any:
        """The Rust core's policy this maps onto (``priority_step_ms``, ``preemption_margin``
        in priority points, …), to inspect the mapping."""
        return self._core

    def horizon_ms(self) -> int:
        """H: the most an item's key moves for priority and deadline (the starvation bound)."""
        return int(self._core.horizon_ms())


def _offer(offer: Any) -> Any:
    return offer._core if isinstance(offer, WorkOffer) else offer


# The reference's report kinds that this package names differently.
_KIND_ALIASES = {"preemption_failed": "preemption_declined", "preempted": "checkpoint_saved"}


def _checkpoint(value: Any) -> Any:
    """A ``CheckpointRef``, or the reference's checkpoint record (any object or mapping with
    ``checkpoint_id`` and optional ``durable``/``safe``, default ``True``)."""
    if value is None or isinstance(value, CheckpointRef):
        return value

    def read(name: str, default: Any) -> Any:
        if isinstance(value, Mapping):
            return value.get(name, value.get("checkpointId" if name == "checkpoint_id" else name, default))
        return getattr(value, name, default)

    return CheckpointRef(read("checkpoint_id", None), durable=read("durable", True), safe=read("safe", True))


@dataclass(frozen=True)
class WorkTransition:
    """A Worker's report about a running item. The reference's fields first —
    ``WorkTransition(work_id, kind, run_id=None, checkpoint=None, retry_at=None, reason=None)``
    — then ``generation`` (this package's; either it or ``run_id`` names the run:
    ``run_id`` is ``"<work_id>:<generation>"`` as :attr:`Dispatch.run_id` gives).

    Kinds: this package's :class:`TransitionKind` (``checkpoint_saved``,
    ``preemption_declined``, ``blocked``, ``released``, ``completed``, ``failed``) and the
    reference's ``preempted`` (a ``checkpoint_saved`` report while preemption was requested;
    refused in any other state), ``preemption_failed`` (= ``preemption_declined``) and
    ``cancelled`` (the item leaves the Scheduler, as :meth:`Scheduler.cancel`). ``checkpoint``
    is a :class:`CheckpointRef` or the reference's checkpoint record."""

    work_id: str
    kind: Union[TransitionKind, str]
    run_id: Optional[str] = None
    checkpoint: Optional[Any] = None
    retry_at: Optional[datetime] = None
    reason: Optional[str] = None
    generation: Optional[int] = None
    _core: Any = field(init=False, repr=False, compare=False, hash=False, default=None)

    def __post_init__(self) -> None:
        kind = str(getattr(self.kind, "value", self.kind))
        generation = self.generation
        if self.run_id is not None:
            named = _native.scheduler_run_generation(str(self.work_id), str(self.run_id))
            if named is None:
                raise _bad(f"run_id {self.run_id!r} is not '<work_id>:<generation>' of {self.work_id!r}")
            if generation is not None and generation != named:
                raise _bad("run_id and generation name different runs")
            generation = named
        if kind == "cancelled":
            return
        if generation is None:
            raise _bad("a transition names its run: give run_id or generation")
        core = _native.WorkTransition(
            self.work_id,
            _KIND_ALIASES.get(kind, kind),
            generation=generation,
            checkpoint=_checkpoint(self.checkpoint),
            retry_at=self.retry_at,
            reason=self.reason,
        )
        object.__setattr__(self, "_core", core)


class Scheduler:
    """``Scheduler(policy=None, *, clock=utc_now)``. Every time-dependent call takes
    ``now``; ``now=None`` reads ``clock()`` (a timezone-aware datetime; naive ones raise
    :class:`InvalidInputError`). The decisions are the core's; this class converts."""

    __slots__ = ("_core", "_policy", "_clock")

    def __init__(self, policy: Optional[SchedulerPolicy] = None, *, clock: Clock = _utc_now) -> None:
        self._policy = policy if policy is not None else SchedulerPolicy()
        if not isinstance(self._policy, SchedulerPolicy):
            raise _bad("policy must be a SchedulerPolicy")
        self._clock = clock
        self._core: "_CoreScheduler" = _native.Scheduler(self._policy._core)

    def _now(self, now: Optional[datetime]) -> datetime:
        return self._clock() if now is None else now

    @classmethod
    def rebuild(
        cls,
        source: Union[SchedulerSnapshot, Mapping[str, Any], Iterable[WorkOffer]],
        policy: Optional[SchedulerPolicy] = None,
        *,
        clock: Clock = _utc_now,
        now: Optional[datetime] = None,
        exact: bool = False,
    ) -> "Scheduler":
        """A Scheduler from a snapshot (or its ``to_dict`` form) or from offers.

        From a snapshot, as in the reference, the runtime is taken as lost at ``now``
        (``clock()`` if omitted): running and preempting work resumes from a durable, safe
        checkpoint or waits blocked (``runtime-session-lost``). ``exact=True`` restores the
        snapshot as it was. From an iterable of :class:`WorkOffer`, each is admitted at
        ``now``; a declined offer raises :class:`SchedulerError` (``offer_declined``) and
        nothing is rebuilt. No offers at all (``[]``) and any other source (``None``, a number,
        JSON text) are :class:`InvalidInputError` naming ``source``: a rebuild that restores
        nothing is refused (an empty Scheduler is ``Scheduler(policy)``). The
        core decides all of it (``Scheduler::from_offers``, the binding's conversion)."""
        scheduler = cls(policy, clock=clock)
        scheduler._core = _native.Scheduler.rebuild(
            source, scheduler._policy._core, now=scheduler._now(now), exact=exact
        )
        return scheduler

    @property
    def policy(self) -> SchedulerPolicy:
        return self._policy

    @property
    def clock(self) -> Clock:
        return self._clock

    @property
    def used_slots(self) -> int:
        return self._core.used_slots

    @property
    def capacity_slots(self) -> int:
        return self._core.capacity_slots

    def admit(self, offer: WorkOffer, *, now: Optional[datetime] = None) -> AdmissionDecision:
        return self._core.admit(_offer(offer), now=self._now(now))

    def admit_many(
        self, offers: Iterable[WorkOffer], *, now: Optional[datetime] = None
    ) -> List[AdmissionDecision]:
        # The core reads the iterable (a non-iterable is InvalidInputError, not a TypeError).
        return self._core.admit_many(offers, now=self._now(now))

    def schedule(self, *, now: Optional[datetime] = None) -> Tuple[ScheduleAction, ...]:
        return self._core.schedule(now=self._now(now))

    def apply(self, transition: WorkTransition, *, now: Optional[datetime] = None) -> None:
        """Applies a Worker report (see :class:`WorkTransition` for the kinds)."""
        if not isinstance(transition, WorkTransition):
            self._core.apply(transition, now=self._now(now))
            return
        kind = str(getattr(transition.kind, "value", transition.kind))
        if kind == "cancelled":
            self._core.cancel(transition.work_id)
            return
        if kind == "preempted" and self._core.state(transition.work_id) is not WorkState.PREEMPTING:
            raise SchedulerStateError(
                f"{transition.work_id!r} was not asked to yield",
                code="INVALID_STATE_TRANSITION",
                kind="invalid_transition",
            )
        self._core.apply(transition._core, now=self._now(now))

    def apply_many(
        self, transitions: Iterable[WorkTransition], *, now: Optional[datetime] = None
    ) -> None:
        """Applies a batch in order; plain reports cross into the core in one call."""
        batch = list(transitions)
        when = self._now(now)
        if all(isinstance(t, WorkTransition) and t._core is not None
               and str(getattr(t.kind, "value", t.kind)) != "preempted" for t in batch):
            self._core.apply_many([t._core for t in batch], now=when)
            return
        for transition in batch:
            self.apply(transition, now=when)

    def unblock(self, work_id: str, *, now: Optional[datetime] = None) -> None:
        self._core.unblock(work_id, now=self._now(now))

    def cancel(self, work_id: str) -> None:
        self._core.cancel(work_id)

    def reprioritize(self, work_id: str, organizational_priority: int) -> None:
        self._core.reprioritize(work_id, organizational_priority)

    def set_capacity(self, capacity_slots: int) -> None:
        self._core.set_capacity(capacity_slots)

    def set_group_policy(self, group_id: str, policy: GroupSchedulingPolicy) -> None:
        if not isinstance(policy, GroupSchedulingPolicy):
            raise _bad("policy must be a GroupSchedulingPolicy")
        self._core.set_group_policy(group_id, policy._core)

    def state(self, work_id: str) -> Optional[WorkState]:
        return self._core.state(work_id)

    def generation(self, work_id: str) -> Optional[int]:
        return self._core.generation(work_id)

    def is_terminal(self, work_id: str) -> bool:
        return self._core.is_terminal(work_id)

    def forget(self, work_id: str) -> bool:
        return self._core.forget(work_id)

    def disclose(
        self, work_id: str, *, now: Optional[datetime] = None
    ) -> Optional[ScheduleDisclosure]:
        return self._core.disclose(work_id, now=self._now(now))

    def snapshot(self) -> SchedulerSnapshot:
        return self._core.snapshot()

    def __len__(self) -> int:
        return len(self._core)


__all__ = [
    "AdmissionDecision",
    "AdmissionReason",
    "CapabilityRef",
    "CapacityStatus",
    "CheckpointRef",
    "Clock",
    "Confidence",
    "Dispatch",
    "EFFORT_UNIT_MS",
    "EstimateBand",
    "GroupSchedulingPolicy",
    "Preempt",
    "ScheduleAction",
    "ScheduleDisclosure",
    "Scheduler",
    "SchedulerError",
    "SchedulerPolicy",
    "SchedulerSnapshot",
    "SchedulerStateError",
    "SchedulingEstimate",
    "TransitionKind",
    "WorkOffer",
    "WorkState",
    "WorkTransition",
]
