"""Quickstart: make a key, build the Registry that vouches for it, sign a Command, verify it,
and handle a rejection. Run: python examples/python/quickstart.py"""

from missionweaveprotocol import (
    AgentRegistryKeyResolver,
    PrincipalEvidence,
    SignedDocumentCodec,
    SignedDocumentKind,
    SignedDocumentVerificationError,
    SigningKey,
)
from missionweaveprotocol.registry import RegistryBuilder

ORGANIZATION = "urn:example:organization:acme"
AGENT = "urn:example:agent:planner"

# 1. A key for the Agent. The seed comes from os.urandom; keep `key.to_base64url()` secret.
key = SigningKey.generate("urn:example:key:planner-1")

# 2. The Registry: which key belongs to which principal, from when (§6.4 stage 4).
registry = (
    RegistryBuilder(ORGANIZATION)
    .add_key(key.key_id, PrincipalEvidence("agent", AGENT), key.public_key, "2026-01-01T00:00:00Z")
    .build()
)
resolver = AgentRegistryKeyResolver(registry)
print(f"registry: {len(registry)} bytes for {resolver.organization_id}")

# 3. Sign a Command: the codec adds the signature envelope and checks the result.
command = {
    "protocolVersion": "0.1",
    "actionId": "urn:uuid:0f7c6a52-3b1e-4c55-9d0e-2a8f1b9c7d11",
    "actor": {"type": "agent", "id": AGENT},
    "sessionEpoch": 1,
    "membershipEpoch": 1,
    "groupId": "urn:example:group:research",
    "kind": "message.post",
    "correlationId": "urn:uuid:5b2d9e40-8c1a-4f6b-a3d7-9e0c4b1a2f33",
    "issuedAt": "2026-07-15T09:30:00Z",
    "payload": {"text": "Draft ready for review."},
}
codec = SignedDocumentCodec()
signed = codec.sign(SignedDocumentKind.COMMAND, command, key)
wire_bytes = signed.canonical_document_bytes  # what you send
print(f"signed: {signed.signing_hash}")

# 4. Verify the exact received bytes (all six stages of §6.4).
verified = codec.verify(SignedDocumentKind.COMMAND, wire_bytes, resolver)
principal = verified.resolved_key.principal
print(f"verified: {verified.kind} by {principal.type} {principal.id} with {verified.resolved_key.key_id}")

# 5. Handle a rejection: the peer sees only the wire view; the stage and reason are for your logs.
tampered = wire_bytes.replace(b"Draft ready", b"Draft READY")
try:
    codec.verify(SignedDocumentKind.COMMAND, tampered, resolver)
except SignedDocumentVerificationError as error:
    print(f"rejected: {error} (stage {error.stage}, reason {error.reason})")
