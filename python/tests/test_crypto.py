"""Signing keys: fixture seeds give the fixture public keys; signatures are deterministic."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import read_json

from missionweaveprotocol import bundle, crypto
from missionweaveprotocol.errors import InvalidInputError
from missionweaveprotocol.schema_formats import decode_base64url

KEY_FIXTURES = [p for p in bundle.embedded_paths() if p.startswith("cryptography/keys/signing-")]


def test_there_are_key_fixtures() -> None:
    assert KEY_FIXTURES


@pytest.mark.parametrize("path", KEY_FIXTURES)
def test_fixture_keys(path: str) -> None:
    fixture = read_json(path)
    seed = decode_base64url(fixture["seed"])
    assert seed is not None
    key = crypto.SigningKey.from_seed(fixture["keyId"], seed)
    assert key.algorithm == crypto.ALGORITHM == "Ed25519"
    assert key.key_id == fixture["keyId"]
    assert key.public_key == fixture["publicKey"]
    assert key.public_key_bytes == decode_base64url(fixture["publicKey"])
    signature = key.sign(b"message")
    assert isinstance(signature, bytes) and len(signature) == 64
    assert key.sign(bytearray(b"message")) == signature
    assert key.sign(b"other") != signature
    assert fixture["seed"] not in repr(key)


def test_rfc8032_test_vector_1() -> None:
    seed = bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
    key = crypto.SigningKey("urn:k:1", seed)
    assert key.public_key_bytes.hex() == "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
    assert key.sign(b"").hex() == (
        "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
        "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
    )


@pytest.mark.parametrize("key_id,seed", [("k", b"short"), ("k", "x" * 32), (None, bytes(32)), ("k", None)])
def test_bad_keys(key_id: Any, seed: Any) -> None:
    with pytest.raises(InvalidInputError):
        crypto.SigningKey(key_id, seed)


def test_bad_message() -> None:
    key = crypto.SigningKey("k", bytes(32))
    with pytest.raises(InvalidInputError):
        key.sign("text")  # type: ignore[arg-type]


def test_generated_keys_are_fresh_and_consistent() -> None:
    seed_a, public_a = crypto.generate_keypair()
    seed_b, public_b = crypto.generate_keypair()
    assert seed_a != seed_b and public_a != public_b
    seed = decode_base64url(seed_a)
    assert seed is not None and len(seed) == 32
    assert crypto.SigningKey.from_seed("k", seed).public_key == public_a
    key = crypto.generate_signing_key("urn:example:key:1")
    assert key.key_id == "urn:example:key:1"
    assert len(key.sign(b"m")) == 64
