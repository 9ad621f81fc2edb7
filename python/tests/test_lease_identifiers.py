"""Regression: a lease refuses at construction the identifiers ``lease.schema.json`` refuses
(``common.schema.json#/$defs/id``, §2), so ``from_dict(lease.to_dict())`` always reads it back."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pydantic
import pytest

from missionweaveprotocol.lease import ExecutionLease

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
FIELDS = ("lease_id", "mission_id", "group_id", "work_item_id", "holder_agent_id")


def lease(**overrides: Any) -> ExecutionLease:
    fields: dict[str, Any] = dict(
        lease_id="urn:lease:1", mission_id="urn:m:1", group_id="urn:g:1", work_item_id="urn:w:1",
        holder_agent_id="urn:agent:w", session_epoch=3, ownership_epoch=2,
        issued_at=T0, starts_at=T0, expires_at=T0 + timedelta(minutes=5),
    )
    fields.update(overrides)
    return ExecutionLease(**fields)


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("identifier", ["lease-1", "urn:x:a\"b", "urn:x:\u00e9", "1urn:x", "urn:x:" + "a" * 507])
def test_identifiers_the_schema_refuses_are_refused_at_construction(field: str, identifier: str) -> None:
    # ExecutionLease is a pydantic model: the core's refusal is a ValidationError carrying the
    # core's code (the lease schema's identifier rule, §2).
    with pytest.raises(pydantic.ValidationError) as info:
        lease(**{field: identifier})
    (error,) = info.value.errors()
    assert error["ctx"]["code"] == "SCHEMA_VALIDATION_FAILED"


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("identifier", ["urn:uuid:0b7e", "https://example.org/l/1?x=1#f", "urn:x:" + "a" * 506])
def test_every_constructed_lease_reads_back_from_its_document(field: str, identifier: str) -> None:
    built = lease(**{field: identifier})
    again = ExecutionLease.from_dict(built.to_dict())
    assert again.to_dict() == built.to_dict()
