"""The protocol's closed string vocabularies as ``str`` enums (values are the wire strings)."""

from __future__ import annotations

from enum import Enum


class _StrEnum(str, Enum):
    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


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
