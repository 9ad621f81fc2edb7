"""Issue 25: ``from_document`` / ``protocol_document()`` for WorkProposal, Conversation,
AgentCard, Approval, ExecutionApproval, CooperationOverrideGrant and GroupSnapshot — normative
documents (or the Core's answers, where no schema exists) read into the reference's
projections and written back, through the one row table per kind in ``_conversions``."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any, Dict

import pytest

from missionweaveprotocol import bundle
from missionweaveprotocol.documents import DocumentMappingError
from missionweaveprotocol.models import (
    AgentCard,
    Approval,
    Conversation,
    CooperationOverrideGrant,
    ExecutionApproval,
    GroupSnapshot,
    WorkProposal,
)


def vector(path: str) -> Dict[str, Any]:
    data = bundle.embedded_file(path)
    assert data is not None, path
    document: Dict[str, Any] = json.loads(data)
    return document


CONTRACT = vector("conformance/vectors/valid/work-contract.json")
T = "2026-07-15T08:00:05Z"
AT = datetime(2026, 7, 15, 8, 0, 5, tzinfo=timezone.utc)


def test_conversation_round_trip() -> None:
    document = vector("conformance/vectors/valid/conversation.json")
    conversation = Conversation.from_document(document)
    assert (conversation.id, conversation.group_id, conversation.title) == (
        document["conversationId"], document["groupId"], document["title"])
    assert conversation.work_item_id == document.get("primaryWorkItemId")
    assert conversation.protocol_document() == document
    renamed = conversation.model_copy(update={"title": "Renamed"})
    assert renamed.protocol_document()["title"] == "Renamed"
    with pytest.raises(DocumentMappingError):
        Conversation.from_document({**document, "createdAt": "yesterday"})
    # A blank title is refused by the schema when written (nothing half-written).
    with pytest.raises(DocumentMappingError):
        conversation.model_copy(update={"title": ""}).protocol_document()


@pytest.mark.parametrize("root", ["conformance/vectors/valid", "cryptography/vectors/signed-documents/valid"])
def test_signed_agent_card_approval_snapshot(root: str) -> None:
    card_doc = vector(f"{root}/agent-card.json")
    card = AgentCard.from_document(card_doc)
    assert (card.agent_id, card.version, card.display_name) == (
        card_doc["agentId"], card_doc["cardVersion"], card_doc["displayName"])
    assert card.owner == card_doc["owner"]["id"]
    assert card.public_key == card_doc["publicKeys"][0]["publicKey"]
    assert card.signature == card_doc["signature"]["value"]
    assert [c.id for c in card.capabilities] == [c["id"] for c in card_doc["capabilities"]]
    assert card.protocol_document() == card_doc
    approval_doc = vector(f"{root}/approval.json")
    approval = Approval.from_document(approval_doc)
    assert approval.mission_revision == approval_doc["missionRevision"]
    assert approval.artifact_hashes == tuple(approval_doc["artifactHashes"])
    assert approval.protocol_document() == approval_doc
    snapshot_doc = vector(f"{root}/group-snapshot.json")
    snapshot = GroupSnapshot.from_document(snapshot_doc)
    assert snapshot.event_ids == tuple(snapshot_doc["eventIds"])
    assert snapshot.signature.value == snapshot_doc["signature"]["value"]
    assert snapshot.protocol_document() == snapshot_doc
    # A signed document is never re-signed as a side effect: a changed member is refused.
    for changed in (card.model_copy(update={"display_name": "Other"}),
                    approval.model_copy(update={"mission_revision": approval.mission_revision + 1})):
        with pytest.raises(DocumentMappingError) as refused:
            changed.protocol_document()
        assert refused.value.reason == "signed-document-changed"


def proposal_answer() -> Dict[str, Any]:
    # The Core's ``work_proposal`` answer (``work::proposal_document``).
    return {
        "proposalId": "urn:missionweaveprotocol:proposal:p1",
        "missionId": "urn:missionweaveprotocol:mission:m1",
        "groupId": "urn:missionweaveprotocol:group:g1",
        "proposedBy": {"type": "agent", "id": "urn:missionweaveprotocol:agent:coder"},
        "contract": CONTRACT, "status": "open", "revision": 1, "createdAt": T, "updatedAt": T,
    }


def test_work_proposal_round_trip() -> None:
    answer = proposal_answer()
    proposal = WorkProposal.from_document(answer)
    assert proposal.status == "open" and proposal.authorized_work_item_id is None
    assert proposal.contract.goal == CONTRACT["goal"] and proposal.created_at == AT
    assert proposal.dependency_ids == tuple(CONTRACT.get("dependencyWorkItemIds", ()))
    assert proposal.protocol_document() == answer
    authorized = proposal.model_copy(update={
        "status": "authorized", "authorized_work_item_id": "urn:missionweaveprotocol:work:w1"})
    written = authorized.protocol_document()
    assert (written["status"], written["authorizedWorkItemId"]) == (
        "authorized", "urn:missionweaveprotocol:work:w1")
    with pytest.raises(Exception):
        WorkProposal.from_document({**answer, "status": "unknown"})
    with pytest.raises(DocumentMappingError):
        WorkProposal.from_document([answer])


def execution_answer() -> Dict[str, Any]:
    # The Core's ``execution_approval`` answer (``approval::record``).
    return {
        "approvalId": "urn:missionweaveprotocol:approval:x1", "kind": "work_execution",
        "missionId": "urn:missionweaveprotocol:mission:m1",
        "groupId": "urn:missionweaveprotocol:group:g1",
        "workItemId": "urn:missionweaveprotocol:work:w1", "ownershipEpoch": 2,
        "operations": ["deploy"], "resources": ["urn:x:cluster"],
        "budget": {"currency": "USD", "toolCallLimit": 3},
        "approver": {"type": "human", "id": "urn:missionweaveprotocol:human:owner"},
        "approvedAt": T, "expiresAt": "2026-07-15T08:05:05Z", "comments": "ok",
        "approvedAtMs": 1_784_102_405_000, "expiresAtMs": 1_784_102_705_000,
    }


def test_execution_approval_round_trip() -> None:
    answer = execution_answer()
    approval = ExecutionApproval.from_document(answer)
    assert approval.operations == ("deploy",) and approval.budget.tool_calls == 3
    assert approval.signature == "" and approval.approved_at == AT
    assert approval.protocol_document() == answer
    assert approval.model_copy(update={"comments": "fine"}).protocol_document()["comments"] == "fine"
    # The instants are also stored in milliseconds: not rewritten from here.
    with pytest.raises(DocumentMappingError) as refused:
        approval.model_copy(update={"expires_at": AT}).protocol_document()
    assert refused.value.reason == "not-representable"
    with pytest.raises(Exception):
        ExecutionApproval.from_document({**answer, "ownershipEpoch": 0})


def override_answer(consumed: bool) -> Dict[str, Any]:
    # The Core's ``cooperation_override_grant`` answer (``cooperation_override::stored``).
    answer: Dict[str, Any] = {"grant": {
        "grantId": "urn:missionweaveprotocol:grant:o1",
        "missionId": "urn:missionweaveprotocol:mission:m1",
        "groupId": "urn:missionweaveprotocol:group:g1",
        "policyName": "message_rate",
        "beneficiary": {"type": "agent", "id": "urn:missionweaveprotocol:agent:coder"},
        "targetCommandKind": "message.post",
        "targetActionId": "urn:missionweaveprotocol:action:a1", "reason": "incident",
        "approver": {"type": "human", "id": "urn:missionweaveprotocol:human:owner"},
        "grantedAt": T, "expiresAt": "2026-07-15T09:00:05Z",
    }}
    if consumed:
        answer["consumed"] = {"actionId": "urn:missionweaveprotocol:action:a1",
                              "actor": answer["grant"]["beneficiary"], "consumedAt": T}
    return answer


def test_cooperation_override_grant_round_trip() -> None:
    fresh = CooperationOverrideGrant.from_document(override_answer(False))
    assert fresh.policy_name == "message_rate" and fresh.consumed_at is None
    assert fresh.target_command_kind == "message.post" and fresh.signature == ""
    assert fresh.protocol_document() == override_answer(False)
    used = CooperationOverrideGrant.from_document(override_answer(True))
    assert used.consumed_at == AT
    assert used.model_copy(update={"reason": "drill"}).protocol_document()["grant"]["reason"] == "drill"
    broken = override_answer(False)
    broken["grant"]["policyName"] = "no_such_policy"
    with pytest.raises(Exception):
        CooperationOverrideGrant.from_document(broken)
