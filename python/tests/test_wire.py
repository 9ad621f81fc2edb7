"""Frames: strict parsing, schema validation, exact Command bytes, encoding, ERROR frames."""

from __future__ import annotations

import json
from typing import Any, Dict

import pytest
from conftest import read

from missionweaveprotocol import wire
from missionweaveprotocol.errors import InvalidInputError, MissionWeaveError
from missionweaveprotocol.signed_documents import SignedDocumentCodec
from missionweaveprotocol.registry import AgentRegistryKeyResolver
from missionweaveprotocol.signed_documents import SignedDocumentKind

SUBSCRIBE = read("conformance/vectors/valid/websocket-frame.json")
PARTIAL = read("conformance/vectors/invalid/websocket-partial-stream.json")


def test_parse_frame_bytes_and_str() -> None:
    for payload in (SUBSCRIBE, SUBSCRIBE.decode()):
        frame = wire.parse_frame(payload)
        assert isinstance(frame, wire.Frame)
        assert frame.frame_type == "SUBSCRIBE"
        assert frame.frame_id == "urn:uuid:00000000-0000-4000-8000-000000000003"
        assert frame.protocol_version == "0.1"
        assert frame.to_dict() == json.loads(SUBSCRIBE)
    assert isinstance(wire.parse_received_frame(SUBSCRIBE), wire.Frame)


def test_encode_round_trip() -> None:
    frame = wire.parse_frame(SUBSCRIBE)
    encoded = wire.encode_frame(frame)
    assert json.loads(encoded) == json.loads(SUBSCRIBE)
    assert encoded == wire.encode_frame(json.loads(SUBSCRIBE))
    assert " " not in encoded and encoded.index('"frameId"') < encoded.index('"frameType"')


def test_received_command_keeps_exact_bytes(golden: Dict[str, Any]) -> None:
    command = golden["document"].strip()
    payload = (
        b'{ "protocolVersion": "0.1", "frameId": "urn:uuid:00000000-0000-4000-8000-000000000009",'
        b' "frameType": "COMMAND", "command": ' + command + b" }"
    )
    received = wire.parse_received_frame(payload)
    assert isinstance(received, wire.ReceivedCommandFrame)
    assert received.command_bytes == command
    assert received.frame_id == "urn:uuid:00000000-0000-4000-8000-000000000009"
    verified = SignedDocumentCodec().verify(SignedDocumentKind.COMMAND, received.command_bytes, AgentRegistryKeyResolver(golden["registry"]))
    assert verified.received_bytes == command


@pytest.mark.parametrize(
    "payload,code",
    [
        (b"", "PROTOCOL_VIOLATION"),
        (b"[]", "PROTOCOL_VIOLATION"),
        (b'{"frameType":"PING","frameType":"PING"}', "PROTOCOL_VIOLATION"),
        (b"{" * 100000, "PROTOCOL_VIOLATION"),
        (b'{"frameType":"NOPE"}', "SCHEMA_VALIDATION_FAILED"),
        (PARTIAL, "SCHEMA_VALIDATION_FAILED"),
        (SUBSCRIBE.replace(b'"0.1"', b'"0.2"', 1), "SCHEMA_VALIDATION_FAILED"),
        (b'{"protocolVersion":"0.1","frameId":"urn:uuid:1","frameType":"COMMAND","command":{},"extra":1}', "SCHEMA_VALIDATION_FAILED"),
    ],
)
def test_frame_errors(payload: bytes, code: str) -> None:
    for parse in (wire.parse_frame, wire.parse_received_frame):
        with pytest.raises(wire.FrameError) as caught:
            parse(payload)
        assert caught.value.code == code
        assert isinstance(caught.value, MissionWeaveError)


@pytest.mark.parametrize("payload", [None, 12, ["x"], "\ud800"])
def test_frame_bad_types(payload: Any) -> None:
    with pytest.raises(InvalidInputError):
        wire.parse_frame(payload)


def test_encode_errors() -> None:
    with pytest.raises(wire.FrameError) as caught:
        wire.encode_frame({"frameType": "PING"})
    assert caught.value.code == "SCHEMA_VALIDATION_FAILED"
    with pytest.raises(InvalidInputError):
        wire.encode_frame({"frameType": object()})


def test_error_frame() -> None:
    text = wire.error_frame(
        "urn:uuid:00000000-0000-4000-8000-000000000010",
        wire.ErrorCode.RATE_LIMITED,
        "slow down",
        "2026-07-15T00:00:00Z",
        "urn:uuid:00000000-0000-4000-8000-000000000011",
    )
    frame = wire.parse_frame(text)
    error = frame.to_dict()["error"]
    assert error["code"] == "RATE_LIMITED" and error["retryable"] is True
    assert error["relatedFrameId"] == "urn:uuid:00000000-0000-4000-8000-000000000011"
    with pytest.raises(InvalidInputError):
        wire.error_frame("urn:uuid:1", "NOT_A_CODE", "m", "2026-07-15T00:00:00Z")
    with pytest.raises(InvalidInputError):
        wire.error_frame("urn:uuid:1", "INTERNAL_ERROR", None, "2026-07-15T00:00:00Z")  # type: ignore[arg-type]
    with pytest.raises(wire.FrameError):
        wire.error_frame("not a uri", "INTERNAL_ERROR", "m", "2026-07-15T00:00:00Z")
