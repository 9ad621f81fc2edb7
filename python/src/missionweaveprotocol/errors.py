"""The exception hierarchy. Every error is a :class:`MissionWeaveError` with ``code`` (the wire
code), ``stage`` (where it applies), ``retryable``, and the protected ``reason``/``detail``
(audit only: never send them to a peer). The mapping from core errors to these classes is in
one place, ``bindings/python/src/errors.rs``.
"""

from __future__ import annotations

import sys
from collections import deque
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Dict, Mapping, Optional, Tuple

from ._types import DelegationViolationKind, ErrorCode, VerificationStage

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
    """Base of every error this package raises.

    Every error the Rust core reports describes itself: ``code`` (the §19 wire code),
    ``reason`` (a stable slug to match on), ``stage`` (where it applies), ``retryable``, the
    protected ``detail`` (audit only: never send it to a peer) and structured ``fields``
    (``dimension``, ``account``, ``path``, …), each also available as an attribute. The class
    is the one the core names; the same error has the same code, reason and fields in the
    JavaScript package.
    """

    code: ErrorCode
    stage: Optional[VerificationStage]
    reason: Optional[str]
    detail: Optional[str]
    retryable: bool
    fields: Mapping[str, Any]

    def __init__(
        self,
        message: str,
        *,
        code: str = "INTERNAL_ERROR",
        stage: Optional[str] = None,
        reason: Optional[str] = None,
        detail: Optional[str] = None,
        retryable: Optional[bool] = None,
        **fields: Any,
    ) -> None:
        super().__init__(message)
        if reason is None and isinstance(fields.get("kind"), str):
            # Errors raised by Python code name their rule as `kind`, like the reference's.
            reason = fields["kind"]
        self.code = ErrorCode(code)
        self.stage = VerificationStage(stage) if stage is not None else None
        self.reason = reason
        self.detail = detail
        self.retryable = _retryable(code) if retryable is None else bool(retryable)
        fields = {k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()}
        self.fields = MappingProxyType(dict(fields))
        for name, value in fields.items():
            # A field the class already derives (e.g. `keyword` from `reason`) is not shadowed.
            if not isinstance(getattr(type(self), name, None), property):
                setattr(self, name, value)

    @classmethod
    def _from_core(
        cls,
        message: str,
        *,
        code: str,
        stage: Optional[str],
        reason: str,
        detail: str,
        retryable: bool,
        fields: Mapping[str, Any],
    ) -> "MissionWeaveError":
        """Builds the exception from the core's description (used by the native module)."""
        return cls(
            message,
            code=code,
            stage=stage,
            reason=reason,
            detail=detail,
            retryable=retryable,
            **fields,
        )


class InvalidInputError(MissionWeaveError, TypeError, ValueError):
    """API misuse: an argument of the wrong type, shape or range (``PROTOCOL_VIOLATION``,
    reason ``invalid-argument``; the same code in every binding).
    """


class JsonParseError(MissionWeaveError, ValueError):
    """Bytes that are not strict JSON (stage ``parse``, ``PROTOCOL_VIOLATION``); ``offset`` is
    the byte offset."""

    offset: Optional[int] = None


class CanonicalizationError(MissionWeaveError, ValueError):
    """A value outside the I-JSON data model (stage ``canonicalization``)."""


class TimestampError(MissionWeaveError, ValueError):
    """A timestamp outside the protocol's RFC 3339 profile."""


class SchemaValidationError(MissionWeaveError, ValueError):
    """An instance that does not match its schema (``SCHEMA_VALIDATION_FAILED``).

    Code written against the reference catches ``jsonschema.ValidationError`` from
    ``SchemaCatalog.validate`` and the lease projection: when the program has imported
    ``jsonschema`` (it must have, to name that class), the error raised is also an instance of
    it (a subclass of both, built once), with its attributes (``message``, ``path``,
    ``schema_path``, ``validator`` = the failing keyword). Without ``jsonschema`` nothing is
    imported: this package does not depend on it.
    """

    instance_path: str = ""
    schema_location: str = ""

    def __new__(cls, *args: Any, **kwargs: Any) -> "SchemaValidationError":
        compatible = _jsonschema_compatible(cls)
        made: SchemaValidationError = super().__new__(compatible or cls, *args)
        return made

    @property
    def keyword(self) -> Optional[str]:
        """The failing JSON Schema keyword."""
        return self.reason


_COMPATIBLE: Dict[type, type] = {}


