"""Verification and admission rejections show the same wire surface (issue 9, item 9): the same
``str()``, the same ``wire_error`` (type and value), a ``protected_error`` of the same type, the
same code and retryability. Only the protected diagnostic (stage, reason, detail) differs."""

from __future__ import annotations

from typing import Any, Callable, List, Union

import pytest
from conftest import read

from missionweaveprotocol import admission as adm
from missionweaveprotocol import errors
from missionweaveprotocol import registry as reg
from missionweaveprotocol import signed_documents as sd
from missionweaveprotocol._types import ErrorCode, VerificationStage
from missionweaveprotocol.signed_documents import SignedDocumentKind

CODEC = sd.SignedDocumentCodec()
VECTORS = "cryptography/vectors/signed-documents"
WIRE = "AUTH_INVALID_SIGNATURE: signed document rejected"
SERVICE = reg.PrincipalEvidence("service", "urn:missionweaveprotocol:service:admission")


def resolver() -> reg.AgentRegistryKeyResolver:
    return reg.AgentRegistryKeyResolver(read("cryptography/keys/registry-valid.json"))


def verification_errors() -> List[errors.SignedDocumentVerificationError]:
    """Stage 3, 4 and 6 rejections of Commands (all AUTH_INVALID_SIGNATURE)."""
    out = []
    for name in (
        "command-signature-wrong-length",
        "command-unknown-key",
        "command-payload-tamper",
    ):
        with pytest.raises(errors.SignedDocumentVerificationError) as caught:
            CODEC.verify(SignedDocumentKind.COMMAND, read(f"{VECTORS}/invalid/{name}.json"), resolver())
        out.append(caught.value)
    assert [e.stage for e in out] == [
        VerificationStage.SIGNATURE_ENVELOPE,
        VerificationStage.KEY_RESOLUTION,
        VerificationStage.SIGNATURE,
    ]
    return out


class IndeterminateLog:
    def lookup(self, organization_id: str, signing_hash: str) -> Any:
        return adm.LookupOutcome("indeterminate")

    def append(self, candidate: Any, candidate_bytes: bytes) -> Any:
        raise AssertionError("not reached")


def admission_errors() -> List[errors.AdmissionError]:
    """Admission rejections of a verified Command, for three different reasons."""
    verified = CODEC.verify(SignedDocumentKind.COMMAND, read(f"{VECTORS}/valid/command.json"), resolver())
    other = reg.PrincipalEvidence("service", "urn:missionweaveprotocol:service:other")
    attempts: List[Callable[[], object]] = [
        lambda: adm.replay_historical(verified, adm.InMemoryAdmissionLog(SERVICE)),
        lambda: adm.replay_historical(verified, IndeterminateLog()),
        lambda: adm.admit_first(
            verified,
            adm.InMemoryAdmissionLog(SERVICE),
            adm.TrustedAcceptanceContext("urn:uuid:1", verified.protected_time.text, other),
        ),
    ]
    out = []
    for attempt in attempts:
        with pytest.raises(errors.AdmissionError) as caught:
            attempt()
        out.append(caught.value)
    assert [e.reason for e in out] == ["record-missing", "log-indeterminate", "log-authentication-failed"]
    return out


def test_the_wire_surface_is_the_same() -> None:
    verification = verification_errors()
    admission = admission_errors()
    reference = verification[0]
    rejections: List[Union[errors.SignedDocumentVerificationError, errors.AdmissionError]] = [
        *verification,
        *admission,
    ]
    for error in rejections:
        assert str(error) == WIRE
        assert error.args == reference.args
        assert type(error.wire_error) is errors.WireVerificationError
        assert error.wire_error == reference.wire_error == errors.WireVerificationError(
            ErrorCode.AUTH_INVALID_SIGNATURE, errors.WIRE_MESSAGE, False
        )
        assert error.code is ErrorCode.AUTH_INVALID_SIGNATURE
        assert error.retryable is False
        assert error.fields["wire_message"] == errors.WIRE_MESSAGE
        # The protected diagnostic has one shape too, and never reaches str().
        assert type(error.protected_error) is errors.ProtectedVerificationError
        assert error.stage is not None and error.reason is not None
        assert error.protected_error == errors.ProtectedVerificationError(error.stage, error.reason)
        assert error.detail and error.detail not in str(error) and str(error.reason) not in str(error)
    assert {e.protected_error.stage for e in admission} == {VerificationStage.ADMISSION}


def test_admission_error_built_directly_keeps_the_wire_view() -> None:
    # Whatever message it is given, str() is the wire view; the text becomes the detail.
    error = errors.AdmissionError("the log was down", reason="log-indeterminate")
    assert str(error) == WIRE
    assert error.detail == "the log was down"
    assert error.stage is VerificationStage.ADMISSION
    assert error.wire_error == errors.WireVerificationError(ErrorCode.AUTH_INVALID_SIGNATURE)
    assert error.protected_error == errors.ProtectedVerificationError(
        VerificationStage.ADMISSION, "log-indeterminate"
    )

