"""RFC 8785 through the Python API: the bundle's canonicalization evaluations, host values,
and typed errors for everything outside the I-JSON data model."""

from __future__ import annotations

import json
from typing import Any, Dict

import pytest
from conftest import crypto_evaluations, read, rust_outcomes

from missionweaveprotocol import canonical
from missionweaveprotocol.errors import CanonicalizationError, InvalidInputError, JsonParseError

CANONICALIZATION = [(i, e) for i, e in crypto_evaluations() if "input" in e]


def test_there_are_canonicalization_evaluations() -> None:
    assert CANONICALIZATION


@pytest.mark.parametrize("identifier,evaluation", CANONICALIZATION, ids=[i for i, _ in CANONICALIZATION])
def test_canonicalization_evaluation(identifier: str, evaluation: Dict[str, Any]) -> None:
    assert rust_outcomes("cryptography")[identifier] == ("complete", True)
    raw = read(evaluation["input"])
    expected = read(evaluation["expectedJcs"])
    # Lossless: straight from the bytes.
    assert canonical.canonicalize_json(raw) == expected
    # Through Python values (the strict parser's view, and the stdlib's view).
    for value in (canonical.parse_json(raw), json.loads(raw)):
        assert canonical.canonical_bytes(value) == expected
        assert canonical.canonical_json(value) == expected.decode()
        assert canonical.canonical_hash(value) == evaluation["sha256"]
        assert canonical.verify_canonical_hash(value, evaluation["sha256"])
    assert canonical.sha256_hex(expected) == evaluation["sha256"][len("sha256:") :]


def test_sorting_and_numbers() -> None:
    value = {"b": False, "c": 120.0, "a": "Hello!", "d": [1, 2.5, None, True], "é": 1e21}
    assert canonical.canonical_json(value) == '{"a":"Hello!","b":false,"c":120,"d":[1,2.5,null,true],"é":1e+21}'
    assert canonical.canonical_bytes((1, 2)) == b"[1,2]"
    assert canonical.canonical_bytes(-0.0) == b"0"
    assert not canonical.verify_canonical_hash({}, "sha256:00")
    assert not canonical.verify_canonical_hash({}, None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "value",
    [
        float("nan"),
        float("inf"),
        {1: "non-str key"},
        object(),
        {"when": __import__("datetime").datetime(2026, 1, 1)},
        __import__("decimal").Decimal("NaN"),
        "\ud800",
        {"\udc00": 1},
        10**400,
    ],
)
def test_outside_the_data_model(value: Any) -> None:
    with pytest.raises(CanonicalizationError) as caught:
        canonical.canonical_bytes(value)
    assert caught.value.code == "PROTOCOL_VIOLATION"
    assert caught.value.stage == "canonicalization"
    assert isinstance(caught.value, ValueError)


def test_cycles_and_depth_do_not_crash() -> None:
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    with pytest.raises(CanonicalizationError):
        canonical.canonical_bytes(cyclic)
    deep: Any = 0
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(CanonicalizationError):
        canonical.canonical_bytes(deep)


@pytest.mark.parametrize("raw", [b"", b"{", b'{"a":1,"a":2}', b"NaN", b"\xef\xbb\xbf1", b"1 2", "\ud800"])
def test_strict_parse(raw: Any) -> None:
    with pytest.raises((JsonParseError, InvalidInputError)) as caught:
        canonical.canonicalize_json(raw)
    assert caught.value.code == "PROTOCOL_VIOLATION"


def test_parse_json_types() -> None:
    value = canonical.parse_json(b'{"i":12345678901234567890,"f":1.5,"s":"x","n":null,"l":[true]}')
    assert value == {"i": 12345678901234567890, "f": 1.5, "s": "x", "n": None, "l": [True]}
    assert type(value["i"]) is int
    with pytest.raises(CanonicalizationError):
        canonical.canonicalize_json(b"[1e400]")


def test_host_types_are_normalised_like_the_reference() -> None:
    from datetime import date, datetime, timedelta, timezone
    from decimal import Decimal
    from enum import Enum
    from uuid import UUID

    class Color(Enum):
        RED = "red"

    value = {
        "at": datetime(2026, 7, 15, 8, 0, tzinfo=timezone(timedelta(hours=8))),
        "precise": datetime(2026, 7, 15, 0, 0, 0, 1500, tzinfo=timezone.utc),
        "day": date(2026, 7, 15),
        "id": UUID("6e8bc430-9c3a-11d9-9669-0800200c9a66"),
        "raw": b"\xfb\xff",
        "amount": Decimal("1.50"),
        "color": Color.RED,
        "tags": {"b", "a"},
        "pair": ("x", 1),
    }
    assert canonical.canonical_json(value) == (
        '{"amount":"1.50","at":"2026-07-15T00:00:00Z","color":"red","day":"2026-07-15",'
        '"id":"6e8bc430-9c3a-11d9-9669-0800200c9a66","pair":["x",1],'
        '"precise":"2026-07-15T00:00:00.001500Z","raw":"-_8","tags":["a","b"]}'
    )
    assert canonical.canonical_hash(value) == canonical.canonical_hash(canonical.parse_json(canonical.canonical_json(value)))


# Issue 9, item 6: an unpaired surrogate is never repaired to U+FFFD. `parse_json` keeps the
# exact code unit (Python `str` can hold it) and canonicalizing that value fails at stage 5
# exactly as canonicalizing the raw bytes does.
@pytest.mark.parametrize(
    "raw,expected",
    [
        (b'"\\ud800"', "\ud800"),
        (b'"a\\udc00b"', "a\udc00b"),
        (b'["\\ud800\\ud800", 1]', ["\ud800\ud800", 1]),
        (b'{"\\udfff":{"k":"\\ud83d"}}', {"\udfff": {"k": "\ud83d"}}),
    ],
)
def test_lone_surrogates_are_kept_and_refused_at_stage_5(raw: bytes, expected: Any) -> None:
    value = canonical.parse_json(raw)
    assert value == expected
    assert "\ufffd" not in str(value)
    with pytest.raises(CanonicalizationError) as via_parse:
        canonical.canonical_bytes(value)
    with pytest.raises(CanonicalizationError) as direct:
        canonical.canonicalize_json(raw)
    for caught in (via_parse, direct):
        assert caught.value.reason == "unpaired-surrogate"
        assert caught.value.stage == "canonicalization"
        assert caught.value.code == "PROTOCOL_VIOLATION"
        assert str(caught.value) == "string holds an unpaired UTF-16 surrogate"
    assert type(via_parse.value) is type(direct.value)
    with pytest.raises(CanonicalizationError) as hashed:
        canonical.canonical_hash(value)
    assert hashed.value.reason == "unpaired-surrogate"


def test_paired_surrogates_and_replacement_character_still_canonicalize() -> None:
    assert canonical.parse_json(b'"\\ud83d\\ude00"') == "\U0001f600"
    assert canonical.canonical_bytes(canonical.parse_json(b'"\\ud83d\\ude00"')) == '"\U0001f600"'.encode()
    assert canonical.canonical_bytes(canonical.parse_json(b'"\\ufffd"')) == '"\ufffd"'.encode()
    assert canonical.canonical_bytes("\ufffd") == canonical.canonicalize_json(b'"\\ufffd"')
