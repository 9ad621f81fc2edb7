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
  - ``grant``: a :class:`DelegationGrant`, or any object/mapping it validates from.

:class:`DelegationGrant`, :class:`DelegationBudget` and :class:`CapabilityRequirement` are
pydantic v2 models (camelCase aliases, ``model_validate``, ``model_dump(by_alias=True)``) as
the reference's; a Grant's well-formedness rules run in the core when it is validated, and a
malformed Grant is a :class:`pydantic.ValidationError` carrying the core's code and reason.

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

from datetime import datetime
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple, overload

from pydantic import (
    AliasChoices,
    AwareDatetime,
    Field,
    PrivateAttr,
    field_validator,
    model_validator,
)

from . import _native
from ._native import (
    CapabilityRef,
    DelegatedWork,
    DelegationContext,
    MembershipView,
    ResourceUsage,
    WorkItemTree,
)
from ._protocol_model import ProtocolModel, core_refusal, floor_millis, reject_bool
from ._types import DelegationViolationKind
from ._projections import CapabilityRequirement, ResourceBudget
from .errors import DelegationViolation, MissionWeaveError

_DIMENSIONS = (
    "financial_microunits",
    "model_tokens",
    "tool_calls",
    "compute_seconds",
    "wall_clock_seconds",
    "external_actions",
)
_MISSING = object()


def budget_within_ceiling(candidate: ResourceUsage, ceiling: ResourceUsage) -> bool:
    """True when ``candidate`` fits under ``ceiling`` in every dimension (a zero ceiling
    permits only zero)."""
    return _native.delegation_budget_within_ceiling(candidate, ceiling)


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
        if isinstance(value, str):  # a bare capability id: the core's "any version"
            caps.append((value, _native.capability_reference_version()))
            continue
        ident = _read(value, "id")
        version = _read(value, "minimum_version", None)
        if version is None:
            version = _read(value, "version", 1)
        caps.append((ident, _native.capability_reference_version(
            version if isinstance(version, int) else str(version))))
    return caps


def _usage(budget: Any) -> ResourceUsage:
    if budget is None:
        return ResourceUsage()
    if isinstance(budget, ResourceUsage):
        return budget
    return ResourceUsage(**{name: _read(budget, name, None) or 0 for name in _DIMENSIONS})


def _requirement(value: Any) -> Any:
    """The accepted capability forms as a ``CapabilityRequirement`` input."""
    if isinstance(value, (CapabilityRequirement, Mapping)):
        return value
    if isinstance(value, CapabilityRef):
        return {"id": value.id, "minimum_version": value.version}
    if isinstance(value, tuple) and len(value) == 2:
        return {"id": value[0], "minimum_version": value[1]}
    if isinstance(value, str):  # a bare capability id: the core's "any version"
        return {"id": value, "minimum_version": _native.capability_reference_version()}
    return {"id": _read(value, "id"), "minimum_version": _read(value, "minimum_version", 1)}


class DelegationBudget(ResourceBudget):
    """The Grant's cumulative ceilings: the six dimensions (``None`` = not set) and the
    ``currency`` of the financial one (``^[A-Z]{3}$``), the reference's
    ``DelegationBudget(ResourceBudget)``. A Grant needs all six set; the values are checked by
    the core (a refusal carries its wire code)."""

    financial_microunits: Optional[int] = None
    model_tokens: Optional[int] = None
    tool_calls: Optional[int] = None
    compute_seconds: Optional[int] = None
    wall_clock_seconds: Optional[int] = None
    external_actions: Optional[int] = None
    currency: str

    @field_validator(*_DIMENSIONS, mode="before")
    @classmethod
    def _no_bool(cls, value: Any) -> Any:
        return reject_bool(value)

    @model_validator(mode="after")
    def _core_rules(self) -> "DelegationBudget":
        try:
            self._native()
        except MissionWeaveError as error:
            core_refusal(error)
        return self

    def _optional(self) -> Tuple[Optional[int], ...]:
        return tuple(getattr(self, name) for name in _DIMENSIONS)

    def _native(self) -> Any:
        return _native.DelegationBudget(
            currency=self.currency,
            **{name: getattr(self, name) or 0 for name in _DIMENSIONS},
        )

    def ceilings(self) -> ResourceUsage:
        """The six ceilings (unset = 0: nothing allowed)."""
        return ResourceUsage(**{name: getattr(self, name) or 0 for name in _DIMENSIONS})

    def contains(self, child: Any) -> bool:
        """The reference's ``ResourceBudget.contains``: every dimension the child sets is set
        here and at least as large (an unset child dimension always fits)."""
        if child is None:
            return True
        wanted = [_read(child, name, None) for name in _DIMENSIONS]
        return _native.delegation_budget_contains(self._optional(), wanted)


def _agent_id(value: Any) -> Any:
    """``granted_by``: an Agent id, or a Principal-like value whose type must be ``agent``."""
    if isinstance(value, str) or value is None:
        return value
    kind, ident = _principal(value)
    try:
        _native.delegation_check_grantor(kind)
    except MissionWeaveError as error:
        core_refusal(error)
    return ident


