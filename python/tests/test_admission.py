"""All 30 admission evaluations through the Python API with a Python Admission Log, compared
with the manifest and the Rust core's runner; the in-memory log end to end; bad input."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

import pytest
from conftest import admission_evaluations, read, rust_outcomes

from missionweaveprotocol import admission as adm
from missionweaveprotocol import registry as reg
from missionweaveprotocol import signed_documents as sd
from missionweaveprotocol.errors import InvalidInputError
from missionweaveprotocol.signed_documents import SignedDocumentKind

EVALUATIONS = list(admission_evaluations())
CODEC = sd.SignedDocumentCodec()


def principal(value: Dict[str, str]) -> reg.PrincipalEvidence:
    return reg.PrincipalEvidence(value["type"], value["id"])


def record(outcome: Dict[str, Any]) -> Optional[adm.AuthenticatedRecord]:
    if "record" not in outcome:
        return None
    return adm.AuthenticatedRecord(read(outcome["record"]), principal(outcome["authenticatedService"]))


class FixtureLog:
    """An Admission Log in Python that replays the evaluation's declared adapter outcomes."""

    def __init__(self, evaluation: Dict[str, Any]) -> None:
        self.lookup_spec = evaluation.get("lookup")
        self.append_spec = evaluation.get("append")
        self.lookups = 0
        self.appends: List[bytes] = []

    def lookup(self, organization_id: str, signing_hash: str) -> adm.LookupOutcome:
        self.lookups += 1
        spec = self.lookup_spec or {}
        return adm.LookupOutcome(spec.get("status", "indeterminate"), record(spec))

    def append(self, candidate: adm.FirstAdmissionRecord, candidate_bytes: bytes) -> adm.AppendOutcome:
        assert isinstance(candidate, adm.FirstAdmissionRecord)
        assert candidate.to_bytes() == candidate_bytes
        self.appends.append(candidate_bytes)
        spec = self.append_spec
        assert spec is not None, "append called although the evaluation declares none"
        return adm.AppendOutcome(spec["status"], record(spec))


def test_every_evaluation_is_covered() -> None:
    assert len(EVALUATIONS) == 30
    assert set(dict(EVALUATIONS)) == set(rust_outcomes("admission"))


@pytest.mark.parametrize("identifier,evaluation", EVALUATIONS, ids=[i for i, _ in EVALUATIONS])
def test_admission_evaluation(identifier: str, evaluation: Dict[str, Any]) -> None:
    verified = CODEC.verify(
        SignedDocumentKind(evaluation["profileId"]),
        read(evaluation["document"]),
        reg.AgentRegistryKeyResolver(read(evaluation["registry"])),
    )
    log = FixtureLog(evaluation)
    contexts: List[int] = []
    spec = evaluation.get("trustedContext")

    def context() -> adm.TrustedAcceptanceContext:
        contexts.append(1)
        assert spec is not None, "trusted context requested although none is declared"
        return adm.TrustedAcceptanceContext(
            spec["admissionRecordId"], spec["trustedAcceptedAt"], principal(spec["acceptedBy"])
        )

    expect = evaluation["expect"]
    rust_actual, rust_passed = rust_outcomes("admission")[identifier]
    assert rust_passed
    try:
        if evaluation["mode"] == "first-admission":
            admitted = adm.admit_first(verified, log, context)
        else:
            admitted = adm.replay_historical(verified, log)
    except adm.AdmissionError as error:
        assert expect["stage"] == "admission" == error.stage
        assert error.reason == expect["reason"]
        assert f"admission/{error.reason}" == rust_actual
        assert error.code == expect["wireCode"] == "AUTH_INVALID_SIGNATURE"
        assert str(error) == "AUTH_INVALID_SIGNATURE: signed document rejected"
    else:
        assert expect["stage"] == "complete" == rust_actual
        assert isinstance(admitted, adm.AdmittedDocument)
        assert json.loads(admitted.record_bytes) == json.loads(read(expect["record"]))
        assert admitted.record_dict() == json.loads(read(expect["record"]))
        rec = admitted.record
        assert rec.signing_hash == verified.signing_hash
        assert rec.key_id == verified.resolved_key.key_id
        assert rec.document_kind is verified.kind
        assert rec.principal == verified.resolved_key.principal
        assert rec.to_dict()["signingHash"] == verified.signing_hash
    # The adapter was driven exactly as the manifest requires.
    absent = (evaluation.get("lookup") or {}).get("status") == "authoritative-absence"
    if evaluation["mode"] == "first-admission" and absent:
        expected_calls = (1, 1, 0 if evaluation.get("append") is None else 1)
    else:
        expected_calls = (1, 0, 0)
    assert (log.lookups, len(contexts), len(log.appends)) == expected_calls


