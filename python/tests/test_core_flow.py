"""``core.Core`` end to end from signed wire Commands: a Mission from creation to approval, every
Event a normative signed document the package's own verifier accepts, queries, duplicates,
replay continuation."""

from __future__ import annotations

import asyncio
from typing import Any, Coroutine, List, TypeVar

import pytest

from core_support import (
    CONVERSATION,
    COORDINATOR,
    GROUP,
    HASH_A,
    MISSION,
    OWNER,
    REGISTRY,
    W1,
    WORKER,
    Clock,
    accept,
    authorize,
    by_coordinator,
    by_worker,
    contract,
    create,
    evidence,
    kinds,
    make_core,
    offer,
    publish,
    signed,
    signed_command,
)
from missionweaveprotocol.core import Core, NotFound
from missionweaveprotocol.ingress import CommandIngress
from missionweaveprotocol.models import (
    Command,
    Event,
    EventKind,
    MissionStatus,
    Query,
    QueryKind,
    WorkItemStatus,
)
from missionweaveprotocol.signed_documents import SignedDocumentCodec
from missionweaveprotocol.signed_documents import SignedDocumentKind

T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


def verified(event: Event) -> None:
    """The Event verifies with the six-stage verifier (Event profile) against the Registry."""
    result = SignedDocumentCodec().verify(SignedDocumentKind.EVENT, event.signed_bytes, REGISTRY)
    assert result.document["eventId"] == event.id


async def query(core: Core, kind: QueryKind, entity: str, **extra: Any) -> Any:
    return (await core.query(Query(kind=kind, entity_id=entity, **extra))).value


async def mission_to_approval(core: Core) -> List[Event]:
    events: List[Event] = []

    async def perform(raw: Any) -> Event:
        event = await core.perform(raw)
        verified(event)
        events.append(event)
        return event

    await perform(create())
    await perform(authorize())
    await perform(offer())
    await perform(accept())
    item = await query(core, QueryKind.WORK_ITEM, W1)
    assert item["state"] == WorkItemStatus.QUEUED
    epoch, lease = item["owner"]["ownershipEpoch"], item["owner"]["ownershipLeaseId"]
    await perform(by_worker("work.start", W1, epoch, lease))
    execution = await query(core, QueryKind.EXECUTION_LEASE, W1)
    assert execution["state"] == "active"
    await perform(publish(W1, epoch, execution["leaseId"]))
    await perform(by_worker(
        "work.submit", W1, epoch, execution["leaseId"],
        artifactHashes=[HASH_A], evidence=[evidence(W1, "test-1", "deterministic_test")]))
    await perform(by_coordinator("work.accept_result", {
        "workItemId": W1, "evidence": [evidence(W1, "review-1", "reviewer_assessment")]}))
    # The Coordinator submits the Mission (a models.Command, dumped by alias and signed).
    submit = signed_command("mission.submit_for_approval", COORDINATOR,
                            {"artifactHashes": [HASH_A]}, coordinatorEpoch=1)
    await perform(submit)
    mission = await query(core, QueryKind.MISSION, MISSION)
    assert mission["state"] == MissionStatus.AWAITING_APPROVAL
    await perform(signed("mission.approve", OWNER, {
        "approvalId": "urn:missionweaveprotocol:approval:1",
        "missionRevision": mission["revision"], "artifactHashes": [HASH_A],
        "acceptancePolicyVersion": "1.0.0"}))
    return events


