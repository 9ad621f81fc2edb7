"""Bounded retries and side-effect idempotency keys (§11.4).

A :class:`RetryController` enforces one WorkItem's retry policy, deadline and cost budget under
one Ownership Epoch; the rules run in the Rust core. ``begin(op)`` → :class:`Attempt`,
``consume(usage)``, ``finish(success=...)`` → :class:`RetrySchedule`. Exponential backoff
waits ``min(max_delay, initial_delay · 2^(n−1))``. Every attempt of a logical operation
presents the same :func:`idempotency_key` = ``canonical_hash({missionId, workItemId,
ownershipEpoch, logicalOperationId})``; a new Ownership Epoch gives a new key.

Two call shapes:

- **The reference's**: ``RetryController(contract, *, mission_id, work_item_id,
  ownership_epoch, clock=None)``. ``contract`` is any object or mapping (snake_case or
  camelCase) with ``retry_policy`` (``max_attempts``, ``initial_backoff_seconds``,
  ``maximum_backoff_seconds``: exponential backoff in whole seconds; unset members take the
  reference's defaults 1, 0, 0), ``deadline`` (optional) and ``budget`` (the six dimensions,
  ``None`` = 0: an unset dimension allows nothing, as the reference's meter); a wire Work
  Contract mapping whose ``retryPolicy`` has ``backoff``/``maxDelay`` is read by
  :meth:`RetryPolicy.from_dict`. ``now`` arguments are optional and default to ``clock()``
  (UTC now).
- **This package's**: ``RetryController(policy, *, mission_id, work_item_id, ownership_epoch,
  cost_budget, deadline=None)`` with a :class:`RetryPolicy`.

``begin(op, *, reserved_usage=None)``: the reference's reserved usage is charged when the
attempt begins; if it does not fit the budget, the attempt ends at once and the loop is over
(:class:`RetryExhausted`, kind ``budget_exhausted``). ``finish(*, success, retryable=True)``
as in the reference, plus ``code`` (a failure code outside the policy's
``retryable_failures`` is permanent).

:class:`RetryExhausted` (a :class:`PolicyError`) ends the loop for good; other refusals are
:class:`PolicyError` (``BUDGET_EXCEEDED`` with ``dimension`` for the cost budget). Both are
``ValueError``\\s, as the reference's.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

from . import _native
from ._native import (
    ResourceUsage,
    RetryPolicy,
    derived_attempt_key,
    idempotency_key,
    parse_duration_ms,
)
from ._types import Backoff, RetryReason
from .errors import PolicyError, RetryExhausted

Clock = Callable[[], datetime]
_DIMENSIONS = (
    "financial_microunits",
    "model_tokens",
    "tool_calls",
    "compute_seconds",
    "wall_clock_seconds",
    "external_actions",
)
_MISSING = object()


@dataclass(frozen=True)
class Attempt:
    """One started attempt: the reference's fields, then this package's per-attempt key."""

    attempt_number: int
    idempotency_key: str
    started_at: datetime
    attempt_key: str = ""


@dataclass(frozen=True)
class RetrySchedule:
    """Whether and when to retry, and why (:class:`RetryReason`)."""

    retry: bool
    retry_at: Optional[datetime]
    reason: RetryReason


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _read(obj: Any, name: str, default: Any = None) -> Any:
    for key in (name, _camel(name)):
        if isinstance(obj, Mapping):
            if key in obj:
                return obj[key]
        elif hasattr(obj, key):
            return getattr(obj, key)
    return default


def _usage(value: Any) -> ResourceUsage:
    if value is None:
        return ResourceUsage()
    if isinstance(value, ResourceUsage):
        return value
    return ResourceUsage(**{name: _read(value, name) or 0 for name in _DIMENSIONS})


def _seconds_ms(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise PolicyError(f"{what} must be a non-negative number of seconds", kind="invalid_argument",
                          code="INVALID_COMMAND")
    ms = value * 1000
    if ms != int(ms):
        raise PolicyError(f"{what} must be a whole number of milliseconds", kind="invalid_argument",
                          code="INVALID_COMMAND")
    return int(ms)


def _contract_policy(contract: Any) -> RetryPolicy:
    """The core's policy for a reference WorkContract (or a wire Work Contract mapping)."""
    policy = _read(contract, "retry_policy")
    if isinstance(policy, RetryPolicy):
        return policy
    if isinstance(policy, Mapping) and "backoff" in policy:
        return RetryPolicy.from_dict(policy)
    if policy is None:
        policy = {}
    return RetryPolicy(
        max_attempts=_read(policy, "max_attempts", 1),
        backoff=Backoff.EXPONENTIAL,
        initial_delay_ms=_seconds_ms(_read(policy, "initial_backoff_seconds", 0), "initial_backoff_seconds"),
        max_delay_ms=_seconds_ms(_read(policy, "maximum_backoff_seconds", 0), "maximum_backoff_seconds"),
    )


