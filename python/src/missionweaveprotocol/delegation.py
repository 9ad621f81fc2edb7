"""Scoped Delegation Grants (§9.1).

A :class:`DelegationAuthority` wraps one :class:`DelegationGrant` and checks every use against
authoritative state; the rules run in the Rust core. It enforces identity, active
``work_delegate`` Membership at the granted epoch, scope (the target's subtree), capabilities at
minimum versions, descendant depth, the validity window, and cumulative six-dimensional ceilings
(:class:`DelegationBudget`) across every WorkItem created or offered under the Grant.
Invalidating conditions latch.

Two call shapes:

- **The reference's**: ``DelegationAuthority(grant, *, actor, mission, membership, work_items,
  now)`` checks the use at construction (raising :class:`DelegationViolation`), then
  ``authorize_existing(work) -> int`` and ``authorize_descendant(parent, contract) -> int``.
  The reference's ``Principal``, ``Mission``, ``Membership``, ``WorkItem`` and ``WorkContract``
  models are not part of this package; any object (attributes) or mapping (snake_case or
  camelCase keys) with the members below is accepted:

  - ``actor``: ``id`` and ``type`` (``"agent"``; any other type is an ``identity``
    violation), or a plain string taken as an Agent id.
  - ``mission``: ``id``, ``group_id``, ``coordinator_id``, ``coordinator_epoch``.
  - ``membership`` (or ``None``): ``group_id``, ``principal`` (as ``actor``; a Membership of
    another principal counts as none), ``roles`` (must contain ``"work_delegate"``),
    ``status`` (``"active"``), ``epoch``.
  - ``work_items``: a mapping from id to WorkItem with ``mission_id``,
    ``parent_work_item_id``, ``status`` (``verified``, ``failed`` and ``cancelled`` are
    closed), and, for items created or offered under this Grant, ``delegation_grant_id`` and
    ``contract.budget`` (their budgets are charged to the Grant first, as the reference sums
    them).
  - ``work`` (``authorize_existing``): a WorkItem as above with ``id`` and ``contract``;
    ``contract`` (``authorize_descendant``): ``required_capabilities`` (entries with ``id``
    and an integer ``minimum_version`` n, read as SemVer ``n.0.0``, or ``(id, version)``
    pairs, or bare ids meaning any version) and ``budget`` (the six dimensions, ``None`` = 0, optional ``currency``; a budget
    without a currency is in the Grant's currency, since the reference's ``ResourceBudget``
    has none).
  - ``grant``: a :class:`DelegationGrant`, or an object/mapping with the reference's fields
    (``id``, ``granted_by`` as a principal or id, ``budget`` with ``currency`` and the six
    ceilings, ``allowed_capabilities`` as for contracts, the rest by the same names).

- **This package's**: ``DelegationAuthority(grant)`` then ``check_use(context, tree)``,
  ``authorize_existing(context, tree, work_item_id, work)`` and
  ``authorize_descendant(context, tree, new_work_item_id, parent_work_item_id, work)`` with a
  :class:`DelegationContext`, a :class:`WorkItemTree` and :class:`DelegatedWork`.

Differences from the reference, on purpose: the Coordinator's identity is checked against
``granted_by`` (``issuer``), a Grant not yet valid is refused (``not_yet_valid``), and a
missing or closed target is its own kind (``target_missing``, ``target_closed``).

Refusals raise :class:`DelegationViolation` (a ``ValueError``) with ``kind``
(:class:`DelegationViolationKind`) and the wire code (``AUTH_FORBIDDEN``,
``MEMBERSHIP_REQUIRED``, ``MEMBERSHIP_STALE``, ``AUTH_STALE_COORDINATOR``, ``BUDGET_EXCEEDED``,
``INVALID_COMMAND``). Instants are timezone-aware datetimes; naive ones raise
:class:`InvalidInputError`.
"""

from __future__ import annotations

from typing import Any, Iterable, List, Mapping, Optional, Tuple, overload

from . import _native
from ._native import (
    CapabilityRef,
    DelegatedWork,
    DelegationBudget,
    DelegationContext,
    DelegationGrant,
    MembershipView,
    ResourceUsage,
    WorkItemTree,
)
from ._types import DelegationViolationKind
from .errors import DelegationViolation

_DIMENSIONS = (
    "financial_microunits",
    "model_tokens",
    "tool_calls",
    "compute_seconds",
    "wall_clock_seconds",
    "external_actions",
)
_CLOSED = frozenset({"verified", "failed", "cancelled"})
_MISSING = object()


def budget_within_ceiling(candidate: ResourceUsage, ceiling: ResourceUsage) -> bool:
    """True when ``candidate`` fits under ``ceiling`` in every dimension (a zero ceiling
    permits only zero)."""
    return all(getattr(candidate, name) <= getattr(ceiling, name) for name in _DIMENSIONS)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _read(obj: Any, name: str, default: Any = _MISSING) -> Any:
    """A member of a duck-typed object or mapping (snake_case or camelCase)."""
    for key in (name, _camel(name)):
        if isinstance(obj, Mapping):
            if key in obj:
                return obj[key]
        elif hasattr(obj, key):
            return getattr(obj, key)
    if default is _MISSING:
        raise DelegationViolation(
            f"{type(obj).__name__} has no {name!r}", kind="malformed", code="INVALID_COMMAND"
        )
    return default


