"""Issue 9, items 7 and 11: exceptions that are not the library's (Python's int limit, a
released memoryview, a raising resolver or tzinfo) and tampered state (a Scheduler snapshot with
more running slots than capacity or an instant out of range, empty offer IDs, an unknown Registry
completeness) all become the library's typed errors with a §19 code."""

from __future__ import annotations

import json
import sys
from datetime import datetime, timedelta, timezone, tzinfo
from typing import Any, Dict, Optional

import pytest
from conftest import read

from missionweaveprotocol import registry as reg
from missionweaveprotocol import signed_documents as sd
from missionweaveprotocol.canonical import ParseLimits, parse_json
from missionweaveprotocol.errors import InvalidInputError
from missionweaveprotocol.scheduler import (
    Scheduler,
    SchedulerError,
    SchedulerPolicy,
    WorkOffer,
    WorkState,
)
from missionweaveprotocol.signed_documents import SignedDocumentKind

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def assert_argument_error(error: InvalidInputError, argument: Optional[str]) -> None:
    assert error.code == "PROTOCOL_VIOLATION"
    assert error.reason == "invalid-argument"
    assert error.fields.get("argument") == argument


# ---- item 7: errors that are not ours ---------------------------------------------------------


def test_an_integer_past_pythons_digit_limit_is_a_typed_error() -> None:
    # Python's own digit limit is below STATE's number limit (an explicit choice; DOCUMENT,
    # the default, refuses such numbers first).
    limit = sys.get_int_max_str_digits()
    assert limit > 0
    huge = b"1" * (limit + 1)
    with pytest.raises(InvalidInputError) as caught:
        parse_json(huge, limits=ParseLimits.STATE)
    assert_argument_error(caught.value, None)
    assert isinstance(caught.value.__cause__, ValueError)
    with pytest.raises(InvalidInputError):
        parse_json(b"[-" + b"9" * 1_000_000 + b"]", limits=ParseLimits.STATE)
    # Exact below the limit, and exact past it once the caller raises the limit.
    assert parse_json(b"1" * limit, limits=ParseLimits.STATE) == int("1" * limit)
    sys.set_int_max_str_digits(0)
    try:
        assert parse_json(huge, limits=ParseLimits.STATE) == int(huge.decode())
    finally:
        sys.set_int_max_str_digits(limit)


def test_a_released_memoryview_is_a_typed_error() -> None:
    view = memoryview(b'{"a":1}')
    assert parse_json(view) == {"a": 1}
    view.release()
    with pytest.raises(InvalidInputError) as caught:
        parse_json(view)
    assert_argument_error(caught.value, "raw")
    assert isinstance(caught.value.__cause__, ValueError)


