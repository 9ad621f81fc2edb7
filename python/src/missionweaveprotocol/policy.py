"""Tokens, execution authorization and local guardrails (§8, §12, §20).

The reference's ``policy`` module; every rule runs in the Rust core (``authority::policy``).

- :class:`MembershipTokenService` issues short-lived (≤ 15 min) membership tokens
  ``b64url(canonical claims).b64url(HMAC-SHA256)`` bound to one Agent, one Group, its roles,
  its Membership Epoch and its Session Epoch. ``verify`` refuses a forged or malformed token
  (``AUTH_INVALID_SIGNATURE``), an expired one (``token_expired``), another principal
  (``AUTH_FORBIDDEN``), another Group (``MEMBERSHIP_REQUIRED``), a fenced Session Epoch
  (``AUTH_STALE_SESSION``) and a fenced Membership Epoch or changed roles
  (``MEMBERSHIP_STALE``).
- :class:`AuthorizationService` issues capability grants bound to the Worker and Session
  Epoch, the WorkItem and Ownership Epoch, the Execution Lease (expiry ≤ the lease's), tools,
  resources, operations and budget. It refuses any high-risk grant (``APPROVAL_REQUIRED``):
  those come only from :class:`ExecutionAuthorization`.
- :class:`ExecutionAuthorization` reads the live state from a :class:`~.core.Core` (Session
  Epoch, WorkItem, Execution Lease, Mission, remaining budget) and issues a grant only if the
  Worker is the current owner of an ``active`` WorkItem with a live lease, the request is a
  subset of the Work Contract (tools are read from ``constraints.allowedTools``) and fits the
  remaining budget. High-risk operations (``production.``, ``payment.``, ``external.send``,
  ``destructive.``) and contracts whose ``executionApproval`` is not ``not_required`` need an
  Execution Approval the core stored (``approval.grant_execution``) for this WorkItem and
  Ownership Epoch, unexpired, covering the operations, resources and budget; otherwise they are
  refused with ``APPROVAL_REQUIRED``.
- :class:`BudgetMeter` and :class:`PolicyGuard` are local hard limits; rate refusals are
  ``RATE_LIMITED`` with ``retry_after_ms``. The guard's memory is bounded
  (``maximum_tracked_keys`` rate keys, each at most its per-minute limit of timestamps).

Every refusal is a :class:`PolicyError` (a ``ValueError``) with ``code``, ``reason``/``kind``
and fields. Secrets and tokens never appear in reprs or errors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Dict, List, Literal, Mapping, Optional, Protocol, Sequence, Tuple, Union

from pydantic import BaseModel, ConfigDict, Field

from . import _native
from ._native import ResourceUsage
from .errors import PolicyError
from .models import Principal

__all__ = [
    "HIGH_RISK_OPERATION_PREFIXES",
    "AuthoritativePolicyReader",
    "AuthorizationService",
    "BudgetMeter",
    "CapabilityGrant",
    "CooperationLimits",
    "ExecutionAuthorization",
    "IssuedCapabilityGrant",
    "IssuedMembershipToken",
    "MembershipTokenClaims",
    "MembershipTokenService",
    "PolicyError",
    "PolicyGuard",
    "PublicKeyResolver",
    "ResourceUsage",
]

HIGH_RISK_OPERATION_PREFIXES: Tuple[str, ...] = tuple(_native.policy_high_risk_prefixes())
# The core's bounds (`MAXIMUM_TTL_MS`, `MAXIMUM_GRANT_TTL_MS`), also the services' defaults.
_MAXIMUM_TTL = timedelta(milliseconds=_native.POLICY_MAXIMUM_TTL_MS)
_MAXIMUM_GRANT_TTL = timedelta(milliseconds=_native.POLICY_MAXIMUM_GRANT_TTL_MS)
Clock = Callable[[], datetime]
PublicKeyResolver = Callable[[Principal], Optional[Union[str, bytes]]]


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


def _ms(value: timedelta, what: str) -> int:
    if not isinstance(value, timedelta):
        raise PolicyError(f"{what} must be a timedelta", code="INVALID_COMMAND", reason="invalid_argument")
    # A negative lifetime becomes 0, which the core refuses (its TTL bounds and their text).
    return max(int(value // timedelta(milliseconds=1)), 0)


def _instant(ms: int) -> datetime:
    return datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(milliseconds=ms)


def _secret(secret: Optional[bytes]) -> Optional[bytes]:
    if secret is not None and not isinstance(secret, (bytes, bytearray)):
        raise PolicyError("secret must be bytes", code="INVALID_COMMAND", reason="invalid_argument")
    return None if secret is None else bytes(secret)


def _agent_id(principal: Union[Principal, str]) -> str:
    if isinstance(principal, str):
        return principal
    _native.policy_check_token_principal(str(principal.type))
    return principal.id


def _document(value: Any) -> Any:
    """A JSON document from a query result, a model with ``_document()`` or a mapping."""
    if hasattr(value, "value") and hasattr(value, "kind"):  # QueryResult
        return value.value
    if hasattr(value, "_document"):
        return value._document()
    return value


class _Claims(BaseModel):
    model_config = ConfigDict(frozen=True, populate_by_name=True, arbitrary_types_allowed=True,
                              extra="forbid")


class MembershipTokenClaims(_Claims):
    """What a membership token states (the reference's model)."""

    token_id: str
    principal: Principal
    group_id: str
    roles: Tuple[str, ...] = Field(min_length=1)
    membership_epoch: int = Field(gt=0)
    session_epoch: int = Field(gt=0)
    issued_at: datetime
    expires_at: datetime

    @classmethod
    def _from_core(cls, claims: Mapping[str, Any]) -> "MembershipTokenClaims":
        return cls(
            token_id=claims["tokenId"],
            principal=Principal.agent(claims["principal"]["id"]),
            group_id=claims["groupId"],
            roles=tuple(claims["roles"]),
            membership_epoch=claims["membershipEpoch"],
            session_epoch=claims["sessionEpoch"],
            issued_at=_instant(claims["issuedAt"]),
            expires_at=_instant(claims["expiresAt"]),
        )


@dataclass(frozen=True)
class IssuedMembershipToken:
    """An issued membership token: its claims and the bearer string (hidden from ``repr``)."""

    claims: MembershipTokenClaims
    token: str = field(repr=False)


class MembershipTokenService:
    """``MembershipTokenService(secret=None, *, maximum_ttl=15 min)``; a random 32-byte secret
    when none is given (tokens then verify only in this process)."""

    __slots__ = ("_core",)

    def __init__(self, secret: Optional[bytes] = None, *, maximum_ttl: timedelta = _MAXIMUM_TTL) -> None:
        self._core = _native.MembershipTokenCore(_secret(secret), maximum_ttl_ms=_ms(maximum_ttl, "maximum_ttl"))

    def __repr__(self) -> str:
        return "MembershipTokenService(<secret redacted>)"

    def issue(
        self,
        *,
        principal: Union[Principal, str],
        group_id: str,
        roles: Sequence[str],
        membership_epoch: int,
        session_epoch: int,
        ttl: timedelta,
        now: Optional[datetime] = None,
    ) -> IssuedMembershipToken:
        claims, token = self._core.issue(
            principal_id=_agent_id(principal), group_id=group_id, roles=list(roles),
            membership_epoch=membership_epoch, session_epoch=session_epoch,
            ttl_ms=_ms(ttl, "ttl"), now=now or _utc_now(),
        )
        return IssuedMembershipToken(MembershipTokenClaims._from_core(claims), token)

    def issue_for_membership(
        self, membership: Any, *, session_epoch: int, ttl: timedelta, now: Optional[datetime] = None
    ) -> IssuedMembershipToken:
        """For an active Agent Membership (``membership.schema.json`` document or query result)."""
        claims, token = self._core.issue_for_membership(
            membership=_document(membership), session_epoch=session_epoch,
            ttl_ms=_ms(ttl, "ttl"), now=now or _utc_now(),
        )
        return IssuedMembershipToken(MembershipTokenClaims._from_core(claims), token)

    def verify(
        self,
        token: str,
        *,
        principal: Union[Principal, str],
        group_id: str,
        roles: Sequence[str],
        membership_epoch: int,
        session_epoch: int,
        now: Optional[datetime] = None,
    ) -> MembershipTokenClaims:
        claims = self._core.verify(
            token, principal_id=_agent_id(principal), group_id=group_id, roles=list(roles),
            membership_epoch=membership_epoch, session_epoch=session_epoch, now=now or _utc_now(),
        )
        return MembershipTokenClaims._from_core(claims)

    def verify_membership(
        self, token: str, membership: Any, *, session_epoch: int, now: Optional[datetime] = None
    ) -> MembershipTokenClaims:
        claims = self._core.verify_membership(
            token, membership=_document(membership), session_epoch=session_epoch, now=now or _utc_now()
        )
        return MembershipTokenClaims._from_core(claims)


_DIMENSIONS = ("financial_microunits", "model_tokens", "tool_calls", "compute_seconds",
               "wall_clock_seconds", "external_actions")


class CapabilityGrant(_Claims):
    """What a capability token states (the reference's model; ``budget`` is a
    :class:`ResourceUsage`, 0 = nothing may be spent in that dimension)."""

    grant_id: str
    worker_id: str
    session_epoch: int = Field(gt=0)
    work_item_id: str
    ownership_epoch: int = Field(gt=0)
    execution_lease_id: str
    execution_lease_expires_at: datetime
    allowed_tools: Tuple[str, ...] = ()
    allowed_resources: Tuple[str, ...] = ()
    allowed_operations: Tuple[str, ...] = ()
    budget: ResourceUsage = Field(default_factory=ResourceUsage)
    issued_at: datetime
    expires_at: datetime
    approval_id: Optional[str] = None

    @classmethod
    def _from_core(cls, claims: Mapping[str, Any]) -> "CapabilityGrant":
        return cls(
            grant_id=claims["grantId"],
            worker_id=claims["workerId"],
            session_epoch=claims["sessionEpoch"],
            work_item_id=claims["workItemId"],
            ownership_epoch=claims["ownershipEpoch"],
            execution_lease_id=claims["executionLeaseId"],
            execution_lease_expires_at=_instant(claims["executionLeaseExpiresAt"]),
            allowed_tools=tuple(claims["allowedTools"]),
            allowed_resources=tuple(claims["allowedResources"]),
            allowed_operations=tuple(claims["allowedOperations"]),
            budget=ResourceUsage(**{d: claims["budget"][d] for d in _DIMENSIONS}),
            issued_at=_instant(claims["issuedAt"]),
            expires_at=_instant(claims["expiresAt"]),
            approval_id=claims.get("approvalId"),
        )


@dataclass(frozen=True)
class IssuedCapabilityGrant:
    """An issued grant and its bearer token (hidden from ``repr``)."""

    claims: CapabilityGrant
    token: str = field(repr=False)


class AuthorizationService:
    """``AuthorizationService(secret=None, *, maximum_ttl=15 min)``: capability grants (§12)."""

    __slots__ = ("_core",)

    def __init__(self, secret: Optional[bytes] = None, *, maximum_ttl: timedelta = _MAXIMUM_GRANT_TTL) -> None:
        self._core = _native.AuthorizationCore(_secret(secret), maximum_ttl_ms=_ms(maximum_ttl, "maximum_ttl"))

    def __repr__(self) -> str:
        return "AuthorizationService(<secret redacted>)"

    def issue(
        self,
        *,
        worker_id: str,
        session_epoch: int,
        work_item_id: str,
        ownership_epoch: int,
        execution_lease: Any,
        ttl: timedelta,
        allowed_tools: Sequence[str] = (),
        allowed_resources: Sequence[str] = (),
        allowed_operations: Sequence[str] = (),
        budget: Optional[ResourceUsage] = None,
        high_risk: bool = False,
        approval_id: Optional[str] = None,
        now: Optional[datetime] = None,
    ) -> IssuedCapabilityGrant:
        """A low-risk grant; ``high_risk``, an ``approval_id`` or a high-risk operation is
        refused (``APPROVAL_REQUIRED``)."""
        claims, token = self._core.issue(
            worker_id=worker_id, session_epoch=session_epoch, work_item_id=work_item_id,
            ownership_epoch=ownership_epoch, execution_lease=_document(execution_lease),
            ttl_ms=_ms(ttl, "ttl"), now=now or _utc_now(), allowed_tools=list(allowed_tools),
            allowed_resources=list(allowed_resources), allowed_operations=list(allowed_operations),
            budget=budget, high_risk=high_risk, approval_id=approval_id,
        )
        return IssuedCapabilityGrant(CapabilityGrant._from_core(claims), token)

    def verify(
        self,
        token: str,
        *,
        worker_id: str,
        session_epoch: int,
        work_item_id: str,
        ownership_epoch: int,
        execution_lease: Any,
        operation: Optional[str] = None,
        now: Optional[datetime] = None,
    ) -> CapabilityGrant:
        claims = self._core.verify(
            token, worker_id=worker_id, session_epoch=session_epoch, work_item_id=work_item_id,
            ownership_epoch=ownership_epoch, execution_lease=_document(execution_lease),
            operation=operation, now=now or _utc_now(),
        )
        return CapabilityGrant._from_core(claims)


class AuthoritativePolicyReader(Protocol):
    """What :class:`ExecutionAuthorization` reads: the reference's protocol (``Core`` fits)."""

    async def query(self, query: Any) -> Any: ...

    async def replay(self, group_id: str, *, after: int = 0, limit: int = 1000) -> Tuple[Any, ...]: ...


def _usage(document: Any) -> ResourceUsage:
    remaining = document["remaining"]
    return ResourceUsage(**{d: remaining[_camel(d)] for d in _DIMENSIONS})


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


class ExecutionAuthorization:
    """``ExecutionAuthorization(core, authorization, *, approval_key_resolver=None, policy=None,
    clock=None)``: grants only after the live checks of the module documentation.

    ``approval_key_resolver`` and ``policy`` are accepted for the reference's signature. An
    approval-gated request (a high-risk operation, or a contract requiring execution approval)
    rests on the Execution Approval the core stored under ``approval_id``
    (``approval.grant_execution``, queried as ``execution_approval``): the core accepted only
    its signed human Command, so no signature is re-checked here. Without one the request is
    refused (``APPROVAL_REQUIRED``); the high-risk classification is the core's.
    """

    __slots__ = ("_core", "_authorization", "_approval_key_resolver", "_policy", "_clock")

    def __init__(
        self,
        core: AuthoritativePolicyReader,
        authorization: AuthorizationService,
        *,
        approval_key_resolver: Optional[PublicKeyResolver] = None,
        policy: Optional["PolicyGuard"] = None,
        clock: Optional[Clock] = None,
    ) -> None:
        self._core = core
        self._authorization = authorization
        self._approval_key_resolver = approval_key_resolver
        self._policy = policy
        self._clock = clock or _utc_now

    async def _value(self, kind: str, entity_id: str) -> Any:
        from .core import NotFound
        from .models import Query, QueryKind

        try:
            result = await self._core.query(Query(kind=QueryKind(kind), entity_id=entity_id))
        except NotFound:
            return None
        return _document(result)

    async def issue(
        self,
        *,
        worker_id: str,
        session_epoch: int,
        work_item_id: str,
        ownership_epoch: int,
        ttl: timedelta,
        allowed_tools: Sequence[str] = (),
        allowed_resources: Sequence[str] = (),
        allowed_operations: Sequence[str] = (),
        budget: Optional[ResourceUsage] = None,
        approval_id: Optional[str] = None,
    ) -> IssuedCapabilityGrant:
        now = self._clock()
        session = await self._value("session_epoch", worker_id)
        item = await self._value("work_item", work_item_id)
        lease = await self._value("execution_lease", work_item_id) if item is not None else None
        mission = await self._value("mission", item["missionId"]) if item is not None else None
        # §12: the persisted Execution Approval the request cites, as the core stored it.
        approval = (
            await self._value("execution_approval", approval_id)
            if approval_id is not None
            else None
        )
        remaining: List[ResourceUsage] = []
        for account in (work_item_id, item["missionId"] if item is not None else None):
            if account is not None:
                document = await self._value("budget_remaining", account)
                if document is not None:
                    remaining.append(_usage(document))
        claims, token = self._authorization._core.authorize_execution(
            worker_id=worker_id, session_epoch=session_epoch, work_item_id=work_item_id,
            ownership_epoch=ownership_epoch, ttl_ms=_ms(ttl, "ttl"), now=now,
            current_session_epoch=None if session is None else session["sessionEpoch"],
            work_item=item, execution_lease=lease, mission=mission, remaining=remaining,
            allowed_tools=list(allowed_tools), allowed_resources=list(allowed_resources),
            allowed_operations=list(allowed_operations), budget=budget, approval_id=approval_id,
            execution_approval=approval,
        )
        return IssuedCapabilityGrant(CapabilityGrant._from_core(claims), token)


class BudgetMeter:
    """``BudgetMeter(limit)``: ``consume(delta)`` returns the cumulative usage or refuses the
    whole delta (``BUDGET_EXCEEDED`` with ``dimension``); a 0 (or ``None``) limit allows
    nothing in that dimension."""

    __slots__ = ("_core",)

    def __init__(self, limit: Any) -> None:
        self._core = _native.BudgetMeterCore(_as_usage(limit))

    def consume(self, delta: Any) -> ResourceUsage:
        result: ResourceUsage = self._core.consume(_as_usage(delta))
        return result

    @property
    def usage(self) -> ResourceUsage:
        result: ResourceUsage = self._core.usage
        return result


def _as_usage(value: Any) -> ResourceUsage:
    if isinstance(value, ResourceUsage):
        return value
    read: Dict[str, Any] = {}
    for name in _DIMENSIONS:
        v = value.get(name) if isinstance(value, Mapping) else getattr(value, name, None)
        read[name] = 0 if v is None else v
    return ResourceUsage(**read)


_COOPERATION_DEFAULTS: Dict[str, int] = _native.cooperation_limits_defaults()


class CooperationLimits(BaseModel):
    """The §20 limits (the reference's defaults, read from the core), plus the guard's key
    bound."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    maximum_delegation_depth: int = Field(default=_COOPERATION_DEFAULTS["maximum_delegation_depth"], ge=0)
    maximum_queued_work_items: int = Field(default=_COOPERATION_DEFAULTS["maximum_queued_work_items"], ge=0)
    maximum_active_work_items: int = Field(default=_COOPERATION_DEFAULTS["maximum_active_work_items"], ge=0)
    maximum_unresolved_clarifications: int = Field(
        default=_COOPERATION_DEFAULTS["maximum_unresolved_clarifications"], ge=0)
    maximum_message_rate_per_minute: int = Field(
        default=_COOPERATION_DEFAULTS["maximum_message_rate_per_minute"], ge=0)
    maximum_proposal_rate_per_minute: int = Field(
        default=_COOPERATION_DEFAULTS["maximum_proposal_rate_per_minute"], ge=0)
    maximum_clarification_rate_per_minute: int = Field(
        default=_COOPERATION_DEFAULTS["maximum_clarification_rate_per_minute"], ge=0)
    maximum_tracked_keys: int = Field(default=_COOPERATION_DEFAULTS["maximum_tracked_keys"], ge=1)


class PolicyGuard:
    """``PolicyGuard(limits=None)``: local delegation-depth, queue, clarification and rate
    limits (thread-safe; the state is locked in the core)."""

    __slots__ = ("_core", "limits")

    def __init__(self, limits: Optional[CooperationLimits] = None) -> None:
        self.limits = limits or CooperationLimits()
        self._core = _native.PolicyGuardCore(**self.limits.model_dump())

    def check_delegation_depth(self, depth: int) -> None:
        self._core.check_delegation_depth(depth)

    def check_queue(self, queued: int, active: int) -> None:
        self._core.check_queue(queued, active)

    def check_unresolved_clarifications(self, unresolved: int) -> None:
        self._core.check_unresolved_clarifications(unresolved)

    def check_message_rate(self, principal_id: str, group_id: str, *, now: Optional[datetime] = None) -> None:
        self._core.check_rate("message", principal_id, group_id, now or _utc_now())

    def check_proposal_rate(self, principal_id: str, group_id: str, *, now: Optional[datetime] = None) -> None:
        self._core.check_rate("proposal", principal_id, group_id, now or _utc_now())

    def check_clarification_rate(self, principal_id: str, group_id: str, *, now: Optional[datetime] = None) -> None:
        self._core.check_rate("clarification", principal_id, group_id, now or _utc_now())

    @property
    def tracked_keys(self) -> int:
        """How many rate keys are held (bounded by ``limits.maximum_tracked_keys``)."""
        result: int = self._core.tracked_keys
        return result

    @staticmethod
    def classify_action(operation: str) -> Literal["automatic", "human_approval_required"]:
        result: Literal["automatic", "human_approval_required"] = _native.PolicyGuardCore.classify_action(operation)
        return result
