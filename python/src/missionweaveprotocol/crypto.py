"""Ed25519 signing keys (RFC 8032 pure Ed25519, deterministic), from the Rust core.

The core is sans-IO and holds no randomness: new keys take their seed from the operating
system here (``os.urandom``).
"""

from __future__ import annotations

import os
from typing import Tuple

from ._native import SigningKey, encode_base64url

ALGORITHM = "Ed25519"


def generate_keypair() -> Tuple[str, str]:
    """A fresh key pair as ``(seed, public_key)``, both canonical unpadded base64url."""
    seed = os.urandom(32)
    key = SigningKey.from_seed("urn:missionweaveprotocol:key:generated", seed)
    return encode_base64url(seed), key.public_key


def generate_signing_key(key_id: str) -> SigningKey:
    """A fresh signing key for the Registry key ID ``key_id``."""
    return SigningKey.from_seed(key_id, os.urandom(32))


__all__ = ["ALGORITHM", "SigningKey", "generate_keypair", "generate_signing_key"]