def test_a_mission_from_creation_to_approval() -> None:
    async def main() -> None:
        core = make_core()
        events = await mission_to_approval(core)
        assert kinds(events) == [
            EventKind.MISSION_CREATED, EventKind.WORK_ITEM_CREATED, EventKind.WORK_ITEM_OFFERED,
            EventKind.WORK_OFFER_ACCEPTED, EventKind.WORK_ITEM_STARTED,
            EventKind.ARTIFACT_PUBLISHED, EventKind.WORK_ITEM_SUBMITTED,
            EventKind.WORK_ITEM_VERIFIED, EventKind.MISSION_SUBMITTED, EventKind.MISSION_APPROVED,
        ]
        assert [e.sequence for e in events] == list(range(1, 11))
        assert all(e.group_id == GROUP and e.accepted_by.id.endswith("group-authority")
                   for e in events)
        mission = await query(core, QueryKind.MISSION, MISSION)
        assert mission["state"] == MissionStatus.APPROVED
        items = await query(core, QueryKind.MISSION_WORK_ITEMS, MISSION)
        assert [i["state"] for i in items] == [WorkItemStatus.VERIFIED]
        assert (await query(core, QueryKind.GROUP, GROUP))["missionId"] == MISSION
        membership = await query(core, QueryKind.MEMBERSHIP, OWNER, group_id=GROUP,
                                 actor_type="human")
        assert membership["role"] == "mission_owner"
        # The log replays byte for byte.
        replayed = await core.replay(GROUP)
        assert [e.signed_bytes for e in replayed] == [e.signed_bytes for e in events]
        assert core.store.last_sequence(GROUP) == 10
    run(main())


def test_events_carry_the_signed_members_and_the_action_id() -> None:
    async def main() -> None:
        core = make_core(sessions=False)  # the first Event of the store: ID py-1
        raw = create()
        event = await core.perform(raw)
        command = Command.from_wire(raw)
        assert event.action_id == command.action_id
        assert event.kind is EventKind.MISSION_CREATED
        assert event.aggregate_revision == 1 and event.sequence == 1
        assert event.actor.id == OWNER
        assert event.command_hash is not None and event.command_hash.startswith("sha256:")
        assert event.id == "urn:missionweaveprotocol:event:py-1"
        assert event.signature.algorithm == "Ed25519"
        with pytest.raises(Exception):
            event.sequence = 2  # type: ignore[misc]  # frozen
        again = Event.from_signed_bytes(event.signed_bytes)
        assert again == event
    run(main())


def test_duplicate_returns_the_first_event_and_appends_nothing() -> None:
    async def main() -> None:
        core = make_core()
        raw = create()
        first = await core.perform(raw)
        again = await core.perform(raw)
        assert again.signed_bytes == first.signed_bytes
        assert core.store.last_sequence(GROUP) == 1
        # The same Command as a model made from its bytes: the same bytes are performed.
        model = Command.from_wire(raw)
        assert model.signed_bytes == raw
        assert (await core.perform(model)).id == first.id
    run(main())


def test_replay_continuation_and_bounds() -> None:
    async def main() -> None:
        core = make_core()
        await core.perform(create())
        for _ in range(6):
            await core.perform(by_coordinator("mission.renew_coordinator", {"leaseSeconds": 300}))
        seen: List[int] = []
        after = 0
        while True:
            events, continuation, last = await core.replay_page(GROUP, after=after, limit=3)
            seen.extend(e.sequence or 0 for e in events)
            assert last == 7
            if continuation is None:
                break
            after = continuation
        assert seen == list(range(1, 8))
        tail = await core.replay(GROUP, after=5)
        assert [e.sequence for e in tail] == [6, 7]
        assert await core.replay(GROUP, after=7) == ()
        with pytest.raises(NotFound) as unknown:
            await core.replay("urn:missionweaveprotocol:group:none")
        assert unknown.value.wire_code == "GROUP_NOT_FOUND"
    run(main())


def test_ingress_projects_verified_commands() -> None:
    async def main() -> None:
        raw = create()
        ingress = CommandIngress()
        verified_doc = ingress.verify(raw, REGISTRY)
        command = CommandIngress.project_verified(verified_doc)
        assert command.verified_signing_hash == verified_doc.signing_hash
        assert command.signed_bytes == raw
        assert command.kind == "mission.create" and command.actor.id == OWNER
        core = make_core()
        event = await core.perform(command)
        assert event.command_hash == verified_doc.signing_hash
        # Assigning a field drops the signed bytes: the model no longer says what was signed.
        command.correlation_id = "urn:missionweaveprotocol:correlation:2"
        assert command.signed_bytes is None
    run(main())