class DelegationGrant(ProtocolModel):
    """A persisted Delegation Grant, the reference's pydantic model; its well-formedness rules
    (non-empty unique capabilities with valid versions, all six ceilings, a valid currency,
    ``expires_at > granted_at``, …) run in the core, and a refusal is a
    :class:`pydantic.ValidationError` with the wire code (``ctx["kind"]`` is ``malformed``).

    Differences from the reference: ``grant_id`` is accepted for ``id`` (and is a property);
    ``granted_by`` holds the granting Agent's id (a Principal-like value is read, and must be
    an Agent); capabilities are :class:`CapabilityRequirement` with integer or SemVer
    minimum versions."""

    id: str = Field(validation_alias=AliasChoices("id", "grant_id", "grantId"))
    grantee_agent_id: str
    mission_id: str
    group_id: str
    target_work_item_id: str
    allowed_capabilities: Tuple[CapabilityRequirement, ...]
    budget: DelegationBudget
    max_descendant_depth: int
    grantee_membership_epoch: int
    coordinator_epoch: int
    granted_by: str
    granted_at: AwareDatetime
    expires_at: AwareDatetime

    _document: Optional[Dict[str, Any]] = PrivateAttr(default=None)

    @field_validator("allowed_capabilities", mode="before")
    @classmethod
    def _capability_forms(cls, value: Any) -> Any:
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
            return value
        return tuple(_requirement(v) for v in value)

    @field_validator("budget", mode="before")
    @classmethod
    def _budget_forms(cls, value: Any) -> Any:
        if isinstance(value, (DelegationBudget, Mapping)) or value is None:
            return value
        return {name: _read(value, name, None) for name in (*_DIMENSIONS, "currency")}

    @field_validator("granted_by", mode="before")
    @classmethod
    def _granted_by(cls, value: Any) -> Any:
        return _agent_id(value)

    @field_validator(
        "max_descendant_depth", "grantee_membership_epoch", "coordinator_epoch", mode="before"
    )
    @classmethod
    def _no_bool(cls, value: Any) -> Any:
        return reject_bool(value)

    @field_validator("granted_at", "expires_at", mode="after")
    @classmethod
    def _millis(cls, value: datetime) -> datetime:
        return floor_millis(value)

    @model_validator(mode="after")
    def _core_rules(self) -> "DelegationGrant":
        try:
            _native.delegation_grant_ceilings(self.budget._optional())
            _native.DelegationAuthority(self._native())
        except MissionWeaveError as error:
            core_refusal(error)
        return self

    @property
    def grant_id(self) -> str:
        return self.id

    @classmethod
    def from_document(cls, document: Any) -> "DelegationGrant":
        """The Grant of its normative form (a ``membership.schema.json`` ``delegationGrants``
        item, or the Core's ``delegation_grant`` answer ``{grant, uses}``): the budget by the
        engine's reading, capabilities as SemVer minimums, ``grantedBy``'s Agent id."""
        from . import _conversions as c

        return c.read(cls, c.DELEGATION_GRANT_ROWS, document, {})

    def protocol_document(self) -> Dict[str, Any]:
        """The normative Grant object (the ``delegationGrants`` item of
        ``membership.schema.json``); the Grant's rules ran in the core when it was built."""
        from . import _conversions as c

        return c.write(self, c.DELEGATION_GRANT_ROWS, "membership", validate=False)

    def _native(self) -> Any:
        return _native.DelegationGrant(
            grant_id=self.id,
            grantee_agent_id=self.grantee_agent_id,
            mission_id=self.mission_id,
            group_id=self.group_id,
            target_work_item_id=self.target_work_item_id,
            allowed_capabilities=[(c.id, c.semver) for c in self.allowed_capabilities],
            budget=self.budget._native(),
            max_descendant_depth=self.max_descendant_depth,
            grantee_membership_epoch=self.grantee_membership_epoch,
            coordinator_epoch=self.coordinator_epoch,
            granted_by=self.granted_by,
            granted_at=self.granted_at,
            expires_at=self.expires_at,
        )


def _grant(value: Any) -> DelegationGrant:
    if isinstance(value, DelegationGrant):
        return value
    if isinstance(value, Mapping):
        return DelegationGrant.model_validate(value)
    return DelegationGrant.model_validate(value, from_attributes=True)


class DelegationAuthority:
    """Checks and accounts every use of one Grant; see the module documentation for both call
    shapes."""

    __slots__ = ("_grant", "_core", "_context", "_tree", "_pending")

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
        self._grant = _grant(grant)
        core_grant = self._grant._native()
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
        _native.delegation_check_grant_user(actor_type)
        view = None
        if membership is not None:
            member_type, member_id = _principal(_read(membership, "principal"))
            view = _native.delegation_membership_view(
                actor_id,
                principal_type=member_type,
                principal_id=member_id,
                group_id=_read(membership, "group_id"),
                status=_text(_read(membership, "status")),
                roles=[_text(role) for role in _read(membership, "roles", ())],
                epoch=_read(membership, "epoch"),
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
                closed=_native.delegation_is_closed_status(_text(_read(item, "status", "open"))),
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
        return self._grant

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
        currency = _native.delegation_contract_currency(
            self._core.grant, usage, None if budget is None else _read(budget, "currency", None)
        )
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
        return f"DelegationAuthority(grant={self._grant.id!r}, bound={self._context is not None})"


__all__ = [
    "CapabilityRef",
    "CapabilityRequirement",
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
