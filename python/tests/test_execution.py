"""Retries and idempotency keys through Python, cross-checked with hashlib + canonical JSON."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta, timezone

import pytest

from missionweaveprotocol.execution import (
    Backoff,
    PolicyError,
    ResourceUsage,
    RetryController,
    RetryExhausted,
    RetryPolicy,
    RetryReason,
    derived_attempt_key,
    idempotency_key,
    parse_duration_ms,
)
from missionweaveprotocol.errors import InvalidInputError

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)


def at(ms: int) -> datetime:
    return T0 + timedelta(milliseconds=ms)


def canonical_hash(value: object) -> str:
    """RFC 8785 for string/int-only objects: sorted keys, no spaces, UTF-8."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def policy(**kw: object) -> RetryPolicy:
    args: dict[str, object] = dict(max_attempts=3, backoff="exponential", max_delay_ms=5000,
                                   initial_delay_ms=1000, retryable_failures=["TIMEOUT"])
    args.update(kw)
    return RetryPolicy(**args)  # type: ignore[arg-type]


def controller(p: RetryPolicy, **kw: object) -> RetryController:
    args: dict[str, object] = dict(mission_id="urn:uuid:m1", work_item_id="urn:uuid:w1",
                                   ownership_epoch=3, cost_budget=ResourceUsage.splat(100))
    args.update(kw)
    return RetryController(p, **args)  # type: ignore[arg-type]


@pytest.mark.parametrize("op", ["send-email", "naïve \"quoted\" op", "x"])
def test_idempotency_key_equals_hashlib_over_canonical_json(op: str) -> None:
    expected = canonical_hash({"missionId": "urn:uuid:m1", "workItemId": "urn:uuid:w1",
                               "ownershipEpoch": 3, "logicalOperationId": op})
    assert idempotency_key("urn:uuid:m1", "urn:uuid:w1", 3, op) == expected
    assert controller(policy()).idempotency_key(op) == expected
    assert derived_attempt_key(expected, 2) == canonical_hash(
        {"attempt": 2, "idempotencyKey": expected})


def test_ownership_epoch_changes_the_key() -> None:
    assert idempotency_key("m", "w", 1, "op") != idempotency_key("m", "w", 2, "op")
    with pytest.raises(InvalidInputError):
        idempotency_key("m", "w", 0, "op")


def test_attempts_back_off_exponentially_and_reuse_the_key() -> None:
    c = controller(policy())
    first = c.begin("charge", now=at(0))
    assert first.attempt_number == 1 and first.started_at == at(0)
    s1 = c.finish(success=False, code="TIMEOUT", now=at(10))
    assert (s1.retry, s1.retry_at, s1.reason) == (True, at(1010), RetryReason.RETRYABLE_FAILURE)
    with pytest.raises(PolicyError) as info:
        c.begin("charge", now=at(1009))
    assert info.value.kind == "backoff_pending" and not isinstance(info.value, RetryExhausted)
    second = c.begin("charge", now=at(1010))
    assert second.idempotency_key == first.idempotency_key
    assert second.attempt_key != first.attempt_key
    assert c.finish(success=False, code="TIMEOUT", now=at(1020)).retry_at == at(3020)
    c.begin("charge", now=at(3020))
    last = c.finish(success=False, code="TIMEOUT", now=at(3030))
    assert (last.retry, last.reason) == (False, RetryReason.ATTEMPTS_EXHAUSTED)
    assert c.finished is RetryReason.ATTEMPTS_EXHAUSTED and c.attempts == 3
    with pytest.raises(RetryExhausted) as exhausted:
        c.begin("charge", now=at(9000))
    assert (exhausted.value.kind, exhausted.value.code) == (
        "attempts_exhausted", "INVALID_STATE_TRANSITION")
    assert policy().delay_after(10) == 5000


def test_permanent_failures_stop_at_once() -> None:
    for kw in ({"code": "BAD_INPUT"}, {"code": "TIMEOUT", "retryable": False}):
        c = controller(policy())
        c.begin("op", now=at(0))
        s = c.finish(success=False, now=at(1), **kw)  # type: ignore[arg-type]
        assert (s.retry, s.reason) == (False, RetryReason.PERMANENT_FAILURE)
    c = controller(policy())
    c.begin("op", now=at(0))
    assert c.finish(success=True, now=at(1)).reason is RetryReason.COMPLETED
    with pytest.raises(PolicyError) as info:
        c.finish(success=True, now=at(2))
    assert info.value.kind == "no_attempt_in_flight"


def test_deadline_and_budget() -> None:
    c = controller(policy(), deadline=at(1500))
    c.begin("op", now=at(0))
    s = c.finish(success=False, code="TIMEOUT", now=at(600))
    assert s.reason is RetryReason.DEADLINE_EXHAUSTED
    c = controller(policy(), deadline=at(100))
    with pytest.raises(RetryExhausted) as info:
        c.begin("op", now=at(100))
    assert info.value.kind == "deadline_exhausted"
    c = controller(policy(), cost_budget=ResourceUsage(tool_calls=2))
    c.begin("op", now=at(0))
    assert c.consume(ResourceUsage(tool_calls=2)).tool_calls == 2
    with pytest.raises(PolicyError) as budget:
        c.consume(ResourceUsage(tool_calls=1))
    assert (budget.value.code, budget.value.dimension) == ("BUDGET_EXCEEDED", "tool_calls")
    assert c.usage == ResourceUsage(tool_calls=2)
    s = c.finish(success=False, code="TIMEOUT", now=at(10))
    assert s.reason is RetryReason.BUDGET_EXHAUSTED


def test_policy_from_the_contract() -> None:
    p = RetryPolicy.from_dict({"maxAttempts": 4, "backoff": "fixed", "maxDelay": "PT2.5S",
                               "retryableFailures": ["TIMEOUT"]})
    assert (p.max_attempts, p.backoff, p.max_delay_ms, p.initial_delay_ms) == (
        4, Backoff.FIXED, 2500, 1000)
    assert p.retryable_failures == ("TIMEOUT",) and p.delay_after(3) == 2500
    with pytest.raises(InvalidInputError):
        RetryPolicy.from_dict({"maxAttempts": 0, "backoff": "fixed", "maxDelay": "PT1S",
                               "retryableFailures": []})
    with pytest.raises(InvalidInputError):
        RetryPolicy(max_attempts=1, backoff="linear", max_delay_ms=1)
    with pytest.raises(PolicyError) as info:
        controller(policy(max_attempts=0))
    assert info.value.kind == "invalid_argument"
    assert parse_duration_ms("P1DT1H1M1.0001S") == 90_061_001
    assert parse_duration_ms("PT") is None
