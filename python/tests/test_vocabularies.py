"""Every enum this package shares with the core is spelled exactly as the core spells it: one
spelling list per vocabulary, in Rust (``missionweaveprotocol_engine::vocabularies``)."""

from __future__ import annotations

from enum import Enum
from typing import Type

import pytest

from missionweaveprotocol import _native, _types

VOCABULARIES = _native.vocabularies()

SAME = [
    (_types.ErrorCode, "wire_code"),
    (_types.SignedDocumentKind, "signed_document_kind"),
    (_types.LeaseState, "lease_state"),
    (_types.LeaseType, "lease_type"),
    (_types.DelegationViolationKind, "delegation_violation_kind"),
    (_types.RetryReason, "retry_reason"),
    (_types.WorkState, "work_state"),
    (_types.AdmissionReason, "scheduler_admission_reason"),
]


@pytest.mark.parametrize("enum, name", SAME, ids=[name for _, name in SAME])
def test_python_enum_is_the_cores_vocabulary(enum: Type[Enum], name: str) -> None:
    # Same spellings; the order of a Python enum follows the reference where it has one.
    values = [member.value for member in enum]
    assert len(values) == len(VOCABULARIES[name])
    assert set(values) == set(VOCABULARIES[name])


def test_verification_stages_are_the_cores() -> None:
    # The six of §6.4, then `admission` (not a seventh cryptographic stage).
    assert tuple(s.value for s in _types.VerificationStage) == VOCABULARIES["stage"]
    assert VOCABULARIES["stage"][6] == "admission"


def test_dimensions_are_the_reference_resource_usage_fields() -> None:
    from missionweaveprotocol.budget import ResourceUsage

    assert VOCABULARIES["dimension"] == (
        "financial_microunits",
        "model_tokens",
        "tool_calls",
        "compute_seconds",
        "wall_clock_seconds",
        "external_actions",
    )
    usage = ResourceUsage(**{name: 1 for name in VOCABULARIES["dimension"]})
    assert all(getattr(usage, name) == 1 for name in VOCABULARIES["dimension"])


def test_every_vocabulary_is_nonempty_and_unique() -> None:
    for name, values in VOCABULARIES.items():
        assert values and len(set(values)) == len(values), name
