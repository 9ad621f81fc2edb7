"""The pinned protocol bundle embedded in the Rust core, and its integrity checks (§22).

``verify_cryptography_bundle()`` and ``verify_admission_bundle()`` re-verify the embedded
bundle (or a bundle directory given as ``root``) and raise :class:`BundleVerificationError`
on any problem. ``embedded_file(path)`` returns the bytes of one embedded file.
"""

from __future__ import annotations

from ._native import (
    SOURCE_COMMIT,
    AdmissionBundleSummary,
    CryptographyBundleSummary,
    embedded_file,
    embedded_paths,
    verify_admission_bundle,
    verify_cryptography_bundle,
)
from .errors import BundleVerificationError

__all__ = [
    "SOURCE_COMMIT",
    "AdmissionBundleSummary",
    "BundleVerificationError",
    "CryptographyBundleSummary",
    "embedded_file",
    "embedded_paths",
    "verify_admission_bundle",
    "verify_cryptography_bundle",
]
