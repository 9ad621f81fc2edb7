"""The embedded bundle and its integrity checks, embedded or from a directory."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from missionweaveprotocol import bundle
from missionweaveprotocol.errors import InvalidInputError


def test_embedded_summaries() -> None:
    crypto = bundle.verify_cryptography_bundle()
    assert isinstance(crypto, bundle.CryptographyBundleSummary)
    assert crypto.source_commit == bundle.SOURCE_COMMIT
    assert crypto.profile_id == "missionweaveprotocol.signed-document-verification.v0.1"
    assert crypto.evaluation_count == 62 and crypto.case_count == 22 and crypto.manifest_version == 1
    assert crypto.artifact_digest.startswith("sha256:")
    admission = bundle.verify_admission_bundle()
    assert isinstance(admission, bundle.AdmissionBundleSummary)
    assert admission.evaluation_count == 30 and admission.artifact_count == 19
    assert admission.cryptography_artifact_digest == crypto.artifact_digest


def test_embedded_files() -> None:
    paths = bundle.embedded_paths()
    assert "cryptography/manifest.json" in paths and "schemas/command.schema.json" in paths
    assert all(isinstance(bundle.embedded_file(p), bytes) for p in paths)
    assert bundle.embedded_file("nope.json") is None
    assert bundle.embedded_file("../cryptography/manifest.json") is None
    with pytest.raises(InvalidInputError):
        bundle.embedded_file(b"cryptography/manifest.json")  # type: ignore[arg-type]


def _materialize(root: Path) -> None:
    for path in bundle.embedded_paths():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        data = bundle.embedded_file(path)
        assert data is not None
        target.write_bytes(data)


def test_directory_root_and_tampering(tmp_path: Path) -> None:
    _materialize(tmp_path)
    assert bundle.verify_cryptography_bundle(tmp_path).evaluation_count == 62
    assert bundle.verify_admission_bundle(str(tmp_path)).evaluation_count == 30
    victim = tmp_path / "cryptography/keys/registry-valid.json"
    victim.write_bytes(victim.read_bytes() + b" ")
    for verify in (bundle.verify_cryptography_bundle, bundle.verify_admission_bundle):
        with pytest.raises(bundle.BundleVerificationError) as caught:
            verify(tmp_path)
        assert caught.value.problems
        assert any("registry-valid.json" in p for p in caught.value.problems)
        assert caught.value.code == "INTERNAL_ERROR" and caught.value.retryable is False


def test_symlinks_are_confined_to_the_root(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _materialize(root)
    # A symlink that stays inside the root is followed.
    victim = root / "cryptography/keys/registry-valid.json"
    moved = root / "elsewhere.json"
    victim.rename(moved)
    os.symlink(moved, victim)
    assert bundle.verify_cryptography_bundle(root).evaluation_count == 62
    # A symlinked file pointing outside is refused by name.
    outside = tmp_path / "outside.json"
    moved.rename(outside)
    victim.unlink()
    os.symlink(outside, victim)
    with pytest.raises(bundle.BundleVerificationError) as caught:
        bundle.verify_cryptography_bundle(root)
    message = "artifact cryptography/keys/registry-valid.json resolves outside the bundle root"
    assert message in caught.value.problems


def test_a_symlinked_directory_mid_path_is_refused(tmp_path: Path) -> None:
    # Issue 9, item 3: only the last component used to be checked.
    root = tmp_path / "root"
    _materialize(root)
    keys = root / "cryptography/keys"
    keys.rename(tmp_path / "keys")
    os.symlink(tmp_path / "keys", keys)
    for verify in (bundle.verify_cryptography_bundle, bundle.verify_admission_bundle):
        with pytest.raises(bundle.BundleVerificationError) as caught:
            verify(root)
        assert caught.value.code == "INTERNAL_ERROR"
        assert any(
            p.endswith("artifact cryptography/keys/registry-valid.json resolves outside the bundle root")
            for p in caught.value.problems
        ), caught.value.problems
        assert not any("missing" in p for p in caught.value.problems), caught.value.problems


def test_unreadable_and_oversized_files_are_not_missing(tmp_path: Path) -> None:
    _materialize(tmp_path)
    victim = tmp_path / "cryptography/keys/registry-valid.json"
    victim.unlink()
    victim.mkdir()
    with pytest.raises(bundle.BundleVerificationError) as caught:
        bundle.verify_cryptography_bundle(tmp_path)
    assert (
        "artifact cryptography/keys/registry-valid.json is unreadable: not a regular file (a directory)"
        in caught.value.problems
    )
    manifest = tmp_path / "cryptography/manifest.json"
    with open(manifest, "r+b") as handle:
        handle.truncate(16 * 1024 * 1024 + 1)  # sparse: refused by its size, never read
    with pytest.raises(bundle.BundleVerificationError) as caught:
        bundle.verify_cryptography_bundle(tmp_path)
    assert caught.value.problems[0] == (
        "cryptography/manifest.json is too large: 16777217 bytes, the limit is 16777216 bytes"
    )


@pytest.mark.parametrize("root", ["/nonexistent/mwp-root", __file__])
def test_bad_roots(root: str) -> None:
    with pytest.raises(bundle.BundleVerificationError) as caught:
        bundle.verify_cryptography_bundle(root)
    assert "is not a directory" in str(caught.value)


@pytest.mark.parametrize("root", [12, b"\xff", object()])
def test_root_types(root: Any) -> None:
    with pytest.raises((InvalidInputError, bundle.BundleVerificationError)):
        bundle.verify_cryptography_bundle(root)
