"""``documents``: projection → normative document and back. Inputs are a Core flow's query
answers (Mission, Group, Membership, WorkItem, the signed Artifact manifest) and plain dicts in
the schema's shape for the kinds the Core does not serve yet. Every signed output verifies with
the six-stage verifier against the fixture's Registry; every rule has a negative."""

from __future__ import annotations

import asyncio
import copy
import json
from datetime import datetime, timedelta, timezone
from typing import Any, Dict

import pytest

from core_support import (
    CONVERSATION,
    COORDINATOR,
    GROUP,
    HASH_A,
    KEYS,
    MISSION,
    NOW,
    ORG,
    OTHER_HUMAN,
    OWNER,
    REGISTRY,
    SERVICE,
    W1,
    WORKER,
    accept,
    authorize,
    by_worker,
    create,
    make_core,
    offer,
    publish,
)
from missionweaveprotocol.documents import (
    ArtifactLocation,
    DocumentMappingError,
    DocumentSigner,
    ProtocolDocumentAdapter,
    ProtocolDocumentConfig,
)
from missionweaveprotocol.errors import SignedDocumentVerificationError
from missionweaveprotocol.models import ActorType, Principal, Query, QueryKind, QueryResult
from missionweaveprotocol.signed_documents import SignedDocumentCodec
from missionweaveprotocol.signed_documents import SignedDocumentKind

ENDPOINT = "wss://agents.acme.example/reviewer"


def signer(principal: str, key_of: str = "") -> DocumentSigner:
    key = KEYS[key_of or principal]
    return DocumentSigner(principal, key.key_id, key)


def config(**changes: Any) -> ProtocolDocumentConfig:
    values: Dict[str, Any] = dict(
        organization_id=ORG,
        endpoints=(ENDPOINT,),
        max_concurrency=2,
        registry_signer=signer(SERVICE),
        principal_signers=(signer(OWNER), signer(COORDINATOR), signer(WORKER)),
    )
    values.update(changes)
    return ProtocolDocumentConfig(**values)


def adapter(**changes: Any) -> ProtocolDocumentAdapter:
    return ProtocolDocumentAdapter(config(**changes), key_resolver=REGISTRY)


def verifies(kind: str, document: Dict[str, Any]) -> None:
    raw = json.dumps(document).encode()
    assert SignedDocumentCodec().verify(SignedDocumentKind(kind), raw, REGISTRY).document == document


@pytest.fixture(scope="module")
def answers() -> Dict[str, QueryResult]:
    """A Core flow up to a published Artifact; the query answers it gives."""

    async def main() -> Dict[str, QueryResult]:
        core = make_core()
        for command in (create(), authorize(), offer(), accept()):
            await core.perform(command)
        item = (await core.query(Query(kind=QueryKind.WORK_ITEM, entity_id=W1))).value
        assert isinstance(item, dict)
        epoch, lease = item["owner"]["ownershipEpoch"], item["owner"]["ownershipLeaseId"]
        await core.perform(by_worker("work.start", W1, epoch, lease))
        execution = (await core.query(Query(kind=QueryKind.EXECUTION_LEASE, entity_id=W1))).value
        assert isinstance(execution, dict)
        await core.perform(publish(W1, epoch, execution["leaseId"]))
        queries = {
            "mission": Query(kind=QueryKind.MISSION, entity_id=MISSION),
            "group": Query(kind=QueryKind.GROUP, entity_id=GROUP),
            "membership": Query(kind=QueryKind.MEMBERSHIP, entity_id=OWNER, group_id=GROUP,
                                actor_type=ActorType.HUMAN),
            "work_item": Query(kind=QueryKind.WORK_ITEM, entity_id=W1),
            "artifact": Query(kind=QueryKind.ARTIFACT,
                              entity_id="urn:missionweaveprotocol:artifact:ledger"),
        }
        return {name: await core.query(query) for name, query in queries.items()}

    return asyncio.run(main())


