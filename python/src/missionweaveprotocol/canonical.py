"""RFC 8785 (JCS) canonical JSON and content hashes, computed by the Rust core.

Values are the JSON domain: ``dict`` (``str`` keys), ``list``/``tuple``, ``str``, ``int``,
``float`` (finite), ``bool`` and ``None``. Anything else raises :class:`CanonicalizationError`.
"""

from __future__ import annotations

import hmac
from typing import Any

from . import _native
from ._native import canonical_bytes, canonical_hash, canonicalize_json, parse_json
from .errors import CanonicalizationError, JsonParseError


def canonical_json(value: Any) -> str:
    """The canonical form as text."""
    return canonical_bytes(value).decode("utf-8")


def sha256_hex(value: bytes) -> str:
    """Lowercase hex SHA-256 of ``value`` (no prefix)."""
    return _native.sha256_prefixed_hex(value)[len("sha256:") :]


def verify_canonical_hash(value: Any, expected: str) -> bool:
    """Whether ``canonical_hash(value)`` equals ``expected`` (constant-time comparison)."""
    if not isinstance(expected, str):
        return False
    return hmac.compare_digest(canonical_hash(value), expected)


__all__ = [
    "CanonicalizationError",
    "JsonParseError",
    "canonical_bytes",
    "canonical_hash",
    "canonical_json",
    "canonicalize_json",
    "parse_json",
    "sha256_hex",
    "verify_canonical_hash",
]
