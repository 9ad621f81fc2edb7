"""Shared fixtures: the embedded protocol bundle (read through the package's own
``bundle.embedded_file``), its manifests, and the Rust core's conformance outcomes."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Dict, Iterator, List, Tuple

import pytest

from missionweaveprotocol import bundle, conformance

CRYPTO_MANIFEST = "cryptography/manifest.json"
ADMISSION_MANIFEST = "admission/manifest.json"
STRUCTURAL_MANIFEST = "conformance/manifest.json"


def read(path: str) -> bytes:
    data = bundle.embedded_file(path)
    assert data is not None, f"{path} is not embedded"
    return data


def read_json(path: str) -> Any:
    return json.loads(read(path))


@lru_cache(maxsize=None)
def rust_outcomes(kind: str) -> Dict[str, Tuple[str, bool]]:
    """``id -> (actual, passed)`` from the Rust core's own runner for one bundle."""
    report = conformance.run([kind])
    (bundle_report,) = report.reports
    outcomes = {identifier: (actual, passed) for identifier, actual, passed in bundle_report.outcomes}
    assert len(outcomes) == bundle_report.total
    return outcomes


def crypto_evaluations() -> Iterator[Tuple[str, Dict[str, Any]]]:
    """Every cryptography evaluation with the ID the Rust runner gives it."""
    manifest = read_json(CRYPTO_MANIFEST)
    for case in manifest["cases"]:
        evaluations: List[Dict[str, Any]] = case["evaluations"]
        for index, evaluation in enumerate(evaluations):
            fault = evaluation.get("fault") or {}
            label = fault.get("id") or evaluation.get("profileId")
            if len(evaluations) == 1:
                identifier = case["id"]
            elif label:
                identifier = f"{case['id']}/{label}"
            else:
                identifier = f"{case['id']}/{index}"
            yield identifier, evaluation


def admission_evaluations() -> Iterator[Tuple[str, Dict[str, Any]]]:
    manifest = read_json(ADMISSION_MANIFEST)
    for case in manifest["cases"]:
        for evaluation in case["evaluations"]:
            yield evaluation["id"], evaluation


def structural_vectors() -> List[Dict[str, Any]]:
    vectors: List[Dict[str, Any]] = read_json(STRUCTURAL_MANIFEST)
    return vectors


@pytest.fixture(scope="session")
def golden() -> Dict[str, Any]:
    """The golden Command, its Registry and signing key fixture."""
    return {
        "document": read("cryptography/vectors/signed-documents/valid/command.json"),
        "registry": read("cryptography/keys/registry-valid.json"),
        "key": read_json("cryptography/keys/signing-coordinator.json"),
    }
