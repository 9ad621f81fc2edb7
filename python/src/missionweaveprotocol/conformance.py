"""Conformance runners for the three embedded bundles (58 structural vectors, 62 cryptography
evaluations, 30 admission evaluations), the schema catalog, and the
``missionweaveprotocol-conformance`` console script (the Rust command itself, through ``run_cli``).
"""

from __future__ import annotations

import os
import sys
from typing import Iterable, Optional, Sequence, Union

from ._native import BundleReport, ConformanceReport, SchemaCatalog, run_cli, run_conformance, run_structural_manifest
from .errors import SchemaValidationError

BUNDLES = ("structural", "cryptography", "admission")

PathLike = Union[str, "os.PathLike[str]"]


def run(bundles: Iterable[str] = BUNDLES, root: Optional[PathLike] = None) -> ConformanceReport:
    """Runs the selected bundles from the embedded bundle, or from the bundle directory ``root``."""
    return run_conformance(list(bundles), root)


def run_manifest(root: Optional[PathLike] = None, manifest_path: Optional[str] = None) -> ConformanceReport:
    """Runs the structural (schema) conformance vectors, as the reference's ``run_manifest``.

    ``manifest_path`` names another manifest of the same shape, relative to the bundle root;
    the pinned count and closure checks apply only to the pinned ``conformance/manifest.json``.
    """
    if manifest_path is None:
        return run_conformance(["structural"], root)
    return run_structural_manifest(manifest_path, root)


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
    "SchemaCatalog",
    "SchemaValidationError",
    "main",
    "run",
    "run_manifest",
]
