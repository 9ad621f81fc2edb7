"""The protocol's closed string vocabularies as ``str`` enums (values are the wire strings)."""

from __future__ import annotations

from enum import Enum
from typing import Any, Dict, List, NoReturn, Protocol, runtime_checkable


class _StrEnum(str, Enum):
    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


def _immutable() -> TypeError:
    return TypeError("a signed document is immutable; copy it with dict(...) to edit")


class FrozenJsonArray(List[Any]):
    """A JSON array that cannot be changed (inside a :class:`FrozenJsonObject`). A ``list``
    subclass, so it equals the same list and ``json.dumps`` writes it; every mutator raises
    ``TypeError``; copies are the object itself."""

    __slots__ = ()

    def __init__(self, *args: Any) -> None:
        if self:  # ``__init__`` again would refill it
            raise _immutable()
        super().__init__(*args)

    def __setitem__(self, index: Any, value: Any) -> NoReturn:
        raise _immutable()

    def __delitem__(self, index: Any) -> NoReturn:
        raise _immutable()

    def __iadd__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        raise _immutable()

    def __imul__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        raise _immutable()

    def append(self, value: Any) -> NoReturn:
        raise _immutable()

    def extend(self, values: Any) -> NoReturn:
        raise _immutable()

    def insert(self, index: Any, value: Any) -> NoReturn:
        raise _immutable()

    def pop(self, *args: Any) -> NoReturn:
        raise _immutable()

    def remove(self, value: Any) -> NoReturn:
        raise _immutable()

    def clear(self) -> NoReturn:
        raise _immutable()

    def sort(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise _immutable()

    def reverse(self) -> NoReturn:
        raise _immutable()

    def __copy__(self) -> "FrozenJsonArray":
        return self

    def __deepcopy__(self, memo: Any) -> "FrozenJsonArray":
        return self

    def __reduce__(self) -> Any:
        return (FrozenJsonArray, (list(self),))


class FrozenJsonObject(Dict[str, Any]):
    """A JSON object that cannot be changed: ``SignedDocument.document`` and
    ``VerifiedSignedDocument.document`` (its arrays are :class:`FrozenJsonArray`), as the
    reference's frozen Mapping. A ``dict`` subclass, so it equals the same dict and
    ``json.dumps`` / ``dict(...)`` work; every mutator raises ``TypeError``; copies are the
    object itself."""

    __slots__ = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if self:  # ``__init__`` again would update it
            raise _immutable()
        super().__init__(*args, **kwargs)

    def __setitem__(self, key: str, value: Any) -> NoReturn:
        raise _immutable()

    def __delitem__(self, key: str) -> NoReturn:
        raise _immutable()

    def __ior__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        raise _immutable()

    def clear(self) -> NoReturn:
        raise _immutable()

    def pop(self, *args: Any) -> NoReturn:
        raise _immutable()

    def popitem(self) -> NoReturn:
        raise _immutable()

    def setdefault(self, *args: Any) -> NoReturn:
        raise _immutable()

    def update(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise _immutable()

    def __copy__(self) -> "FrozenJsonObject":
        return self

    def __deepcopy__(self, memo: Any) -> "FrozenJsonObject":
        return self

    def __reduce__(self) -> Any:
        return (FrozenJsonObject, (dict(self),))


class SignedDocumentKind(_StrEnum):
    """The nine signature-required document kinds (Signed Document Verification Profiles)."""

    AGENT_CARD = "agent-card"
    APPROVAL = "approval"
    ARTIFACT = "artifact"
    COMMAND = "command"
    CONTEXT_PACKAGE = "context-package"
    EVENT = "event"
    EVIDENCE = "evidence"
    EXTENSION_PROFILE = "extension-profile"
    GROUP_SNAPSHOT = "group-snapshot"


class VerificationStage(_StrEnum):
    """The six semantic stages of §6.4, plus ``admission`` (not a seventh cryptographic stage)."""

    PARSE = "parse"
    SCHEMA = "schema"
    SIGNATURE_ENVELOPE = "signature-envelope"
    KEY_RESOLUTION = "key-resolution"
    CANONICALIZATION = "canonicalization"
    SIGNATURE = "signature"
    ADMISSION = "admission"


class ErrorCode(_StrEnum):
    """The 27 stable wire codes (§19)."""

    UNSUPPORTED_VERSION = "UNSUPPORTED_VERSION"
    AUTH_REQUIRED = "AUTH_REQUIRED"
    AUTH_INVALID_SIGNATURE = "AUTH_INVALID_SIGNATURE"
    AUTH_STALE_SESSION = "AUTH_STALE_SESSION"
    AUTH_STALE_COORDINATOR = "AUTH_STALE_COORDINATOR"
    AUTH_FORBIDDEN = "AUTH_FORBIDDEN"
    GROUP_NOT_FOUND = "GROUP_NOT_FOUND"
    MEMBERSHIP_REQUIRED = "MEMBERSHIP_REQUIRED"
    MEMBERSHIP_STALE = "MEMBERSHIP_STALE"
    SCHEMA_VALIDATION_FAILED = "SCHEMA_VALIDATION_FAILED"
    INVALID_COMMAND = "INVALID_COMMAND"
    INVALID_STATE_TRANSITION = "INVALID_STATE_TRANSITION"
    REVISION_CONFLICT = "REVISION_CONFLICT"
    ACTION_ID_COLLISION = "ACTION_ID_COLLISION"
    UNKNOWN_CRITICAL_EXTENSION = "UNKNOWN_CRITICAL_EXTENSION"
    WORK_CONTRACT_INCOMPLETE = "WORK_CONTRACT_INCOMPLETE"
    WORK_OFFER_EXPIRED = "WORK_OFFER_EXPIRED"
    WORK_ALREADY_OWNED = "WORK_ALREADY_OWNED"
    WORK_LEASE_EXPIRED = "WORK_LEASE_EXPIRED"
    WORK_STALE_OWNERSHIP = "WORK_STALE_OWNERSHIP"
    APPROVAL_REQUIRED = "APPROVAL_REQUIRED"
    BUDGET_EXCEEDED = "BUDGET_EXCEEDED"
    RATE_LIMITED = "RATE_LIMITED"
    BACKPRESSURE = "BACKPRESSURE"
    CURSOR_TOO_OLD = "CURSOR_TOO_OLD"
    PROTOCOL_VIOLATION = "PROTOCOL_VIOLATION"
    INTERNAL_ERROR = "INTERNAL_ERROR"


class ExpectedSignerRule(_StrEnum):
    """How the expected signer is found in a document."""

    EXACT_PRINCIPAL = "exact-principal"
    SERVICE_PRINCIPAL = "service-principal"


class KeyRegistryCompleteness(_StrEnum):
    """The only Registry evidence the verifier accepts is organization-wide."""

    ORGANIZATION_WIDE = "organization-wide"


class LeaseState(_StrEnum):
    """``lease.schema.json`` ``state``; every state but ``active`` is terminal."""

    ACTIVE = "active"
    EXPIRED = "expired"
    REVOKED = "revoked"
    RELEASED = "released"


class LeaseType(_StrEnum):
    """``lease.schema.json`` ``leaseType``."""

    COORDINATOR = "coordinator"
    OWNERSHIP = "ownership"
    EXECUTION = "execution"
    BLOCKED = "blocked"


class DelegationViolationKind(_StrEnum):
    """Why a Delegation Grant use was refused (the reference's nine kinds, then five more)."""

    IDENTITY = "identity"
    MEMBERSHIP = "membership"
    MEMBERSHIP_EPOCH = "membership_epoch"
    SCOPE = "scope"
    CAPABILITY = "capability"
    BUDGET = "budget"
    DEPTH = "depth"
    COORDINATOR_EPOCH = "coordinator_epoch"
    EXPIRED = "expired"
    ISSUER = "issuer"
    NOT_YET_VALID = "not_yet_valid"
    TARGET_MISSING = "target_missing"
    TARGET_CLOSED = "target_closed"
    MALFORMED = "malformed"


class Backoff(_StrEnum):
    """``retryPolicy.backoff``."""

    NONE = "none"
    FIXED = "fixed"
    EXPONENTIAL = "exponential"


class RetryReason(_StrEnum):
    """Why retrying stopped or continues (reference names plus ``budget_exhausted``)."""

    COMPLETED = "completed"
    PERMANENT_FAILURE = "permanent_failure"
    ATTEMPTS_EXHAUSTED = "attempts_exhausted"
    DEADLINE_EXHAUSTED = "deadline_exhausted"
    BUDGET_EXHAUSTED = "budget_exhausted"
    RETRYABLE_FAILURE = "retryable_failure"


class AdmissionReason(_StrEnum):
    """Scheduler admission reasons (reference names plus the three §10.3 facts it lacked)."""

    ACCEPTED = "accepted"
    DUPLICATE = "duplicate"
    IDENTIFIER_COLLISION = "identifier_collision"
    ALREADY_TERMINAL = "already_terminal"
    WORKER_FULL = "worker_full"
    GROUP_FULL = "group_full"
    GROUP_NOT_ALLOWED = "group_not_allowed"
    GROUP_QUOTA_DISABLED = "group_quota_disabled"
    UNSUPPORTED_CAPABILITY = "unsupported_capability"
    EXCEEDS_CAPACITY = "exceeds_capacity"
    DEADLINE_EXPIRED = "deadline_expired"
    NOT_AUTHORIZED = "not_authorized"
    DEPENDENCY_UNSATISFIED = "dependency_unsatisfied"
    BUDGET_UNAVAILABLE = "budget_unavailable"


class WorkState(_StrEnum):
    """Scheduler-local state of a non-terminal item."""

    READY = "ready"
    RUNNING = "running"
    PREEMPTING = "preempting"
    BLOCKED = "blocked"


class TransitionKind(_StrEnum):
    """Worker reports about a running item (``WorkTransition.kind``); the last three are the
    reference's names (``scheduler.WorkTransition`` says how they map)."""

    CHECKPOINT_SAVED = "checkpoint_saved"
    PREEMPTION_DECLINED = "preemption_declined"
    BLOCKED = "blocked"
    RELEASED = "released"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    PREEMPTED = "preempted"
    PREEMPTION_FAILED = "preemption_failed"


class Confidence(_StrEnum):
    """How much to trust a scheduling disclosure."""

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class CapacityStatus(_StrEnum):
    """Worker capacity as disclosed."""

    AVAILABLE = "available"
    CONSTRAINED = "constrained"
    SATURATED = "saturated"


@runtime_checkable
class SigningKeyProtocol(Protocol):
    """What ``SignedDocumentCodec.sign`` needs from a signing key (the reference's ``SigningKey``
    Protocol): the native :class:`~missionweaveprotocol.crypto.SigningKey`, or any object with
    these members — an HSM or KMS adapter. The codec checks what it returns like a verifier."""

    @property
    def algorithm(self) -> str: ...

    @property
    def key_id(self) -> str: ...

    @property
    def public_key_bytes(self) -> bytes: ...

    def sign(self, message: bytes) -> bytes: ...
