"""``SignedDocumentCodec.sign`` with any object satisfying the ``SigningKey`` Protocol (HSM, KMS):
what the object returns is checked like a received signature; its failures are typed."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest

from missionweaveprotocol import crypto
from missionweaveprotocol import registry as reg
from missionweaveprotocol import signed_documents as sd
from missionweaveprotocol.errors import InvalidInputError, SignedDocumentSigningError
from missionweaveprotocol.signed_documents import SignedDocumentKind

AGENT = "urn:example:agent:hsm"
CODEC = sd.SignedDocumentCodec()
SEED = bytes(range(32))


def command() -> Dict[str, Any]:
    return {
        "protocolVersion": "0.1",
        "actionId": "urn:uuid:11111111-2222-4333-8444-555555555555",
        "actor": {"type": "agent", "id": AGENT},
        "sessionEpoch": 1,
        "membershipEpoch": 1,
        "groupId": "urn:example:group:research",
        "kind": "message.post",
        "correlationId": "urn:uuid:aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee",
        "issuedAt": "2026-07-15T00:00:00Z",
        "payload": {"text": "hello"},
    }


class Hsm:
    """A duck-typed key: the private key stays inside ``sign`` (as in an HSM or a KMS)."""

    def __init__(self, behaviour: str = "honest") -> None:
        self._key = crypto.SigningKey("urn:example:key:hsm-1", SEED)
        self.behaviour = behaviour
        self.messages: List[bytes] = []

    @property
    def algorithm(self) -> str:
        return "Ed448" if self.behaviour == "ed448" else "Ed25519"

    @property
    def key_id(self) -> str:
        return self._key.key_id

    @property
    def public_key_bytes(self) -> bytes:
        if self.behaviour == "property-raises":
            raise RuntimeError("the HSM session expired")
        if self.behaviour == "short-public-key":
            return self._key.public_key_bytes[:31]
        return self._key.public_key_bytes

    def sign(self, message: bytes) -> Any:
        self.messages.append(message)
        if self.behaviour == "raises":
            raise RuntimeError("HSM unavailable")
        if self.behaviour == "interrupt":
            raise KeyboardInterrupt
        if self.behaviour == "exit":
            raise SystemExit(3)
        if self.behaviour == "short":
            return self._key.sign(message)[:63]
        if self.behaviour == "text":
            return "not bytes"
        if self.behaviour == "wrong":
            return crypto.SigningKey("urn:example:key:other", bytes(32)).sign(message)
        return bytearray(self._key.sign(message))


def test_a_duck_typed_key_signs_like_the_native_key() -> None:
    hsm = Hsm()
    assert isinstance(hsm, sd.SigningKeyProtocol)
    assert isinstance(crypto.SigningKey("k", SEED), sd.SigningKeyProtocol)
    signed = CODEC.sign(SignedDocumentKind.COMMAND, command(), hsm)
    native = CODEC.sign(SignedDocumentKind.COMMAND, command(), crypto.SigningKey("urn:example:key:hsm-1", SEED))
    assert signed.canonical_document_bytes == native.canonical_document_bytes
    assert hsm.messages == [signed.canonical_signing_bytes]
    assert signed.signature.key_id == "urn:example:key:hsm-1"
    registry = reg.RegistryBuilder("urn:example:org").add_key(hsm.key_id, ("agent", AGENT), hsm, "2026-01-01T00:00:00Z").build()
    CODEC.verify(SignedDocumentKind.COMMAND, signed.canonical_document_bytes, reg.AgentRegistryKeyResolver(registry))


@pytest.mark.parametrize(
    "behaviour,stage,detail",
    [
        ("raises", "signature", "HSM unavailable"),
        ("short", "signature-envelope", "not 64 bytes"),
        ("text", "signature", "not bytes"),
        ("wrong", "signature", "does not verify"),
        ("ed448", "signature-envelope", "Ed448"),
        ("short-public-key", "key-resolution", "32 bytes"),
        ("property-raises", "key-resolution", "session expired"),
    ],
)
def test_a_misbehaving_key_is_a_typed_signing_error(behaviour: str, stage: str, detail: str) -> None:
    with pytest.raises(SignedDocumentSigningError) as caught:
        CODEC.sign(SignedDocumentKind.COMMAND, command(), Hsm(behaviour))
    assert caught.value.stage == stage
    assert caught.value.detail is not None and detail in caught.value.detail
    if behaviour in ("raises", "property-raises"):
        assert isinstance(caught.value.__cause__, RuntimeError)


@pytest.mark.parametrize("behaviour,exception", [("interrupt", KeyboardInterrupt), ("exit", SystemExit)])
def test_interrupts_propagate(behaviour: str, exception: type) -> None:
    with pytest.raises(exception):
        CODEC.sign(SignedDocumentKind.COMMAND, command(), Hsm(behaviour))


class Incomplete:
    key_id = "urn:example:key:x"
    algorithm = "Ed25519"


@pytest.mark.parametrize("key", [Incomplete(), None, "key", 42])
def test_objects_without_the_protocol_are_invalid_input(key: Any) -> None:
    with pytest.raises(InvalidInputError) as caught:
        CODEC.sign(SignedDocumentKind.COMMAND, command(), key)
    assert "SigningKey protocol" in str(caught.value)


def test_signing_from_threads_with_a_duck_typed_key() -> None:
    from concurrent.futures import ThreadPoolExecutor

    hsm = Hsm()
    expected = CODEC.sign(SignedDocumentKind.COMMAND, command(), hsm).canonical_document_bytes
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda _: CODEC.sign(SignedDocumentKind.COMMAND, command(), hsm).canonical_document_bytes, range(16)))
    assert results == [expected] * 16


def test_the_reference_key_dataclass_signs_like_the_native_key() -> None:
    import dataclasses

    private, public = crypto.generate_keypair()
    key = crypto.Ed25519SigningKey("urn:example:key:hsm-1", private)
    assert dataclasses.is_dataclass(key) and isinstance(key, sd.SigningKeyProtocol)
    assert key.algorithm == "Ed25519" and key.public_key == public
    assert private not in repr(key)
    native = crypto.SigningKey("urn:example:key:hsm-1", private)
    assert crypto.Ed25519SigningKey(native.key_id, native.seed_bytes()).public_key == key.public_key
    assert CODEC.sign(SignedDocumentKind.COMMAND, command(), key).canonical_document_bytes == (
        CODEC.sign(SignedDocumentKind.COMMAND, command(), native).canonical_document_bytes
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        key.key_id = "other"  # type: ignore[misc]
    with pytest.raises(InvalidInputError):
        crypto.Ed25519SigningKey("k", "not a key")