def _text(value: Any) -> str:
    """Enum members (``StrEnum``) and strings as their wire text."""
    return str(getattr(value, "value", value))


def _principal(value: Any) -> Tuple[str, str]:
    """``(type, id)`` of a Principal-like value; a plain string is an Agent id."""
    if isinstance(value, str):
        return "agent", value
    return _text(_read(value, "type")), _text(_read(value, "id"))


def _capabilities(values: Iterable[Any]) -> List[Any]:
    caps: List[Any] = []
    for value in values:
        if isinstance(value, (CapabilityRef, tuple)):
            caps.append(value)
            continue
        if isinstance(value, str):  # a bare capability id: any version
            caps.append((value, "0.0.0"))
            continue
        ident = _read(value, "id")
        version = _read(value, "minimum_version", None)
        if version is None:
            version = _read(value, "version", 1)
        caps.append((ident, f"{version}.0.0" if isinstance(version, int) else str(version)))
    return caps


def _usage(budget: Any) -> ResourceUsage:
    if budget is None:
        return ResourceUsage()
    if isinstance(budget, ResourceUsage):
        return budget
    return ResourceUsage(**{name: _read(budget, name, None) or 0 for name in _DIMENSIONS})


def _grant(value: Any) -> DelegationGrant:
    if isinstance(value, DelegationGrant):
        return value
    budget = _read(value, "budget")
    if not isinstance(budget, DelegationBudget):
        budget = DelegationBudget(
            currency=_read(budget, "currency"),
            **{name: _read(budget, name) for name in _DIMENSIONS},
        )
    grant_id = _read(value, "grant_id", None)
    return DelegationGrant(
        grant_id=_read(value, "id") if grant_id is None else grant_id,
        grantee_agent_id=_read(value, "grantee_agent_id"),
        mission_id=_read(value, "mission_id"),
        group_id=_read(value, "group_id"),
        target_work_item_id=_read(value, "target_work_item_id"),
        allowed_capabilities=_capabilities(_read(value, "allowed_capabilities")),
        budget=budget,
        max_descendant_depth=_read(value, "max_descendant_depth"),
        grantee_membership_epoch=_read(value, "grantee_membership_epoch"),
        coordinator_epoch=_read(value, "coordinator_epoch"),
        granted_by=_principal(_read(value, "granted_by"))[1],
        granted_at=_read(value, "granted_at"),
        expires_at=_read(value, "expires_at"),
    )


