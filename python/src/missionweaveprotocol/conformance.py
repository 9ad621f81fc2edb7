"""Conformance runners for the three embedded bundles (58 structural vectors, 62 cryptography
evaluations, 30 admission evaluations), the schema catalog, and the
``missionweaveprotocol-conformance`` console script (the Rust command itself, through ``run_cli``).

As in the reference: :func:`run_manifest` returns a frozen :class:`ConformanceReport` of
:class:`VectorResult` values (``passed``, ``summary()``), and ``SchemaCatalog(schema_root=None)``
validates with ``validate(schema_name, instance)``. The vectors run in the Rust core; these
dataclasses only carry its outcomes. :func:`run` runs whole bundles and returns the core's
:class:`RunReport` (per-bundle reports, ``ok``, ``to_json()``).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Iterable, List, Optional, Sequence, Tuple, Union

from ._native import (
    SOURCE_COMMIT,
    BundleReport,
    SchemaCatalog,
    run_cli,
    run_conformance,
    run_structural_manifest,
)
from ._native import ConformanceReport as RunReport
from .errors import BundleVerificationError, SchemaValidationError

BUNDLES = ("structural", "cryptography", "admission")

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class VectorResult:
    """One structural vector: what the manifest expects and what the schema said."""

    name: str
    expected_valid: bool
    actual_valid: bool
    error: Optional[str] = None

    @property
    def passed(self) -> bool:
        return self.expected_valid == self.actual_valid


@dataclass(frozen=True)
class ConformanceReport:
    """The results of a structural (schema) conformance manifest."""

    results: Tuple[VectorResult, ...]
    #: The protocol commit the bundle root's pin names (``PROTOCOL_PIN.json`` or ``PIN.json``;
    #: the embedded bundle's commit for the default root), ``None`` when the root has no pin.
    source_commit: Optional[str] = field(default=None, compare=False)

    @property
    def passed(self) -> bool:
        return all(result.passed for result in self.results)

    def summary(self) -> str:
        passed = sum(1 for result in self.results if result.passed)
        return f"{passed}/{len(self.results)} conformance vectors passed"


def run(bundles: Iterable[str] = BUNDLES, root: Optional[PathLike] = None) -> RunReport:
    """Runs the selected bundles from the embedded bundle, or from the bundle directory ``root``."""
    return run_conformance(list(bundles), root)


def _vector_results(report: BundleReport) -> Tuple[VectorResult, ...]:
    if any(identifier == "integrity" for identifier, _ in report.failures):
        problems = [message for identifier, message in report.failures if identifier == "integrity"]
        raise BundleVerificationError(
            "the conformance manifest cannot be run: " + "; ".join(problems), problems=problems
        )
    errors = dict(report.failures)
    results = []
    for name, actual, passed in report.outcomes:
        actual_valid = actual == "valid"
        expected_valid = actual_valid if passed else not actual_valid
        results.append(VectorResult(name, expected_valid, actual_valid, errors.get(name)))
    return tuple(results)


def run_manifest(root: Optional[PathLike] = None, manifest_path: Optional[str] = None) -> ConformanceReport:
    """Runs the structural (schema) conformance vectors, as the reference's ``run_manifest``.

    ``root`` is a bundle directory (default: the embedded bundle); ``manifest_path`` names
    another manifest of the same shape, relative to the bundle root; the pinned count and
    closure checks apply only to the pinned ``conformance/manifest.json``. A manifest that
    cannot be run raises :class:`BundleVerificationError`; ``error`` is set on failed vectors.
    """
    if manifest_path is None:
        report = run_conformance(["structural"], root)
    else:
        report = run_structural_manifest(manifest_path, root)
    bundle = report.reports[0]
    commit = bundle.facts.get("commit")
    if commit is None and root is None:
        commit = SOURCE_COMMIT
    return ConformanceReport(_vector_results(bundle), commit)


def _silence_broken_stdout() -> None:
    """Standard output failed (the reader closed the pipe, ``| head -1``, or the device is
    full): the Rust command already handled it (a quiet end, or exit status 4), so send what is
    still buffered to ``os.devnull`` instead of failing again at interpreter exit."""
    try:
        sys.stdout.flush()
    except OSError:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``missionweaveprotocol-conformance [--root DIR] [--bundle NAME|all] [--json]``.

    Runs the Rust command (the same code as the binary: options, output, exit statuses; see
    ``--help``) on ``sys.argv[1:]`` and returns its exit status (the console script exits with it).
    """
    args = sys.argv[1:] if argv is None else list(argv)
    code = run_cli(args, sys.stdout, sys.stderr)
    _silence_broken_stdout()
    return code


__all__ = [
    "BUNDLES",
    "BundleReport",
    "ConformanceReport",
    "RunReport",
    "SchemaCatalog",
    "SchemaValidationError",
    "VectorResult",
    "main",
    "run",
    "run_manifest",
]
