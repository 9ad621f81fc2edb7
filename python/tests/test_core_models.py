"""``models`` and the Core's vocabularies: enums spelled as the Rust core spells them, the
Command's wire dump (by alias, no ``None`` members) and its exact signed bytes, timestamps."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from pydantic import ValidationError

from core_support import COORDINATOR, OWNER, create, signed_command, unsigned
from missionweaveprotocol import _native
from missionweaveprotocol.core import ErrorCode, MissionWeaveProtocolError
from missionweaveprotocol.models import (
    ActorType,
    Command,
    CommandKind,
    Principal,
    Query,
    QueryKind,
    render_timestamp,
)

VOCABULARIES = _native.vocabularies()


def test_query_kinds_are_the_cores() -> None:
    assert [k.value for k in QueryKind] == list(VOCABULARIES["query_kind"])


def test_error_codes_are_the_cores_families() -> None:
    assert [c.value for c in ErrorCode] == list(VOCABULARIES["error_family"])
    # The core names each family's class: the CamelCase of the reference's 15, and `StoreError`
    # for `store_failure` (issue 22, item 8); the package's classes carry those names.
    classes = {cls.code: cls.__name__ for cls in MissionWeaveProtocolError.__subclasses__()}
    assert [classes[c] for c in ErrorCode] == list(VOCABULARIES["error_family_class"])
    assert [
        "".join(w.title() for w in c.value.split("_")) for c in ErrorCode
        if c is not ErrorCode.STORE_FAILURE
    ] == list(VOCABULARIES["error_family_class"])[:-1]
    assert VOCABULARIES["error_family_class"][-1] == "StoreError"


def test_command_kinds_are_wire_kinds() -> None:
    assert len(CommandKind) == 38
    assert CommandKind.CREATE_MISSION == "mission.create"
    assert CommandKind("work.accept_offer") is CommandKind.ACCEPT_WORK_OFFER


def test_actor_types_are_the_wires() -> None:
    assert {a.value for a in ActorType} == {"agent", "human", "service"}
    assert Principal.system() == Principal(type=ActorType.SERVICE, id="organization")
    with pytest.raises(ValidationError):
        Principal(type="robot", id="x")  # type: ignore[arg-type]


def test_wire_dump_is_by_alias_without_none_members() -> None:
    document = unsigned("mission.cancel", OWNER, {"reason": "no"})
    command = Command.model_validate(document)
    wire = command.to_wire()
    assert wire == document
    assert "sessionEpoch" not in wire and "extensions" not in wire
    assert command.signing_payload() == document


def test_signed_model_round_trips_through_its_bytes() -> None:
    command = signed_command("mission.renew_coordinator", COORDINATOR, {"leaseSeconds": 300},
                             coordinatorEpoch=1)
    assert command.signature is not None and command.signed_bytes is None
    raw = command.wire_bytes()
    again = Command.from_wire(raw)
    assert again.signed_bytes == raw
    assert again.to_wire() == command.to_wire()


def test_from_wire_keeps_bytes_until_a_field_changes() -> None:
    raw = create()
    command = Command.from_wire(raw)
    assert command.wire_bytes() == raw
    copy = command.model_copy()
    assert copy.signed_bytes == raw
    changed = command.model_copy(update={"correlation_id": "urn:x:2"})
    assert changed.signed_bytes is None
    command.expected_revision = 3
    assert command.signed_bytes is None


def test_epochs_and_revisions_are_bounded() -> None:
    document = unsigned("mission.cancel", OWNER, {"reason": "no"}, membershipEpoch=0)
    with pytest.raises(ValidationError):
        Command.model_validate(document)
    with pytest.raises(ValidationError):
        Command.model_validate(unsigned("mission.cancel", OWNER, {}, expectedRevision=-1))


def test_timestamps_render_in_the_wire_profile() -> None:
    utc = timezone.utc
    assert render_timestamp(datetime(2026, 7, 15, 9, 30, tzinfo=utc)) == "2026-07-15T09:30:00Z"
    assert render_timestamp(datetime(2026, 7, 15, 9, 30, 0, 120000, tzinfo=utc)) == (
        "2026-07-15T09:30:00.12Z"
    )
    plus_two = timezone(timedelta(hours=2))
    assert render_timestamp(datetime(2026, 7, 15, 11, 30, tzinfo=plus_two)) == (
        "2026-07-15T09:30:00Z"
    )
    with pytest.raises(ValidationError):
        Command.model_validate({**unsigned("mission.cancel", OWNER, {}),
                                "issuedAt": "2026-07-15T09:30:00"})


def test_query_model() -> None:
    query = Query(kind="membership", entity_id=OWNER, group_id="g", actor_type="human")
    assert query.kind is QueryKind.MEMBERSHIP and query.actor_type is ActorType.HUMAN
    with pytest.raises(ValidationError):
        Query(kind="nope", entity_id="x")  # type: ignore[arg-type]
