"""The error hierarchy: one base, the reference's names as subclasses, code/stage/retryable
everywhere, and the Python vocabularies equal to the core's."""

from __future__ import annotations

import pytest

from missionweaveprotocol import _native, errors
from missionweaveprotocol._types import ErrorCode, SignedDocumentKind, VerificationStage

ERROR_CLASSES = [
    errors.InvalidInputError,
    errors.JsonParseError,
    errors.CanonicalizationError,
    errors.TimestampError,
    errors.SchemaValidationError,
    errors.SignedDocumentVerificationError,
    errors.SignedDocumentSigningError,
    errors.AdmissionError,
    errors.BundleVerificationError,
    errors.FrameError,
    errors.AuthenticationError,
    errors.AgentError,
    errors.OfflinePolicyError,
    errors.ReplayError,
    errors.ReplayGroupError,
    errors.ReplaySequenceError,
    errors.ReplayProjectionError,
    errors.LocalStoreError,
]

# The reference's Agent session and context exceptions are RuntimeErrors, not ValueErrors.
SESSION_CLASSES = [
    errors.ActiveSessionError,
    errors.StaleSessionEpochError,
    errors.ClosedSessionError,
    errors.StaleContextError,
]


@pytest.mark.parametrize("cls", ERROR_CLASSES)
def test_hierarchy(cls: type) -> None:
    assert issubclass(cls, errors.MissionWeaveError)
    assert issubclass(cls, ValueError)


def test_invalid_input_is_also_a_type_error() -> None:
    assert issubclass(errors.InvalidInputError, TypeError)


def test_vocabularies_match_the_core() -> None:
    assert [c.value for c in ErrorCode] == list(_native.WIRE_CODES)
    assert [k.value for k in SignedDocumentKind] == list(_native.SIGNED_DOCUMENT_KINDS)
    assert errors.WIRE_MESSAGE == _native.WIRE_MESSAGE


@pytest.mark.parametrize(
    "stage,code",
    [
        ("parse", "PROTOCOL_VIOLATION"),
        ("schema", "SCHEMA_VALIDATION_FAILED"),
        ("signature-envelope", "AUTH_INVALID_SIGNATURE"),
        ("key-resolution", "AUTH_INVALID_SIGNATURE"),
        ("canonicalization", "PROTOCOL_VIOLATION"),
        ("signature", "AUTH_INVALID_SIGNATURE"),
        ("admission", "AUTH_INVALID_SIGNATURE"),
    ],
)
def test_reference_constructor_shape(stage: str, code: str) -> None:
    error = errors.SignedDocumentVerificationError(stage, "some-reason")
    assert error.stage is VerificationStage(stage)
    assert error.code is ErrorCode(code)
    assert str(error) == f"{code}: signed document rejected"
    assert error.wire_error == errors.WireVerificationError(ErrorCode(code))
    assert error.protected_error == errors.ProtectedVerificationError(VerificationStage(stage), "some-reason")
    assert error.retryable is False


def test_retryable_follows_the_code() -> None:
    assert errors.MissionWeaveError("x", code="RATE_LIMITED").retryable is True
    assert errors.MissionWeaveError("x", code="AUTH_FORBIDDEN").retryable is False
    with pytest.raises(ValueError):
        errors.MissionWeaveError("x", code="NOT_A_CODE")


def test_bundle_error_problems() -> None:
    error = errors.BundleVerificationError("bad", problems=["a", "b"])
    assert error.problems == ("a", "b") and error.code == "INTERNAL_ERROR"


@pytest.mark.parametrize("cls", SESSION_CLASSES)
def test_session_errors_are_runtime_errors(cls: type) -> None:
    assert issubclass(cls, errors.MissionWeaveError)
    assert issubclass(cls, RuntimeError)
    assert not issubclass(cls, ValueError)


def test_reference_modules_export_the_shared_classes() -> None:
    from missionweaveprotocol import agent, local_store, offline, replay

    for name in ("ActiveSessionError", "StaleSessionEpochError", "ClosedSessionError", "StaleContextError"):
        assert getattr(agent, name) is getattr(errors, name)
    assert offline.OfflinePolicyError is errors.OfflinePolicyError
    assert local_store.LocalStoreError is errors.LocalStoreError
    for name in ("ReplayError", "ReplayGroupError", "ReplaySequenceError", "ReplayProjectionError"):
        assert getattr(replay, name) is getattr(errors, name)
    for family in (errors.ReplayGroupError, errors.ReplaySequenceError, errors.ReplayProjectionError):
        assert issubclass(family, errors.ReplayError)
    assert not issubclass(errors.LocalStoreError, errors.ReplayError)


def test_offline_policy_error_keeps_the_reference_defaults() -> None:
    error = errors.OfflinePolicyError("bad limit")
    assert (error.code, error.kind, error.reason) == ("INVALID_COMMAND", "invalid_argument", "invalid_argument")
    named = errors.OfflinePolicyError("not active", code="INVALID_STATE_TRANSITION", kind="not_active")
    assert (named.code, named.kind) == ("INVALID_STATE_TRANSITION", "not_active")
    session = errors.ClosedSessionError("closed")
    assert session.code == "INVALID_STATE_TRANSITION" and session.kind == ""
