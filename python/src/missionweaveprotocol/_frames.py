"""The reference's WebSocket frame models (``reference-python.md`` §1.25), re-exported by
:mod:`missionweaveprotocol.wire`: pydantic v2 models in camelCase over
``websocket-frame.schema.json``.

Parsing and encoding decide nothing here: :func:`parse_frame` runs the Rust frame parser
(strict JSON, no duplicate members, bounded cost, schema validation, §17) and only then builds
the model named by the parsed ``frameType``/``phase``; :func:`encode_frame` dumps the model
(without ``None`` members) and hands it to the Rust encoder, which schema-validates it and
writes canonical JSON. Failures are :class:`~missionweaveprotocol.errors.FrameError` with the
wire code, as before.

Differences from the reference: errors are ``FrameError`` (a ``ValueError``) rather than
``json.JSONDecodeError`` / ``jsonschema.ValidationError``; timestamps render by the core's
one renderer (``Z``, shortest fraction).
"""

from __future__ import annotations

import uuid
from typing import Any, Dict, Literal, Optional, Tuple, Type, Union

from pydantic import Field

from . import _native
from ._projections import Instant
from ._protocol_model import ProtocolModel
from ._types import ErrorCode

#: The wire's identifier (an absolute URI; the Rust schema validator checks it).
Identifier = str
Base64Url = str


def _frame_id() -> str:
    return f"urn:uuid:{uuid.uuid4()}"


class FrameModel(ProtocolModel):
    protocol_version: Literal["0.1"] = "0.1"
    frame_id: Identifier = Field(default_factory=_frame_id)

    def to_dict(self) -> Dict[str, Any]:
        """The frame as the wire carries it (by alias, without ``None`` members)."""
        document: Dict[str, Any] = self.model_dump(mode="json", by_alias=True, exclude_none=True)
        return document


class HelloFrame(FrameModel):
    frame_type: Literal["HELLO"] = "HELLO"
    phase: Literal["client_init"] = "client_init"
    agent_id: Identifier
    key_id: Identifier
    client_nonce: Base64Url
    supported_versions: Tuple[str, ...] = ("0.1",)


class ChallengeFrame(FrameModel):
    frame_type: Literal["HELLO"] = "HELLO"
    phase: Literal["server_challenge"] = "server_challenge"
    selected_version: str = "0.1"
    client_nonce: Base64Url
    server_nonce: Base64Url
    challenge: Base64Url


class AuthFrame(FrameModel):
    frame_type: Literal["HELLO"] = "HELLO"
    phase: Literal["client_response"] = "client_response"
    agent_id: Identifier
    key_id: Identifier
    client_nonce: Base64Url
    server_nonce: Base64Url
    challenge_signature: Base64Url


class WelcomeFrame(FrameModel):
    frame_type: Literal["HELLO"] = "HELLO"
    phase: Literal["server_accept"] = "server_accept"
    selected_version: str
    session_token: str = Field(min_length=16, max_length=8192)
    session_epoch: int = Field(ge=1)
    expires_at: Instant


class AttentionFilter(ProtocolModel):
    event_kinds: Optional[Tuple[str, ...]] = None
    conversation_ids: Optional[Tuple[Identifier, ...]] = None
    work_item_ids: Optional[Tuple[Identifier, ...]] = None
    mentions_only: Optional[bool] = None
    announcements: Optional[bool] = None


class GroupCursor(ProtocolModel):
    group_id: Identifier
    after_sequence: int = Field(default=0, ge=0)
    attention: Optional[AttentionFilter] = None


class SubscribeFrame(FrameModel):
    frame_type: Literal["SUBSCRIBE"] = "SUBSCRIBE"
    subscription_id: Identifier
    groups: Tuple[GroupCursor, ...] = Field(min_length=1)


class CommandFrame(FrameModel):
    frame_type: Literal["COMMAND"] = "COMMAND"
    command: Dict[str, Any]


class EventFrame(FrameModel):
    frame_type: Literal["EVENT"] = "EVENT"
    event: Dict[str, Any]


class Acknowledgement(ProtocolModel):
    group_id: Identifier
    sequence: int = Field(ge=0)


