"""All 62 cryptography evaluations driven through the Python API and compared with the
manifest and with the Rust core's own runner; signing; batches; threads; bad input."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List

import pytest
from conftest import crypto_evaluations, read, read_json, rust_outcomes

from missionweaveprotocol import registry as reg
from missionweaveprotocol import signed_documents as sd
from missionweaveprotocol.errors import InvalidInputError, MissionWeaveError
from missionweaveprotocol.schema_formats import decode_base64url
from missionweaveprotocol.signed_documents import SignedDocumentKind

EVALUATIONS = list(crypto_evaluations())
DOCUMENT_EVALUATIONS = [(i, e) for i, e in EVALUATIONS if "profileId" in e]
CODEC = sd.SignedDocumentCodec()


def test_every_evaluation_is_covered() -> None:
    assert len(EVALUATIONS) == 62
    assert set(dict(EVALUATIONS)) == set(rust_outcomes("cryptography"))


def signing_key(path: str) -> sd.SigningKey:
    fixture = read_json(path)
    seed = decode_base64url(fixture["seed"])
    assert seed is not None
    key = sd.SigningKey(fixture["keyId"], seed)
    assert key.public_key == fixture["publicKey"]
    return key


@pytest.mark.parametrize("identifier,evaluation", DOCUMENT_EVALUATIONS, ids=[i for i, _ in DOCUMENT_EVALUATIONS])
def test_cryptography_evaluation(identifier: str, evaluation: Dict[str, Any]) -> None:
    kind = sd.SignedDocumentKind(evaluation["profileId"])
    document = read(evaluation["document"])
    resolver: Any
    try:
        resolver = reg.AgentRegistryKeyResolver(read(evaluation["registry"]))
    except sd.SignedDocumentVerificationError as refused:
        # Malformed Registry evidence is refused where it is made; a resolver that fails the same
        # way shows that every earlier stage is still judged first.
        assert refused.stage == "key-resolution" and refused.code == "AUTH_INVALID_SIGNATURE"
        resolver = DictResolver(refused)
    expect = evaluation["expect"]
    rust_actual, rust_passed = rust_outcomes("cryptography")[identifier]
    assert rust_passed
    try:
        verified = CODEC.verify(kind, document, resolver)
    except sd.SignedDocumentVerificationError as error:
        assert expect["stage"] == error.stage == rust_actual
        assert error.code == expect["wireCode"] == error.wire_error.code
        assert error.protected_error.stage == error.stage
        assert str(error) == f"{expect['wireCode']}: signed document rejected"
        assert error.retryable is False
        assert isinstance(error.reason, str) and error.reason
        return
    assert expect["stage"] == "complete" == rust_actual
    want = expect["verified"]
    assert isinstance(verified, sd.VerifiedSignedDocument)
    assert verified.kind is kind
    assert verified.received_bytes is document
    assert verified.resolved_key.key_id == want["keyId"] == verified.signature.key_id
    principal = verified.resolved_key.principal
    assert (principal.type, principal.id) == (want["principal"]["type"], want["principal"]["id"])
    assert verified.protected_time.text == want["protectedTime"] == verified.signature.created_at
    assert verified.canonical_signing_bytes == read(want["signingBytes"])
    assert verified.signing_hash == want["signingHash"]
    assert verified.signature.value == want["signature"]
    assert verified.document_hash == want["signedDocumentHash"]
    assert verified.signature.bytes == decode_base64url(want["signature"])
    # Deterministic re-signing with the fixture key reproduces the signature.
    key = signing_key(evaluation["signingKey"])
    assert key.sign(verified.canonical_signing_bytes) == verified.signature.bytes
    # The Python view of the document re-signs to the same bytes and hashes.
    unsigned = dict(verified.document)  # the verified document itself is immutable
    del unsigned["signature"]
    signed = CODEC.sign(kind, unsigned, key)
    assert isinstance(signed, sd.SignedDocument)
    assert signed.canonical_signing_bytes == verified.canonical_signing_bytes
    assert signed.signing_hash == verified.signing_hash
    assert signed.signature.value == verified.signature.value
    assert signed.document_hash == verified.document_hash
    assert signed.canonical_document_bytes == verified.canonical_document_bytes
    assert CODEC.verify(kind, signed.canonical_document_bytes, resolver).signing_hash == want["signingHash"]


def _batch() -> List[Any]:
    return [
        (e["profileId"], read(e["document"]), read(e["registry"]))
        for _, e in DOCUMENT_EVALUATIONS
        if e["registry"] == "cryptography/keys/registry-valid.json"
    ]


def _verdict(result: object) -> Any:
    if isinstance(result, sd.VerifiedSignedDocument):
        return ("complete", result.signing_hash)
    assert isinstance(result, sd.SignedDocumentVerificationError)
    return (result.stage, result.code, result.reason)


def _single(kind: str, document: bytes, resolver: reg.AgentRegistryKeyResolver) -> Any:
    try:
        return _verdict(CODEC.verify(sd.SignedDocumentKind(kind), document, resolver))
    except sd.SignedDocumentVerificationError as error:
        return _verdict(error)


@pytest.mark.parametrize("threads", [0, 1, 2, 4])
def test_verify_many_equals_verify(threads: int) -> None:
    batch = _batch()
    resolver = reg.AgentRegistryKeyResolver(batch[0][2])
    items = [(kind, document) for kind, document, _ in batch] * 3
    results = CODEC.verify_many(items, resolver, threads)
    assert len(results) == len(items)
    assert [_verdict(r) for r in results] == [_single(k, d, resolver) for k, d in items]
    assert any(isinstance(r, sd.VerifiedSignedDocument) for r in results)
    assert any(isinstance(r, sd.SignedDocumentVerificationError) for r in results)


def test_verify_from_many_threads(golden: Dict[str, Any]) -> None:
    batch = _batch()
    resolver = reg.AgentRegistryKeyResolver(golden["registry"])
    expected = [_single(k, d, resolver) for k, d, _ in batch]
    barrier = threading.Barrier(4)

    def work(_: int) -> List[Any]:
        barrier.wait()
        out = []
        for _round in range(5):
            out.append([_single(k, d, resolver) for k, d, _ in batch])
        return out

    with ThreadPoolExecutor(max_workers=4) as pool:
        for rounds in pool.map(work, range(4)):
            assert all(r == expected for r in rounds)


class DictResolver:
    """A KeyResolver written in Python."""

    def __init__(self, snapshot: Any) -> None:
        self.snapshot = snapshot
        self.requests: List[reg.KeyResolutionRequest] = []

    def resolve(self, request: reg.KeyResolutionRequest) -> Any:
        self.requests.append(request)
        if isinstance(self.snapshot, Exception):
            raise self.snapshot
        return self.snapshot


def test_python_key_resolver(golden: Dict[str, Any]) -> None:
    snapshot = reg.KeyRegistrySnapshot(reg.KeyRegistryCompleteness.ORGANIZATION_WIDE, golden["registry"])
    resolver = DictResolver(snapshot)
    assert isinstance(resolver, reg.KeyResolver)
    verified = CODEC.verify(sd.SignedDocumentKind.COMMAND, golden["document"], resolver)
    (request,) = resolver.requests
    assert request.kind is sd.SignedDocumentKind.COMMAND
    assert request.key_id == verified.resolved_key.key_id
    assert request.expected_signer.rule is sd.ExpectedSignerRule.EXACT_PRINCIPAL
    assert request.expected_signer.principal == verified.resolved_key.principal
    assert request.protected_time == verified.protected_time
    # The same resolver object works across threads in a batch.
    results = CODEC.verify_many([("command", golden["document"])] * 8, resolver, 2)
    assert all(isinstance(r, sd.VerifiedSignedDocument) for r in results)


@pytest.mark.parametrize(
    "answer",
    [
        RuntimeError("registry down"),
        "not a snapshot",
        None,
    ],
)
def test_python_key_resolver_fails_closed(golden: Dict[str, Any], answer: Any) -> None:
    with pytest.raises(sd.SignedDocumentVerificationError) as caught:
        CODEC.verify(SignedDocumentKind.COMMAND, golden["document"], DictResolver(answer))
    assert caught.value.stage == sd.VerificationStage.KEY_RESOLUTION
    assert caught.value.code == "AUTH_INVALID_SIGNATURE"


def test_key_not_resolved_before_stage_four(golden: Dict[str, Any]) -> None:
    resolver = DictResolver(RuntimeError("must not be called"))
    with pytest.raises(sd.SignedDocumentVerificationError) as caught:
        CODEC.verify(SignedDocumentKind.COMMAND, b'{"a":1}', resolver)
    assert caught.value.stage == "schema"
    assert resolver.requests == []


def test_sign_refuses_bad_documents(golden: Dict[str, Any]) -> None:
    key = signing_key("cryptography/keys/signing-coordinator.json")
    verified = CODEC.verify(SignedDocumentKind.COMMAND, golden["document"], reg.AgentRegistryKeyResolver(golden["registry"]))
    document = dict(verified.document)
    with pytest.raises(sd.SignedDocumentSigningError) as caught:
        CODEC.sign(SignedDocumentKind.COMMAND, document, key)  # still has a signature
    assert caught.value.code == "SCHEMA_VALIDATION_FAILED"
    del document["signature"]
    original = dict(document)
    CODEC.sign(SignedDocumentKind.COMMAND, document, key)
    assert document == original  # input not mutated
    for bad in ([1, 2], "text", None):
        with pytest.raises(sd.SignedDocumentSigningError):
            CODEC.sign(SignedDocumentKind.COMMAND, bad, key)  # type: ignore[arg-type]
    for host_value in (b"bytes", {1, 2}, object(), float("nan")):
        with pytest.raises(sd.SignedDocumentSigningError):
            CODEC.sign(SignedDocumentKind.COMMAND, {**document, "payload": host_value}, key)
    with pytest.raises(InvalidInputError):
        CODEC.sign(SignedDocumentKind.COMMAND, document, "not a key")  # type: ignore[arg-type]
    lowercase_z = {**document, "issuedAt": document["issuedAt"].replace("Z", "z")}
    with pytest.raises(sd.SignedDocumentSigningError) as caught:
        CODEC.sign(SignedDocumentKind.COMMAND, lowercase_z, key)
    assert caught.value.stage is not None


BAD_INPUTS: List[Any] = [
    ("command", "a str is not bytes", "resolver"),
    ("command", None, "resolver"),
    ("command", 12, "resolver"),
    ("not-a-kind", b"{}", "resolver"),
    (7, b"{}", "resolver"),
    (None, b"{}", "resolver"),
    ("command", b"{}", None),
    ("command", b"{}", 42),
]


@pytest.mark.parametrize("kind,document,resolver", BAD_INPUTS)
def test_bad_arguments_raise_typed_errors(golden: Dict[str, Any], kind: Any, document: Any, resolver: Any) -> None:
    if resolver == "resolver":
        resolver = reg.AgentRegistryKeyResolver(golden["registry"])
    with pytest.raises(InvalidInputError) as caught:
        CODEC.verify(kind, document, resolver)
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, MissionWeaveError)
    assert caught.value.code == "PROTOCOL_VIOLATION"


@pytest.mark.parametrize(
    "document,stage",
    [
        (b"", "parse"),
        (b"\xff\xfe", "parse"),
        (b"\xef\xbb\xbf{}", "parse"),
        (b'{"a":1,"a":2}', "parse"),
        (b"[" * 10000, "parse"),
        (b"null", "schema"),
        (b"{}", "schema"),
        (b'{"a":1e400}', "schema"),
    ],
)
def test_hostile_bytes_are_typed_rejections(golden: Dict[str, Any], document: bytes, stage: str) -> None:
    resolver = reg.AgentRegistryKeyResolver(golden["registry"])
    with pytest.raises(sd.SignedDocumentVerificationError) as caught:
        CODEC.verify(SignedDocumentKind.COMMAND, document, resolver)
    assert caught.value.stage == stage


def test_buffers_are_accepted(golden: Dict[str, Any]) -> None:
    resolver = reg.AgentRegistryKeyResolver(golden["registry"])
    for buffer in (bytearray(golden["document"]), memoryview(golden["document"])):
        verified = CODEC.verify(SignedDocumentKind.COMMAND, buffer, resolver)
        assert verified.received_bytes == golden["document"]
        assert isinstance(verified.received_bytes, bytes)


def test_verify_many_bad_items(golden: Dict[str, Any]) -> None:
    resolver = reg.AgentRegistryKeyResolver(golden["registry"])
    for items in (42, [("command",)], [("command", "str")], [("nope", b"{}")], ["x"]):
        with pytest.raises(InvalidInputError):
            CODEC.verify_many(items, resolver)  # type: ignore[arg-type]
    assert CODEC.verify_many([], resolver) == []


def test_kind_detection_and_signing_bytes_come_from_the_core() -> None:
    codec = sd.SignedDocumentCodec()
    for kind in sd.SignedDocumentKind:
        document = read(f"cryptography/vectors/signed-documents/valid/{kind.value}.json")
        assert codec.detect_kinds(document) == [kind]
        expected = read(f"cryptography/vectors/canonicalization/{kind.value}.signing.jcs")
        assert codec.signing_bytes(document) == expected
    assert codec.detect_kinds(b"{}") == []
    with pytest.raises(MissionWeaveError) as parse_failure:
        codec.detect_kinds(b'{"a":1,"a":2}')
    assert parse_failure.value.code == "PROTOCOL_VIOLATION"
    with pytest.raises(MissionWeaveError) as outside:
        codec.signing_bytes(b'{"n":1e400}')
    assert (outside.value.code, outside.value.stage) == ("PROTOCOL_VIOLATION", "canonicalization")


class RaisingResolver:
    """A KeyResolver whose `resolve` raises `exception` (any BaseException)."""

    def __init__(self, exception: BaseException) -> None:
        self.exception = exception
        self.calls = 0

    def resolve(self, request: reg.KeyResolutionRequest) -> reg.KeyRegistrySnapshot:
        self.calls += 1
        raise self.exception


# Issue 9, item 8: Ctrl-C and sys.exit() inside a resolver stop the program; they are not a
# stage-4 rejection. Every `Exception` still fails closed at stage 4.
@pytest.mark.parametrize("exception", [KeyboardInterrupt(), SystemExit(3)])
def test_resolver_interrupts_propagate(golden: Dict[str, Any], exception: BaseException) -> None:
    resolver = RaisingResolver(exception)
    with pytest.raises(type(exception)) as caught:
        CODEC.verify(SignedDocumentKind.COMMAND, golden["document"], resolver)
    assert caught.value is exception
    assert resolver.calls == 1
    with pytest.raises(type(exception)) as caught:
        CODEC.verify_many([("command", golden["document"])] * 4, resolver, 2)
    assert caught.value is exception
    # The resolver is reusable: nothing is left over from the interrupted call.
    good = DictResolver(reg.KeyRegistrySnapshot(reg.KeyRegistryCompleteness.ORGANIZATION_WIDE, golden["registry"]))
    assert CODEC.verify(SignedDocumentKind.COMMAND, golden["document"], good).kind is sd.SignedDocumentKind.COMMAND


@pytest.mark.parametrize("exception", [RuntimeError("registry down"), ValueError("bad"), KeyError("k")])
def test_resolver_exceptions_still_fail_closed(golden: Dict[str, Any], exception: BaseException) -> None:
    resolver = RaisingResolver(exception)
    with pytest.raises(sd.SignedDocumentVerificationError) as caught:
        CODEC.verify(SignedDocumentKind.COMMAND, golden["document"], resolver)
    assert caught.value.stage == sd.VerificationStage.KEY_RESOLUTION
    assert caught.value.code == "AUTH_INVALID_SIGNATURE"
    (result,) = CODEC.verify_many([("command", golden["document"])], resolver, 1)
    assert isinstance(result, sd.SignedDocumentVerificationError)
    assert result.stage == sd.VerificationStage.KEY_RESOLUTION