@pytest.fixture()
def verified(golden: Dict[str, Any]) -> sd.VerifiedSignedDocument:
    return CODEC.verify(SignedDocumentKind.COMMAND, golden["document"], reg.AgentRegistryKeyResolver(golden["registry"]))


SERVICE = reg.PrincipalEvidence("service", "urn:missionweaveprotocol:service:admission")


def test_in_memory_log_end_to_end(verified: sd.VerifiedSignedDocument) -> None:
    log = adm.InMemoryAdmissionLog(SERVICE)
    assert isinstance(log, adm.AdmissionLog)
    with pytest.raises(adm.AdmissionError) as caught:
        adm.replay_historical(verified, log)
    assert caught.value.reason == "record-missing"
    trusted = verified.protected_time.text
    context = adm.TrustedAcceptanceContext("urn:uuid:4c3f2a5e-7f0e-4d54-9a33-0c4c9c1d8a10", trusted, SERVICE)
    first = adm.admit_first(verified, log, context)
    assert first.existing is False and len(log) == 1
    again = adm.admit_first(verified, log, lambda: pytest.fail("context must not be asked"))
    assert again.existing is True and again.record_bytes == first.record_bytes
    replayed = adm.replay_historical(verified, log)
    assert replayed.record.admission_record_id == context.admission_record_id
    found = log.lookup(verified.resolved_key.organization_id, verified.signing_hash)
    assert found.status == "found" and found.record is not None
    assert found.record.record_bytes == first.record_bytes
    validated = adm.validate_record(found.record, verified)
    assert validated.trusted_accepted_at.text == trusted


def test_wrong_service_and_bad_time(verified: sd.VerifiedSignedDocument) -> None:
    log = adm.InMemoryAdmissionLog(SERVICE)
    other = reg.PrincipalEvidence("service", "urn:missionweaveprotocol:service:other")
    with pytest.raises(adm.AdmissionError) as caught:
        adm.admit_first(verified, log, adm.TrustedAcceptanceContext("urn:uuid:1", verified.protected_time.text, other))
    assert caught.value.reason == "log-authentication-failed"
    with pytest.raises(adm.AdmissionError) as caught:
        adm.admit_first(verified, log, adm.TrustedAcceptanceContext("urn:uuid:1", "yesterday", SERVICE))
    assert caught.value.reason == "malformed-trusted-time"
    assert len(log) == 0


class BrokenLog:
    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def lookup(self, organization_id: str, signing_hash: str) -> Any:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    def append(self, candidate: Any, candidate_bytes: bytes) -> Any:
        raise AssertionError("not reached")


@pytest.mark.parametrize("answer", [RuntimeError("db down"), None, "found", adm.AppendOutcome("conflict")])
def test_misbehaving_python_log_fails_closed(verified: sd.VerifiedSignedDocument, answer: Any) -> None:
    with pytest.raises(adm.AdmissionError) as caught:
        adm.replay_historical(verified, BrokenLog(answer))
    assert caught.value.reason == "log-indeterminate"
    assert caught.value.code == "AUTH_INVALID_SIGNATURE"


def test_context_errors_propagate(verified: sd.VerifiedSignedDocument) -> None:
    log = adm.InMemoryAdmissionLog(SERVICE)

    def broken() -> adm.TrustedAcceptanceContext:
        raise KeyError("no trusted clock")

    with pytest.raises(KeyError):
        adm.admit_first(verified, log, broken)
    with pytest.raises(InvalidInputError):
        adm.admit_first(verified, log, lambda: "not a context")  # type: ignore[arg-type,return-value]
    assert len(log) == 0


