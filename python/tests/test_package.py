"""Package surface: root re-exports, lazy import, typing markers, returned types."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import missionweaveprotocol as mwp
from missionweaveprotocol import _native

REFERENCE_ROOT_NAMES_COVERED = {
    "AgentRegistryKeyResolver", "BundleVerificationError", "CryptographyBundleSummary",
    "ExpectedSignerEvidence", "ExpectedSignerRule", "KeyRegistryCompleteness", "KeyRegistrySnapshot",
    "KeyResolutionRequest", "KeyResolver", "KeyValidityEvidence", "PrincipalEvidence", "ProtectedInstant",
    "ProtectedTime", "ProtectedVerificationError", "ResolvedKeyEvidence", "SignatureMaterial",
    "SignedDocument", "SignedDocumentCodec", "SignedDocumentKind", "SignedDocumentSigningError",
    "SignedDocumentVerificationError", "SigningKey", "VerificationStage", "VerifiedSignedDocument",
    "WireVerificationError", "verify_cryptography_bundle",
    "BudgetLedger", "BudgetLedgerSnapshot", "DelegationAuthority", "DelegationBudget",
    "DelegationGrant", "DelegationViolation", "DelegationViolationKind", "ExecutionLease",
    "LeaseState", "ResourceUsage",
}


def test_root_exports() -> None:
    assert REFERENCE_ROOT_NAMES_COVERED <= set(mwp.__all__)
    for name in mwp.__all__:
        assert getattr(mwp, name) is not None
    assert mwp.__version__ == "0.1.0"
    assert mwp.SignedDocumentCodec is _native.SignedDocumentCodec
    assert issubclass(mwp.SignedDocumentVerificationError, mwp.MissionWeaveError)


def test_import_is_lazy() -> None:
    code = (
        "import sys, missionweaveprotocol;"
        "print(sorted(m for m in sys.modules if m.startswith('missionweaveprotocol')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['missionweaveprotocol']"


def test_typing_markers() -> None:
    package = Path(mwp.__file__).parent
    assert (package / "py.typed").exists()
    assert (package / "_native.pyi").exists()


def test_module_map() -> None:
    import importlib

    for name in ("canonical", "crypto", "schema_formats", "signed_documents", "registry",
                 "admission", "bundle", "conformance", "wire", "errors",
                 "lease", "budget", "delegation", "execution", "scheduler", "artifacts"):
        module = importlib.import_module(f"missionweaveprotocol.{name}")
        for exported in module.__all__:
            assert hasattr(module, exported), f"{name}.{exported}"
