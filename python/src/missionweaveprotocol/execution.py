"""Bounded retries and side-effect idempotency keys (§11.4).

A :class:`RetryController` enforces one WorkItem's retry policy (:class:`RetryPolicy`, or
``RetryPolicy.from_dict`` of a Work Contract's ``retryPolicy``), deadline and cost budget under
one Ownership Epoch: ``begin(op, now=...)`` → :class:`Attempt`, ``consume(usage)``,
``finish(success=..., now=...)`` → :class:`RetrySchedule`. Exponential backoff waits
``min(max_delay, initial_delay · 2^(n−1))``. Every attempt of a logical operation presents the
same :func:`idempotency_key` = ``canonical_hash({missionId, workItemId, ownershipEpoch,
logicalOperationId})``; a new Ownership Epoch gives a new key.

:class:`RetryExhausted` (a :class:`PolicyError`) ends the loop for good; other refusals are
:class:`PolicyError` (``BUDGET_EXCEEDED`` with ``dimension`` for the cost budget).
"""

from __future__ import annotations

from ._native import (
    Attempt,
    ResourceUsage,
    RetryController,
    RetryPolicy,
    RetrySchedule,
    derived_attempt_key,
    idempotency_key,
    parse_duration_ms,
)
from ._types import Backoff, RetryReason
from .errors import PolicyError, RetryExhausted

__all__ = [
    "Attempt",
    "Backoff",
    "PolicyError",
    "ResourceUsage",
    "RetryController",
    "RetryExhausted",
    "RetryPolicy",
    "RetryReason",
    "RetrySchedule",
    "derived_attempt_key",
    "idempotency_key",
    "parse_duration_ms",
]
