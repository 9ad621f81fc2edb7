"""Shared helpers of the Core tests: the Rust engine tests' fixture (``core/engine/tests/
engine_fixture.rs`` and ``engine_work_fixture.rs``) in Python — the same principals, seeds,
Registry, payloads and instants — and signed wire Commands."""

from __future__ import annotations

import itertools
import json
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, List, Optional, Sequence

from missionweaveprotocol import _native
from missionweaveprotocol.core import Core
from missionweaveprotocol.crypto import SigningKey
from missionweaveprotocol.models import Command, Principal, SignatureEnvelope
from missionweaveprotocol.registry import AgentRegistryKeyResolver, RegistryBuilder
from missionweaveprotocol.signed_documents import SignedDocumentCodec
from missionweaveprotocol.store import InMemoryStore
from missionweaveprotocol.signed_documents import SignedDocumentKind

ORG = "urn:missionweaveprotocol:organization:acme"
OWNER = "urn:missionweaveprotocol:human:alice"
OTHER_HUMAN = "urn:missionweaveprotocol:human:bob"
COORDINATOR = "urn:missionweaveprotocol:agent:planner"
WORKER = "urn:missionweaveprotocol:agent:reviewer"
SERVICE = "urn:missionweaveprotocol:service:control-plane"
AUTHORITY = "urn:missionweaveprotocol:service:group-authority"
GROUP = "urn:missionweaveprotocol:group:finance"
MISSION = "urn:missionweaveprotocol:mission:close-books"
LEASE = "urn:missionweaveprotocol:lease:coordinator-1"
W1 = "urn:missionweaveprotocol:work:ledger"
W2 = "urn:missionweaveprotocol:work:report"
CONVERSATION = "urn:missionweaveprotocol:conversation:ledger"
HASH_A = "sha256:" + "a" * 64
HASH_B = "sha256:" + "b" * 64
NOW = datetime(2026, 7, 15, 9, 30, tzinfo=timezone.utc)

_PRINCIPALS = [
    ("human", OWNER, 21),
    ("human", OTHER_HUMAN, 22),
    ("agent", COORDINATOR, 23),
    ("agent", WORKER, 24),
    ("service", SERVICE, 25),
]
KEYS: Dict[str, SigningKey] = {
    pid: SigningKey(f"urn:missionweaveprotocol:key:{seed}", bytes([seed] * 32))
    for _, pid, seed in _PRINCIPALS
}
TYPES = {pid: kind for kind, pid, _ in _PRINCIPALS}
AUTHORITY_KEY = SigningKey("urn:missionweaveprotocol:key:authority", bytes([30] * 32))


def registry_bytes() -> bytes:
    builder = RegistryBuilder(ORG)
    for kind, pid, _ in _PRINCIPALS:
        key = KEYS[pid]
        builder.add_key(key.key_id, (kind, pid), key.public_key_bytes, "2026-01-01T00:00:00Z")
    builder.add_key(
        AUTHORITY_KEY.key_id, ("service", AUTHORITY), AUTHORITY_KEY.public_key_bytes,
        "2026-01-01T00:00:00Z",
    )
    return builder.build()


REGISTRY = AgentRegistryKeyResolver(registry_bytes())
_ACTIONS = itertools.count(1)


class Clock:
    """A settable clock (the Core's ``clock``)."""

    def __init__(self, now: datetime = NOW) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def session_open(agent: str, issued_at: datetime = NOW) -> bytes:
    """``…identity.session_open`` for ``agent``, by the Group Authority (the Core's default
    bootstrap service, §6.3): Organization-scoped, no Group, no epochs."""
    document = {
        "protocolVersion": "0.1",
        "actionId": action(),
        "actor": {"type": "service", "id": AUTHORITY},
        "kind": "ext.missionweaveprotocol.identity.session_open",
        "correlationId": "urn:missionweaveprotocol:correlation:1",
        "issuedAt": issued_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "payload": {"agentId": agent},
    }
    return SignedDocumentCodec().sign(SignedDocumentKind.COMMAND, document, AUTHORITY_KEY).canonical_document_bytes


