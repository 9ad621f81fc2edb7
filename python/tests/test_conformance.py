"""The three bundles through Python (150 evaluations), the structural vectors through the
Python SchemaCatalog against the Rust runner, and the console script against the Rust binary."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest
from conftest import read, rust_outcomes, structural_vectors

from missionweaveprotocol import conformance
from missionweaveprotocol.errors import (
    BundleVerificationError,
    InvalidInputError,
    JsonParseError,
    SchemaValidationError,
)

REPO = Path(__file__).resolve().parents[2]


def test_all_bundles_pass() -> None:
    report = conformance.run()
    assert isinstance(report, conformance.RunReport) and report.ok
    assert [(r.kind, r.passed, r.total, r.ok) for r in report.reports] == [
        ("structural", 58, 58, True),
        ("cryptography", 62, 62, True),
        ("admission", 30, 30, True),
    ]
    assert sum(len(r.outcomes) for r in report.reports) == 150
    assert all(passed for r in report.reports for _, _, passed in r.outcomes)
    assert [r.summary() for r in report.reports] == [
        "58/58 structural vectors passed",
        "62/62 cryptography evaluations passed",
        "30/30 admission evaluations passed",
    ]
    parsed = json.loads(report.to_json())
    assert parsed["ok"] is True and set(parsed["bundles"]) == {"structural", "cryptography", "admission"}
    structural = conformance.run_manifest()
    assert isinstance(structural, conformance.ConformanceReport) and structural.passed
    assert len(structural.results) == 58 and structural.summary() == "58/58 conformance vectors passed"
    assert all(isinstance(r, conformance.VectorResult) and r.passed and r.error is None for r in structural.results)
    assert {r.expected_valid for r in structural.results} == {True, False}


VECTORS = structural_vectors()
CATALOG = conformance.SchemaCatalog()


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_structural_vector(vector: Dict[str, Any]) -> None:
    rust_actual, rust_passed = rust_outcomes("structural")[vector["name"]]
    assert rust_passed
    schema = vector["schema"][len("schemas/") :]
    raw = read(vector["instance"])
    try:
        CATALOG.validate_bytes(schema, raw)
        actual = "valid"
    except (SchemaValidationError, JsonParseError) as error:
        actual = "invalid"
        assert error.code in ("SCHEMA_VALIDATION_FAILED", "PROTOCOL_VIOLATION")
    assert actual == rust_actual == ("valid" if vector["valid"] else "invalid")
    if actual == "valid":
        CATALOG.validate(schema, json.loads(raw))


def test_schema_catalog_errors() -> None:
    assert "command" in CATALOG.names() and len(CATALOG.names()) == 22
    with pytest.raises(SchemaValidationError) as caught:
        CATALOG.validate("command", {"protocolVersion": "0.1"})
    assert caught.value.code == "SCHEMA_VALIDATION_FAILED" and caught.value.keyword
    with pytest.raises(SchemaValidationError):
        CATALOG.validate("no-such-schema", {})
    with pytest.raises(InvalidInputError):
        CATALOG.validate(None, {})  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        conformance.run(["structural", "nope"])
    with pytest.raises(InvalidInputError):
        conformance.run("structural")


def _rust_binary() -> str:
    candidates = [os.environ.get("MWP_CONFORMANCE_BIN", "")] + [
        str(REPO / "target" / profile / "missionweaveprotocol-conformance") for profile in ("release", "debug")
    ]
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    pytest.fail("the Rust conformance binary is not built: set MWP_CONFORMANCE_BIN or run scripts/test-python.sh")


def _console_script() -> str:
    script = Path(sys.executable).with_name("missionweaveprotocol-conformance")
    found = str(script) if script.exists() else shutil.which("missionweaveprotocol-conformance")
    assert found, "the console script is not installed"
    return found


ARGUMENTS: List[List[str]] = [
    [],
    ["--json"],
    ["--bundle", "cryptography"],
    ["--bundle=admission", "--json"],
    ["--bundle", "all"],
    ["--help"],
    ["-h"],
    ["--version"],
    ["-V"],
    ["--bundle", "nope"],
    ["--json=yes"],
    ["--bundle"],
    ["--frobnicate"],
    ["--root", "/nonexistent/mwp-root"],
]


@pytest.mark.parametrize("args", ARGUMENTS, ids=[" ".join(a) or "(none)" for a in ARGUMENTS])
def test_console_script_matches_rust_binary(args: List[str], tmp_path: Path) -> None:
    def run(program: str) -> "subprocess.CompletedProcess[str]":
        return subprocess.run([program, *args], cwd=tmp_path, capture_output=True, text=True, timeout=120)

    python, rust = run(_console_script()), run(_rust_binary())
    assert (python.returncode, python.stdout, python.stderr) == (rust.returncode, rust.stdout, rust.stderr)


def test_console_script_with_root(tmp_path: Path) -> None:
    from missionweaveprotocol import bundle

    for path in bundle.embedded_paths():
        target = tmp_path / "root" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        data = bundle.embedded_file(path)
        assert data is not None
        target.write_bytes(data)
    args = ["--root", str(tmp_path / "root")]
    python = subprocess.run([_console_script(), *args], capture_output=True, text=True, cwd=tmp_path)
    rust = subprocess.run([_rust_binary(), *args], capture_output=True, text=True, cwd=tmp_path)
    assert python.returncode == 0 == rust.returncode
    assert python.stdout == rust.stdout
    assert python.stdout.splitlines()[-1] == "30/30 admission evaluations passed"
    # An empty manifest: no evaluation can run, so the bundle is empty (exit 3, named on stderr).
    (tmp_path / "root/conformance/manifest.json").write_text("[]")
    python = subprocess.run([_console_script(), *args], capture_output=True, text=True, cwd=tmp_path)
    rust = subprocess.run([_rust_binary(), *args], capture_output=True, text=True, cwd=tmp_path)
    assert python.returncode == 3 == rust.returncode
    assert python.stdout == rust.stdout and "FAIL [structural]" in python.stdout
    assert python.stderr == rust.stderr and "the structural bundle in directory" in python.stderr
    # A missing bundle: exit 3 before any report.
    (tmp_path / "root/conformance/manifest.json").unlink()
    python = subprocess.run([_console_script(), *args], capture_output=True, text=True, cwd=tmp_path)
    rust = subprocess.run([_rust_binary(), *args], capture_output=True, text=True, cwd=tmp_path)
    assert (python.returncode, python.stdout, python.stderr) == (rust.returncode, rust.stdout, rust.stderr)
    assert python.returncode == 3 and python.stdout == ""
    assert "the structural bundle is missing: no conformance/manifest.json" in python.stderr


def test_run_with_a_symlinked_directory_mid_path_is_refused(tmp_path: Path) -> None:
    # Issue 9, item 3: with ``conformance/vectors/etc -> /etc`` and a manifest naming
    # ``conformance/vectors/etc/passwd``, the runner opened /etc/passwd.
    from missionweaveprotocol import bundle

    root = tmp_path / "root"
    for path in bundle.embedded_paths():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        data = bundle.embedded_file(path)
        assert data is not None
        target.write_bytes(data)
    assert conformance.run(["structural"], root=root).ok
    os.symlink("/etc", root / "conformance/vectors/etc")
    manifest = root / "conformance/manifest.json"
    entries = json.loads(manifest.read_text())
    outside = {
        "name": "outside",
        "schema": "schemas/command.schema.json",
        "instance": "conformance/vectors/etc/passwd",
        "valid": False,
    }
    manifest.write_text(json.dumps([outside, *entries]))
    refusal = "conformance/vectors/etc/passwd resolves outside the bundle root"
    report = conformance.run(["structural"], root=root)
    assert not report.ok
    messages = [message for _, message in report.reports[0].failures]
    assert refusal in messages, messages
    assert not any("root:" in message for message in messages)
    custom = root / "conformance/custom.json"
    custom.write_text(json.dumps([outside]))
    (result,) = conformance.run_manifest(root=root, manifest_path="conformance/custom.json").results
    assert result.name == "outside" and not result.passed and result.error == refusal
    custom.unlink()
    # A symlinked schemas/ directory no longer passes from files outside the root.
    manifest.write_text(json.dumps(entries))
    assert conformance.run(["structural"], root=root).ok
    (root / "schemas").rename(tmp_path / "schemas")
    os.symlink(tmp_path / "schemas", root / "schemas")
    report = conformance.run(["structural"], root=root)
    assert not report.ok
    messages = [message for _, message in report.reports[0].failures]
    assert "schemas resolves outside the bundle root" in messages, messages
    with pytest.raises(BundleVerificationError) as caught:
        conformance.run_manifest(root=root)
    assert "schemas resolves outside the bundle root" in caught.value.problems


def test_console_script_closed_pipe_is_quiet() -> None:
    """``missionweaveprotocol-conformance | head -1``: the reader goes away after one line."""
    child = subprocess.Popen([_console_script()], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout is not None and child.stderr is not None
    first = child.stdout.readline()
    assert first.startswith(b"bundle: embedded bundle at ")
    child.stdout.close()
    error = child.stderr.read()
    assert child.wait(timeout=120) == 0
    assert error == b""


def test_console_script_unwritable_output_is_exit_4() -> None:
    """A full device (Linux ``/dev/full``): exit status 4 and one error line, as the binary."""
    for program in (_console_script(), _rust_binary()):
        with open("/dev/full", "w") as full:
            result = subprocess.run([program, "--bundle", "structural"], stdout=full, stderr=subprocess.PIPE, text=True)
        assert result.returncode == 4, program
        assert result.stderr.startswith("error: cannot write the report: ") and result.stderr.count("\n") == 1


def test_run_cli_arguments() -> None:
    import io

    from missionweaveprotocol import _native

    out, err = io.StringIO(), io.StringIO()
    assert _native.run_cli(["--version"], out, err) == 0
    assert out.getvalue().startswith("missionweaveprotocol-conformance ") and err.getvalue() == ""
    assert _native.run_cli(["--bundle"], out, err) == 2
    assert err.getvalue().startswith("error: --bundle needs a value\n")
    with pytest.raises(InvalidInputError):
        _native.run_cli("--help", out, err)
    with pytest.raises(InvalidInputError):
        _native.run_cli([b"--help"], out, err)  # type: ignore[list-item]


def test_main_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    assert conformance.main(["--bundle", "structural"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("bundle: embedded bundle at ") and out[-1] == "58/58 structural vectors passed"


def test_run_manifest_with_another_manifest(tmp_path: Path) -> None:
    import json

    from missionweaveprotocol import bundle, conformance

    assert conformance.run_manifest().passed
    for path in bundle.embedded_paths():
        if path.startswith(("schemas/", "conformance/")):
            target = tmp_path / path
            target.parent.mkdir(parents=True, exist_ok=True)
            data = bundle.embedded_file(path)
            assert data is not None
            target.write_bytes(data)
    entries = [
        {"name": "a", "schema": "schemas/command.schema.json", "instance": "conformance/vectors/valid/command.json", "valid": True},
        {"name": "b", "schema": "schemas/command.schema.json", "instance": "conformance/vectors/invalid/command-missing-signature.json", "valid": False},
    ]
    (tmp_path / "conformance/two.json").write_text(json.dumps(entries))
    report = conformance.run_manifest(tmp_path, manifest_path="conformance/two.json")
    assert report.passed and report.summary() == "2/2 conformance vectors passed"
    assert [(r.name, r.expected_valid, r.actual_valid) for r in report.results] == [("a", True, True), ("b", False, False)]
    entries[1]["valid"] = True
    (tmp_path / "conformance/two.json").write_text(json.dumps(entries))
    report = conformance.run_manifest(tmp_path, manifest_path="conformance/two.json")
    assert not report.passed and report.summary() == "1/2 conformance vectors passed"
    failed = report.results[1]
    assert (failed.name, failed.expected_valid, failed.actual_valid, failed.passed) == ("b", True, False, False)
    assert failed.error


def test_reference_report_shapes_are_frozen_dataclasses() -> None:
    import dataclasses

    ok = conformance.VectorResult("a", True, True)
    bad = conformance.VectorResult("b", False, True, error="x")
    assert ok.passed and not bad.passed and ok.error is None
    report = conformance.ConformanceReport((ok, bad))
    assert not report.passed and report.summary() == "1/2 conformance vectors passed"
    assert conformance.ConformanceReport(()).passed
    with pytest.raises(dataclasses.FrozenInstanceError):
        ok.name = "c"  # type: ignore[misc]


def test_schema_catalog_from_a_directory(tmp_path: Path) -> None:
    from missionweaveprotocol import bundle

    for path in bundle.embedded_paths():
        if path.startswith("schemas/"):
            target = tmp_path / path
            target.parent.mkdir(parents=True, exist_ok=True)
            data = bundle.embedded_file(path)
            assert data is not None
            target.write_bytes(data)
    catalog = conformance.SchemaCatalog(tmp_path / "schemas")
    assert catalog.schema_root == str(tmp_path / "schemas") and CATALOG.schema_root is None
    assert catalog.names() == CATALOG.names()
    command = json.loads(read("conformance/vectors/valid/command.json"))
    catalog.validate("command.schema.json", command)
    with pytest.raises(SchemaValidationError):
        catalog.validate("command.schema.json", {**command, "protocolVersion": "9"})
    # A user schema in another directory compiles through the same core compiler.
    own = tmp_path / "own"
    own.mkdir()
    (own / "thing.schema.json").write_text(json.dumps({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://example.org/thing.schema.json",
        "type": "object", "required": ["n"], "properties": {"n": {"type": "integer", "minimum": 1}},
    }))
    mine = conformance.SchemaCatalog(str(own))
    mine.validate("thing", {"n": 2})
    with pytest.raises(SchemaValidationError):
        mine.validate("thing", {"n": 0})


def test_schema_catalog_walks_no_symlink_and_reads_nothing_outside(tmp_path: Path) -> None:
    own = tmp_path / "own"
    own.mkdir()
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://example.org/thing.schema.json",
        "type": "object",
    }
    (own / "thing.schema.json").write_text(json.dumps(schema))
    # A symlink loop used to be walked until the kernel refused (ELOOP) and the catalog failed.
    os.symlink(".", own / "loop")
    # A directory linked from outside is not walked: its schema is not in the catalog.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "other.schema.json").write_text(json.dumps({**schema, "$id": "https://example.org/other.schema.json"}))
    os.symlink(elsewhere, own / "linked")
    catalog = conformance.SchemaCatalog(own)
    assert catalog.names() == ["thing"]
    # A file over 16 MiB is refused by its size, naming it.
    with open(own / "huge.json", "wb") as handle:
        handle.truncate(16 * 1024 * 1024 + 1)
    with pytest.raises(BundleVerificationError) as caught:
        conformance.SchemaCatalog(own)
    assert "huge.json is too large" in str(caught.value)


@pytest.mark.parametrize("problem", ["missing", "empty", "unsupported-keyword", "no-id"])
def test_schema_catalog_refuses_what_the_core_cannot_compile(tmp_path: Path, problem: str) -> None:
    from missionweaveprotocol.errors import BundleVerificationError

    root = tmp_path / "schemas"
    if problem != "missing":
        root.mkdir()
    if problem == "unsupported-keyword":
        (root / "x.schema.json").write_text('{"$id": "https://example.org/x", "dependentSchemas": {}}')
    if problem == "no-id":
        (root / "x.schema.json").write_text('{"type": "object"}')
    with pytest.raises(BundleVerificationError) as caught:
        conformance.SchemaCatalog(root)
    assert str(root) in str(caught.value)
    with pytest.raises(InvalidInputError):
        conformance.SchemaCatalog(42)  # type: ignore[arg-type]
