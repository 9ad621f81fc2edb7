"""Fenced leases through Python: the reference's pydantic model (validation in the core),
window, renewal, closure, fencing, schema document."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pydantic
import pytest

import missionweaveprotocol as mwp
from missionweaveprotocol.errors import (
    InvalidInputError,
    JsonParseError,
    LeaseError,
    MissionWeaveError,
    SchemaValidationError,
)
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
    ("overrides", "code", "kind"),
    [
        ({"starts_at": at(300)}, "INVALID_COMMAND", "invalid_window"),  # starts_at < expires_at
        ({"issued_at": at(1)}, "INVALID_COMMAND", "invalid_window"),  # issued_at ≤ starts_at
        ({"session_epoch": 0}, "SCHEMA_VALIDATION_FAILED", None),
        ({"ownership_epoch": 2**53}, "SCHEMA_VALIDATION_FAILED", None),  # JS-safe integers
        ({"lease_id": ""}, "SCHEMA_VALIDATION_FAILED", None),
        ({"holder_agent_id": "urn:has space"}, "SCHEMA_VALIDATION_FAILED", None),
        ({"work_item_id": None}, "SCHEMA_VALIDATION_FAILED", None),  # execution needs a WorkItem
        ({"renewal_count": 1}, "SCHEMA_VALIDATION_FAILED", None),  # no lastRenewedAt
        ({"last_renewed_at": at(5)}, "SCHEMA_VALIDATION_FAILED", None),  # but no renewal
        ({"renewal_count": 1, "last_renewed_at": at(300)}, "INVALID_COMMAND", "invalid_field"),
        ({"closed_at": at(5), "closure_reason": "x"}, "SCHEMA_VALIDATION_FAILED", None),  # active
        ({"state": "released"}, "SCHEMA_VALIDATION_FAILED", None),  # no closure metadata
        # Natural expiry cannot be recorded early; release/revoke must happen before expiry.
        ({"state": "expired", "closed_at": at(299), "closure_reason": "t"}, "INVALID_COMMAND",
         "invalid_window"),
        ({"state": "revoked", "closed_at": at(300), "closure_reason": "t"}, "WORK_LEASE_EXPIRED",
         "expired"),
        ({"state": "released", "closed_at": at(-1), "closure_reason": "t"}, "INVALID_COMMAND",
         "invalid_window"),
        ({"coordinator_epoch": 3}, "SCHEMA_VALIDATION_FAILED", None),  # foreign member
    ],
)
def test_invalid_leases_raise_validation_errors_from_the_core(
    overrides: dict[str, Any], code: str, kind: str
) -> None:
    with pytest.raises(pydantic.ValidationError) as info:
        lease(**overrides)
    assert isinstance(info.value, ValueError), "reference programs catch ValueError"
    (error,) = info.value.errors()
    assert error["type"] == code and error["ctx"]["code"] == code
    assert error["ctx"]["kind"] == kind and error["ctx"]["reason"]
    assert str(error["msg"]).startswith(f"{code}: ")


def test_the_valid_closed_and_renewed_forms_are_accepted() -> None:
    closed = lease(state=LeaseState.EXPIRED, closed_at=at(300), closure_reason="timeout")
    assert closed.state is LeaseState.EXPIRED
    renewed = lease(renewal_count=2, last_renewed_at=at(299))
    assert renewed.renewal_count == 2


def test_it_is_the_reference_pydantic_model() -> None:
    le = lease()
    assert isinstance(le, pydantic.BaseModel) and mwp.ExecutionLease is ExecutionLease
    assert list(ExecutionLease.model_fields)[:16] == [
        "lease_id", "lease_type", "mission_id", "group_id", "work_item_id", "holder_agent_id",
        "session_epoch", "ownership_epoch", "issued_at", "starts_at", "expires_at", "state",
        "renewal_count", "last_renewed_at", "closed_at", "closure_reason",
    ]
    required = {n for n, f in ExecutionLease.model_fields.items() if f.is_required()}
    assert required == {
        "lease_id", "mission_id", "group_id", "work_item_id", "holder_agent_id", "session_epoch",
        "ownership_epoch", "issued_at", "starts_at", "expires_at",
    }
    dumped = le.model_dump(by_alias=True)
    assert dumped["leaseId"] == "urn:lease:1" and dumped["leaseType"] == "execution"
    assert dumped["holderAgentId"] == "urn:agent:w" and dumped["renewalCount"] == 0
    assert dumped["issuedAt"] == at(0)
    # camelCase and field names both validate, dict and JSON alike.
    assert ExecutionLease.model_validate(dumped) == le
    assert ExecutionLease.model_validate(le.model_dump()) == le
    assert ExecutionLease.model_validate_json(le.model_dump_json(by_alias=True)) == le
    assert ExecutionLease.model_validate(le.to_dict()) == le
    copy = le.model_copy()
    assert copy == le and copy is not le


def test_pydantic_type_errors_stay_pydantic_errors() -> None:
    for overrides, kind in [
        ({"expires_at": datetime(2026, 1, 2)}, "timezone_aware"),
        ({"session_epoch": "three"}, "int_parsing"),
        ({"session_epoch": True}, "int_type"),  # a bool is not an epoch (the reference took 1)
        ({"lease_id": 5}, "string_type"),
    ]:
        with pytest.raises(pydantic.ValidationError) as info:
            lease(**overrides)
        assert info.value.errors()[0]["type"] == kind, overrides
    with pytest.raises(pydantic.ValidationError) as info:
        ExecutionLease.model_validate({**lease().model_dump(by_alias=True), "owner": "x"})
    assert info.value.errors()[0]["type"] == "extra_forbidden"


def test_identifiers_are_not_stripped_but_closure_reasons_are() -> None:
    # The reference strips whitespace from every string, silently turning one identifier into
    # another (its gap §7.18); here the core refuses the identifier as given.
    with pytest.raises(pydantic.ValidationError):
        lease(lease_id=" urn:lease:1 ")
    # A closure reason is free text: trimmed as the reference does (the core's rule,
    # ``lease::closure_reason``), on construction and on close.
    kept = lease(closed_at=at(5), closure_reason="  kept  ", state="released")
    assert kept.closure_reason == "kept" and kept.to_dict()["closureReason"] == "kept"
    closed = lease().close("released", at=at(5), reason="\tdone \n")
    assert closed.closure_reason == "done"
    for blank in ("", "   "):
        with pytest.raises(pydantic.ValidationError) as refused:
            lease(closed_at=at(5), closure_reason=blank, state="released")
        assert refused.value.errors()[0]["type"] == "INVALID_COMMAND"
        with pytest.raises(LeaseError):
            lease().close("released", at=at(5), reason=blank)


def test_instants_are_kept_to_the_millisecond() -> None:
    le = lease(expires_at=at(300) + timedelta(microseconds=999))
    assert le.expires_at == at(300) and le.to_dict()["expiresAt"] == "2026-01-02T03:09:05.006Z"
    other_zone = timezone(timedelta(hours=2))
    assert lease(issued_at=at(0).astimezone(other_zone)).issued_at == at(0)


def test_assignment_is_validated_by_the_core_and_a_refusal_changes_nothing() -> None:
    le = lease()
    le.expires_at = at(400)
    assert le.to_dict()["expiresAt"] == "2026-01-02T03:10:45.006Z"
    with pytest.raises(pydantic.ValidationError) as info:
        le.starts_at = at(500)
    assert info.value.errors()[0]["type"] == "INVALID_COMMAND"
    # pydantic (and so the reference) keeps a refused value; here the model is as before.
    assert le.starts_at == at(0) and le.expires_at == at(400)
    with pytest.raises(pydantic.ValidationError):
        le.state = LeaseState.REVOKED
    assert le.state is LeaseState.ACTIVE


def test_model_copy_update_is_seen_by_the_transitions() -> None:
    longer = lease().model_copy(update={"expires_at": at(600)})
    assert longer.renew(at=at(500), expires_at=at(700)).renewal_count == 1
    broken = lease().model_copy(update={"starts_at": at(900)})  # model_copy never validates
    with pytest.raises(LeaseError):
        broken.renew(at=at(10), expires_at=at(700))


def test_transitions_keep_subclasses() -> None:
    class Mine(ExecutionLease):
        pass

    mine = Mine(**lease().model_dump())
    assert type(mine.renew(at=at(1), expires_at=at(301))) is Mine
    assert type(mine.close("released", at=at(1), reason="done")) is Mine


def test_renewal_is_monotonic_extending_and_immutable() -> None:
    le = lease()
    renewed = le.renew(at=at(100), expires_at=at(400))
    assert isinstance(renewed, ExecutionLease) and renewed is not le
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
    with pytest.raises(LeaseError) as info:
        lease().close("released", at=at(1), reason="   ")
    assert info.value.code == "INVALID_COMMAND"
    with pytest.raises(InvalidInputError):
        lease().renew(at=datetime(2026, 1, 2), expires_at=at(400))


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
        lease_id="urn:lease:o", mission_id="urn:m:1", group_id="urn:g:1",
        holder_agent_id="urn:agent:a", session_epoch=1,
        issued_at=at(0), starts_at=at(0), expires_at=at(60),
    )
    own = ExecutionLease.ownership(work_item_id="urn:w:1", ownership_epoch=1, start_by=at(30), **common)
    assert own.lease_type is LeaseType.OWNERSHIP and own.start_by == at(30)
    own.check_start_by(at(30))
    with pytest.raises(LeaseError) as info:
        own.check_start_by(at(31))
    assert info.value.code == "WORK_LEASE_EXPIRED"
    with pytest.raises(pydantic.ValidationError):
        ExecutionLease.ownership(work_item_id="urn:w:1", ownership_epoch=1, start_by=at(61), **common)
    with pytest.raises(pydantic.ValidationError):  # an ownership lease needs its start-by
        ExecutionLease(lease_type="ownership", work_item_id="urn:w:1", ownership_epoch=1, **common)
    blocked = ExecutionLease.blocked(
        work_item_id="urn:w:1", ownership_epoch=1, grace_expires_at=at(90), **common
    )
    blocked.renew(at=at(10), expires_at=at(90))
    with pytest.raises(LeaseError) as info:
        blocked.renew(at=at(10), expires_at=at(91))
    assert info.value.kind == "not_extending"
    coord = ExecutionLease.coordinator(coordinator_epoch=7, **common)
    assert coord.work_item_id is None and coord.coordinator_epoch == 7
    assert ExecutionLease.model_validate(coord.to_dict()) == coord, "no workItemId member needed"
    with pytest.raises(pydantic.ValidationError):
        ExecutionLease.coordinator(coordinator_epoch=7, **{**common, "issued_at": at(1)})
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
    # A refused document is described by the error inside it, as in every binding (the JSON
    # call surface and the golden vectors): the parse failure, the schema issue, the lease rule.
    with pytest.raises(JsonParseError) as not_json:
        ExecutionLease.from_json("{")
    assert not_json.value.code == "PROTOCOL_VIOLATION" and not_json.value.reason == "unexpected-end"
    assert str(not_json.value) == "unexpected end of input at byte 1"
    with pytest.raises(SchemaValidationError) as schema:
        ExecutionLease.from_dict({**doc, "state": "paused"})
    assert schema.value.code == "SCHEMA_VALIDATION_FAILED" and schema.value.reason == "enum"
    assert str(schema.value).startswith("value is not one of the allowed values at /state")
    with pytest.raises(LeaseError) as window:
        ExecutionLease.from_dict({**doc, "issuedAt": doc["expiresAt"]})
    assert window.value.reason == "invalid_window" and not str(window.value).startswith("lease document")
    with pytest.raises(LeaseError):
        ExecutionLease.from_dict({**doc, "state": "expired", "closedAt": doc["issuedAt"], "closureReason": "x"})
    with pytest.raises(LeaseError):
        ExecutionLease.from_dict({**doc, "startsAt": "2026-01-02T03:04:05.0061Z"})