def test_the_clock_drives_freshness_and_lease_projection() -> None:
    async def main() -> None:
        clock = Clock()
        core = make_core(clock)
        await core.perform(create())
        await core.perform(authorize())
        await core.perform(offer())
        await core.perform(accept())
        item = await query(core, QueryKind.WORK_ITEM, W1)
        await core.perform(by_worker("work.start", W1, item["owner"]["ownershipEpoch"],
                                     item["owner"]["ownershipLeaseId"]))
        clock.now = clock.now.replace(hour=12)
        lease = await query(core, QueryKind.EXECUTION_LEASE, W1)
        assert lease["state"] == "expired"
    run(main())


def test_conversation_member_is_kept() -> None:
    # The envelope's conversationId on work.authorize is accepted (the payload's wins when equal).
    async def main() -> None:
        core = make_core()
        await core.perform(create())
        event = await core.perform(by_coordinator(
            "work.authorize", {"workItemId": W1, "contract": contract()},
            conversationId=CONVERSATION))
        assert event.work_item_id == W1
    run(main())


def test_worker_is_the_owner_after_accept() -> None:
    async def main() -> None:
        core = make_core()
        await core.perform(create())
        await core.perform(authorize())
        await core.perform(offer())
        event = await core.perform(accept())
        assert event.actor.id == WORKER
        item = await query(core, QueryKind.WORK_ITEM, W1)
        assert item["owner"]["agentId"] == WORKER
    run(main())


def test_two_cores_fed_the_same_commands_emit_identical_events() -> None:
    async def main() -> None:
        commands = [create(), authorize(), offer(), accept(),
                    by_coordinator("mission.renew_coordinator", {"leaseSeconds": 600})]
        logs = []
        for _ in range(2):
            core = make_core()
            for raw in commands:
                await core.perform(raw)
            logs.append([e.signed_bytes for e in await core.replay(GROUP)])
        assert logs[0] == logs[1] and len(logs[0]) == 5
    run(main())


def test_registry_evidence_may_be_given_as_bytes() -> None:
    from core_support import AUTHORITY, AUTHORITY_KEY, registry_bytes
    from missionweaveprotocol.models import Principal
    from missionweaveprotocol.store import InMemoryStore

    async def main() -> None:
        core = Core(InMemoryStore(), clock=Clock(), registry=registry_bytes(),
                    authority_key=AUTHORITY_KEY, authority=Principal.service(AUTHORITY))
        event = await core.perform(create())
        verified(event)
        assert event.id.startswith("urn:uuid:")  # random v4 Event IDs by default
    run(main())


def test_perform_all_returns_the_propagated_events() -> None:
    async def main() -> None:
        core = make_core()
        await core.perform(create())
        await core.perform(authorize())
        events = await core.perform_all(signed("mission.cancel", OWNER, {"reason": "no"}))
        assert kinds(events) == [EventKind.MISSION_CANCELLED, EventKind.WORK_ITEM_CANCELLED]
        assert [e.sequence for e in events] == [3, 4]
        for event in events:
            verified(event)
        item = await query(core, QueryKind.WORK_ITEM, W1)
        assert item["state"] == WorkItemStatus.CANCELLED
    run(main())


def test_session_epoch_and_budget_queries() -> None:
    """The Agents' Session Epochs (§6.3) and the Mission's budget account (§12)."""
    async def main() -> None:
        core = make_core()
        await core.perform(create())
        session = await query(core, QueryKind.SESSION_EPOCH, WORKER)
        assert session == {"agentId": WORKER, "sessionEpoch": 1}
        await core.perform(authorize())
        budget = await query(core, QueryKind.BUDGET_REMAINING, MISSION)
        assert budget["account"] == "mission"
        assert budget["reserved"]["toolCalls"] == 10
        assert budget["remaining"]["toolCalls"] == 1000
        item = await query(core, QueryKind.BUDGET_REMAINING, W1)
        assert item["account"] == "work_item" and item["limit"]["toolCalls"] == 10
        with pytest.raises(NotFound):
            await query(core, QueryKind.SESSION_EPOCH, "urn:missionweaveprotocol:agent:nobody")
    run(main())