def make_core(clock: Optional[Clock] = None, *, sessions: bool = True, **extra: Any) -> Core:
    """A Core over a fresh store (or ``store=``) in which both Agents opened Session Epoch 1
    (unless ``sessions=False``): every Agent Command needs one (§6.3)."""
    clock = clock or Clock()
    core = Core(
        extra.pop("store", None) or InMemoryStore(),
        clock=clock,
        registry=REGISTRY,
        authority_key=AUTHORITY_KEY,
        authority=Principal.service(AUTHORITY),
        event_id_prefix=extra.pop("event_id_prefix", "urn:missionweaveprotocol:event:py-"),
        **extra,
    )
    if sessions:
        now_ms = int(clock().timestamp() * 1000)
        for agent in (COORDINATOR, WORKER):
            # Set-up through the native object: synchronous, before any test awaits.
            core._native.perform(session_open(agent, clock()), now_ms)
    return core


def publish(item: str, epoch: int, lease: str, content_hash: str = HASH_A) -> bytes:
    """``artifact.publish`` by ``WORKER`` of ``content_hash`` for ``item`` (§13.1): the Artifact
    manifest is a normative signed document (Artifact profile), signed with the Worker's key.
    ``work.submit`` may cite only content published for its WorkItem."""
    manifest = {
        "artifactId": f"urn:missionweaveprotocol:artifact:{item.rsplit(':', 1)[-1]}",
        "contentHash": content_hash,
        "uri": "https://store.example.org/objects/report",
        "sizeBytes": 1234,
        "mediaType": "application/json",
        "schemaUri": "https://example.org/report.json",
        "producer": {"agentId": WORKER, "agentCardVersion": 1,
                     "capabilities": [{"id": "text.summarise", "version": "1.2.0"}]},
        "missionId": MISSION,
        "groupId": GROUP,
        "workItemId": item,
        "sourceArtifactHashes": [],
        "toolVersions": [],
        "modelVersions": [],
        "classification": "internal",
        "createdAt": NOW.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    signed_manifest = SignedDocumentCodec().sign(SignedDocumentKind.ARTIFACT, manifest, KEYS[WORKER]).document
    # artifact.publish names its WorkItem in the manifest only (closed payload members, §21).
    return signed("artifact.publish", WORKER,
                  {"manifest": signed_manifest, "ownershipEpoch": epoch, "leaseId": lease})


def action() -> str:
    return f"urn:missionweaveprotocol:action:py-{next(_ACTIONS)}"


def unsigned(
    kind: str,
    actor: str,
    payload: Dict[str, Any],
    *,
    action_id: Optional[str] = None,
    issued_at: datetime = NOW,
    **envelope: Any,
) -> Dict[str, Any]:
    """The unsigned wire Command with the epochs each actor type carries (as the Rust
    fixture): Agents a Session and Membership Epoch, humans a Membership Epoch except for the
    creation kinds."""
    doc: Dict[str, Any] = {
        "protocolVersion": "0.1",
        "actionId": action_id or action(),
        "actor": {"type": TYPES[actor], "id": actor},
        "groupId": GROUP,
        "kind": kind,
        "correlationId": "urn:missionweaveprotocol:correlation:1",
        "issuedAt": issued_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "payload": payload,
    }
    if TYPES[actor] == "agent":
        doc.update(sessionEpoch=1, membershipEpoch=1)
    elif TYPES[actor] == "human" and kind not in ("mission.create", "mission.create_follow_up"):
        doc["membershipEpoch"] = 1
    doc.update(envelope)
    return doc


def sign(actor: str, document: Dict[str, Any], *, key_of: Optional[str] = None) -> bytes:
    signed = SignedDocumentCodec().sign(SignedDocumentKind.COMMAND, document, KEYS[key_of or actor])
    return signed.canonical_document_bytes


def signed(kind: str, actor: str, payload: Dict[str, Any], **envelope: Any) -> bytes:
    return sign(actor, unsigned(kind, actor, payload, **envelope))


def signed_command(kind: str, actor: str, payload: Dict[str, Any], **envelope: Any) -> Command:
    """A models.Command built field by field, signed over its own wire dump."""
    document = unsigned(kind, actor, payload, **envelope)
    model = Command.model_validate(document)
    signature = SignedDocumentCodec().sign(SignedDocumentKind.COMMAND, model.signing_payload(), KEYS[actor])
    model.signature = SignatureEnvelope.model_validate(signature.document["signature"])
    return model


def by_coordinator(kind: str, payload: Dict[str, Any], epoch: int = 1, **envelope: Any) -> bytes:
    return signed(kind, COORDINATOR, payload, coordinatorEpoch=epoch, **envelope)


def create_payload(mission: str = MISSION) -> Dict[str, Any]:
    return {
        "missionId": mission,
        "objective": "Close the July books",
        "definitionOfDone": [
            {
                "criterionId": "ledger-balanced",
                "description": "The ledger balances",
                "evidenceRequired": ["deterministic_test", "human_review"],
            }
        ],
        "budget": {"modelTokenLimit": 100000, "toolCallLimit": 1000, "currency": "EUR",
                   "financialLimit": 50},
        "deadline": "2026-08-01T00:00:00Z",
        "approvalPolicy": {"finalHumanApproval": True, "highRiskExecutionApproval": True},
        "coordinator": {"agentId": COORDINATOR, "agentCardVersion": 1, "leaseId": LEASE},
        "mainConversationId": "urn:missionweaveprotocol:conversation:finance-main",
    }


def create(mission: str = MISSION, group: str = GROUP) -> bytes:
    return signed("mission.create", OWNER, create_payload(mission), groupId=group)


def contract(deps: Sequence[str] = (), execution_approval: str = "not_required",
             risk: str = "none") -> Dict[str, Any]:
    return {
        "contractVersion": 1,
        "goal": "reconcile the ledger",
        "requiredDeliverables": [
            {"deliverableId": "report", "description": "the report",
             "mediaType": "application/json", "schema": "https://example.org/report.json"}
        ],
        "acceptanceCriteria": [
            {"criterionId": "c1", "description": "balances",
             "evidenceRequired": ["deterministic_test"]}
        ],
        "inputArtifacts": [],
        "dependencyWorkItemIds": list(deps),
        "allowedResources": [],
        "requiredCapabilities": [{"id": "text.summarise", "version": "1.0.0"}],
        "deadline": "2026-12-31T00:00:00Z",
        "requestedUrgency": "normal",
        "businessImpact": "month end",
        "retryPolicy": {"maxAttempts": 3, "backoff": "fixed", "maxDelay": "PT1M",
                        "retryableFailures": []},
        "budget": {"toolCallLimit": 10},
        "sideEffectRisk": risk,
        "executionApproval": execution_approval,
    }


SELECTION_BASIS = json.loads(
    '{"requiredCapabilities":[{"id":"text.summarise","version":"1.0.0"}],'
    '"verifiedMatches":[{"id":"text.summarise","version":"1.2.0"}],"authorizationEligible":true,'
    '"availabilityEstimate":"2026-07-15T09:35:00Z","expectedCost":1.5,"reliabilityEvidence":[],'
    '"policyRulesApplied":["capability-match"]}'
)


def evidence(item: str, ident: str, kind: str) -> Dict[str, Any]:
    return {"evidenceId": f"urn:missionweaveprotocol:evidence:{ident}", "workItemId": item,
            "type": kind, "criterionIds": ["c1"], "result": "passed"}


def authorize(item: str = W1, deps: Sequence[str] = (), **contract_args: Any) -> bytes:
    return by_coordinator("work.authorize", {
        "workItemId": item, "conversationId": CONVERSATION,
        "contract": contract(deps, **contract_args)})


def offer(item: str = W1, agents: Sequence[str] = (WORKER,), round_: str = "r1") -> bytes:
    return by_coordinator("work.offer", {
        "workItemId": item,
        "candidates": [
            {"offerId": f"urn:missionweaveprotocol:offer:{round_}-{i}", "agentId": a,
             "agentCardVersion": 1}
            for i, a in enumerate(agents)
        ],
        "selectionBasis": SELECTION_BASIS,
    })


def accept(item: str = W1, agent: str = WORKER, **envelope: Any) -> bytes:
    return signed("work.accept_offer", agent, {
        "workItemId": item,
        "capabilityPins": [{"id": "text.summarise", "version": "1.2.0"}]}, **envelope)


def by_worker(kind: str, item: str, epoch: int, lease: str, **members: Any) -> bytes:
    payload: Dict[str, Any] = {"workItemId": item, "ownershipEpoch": epoch, "leaseId": lease}
    payload.update(members)
    return signed(kind, WORKER, payload)


def kinds(events: Sequence[Any]) -> List[str]:
    return [str(e.kind) for e in events]


def later(seconds: float) -> datetime:
    return NOW + timedelta(seconds=seconds)


__all__ = [name for name in dir() if not name.startswith("_")] + ["_native"]
