"""The rule for compact models (issue 25): a reference-shaped ``Command(kind=…,
payload=CreateMissionPayload(…))`` converts explicitly to its normative wire Command
(``_compact_wire``), naming the wire member the compact form lacks; ``HumanIdentity.sign``,
``SignedDocumentCodec.sign`` and ``Core.perform`` take such a Command and sign / verify its
wire form. A Command signed the reference's other way (``sign_canonical`` over a dump with
``null`` members, a legacy string, a placeholder) is refused by the Core with a wire code."""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from typing import Any, Dict

import pytest

from core_support import (
    COORDINATOR,
    GROUP,
    KEYS,
    LEASE,
    MISSION,
    NOW,
    OWNER,
    create_payload,
    make_core,
)
from missionweaveprotocol import _native
from missionweaveprotocol._compact_wire import DROPPED, ROWS, CompactPayloadError
from missionweaveprotocol.control import HumanIdentity
from missionweaveprotocol.core import AuthorizationDenied, InvalidCommand
from missionweaveprotocol.crypto import sign_canonical
from missionweaveprotocol.models import (
    PAYLOAD_MODELS,
    ActorType,
    AddMembershipPayload,
    Command,
    CommandKind,
    CreateMissionPayload,
    Principal,
    ResourceBudget,
    Role,
    SignatureEnvelope,
)
from missionweaveprotocol.signed_documents import SignedDocumentCodec, SignedDocumentKind

DEADLINE = datetime(2026, 8, 1, tzinfo=timezone.utc)

#: The wire members a compact ``CreateMissionPayload`` does not carry (core_support's payload).
SUPPLEMENT: Dict[str, Any] = {
    "definitionOfDone": create_payload()["definitionOfDone"],
    "approvalPolicy": create_payload()["approvalPolicy"],
    "coordinator": {"agentCardVersion": 1, "leaseId": LEASE},
    "mainConversationId": create_payload()["mainConversationId"],
}


def owner() -> HumanIdentity:
    key = KEYS[OWNER]
    return HumanIdentity(OWNER, key.to_base64url(), key.public_key, key.key_id)


def compact_create(**changes: Any) -> Command:
    payload = CreateMissionPayload(
        mission_id=MISSION,
        group_id=GROUP,
        coordinator_id=COORDINATOR,
        title="July books",
        objective="Close the July books",
        definition_of_done=("The ledger balances",),
        budget=ResourceBudget(model_tokens=100_000, tool_calls=1_000),
        deadline=DEADLINE,
        **changes,
    )
    return Command(
        action_id="urn:missionweaveprotocol:action:compact-1",
        kind=CommandKind.CREATE_MISSION,
        actor=Principal.human(OWNER),
        group_id=GROUP,
        correlation_id="urn:missionweaveprotocol:correlation:1",
        issued_at=NOW,
        payload=payload,
    )


def test_compact_payload_is_kept_and_dumped_like_the_reference() -> None:
    command = compact_create()
    assert isinstance(command.compact_payload, CreateMissionPayload)
    # The reference dumps the model into ``payload`` (camelCase).
    assert command.payload["missionId"] == MISSION
    assert command.payload["definitionOfDone"] == ["The ledger balances"]


def test_missing_wire_member_is_named() -> None:
    with pytest.raises(CompactPayloadError) as raised:
        compact_create().to_wire()
    assert raised.value.code == "INVALID_COMMAND"
    assert raised.value.reason == "missing_member"
    assert raised.value.member == "/payload/definitionOfDone"
    partial = {k: v for k, v in SUPPLEMENT.items() if k != "mainConversationId"}
    with pytest.raises(CompactPayloadError) as raised:
        compact_create().to_wire(partial)
    assert raised.value.member == "/payload/mainConversationId"


def test_supplied_member_must_agree_with_the_compact_field() -> None:
    wrong = dict(SUPPLEMENT, definitionOfDone=[
        dict(SUPPLEMENT["definitionOfDone"][0], description="Something else")])
    with pytest.raises(CompactPayloadError) as raised:
        compact_create().to_wire(wrong)
    assert raised.value.reason == "conflict"
    assert raised.value.member == "/payload/definitionOfDone"


def test_compact_field_without_wire_member_is_refused_unless_default() -> None:
    with pytest.raises(CompactPayloadError) as raised:
        compact_create(permissions=("repo.read",)).to_wire(SUPPLEMENT)
    assert raised.value.reason == "not-representable"
    assert raised.value.member == "/payload/permissions"


def test_conversion_equals_the_wire_payload() -> None:
    payload = compact_create().to_wire(SUPPLEMENT)["payload"]
    assert payload["coordinator"] == {"agentId": COORDINATOR, "agentCardVersion": 1,
                                      "leaseId": LEASE}
    assert payload["budget"] == {"modelTokenLimit": 100000, "toolCallLimit": 1000}
    assert payload["deadline"] == "2026-08-01T00:00:00Z"
    assert payload["coordinatorLeaseSeconds"] == 300
    assert "title" not in payload and "permissions" not in payload


