"""RetryController.snapshot()/restore() (this package's extension): the retry state survives a
Worker restart; tampered, other-version or unreachable snapshots are refused."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from missionweaveprotocol.errors import PolicyError, SnapshotError
from missionweaveprotocol.execution import ResourceUsage, RetryController, RetryPolicy

T0 = datetime(2026, 7, 15, 9, 30, tzinfo=timezone.utc)


def controller() -> RetryController:
    policy = RetryPolicy(max_attempts=3, backoff="exponential", max_delay_ms=5_000,
                         initial_delay_ms=1_000, retryable_failures=["TIMEOUT"])
    return RetryController(policy, mission_id="urn:uuid:m1", work_item_id="urn:uuid:w1", ownership_epoch=3,
                           cost_budget=ResourceUsage(tool_calls=10), deadline=T0 + timedelta(hours=1))


def test_state_survives_a_restart_through_json() -> None:
    c = controller()
    first = c.begin("send", now=T0)
    c.consume(ResourceUsage(tool_calls=2))
    schedule = c.finish(success=False, now=T0, code="TIMEOUT")
    assert schedule.retry
    restored = RetryController.restore(json.dumps(c.snapshot()))
    assert (restored.attempts, restored.usage) == (1, ResourceUsage(tool_calls=2))
    with pytest.raises(PolicyError):
        restored.begin("send", now=T0)  # the backoff still holds
    second = restored.begin("send", now=T0 + timedelta(seconds=1))
    assert second.idempotency_key == first.idempotency_key
    again = RetryController.restore(restored.snapshot(), clock=lambda: T0)
    assert again.current_attempt == ("send", T0 + timedelta(seconds=1))
    with pytest.raises(PolicyError):
        again.begin("send", now=T0 + timedelta(seconds=2))  # still in flight


def test_tampered_other_version_and_unreachable_snapshots_are_refused() -> None:
    c = controller()
    c.begin("send", now=T0)
    snapshot = c.snapshot()
    tampered = dict(snapshot, attempts=0)
    with pytest.raises(SnapshotError) as error:
        RetryController.restore(tampered)
    assert (error.value.code, error.value.kind) == ("INTERNAL_ERROR", "integrity_mismatch")
    with pytest.raises(SnapshotError) as error:
        RetryController.restore(dict(snapshot, version=2))
    assert error.value.kind == "unsupported_version"
    with pytest.raises(SnapshotError) as error:
        RetryController.restore(dict(snapshot, surprise=True))
    assert error.value.kind == "format"
    with pytest.raises(SnapshotError):
        RetryController.restore(b"{not json")