class DelegationAuthority:
    """Checks and accounts every use of one Grant; see the module documentation for both call
    shapes."""

    __slots__ = ("_core", "_context", "_tree", "_pending")

    def __init__(
        self,
        grant: Any,
        *,
        actor: Any = _MISSING,
        mission: Any = _MISSING,
        membership: Any = _MISSING,
        work_items: Any = _MISSING,
        now: Any = _MISSING,
        organization_max_depth: Optional[int] = None,
    ) -> None:
        core_grant = _grant(grant)
        self._core = _native.DelegationAuthority(core_grant)
        self._context: Optional[DelegationContext] = None
        self._tree: Optional[WorkItemTree] = None
        self._pending = 0
        bound = {"actor": actor, "mission": mission, "membership": membership,
                 "work_items": work_items, "now": now}
        given = [name for name, value in bound.items() if value is not _MISSING]
        if not given:
            return
        missing = [name for name, value in bound.items() if value is _MISSING]
        if missing:
            raise TypeError(f"DelegationAuthority() missing keyword arguments: {', '.join(missing)}")
        actor_type, actor_id = _principal(actor)
        if actor_type != "agent":
            raise DelegationViolation(
                "only an Agent can use a Delegation Grant",
                kind="identity",
                code="AUTH_FORBIDDEN",
            )
        view = None
        if membership is not None:
            member_type, member_id = _principal(_read(membership, "principal"))
            roles = {_text(role) for role in _read(membership, "roles", ())}
            if (member_type, member_id) == ("agent", actor_id):
                view = MembershipView(
                    _read(membership, "group_id"),
                    epoch=_read(membership, "epoch"),
                    active=_text(_read(membership, "status")) == "active",
                    work_delegate="work_delegate" in roles,
                )
        self._context = DelegationContext(
            actor_agent_id=actor_id,
            mission_id=_read(mission, "id"),
            group_id=_read(mission, "group_id"),
            coordinator_epoch=_read(mission, "coordinator_epoch"),
            coordinator_agent_id=_read(mission, "coordinator_id"),
            now=now,
            membership=view,
            organization_max_depth=organization_max_depth,
        )
        tree = WorkItemTree()
        attributed: List[Tuple[str, ResourceUsage]] = []
        for key, item in dict(work_items).items():
            item_id = _read(item, "id", key)
            tree.add(
                item_id,
                mission_id=_read(item, "mission_id"),
                parent_work_item_id=_read(item, "parent_work_item_id", None),
                closed=_text(_read(item, "status", "open")) in _CLOSED,
            )
            if _read(item, "delegation_grant_id", None) == core_grant.grant_id:
                contract = _read(item, "contract", None)
                attributed.append(
                    (item_id, _usage(None if contract is None else _read(contract, "budget", None)))
                )
        self._tree = tree
        for item_id, usage in attributed:
            self._core.restore_attribution(item_id, usage)
        self._core.check_use(self._context, tree)

    # --- shared state --------------------------------------------------------------------

    @property
    def grant(self) -> DelegationGrant:
        return self._core.grant

    @property
    def charged(self) -> ResourceUsage:
        """Cumulative budget of every WorkItem created or offered under the Grant."""
        return self._core.charged

    @property
    def remaining(self) -> ResourceUsage:
        """What remains under the ceilings."""
        return self._core.remaining

    @property
    def invalidated(self) -> Optional[DelegationViolation]:
        """The latched violation once the Grant can no longer be used, else ``None``."""
        return self._core.invalidated

    def check_use(self, context: DelegationContext, tree: WorkItemTree) -> None:
        """Every use-time check that does not depend on the WorkItem."""
        self._core.check_use(context, tree)

    def restore_attribution(self, work_item_id: str, budget: ResourceUsage) -> None:
        """Restores a WorkItem previously attributed to the Grant (rebuild from the log)."""
        self._core.restore_attribution(work_item_id, budget)

    # --- both call shapes ------------------------------------------------------------------

    def _bound(self) -> Tuple[DelegationContext, WorkItemTree]:
        if self._context is None or self._tree is None:
            raise TypeError(
                "this DelegationAuthority was made without actor/mission/membership/work_items/"
                "now; pass a DelegationContext and a WorkItemTree"
            )
        return self._context, self._tree

    def _work(self, contract: Any) -> DelegatedWork:
        if isinstance(contract, DelegatedWork):
            return contract
        budget = _read(contract, "budget", None)
        usage = _usage(budget)
        currency = None if budget is None else _read(budget, "currency", None)
        if currency is None and usage.financial_microunits:
            currency = self._core.grant.budget.currency
        return DelegatedWork(
            required_capabilities=_capabilities(_read(contract, "required_capabilities", ())),
            budget=usage,
            currency=currency,
        )

    @overload
    def authorize_existing(self, work: Any, /) -> int: ...
    @overload
    def authorize_existing(
        self, context: DelegationContext, tree: WorkItemTree, work_item_id: str, work: DelegatedWork, /
    ) -> int: ...
    def authorize_existing(self, *args: Any) -> int:
        """``work.offer`` of the target or an existing descendant; charges the item's budget
        once. Returns its depth below the target. Reference shape: ``(work)``."""
        if len(args) == 1:
            context, tree = self._bound()
            work = args[0]
            return self._core.authorize_existing(
                context, tree, _read(work, "id"), self._work(_read(work, "contract"))
            )
        if len(args) != 4:
            raise TypeError("authorize_existing takes (work) or (context, tree, work_item_id, work)")
        return self._core.authorize_existing(*args)

    @overload
    def authorize_descendant(
        self, parent: Any, contract: Any, /, *, work_item_id: Optional[str] = None
    ) -> int: ...
    @overload
    def authorize_descendant(
        self,
        context: DelegationContext,
        tree: WorkItemTree,
        new_work_item_id: str,
        parent_work_item_id: str,
        work: DelegatedWork,
        /,
    ) -> int: ...
    def authorize_descendant(self, *args: Any, work_item_id: Optional[str] = None) -> int:
        """``work.authorize`` of a new WorkItem under a parent in the Grant's subtree; returns
        its depth below the target. Reference shape: ``(parent, contract)``; the new item's
        budget is charged to this authority under ``work_item_id`` (or a placeholder id when
        the reference's call gives none)."""
        if len(args) == 2:
            context, tree = self._bound()
            parent, contract = args
            parent_id = parent if isinstance(parent, str) else _read(parent, "id")
            if work_item_id is None:
                self._pending += 1
                work_item_id = f"{parent_id}#pending-{self._pending}"
            return self._core.authorize_descendant(
                context, tree, work_item_id, parent_id, self._work(contract)
            )
        if len(args) != 5 or work_item_id is not None:
            raise TypeError(
                "authorize_descendant takes (parent, contract) or "
                "(context, tree, new_work_item_id, parent_work_item_id, work)"
            )
        return self._core.authorize_descendant(*args)

    def __repr__(self) -> str:
        return f"DelegationAuthority(grant={self._core.grant.grant_id!r}, bound={self._context is not None})"


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
