"""WebSocket frames (§17): strict parsing and schema validation, the exact bytes of a received
Command, canonical encoding and ERROR frames. Failures raise :class:`FrameError` with the wire
code (``PROTOCOL_VIOLATION`` or ``SCHEMA_VALIDATION_FAILED``).
"""

from __future__ import annotations

from ._native import (
    Frame,
    ReceivedCommandFrame,
    encode_frame,
    error_frame,
    parse_frame,
    parse_received_frame,
)
from ._types import ErrorCode
from .errors import FrameError

__all__ = [
    "ErrorCode",
    "Frame",
    "FrameError",
    "ReceivedCommandFrame",
    "encode_frame",
    "error_frame",
    "parse_frame",
    "parse_received_frame",
]
