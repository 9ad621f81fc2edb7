"""The signed human control interface (``missionweaveprotocol.control``, reference §1.6)
against a real Core: every operation's Command is signed with the human's key, verified by the
Core against its Registry and applied by the engine; the interface's own refusals are
``ValueError`` (``InvalidInputError``) with nothing performed. The Commands are built by the
Rust core (``core/engine/tests/control.rs`` checks each against the engine)."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, Tuple

import pytest

from core_support import (
    AUTHORITY,
    AUTHORITY_KEY,
    CONVERSATION,
    COORDINATOR,
    GROUP,
    HASH_A,
    HASH_B,
    KEYS,
    MISSION,
    NOW,
    OWNER,
    REGISTRY,
    TYPES,
    W1,
    WORKER,
    Clock,
    accept,
    by_coordinator,
    by_worker,
    contract,
    make_core,
    offer,
)
from missionweaveprotocol.control import (
    ControlReceipt,
    HumanControl,
    HumanIdentity,
    MissionInspection,
)
from missionweaveprotocol.core import (
    AuthorizationDenied,
    Core,
    NotFound,
    PolicyViolation,
    StaleCoordinatorEpoch,
)
from missionweaveprotocol.errors import InvalidInputError
from missionweaveprotocol.models import EventKind, Principal, Query, QueryKind
from missionweaveprotocol.registry import AgentRegistryKeyResolver, RegistryBuilder
from missionweaveprotocol.signed_documents import SignedDocumentCodec
from missionweaveprotocol.store import InMemoryStore
from missionweaveprotocol.signed_documents import SignedDocumentKind

RESOURCE = "urn:missionweaveprotocol:resource:prod-app"
BUDGET = {"toolCallLimit": 100, "modelTokenLimit": 10000}
EXTENSION = "urn:missionweaveprotocol:extension:human-control-create"


def owner_identity() -> HumanIdentity:
    key = KEYS[OWNER]
    return HumanIdentity(OWNER, key.to_base64url(), key.public_key, key.key_id)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def control_for(core: Core, identity: HumanIdentity) -> HumanControl:
    return HumanControl(core, identity, clock=Clock())


def created() -> Tuple[Core, HumanControl, ControlReceipt]:
    core = make_core()
    control = control_for(core, owner_identity())
    receipt = run(control.create(
        mission_id=MISSION, group_id=GROUP, coordinator_id=COORDINATOR, title="Close the books",
        objective="Close the July books", definition_of_done=["The ledger balances"],
        deadline=NOW.replace(month=8), budget=BUDGET, permissions=["ledger.read"],
    ))
    return core, control, receipt


def submit(core: Core, epoch: int = 1) -> None:
    run(core.perform(by_coordinator("mission.submit_for_approval",
                                    {"artifactHashes": [HASH_A, HASH_B]}, epoch)))


def log_length(core: Core) -> int:
    return len(run(core.replay(GROUP)))


def test_create_direct_request_changes_approve_and_inspect() -> None:
    core, control, receipt = created()
    assert receipt.event.kind == EventKind.MISSION_CREATED
    assert receipt.command.action_id.startswith("human-action:")
    assert receipt.event.extensions[EXTENSION].data == {
        "title": "Close the books", "permissions": ["ledger.read"]}
    assert control.identity.verify(receipt.command)

    content = "  keep the notes exactly  " + "x" * 600
    posted = run(control.direct(MISSION, content))
    assert posted.event.kind == EventKind.MESSAGE_POSTED
    assert posted.event.payload["message"]["content"] == [{"type": "text", "text": content}]

    submit(core)
    changes = run(control.request_changes(MISSION, "add the notes"))
    assert changes.event.kind == EventKind.MISSION_CHANGES_REQUESTED
    assert changes.command.payload["missionRevision"] == 2

    submit(core)
    approved, approval = run(control.approve(MISSION, comments="good"))
    assert approved.event.kind == EventKind.MISSION_APPROVED
    assert sorted(approved.command.payload["artifactHashes"]) == [HASH_A, HASH_B]
    # The Approval Decision is a normative signed document by the human (Approval profile).
    raw = _canonical(approval)
    verified = SignedDocumentCodec().verify(SignedDocumentKind.APPROVAL, raw, REGISTRY)
    assert verified.document["kind"] == "mission_final"
    assert verified.document["approver"] == {"type": "human", "id": OWNER}

    seen = run(control.inspect(MISSION))
    assert isinstance(seen, MissionInspection)
    assert seen.mission["state"] == "approved"
    assert seen.group["missionId"] == MISSION
    assert seen.work_items == ()
    assert [e.kind for e in seen.events][-1] == EventKind.MISSION_APPROVED
    assert run(control.accepted_command(approved.event.id)) == approved.command


def _canonical(document: Dict[str, Any]) -> bytes:
    from missionweaveprotocol._native import canonical_bytes

    return canonical_bytes(document)


def test_nothing_submitted_is_a_value_error_and_nothing_is_performed() -> None:
    core, control, _ = created()
    before = log_length(core)
    with pytest.raises(ValueError) as raised:
        run(control.request_changes(MISSION, "more"))
    assert isinstance(raised.value, InvalidInputError)
    assert raised.value.reason == "nothing_submitted"
    with pytest.raises(InvalidInputError) as again:
        run(control.approve(MISSION))
    assert again.value.reason == "nothing_submitted"
    assert log_length(core) == before


def test_create_needs_a_budget_and_a_definition_of_done() -> None:
    core = make_core()
    control = control_for(core, owner_identity())
    base: Dict[str, Any] = dict(mission_id=MISSION, group_id=GROUP, coordinator_id=COORDINATOR,
                                title="t", objective="o", deadline="2026-08-01T00:00:00Z")
    with pytest.raises(InvalidInputError) as raised:
        run(control.create(**base, definition_of_done=["done"]))
    assert raised.value.reason == "budget_required"
    with pytest.raises(InvalidInputError) as raised:
        run(control.create(**base, definition_of_done=[], budget=BUDGET))
    assert raised.value.reason == "empty_definition_of_done"
    with pytest.raises(NotFound):
        run(core.query(Query(kind=QueryKind.MISSION, entity_id=MISSION)))


def gated_queued() -> Tuple[Core, HumanControl]:
    core, control, _ = created()
    gated = contract(execution_approval="human_required", risk="high_risk")
    gated["allowedResources"] = [{"resource": RESOURCE, "operations": ["production.deploy"]}]
    for raw in (
        by_coordinator("work.authorize", {"workItemId": W1, "conversationId": CONVERSATION,
                                          "contract": gated}),
        offer(),
        accept(),
    ):
        run(core.perform(raw))
    return core, control


def test_approve_execution_opens_the_start_gate() -> None:
    core, control = gated_queued()
    owner = run(core.query(Query(kind=QueryKind.WORK_ITEM, entity_id=W1))).value["owner"]

    def start() -> bytes:
        return by_worker("work.start", W1, owner["ownershipEpoch"], owner["ownershipLeaseId"])

    with pytest.raises(PolicyViolation):
        run(core.perform(start()))
    receipt, stored = run(control.approve_execution(
        MISSION, work_item_id=W1, ownership_epoch=owner["ownershipEpoch"],
        operations=["production.deploy"], resources=[RESOURCE]))
    assert receipt.event.kind == EventKind.EXECUTION_APPROVAL_GRANTED
    assert stored["workItemId"] == W1
    assert stored["approvalId"] == receipt.command.payload["approvalId"]
    assert run(core.perform(start())).kind == EventKind.WORK_ITEM_STARTED


def test_replace_coordinator_fences_the_old_one_and_cancel_closes_the_mission() -> None:
    core, control, _ = created()
    replaced = run(control.replace_coordinator(MISSION, WORKER))
    assert replaced.event.kind == EventKind.COORDINATOR_REPLACED
    assert replaced.command.payload["leaseId"] == f"{MISSION}:coordinator-lease:2"
    with pytest.raises(StaleCoordinatorEpoch):
        submit(core, epoch=1)
    cancelled = run(control.cancel(MISSION, "budget cut"))
    assert cancelled.event.kind == EventKind.MISSION_CANCELLED
    mission = run(core.query(Query(kind=QueryKind.MISSION, entity_id=MISSION))).value
    assert mission["state"] == "cancelled"


def test_accepted_command_of_an_unknown_event_is_not_found() -> None:
    _, control, receipt = created()
    assert run(control.accepted_command(receipt.event.id)) == receipt.command
    with pytest.raises(NotFound):
        run(control.accepted_command("urn:missionweaveprotocol:event:unknown"))


def test_a_key_the_registry_does_not_bind_is_refused_by_the_core() -> None:
    core, _, _ = created()
    stranger = HumanIdentity.generate(OWNER)
    assert stranger.key_id == f"{OWNER}:signing-key"
    before = log_length(core)
    with pytest.raises(AuthorizationDenied) as raised:
        run(control_for(core, stranger).cancel(MISSION, "no"))
    assert raised.value.wire_code == "AUTH_INVALID_SIGNATURE"
    assert log_length(core) == before
    signed = owner_identity().sign(stranger.sign(
        run(control_for(core, owner_identity()).direct(MISSION, "hi")).command))
    assert owner_identity().verify(signed)
    assert not stranger.verify(signed)


def test_a_generated_identity_bound_in_the_registry_creates_a_mission() -> None:
    human = "urn:missionweaveprotocol:human:carol"
    identity = HumanIdentity.generate(human)
    builder = RegistryBuilder("urn:missionweaveprotocol:organization:acme")
    for pid, key in KEYS.items():
        builder.add_key(key.key_id, (TYPES[pid], pid), key.public_key_bytes,
                        "2026-01-01T00:00:00Z")
    builder.add_key(AUTHORITY_KEY.key_id, ("service", AUTHORITY), AUTHORITY_KEY.public_key_bytes,
                    "2026-01-01T00:00:00Z")
    builder.add_key(identity.key_id, ("human", human), identity.signing_key().public_key_bytes,
                    "2026-01-01T00:00:00Z")
    core = Core(InMemoryStore(), clock=Clock(), registry=AgentRegistryKeyResolver(builder.build()),
                authority_key=AUTHORITY_KEY, authority=Principal.service(AUTHORITY))
    receipt = run(control_for(core, identity).create(
        mission_id=MISSION, group_id=GROUP, coordinator_id=COORDINATOR, title="t",
        objective="o", definition_of_done=["done"], deadline="2026-08-01T00:00:00Z",
        budget=BUDGET))
    assert receipt.event.kind == EventKind.MISSION_CREATED
    assert receipt.event.actor == identity.principal
