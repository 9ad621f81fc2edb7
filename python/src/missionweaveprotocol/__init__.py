"""MissionWeaveProtocol 0.1 for Python: the verification surface of the Rust core.

Module map (as the reference runtime): ``canonical``, ``crypto``, ``schema_formats``,
``signed_documents``, ``registry``, ``admission``, ``bundle``, ``conformance``, ``wire``;
``errors`` holds the exception hierarchy (base :class:`MissionWeaveError`).

Importing the package is cheap: the native module and the submodules load on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any, List

__version__ = "0.1.0"

# Root names of the reference runtime that this surface covers, and where each lives.
_EXPORTS = {
    "AgentRegistryKeyResolver": "registry",
    "BundleVerificationError": "errors",
    "CryptographyBundleSummary": "bundle",
    "ExpectedSignerEvidence": "registry",
    "ExpectedSignerRule": "_types",
    "KeyRegistryCompleteness": "_types",
    "KeyRegistrySnapshot": "registry",
    "KeyResolutionRequest": "registry",
    "KeyResolver": "registry",
    "KeyValidityEvidence": "registry",
    "MissionWeaveError": "errors",
    "PrincipalEvidence": "registry",
    "ProtectedInstant": "schema_formats",
    "ProtectedTime": "schema_formats",
    "ProtectedVerificationError": "errors",
    "ResolvedKeyEvidence": "registry",
    "SignatureMaterial": "signed_documents",
    "SignedDocument": "signed_documents",
    "SignedDocumentCodec": "signed_documents",
    "SignedDocumentKind": "_types",
    "SignedDocumentSigningError": "errors",
    "SignedDocumentVerificationError": "errors",
    "SigningKey": "crypto",
    "VerificationStage": "_types",
    "VerifiedSignedDocument": "signed_documents",
    "WireVerificationError": "errors",
    "verify_admission_bundle": "bundle",
    "verify_cryptography_bundle": "bundle",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:
    from ._types import (
        ExpectedSignerRule,
        KeyRegistryCompleteness,
        SignedDocumentKind,
        VerificationStage,
    )
    from .bundle import (
        CryptographyBundleSummary,
        verify_admission_bundle,
        verify_cryptography_bundle,
    )
    from .crypto import SigningKey
    from .errors import (
        BundleVerificationError,
        MissionWeaveError,
        ProtectedVerificationError,
        SignedDocumentSigningError,
        SignedDocumentVerificationError,
        WireVerificationError,
    )
    from .registry import (
        AgentRegistryKeyResolver,
        ExpectedSignerEvidence,
        KeyRegistrySnapshot,
        KeyResolutionRequest,
        KeyResolver,
        KeyValidityEvidence,
        PrincipalEvidence,
        ResolvedKeyEvidence,
    )
    from .schema_formats import ProtectedInstant, ProtectedTime
    from .signed_documents import (
        SignatureMaterial,
        SignedDocument,
        SignedDocumentCodec,
        VerifiedSignedDocument,
    )