def _jsonschema_compatible(cls: type) -> Optional[type]:
    """``cls`` joined with ``jsonschema.ValidationError`` when the program imported it."""
    module = sys.modules.get("jsonschema")
    base = getattr(module, "ValidationError", None) if module is not None else None
    if not isinstance(base, type) or issubclass(cls, base):
        return None
    joined = _COMPATIBLE.get(cls)
    if joined is None:

        own_init: Any = cls.__init__

        def __init__(self: Any, message: str, **fields: Any) -> None:
            own_init(self, message, **fields)
            path = [p for p in str(getattr(self, "instance_path", "") or "").split("/")[1:]]
            self.message = message
            self.path = self.relative_path = deque(
                int(p) if p.isdigit() else p.replace("~1", "/").replace("~0", "~") for p in path
            )
            location = str(getattr(self, "schema_location", "") or "")
            self.schema_path = self.relative_schema_path = deque(
                p for p in location.split("#", 1)[-1].split("/") if p
            )
            self.context = []
            self.cause = None
            self.validator = self.reason
            self.validator_value = None
            self.instance = None
            self.schema = None
            self.parent = None

        joined = type(
            cls.__name__,
            (cls, base),
            {
                "__init__": __init__,
                "__str__": BaseException.__str__,
                "__repr__": BaseException.__repr__,
                "__module__": cls.__module__,
                "__qualname__": cls.__qualname__,
            },
        )
        _COMPATIBLE[cls] = joined
    return joined


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
        **fields: Any,
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
            **fields,
        )
        self.wire_error = WireVerificationError(wire_code, WIRE_MESSAGE, retryable)
        self.protected_error = ProtectedVerificationError(verification_stage, reason)

    @classmethod
    def _from_core(
        cls,
        message: str,
        *,
        code: str,
        stage: Optional[str],
        reason: str,
        detail: str,
        retryable: bool,
        fields: Mapping[str, Any],
    ) -> "MissionWeaveError":
        return cls(
            stage or "key-resolution",
            reason,
            detail,
            code=code,
            retryable=retryable,
            **fields,
        )


class SignedDocumentSigningError(MissionWeaveError, ValueError):
    """Signing refused: the document would fail verification at ``stage``."""


class AdmissionError(MissionWeaveError, ValueError):
    """First admission or historical replay failed (stage ``admission``,
    ``AUTH_INVALID_SIGNATURE``); ``reason`` is the admission manifest's reason name.

    The same surface as :class:`SignedDocumentVerificationError` (issue 9, item 9): ``str()`` is
    the wire view (``"AUTH_INVALID_SIGNATURE: signed document rejected"``, whatever ``message``
    says), ``wire_error`` is what may be sent to the peer (a :class:`WireVerificationError`) and
    ``protected_error`` the protected diagnostic (stage ``admission`` and the reason): a peer
    cannot tell an admission rejection from a stage 3, 4 or 6 one.
    """

    wire_error: WireVerificationError
    protected_error: ProtectedVerificationError

    def __init__(
        self,
        message: str = "",
        *,
        code: str = "AUTH_INVALID_SIGNATURE",
        stage: Optional[str] = None,
        reason: Optional[str] = None,
        detail: Optional[str] = None,
        retryable: bool = False,
        **fields: Any,
    ) -> None:
        wire_code = ErrorCode(code)
        admission = VerificationStage(stage or VerificationStage.ADMISSION.value)
        super().__init__(
            f"{wire_code.value}: {WIRE_MESSAGE}",
            code=wire_code.value,
            stage=admission.value,
            reason=reason,
            detail=message if detail is None else detail,
            retryable=retryable,
            **fields,
        )
        self.wire_error = WireVerificationError(wire_code, WIRE_MESSAGE, self.retryable)
        self.protected_error = ProtectedVerificationError(admission, self.reason or "")


class BundleVerificationError(MissionWeaveError, ValueError):
    """The protocol bundle failed its integrity checks; ``problems`` lists them."""

    problems: Tuple[str, ...] = ()


class FrameError(MissionWeaveError, ValueError):
    """A frame that failed strict parsing (``PROTOCOL_VIOLATION``) or the frame schema
    (``SCHEMA_VALIDATION_FAILED``).
    """


class _KindFromReason(MissionWeaveError):
    """The authority layer's errors also expose their reason slug as ``kind``."""

    @property
    def kind(self) -> str:
        return self.reason or ""


class LeaseError(_KindFromReason, ValueError):
    """A lease operation or lease-bound Command refused. ``kind`` (= ``reason``) names the rule
    (``expired``, ``closed``, ``closure_conflict``, ``stale_lease``, ``stale_ownership``,
    ``stale_session``, ``stale_coordinator``, ``wrong_holder``, ``non_monotonic_renewal``,
    ``not_extending``, ``invalid_window``, ``invalid_field``, ``unrenderable_timestamp``);
    ``code`` is the wire code (``WORK_LEASE_EXPIRED``, ``WORK_STALE_OWNERSHIP``, …).
    """

    field: Optional[str] = None
    state: Optional[str] = None


