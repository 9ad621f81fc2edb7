"""WebSocket frames (§17): the reference's frame models (``HelloFrame`` … ``ErrorFrame``,
``GroupCursor``, ``AttentionFilter``, ``Acknowledgement``, ``ErrorDocument``), strict parsing
and schema validation by the Rust frame parser, the exact bytes of a received Command,
canonical encoding and ERROR frames. Failures raise :class:`FrameError` with the wire code
(``PROTOCOL_VIOLATION`` or ``SCHEMA_VALIDATION_FAILED``).

``Frame`` is the base class of every frame model (the reference's ``Frame`` is the union of
them, :data:`FrameUnion` here): ``isinstance(frame, Frame)`` holds for any parsed frame.
"""

from __future__ import annotations

from ._frames import (
    AckFrame,
    Acknowledgement,
    AttentionFilter,
    AuthFrame,
    ChallengeFrame,
    CommandFrame,
    ErrorDocument,
    ErrorFrame,
    EventFrame,
    FrameModel,
    FrameUnion,
    GroupCursor,
    HelloFrame,
    PingFrame,
    PongFrame,
    SubscribeFrame,
    WelcomeFrame,
    encode_frame,
    parse_frame,
    parse_received_frame,
)
from ._native import ReceivedCommandFrame, error_frame
from ._types import ErrorCode
from .errors import FrameError

Frame = FrameModel

__all__ = [
    "AckFrame",
    "Acknowledgement",
    "AttentionFilter",
    "AuthFrame",
    "ChallengeFrame",
    "CommandFrame",
    "ErrorCode",
    "ErrorDocument",
    "ErrorFrame",
    "EventFrame",
    "Frame",
    "FrameError",
    "FrameModel",
    "FrameUnion",
    "GroupCursor",
    "HelloFrame",
    "PingFrame",
    "PongFrame",
    "ReceivedCommandFrame",
    "SubscribeFrame",
    "WelcomeFrame",
    "encode_frame",
    "error_frame",
    "parse_frame",
    "parse_received_frame",
]
