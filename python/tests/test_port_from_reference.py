"""A port test (issue 25): a script written against the reference runtime's documented API
(``reference-python.md`` §1.1 models and payloads, §1.5 ``Core``, §1.6 ``HumanIdentity``,
§1.25 frames) runs on this package. Two Missions are created with the compact
``CreateMissionPayload``, Members added with ``AddMembershipPayload``, a WorkItem run to
``verified`` with the compact WorkItem payloads, the Mission approved, both Groups replayed and
the wire frames encoded and parsed.

What differs from the reference, and only that (``docs/switching.md``):

- the signing calls (``sign_human`` / ``sign_agent`` below): the compact Command is converted to
  its normative wire Command with the ``supplement`` of wire members the compact form does not
  carry, and signed with the normative scheme (§6.4) — the reference signs
  ``sign_canonical(command.signing_payload())``, which our Core refuses
  (``test_compact_commands.py``);
- the ``registry=`` given to ``Core`` (our Core verifies every Command against the
  Organization's Registry; the reference's does not verify, its gap §7.1);
- query answers are normative documents, read with the reference's projections through
  ``Mission.from_document(…)`` / ``WorkItem.from_document(…)``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, Mapping, Optional

from core_support import (
    AUTHORITY,
    AUTHORITY_KEY,
    COORDINATOR,
    HASH_A,
    KEYS,
    OWNER,
    REGISTRY,
    SELECTION_BASIS,
    WORKER,
    contract,
    evidence,
)
from missionweaveprotocol import _native
from missionweaveprotocol.control import HumanIdentity
from missionweaveprotocol.core import Core
from missionweaveprotocol.crypto import SigningKey
from missionweaveprotocol.models import (
    AcceptWorkOfferPayload,
    AddMembershipPayload,
    ApproveMissionPayload,
    Artifact,
    CapabilityRequirement,
    Command,
    CommandKind,
    CreateMissionPayload,
    CreateWorkItemPayload,
    Evidence,
    EventKind,
    Mission,
    MissionStatus,
    OfferWorkItemPayload,
    OpenAgentSessionPayload,
    Principal,
    PublishArtifactPayload,
    Query,
    QueryKind,
    ResourceBudget,
    RetryPolicy,
    Role,
    SelectionBasis,
    StartWorkItemPayload,
    SubmitMissionPayload,
    SubmitWorkItemPayload,
    VerifyWorkItemPayload,
    WorkContract,
    WorkItem,
    WorkItemStatus,
)
from missionweaveprotocol.signed_documents import SignedDocumentCodec, SignedDocumentKind
from missionweaveprotocol.store import InMemoryStore
from missionweaveprotocol.wire import (
    AckFrame,
    Acknowledgement,
    EventFrame,
    GroupCursor,
    SubscribeFrame,
    encode_frame,
    parse_frame,
)

NOW = datetime(2026, 7, 15, 9, 30, tzinfo=timezone.utc)
DEADLINE = datetime(2026, 8, 1, tzinfo=timezone.utc)
_ids = itertools.count(1)


# -- the signing calls: the one place this script differs from the reference ----------------

def sign_human(identity: HumanIdentity, command: Command,
               supplement: Optional[Mapping[str, Any]] = None) -> Command:
    return identity.sign(command, supplement=supplement)


def sign_agent(key: SigningKey, command: Command,
               supplement: Optional[Mapping[str, Any]] = None) -> Command:
    signed = SignedDocumentCodec().sign(
        SignedDocumentKind.COMMAND, command.to_wire_command(supplement), key)
    return Command.from_wire(signed.canonical_document_bytes)


# -- the reference-shaped script ------------------------------------------------------------

def command(kind: CommandKind, actor: Principal, payload: Any, *, group_id: Optional[str] = None,
            **envelope: Any) -> Command:
    return Command(
        action_id=f"urn:missionweaveprotocol:action:port-{next(_ids)}",
        kind=kind, actor=actor, group_id=group_id,
        correlation_id="urn:missionweaveprotocol:correlation:port",
        issued_at=NOW, payload=payload, **envelope,
    )


def agent(agent_id: str, kind: CommandKind, payload: Any, group_id: str,
          **envelope: Any) -> Command:
    return command(kind, Principal.agent(agent_id), payload, group_id=group_id,
                   session_epoch=1, membership_epoch=1, **envelope)


def mission_ids(name: str) -> Dict[str, str]:
    base = "urn:missionweaveprotocol"
    return {"mission": f"{base}:mission:{name}", "group": f"{base}:group:{name}",
            "conversation": f"{base}:conversation:{name}",
            "item": f"{base}:work:{name}-ledger"}


def compact_contract() -> WorkContract:
    return WorkContract(
        goal="reconcile the ledger", deliverables=("the report",),
        acceptance_criteria=("balances",),
        deadline=datetime(2026, 12, 31, tzinfo=timezone.utc),
        required_capabilities=(CapabilityRequirement(id="text.summarise", minimum_version=1),),
        budget=ResourceBudget(tool_calls=10),
        retry_policy=RetryPolicy(max_attempts=3, maximum_backoff_seconds=60),
    )


async def run_mission(core: Core, owner: HumanIdentity, name: str) -> Dict[str, Any]:
    ids = mission_ids(name)
    group = ids["group"]
    # 1. The human owner creates the Mission (compact payload).
    create = command(CommandKind.CREATE_MISSION, owner.principal, CreateMissionPayload(
        mission_id=ids["mission"], group_id=group, coordinator_id=COORDINATOR,
        title=f"Close the books ({name})", objective="Close the July books",
        definition_of_done=("The ledger balances",),
        budget=ResourceBudget(model_tokens=100_000, tool_calls=1_000), deadline=DEADLINE,
    ), group_id=group)
    created = await core.perform(sign_human(owner, create, {
        "definitionOfDone": [{"criterionId": "ledger-balanced",
                              "description": "The ledger balances",
                              "evidenceRequired": ["deterministic_test"]}],
        "approvalPolicy": {"finalHumanApproval": True, "highRiskExecutionApproval": True},
        "coordinator": {"agentCardVersion": 1,
                        "leaseId": f"urn:missionweaveprotocol:lease:{name}-coordinator"},
        "mainConversationId": ids["conversation"],
    }))
    assert created.kind == EventKind.MISSION_CREATED
    # 2. The Coordinator adds the Worker.
    await core.perform(sign_agent(KEYS[COORDINATOR], agent(
        COORDINATOR, CommandKind.ADD_MEMBERSHIP,
        AddMembershipPayload(principal=Principal.agent(WORKER), roles=(Role.WORKER,)),
        group, coordinator_epoch=1), {"scopes": ["group"]}))
    # 3. A WorkItem: authorize, offer, accept, start, publish, submit, verify.
    item = ids["item"]
    await core.perform(sign_agent(KEYS[COORDINATOR], agent(
        COORDINATOR, CommandKind.CREATE_WORK_ITEM,
        CreateWorkItemPayload(work_item_id=item, contract=compact_contract()),
        group, coordinator_epoch=1),
        {"conversationId": ids["conversation"], "contract": contract()}))
    await core.perform(sign_agent(KEYS[COORDINATOR], agent(
        COORDINATOR, CommandKind.OFFER_WORK_ITEM,
        OfferWorkItemPayload(work_item_id=item, candidate_agent_ids=(WORKER,),
                             selection_basis=SelectionBasis()),
        group, coordinator_epoch=1),
        {"candidates": [{"offerId": f"urn:missionweaveprotocol:offer:{name}",
                         "agentId": WORKER, "agentCardVersion": 1}],
         "selectionBasis": SELECTION_BASIS}))
    await core.perform(sign_agent(KEYS[WORKER], agent(
        WORKER, CommandKind.ACCEPT_WORK_OFFER, AcceptWorkOfferPayload(work_item_id=item), group),
        {"capabilityPins": [{"id": "text.summarise", "version": "1.2.0"}]}))
    work = WorkItem.from_document(await core.query(Query(kind=QueryKind.WORK_ITEM,
                                                         entity_id=item)))
    assert work.status == WorkItemStatus.QUEUED and work.assignee_id == WORKER
    epoch = work.ownership_epoch
    ownership_lease = (await core.query(Query(kind=QueryKind.WORK_ITEM, entity_id=item))
                       ).value["owner"]["ownershipLeaseId"]
    await core.perform(sign_agent(KEYS[WORKER], agent(
        WORKER, CommandKind.START_WORK_ITEM,
        StartWorkItemPayload(work_item_id=item, ownership_epoch=epoch), group),
        {"leaseId": ownership_lease}))
    lease = (await core.query(Query(kind=QueryKind.EXECUTION_LEASE, entity_id=item))
             ).value["leaseId"]
    manifest = SignedDocumentCodec().sign(SignedDocumentKind.ARTIFACT, {
        "artifactId": f"urn:missionweaveprotocol:artifact:{name}",
        "contentHash": HASH_A, "uri": "https://store.example.org/objects/report",
        "sizeBytes": 1234, "mediaType": "application/json",
        "schemaUri": "https://example.org/report.json",
        "producer": {"agentId": WORKER, "agentCardVersion": 1,
                     "capabilities": [{"id": "text.summarise", "version": "1.2.0"}]},
        "missionId": ids["mission"], "groupId": group, "workItemId": item,
        "sourceArtifactHashes": [], "toolVersions": [], "modelVersions": [],
        "classification": "internal", "createdAt": "2026-07-15T09:30:00Z",
    }, KEYS[WORKER]).document
    artifact = Artifact.from_document(manifest)
    await core.perform(sign_agent(KEYS[WORKER], agent(
        WORKER, CommandKind.PUBLISH_ARTIFACT,
        PublishArtifactPayload(artifact=artifact, ownership_epoch=epoch,
                               execution_lease_id=lease), group)))
    await core.perform(sign_agent(KEYS[WORKER], agent(
        WORKER, CommandKind.SUBMIT_WORK_ITEM,
        SubmitWorkItemPayload(work_item_id=item, ownership_epoch=epoch,
                              execution_lease_id=lease, artifact_ids=(artifact.id,),
                              evidence=(Evidence(kind="deterministic_test",
                                                 description="ledger balances"),)), group),
        {"artifactHashes": [HASH_A],
         "evidence": [evidence(item, f"{name}-test", "deterministic_test")]}))
    verified = await core.perform(sign_agent(KEYS[COORDINATOR], agent(
        COORDINATOR, CommandKind.VERIFY_WORK_ITEM,
        VerifyWorkItemPayload(work_item_id=item, evidence=(
            Evidence(kind="review", description="reviewed"),)), group, coordinator_epoch=1),
        {"evidence": [evidence(item, f"{name}-review", "reviewer_assessment")]}))
    assert verified.kind == EventKind.WORK_ITEM_VERIFIED
    # 4. Submit and approve the Mission.
    await core.perform(sign_agent(KEYS[COORDINATOR], agent(
        COORDINATOR, CommandKind.SUBMIT_MISSION, SubmitMissionPayload(artifact_hashes=(HASH_A,)),
        group, coordinator_epoch=1)))
    mission = Mission.from_document(await core.query(Query(kind=QueryKind.MISSION,
                                                           entity_id=ids["mission"])))
    assert mission.status == MissionStatus.AWAITING_APPROVAL
    approved = await core.perform(sign_human(owner, command(
        CommandKind.APPROVE_MISSION, owner.principal, ApproveMissionPayload(
            approval_id=f"urn:missionweaveprotocol:approval:{name}",
            mission_revision=mission.revision, artifact_hashes=(HASH_A,),
            acceptance_policy_version="1.0.0"),
        group_id=group, membership_epoch=1)))
    assert approved.kind == EventKind.MISSION_APPROVED
    return ids


async def port_script() -> None:
    core = Core(InMemoryStore(), clock=lambda: NOW, registry=REGISTRY,
                authority_key=AUTHORITY_KEY, authority=Principal.system(AUTHORITY))
    key = KEYS[OWNER]
    owner = HumanIdentity(OWNER, key.to_base64url(), key.public_key, key.key_id)
    for agent_id in (COORDINATOR, WORKER):
        await core.perform(sign_agent(AUTHORITY_KEY, command(
            CommandKind.OPEN_AGENT_SESSION, Principal.system(AUTHORITY),
            OpenAgentSessionPayload(agent_id=agent_id))))
    first, second = await asyncio.gather(
        run_mission(core, owner, "books-a"), run_mission(core, owner, "books-b"))
    for ids in (first, second):
        mission = Mission.from_document(await core.query(Query(kind=QueryKind.MISSION,
                                                               entity_id=ids["mission"])))
        assert mission.status == MissionStatus.APPROVED
        events = await core.replay(ids["group"])
        assert [e.sequence for e in events] == list(range(1, len(events) + 1))
        assert events[-1].kind == EventKind.MISSION_APPROVED
        # Wire frames over the replayed Events.
        subscribe = SubscribeFrame(subscription_id="urn:missionweaveprotocol:subscription:1",
                                   groups=(GroupCursor(group_id=ids["group"]),))
        assert parse_frame(encode_frame(subscribe)) == subscribe
        frame = EventFrame(event=json.loads(events[-1].signed_bytes))
        assert isinstance(parse_frame(encode_frame(frame)), EventFrame)
        ack = AckFrame(acknowledgements=(Acknowledgement(group_id=ids["group"],
                                                          sequence=events[-1].sequence or 0),),
                       sent_at=NOW + timedelta(seconds=1))
        assert parse_frame(encode_frame(ack)) == ack


def test_reference_script_runs_with_only_the_signing_calls_changed() -> None:
    asyncio.run(port_script())


def test_without_the_supplement_the_gap_is_named() -> None:
    """The same script's first call without the wire members: the typed error names one."""
    from missionweaveprotocol._compact_wire import CompactPayloadError

    ids = mission_ids("gap")
    create = command(CommandKind.CREATE_MISSION, Principal.human(OWNER), CreateMissionPayload(
        mission_id=ids["mission"], group_id=ids["group"], coordinator_id=COORDINATOR,
        title="t", objective="o", definition_of_done=("d",), deadline=DEADLINE),
        group_id=ids["group"])
    key = KEYS[OWNER]
    owner = HumanIdentity(OWNER, key.to_base64url(), key.public_key, key.key_id)
    try:
        sign_human(owner, create)
    except CompactPayloadError as error:
        assert error.member == "/payload/definitionOfDone"
        assert str(error.code) == "INVALID_COMMAND"
    else:
        raise AssertionError("a compact Command lacking wire members was signed")
    assert _native.payload_members("mission.create") is not None
