"""The exception hierarchy. Every error is a :class:`MissionWeaveError` with ``code`` (the wire
code), ``stage`` (where it applies), ``retryable``, and the protected ``reason``/``detail``
(audit only: never send them to a peer). The mapping from core errors to these classes is in
one place, ``bindings/python/src/errors.rs``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from ._types import ErrorCode, VerificationStage

WIRE_MESSAGE = "signed document rejected"


@dataclass(frozen=True)
class WireVerificationError:
    """What may be sent to the peer for a verification failure: code and a fixed message."""

    code: ErrorCode
    message: str = WIRE_MESSAGE
    retryable: bool = False


@dataclass(frozen=True)
class ProtectedVerificationError:
    """The protected diagnostic of a verification failure: first failing stage and reason."""

    stage: VerificationStage
    reason: str


def _retryable(code: str) -> bool:
    from ._native import wire_code_retryable

    return wire_code_retryable(code)


class MissionWeaveError(Exception):
    """Base of every error this package raises."""

    code: ErrorCode
    stage: Optional[VerificationStage]
    reason: Optional[str]
    detail: Optional[str]
    retryable: bool

    def __init__(
        self,
        message: str,
        *,
        code: str = "INTERNAL_ERROR",
        stage: Optional[str] = None,
        reason: Optional[str] = None,
        detail: Optional[str] = None,
        retryable: Optional[bool] = None,
    ) -> None:
        super().__init__(message)
        self.code = ErrorCode(code)
        self.stage = VerificationStage(stage) if stage is not None else None
        self.reason = reason
        self.detail = detail
        self.retryable = _retryable(code) if retryable is None else bool(retryable)


class InvalidInputError(MissionWeaveError, TypeError, ValueError):
    """An argument of the wrong type or shape (``PROTOCOL_VIOLATION``)."""


class JsonParseError(MissionWeaveError, ValueError):
    """Bytes that are not strict JSON (stage ``parse``, ``PROTOCOL_VIOLATION``)."""


class CanonicalizationError(MissionWeaveError, ValueError):
    """A value outside the I-JSON data model (stage ``canonicalization``)."""


class TimestampError(MissionWeaveError, ValueError):
    """A timestamp outside the protocol's RFC 3339 profile."""


class SchemaValidationError(MissionWeaveError, ValueError):
    """An instance that does not match its schema (``SCHEMA_VALIDATION_FAILED``)."""

    instance_path: str
    schema_location: str

    def __init__(
        self,
        message: str,
        *,
        instance_path: str = "",
        schema_location: str = "",
        **fields: object,
    ) -> None:
        super().__init__(message, **fields)  # type: ignore[arg-type]
        self.instance_path = instance_path
        self.schema_location = schema_location

    @property
    def keyword(self) -> Optional[str]:
        """The failing JSON Schema keyword."""
        return self.reason


class SignedDocumentVerificationError(MissionWeaveError, ValueError):
    """A six-stage verification failure. ``str()`` is the wire view
    (``"<CODE>: signed document rejected"``); ``protected_error`` holds the stage and reason.
    """

    wire_error: WireVerificationError
    protected_error: ProtectedVerificationError

    def __init__(
        self,
        stage: str,
        reason: str,
        detail: str = "",
        *,
        code: Optional[str] = None,
        retryable: bool = False,
    ) -> None:
        verification_stage = VerificationStage(stage)
        if code is None:
            from ._native import stage_wire_code

            code = stage_wire_code(verification_stage.value)
        wire_code = ErrorCode(code)
        super().__init__(
            f"{wire_code.value}: {WIRE_MESSAGE}",
            code=wire_code.value,
            stage=verification_stage.value,
            reason=reason,
            detail=detail,
            retryable=retryable,
        )
        self.wire_error = WireVerificationError(wire_code, WIRE_MESSAGE, retryable)
        self.protected_error = ProtectedVerificationError(verification_stage, reason)


class SignedDocumentSigningError(MissionWeaveError, ValueError):
    """Signing refused: the document would fail verification at ``stage``."""


class AdmissionError(MissionWeaveError, ValueError):
    """First admission or historical replay failed (stage ``admission``,
    ``AUTH_INVALID_SIGNATURE``); ``reason`` is the admission manifest's reason name.
    """


class BundleVerificationError(MissionWeaveError, ValueError):
    """The protocol bundle failed its integrity checks; ``problems`` lists them."""

    problems: tuple[str, ...]

    def __init__(self, message: str, *, problems: Sequence[str] = (), **fields: object) -> None:
        super().__init__(message, **fields)  # type: ignore[arg-type]
        self.problems = tuple(problems)


class FrameError(MissionWeaveError, ValueError):
    """A frame that failed strict parsing (``PROTOCOL_VIOLATION``) or the frame schema
    (``SCHEMA_VALIDATION_FAILED``).
    """


__all__ = [
    "AdmissionError",
    "BundleVerificationError",
    "CanonicalizationError",
    "FrameError",
    "InvalidInputError",
    "JsonParseError",
    "MissionWeaveError",
    "ProtectedVerificationError",
    "SchemaValidationError",
    "SignedDocumentSigningError",
    "SignedDocumentVerificationError",
    "TimestampError",
    "WIRE_MESSAGE",
    "WireVerificationError",
]
