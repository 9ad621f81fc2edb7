"""The v0.1 Signed Document Verification Profile (§6.4): six-stage verification, strict
signing and batch verification, all in the Rust core with the GIL released.

``SignedDocumentCodec().verify(kind, raw_bytes, key_resolver)`` returns a
:class:`VerifiedSignedDocument` (cryptographically verified; not admitted, not authorized) or
raises :class:`SignedDocumentVerificationError`. ``sign(kind, unsigned, signing_key)`` takes a
native :class:`SigningKey` or any object satisfying :class:`SigningKeyProtocol` (an HSM or KMS
adapter); what such an object returns is checked like a received signature.
``verify_many(items, key_resolver, threads=None)`` verifies a batch in one call on up to
``threads`` OS threads (default: one per CPU).
"""

from __future__ import annotations

from ._native import (
    AgentRegistryKeyResolver,
    ExpectedSignerEvidence,
    KeyRegistrySnapshot,
    KeyResolutionRequest,
    KeyValidityEvidence,
    PrincipalEvidence,
    ProtectedInstant,
    ProtectedTime,
    ResolvedKeyEvidence,
    SignatureMaterial,
    SignedDocument,
    SignedDocumentCodec,
    SigningKey,
    VerifiedSignedDocument,
)
from ._types import (
    ExpectedSignerRule,
    KeyRegistryCompleteness,
    SignedDocumentKind,
    SigningKeyProtocol,
    VerificationStage,
)
from .errors import (
    WIRE_MESSAGE,
    ProtectedVerificationError,
    SignedDocumentSigningError,
    SignedDocumentVerificationError,
    WireVerificationError,
)
from .registry import KeyResolver

__all__ = [
    "AgentRegistryKeyResolver",
    "ExpectedSignerEvidence",
    "ExpectedSignerRule",
    "KeyRegistryCompleteness",
    "KeyRegistrySnapshot",
    "KeyResolutionRequest",
    "KeyResolver",
    "KeyValidityEvidence",
    "PrincipalEvidence",
    "ProtectedInstant",
    "ProtectedTime",
    "ProtectedVerificationError",
    "ResolvedKeyEvidence",
    "SignatureMaterial",
    "SignedDocument",
    "SignedDocumentCodec",
    "SignedDocumentKind",
    "SignedDocumentSigningError",
    "SignedDocumentVerificationError",
    "SigningKey",
    "SigningKeyProtocol",
    "VerificationStage",
    "VerifiedSignedDocument",
    "WIRE_MESSAGE",
    "WireVerificationError",
]
