"""The protocol's string formats, as the Rust core asserts them: RFC 3339 timestamps (the
protocol profile), canonical unpadded base64url, and protocol identifiers (absolute URIs).
"""

from __future__ import annotations

from ._native import (
    ProtectedInstant,
    ProtectedTime,
    decode_base64url,
    encode_base64url,
    is_protocol_uri,
    parse_timestamp,
)
from .errors import TimestampError

__all__ = [
    "ProtectedInstant",
    "ProtectedTime",
    "TimestampError",
    "decode_base64url",
    "encode_base64url",
    "is_protocol_uri",
    "parse_timestamp",
]