def card() -> Dict[str, Any]:
    key = KEYS[WORKER]
    return {
        "agentId": WORKER, "cardVersion": 1, "displayName": "Reviewer",
        "owner": {"type": "human", "id": OWNER}, "status": "active", "protocolVersions": ["0.1"],
        "publicKeys": [{"keyId": key.key_id, "algorithm": "Ed25519", "publicKey": key.public_key,
                        "validFrom": "2026-01-01T00:00:00Z"}],
        "capabilities": [{"id": "text.summarise", "version": "1.2.0",
                          "inputSchema": "https://schemas.acme.example/in.json",
                          "inputSchemaHash": HASH_A,
                          "outputSchema": "https://schemas.acme.example/out.json",
                          "outputSchemaHash": HASH_A, "constraints": {},
                          "verifiedEvidence": ["urn:missionweaveprotocol:evidence:s-2026"]}],
        "issuedAt": "2026-07-01T00:00:00Z",
    }


def approval() -> Dict[str, Any]:
    return {
        "approvalId": "urn:missionweaveprotocol:approval:1", "kind": "mission_final",
        "decision": "approved", "missionId": MISSION, "groupId": GROUP, "missionRevision": 3,
        "artifactHashes": [HASH_A], "acceptancePolicyVersion": "2.1.0",
        "approver": {"type": "human", "id": OWNER}, "comments": "", "conditions": [],
        "occurredAt": "2026-07-15T10:00:00Z",
    }


def evidence() -> Dict[str, Any]:
    return {
        "evidenceId": "urn:missionweaveprotocol:evidence:test-1", "missionId": MISSION,
        "groupId": GROUP, "workItemId": W1, "type": "deterministic_test",
        "subject": {"type": "work_item", "id": W1}, "criterionIds": ["c1"],
        "method": "pytest ledger suite", "result": "passed", "artifactHashes": [HASH_A],
    }


def conversation() -> Dict[str, Any]:
    return {
        "conversationId": CONVERSATION, "missionId": MISSION, "groupId": GROUP,
        "type": "work_item", "primaryWorkItemId": W1, "title": "Ledger",
        "access": {"mode": "group"}, "createdBy": {"type": "agent", "id": COORDINATOR},
        "createdAt": "2026-07-15T09:30:00Z", "state": "active", "revision": 1,
    }


def message() -> Dict[str, Any]:
    return {
        "messageId": "urn:missionweaveprotocol:message:1", "missionId": MISSION,
        "groupId": GROUP, "conversationId": CONVERSATION,
        "author": {"type": "agent", "id": WORKER}, "kind": "message", "authority": False,
        "content": [{"type": "text", "text": "ledger balances"}],
        "committedAt": "2026-07-15T09:31:00Z",
    }


def missing(error: pytest.ExceptionInfo[DocumentMappingError], member: str) -> None:
    assert error.value.code == "SCHEMA_VALIDATION_FAILED"
    assert error.value.reason == "schema-invalid"
    assert f'"{member}"' in str(error.value)


# -- configuration -----------------------------------------------------------------------


def test_config_accepts_valid_deployment_metadata() -> None:
    made = config(endpoints=[ENDPOINT, "wss://b.example/x"])
    assert made.endpoints == (ENDPOINT, "wss://b.example/x")
    assert signer(OWNER).public_key == KEYS[OWNER].public_key
    assert signer(OWNER).algorithm == "Ed25519"


