"""RetryController in the reference's call shape: ``RetryController(contract, *, mission_id,
work_item_id, ownership_epoch, clock=None)``, ``begin(op, *, reserved_usage=None)``,
``finish(*, success, retryable=True)``, frozen-dataclass Attempt and RetrySchedule."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import List, Optional

import pytest

from missionweaveprotocol.execution import (
    Attempt,
    PolicyError,
    ResourceUsage,
    RetryController,
    RetryExhausted,
    RetryReason,
    RetrySchedule,
    idempotency_key,
)

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)


@dataclass
class RetryPolicy:  # the reference's WorkContract.retry_policy
    max_attempts: int = 1
    initial_backoff_seconds: int = 0
    maximum_backoff_seconds: int = 0


@dataclass
class Budget:
    financial_microunits: Optional[int] = None
    model_tokens: Optional[int] = None
    tool_calls: Optional[int] = None
    compute_seconds: Optional[int] = None
    wall_clock_seconds: Optional[int] = None
    external_actions: Optional[int] = None


@dataclass
class Contract:
    deadline: datetime = T0 + timedelta(hours=1)
    budget: Budget = field(default_factory=lambda: Budget(tool_calls=5))
    retry_policy: RetryPolicy = field(default_factory=lambda: RetryPolicy(4, 1, 3))


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


def controller(contract: Contract, clock: Clock, epoch: int = 2) -> RetryController:
    return RetryController(contract, mission_id="urn:m:1", work_item_id="urn:w:1",
                           ownership_epoch=epoch, clock=clock)


def test_attempts_backoff_and_a_stable_side_effect_key() -> None:
    clock = Clock()
    c = controller(Contract(), clock)
    first = c.begin("send")
    assert dataclasses.is_dataclass(first) and isinstance(first, Attempt)
    assert (first.attempt_number, first.started_at) == (1, T0)
    assert first.idempotency_key == idempotency_key("urn:m:1", "urn:w:1", 2, "send")
    delays: List[timedelta] = []
    for _ in range(3):
        schedule = c.finish(success=False)
        assert isinstance(schedule, RetrySchedule) and schedule.retry
        assert schedule.reason is RetryReason.RETRYABLE_FAILURE and schedule.retry_at is not None
        delays.append(schedule.retry_at - clock.now)
        clock.now = schedule.retry_at
        assert c.begin("send").idempotency_key == first.idempotency_key
    assert delays == [timedelta(seconds=1), timedelta(seconds=2), timedelta(seconds=3)]
    last = c.finish(success=False)
    assert (last.retry, last.reason) == (False, RetryReason.ATTEMPTS_EXHAUSTED)
    with pytest.raises(RetryExhausted):
        c.begin("send")
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.attempt_number = 9  # type: ignore[misc]


def test_ownership_epoch_changes_the_idempotency_scope() -> None:
    clock = Clock()
    assert controller(Contract(), clock, 2).begin("op").idempotency_key != \
        controller(Contract(), clock, 3).begin("op").idempotency_key


def test_stops_at_budget_and_deadline() -> None:
    clock = Clock()
    c = controller(Contract(), clock)
    c.begin("op", reserved_usage=Budget(tool_calls=4))
    assert c.usage == ResourceUsage(tool_calls=4)
    with pytest.raises(PolicyError) as info:
        c.consume(Budget(tool_calls=2))
    assert (info.value.code, info.value.dimension) == ("BUDGET_EXCEEDED", "tool_calls")
    with pytest.raises(PolicyError) as unset:
        c.consume(Budget(model_tokens=1))  # an unset dimension allows nothing
    assert unset.value.dimension == "model_tokens"
    assert c.finish(success=True).reason is RetryReason.COMPLETED
    reserved = controller(Contract(), clock)
    with pytest.raises(RetryExhausted) as exhausted:
        reserved.begin("op", reserved_usage=ResourceUsage(tool_calls=6))
    assert exhausted.value.kind == "budget_exhausted" and exhausted.value.dimension == "tool_calls"
    assert reserved.finished is RetryReason.PERMANENT_FAILURE and reserved.usage == ResourceUsage()
    late = controller(Contract(deadline=T0), clock)
    with pytest.raises(RetryExhausted) as deadline:
        late.begin("op")
    assert deadline.value.kind == "deadline_exhausted"


def test_permanent_failure_and_defaults() -> None:
    clock = Clock()
    c = controller(Contract(retry_policy=RetryPolicy()), clock)  # one attempt, no backoff
    c.begin("op")
    assert c.finish(success=False, retryable=False).reason is RetryReason.PERMANENT_FAILURE
    c = RetryController({"retryPolicy": {"maxAttempts": 2}},
                        mission_id="urn:m:1", work_item_id="urn:w:1", ownership_epoch=1)
    c.begin("op", now=T0)
    schedule = c.finish(success=False, now=T0)
    assert schedule.retry_at == T0, "both backoffs default to 0"
    with pytest.raises(PolicyError):  # the maximum backoff may not be below the initial one
        RetryController({"retryPolicy": {"maxAttempts": 2, "initialBackoffSeconds": 5}},
                        mission_id="urn:m:1", work_item_id="urn:w:1", ownership_epoch=1)


def test_wire_contract_and_bad_shapes() -> None:
    wire = {"retryPolicy": {"maxAttempts": 2, "backoff": "fixed", "maxDelay": "PT2S",
                            "retryableFailures": ["TIMEOUT"]},
            "budget": {"toolCalls": 1}}
    c = RetryController(wire, mission_id="urn:m:1", work_item_id="urn:w:1", ownership_epoch=1,
                        clock=Clock())
    c.begin("op")
    assert c.finish(success=False, code="TIMEOUT").retry_at == T0 + timedelta(seconds=2)
    with pytest.raises(PolicyError):
        controller(Contract(retry_policy=RetryPolicy(2, -1, 3)), Clock())
    with pytest.raises(PolicyError):
        controller(Contract(retry_policy=RetryPolicy(2, 0.0001, 3)), Clock())  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        RetryController(Contract(), mission_id="urn:m:1", work_item_id="urn:w:1",
                        ownership_epoch=1, cost_budget=ResourceUsage())
