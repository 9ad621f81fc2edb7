"""Keys and first use: make keys, build a Registry for them, sign, verify (§6.4)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Dict

import pytest

from missionweaveprotocol import crypto
from missionweaveprotocol import registry as reg
from missionweaveprotocol import signed_documents as sd
from missionweaveprotocol.errors import InvalidInputError
from missionweaveprotocol.schema_formats import decode_base64url
from missionweaveprotocol.signed_documents import SignedDocumentKind

ORG = "urn:example:organization:acme"
AGENT = "urn:example:agent:planner"
KEY_ID = "urn:example:key:planner-1"
CODEC = sd.SignedDocumentCodec()


def command(agent: str = AGENT, issued_at: str = "2026-07-15T00:00:00Z") -> Dict[str, Any]:
    return {
        "protocolVersion": "0.1",
        "actionId": "urn:uuid:11111111-2222-4333-8444-555555555555",
        "actor": {"type": "agent", "id": agent},
        "sessionEpoch": 1,
        "membershipEpoch": 1,
        "groupId": "urn:example:group:research",
        "kind": "message.post",
        "correlationId": "urn:uuid:aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee",
        "issuedAt": issued_at,
        "payload": {"text": "hello"},
    }


def test_generate_keypair_seed_is_accepted_by_signing_key() -> None:
    # Regression: generate_keypair() returned base64url text that SigningKey refused.
    private, public = crypto.generate_keypair()
    key = crypto.SigningKey(KEY_ID, private)
    assert key.public_key == public and key.to_base64url() == private
    assert crypto.SigningKey.from_seed(KEY_ID, private).public_key == public
    assert crypto.load_private_key(private).public_key == public
    assert crypto.encode_private_key(private) == private
    assert crypto.encode_public_key(key) == public == crypto.encode_public_key(key.public_key_bytes)
    assert crypto.load_public_key(public) == key.public_key_bytes


def test_keys_round_trip_through_seed_bytes_and_base64url() -> None:
    key = crypto.SigningKey.generate(KEY_ID)
    other = crypto.SigningKey.generate(KEY_ID)
    assert key.key_id == KEY_ID and key.seed_bytes() != other.seed_bytes()
    assert len(key.seed_bytes()) == 32
    assert crypto.SigningKey(KEY_ID, key.seed_bytes()).public_key == key.public_key
    text = key.to_base64url()
    assert decode_base64url(text) == key.seed_bytes()
    padded = text + "="
    for form in (text, padded):
        assert crypto.SigningKey.from_base64url(KEY_ID, form).public_key_bytes == key.public_key_bytes
    assert crypto.load_private_key(key) is key
    assert text not in repr(key)


@pytest.mark.parametrize("bad", ["", "AAAA", "not base64url!", "A" * 43 + "==", "A" * 42 + "=", b"short", 7, None])
def test_bad_key_text_is_refused(bad: Any) -> None:
    with pytest.raises(InvalidInputError):
        crypto.load_private_key(bad)
    with pytest.raises(InvalidInputError):
        crypto.load_public_key(bad)
    if isinstance(bad, str):
        with pytest.raises(InvalidInputError):
            crypto.SigningKey.from_base64url(KEY_ID, bad)


def test_own_keys_registry_sign_verify() -> None:
    key = crypto.SigningKey.generate(KEY_ID)
    registry = (
        reg.RegistryBuilder(ORG)
        .add_key(key.key_id, reg.PrincipalEvidence("agent", AGENT), key.public_key, "2026-01-01T00:00:00Z")
        .build()
    )
    assert isinstance(registry, bytes) and registry.startswith(b'{"bindings":[')
    resolver = reg.AgentRegistryKeyResolver(registry)
    assert resolver.organization_id == ORG
    signed = CODEC.sign(SignedDocumentKind.COMMAND, command(), key)
    verified = CODEC.verify(SignedDocumentKind.COMMAND, signed.canonical_document_bytes, resolver)
    assert verified.resolved_key.key_id == KEY_ID and verified.resolved_key.principal.id == AGENT
    assert verified.signing_hash == signed.signing_hash
    # Another agent's command signed with this key: the signer rule fails at stage 4.
    stranger = CODEC.sign(SignedDocumentKind.COMMAND, command(agent="urn:example:agent:other"), key)
    with pytest.raises(sd.SignedDocumentVerificationError) as caught:
        CODEC.verify(SignedDocumentKind.COMMAND, stranger.canonical_document_bytes, resolver)
    assert caught.value.stage == "key-resolution" and caught.value.reason == "signer-mismatch"


def test_builder_accepts_every_principal_and_key_form() -> None:
    keys = [crypto.SigningKey.generate(f"urn:example:key:{i}") for i in range(4)]
    builder = reg.RegistryBuilder(ORG)
    builder.add_key(keys[0].key_id, {"type": "agent", "id": "urn:example:agent:a"}, keys[0].public_key_bytes,
                    datetime(2026, 1, 1, tzinfo=timezone.utc))
    builder.add_key(keys[1].key_id, ("service", "urn:example:service:s"), keys[1], "2026-01-01T00:00:00Z")
    builder.add_key(keys[2].key_id, reg.PrincipalEvidence("human", "urn:example:human:h"),
                    bytearray(keys[2].public_key_bytes), "2026-01-01T00:00:00Z")
    builder.add_key(keys[3].key_id, ("agent", "urn:example:agent:d"), keys[3].public_key + "=", "2026-01-01T00:00:00Z")
    registry = builder.build()
    assert b'"validFrom":"2026-01-01T00:00:00.000Z"' in registry
    assert reg.AgentRegistryKeyResolver(registry).organization_id == ORG


def test_history_revokes_a_key() -> None:
    key = crypto.SigningKey.generate(KEY_ID)
    history = [reg.ValidityRecord("2026-07-01T00:00:00Z", revoked_at="2026-07-01T00:00:00Z")]
    registry = (
        reg.RegistryBuilder(ORG)
        .add_key(key.key_id, ("agent", AGENT), key, "2026-01-01T00:00:00Z", history=history)
        .build()
    )
    resolver = reg.AgentRegistryKeyResolver(registry)
    before = CODEC.sign(SignedDocumentKind.COMMAND, command(issued_at="2026-06-30T00:00:00Z"), key)
    CODEC.verify(SignedDocumentKind.COMMAND, before.canonical_document_bytes, resolver)
    after = CODEC.sign(SignedDocumentKind.COMMAND, command(), key)
    with pytest.raises(sd.SignedDocumentVerificationError) as caught:
        CODEC.verify(SignedDocumentKind.COMMAND, after.canonical_document_bytes, resolver)
    assert caught.value.reason == "key-revoked"
    record = history[0]
    assert (record.recorded_at, record.valid_until, record.revoked_at) == (
        "2026-07-01T00:00:00Z", None, "2026-07-01T00:00:00Z")


def _reason(build: Any) -> str:
    with pytest.raises(sd.SignedDocumentVerificationError) as caught:
        build()
    assert caught.value.stage == "key-resolution" and caught.value.code == "AUTH_INVALID_SIGNATURE"
    assert caught.value.reason is not None
    return caught.value.reason


def test_builder_refusals_are_the_verifiers_stage_four_rules() -> None:
    key = crypto.SigningKey.generate(KEY_ID)
    other = crypto.SigningKey.generate("urn:example:key:other")
    agent = ("agent", AGENT)
    t = "2026-01-01T00:00:00Z"
    twice = reg.RegistryBuilder(ORG).add_key(key.key_id, agent, key, t).add_key(key.key_id, agent, other, t)
    assert _reason(twice.build) == "key-id-reused"
    shared = reg.RegistryBuilder(ORG).add_key(key.key_id, agent, key, t).add_key(other.key_id, agent, key, t)
    assert _reason(shared.build) == "public-key-reused"
    assert _reason(reg.RegistryBuilder(ORG).build) == "no-bindings"
    assert _reason(reg.RegistryBuilder("not a uri").add_key(key.key_id, agent, key, t).build) == "organization-id-invalid"
    identity = bytes([1]) + bytes(31)
    assert _reason(lambda: reg.RegistryBuilder(ORG).add_key(key.key_id, agent, identity, t)) == "public-key-point"
    assert _reason(lambda: reg.RegistryBuilder(ORG).add_key(key.key_id, agent, key, "yesterday")) == "valid-from-malformed"


@pytest.mark.parametrize(
    "principal,public_key,valid_from,history",
    [
        (("robot", AGENT), None, "2026-01-01T00:00:00Z", None),
        (42, None, "2026-01-01T00:00:00Z", None),
        (("agent", AGENT), 7, "2026-01-01T00:00:00Z", None),
        (("agent", AGENT), None, datetime(2026, 1, 1), None),
        (("agent", AGENT), None, "2026-01-01T00:00:00Z", ["2026-01-01T00:00:00Z"]),
        (("agent", AGENT), None, "2026-01-01T00:00:00Z", "not a list"),
    ],
)
def test_builder_bad_arguments(principal: Any, public_key: Any, valid_from: Any, history: Any) -> None:
    key = crypto.SigningKey.generate(KEY_ID)
    with pytest.raises(InvalidInputError):
        reg.RegistryBuilder(ORG).add_key(key.key_id, principal, public_key or key, valid_from, history=history)
    with pytest.raises(InvalidInputError):
        reg.RegistryBuilder(None)  # type: ignore[arg-type]