class BudgetLedgerError(_KindFromReason, ValueError):
    """A budget ledger refusal. ``dimension`` (a :class:`ResourceUsage` field name) and
    ``account`` (``("mission" | "work_item", id)``) are set where they apply; over-limit
    charges and allocations carry ``BUDGET_EXCEEDED``.
    """

    dimension: Optional[str] = None
    account: Optional[Tuple[str, str]] = None
    path: Optional[str] = None


class DelegationViolation(MissionWeaveError, ValueError):
    """A refused Delegation Grant use; ``kind`` is a :class:`DelegationViolationKind`,
    ``dimension`` names the budget dimension for ``budget`` violations, ``invalidates`` says
    whether the Grant is unusable for good.
    """

    kind: DelegationViolationKind
    dimension: Optional[str] = None
    invalidates: bool = False
    message: str

    def __init__(
        self,
        text: str,
        /,
        *,
        kind: str = "malformed",
        **fields: Any,
    ) -> None:
        fields.setdefault("reason", kind)
        super().__init__(text, **fields)
        self.kind = DelegationViolationKind(kind)
        self.fields = MappingProxyType({**self.fields, "kind": self.kind.value})
        self.message = text


class PolicyError(_KindFromReason, ValueError):
    """A retry-policy refusal (attempt running, backoff pending, cost budget exceeded with
    ``BUDGET_EXCEEDED`` and ``dimension``, bad arguments).
    """

    dimension: Optional[str] = None


class RetryExhausted(PolicyError):
    """The retry loop is over for good: ``kind`` is ``attempts_exhausted``,
    ``deadline_exhausted``, ``budget_exhausted`` or ``permanent_failure``.
    """


class SchedulerError(_KindFromReason, ValueError):
    """A Scheduler refusal caused by its input: ``invalid_argument``, ``unsafe_checkpoint``,
    ``corrupt_snapshot`` (``kind``; ``field`` names the bad argument).
    """

    field: Optional[str] = None
    path: Optional[str] = None


class SchedulerStateError(_KindFromReason, RuntimeError):
    """A report that does not fit the item's state: ``unknown_work``, ``stale_run``
    (``WORK_LEASE_EXPIRED``) or ``invalid_transition`` (``INVALID_STATE_TRANSITION``).
    """

    work_id: Optional[str] = None
    state: Optional[str] = None
    current_generation: Optional[int] = None
    reported_generation: Optional[int] = None


class SnapshotError(BudgetLedgerError, SchedulerError):
    """A persisted snapshot document (budget ledger or Scheduler) is malformed
    (``INTERNAL_ERROR``, kind ``malformed_snapshot``); ``path`` is a JSON Pointer into it.
    It is both a :class:`BudgetLedgerError` and a :class:`SchedulerError`.
    """

    path: Optional[str] = None


class ArtifactError(MissionWeaveError, ValueError):
    """Content-addressed Artifact bytes or their manifest were refused (§13.1); the
    reference's ``artifacts.ArtifactError(ValueError)``. ``reason``: ``hash_mismatch`` and
    ``size_mismatch`` (stored bytes that do not match the manifest, ``PROTOCOL_VIOLATION``),
    ``content_missing``, ``stored_bytes_conflict`` (other bytes already at the hash's path;
    nothing is overwritten), ``unsupported_hash``, ``invalid_metadata``,
    ``unsignable_manifest`` (the code of the stage it would fail), ``manifest_rejected``
    (six-stage verification failed; the verifier's code and ``stage``), ``io``
    (``INTERNAL_ERROR``, retryable). ``content_hash`` names the content when known.
    """

    content_hash: Optional[str] = None


class AuthenticationError(MissionWeaveError, ValueError):
    """An Agent authentication step was refused (§6.3); the reference's
    ``auth.AuthenticationError(ValueError)``, also importable from :mod:`.auth`. ``code``:
    ``AUTH_INVALID_SIGNATURE`` (bad, unknown, expired or replayed challenge, wrong signature,
    unknown/revoked/expired key; the default, as the reference raises it),
    ``AUTH_STALE_SESSION``, ``AUTH_REQUIRED`` (forged, malformed or expired token),
    ``UNSUPPORTED_VERSION``, ``RATE_LIMITED`` or ``PROTOCOL_VIOLATION`` (misuse). ``reason``
    is the core's slug (``stale_session``, ``invalid_token``, …). No message names a secret,
    token, MAC or signature.
    """

    def __init__(self, message: str, **kwargs: Any) -> None:
        kwargs.setdefault("code", "AUTH_INVALID_SIGNATURE")
        super().__init__(message, **kwargs)


