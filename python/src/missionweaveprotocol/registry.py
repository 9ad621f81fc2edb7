"""Registry evidence and key resolution (§6.4 stage 4).

:class:`AgentRegistryKeyResolver` is the native resolver (no Python calls during verification).
Any object with ``resolve(request) -> KeyRegistrySnapshot`` is a :class:`KeyResolver`; it must
return organization-wide evidence, anything else fails closed at stage 4.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from ._native import (
    AgentRegistryKeyResolver,
    ExpectedSignerEvidence,
    KeyRegistrySnapshot,
    KeyResolutionRequest,
    KeyValidityEvidence,
    PrincipalEvidence,
    ResolvedKeyEvidence,
)
from ._types import ExpectedSignerRule, KeyRegistryCompleteness


@runtime_checkable
class KeyResolver(Protocol):
    """Supplies complete, organization-wide Registry evidence for a key resolution request."""

    def resolve(self, request: KeyResolutionRequest) -> KeyRegistrySnapshot: ...


__all__ = [
    "AgentRegistryKeyResolver",
    "ExpectedSignerEvidence",
    "ExpectedSignerRule",
    "KeyRegistryCompleteness",
    "KeyRegistrySnapshot",
    "KeyResolutionRequest",
    "KeyResolver",
    "KeyValidityEvidence",
    "PrincipalEvidence",
    "ResolvedKeyEvidence",
]
