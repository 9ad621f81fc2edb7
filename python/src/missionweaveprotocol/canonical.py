"""RFC 8785 (JCS) canonical JSON and content hashes, computed by the Rust core.

JSON-domain values (``dict`` with ``str`` keys, ``list``/``tuple``, ``str``, ``int``, finite
``float``, ``bool``, ``None``) go straight to the core. Like the reference runtime, common host
types are normalised first when present: ``Enum`` → its value; timezone-aware ``datetime`` →
UTC RFC 3339 with microseconds (``.000000Z`` written ``Z``; naive datetimes are refused);
``date`` → ISO date; ``UUID`` → text; ``bytes`` → unpadded base64url; finite ``Decimal`` →
positional decimal text; sets → lists sorted by canonical bytes; other sequences → lists;
mappings → dicts; models with ``model_dump`` → their aliased dump. Anything else raises
:class:`CanonicalizationError`.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping, Sequence, Set
from datetime import date, datetime
from decimal import Decimal
from enum import Enum
from typing import Any
from uuid import UUID

from . import _native
from ._native import ParseLimits, canonicalize_json, encode_base64url, parse_json
from .errors import CanonicalizationError, InvalidInputError, JsonParseError

_MAX_DEPTH = 128


def _refuse(message: str) -> CanonicalizationError:
    return CanonicalizationError(message, code="PROTOCOL_VIOLATION", stage="canonicalization", detail=message)


def _normalise(value: Any, depth: int = 0) -> Any:
    if depth > _MAX_DEPTH:
        raise _refuse("the value is nested too deeply (or contains itself)")
    if value is None or isinstance(value, (bool, int, str)):
        return value.value if isinstance(value, Enum) else value
    if isinstance(value, Enum):
        return _normalise(value.value, depth + 1)
    if isinstance(value, float):
        return value
    if isinstance(value, datetime):
        # The reference's form (six fraction digits, none for a whole second), by the core's
        # one renderer; a naive datetime has no instant.
        try:
            return _native.render_instant(value, fraction="micros")
        except InvalidInputError as error:
            raise _refuse(str(error)) from error
    if isinstance(value, date):
        return str(value)  # a calendar date's own text form (ISO 8601): no instant, no zone
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return encode_base64url(bytes(value))
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise _refuse(f"{value} is not a finite number")
        return format(value, "f")
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return _normalise(dump(by_alias=True, mode="python"), depth + 1)
    if isinstance(value, Mapping):
        out = {}
        for key, member in value.items():
            if not isinstance(key, str):
                raise _refuse(f"object member names must be str, not {type(key).__name__}")
            out[key] = _normalise(member, depth + 1)
        return out
    if isinstance(value, Set):
        items = [_normalise(item, depth + 1) for item in value]
        return sorted(items, key=_native.canonical_bytes)
    if isinstance(value, Sequence):
        return [_normalise(item, depth + 1) for item in value]
    raise _refuse(f"{type(value).__name__} is not a JSON value")


def canonical_bytes(value: Any) -> bytes:
    """The RFC 8785 bytes of ``value`` (host types normalised as the module explains)."""
    try:
        return _native.canonical_bytes(value)
    except CanonicalizationError:
        # Only host types need the slower path; JSON-domain failures fail again identically.
        return _native.canonical_bytes(_normalise(value))


def canonical_hash(value: Any) -> str:
    """``sha256:`` + lowercase hex SHA-256 of :func:`canonical_bytes`."""
    return _native.sha256_prefixed_hex(canonical_bytes(value))


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
    "ParseLimits",
    "canonical_bytes",
    "canonical_hash",
    "canonical_json",
    "canonicalize_json",
    "parse_json",
    "sha256_hex",
    "verify_canonical_hash",
]