@pytest.mark.parametrize("changes", [
    {"organization_id": "not a uri"},
    {"endpoints": ()},
    {"endpoints": ("https://agents.acme.example/x",)},
    {"max_concurrency": 0},
    {"max_concurrency": True},
    {"registry_signer": KEYS[SERVICE]},
    {"principal_signers": (signer(OWNER), signer(OWNER))},
])
def test_config_refuses_invalid_metadata(changes: Dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        config(**changes)


def test_signer_and_location_identifiers_follow_the_wire_rule() -> None:
    assert ArtifactLocation("https://store.example.org/x", 0).size_bytes == 0
    with pytest.raises(ValueError):
        DocumentSigner("reviewer", KEYS[WORKER].key_id, KEYS[WORKER])
    with pytest.raises(ValueError):
        ArtifactLocation("relative/path", 1)
    with pytest.raises(ValueError):
        ArtifactLocation("https://store.example.org/x", -1)


# -- signed kinds ------------------------------------------------------------------------


def test_agent_card_is_signed_by_the_registry_signer_with_the_deployment_metadata() -> None:
    document = adapter().agent_card(card())
    verifies("agent-card", document)
    assert document["organizationId"] == ORG
    assert document["endpoints"] == [{"transport": "wss", "uri": ENDPOINT}]
    assert document["maxConcurrency"] == 2
    assert document["signature"]["keyId"] == KEYS[SERVICE].key_id


def test_agent_card_negatives() -> None:
    partial = card()
    del partial["displayName"]
    with pytest.raises(DocumentMappingError) as error:
        adapter().agent_card(partial)
    missing(error, "displayName")
    with pytest.raises(DocumentMappingError) as error:
        adapter().agent_card({**card(), "organizationId": "urn:missionweaveprotocol:org:other"})
    assert error.value.reason == "mismatch" and error.value.member == "organizationId"
    # A human key is no Organization service Principal: the Registry refuses it (stage 4).
    with pytest.raises(DocumentMappingError) as error:
        adapter(registry_signer=signer(OWNER)).agent_card(card())
    assert error.value.reason == "signer-not-bound"
    assert error.value.code == "AUTH_INVALID_SIGNATURE"


def test_artifact_query_answer_is_resigned_identically(answers: Dict[str, QueryResult]) -> None:
    answer = answers["artifact"]
    assert isinstance(answer.value, dict)
    location = ArtifactLocation(answer.value["uri"], answer.value["sizeBytes"])
    document = adapter().artifact(answer, card(), location)
    verifies("artifact", document)
    # Deterministic Ed25519 by the same producer key: the Core's stored manifest, byte for byte.
    assert document == answer.value


def test_artifact_negatives(answers: Dict[str, QueryResult]) -> None:
    stored = answers["artifact"].value
    assert isinstance(stored, dict)
    with pytest.raises(DocumentMappingError) as error:
        adapter(principal_signers=(signer(OWNER),)).artifact(stored)
    assert error.value.reason == "no-signer" and error.value.member == "/producer/agentId"
    # Someone else's signature is never replaced.
    foreign = {**stored, "signature": {**stored["signature"], "keyId": KEYS[OWNER].key_id}}
    with pytest.raises(DocumentMappingError) as error:
        adapter().artifact(foreign)
    assert error.value.reason == "signed-by-another-key"
    with pytest.raises(DocumentMappingError) as error:
        adapter().artifact({**stored, "signature": "not an envelope"})
    assert error.value.reason == "signed-by-another-key"
    with pytest.raises(DocumentMappingError) as error:
        adapter().artifact(stored, location=ArtifactLocation("https://elsewhere.example/x", 1))
    assert error.value.reason == "mismatch" and error.value.member == "uri"
    with pytest.raises(DocumentMappingError) as error:
        adapter().artifact(stored, {**card(), "cardVersion": 7})
    assert error.value.member == "agentCardVersion"
    partial = {k: v for k, v in stored.items() if k not in ("signature", "classification")}
    with pytest.raises(DocumentMappingError) as error:
        adapter().artifact(partial)
    missing(error, "classification")


def test_evidence_is_signed_by_its_generator(answers: Dict[str, QueryResult]) -> None:
    at = datetime(2026, 7, 15, 11, 30, tzinfo=timezone(timedelta(hours=2)))
    document = adapter().evidence(evidence(), answers["work_item"],
                                  generated_by=Principal.agent(WORKER), created_at=at)
    verifies("evidence", document)
    assert document["createdAt"] == "2026-07-15T09:30:00Z"
    assert document["generatedBy"] == {"type": "agent", "id": WORKER}


def test_evidence_negatives(answers: Dict[str, QueryResult]) -> None:
    generated_by = {"type": "agent", "id": WORKER}
    partial = {k: v for k, v in evidence().items() if k != "method"}
    with pytest.raises(DocumentMappingError) as error:
        adapter().evidence(partial, generated_by=generated_by, created_at=NOW)
    missing(error, "method")
    # No createdAt is invented.
    with pytest.raises(DocumentMappingError) as error:
        adapter().evidence(evidence(), generated_by=generated_by)
    assert "createdAt" in str(error.value)
    with pytest.raises(DocumentMappingError) as error:
        adapter().evidence(evidence(), generated_by=generated_by, created_at=datetime(2026, 1, 1))
    assert error.value.reason == "naive-timestamp"
    other = {**evidence(), "workItemId": "urn:missionweaveprotocol:work:other"}
    with pytest.raises(DocumentMappingError) as error:
        adapter().evidence(other, answers["work_item"], generated_by=generated_by, created_at=NOW)
    assert error.value.member == "workItemId"
    with pytest.raises(DocumentMappingError) as error:
        adapter().evidence(evidence(), generated_by={"type": "agent", "id": "urn:x:unknown"},
                           created_at=NOW)
    assert error.value.reason == "no-signer"


def test_approval_is_signed_by_the_approver(answers: Dict[str, QueryResult]) -> None:
    document = adapter().approval(approval(), answers["mission"])
    verifies("approval", document)
    # The projection's own policy version, never a hard-coded one.
    assert document["acceptancePolicyVersion"] == "2.1.0"


def test_approval_negatives(answers: Dict[str, QueryResult]) -> None:
    partial = {k: v for k, v in approval().items() if k != "acceptancePolicyVersion"}
    with pytest.raises(DocumentMappingError) as error:
        adapter().approval(partial)
    missing(error, "acceptancePolicyVersion")
    with pytest.raises(DocumentMappingError) as error:
        adapter().approval({**approval(), "groupId": "urn:missionweaveprotocol:group:other"},
                           answers["mission"])
    assert error.value.member == "groupId"
    # OWNER's signer holding another human's key: the Registry binds that key to OTHER_HUMAN.
    wrong = (signer(OWNER, key_of=OTHER_HUMAN),)
    with pytest.raises(DocumentMappingError) as error:
        adapter(principal_signers=wrong).approval(approval())
    assert error.value.reason == "signer-not-bound"
    # Without a Registry the adapter signs, and the receiver's verification refuses it.
    unchecked = ProtocolDocumentAdapter(config(principal_signers=wrong)).approval(approval())
    with pytest.raises(SignedDocumentVerificationError) as refused:
        adapter().projection("approval", unchecked)
    assert refused.value.protected_error.stage == "key-resolution"


# -- unsigned kinds ----------------------------------------------------------------------


def test_core_answers_are_normative_documents(answers: Dict[str, QueryResult]) -> None:
    made = adapter()
    assert made.mission(answers["mission"]) == answers["mission"].value
    assert made.group(answers["group"]) == answers["group"].value
    assert made.membership(answers["membership"], answers["mission"]) == \
        answers["membership"].value
    assert made.work_item(answers["work_item"], artifacts=[answers["artifact"]]) == \
        answers["work_item"].value
    item = answers["work_item"].value
    assert isinstance(item, dict)
    assert made.work_contract(item["contract"]) == item["contract"]


def test_unsigned_kind_negatives(answers: Dict[str, QueryResult]) -> None:
    made = adapter()
    mission = copy.deepcopy(answers["mission"].value)
    assert isinstance(mission, dict)
    del mission["approvalPolicy"]
    with pytest.raises(DocumentMappingError) as error:
        made.mission(mission)
    missing(error, "approvalPolicy")
    with pytest.raises(DocumentMappingError) as error:
        made.mission(answers["mission"], {**card(), "agentId": WORKER})
    assert error.value.member == "agentId"
    stored = answers["group"].value
    assert isinstance(stored, dict)
    group = {k: v for k, v in stored.items() if k != "mainConversationId"}
    with pytest.raises(DocumentMappingError) as error:
        made.group(group)
    missing(error, "mainConversationId")
    with pytest.raises(DocumentMappingError) as error:
        made.membership(answers["membership"],
                        {"missionId": MISSION, "groupId": "urn:missionweaveprotocol:group:x"})
    assert error.value.member == "groupId"
    with pytest.raises(DocumentMappingError) as error:
        made.work_item(answers["work_item"],
                       artifacts=[{"workItemId": "urn:missionweaveprotocol:work:other"}])
    assert error.value.member == "workItemId"
    with pytest.raises(DocumentMappingError) as error:
        made.group([1, 2])  # type: ignore[arg-type]
    assert error.value.reason == "not-an-object"
    with pytest.raises(DocumentMappingError) as error:
        made.group({"createdAt": NOW})
    assert error.value.reason == "not-json"


def test_work_contract_keeps_its_own_risk_and_approval() -> None:
    from core_support import contract

    own = contract(execution_approval="human_required", risk="high_risk")
    document = adapter().work_contract(own, dependency_ids=[])
    assert (document["sideEffectRisk"], document["executionApproval"]) == \
        ("high_risk", "human_required")
    with pytest.raises(DocumentMappingError) as error:
        adapter().work_contract({k: v for k, v in own.items() if k != "sideEffectRisk"})
    missing(error, "sideEffectRisk")
    with pytest.raises(DocumentMappingError) as error:
        adapter().work_contract(own, dependency_ids=[W1])
    assert error.value.member == "dependencyWorkItemIds"


def test_conversation_and_message(answers: Dict[str, QueryResult]) -> None:
    made = adapter()
    assert made.conversation(conversation(), answers["mission"],
                             work_item=answers["work_item"]) == conversation()
    assert made.message(message(), answers["mission"]) == message()
    with pytest.raises(DocumentMappingError) as error:
        made.conversation({**conversation(), "primaryWorkItemId": "urn:x:other"},
                          work_item=answers["work_item"])
    assert error.value.member == "primaryWorkItemId"
    with pytest.raises(DocumentMappingError) as error:
        made.message({k: v for k, v in message().items() if k != "author"})
    missing(error, "author")
    with pytest.raises(DocumentMappingError) as error:
        made.message({**message(), "missionId": "urn:x:other"}, answers["mission"])
    assert error.value.member == "missionId"
    with pytest.raises(DocumentMappingError) as error:
        made.conversation({**conversation(), "conversationId": "not an identifier"})
    assert error.value.code == "SCHEMA_VALIDATION_FAILED"


# -- the inverse -------------------------------------------------------------------------


def test_projection_verifies_signed_documents_and_strips_the_signature() -> None:
    made = adapter()
    document = made.approval(approval())
    assert made.projection("approval", document) == approval()
    raw = json.dumps(document).encode()
    assert made.projection("approval", raw) == approval()
    # Round trip: the projection signs back to the same document.
    assert made.approval(made.projection("approval", raw)) == document


def test_projection_refuses_tampered_and_unverifiable_documents() -> None:
    made = adapter()
    document = made.approval(approval())
    tampered = {**document, "decision": "denied"}
    with pytest.raises(SignedDocumentVerificationError) as error:
        made.projection("approval", tampered)
    assert error.value.protected_error.stage == "signature"
    without_registry = ProtocolDocumentAdapter(config())
    with pytest.raises(DocumentMappingError) as refused:
        without_registry.projection("approval", document)
    assert refused.value.reason == "no-registry"
    assert without_registry.projection("approval", document, key_resolver=REGISTRY) == approval()
    unsigned = approval()
    with pytest.raises(SignedDocumentVerificationError) as error:
        made.projection("approval", unsigned)
    assert error.value.protected_error.stage == "schema"


def test_projection_of_unsigned_kinds(answers: Dict[str, QueryResult]) -> None:
    made = adapter()
    group = answers["group"].value
    assert made.projection("group", json.dumps(group).encode()) == group
    assert made.projection("group", answers["group"]) == group
    with pytest.raises(DocumentMappingError) as error:
        made.projection("group", b'{"groupId": "urn:x:g", "groupId": "urn:x:h"}')
    assert error.value.code == "PROTOCOL_VIOLATION"
    with pytest.raises(DocumentMappingError) as error:
        made.projection("group", {"groupId": GROUP})
    assert error.value.reason == "schema-invalid" and error.value.keyword == "required"
    with pytest.raises(DocumentMappingError) as error:
        made.projection("common", {})
    assert error.value.reason == "unknown-kind"