class RetryController:
    """One WorkItem's retry loop; see the module documentation for both call shapes."""

    __slots__ = ("_core", "_clock")

    def __init__(
        self,
        contract: Any,
        *,
        mission_id: str,
        work_item_id: str,
        ownership_epoch: int,
        clock: Optional[Clock] = None,
        cost_budget: Any = _MISSING,
        deadline: Any = _MISSING,
    ) -> None:
        self._clock: Clock = clock if clock is not None else _utc_now
        if isinstance(contract, RetryPolicy):
            if cost_budget is _MISSING:
                raise TypeError("RetryController(policy, ...) needs cost_budget")
            policy, budget = contract, cost_budget
            end = None if deadline is _MISSING else deadline
        else:
            if cost_budget is not _MISSING or deadline is not _MISSING:
                raise TypeError("cost_budget and deadline come from the contract")
            policy = _contract_policy(contract)
            budget = _usage(_read(contract, "budget"))
            end = _read(contract, "deadline")
        self._core = _native.RetryController(
            policy,
            mission_id=mission_id,
            work_item_id=work_item_id,
            ownership_epoch=ownership_epoch,
            cost_budget=budget,
            deadline=end,
        )

    def _now(self, now: Optional[datetime]) -> datetime:
        return self._clock() if now is None else now

    @property
    def attempts(self) -> int:
        """Attempts started so far."""
        return self._core.attempts

    @property
    def usage(self) -> ResourceUsage:
        """Cumulative cost charged so far."""
        return self._core.usage

    @property
    def finished(self) -> Optional[RetryReason]:
        """The final reason once the loop ended, else ``None``."""
        return self._core.finished

    def idempotency_key(self, logical_operation_id: str) -> str:
        """This WorkItem's idempotency key for ``logical_operation_id``."""
        return self._core.idempotency_key(logical_operation_id)

    def begin(
        self,
        logical_operation_id: str,
        *,
        reserved_usage: Optional[Any] = None,
        now: Optional[datetime] = None,
    ) -> Attempt:
        """Starts the next attempt (``RetryExhausted`` once the loop is over; ``PolicyError``
        ``backoff_pending`` or ``attempt_in_flight`` otherwise)."""
        when = self._now(now)
        attempt = self._core.begin(logical_operation_id, now=when)
        if reserved_usage is not None:
            try:
                self._core.consume(_usage(reserved_usage))
            except PolicyError as error:
                self._core.finish(success=False, retryable=False, now=when)
                raise RetryExhausted(
                    f"the reserved usage does not fit the budget: {error}",
                    kind="budget_exhausted",
                    code=str(error.code),
                    dimension=error.dimension,
                ) from error
        return Attempt(attempt.attempt_number, attempt.idempotency_key, attempt.started_at,
                       attempt.attempt_key)

    def consume(self, usage: Any) -> ResourceUsage:
        """Charges attempt cost atomically; returns the cumulative usage."""
        return self._core.consume(_usage(usage))

    def finish(
        self,
        *,
        success: bool,
        retryable: bool = True,
        now: Optional[datetime] = None,
        code: Optional[str] = None,
    ) -> RetrySchedule:
        """Ends the running attempt and decides whether to retry."""
        schedule = self._core.finish(success=success, retryable=retryable, now=self._now(now), code=code)
        return RetrySchedule(schedule.retry, schedule.retry_at, schedule.reason)

    # ---- this package's extension (the reference has no snapshot) ------------------------

    def snapshot(self) -> Dict[str, Any]:
        """The whole state as a versioned JSON object: policy, deadline, cost budget, attempts,
        usage, backoff, final reason and the attempt in flight, with an ``integrity`` checksum.
        Persist it to keep the retry bounds across a Worker restart (§11.4). An extension:
        the reference runtime has no such method."""
        document: Dict[str, Any] = self._core.snapshot()
        return document

    @classmethod
    def restore(cls, snapshot: Any, *, clock: Optional[Clock] = None) -> "RetryController":
        """A controller in exactly the state of :meth:`snapshot`'s object (or its JSON bytes or
        text). A malformed, other-version, tampered (``integrity``) or unreachable state (more
        attempts than allowed, usage over budget, an inconsistent attempt in flight) is refused
        with :class:`~missionweaveprotocol.errors.SnapshotError` (``INTERNAL_ERROR``)."""
        controller = cls.__new__(cls)
        controller._clock = clock if clock is not None else _utc_now
        controller._core = _native.RetryController.restore(snapshot)
        return controller

    @property
    def current_attempt(self) -> Optional[Tuple[str, datetime]]:
        """The attempt in flight as ``(logical_operation_id, started_at)``, else ``None``."""
        return self._core.current_attempt

    def __repr__(self) -> str:
        return f"RetryController(attempts={self.attempts})"


__all__ = [
    "Attempt",
    "Backoff",
    "Clock",
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