def test_membership_roles_map_to_one_wire_role() -> None:
    command = Command(
        action_id="urn:missionweaveprotocol:action:m", kind=CommandKind.ADD_MEMBERSHIP,
        actor=Principal.agent(COORDINATOR), group_id=GROUP, issued_at=NOW,
        payload=AddMembershipPayload(principal=Principal.agent("urn:x:agent:w"),
                                     roles=(Role.WORKER,), provisional=True),
    )
    payload = command.to_wire({"scopes": ["group.read"]})["payload"]
    assert payload == {"member": {"type": "agent", "id": "urn:x:agent:w"}, "role": "worker",
                       "provisional": True, "scopes": ["group.read"]}
    with pytest.raises(CompactPayloadError) as raised:
        command.to_wire()
    assert raised.value.member == "/payload/scopes"
    two = command.model_copy()
    two.payload = AddMembershipPayload(principal=Principal.agent("urn:x:agent:w"),
                                       roles=(Role.WORKER, Role.REVIEWER))
    with pytest.raises(CompactPayloadError) as raised:
        two.to_wire({"scopes": ["group.read"]})
    assert raised.value.reason == "not-representable"


def test_rows_name_members_the_engine_defines() -> None:
    """Every row's wire member is one the engine's table defines for that kind (the Rust
    table is the authority; nothing is re-decided here), and every row names a field of the
    kind's compact model."""
    models = {kind.value: model for kind, model in PAYLOAD_MODELS.items()}
    for kind, rows in ROWS.items():
        members = _native.payload_members(kind)
        assert members is not None, kind
        names = {name for name, _ in members}
        for row in rows:
            assert row.path[0] in names, (kind, row)
            assert row.field in models[kind].model_fields, (kind, row.field)
    for kind, fields in DROPPED.items():
        assert fields <= set(models[kind].model_fields)
    assert _native.payload_members("no.such.kind") is None


def test_human_identity_signs_the_wire_form_and_core_performs_it() -> None:
    core = make_core()
    signed = owner().sign(compact_create(), supplement=SUPPLEMENT)
    assert signed.compact_payload is None and signed.signature is not None
    assert owner().verify(signed)
    event = asyncio.run(core.perform(signed))
    assert str(event.kind) == "mission.created"


def test_codec_signs_a_command_as_its_wire_form() -> None:
    complete = compact_create().to_wire_command(SUPPLEMENT)
    signed = SignedDocumentCodec().sign(SignedDocumentKind.COMMAND, complete, KEYS[OWNER])
    assert signed.document["payload"] == complete.to_wire()["payload"]
    with pytest.raises(CompactPayloadError):
        SignedDocumentCodec().sign(SignedDocumentKind.COMMAND, compact_create(), KEYS[OWNER])
    event = asyncio.run(make_core().perform(signed.canonical_document_bytes))
    assert str(event.kind) == "mission.created"


def test_core_perform_converts_a_compact_command_or_names_the_gap() -> None:
    core = make_core()
    with pytest.raises(CompactPayloadError) as raised:
        asyncio.run(core.perform(compact_create()))
    assert raised.value.member == "/payload/definitionOfDone"


def reference_signed(signature: Any) -> Command:
    """A complete Command signed the reference's way: ``sign_canonical`` over its
    ``signing_payload()`` — a python-mode by-alias dump *with* ``null`` members."""
    command = compact_create().to_wire_command(SUPPLEMENT)
    if signature == "sign_canonical":
        dump = command.model_dump(mode="json", by_alias=True,
                                  exclude={"signature", "verified_signing_hash"})
        assert dump["sessionEpoch"] is None  # the null members the reference signs
        signature = sign_canonical(dump, KEYS[OWNER].to_base64url())
    command.signature = signature
    return command


def test_reference_signature_with_null_members_is_refused() -> None:
    core = make_core()
    command = reference_signed("sign_canonical")
    # The legacy string became an envelope under the reference's legacy key ID.
    assert command.signature is not None
    assert command.signature.key_id == f"{OWNER}:legacy-command-key"
    with pytest.raises(AuthorizationDenied) as raised:
        asyncio.run(core.perform(command))
    assert raised.value.wire_code == "AUTH_INVALID_SIGNATURE"
    # Under the owner's real key ID too: the bytes signed are not the wire form's.
    command.signature = SignatureEnvelope(key_id=KEYS[OWNER].key_id, created_at=NOW,
                                          value=command.signature.value)
    with pytest.raises(AuthorizationDenied) as raised:
        asyncio.run(core.perform(command))
    assert raised.value.wire_code == "AUTH_INVALID_SIGNATURE"


def test_placeholder_signature_is_refused() -> None:
    core = make_core()
    command = reference_signed("gateway-session-authority")
    with pytest.raises((AuthorizationDenied, InvalidCommand)) as raised:
        asyncio.run(core.perform(command))
    assert raised.value.wire_code in ("AUTH_INVALID_SIGNATURE", "SCHEMA_VALIDATION_FAILED")
    assert raised.value.wire_code is not None


def test_system_actor_is_the_wire_service() -> None:
    assert ActorType.SYSTEM is ActorType.SERVICE
