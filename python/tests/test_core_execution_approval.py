"""Execution Approvals through ``core.Core`` (§12, §10.2 row 6): the MissionOwner's signed
``approval.grant_execution`` opens the ``work.start`` gate of a contract that requires it and is
what ``policy.ExecutionAuthorization`` rests a high-risk grant on; a stale Ownership Epoch or a
non-owner is refused with nothing applied. The logic is the engine's (Rust); this checks the
Python surface performs it."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any, Dict

import pytest

from core_support import (
    CONVERSATION,
    MISSION,
    NOW,
    OTHER_HUMAN,
    OWNER,
    W1,
    WORKER,
    accept,
    by_coordinator,
    by_worker,
    contract,
    create,
    make_core,
    offer,
    signed,
)
from missionweaveprotocol.core import (
    AuthorizationDenied,
    Core,
    MissionWeaveProtocolError,
    PolicyViolation,
    StaleOwnershipEpoch,
)
from missionweaveprotocol.models import EventKind, Query, QueryKind
from missionweaveprotocol.payloads import ApprovalGrantExecutionWirePayload
from missionweaveprotocol.policy import (
    AuthorizationService,
    ExecutionAuthorization,
    PolicyError,
    ResourceUsage,
)

RESOURCE = "urn:missionweaveprotocol:resource:prod-app"
APPROVAL = "urn:missionweaveprotocol:approval:exec-1"
SECRET = b"0123456789abcdef0123456789abcdef"


def gated_contract() -> Dict[str, Any]:
    document = contract(execution_approval="human_required", risk="high_risk")
    document["allowedResources"] = [
        {"resource": RESOURCE, "operations": ["repo.read", "production.deploy"]}
    ]
    return document


def queued_core() -> Core:
    core = make_core()
    for raw in (
        create(),
        by_coordinator("work.authorize", {"workItemId": W1, "conversationId": CONVERSATION,
                                          "contract": gated_contract()}),
        offer(),
        accept(),
    ):
        asyncio.run(core.perform(raw))
    return core


def grant(actor: str = OWNER, epoch: int = 1) -> bytes:
    payload = ApprovalGrantExecutionWirePayload(
        approval_id=APPROVAL, work_item_id=W1, ownership_epoch=epoch,
        operations=["production.deploy"], resources=[RESOURCE],
        budget={"toolCallLimit": 5}, expires_in_seconds=600,
    ).to_payload()
    return signed("approval.grant_execution", actor, payload)


def owner(core: Core) -> Dict[str, Any]:
    item = asyncio.run(core.query(Query(kind=QueryKind.WORK_ITEM, entity_id=W1))).value
    found: Dict[str, Any] = item["owner"]
    return found


def start(core: Core) -> bytes:
    own = owner(core)
    return by_worker("work.start", W1, own["ownershipEpoch"], own["ownershipLeaseId"])


def refused(core: Core, raw: bytes, family: Any, wire_code: str) -> MissionWeaveProtocolError:
    with pytest.raises(MissionWeaveProtocolError) as raised:
        asyncio.run(core.perform(raw))
    error = raised.value
    assert type(error) is family, (type(error), error.wire_code, error.reason, error)
    assert error.wire_code == wire_code, (error.reason, error)
    return error


def test_the_mission_owner_grants_and_the_gated_work_starts() -> None:
    core = queued_core()
    refused(core, start(core), PolicyViolation, "APPROVAL_REQUIRED")
    event = asyncio.run(core.perform(grant()))
    assert event.kind == EventKind.EXECUTION_APPROVAL_GRANTED
    assert event.work_item_id == W1
    assert event.payload["approvalId"] == APPROVAL
    assert event.payload["ownershipEpoch"] == 1
    assert event.payload["approver"] == {"type": "human", "id": OWNER}
    stored = asyncio.run(core.query(Query(kind=QueryKind.EXECUTION_APPROVAL, entity_id=APPROVAL)))
    assert stored.value["workItemId"] == W1
    started = asyncio.run(core.perform(start(core)))
    assert started.kind == EventKind.WORK_ITEM_STARTED


def test_stale_epochs_and_other_humans_are_refused_with_nothing_applied() -> None:
    core = queued_core()
    refused(core, grant(epoch=2), StaleOwnershipEpoch, "WORK_STALE_OWNERSHIP")
    refused(core, grant(actor=OTHER_HUMAN), AuthorizationDenied, "AUTH_FORBIDDEN")
    # Nothing was appended: the last Event is still the acceptance, and the gate holds.
    assert asyncio.run(core.replay(core_group(core)))[-1].kind == EventKind.WORK_OFFER_ACCEPTED
    refused(core, start(core), PolicyViolation, "APPROVAL_REQUIRED")


def core_group(core: Core) -> str:
    mission = asyncio.run(core.query(Query(kind=QueryKind.MISSION, entity_id=MISSION))).value
    group: str = mission["groupId"]
    return group


def test_execution_authorization_rests_a_high_risk_grant_on_the_stored_approval() -> None:
    core = queued_core()
    asyncio.run(core.perform(grant()))
    asyncio.run(core.perform(start(core)))
    authority = ExecutionAuthorization(core, AuthorizationService(SECRET), clock=lambda: NOW)
    request: Dict[str, Any] = dict(
        worker_id=WORKER, session_epoch=1, work_item_id=W1, ownership_epoch=1,
        ttl=timedelta(minutes=1), allowed_resources=[RESOURCE],
        allowed_operations=["production.deploy"], budget=ResourceUsage(tool_calls=5),
    )
    issued = asyncio.run(authority.issue(**request, approval_id=APPROVAL))
    assert issued.claims.approval_id == APPROVAL
    with pytest.raises(PolicyError) as raised:
        asyncio.run(authority.issue(**request, approval_id="urn:missionweaveprotocol:approval:x"))
    assert (str(raised.value.code), raised.value.reason) == ("APPROVAL_REQUIRED",
                                                             "approval_not_found")
