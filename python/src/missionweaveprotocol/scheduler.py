"""The Worker-local weighted-fair Scheduler (§10.3 admission, §11.1 per-Group queues, §11.2
disclosure, §11.3 cooperative preemption, §11.4 blocking and retries).

Content-free: it sees IDs, Groups, priorities, deadlines, estimates, slots and capabilities,
never goals or data. Each Group queue is ordered by a fixed "virtual ready time" key (aging
needs no rescoring); Groups share slots by stride scheduling with weights and quotas; a
multi-slot head reserves slots; preemption is only requested, and a slot is taken back only
after a durable, safe checkpoint. Every operation is O(log n); the starvation bound is in the
Rust module documentation (``missionweaveprotocol::scheduler``).

Sans-IO: every time-dependent call takes ``now`` (a timezone-aware datetime; naive ones raise
:class:`InvalidInputError`). ``schedule(now=...)`` returns a tuple of :class:`Dispatch` and at
most one :class:`Preempt`; the Worker reports back with :class:`WorkTransition`
(``generation`` from the Dispatch). ``snapshot()`` → ``Scheduler.rebuild(snapshot, policy)``
restores exactly; ``rebuild(..., now=...)`` treats the runtime as lost (§11.3). Bulk
``admit_many``/``apply_many`` take whole batches in one call.

State errors raise :class:`SchedulerStateError` (stale run → ``WORK_LEASE_EXPIRED``, wrong
state → ``INVALID_STATE_TRANSITION``); bad arguments, unsafe checkpoints and corrupt snapshots
raise :class:`SchedulerError`.
"""

from __future__ import annotations

from typing import Union

from ._native import (
    AdmissionDecision,
    CapabilityRef,
    CheckpointRef,
    Dispatch,
    GroupSchedulingPolicy,
    Preempt,
    ScheduleDisclosure,
    Scheduler,
    SchedulerPolicy,
    SchedulerSnapshot,
    WorkOffer,
    WorkTransition,
)
from ._types import (
    AdmissionReason,
    CapacityStatus,
    Confidence,
    TransitionKind,
    WorkState,
)
from .errors import SchedulerError, SchedulerStateError

ScheduleAction = Union[Dispatch, Preempt]

__all__ = [
    "AdmissionDecision",
    "AdmissionReason",
    "CapabilityRef",
    "CapacityStatus",
    "CheckpointRef",
    "Confidence",
    "Dispatch",
    "GroupSchedulingPolicy",
    "Preempt",
    "ScheduleAction",
    "ScheduleDisclosure",
    "Scheduler",
    "SchedulerError",
    "SchedulerPolicy",
    "SchedulerSnapshot",
    "SchedulerStateError",
    "TransitionKind",
    "WorkOffer",
    "WorkState",
    "WorkTransition",
]