class _SessionError(_KindFromReason, RuntimeError):
    """The reference's Agent session and context exceptions are ``RuntimeError``s; ``kind``
    (= ``reason``) names the rule."""

    def __init__(self, message: str, **kwargs: Any) -> None:
        kwargs.setdefault("code", "INVALID_STATE_TRANSITION")
        super().__init__(message, **kwargs)


class ActiveSessionError(_SessionError):
    """A session is already active: one runtime, one session (``INVALID_STATE_TRANSITION``;
    ``active_epoch``). Also importable from :mod:`.agent`."""


class StaleSessionEpochError(_SessionError):
    """The Session Epoch is not above every earlier one (``AUTH_STALE_SESSION``; ``offered``,
    ``last``). Also importable from :mod:`.agent`."""


class ClosedSessionError(_SessionError):
    """The session is closed or was replaced (``AUTH_REQUIRED``; ``session_id``). Also
    importable from :mod:`.agent`."""


class StaleContextError(_SessionError):
    """A Group context or credential revision not above the installed one
    (``REVISION_CONFLICT``; ``group_id``, ``offered``, ``current``). Also importable from
    :mod:`.agent`."""


class AgentError(_KindFromReason, ValueError):
    """An Agent runtime argument, or a dispatch the Scheduler does not have running (``kind``
    ``invalid_argument`` with ``INVALID_COMMAND``, ``not_dispatched`` with
    ``INVALID_STATE_TRANSITION``; ``argument`` or ``work_id``)."""


class OfflinePolicyError(_KindFromReason, ValueError):
    """Offline buffering, rebasing or a binding was refused (§11.5); the reference's
    ``offline.OfflinePolicyError(ValueError)``, also importable from :mod:`.offline`. ``code``
    is the §19 wire code (``INVALID_COMMAND`` by default) and ``kind`` (= ``reason``) the rule
    (``not_reversible``, ``outside_assignment``, ``outside_grace``, ``lease_closed``,
    ``too_many_actions``, ``usage_exceeded``, ``external_effect``, ``invalid_binding``,
    ``action_id_collision``, ``not_active``, ``invalid_argument``, …)."""

    def __init__(self, message: str, **kwargs: Any) -> None:
        kwargs.setdefault("code", "INVALID_COMMAND")
        if kwargs.get("reason") is None and "kind" not in kwargs:
            kwargs["kind"] = "invalid_argument"
        super().__init__(message, **kwargs)


class ReplayError(MissionWeaveError, ValueError):
    """A replay stopped (§16); the Events before the failing one are committed. The
    reference's ``replay.ReplayError(ValueError)``, also importable from :mod:`.replay`."""


class ReplayGroupError(ReplayError):
    """An empty Group ID, or an Event of another Group (``PROTOCOL_VIOLATION``)."""


class ReplaySequenceError(ReplayError):
    """A gap (``sequence > cursor + 1``) or an Event ID seen at another position."""


class ReplayProjectionError(ReplayError):
    """A projected offer collides with an admitted one (same WorkItem ID, other content)."""


class LocalStoreError(MissionWeaveError, ValueError):
    """A local store refusal or failure; the reference's ``local_store.LocalStoreError``, also
    importable from :mod:`.local_store`. ``reason`` names the rule
    (``event_position_collision``, ``action_collision``, ``stale_revision``,
    ``checkpoint_collision``, ``cursor_conflict``, ``invalid_argument``, ``corrupt``,
    ``backend``)."""


class ContextPackageError(MissionWeaveError, ValueError):
    """A Context Package refused (§13.3; the reference raises ``ValueError``): ``reason``
    names the rule (``source_events_empty``, ``event_outside_group``, ``source_range_gap``,
    ``duplicate_source_event``, ``decision_outside_range``, ``version_chain``,
    ``source_range_mismatch``, ``generator_mismatch``, ``scope_mismatch``, ``invalid_argument``)."""


__all__ = [
    "ActiveSessionError",
    "ContextPackageError",
    "AdmissionError",
    "AgentError",
    "ClosedSessionError",
    "LocalStoreError",
    "OfflinePolicyError",
    "ReplayError",
    "ReplayGroupError",
    "ReplayProjectionError",
    "ReplaySequenceError",
    "StaleContextError",
    "StaleSessionEpochError",
    "ArtifactError",
    "AuthenticationError",
    "BudgetLedgerError",
    "DelegationViolation",
    "LeaseError",
    "PolicyError",
    "RetryExhausted",
    "SchedulerError",
    "SchedulerStateError",
    "SnapshotError",
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
