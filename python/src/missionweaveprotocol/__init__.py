"""MissionWeaveProtocol 0.1 for Python: the whole runtime, on the Rust core.

Verification, the authoritative Core and its durable stores, the Agent side, human control and
Context Packages; every rule runs in Rust, this package converts. Module map (as the reference
runtime): verification ``canonical``, ``crypto``, ``schema_formats``, ``signed_documents``,
``registry``, ``admission``, ``bundle``, ``conformance``, ``wire``; the sans-IO bounded-authority
and scheduling modules ``lease``, ``budget``, ``delegation``, ``execution``, ``scheduler``; the
authoritative core ``core`` (``Core``: ``perform``, ``query``, ``replay``), ``models``,
``payloads``, ``store``, ``ingress``, ``documents``, ``artifacts``; the Agent side ``auth``,
``policy``, ``agent``, ``offline``, ``replay``, ``local_store``; human control ``control``;
``context``; ``errors`` holds the exception hierarchy (base :class:`MissionWeaveError`; the
Core's refusals are ``core.MissionWeaveProtocolError``, the reference's families).

Importing the package is cheap: the native module and the submodules load on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any, List

__version__ = "0.1.0"

# Root names of the reference runtime that this surface covers, and where each lives.
_EXPORTS = {
    "AgentRegistryKeyResolver": "registry",
    "BudgetLedger": "budget",
    "BudgetLedgerSnapshot": "budget",
    "DelegationAuthority": "delegation",
    "DelegationBudget": "delegation",
    "DelegationGrant": "delegation",
    "DelegationViolation": "delegation",
    "DelegationViolationKind": "delegation",
    "ExecutionLease": "lease",
    "LeaseState": "lease",
    "ResourceUsage": "budget",
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


# `X as X`: an explicit re-export, so `mypy --strict` users may import every root name.
if TYPE_CHECKING:
    from ._types import (
        ExpectedSignerRule as ExpectedSignerRule,
        KeyRegistryCompleteness as KeyRegistryCompleteness,
        SignedDocumentKind as SignedDocumentKind,
        VerificationStage as VerificationStage,
    )
    from .budget import (
        BudgetLedger as BudgetLedger,
        BudgetLedgerSnapshot as BudgetLedgerSnapshot,
        ResourceUsage as ResourceUsage,
    )
    from .bundle import (
        CryptographyBundleSummary as CryptographyBundleSummary,
        verify_admission_bundle as verify_admission_bundle,
        verify_cryptography_bundle as verify_cryptography_bundle,
    )
    from .crypto import SigningKey as SigningKey
    from .delegation import (
        DelegationAuthority as DelegationAuthority,
        DelegationBudget as DelegationBudget,
        DelegationGrant as DelegationGrant,
        DelegationViolation as DelegationViolation,
        DelegationViolationKind as DelegationViolationKind,
    )
    from .errors import (
        BundleVerificationError as BundleVerificationError,
        MissionWeaveError as MissionWeaveError,
        ProtectedVerificationError as ProtectedVerificationError,
        SignedDocumentSigningError as SignedDocumentSigningError,
        SignedDocumentVerificationError as SignedDocumentVerificationError,
        WireVerificationError as WireVerificationError,
    )
    from .lease import ExecutionLease as ExecutionLease
    from .lease import LeaseState as LeaseState
    from .registry import (
        AgentRegistryKeyResolver as AgentRegistryKeyResolver,
        ExpectedSignerEvidence as ExpectedSignerEvidence,
        KeyRegistrySnapshot as KeyRegistrySnapshot,
        KeyResolutionRequest as KeyResolutionRequest,
        KeyResolver as KeyResolver,
        KeyValidityEvidence as KeyValidityEvidence,
        PrincipalEvidence as PrincipalEvidence,
        ResolvedKeyEvidence as ResolvedKeyEvidence,
    )
    from .schema_formats import ProtectedInstant as ProtectedInstant
    from .schema_formats import ProtectedTime as ProtectedTime
    from .signed_documents import (
        SignatureMaterial as SignatureMaterial,
        SignedDocument as SignedDocument,
        SignedDocumentCodec as SignedDocumentCodec,
        VerifiedSignedDocument as VerifiedSignedDocument,
    )
