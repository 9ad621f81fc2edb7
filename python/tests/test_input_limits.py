"""Issue 9, item 1, through the Python binding: hostile sizes and shapes are refused at stage 1
before the work they would cost (the memory bound itself is measured with an allocation counter
in core/protocol/tests/json_memory.rs; docs/limits.md)."""
from __future__ import annotations

import pytest

from missionweaveprotocol import registry as reg
from missionweaveprotocol import signed_documents as sd
from missionweaveprotocol.canonical import ParseLimits, canonicalize_json, parse_json
from missionweaveprotocol.errors import JsonParseError
from conftest import read

RESOLVER = reg.AgentRegistryKeyResolver(read("cryptography/keys/registry-valid.json"))


def test_fifty_megabytes_of_empty_objects_are_refused_at_stage_one() -> None:
    # Before: 8.3 GB peak RSS and 21 s. Now refused by size before the first byte is read.
    hostile = b"[" + b"{}," * (50_000_000 // 3) + b"{}]"
    with pytest.raises(sd.SignedDocumentVerificationError) as raised:
        sd.SignedDocumentCodec().verify(sd.SignedDocumentKind.COMMAND, hostile, RESOLVER)
    error = raised.value
    assert (error.stage, error.reason, error.code) == ("parse", "limit-exceeded", "PROTOCOL_VIOLATION")
    assert str(error) == "PROTOCOL_VIOLATION: signed document rejected"


def test_a_document_under_the_size_limit_but_over_the_entry_limit_is_refused() -> None:
    hostile = b"[" + b"0," * 70_000 + b"0]"
    with pytest.raises(sd.SignedDocumentVerificationError) as raised:
        sd.SignedDocumentCodec().verify(sd.SignedDocumentKind.COMMAND, hostile, RESOLVER)
    assert (raised.value.stage, raised.value.reason) == ("parse", "limit-exceeded")


def test_within_the_limits_a_hostile_shape_reaches_the_schema_stage() -> None:
    shape = b"[" + b"{}," * 60_000 + b"{}]"
    with pytest.raises(sd.SignedDocumentVerificationError) as raised:
        sd.SignedDocumentCodec().verify(sd.SignedDocumentKind.COMMAND, shape, RESOLVER)
    assert raised.value.stage == "schema"


NUMBER_LIMIT = 1 << 20  # ParseLimits.STATE: an explicit choice
DOCUMENT_NUMBER_LIMIT = 256  # ParseLimits.DOCUMENT: the default of parse_json and canonicalize_json


@pytest.mark.parametrize("raw", [b"1" * (NUMBER_LIMIT + 1), b"[-" + b"9" * NUMBER_LIMIT + b"]"])
def test_parse_limits_are_typed_errors_with_fields(raw: bytes) -> None:
    for call in (parse_json, canonicalize_json):
        with pytest.raises(JsonParseError) as raised:
            call(raw, limits=ParseLimits.STATE)
        error = raised.value
        assert (error.code, error.reason) == ("PROTOCOL_VIOLATION", "limit-exceeded")
        assert error.fields["limit"] == "number-chars" and error.fields["maximum"] == NUMBER_LIMIT


def test_untrusted_input_defaults_to_the_document_limits() -> None:
    """An input may come from outside: DOCUMENT unless STATE is chosen explicitly."""
    long_number = b"1" * (DOCUMENT_NUMBER_LIMIT + 1)
    many_members = b"{" + b",".join(b'"%d":0' % i for i in range(70_000)) + b"}"
    for raw, limit in ((long_number, "number-chars"), (many_members, "container-entries")):
        for call in (parse_json, canonicalize_json):
            with pytest.raises(JsonParseError) as raised:
                call(raw)
            assert raised.value.fields["limit"] == limit
            # The larger limits are an explicit choice.
            call(raw, limits=ParseLimits.STATE)
    assert parse_json(b"1" * DOCUMENT_NUMBER_LIMIT) == int("1" * DOCUMENT_NUMBER_LIMIT)


def test_a_number_over_the_document_profile_is_refused_by_verify() -> None:
    hostile = b'{"n":' + b"1" * 257 + b"}"
    with pytest.raises(sd.SignedDocumentVerificationError) as raised:
        sd.SignedDocumentCodec().verify(sd.SignedDocumentKind.COMMAND, hostile, RESOLVER)
    assert (raised.value.stage, raised.value.reason) == ("parse", "limit-exceeded")
    # 256 characters are within the profile: the same document reaches the schema stage.
    within = b'{"n":' + b"1" * 256 + b"}"
    with pytest.raises(sd.SignedDocumentVerificationError) as raised:
        sd.SignedDocumentCodec().verify(sd.SignedDocumentKind.COMMAND, within, RESOLVER)
    assert raised.value.stage == "schema"


def test_limits_are_configurable_per_codec_and_per_call() -> None:
    assert sd.SignedDocumentCodec().limits == ParseLimits.DOCUMENT
    assert ParseLimits.DOCUMENT.max_document_bytes == 4 << 20
    assert ParseLimits.STATE.max_number_chars == 1 << 20
    small = ParseLimits.DOCUMENT.replace(max_container_entries=10)
    assert small.max_container_entries == 10 and small.max_document_bytes == ParseLimits.DOCUMENT.max_document_bytes
    assert small != ParseLimits.DOCUMENT and hash(small) == hash(ParseLimits.DOCUMENT.replace(max_container_entries=10))
    shape = b"[" + b"0," * 10 + b"0]"
    with pytest.raises(sd.SignedDocumentVerificationError) as raised:
        sd.SignedDocumentCodec(limits=small).verify(sd.SignedDocumentKind.COMMAND, shape, RESOLVER)
    assert (raised.value.stage, raised.value.reason) == ("parse", "limit-exceeded")
    with pytest.raises(sd.SignedDocumentVerificationError) as raised:
        sd.SignedDocumentCodec().verify(sd.SignedDocumentKind.COMMAND, shape, RESOLVER)
    assert raised.value.stage == "schema"
    with pytest.raises(JsonParseError) as parse_error:
        parse_json(shape, limits=small)
    assert parse_error.value.fields["limit"] == "container-entries"
    assert parse_json(shape) == [0] * 11
    roomy = ParseLimits(max_document_bytes=64 << 20, max_container_entries=1 << 24, max_string_bytes=1 << 20, max_number_chars=256)
    hostile = b"[" + b"{}," * 2_000_000 + b"{}]"
    with pytest.raises(sd.SignedDocumentVerificationError) as raised:
        sd.SignedDocumentCodec(limits=roomy).verify(sd.SignedDocumentKind.COMMAND, hostile, RESOLVER)
    assert raised.value.stage == "schema"


@pytest.mark.parametrize("bad", [0, -1, "10", 1.5, True])
def test_bad_limits_are_argument_errors(bad: object) -> None:
    from missionweaveprotocol.canonical import ParseLimits
    from missionweaveprotocol.errors import InvalidInputError

    with pytest.raises(InvalidInputError):
        ParseLimits.DOCUMENT.replace(max_document_bytes=bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        sd.SignedDocumentCodec(limits=bad)  # type: ignore[arg-type]