class RaisingAttributes:
    """Any attribute access raises, as a broken proxy might."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"no {name} today")


class InterruptingAttributes:
    def __getattr__(self, name: str) -> Any:
        raise KeyboardInterrupt


def test_a_resolver_whose_attributes_raise_is_a_typed_error() -> None:
    document = read("cryptography/vectors/signed-documents/valid/command.json")
    codec = sd.SignedDocumentCodec()
    with pytest.raises(InvalidInputError) as caught:
        codec.verify(SignedDocumentKind.COMMAND, document, RaisingAttributes())
    assert_argument_error(caught.value, "key_resolver")
    assert isinstance(caught.value.__cause__, RuntimeError)
    # Ctrl-C is never turned into a protocol error.
    with pytest.raises(KeyboardInterrupt):
        codec.verify(SignedDocumentKind.COMMAND, document, InterruptingAttributes())
    # A working resolver still verifies.
    resolver = reg.AgentRegistryKeyResolver(read("cryptography/keys/registry-valid.json"))
    assert isinstance(codec.verify(SignedDocumentKind.COMMAND, document, resolver), sd.VerifiedSignedDocument)


class RaisingZone(tzinfo):
    def __init__(self, raised: BaseException) -> None:
        self.raised = raised

    def utcoffset(self, dt: Optional[datetime]) -> timedelta:
        raise self.raised

    def dst(self, dt: Optional[datetime]) -> Optional[timedelta]:
        return None


def test_a_tzinfo_whose_utcoffset_raises_is_a_typed_error() -> None:
    deadline = datetime(2026, 1, 1, tzinfo=RaisingZone(LookupError("zone database gone")))
    with pytest.raises(InvalidInputError) as caught:
        WorkOffer("w", "g", deadline=deadline)
    assert_argument_error(caught.value, "deadline")
    assert isinstance(caught.value.__cause__, LookupError)
    with pytest.raises(InvalidInputError):
        Scheduler(SchedulerPolicy()).schedule(now=deadline)
    interrupting = datetime(2026, 1, 1, tzinfo=RaisingZone(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        WorkOffer("w", "g", deadline=interrupting)
    assert WorkOffer("w", "g", deadline=T0).deadline == T0


# ---- item 11: tampered state ------------------------------------------------------------------


def running_snapshot() -> Dict[str, Any]:
    s = Scheduler(SchedulerPolicy(capacity_slots=1))
    s.admit(WorkOffer("a", "g"), now=T0)
    s.admit(WorkOffer("b", "g"), now=T0)
    s.schedule(now=T0)
    data: Dict[str, Any] = json.loads(json.dumps(s.snapshot().to_dict()))
    assert [r["state"] for r in data["records"]].count("running") == 1
    return data


def refused(data: Dict[str, Any], capacity: int = 1) -> SchedulerError:
    policy = SchedulerPolicy(capacity_slots=capacity)
    with pytest.raises(SchedulerError) as exact:
        Scheduler.rebuild(data, policy, exact=True)
    with pytest.raises(SchedulerError) as after_restart:
        Scheduler.rebuild(data, policy, now=T0 + timedelta(seconds=1))
    for caught in (exact, after_restart):
        assert (caught.value.kind, caught.value.code) == ("corrupt_snapshot", "INTERNAL_ERROR")
    assert exact.value.path == after_restart.value.path
    return exact.value


def test_more_running_slots_than_capacity_are_refused() -> None:
    data = running_snapshot()
    assert Scheduler.rebuild(data, SchedulerPolicy(capacity_slots=1), exact=True).used_slots == 1
    ready = next(i for i, r in enumerate(data["records"]) if r["state"] == "ready")
    data["records"][ready]["state"] = "running"
    error = refused(data)
    assert error.path == f"/records/{ready}/offer/slots"
    assert "capacity" in str(error)
    assert Scheduler.rebuild(data, SchedulerPolicy(capacity_slots=2), exact=True).used_slots == 2


def test_a_start_time_outside_the_timestamp_range_is_refused() -> None:
    data = running_snapshot()
    running = next(i for i, r in enumerate(data["records"]) if r["state"] == "running")
    # -2**62 is not an exact JSON integer (beyond 2**53 - 1): malformed, naming the path.
    data["records"][running]["since"] = -(2**62)
    with pytest.raises(SchedulerError) as unsafe:
        Scheduler.rebuild(data, SchedulerPolicy(capacity_slots=1), exact=True)
    assert (unsafe.value.kind, unsafe.value.code) == ("malformed_snapshot", "INTERNAL_ERROR")
    assert "since" in (unsafe.value.path or str(unsafe.value.detail))
    # -2**52 is exact but before year 0001: an invariant of the restored state.
    data["records"][running]["since"] = -(2**52)
    assert refused(data).path == f"/records/{running}/since"
    data["records"][running]["since"] = 253_402_300_800_000  # 10000-01-01
    assert refused(data).path == f"/records/{running}/since"
    data["records"][running]["since"] = -62_135_596_800_000  # 0001-01-01, the first valid instant
    restored = Scheduler.rebuild(data, SchedulerPolicy(capacity_slots=1), exact=True)
    assert restored.state("a") is WorkState.RUNNING
    assert restored.disclose("a", now=T0) is not None


@pytest.mark.parametrize(
    "work_id,group_id,argument", [("", "", "work_id"), ("", "g", "work_id"), ("w", "", "group_id")]
)
def test_empty_offer_ids_are_argument_errors(work_id: str, group_id: str, argument: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        WorkOffer(work_id, group_id)
    assert_argument_error(caught.value, argument)


def test_only_known_registry_completeness_is_built() -> None:
    registry = read("cryptography/keys/registry-valid.json")
    for completeness in ("everything", "group-only", ""):
        with pytest.raises(InvalidInputError) as caught:
            reg.KeyRegistrySnapshot(completeness, registry)
        assert_argument_error(caught.value, "completeness")
    snapshot = reg.KeyRegistrySnapshot(reg.KeyRegistryCompleteness.ORGANIZATION_WIDE, registry)
    assert snapshot.completeness is reg.KeyRegistryCompleteness.ORGANIZATION_WIDE
