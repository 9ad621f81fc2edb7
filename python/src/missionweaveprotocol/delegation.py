"""Scoped Delegation Grants (§9.1).

A :class:`DelegationAuthority` wraps one :class:`DelegationGrant` and checks every use against
the authoritative state passed in: a :class:`DelegationContext` (actor, Mission/Group, current
Coordinator and its epoch, the actor's :class:`MembershipView`, Organization depth limit, now)
and a :class:`WorkItemTree`. It enforces identity, active ``work_delegate`` Membership at the
granted epoch, scope (the target's subtree), capabilities at minimum versions, descendant depth,
the validity window, and cumulative six-dimensional ceilings (:class:`DelegationBudget`) across
every WorkItem created or offered under the Grant. Invalidating conditions latch.

Refusals raise :class:`DelegationViolation` with ``kind`` (:class:`DelegationViolationKind`)
and the wire code (``AUTH_FORBIDDEN``, ``MEMBERSHIP_REQUIRED``, ``MEMBERSHIP_STALE``,
``AUTH_STALE_COORDINATOR``, ``BUDGET_EXCEEDED``, ``INVALID_COMMAND``). Instants are
timezone-aware datetimes; naive ones raise :class:`InvalidInputError`.
"""

from __future__ import annotations

from ._native import (
    CapabilityRef,
    DelegatedWork,
    DelegationAuthority,
    DelegationBudget,
    DelegationContext,
    DelegationGrant,
    MembershipView,
    ResourceUsage,
    WorkItemTree,
)
from ._types import DelegationViolationKind
from .errors import DelegationViolation


def budget_within_ceiling(candidate: ResourceUsage, ceiling: ResourceUsage) -> bool:
    """True when ``candidate`` fits under ``ceiling`` in every dimension (a zero ceiling
    permits only zero)."""
    return all(
        getattr(candidate, name) <= getattr(ceiling, name) for name in candidate.to_dict()
    )


__all__ = [
    "CapabilityRef",
    "DelegatedWork",
    "DelegationAuthority",
    "DelegationBudget",
    "DelegationContext",
    "DelegationGrant",
    "DelegationViolation",
    "DelegationViolationKind",
    "MembershipView",
    "ResourceUsage",
    "WorkItemTree",
    "budget_within_ceiling",
]