class AckFrame(FrameModel):
    frame_type: Literal["ACK"] = "ACK"
    acknowledgements: Tuple[Acknowledgement, ...] = Field(min_length=1)
    sent_at: Instant


class PingFrame(FrameModel):
    frame_type: Literal["PING"] = "PING"
    nonce: Base64Url
    reply_to_nonce: Optional[Base64Url] = None
    sent_at: Instant
    presence: Optional[Dict[str, Any]] = None


PongFrame = PingFrame


class ErrorDocument(ProtocolModel):
    code: ErrorCode
    message: str = Field(min_length=1, max_length=2000)
    retryable: bool
    occurred_at: Instant
    fatal: Optional[bool] = None
    related_frame_id: Optional[Identifier] = None
    related_action_id: Optional[Identifier] = None
    group_id: Optional[Identifier] = None
    expected_revision: Optional[int] = None
    current_revision: Optional[int] = None
    retry_after_ms: Optional[int] = None
    snapshot_artifact_hash: Optional[str] = None
    details: Optional[Dict[str, Any]] = None


class ErrorFrame(FrameModel):
    frame_type: Literal["ERROR"] = "ERROR"
    error: ErrorDocument


FrameUnion = Union[
    HelloFrame,
    ChallengeFrame,
    AuthFrame,
    WelcomeFrame,
    SubscribeFrame,
    CommandFrame,
    EventFrame,
    AckFrame,
    PingFrame,
    ErrorFrame,
]

#: The model of each (``frameType``, ``phase``) the Rust parser reports.
_MODELS: Dict[Tuple[str, Optional[str]], Type[FrameModel]] = {
    ("HELLO", "client_init"): HelloFrame,
    ("HELLO", "server_challenge"): ChallengeFrame,
    ("HELLO", "client_response"): AuthFrame,
    ("HELLO", "server_accept"): WelcomeFrame,
    ("SUBSCRIBE", None): SubscribeFrame,
    ("COMMAND", None): CommandFrame,
    ("EVENT", None): EventFrame,
    ("ACK", None): AckFrame,
    ("PING", None): PingFrame,
    ("ERROR", None): ErrorFrame,
}


def _model(frame: _native.Frame) -> FrameUnion:
    model = _MODELS[(frame.frame_type, frame.phase)]
    return model.model_validate(frame.to_dict())  # type: ignore[return-value]


def parse_frame(payload: Union[str, bytes, bytearray, memoryview]) -> FrameUnion:
    """The frame model of a received frame (``str`` or UTF-8 bytes), after the Rust parser's
    strict parsing and schema validation (:class:`FrameError` with the wire code)."""
    return _model(_native.parse_frame(payload))


def parse_received_frame(
    payload: Union[str, bytes, bytearray, memoryview],
) -> Union[FrameUnion, _native.ReceivedCommandFrame]:
    """As :func:`parse_frame`, except a ``COMMAND`` frame: its envelope is checked and its
    ``command`` kept as the exact received bytes (:class:`ReceivedCommandFrame`), for the
    six-stage verifier."""
    received = _native.parse_received_frame(payload)
    if isinstance(received, _native.ReceivedCommandFrame):
        return received
    return _model(received)


def encode_frame(frame: Union[FrameModel, _native.Frame, Dict[str, Any]]) -> str:
    """The canonical JSON text of a frame model (or a parsed frame, or a plain mapping),
    schema-validated by the Rust encoder."""
    if isinstance(frame, FrameModel):
        return _native.encode_frame(frame.to_dict())
    return _native.encode_frame(frame)


__all__ = [
    "AckFrame",
    "Acknowledgement",
    "AttentionFilter",
    "AuthFrame",
    "ChallengeFrame",
    "CommandFrame",
    "ErrorDocument",
    "ErrorFrame",
    "EventFrame",
    "FrameModel",
    "FrameUnion",
    "GroupCursor",
    "HelloFrame",
    "PingFrame",
    "PongFrame",
    "SubscribeFrame",
    "WelcomeFrame",
    "encode_frame",
    "parse_frame",
    "parse_received_frame",
]
