"""Registry evidence and key resolution (§6.4 stage 4).

:class:`AgentRegistryKeyResolver` is the native resolver (no Python calls during verification).
Any object with ``resolve(request) -> KeyRegistrySnapshot`` is a :class:`KeyResolver`; it must
return organization-wide evidence, anything else fails closed at stage 4. Registry bytes are
validated when a :class:`KeyRegistrySnapshot` or :class:`AgentRegistryKeyResolver` is made:
malformed evidence raises ``SignedDocumentVerificationError`` (stage ``key-resolution``) there.

Validated snapshots are kept in a process-wide cache keyed by the digest of their bytes, bounded
in bytes (default 128 MiB, LRU, entries no snapshot or resolver holds evicted first):
``set_registry_cache_budget(n)`` changes the budget (0 disables the cache) and
``registry_cache_stats()`` reports ``entries``, ``bytes`` and ``budget``. A snapshot or resolver
keeps its validated evidence after the cache evicted it.

:class:`RegistryBuilder` writes Registry evidence for one's own Agents::

    registry = (
        RegistryBuilder("urn:example:org")
        .add_key(key.key_id, PrincipalEvidence("agent", "urn:example:agent:a"), key.public_key,
                 "2026-01-01T00:00:00Z")
        .build()
    )
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ._native import (
    AgentRegistryKeyResolver,
    ExpectedSignerEvidence,
    KeyRegistrySnapshot,
    KeyResolutionRequest,
    KeyValidityEvidence,
    PrincipalEvidence,
    RegistryBuilder,
    ResolvedKeyEvidence,
    ValidityRecord,
    registry_cache_stats,
    set_registry_cache_budget,
)
from ._types import ExpectedSignerRule, KeyRegistryCompleteness


@runtime_checkable
class KeyResolver(Protocol):
    """Supplies complete, organization-wide Registry evidence for a key resolution request."""

    def resolve(self, request: KeyResolutionRequest) -> KeyRegistrySnapshot: ...


# The reference's Organization Agent registry (its older model set, pydantic): loaded on first
# use, so that key resolution does not import pydantic.
_AGENT_REGISTRY = (
    "AgentCard",
    "AgentRegistry",
    "CapabilityDescriptor",
    "CapabilityPerformance",
    "PresenceRecord",
    "RegistryError",
)

if TYPE_CHECKING:
    from ._agent_registry import (
        AgentCard as AgentCard,
        AgentRegistry as AgentRegistry,
        CapabilityDescriptor as CapabilityDescriptor,
        CapabilityPerformance as CapabilityPerformance,
        PresenceRecord as PresenceRecord,
        RegistryError as RegistryError,
    )


def __getattr__(name: str) -> Any:
    if name not in _AGENT_REGISTRY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__package__}._agent_registry"), name)
    globals()[name] = value
    return value


__all__ = [
    "AgentCard",
    "AgentRegistry",
    "AgentRegistryKeyResolver",
    "CapabilityDescriptor",
    "CapabilityPerformance",
    "ExpectedSignerEvidence",
    "ExpectedSignerRule",
    "KeyRegistryCompleteness",
    "KeyRegistrySnapshot",
    "KeyResolutionRequest",
    "KeyResolver",
    "KeyValidityEvidence",
    "PresenceRecord",
    "PrincipalEvidence",
    "RegistryBuilder",
    "RegistryError",
    "ResolvedKeyEvidence",
    "ValidityRecord",
    "registry_cache_stats",
    "set_registry_cache_budget",
]
