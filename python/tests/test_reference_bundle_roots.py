"""Issue 25: ``verify_cryptography_bundle(root)`` and ``run_manifest(root)`` accept a root holding
another protocol commit's complete bundle (the reference vendors an older one: 21 schemas, 56
vectors, 58 cryptography evaluations) when its manifest and its pin agree, and report which
commit it is. The older bundle itself cannot be copied here, so the test builds a complete,
self-consistent bundle that differs from the embedded one (one schema, its structural vectors
and one cryptography evaluation fewer) under a reference-style ``PROTOCOL_PIN.json``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Callable, Dict, Set

import pytest

from missionweaveprotocol import bundle
from missionweaveprotocol.canonical import canonical_bytes
from missionweaveprotocol.conformance import run_manifest

OLDER = "33e47ad8a7318f942de77fb72dbb054d85881b40"
CRYPTO = "cryptography/manifest.json"
STRUCTURAL = "conformance/manifest.json"
DROPPED_SCHEMA = "schemas/first-admission-record.schema.json"
# A failure-matrix evaluation whose document no other evaluation uses.
DROPPED_DOCUMENT = "cryptography/vectors/signed-documents/invalid/agent-card-wrong-signer.json"
REFERENCED = ("document", "registry", "signingKey", "input", "expectedJcs")


def _materialize(root: Path) -> None:
    for path in bundle.embedded_paths():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        data = bundle.embedded_file(path)
        assert data is not None
        target.write_bytes(data)


def _referenced(manifest: Dict[str, Any]) -> Set[str]:
    paths = set()
    for case in manifest["cases"]:
        for evaluation in case["evaluations"]:
            paths.update(evaluation[k] for k in REFERENCED if isinstance(evaluation.get(k), str))
            signing = evaluation.get("expect", {}).get("verified", {}).get("signingBytes")
            if isinstance(signing, str):
                paths.add(signing)
    return paths


def _digest(manifest: Dict[str, Any]) -> str:
    rest = {k: v for k, v in manifest.items() if k != "artifactDigest"}
    return "sha256:" + hashlib.sha256(canonical_bytes(rest)).hexdigest()


def _json_files(root: Path, tree: str) -> int:
    return sum(1 for p in (root / tree).rglob("*.json") if p.is_file())


def _older_bundle(root: Path) -> Dict[str, Any]:
    """The embedded bundle minus one schema (and its structural vectors) and one cryptography
    evaluation (and the files only it used), re-digested, with a matching pin. Returns the pin."""
    _materialize(root)
    (root / DROPPED_SCHEMA).unlink()
    vectors = json.loads((root / STRUCTURAL).read_text())
    kept = [v for v in vectors if v["schema"] != DROPPED_SCHEMA]
    for vector in vectors:
        if vector["schema"] == DROPPED_SCHEMA:
            (root / vector["instance"]).unlink()
    assert len(kept) < len(vectors)
    (root / STRUCTURAL).write_text(json.dumps(kept, indent=2) + "\n")

    manifest = json.loads((root / CRYPTO).read_text())
    before = _referenced(manifest)
    for case in manifest["cases"]:
        case["evaluations"] = [e for e in case["evaluations"] if e.get("document") != DROPPED_DOCUMENT]
    gone = before - _referenced(manifest)
    assert DROPPED_DOCUMENT in gone
    manifest["artifacts"] = [a for a in manifest["artifacts"] if a["path"] not in gone]
    for path in gone:
        (root / path).unlink()
    manifest["artifactDigest"] = _digest(manifest)
    (root / CRYPTO).write_text(json.dumps(manifest, indent=2) + "\n")

    pin = {
        "repository": "https://github.com/missionweaveprotocol/missionweaveprotocol",
        "commit": OLDER,
        "protocolVersion": "0.1",
        "artifacts": {
            "schemas": {"path": "schemas", "files": _json_files(root, "schemas")},
            "conformance": {"path": "conformance", "files": _json_files(root, "conformance")},
        },
        "cryptography": {
            "path": CRYPTO,
            "profileId": manifest["profileId"],
            "manifestVersion": 1,
            "artifactDigest": manifest["artifactDigest"],
            "artifactCount": len(manifest["artifacts"]),
            "caseCount": len(manifest["cases"]),
            "evaluationCount": sum(len(c["evaluations"]) for c in manifest["cases"]),
        },
    }
    (root / "PROTOCOL_PIN.json").write_text(json.dumps(pin, indent=2))
    return pin


def test_an_older_complete_bundle_is_accepted_and_named(tmp_path: Path) -> None:
    pin = _older_bundle(tmp_path)
    summary = bundle.verify_cryptography_bundle(tmp_path)
    assert summary.source_commit == OLDER != bundle.SOURCE_COMMIT
    assert summary.evaluation_count == pin["cryptography"]["evaluationCount"] == 61
    assert summary.artifact_count == pin["cryptography"]["artifactCount"]
    assert summary.artifact_digest == pin["cryptography"]["artifactDigest"]
    report = run_manifest(tmp_path)
    assert report.passed, [r for r in report.results if not r.passed]
    assert report.source_commit == OLDER
    assert len(report.results) < 58
    # The protocol repository's own pin layout (commit only) is read too.
    (tmp_path / "PROTOCOL_PIN.json").unlink()
    (tmp_path / "PIN.json").write_text(json.dumps({"commit": OLDER, "protocolVersion": "0.1"}))
    assert bundle.verify_cryptography_bundle(tmp_path).source_commit == OLDER
    assert run_manifest(tmp_path).source_commit == OLDER


def test_the_embedded_bundle_reports_its_commit(tmp_path: Path) -> None:
    assert run_manifest().source_commit == bundle.SOURCE_COMMIT
    _materialize(tmp_path)
    assert bundle.verify_cryptography_bundle(tmp_path).source_commit == bundle.SOURCE_COMMIT
    (tmp_path / "PIN.json").write_text(json.dumps({"commit": bundle.SOURCE_COMMIT}))
    assert run_manifest(tmp_path).source_commit == bundle.SOURCE_COMMIT


def _edit_pin(edit: Callable[[Dict[str, Any]], None]) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        path = root / "PROTOCOL_PIN.json"
        pin = json.loads(path.read_text())
        edit(pin)
        path.write_text(json.dumps(pin))
    return apply


def _flip_digest(pin: Dict[str, Any]) -> None:
    digest = pin["cryptography"]["artifactDigest"]
    pin["cryptography"]["artifactDigest"] = digest[:-1] + ("0" if digest[-1] != "0" else "1")


@pytest.mark.parametrize(
    ("break_it", "problem"),
    [
        (_edit_pin(_flip_digest), "artifactDigest"),
        (_edit_pin(lambda p: p["cryptography"].update(evaluationCount=58)), "evaluationCount"),
        (_edit_pin(lambda p: p["cryptography"].update(profileId="other")), "profileId"),
        (_edit_pin(lambda p: p["artifacts"]["schemas"].update(files=22)), "schemas/"),
        (_edit_pin(lambda p: p.update(commit="33e47ad")), "commit"),
        (_edit_pin(lambda p: p.update(protocolVersion="0.2")), "protocolVersion"),
        # The pin names the embedded commit (or there is none): this commit's checks apply.
        (_edit_pin(lambda p: p.update(commit=bundle.SOURCE_COMMIT)), "expected 22 schemas"),
        (lambda root: (root / "PROTOCOL_PIN.json").unlink(), "expected 22 schemas"),
        # Pin and manifest agree, but an artifact's bytes do not.
        (lambda root: (root / "cryptography/keys/registry-valid.json").write_text("{}"),
         "registry-valid.json"),
        # Two pin files naming different commits.
        (lambda root: (root / "PIN.json").write_text(json.dumps({"commit": bundle.SOURCE_COMMIT})),
         "PIN.json"),
    ],
)
def test_a_bundle_whose_pin_and_manifest_disagree_is_refused(
    tmp_path: Path, break_it: Callable[[Path], None], problem: str
) -> None:
    _older_bundle(tmp_path)
    break_it(tmp_path)
    with pytest.raises(bundle.BundleVerificationError) as refused:
        bundle.verify_cryptography_bundle(tmp_path)
    assert any(problem in p for p in refused.value.problems), refused.value.problems


def test_a_changed_bundle_must_name_its_commit(tmp_path: Path) -> None:
    # Complete and self-consistent, passing every check of this commit, yet not its bytes: the
    # canonicalization input gains a trailing newline (same JSON, same JCS), its artifact entry
    # and the manifest digest are recomputed.
    _materialize(tmp_path)
    manifest = json.loads((tmp_path / CRYPTO).read_text())
    target = "cryptography/vectors/canonicalization/rfc8785-section-3.2.2-input.json"
    data = (tmp_path / target).read_bytes() + b"\n"
    (tmp_path / target).write_bytes(data)
    (entry,) = [a for a in manifest["artifacts"] if a["path"] == target]
    entry.update(byteLength=len(data), sha256="sha256:" + hashlib.sha256(data).hexdigest())
    manifest["artifactDigest"] = _digest(manifest)
    (tmp_path / CRYPTO).write_text(json.dumps(manifest))
    with pytest.raises(bundle.BundleVerificationError) as refused:
        bundle.verify_cryptography_bundle(tmp_path)
    assert any("names no protocol commit" in p for p in refused.value.problems)
    (tmp_path / "PIN.json").write_text(json.dumps({"commit": bundle.SOURCE_COMMIT}))
    with pytest.raises(bundle.BundleVerificationError) as refused:
        bundle.verify_cryptography_bundle(tmp_path)
    assert any("artifactDigest" in p for p in refused.value.problems)
    (tmp_path / "PIN.json").write_text(json.dumps({"commit": OLDER}))
    assert bundle.verify_cryptography_bundle(tmp_path).source_commit == OLDER


def test_structural_run_of_a_root_whose_trees_disagree_with_its_pin(tmp_path: Path) -> None:
    _older_bundle(tmp_path)
    _edit_pin(lambda p: p["artifacts"]["conformance"].update(files=58))(tmp_path)
    with pytest.raises(bundle.BundleVerificationError) as refused:
        run_manifest(tmp_path)
    assert any("conformance/" in p for p in refused.value.problems)
    # Without the older pin, the root is held to this commit's counts (58 vectors, 22 schemas).
    (tmp_path / "PROTOCOL_PIN.json").unlink()
    with pytest.raises(bundle.BundleVerificationError):
        run_manifest(tmp_path)