@pytest.mark.parametrize(
    "make",
    [
        lambda v: adm.admit_first("not verified", adm.InMemoryAdmissionLog(SERVICE), lambda: None),  # type: ignore[arg-type]
        lambda v: adm.admit_first(v, object(), lambda: None),
        lambda v: adm.admit_first(v, adm.InMemoryAdmissionLog(SERVICE), 42),  # type: ignore[arg-type]
        lambda v: adm.replay_historical(v, None),
        lambda v: adm.InMemoryAdmissionLog("service"),  # type: ignore[arg-type]
        lambda v: adm.LookupOutcome("maybe"),
        lambda v: adm.LookupOutcome("found"),
        lambda v: adm.AppendOutcome("conflict", adm.AuthenticatedRecord(b"{}", SERVICE)),
        lambda v: adm.AuthenticatedRecord("str", SERVICE),  # type: ignore[arg-type]
        lambda v: adm.TrustedAcceptanceContext(1, "t", SERVICE),  # type: ignore[arg-type]
        lambda v: reg.PrincipalEvidence("robot", "x"),
    ],
)
def test_bad_arguments(verified: sd.VerifiedSignedDocument, make: Any) -> None:
    with pytest.raises(InvalidInputError) as caught:
        make(verified)
    assert caught.value.code == "PROTOCOL_VIOLATION"


class InterruptingLog:
    """An Admission Log that raises `exception` from `method` and answers absence otherwise."""

    def __init__(self, method: str, exception: BaseException) -> None:
        self.method = method
        self.exception = exception
        self.calls: List[str] = []

    def lookup(self, organization_id: str, signing_hash: str) -> adm.LookupOutcome:
        self.calls.append("lookup")
        if self.method == "lookup":
            raise self.exception
        return adm.LookupOutcome("authoritative-absence")

    def append(self, candidate: adm.FirstAdmissionRecord, candidate_bytes: bytes) -> adm.AppendOutcome:
        self.calls.append("append")
        raise self.exception


class InterruptingReply:
    """A duck-typed reply whose `status` attribute raises."""

    def __init__(self, exception: BaseException) -> None:
        self.exception = exception

    @property
    def status(self) -> str:
        raise self.exception


class ReplyLog:
    def __init__(self, reply: Any) -> None:
        self.reply = reply

    def lookup(self, organization_id: str, signing_hash: str) -> Any:
        return self.reply

    def append(self, candidate: Any, candidate_bytes: bytes) -> Any:
        raise AssertionError("not reached")


def context_for(verified: sd.VerifiedSignedDocument) -> adm.TrustedAcceptanceContext:
    return adm.TrustedAcceptanceContext("urn:uuid:1", verified.protected_time.text, SERVICE)


# Issue 9, item 8: Ctrl-C and sys.exit() inside an Admission Log stop the program; they are not
# a `log-indeterminate` rejection. Every `Exception` still fails closed.
@pytest.mark.parametrize("exception", [KeyboardInterrupt(), SystemExit(3)])
@pytest.mark.parametrize("method", ["lookup", "append"])
def test_log_interrupts_propagate(verified: sd.VerifiedSignedDocument, method: str, exception: BaseException) -> None:
    log = InterruptingLog(method, exception)
    with pytest.raises(type(exception)) as caught:
        adm.admit_first(verified, log, context_for(verified))
    assert caught.value is exception
    assert log.calls == (["lookup"] if method == "lookup" else ["lookup", "append"])
    if method == "lookup":
        with pytest.raises(type(exception)) as caught:
            adm.replay_historical(verified, log)
        assert caught.value is exception


@pytest.mark.parametrize("exception", [KeyboardInterrupt(), SystemExit(0)])
def test_log_reply_interrupts_propagate(verified: sd.VerifiedSignedDocument, exception: BaseException) -> None:
    with pytest.raises(type(exception)) as caught:
        adm.replay_historical(verified, ReplyLog(InterruptingReply(exception)))
    assert caught.value is exception


@pytest.mark.parametrize("exception", [RuntimeError("db down"), OSError("disk"), KeyError("k")])
@pytest.mark.parametrize("method", ["lookup", "append"])
def test_log_exceptions_still_fail_closed(verified: sd.VerifiedSignedDocument, method: str, exception: BaseException) -> None:
    log = InterruptingLog(method, exception)
    with pytest.raises(adm.AdmissionError) as caught:
        adm.admit_first(verified, log, context_for(verified))
    assert caught.value.reason == "log-indeterminate"
    assert caught.value.code == "AUTH_INVALID_SIGNATURE"
    assert log.calls == (["lookup"] if method == "lookup" else ["lookup", "append"])
    with pytest.raises(adm.AdmissionError) as caught:
        adm.replay_historical(verified, ReplyLog(InterruptingReply(exception)))
    assert caught.value.reason == "log-indeterminate"
