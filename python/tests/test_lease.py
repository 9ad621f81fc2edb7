"""Fenced leases through Python: window, renewal, closure, fencing, schema document."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

import missionweaveprotocol as mwp
from missionweaveprotocol.errors import InvalidInputError, LeaseError, MissionWeaveError
from missionweaveprotocol.lease import ExecutionLease, LeaseState, LeaseType

T0 = datetime(2026, 1, 2, 3, 4, 5, 6000, tzinfo=timezone.utc)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def lease(**overrides: Any) -> ExecutionLease:
    fields: dict[str, Any] = dict(
        lease_id="urn:lease:1", mission_id="urn:m:1", group_id="urn:g:1", work_item_id="urn:w:1",
        holder_agent_id="urn:agent:w", session_epoch=3, ownership_epoch=2,
        issued_at=at(0), starts_at=at(0), expires_at=at(300),
    )
    fields.update(overrides)
    return ExecutionLease(**fields)


def test_root_names_and_fields() -> None:
    assert mwp.ExecutionLease is ExecutionLease and mwp.LeaseState is LeaseState
    le = lease()
    assert le.lease_type is LeaseType.EXECUTION and le.state is LeaseState.ACTIVE
    assert le.expires_at == at(300) and le.expires_at.tzinfo is not None
    assert (le.session_epoch, le.ownership_epoch, le.coordinator_epoch) == (3, 2, None)
    assert le.renewal_count == 0 and le.closed_at is None


def test_document_matches_the_schema_shape() -> None:
    doc = lease().to_dict()
    assert doc["issuedAt"] == "2026-01-02T03:04:05.006Z"
    assert doc["leaseType"] == "execution" and doc["state"] == "active"
    assert doc["ownershipEpoch"] == 2 and "closedAt" not in doc
    text = lease().to_json()
    assert text.startswith('{"expiresAt":') and " " not in text


@pytest.mark.parametrize(
    "overrides",
    [
        {"starts_at": at(300)},  # starts_at must be < expires_at
        {"issued_at": at(1)},  # issued_at ≤ starts_at
        {"session_epoch": 0},
        {"lease_id": ""},
        {"holder_agent_id": "has space"},
    ],
)
def test_invalid_leases_are_typed_errors(overrides: dict[str, Any]) -> None:
    with pytest.raises(LeaseError) as info:
        lease(**overrides)
    assert info.value.code == "INVALID_COMMAND"


def test_naive_and_wrong_types_are_rejected() -> None:
    with pytest.raises(InvalidInputError) as info:
        lease(expires_at=datetime(2026, 1, 2))
    assert "naive" in str(info.value) and info.value.code == "PROTOCOL_VIOLATION"
    with pytest.raises(InvalidInputError):
        lease(session_epoch=-1)
    with pytest.raises(InvalidInputError):
        lease(session_epoch=True)
    with pytest.raises(InvalidInputError):
        lease(expires_at="2026-01-02T00:00:00Z")
    with pytest.raises(InvalidInputError):
        lease(session_epoch=2**53)


def test_renewal_is_monotonic_extending_and_immutable() -> None:
    le = lease()
    renewed = le.renew(at=at(100), expires_at=at(400))
    assert le.expires_at == at(300), "the original is unchanged"
    assert renewed.expires_at == at(400) and renewed.renewal_count == 1
    assert renewed.last_renewed_at == at(100)
    for when, until, kind in [
        (at(100), at(500), "non_monotonic_renewal"),  # not after the previous renewal
        (at(150), at(400), "not_extending"),
        (at(400), at(900), "expired"),
    ]:
        with pytest.raises(LeaseError) as info:
            renewed.renew(at=when, expires_at=until)
        assert info.value.kind == kind
    with pytest.raises(LeaseError) as info:
        renewed.renew(at=at(400), expires_at=at(900))
    assert info.value.code == "WORK_LEASE_EXPIRED"


def test_closure_is_final_and_idempotent() -> None:
    released = lease().close(LeaseState.RELEASED, at=at(10), reason="checkpoint")
    assert released.state is LeaseState.RELEASED and released.closed_at == at(10)
    assert released.close("released", at=at(10), reason="checkpoint") == released
    with pytest.raises(LeaseError) as info:
        released.close(LeaseState.REVOKED, at=at(10), reason="checkpoint")
    assert (info.value.code, info.value.kind) == ("INVALID_STATE_TRANSITION", "closure_conflict")
    with pytest.raises(LeaseError) as info:
        released.renew(at=at(20), expires_at=at(600))
    assert info.value.kind == "closed"
    # Natural expiry cannot be recorded early; release after expiry is refused.
    with pytest.raises(LeaseError):
        lease().close(LeaseState.EXPIRED, at=at(299), reason="timeout")
    with pytest.raises(LeaseError) as info:
        lease().close(LeaseState.RELEASED, at=at(300), reason="late")
    assert info.value.kind == "expired"
    expired = lease().close("expired", at=at(300), reason="timeout")
    assert expired.to_dict()["closedAt"] == "2026-01-02T03:09:05.006Z"
    with pytest.raises(LeaseError):
        lease().close("active", at=at(1), reason="x")
    with pytest.raises(InvalidInputError):
        lease().close("finished", at=at(1), reason="x")


def test_state_at_reads_expiry_without_recording_it() -> None:
    le = lease()
    assert le.state_at(at(299)) is LeaseState.ACTIVE and le.is_live(at(299))
    assert le.state_at(at(300)) is LeaseState.EXPIRED and not le.is_live(at(300))
    assert le.state is LeaseState.ACTIVE


@pytest.mark.parametrize(
    ("claim", "code", "kind"),
    [
        ({"agent_id": "urn:agent:other"}, "AUTH_FORBIDDEN", "wrong_holder"),
        ({"session_epoch": 2}, "AUTH_STALE_SESSION", "stale_session"),
        ({"ownership_epoch": 1}, "WORK_STALE_OWNERSHIP", "stale_ownership"),
        ({"ownership_epoch": None}, "WORK_STALE_OWNERSHIP", "stale_ownership"),
        ({"lease_id": "urn:lease:0"}, "WORK_LEASE_EXPIRED", "stale_lease"),
        ({"now": at(300)}, "WORK_LEASE_EXPIRED", "expired"),
    ],
)
def test_fencing(claim: dict[str, Any], code: str, kind: str) -> None:
    args: dict[str, Any] = dict(
        agent_id="urn:agent:w", lease_id="urn:lease:1", session_epoch=3, ownership_epoch=2,
        now=at(10),
    )
    lease().check_claim(**args)
    args.update(claim)
    with pytest.raises(LeaseError) as info:
        lease().check_claim(**args)
    assert (info.value.code, info.value.kind) == (code, kind)
    assert isinstance(info.value, MissionWeaveError) and isinstance(info.value, ValueError)


def test_other_lease_types() -> None:
    common: dict[str, Any] = dict(
        lease_id="urn:lease:o", mission_id="urn:m:o", group_id="urn:g:o", holder_agent_id="urn:agent:a", session_epoch=1,
        issued_at=at(0), starts_at=at(0), expires_at=at(60),
    )
    own = ExecutionLease.ownership(work_item_id="urn:w:o", ownership_epoch=1, start_by=at(30), **common)
    assert own.lease_type is LeaseType.OWNERSHIP and own.start_by == at(30)
    own.check_start_by(at(30))
    with pytest.raises(LeaseError) as info:
        own.check_start_by(at(31))
    assert info.value.code == "WORK_LEASE_EXPIRED"
    with pytest.raises(LeaseError):
        ExecutionLease.ownership(work_item_id="urn:w:o", ownership_epoch=1, start_by=at(61), **common)
    blocked = ExecutionLease.blocked(
        work_item_id="urn:w:o", ownership_epoch=1, grace_expires_at=at(90), **common
    )
    blocked.renew(at=at(10), expires_at=at(90))
    with pytest.raises(LeaseError) as info:
        blocked.renew(at=at(10), expires_at=at(91))
    assert info.value.kind == "not_extending"
    coord = ExecutionLease.coordinator(coordinator_epoch=7, **common)
    assert coord.work_item_id is None and coord.coordinator_epoch == 7
    with pytest.raises(LeaseError) as info:
        coord.check_claim(agent_id="urn:agent:a", lease_id="urn:lease:o", session_epoch=1,
                          coordinator_epoch=6, now=at(1))
    assert info.value.code == "AUTH_STALE_COORDINATOR"


def test_documents_read_back() -> None:
    renewed = lease().renew(at=at(10), expires_at=at(400))
    closed = renewed.close(LeaseState.RELEASED, at=at(20), reason="checkpointed")
    for original in [lease(), renewed, closed]:
        assert ExecutionLease.from_json(original.to_json()).to_json() == original.to_json()
        assert ExecutionLease.from_dict(original.to_dict()).to_dict() == original.to_dict()
    back = ExecutionLease.from_dict(closed.to_dict())
    assert back.state is LeaseState.RELEASED and back.renewal_count == 1 and back.closed_at == at(20)
    doc = lease().to_dict()
    with pytest.raises(MissionWeaveError) as not_json:
        ExecutionLease.from_json("{")
    assert not_json.value.code == "PROTOCOL_VIOLATION"
    with pytest.raises(MissionWeaveError) as schema:
        ExecutionLease.from_dict({**doc, "state": "paused"})
    assert schema.value.code == "SCHEMA_VALIDATION_FAILED"
    with pytest.raises(LeaseError):
        ExecutionLease.from_dict({**doc, "state": "expired", "closedAt": doc["issuedAt"], "closureReason": "x"})
    with pytest.raises(LeaseError):
        ExecutionLease.from_dict({**doc, "startsAt": "2026-01-02T03:04:05.0061Z"})
