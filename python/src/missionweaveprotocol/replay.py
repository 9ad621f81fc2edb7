"""Durable Agent-side replay into local projections (reference ``replay.py``; §16).

:class:`AgentReplay` asks a :class:`ReplaySource` for each Group's Events after the durable
cursor, checks each one (right Group, ``sequence == cursor + 1``, an Event ID never moves),
awaits the :class:`EventProjector`, admits the projected offers to the Worker's Scheduler and
commits. The rules, the admission rollback and the atomic commit are the Rust core's
(``replay::GroupReplay``).

Differences from the reference, on purpose: Events commit in batches, each batch's inbox rows,
cursor and Scheduler snapshot in one transaction (the reference commits per Event and saves the
Scheduler separately, so a crash between the two lost or doubled admissions); when an Event
fails, the Events before it stay committed and the Scheduler holds exactly their offers; the
source is asked again after each page that brought new Events, so a source that pages (e.g. a
server capped at 1,000 Events) is replayed to its end.

An extension the reference lacks (§16 ``CURSOR_TOO_OLD``): a source whose log no longer holds
the cursor's position answers a :class:`ReplaySnapshot` instead of Events; the replay restores
it (its offers admitted, the cursor moved to its ``through_sequence``, its hash recorded, in one
commit) and asks the source again after it.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Awaitable, Dict, Iterable, Optional, Protocol, Sequence, Tuple, Union

from . import _native
from ._native import AdmissionDecision
from .errors import MissionWeaveError
# The shared error model's classes (the core's `ErrorClass::Replay*`), re-exported here.
from .errors import ReplayError, ReplayGroupError, ReplayProjectionError, ReplaySequenceError
from .local_store import SQLiteAgentStore
from .models import Event
from .scheduler import Clock, Scheduler, SchedulerPolicy, WorkOffer, _offer, _utc_now

__all__ = [
    "AgentReplay",
    "EventProjection",
    "EventProjector",
    "GroupReplayResult",
    "ReplayError",
    "ReplayGroupError",
    "ReplayProjectionError",
    "ReplaySequenceError",
    "ReplaySnapshot",
    "ReplaySource",
]




@dataclass(frozen=True)
class EventProjection:
    work_offers: Tuple[WorkOffer, ...] = ()


@dataclass(frozen=True)
class GroupReplayResult:
    group_id: str
    start_cursor: int
    end_cursor: int
    applied_events: int
    duplicate_events: int
    admissions: Tuple[AdmissionDecision, ...]


@dataclass(frozen=True)
class ReplaySnapshot:
    """A verified Group snapshot a source answers for a cursor older than its online log
    (§16 ``CURSOR_TOO_OLD``): its Artifact hash, the last sequence it covers and its projection
    for this Worker (the offers live at ``through_sequence``). The source verifies the
    snapshot's hash and signature before answering it."""

    artifact_hash: str
    through_sequence: int
    projection: EventProjection = EventProjection()


class ReplaySource(Protocol):
    def __call__(
        self, group_id: str, *, after: int
    ) -> Awaitable[Union[Sequence[Event], ReplaySnapshot]]: ...


class EventProjector(Protocol):
    def __call__(self, event: Event) -> Awaitable[Optional[EventProjection]]: ...


async def _resolve(value: object) -> object:
    return await value if inspect.isawaitable(value) else value


class AgentReplay:
    """Reconciles Groups for ``agent_id`` into ``store`` and the Worker's Scheduler.

    Without ``scheduler``, the Scheduler is rebuilt from the store's snapshot (running work
    resumes from a safe checkpoint or waits blocked) or created under ``scheduler_policy``."""

    def __init__(
        self,
        agent_id: str,
        store: SQLiteAgentStore,
        replay_source: ReplaySource,
        projector: EventProjector,
        *,
        scheduler: Optional[Scheduler] = None,
        scheduler_policy: Optional[SchedulerPolicy] = None,
        clock: Clock = _utc_now,
    ) -> None:
        if not isinstance(agent_id, str) or not agent_id:
            raise ValueError("agent_id must be a non-empty string")
        if scheduler is not None and scheduler_policy is not None:
            raise ValueError("give scheduler or scheduler_policy, not both")
        if scheduler is None:
            snapshot = store.load_scheduler(agent_id)
            if snapshot is not None:
                scheduler = Scheduler.rebuild(snapshot, scheduler_policy, clock=clock)
            else:
                scheduler = Scheduler(scheduler_policy, clock=clock)
        self._agent_id = agent_id
        self._store = store
        self._source = replay_source
        self._projector = projector
        self._scheduler = scheduler
        self._clock = clock

    @property
    def scheduler(self) -> Scheduler:
        return self._scheduler

    async def reconcile(self, groups: Union[str, Iterable[str]]) -> Dict[str, GroupReplayResult]:
        """Reconciles each Group (a repeated ID once, in order)."""
        names = [groups] if isinstance(groups, str) else list(groups)
        results: Dict[str, GroupReplayResult] = {}
        for group_id in dict.fromkeys(names):
            results[group_id] = await self._reconcile_group(group_id)
        return results

    async def _reconcile_group(self, group_id: str) -> GroupReplayResult:
        replay = _native.GroupReplay(self._store._native, self._agent_id, group_id)
        core = self._scheduler._core
        while True:
            new = 0
            try:
                events = await _resolve(self._source(group_id, after=replay.cursor))
                if isinstance(events, ReplaySnapshot):
                    restored = [_offer(o) for o in events.projection.work_offers]
                    replay.install_snapshot(
                        core,
                        events.artifact_hash,
                        events.through_sequence,
                        restored,
                        now=self._clock(),
                    )
                    continue
                for event in events:  # type: ignore[attr-defined]
                    group = event.group_id if event.group_id is not None else ""
                    sequence = event.sequence if event.sequence is not None else 0
                    if not replay.check(event.id, group, sequence):
                        continue
                    projection = await _resolve(self._projector(event))
                    offers = (
                        [_offer(o) for o in projection.work_offers]  # type: ignore[attr-defined]
                        if projection is not None
                        else None
                    )
                    replay.apply(core, event.id, sequence, offers, now=self._clock())
                    new += 1
                    # The core decides when a batch is full (`replay::batch_limit`).
                    if replay.batch_full(len(self._scheduler)):
                        replay.commit(core)
            except BaseException:
                # Keep the progress before the failing Event, then report the failure.
                try:
                    replay.commit(core)
                except MissionWeaveError:
                    pass
                raise
            if new == 0:
                replay.commit(core)
                break
        start, end, applied, duplicates, admissions = replay.result()
        return GroupReplayResult(group_id, start, end, applied, duplicates, tuple(admissions))
