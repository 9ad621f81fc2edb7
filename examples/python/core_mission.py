"""The authoritative Core: create a Mission from a signed wire Command, read it back, replay
its Group, and see a forged Command refused. Run: python examples/python/core_mission.py"""

import asyncio
from datetime import datetime, timezone
from typing import Any, Dict

from missionweaveprotocol import AgentRegistryKeyResolver, SignedDocumentCodec, SigningKey
from missionweaveprotocol.core import AuthorizationDenied, Core
from missionweaveprotocol.models import Principal, Query, QueryKind
from missionweaveprotocol.registry import RegistryBuilder
from missionweaveprotocol.store import InMemoryStore
from missionweaveprotocol.signed_documents import SignedDocumentKind

OWNER = "urn:example:human:alice"
AUTHORITY = "urn:example:service:group-authority"
GROUP = "urn:example:group:finance"
MISSION = "urn:example:mission:close-books"
NOW = datetime(2026, 7, 15, 9, 30, tzinfo=timezone.utc)

# Keys from fixed seeds so that the output is reproducible (use SigningKey.generate in earnest).
alice = SigningKey("urn:example:key:alice-1", bytes([21] * 32))
authority = SigningKey("urn:example:key:authority-1", bytes([30] * 32))
registry = (
    RegistryBuilder("urn:example:organization:acme")
    .add_key(alice.key_id, ("human", OWNER), alice.public_key, "2026-01-01T00:00:00Z")
    .add_key(authority.key_id, ("service", AUTHORITY), authority.public_key, "2026-01-01T00:00:00Z")
    .build()
)

create: Dict[str, Any] = {
    "protocolVersion": "0.1",
    "actionId": "urn:uuid:0b6d1c1e-6f0a-4b7e-9a53-2f1f0c9e7d11",
    "actor": {"type": "human", "id": OWNER},
    "groupId": GROUP,
    "kind": "mission.create",
    "correlationId": "urn:uuid:5e0c2a4b-1d3f-4e6a-8b7c-9d0e1f2a3b4c",
    "issuedAt": "2026-07-15T09:30:00Z",
    "payload": {
        "missionId": MISSION,
        "objective": "Close the July books",
        "definitionOfDone": [{"criterionId": "balanced", "description": "The ledger balances",
                              "evidenceRequired": ["human_review"]}],
        "budget": {"modelTokenLimit": 100000},
        "deadline": "2026-08-01T00:00:00Z",
        "approvalPolicy": {"finalHumanApproval": True, "highRiskExecutionApproval": True},
        "coordinator": {"agentId": "urn:example:agent:planner", "agentCardVersion": 1,
                        "leaseId": "urn:example:lease:c1"},
        "mainConversationId": "urn:example:conversation:main",
    },
}
signed = SignedDocumentCodec().sign(SignedDocumentKind.COMMAND, create, alice).canonical_document_bytes


async def main() -> None:
    core = Core(
        InMemoryStore(),
        clock=lambda: NOW,
        registry=AgentRegistryKeyResolver(registry),
        authority_key=authority,
        authority=Principal.service(AUTHORITY),
        event_id_prefix="urn:example:event:",  # deterministic IDs; urn:uuid v4 by default
    )
    event = await core.perform(signed)  # verified (six stages, freshness), then applied
    assert event.accepted_by is not None  # a Core Event is signed by the Group Authority
    print(f"{event.kind} #{event.sequence} {event.id} signed by {event.accepted_by.id}")
    mission = await core.query(Query(kind=QueryKind.MISSION, entity_id=MISSION))
    print(f"mission {mission.value['state']}, revision {mission.value['revision']}")
    print(f"replay: {[str(e.kind) for e in await core.replay(GROUP)]}")
    forged = signed.replace(b"Close the July books", b"Close the June books")
    try:
        await core.perform(forged)
    except AuthorizationDenied as refused:
        print(f"refused: {refused.code} {refused.wire_code} (nothing applied: "
              f"{core.store.last_sequence(GROUP)} Event)")


asyncio.run(main())
