"""The protocol's formats as the core asserts them."""

from __future__ import annotations

from typing import Any

import pytest

from missionweaveprotocol import schema_formats as sf
from missionweaveprotocol.errors import InvalidInputError, TimestampError


def test_timestamps() -> None:
    t = sf.parse_timestamp("2026-07-15T00:00:00.120Z")
    assert isinstance(t, sf.ProtectedTime) and isinstance(t.instant, sf.ProtectedInstant)
    assert t.text == "2026-07-15T00:00:00.120Z"
    assert t.instant.epoch_second == 1784073600 and t.instant.fraction == "12"
    same = sf.parse_timestamp("2026-07-15T02:00:00.12+02:00")
    assert same.instant == t.instant and same != t
    assert sf.parse_timestamp("2026-07-15T00:00:00.1200001Z").instant > t.instant


@pytest.mark.parametrize("text", ["0000-01-01T00:00:00Z", "2026-07-15T00:00:60Z", "2026-07-15", "2026-07-15T00:00:00-00:00", ""])
def test_bad_timestamps(text: str) -> None:
    with pytest.raises(TimestampError) as caught:
        sf.parse_timestamp(text)
    assert caught.value.code == "SCHEMA_VALIDATION_FAILED"


def test_timestamp_wrong_type() -> None:
    with pytest.raises(InvalidInputError):
        sf.parse_timestamp(20260715)  # type: ignore[arg-type]


def test_base64url() -> None:
    assert sf.encode_base64url(b"\xfb\xff") == "-_8"
    assert sf.decode_base64url("-_8") == b"\xfb\xff"
    assert sf.decode_base64url("-_8=") is None  # padded
    assert sf.decode_base64url("-_9") is None  # non-zero unused bits
    assert sf.decode_base64url("+/8") is None


@pytest.mark.parametrize(
    "text,valid",
    [("urn:uuid:4c3f2a5e-7f0e-4d54-9a33-0c4c9c1d8a10", True), ("https://a.example/x", True), ("relative/path", False), ("a:%ZZ", False), ("", False)],
)
def test_protocol_uri(text: str, valid: bool) -> None:
    assert sf.is_protocol_uri(text) is valid


@pytest.mark.parametrize("value", [None, 1, b"x"])
def test_uri_wrong_type(value: Any) -> None:
    with pytest.raises(InvalidInputError):
        sf.is_protocol_uri(value)
    with pytest.raises(InvalidInputError):
        sf.decode_base64url(value)
