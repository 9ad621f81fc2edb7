"""Verify a batch of received documents in one call, on several threads, and sort the results.
Run: python examples/python/verify_many.py"""

from collections import Counter

from missionweaveprotocol import (
    AgentRegistryKeyResolver,
    SignedDocumentCodec,
    SignedDocumentVerificationError,
    SigningKey,
    VerifiedSignedDocument,
)
from missionweaveprotocol.registry import RegistryBuilder
from missionweaveprotocol.signed_documents import SignedDocumentKind

AGENTS = [f"urn:example:agent:worker-{i}" for i in range(4)]

keys = {agent: SigningKey.generate(f"{agent.replace('agent', 'key')}-1") for agent in AGENTS}
builder = RegistryBuilder("urn:example:organization:acme")
for agent, key in keys.items():
    builder.add_key(key.key_id, ("agent", agent), key, "2026-01-01T00:00:00Z")
resolver = AgentRegistryKeyResolver(builder.build())

codec = SignedDocumentCodec()
received = []
for n in range(1000):
    agent = AGENTS[n % len(AGENTS)]
    command = {
        "protocolVersion": "0.1",
        "actionId": f"urn:example:action:{n}",
        "actor": {"type": "agent", "id": agent},
        "sessionEpoch": 1,
        "membershipEpoch": 1,
        "groupId": "urn:example:group:research",
        "kind": "message.post",
        "correlationId": f"urn:example:correlation:{n}",
        "issuedAt": "2026-07-15T09:30:00Z",
        "payload": {"text": f"progress report {n}"},
    }
    data = codec.sign(SignedDocumentKind.COMMAND, command, keys[agent]).canonical_document_bytes
    if n % 100 == 99:  # ten documents altered in transit
        data = data.replace(b"progress", b"PROGRESS")
    received.append(("command", data))

# One call, the GIL released, results in input order: a verified document or the error for it.
results = codec.verify_many(received, resolver, threads=2)
verified = [r for r in results if isinstance(r, VerifiedSignedDocument)]
rejected = Counter(r.stage for r in results if isinstance(r, SignedDocumentVerificationError))
print(f"{len(results)} documents: {len(verified)} verified, {sum(rejected.values())} rejected")
for stage, count in sorted(rejected.items()):
    print(f"  rejected at stage {stage}: {count}")
print(f"signers: {len({v.resolved_key.key_id for v in verified})} keys")
