"""DelegationAuthority in the reference's call shape: ``DelegationAuthority(grant, *, actor,
mission, membership, work_items, now)`` with duck-typed Principal / Mission / Membership /
WorkItem objects or mappings, ``authorize_existing(work)``, ``authorize_descendant(parent,
contract)``."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from enum import Enum
from typing import Any, Dict, Optional, Tuple

import pydantic
import pytest

from missionweaveprotocol import DelegationAuthority, DelegationViolation, DelegationViolationKind as K
from missionweaveprotocol.delegation import DelegationBudget, DelegationGrant

T0 = datetime(2026, 4, 1, tzinfo=timezone.utc)


class Status(str, Enum):  # like the reference's StrEnums
    ACTIVE = "active"
    ENDED = "ended"
    OPEN = "open"
    VERIFIED = "verified"


@dataclass
class Principal:
    id: str
    type: str = "agent"


@dataclass
class Mission:
    id: str = "urn:m:1"
    group_id: str = "urn:g:1"
    coordinator_id: str = "urn:agent:c"
    coordinator_epoch: int = 7


@dataclass
class Membership:
    group_id: str = "urn:g:1"
    principal: Principal = field(default_factory=lambda: Principal("urn:agent:d"))
    roles: Tuple[str, ...] = ("work_delegate", "worker")
    status: Status = Status.ACTIVE
    epoch: int = 4


@dataclass
class Requirement:
    id: str
    minimum_version: int = 1


@dataclass
class Budget:
    financial_microunits: Optional[int] = None
    model_tokens: Optional[int] = None
    tool_calls: Optional[int] = None
    compute_seconds: Optional[int] = None
    wall_clock_seconds: Optional[int] = None
    external_actions: Optional[int] = None


@dataclass
class Contract:
    required_capabilities: Tuple[Requirement, ...] = (Requirement("code.review", 1),)
    budget: Budget = field(default_factory=lambda: Budget(tool_calls=3))


@dataclass
class WorkItem:
    id: str
    parent_work_item_id: Optional[str] = None
    mission_id: str = "urn:m:1"
    status: Status = Status.OPEN
    contract: Contract = field(default_factory=Contract)
    delegation_grant_id: Optional[str] = None


def reference_grant(**kw: Any) -> Dict[str, Any]:
    """The reference's DelegationGrant fields (``id``, Principal ``granted_by``, integer
    capability versions), as a mapping."""
    grant: Dict[str, Any] = dict(
        id="urn:grant:1", grantee_agent_id="urn:agent:d", mission_id="urn:m:1", group_id="urn:g:1",
        target_work_item_id="urn:w:root",
        allowed_capabilities=[{"id": "code.review", "minimum_version": 2}, {"id": "test.run"}, "lint"],
        budget={"currency": "USD", "financial_microunits": 1000, "model_tokens": 100,
                "tool_calls": 10, "compute_seconds": 10, "wall_clock_seconds": 10,
                "external_actions": 1},
        max_descendant_depth=2, grantee_membership_epoch=4, coordinator_epoch=7,
        granted_by={"type": "agent", "id": "urn:agent:c"}, granted_at=T0,
        expires_at=T0 + timedelta(hours=1),
    )
    grant.update(kw)
    return grant


def items(*extra: WorkItem) -> Dict[str, WorkItem]:
    base = [WorkItem("urn:w:root"), WorkItem("urn:w:a", "urn:w:root"),
            WorkItem("urn:w:b", "urn:w:a"), WorkItem("urn:w:outside")]
    return {w.id: w for w in (*base, *extra)}


def authority(**kw: Any) -> DelegationAuthority:
    args: Dict[str, Any] = dict(actor=Principal("urn:agent:d"), mission=Mission(),
                                membership=Membership(), work_items=items(),
                                now=T0 + timedelta(minutes=1))
    grant = kw.pop("grant", reference_grant())
    args.update(kw)
    return DelegationAuthority(grant, **args)


def violation(call: Any) -> DelegationViolation:
    with pytest.raises(DelegationViolation) as info:
        call()
    assert isinstance(info.value, ValueError)
    return info.value


def test_reference_call_shape_authorizes_within_scope() -> None:
    auth = authority()
    assert auth.grant.grant_id == "urn:grant:1" and auth.grant.granted_by == "urn:agent:c"
    work = WorkItem("urn:w:a", "urn:w:root", contract=Contract((Requirement("code.review", 2),)))
    assert auth.authorize_existing(work) == 1
    assert auth.authorize_descendant(WorkItem("urn:w:a", "urn:w:root"), Contract((), Budget(tool_calls=4))) == 2
    assert auth.charged.tool_calls == 7
    assert auth.authorize_existing(WorkItem("urn:w:b", "urn:w:a", contract=Contract(
        (Requirement("lint", 7),), Budget()))) == 2, "a bare id grants any version"
    v = violation(lambda: auth.authorize_descendant(WorkItem("urn:w:b", "urn:w:a"), Contract(())))
    assert (v.kind, v.code) == (K.DEPTH, "AUTH_FORBIDDEN")
    v = violation(lambda: auth.authorize_existing(WorkItem("urn:w:outside")))
    assert v.kind is K.SCOPE
    v = violation(lambda: auth.authorize_existing(
        WorkItem("urn:w:a", contract=Contract((Requirement("code.review", 1),)))))
    assert v.kind is K.CAPABILITY, "minimum version 2 granted, 1.0.0 is below"
    v = violation(lambda: auth.authorize_descendant(WorkItem("urn:w:root"), Contract((), Budget(tool_calls=4))))
    assert (v.kind, v.code, v.dimension) == (K.BUDGET, "BUDGET_EXCEEDED", "tool_calls")


def test_mappings_and_our_grant_type_are_accepted() -> None:
    ours = DelegationGrant(
        grant_id="urn:grant:1", grantee_agent_id="urn:agent:d", mission_id="urn:m:1",
        group_id="urn:g:1", target_work_item_id="urn:w:root",
        allowed_capabilities=[("code.review", "1.0.0")],
        budget=DelegationBudget(currency="USD", financial_microunits=5, model_tokens=0,
                                tool_calls=5, compute_seconds=0, wall_clock_seconds=0,
                                external_actions=0),
        max_descendant_depth=1, grantee_membership_epoch=4, coordinator_epoch=7,
        granted_by="urn:agent:c", granted_at=T0, expires_at=T0 + timedelta(hours=1))
    auth = DelegationAuthority(
        ours, actor="urn:agent:d",
        mission={"id": "urn:m:1", "groupId": "urn:g:1", "coordinatorId": "urn:agent:c",
                 "coordinatorEpoch": 7},
        membership={"groupId": "urn:g:1", "principal": {"type": "agent", "id": "urn:agent:d"},
                    "roles": ["work_delegate"], "status": "active", "epoch": 4},
        work_items={"urn:w:root": {"missionId": "urn:m:1", "status": "open"},
                    "urn:w:a": {"missionId": "urn:m:1", "parentWorkItemId": "urn:w:root"}},
        now=T0)
    # A contract budget without a currency is in the Grant's currency.
    assert auth.authorize_existing({"id": "urn:w:a", "contract": {"budget": {"financialMicrounits": 5}}}) == 1
    assert auth.remaining.financial_microunits == 0


def test_items_already_under_the_grant_count_against_its_budget() -> None:
    prior = WorkItem("urn:w:c", "urn:w:a", contract=Contract((), Budget(tool_calls=9)),
                     delegation_grant_id="urn:grant:1")
    other = WorkItem("urn:w:d", "urn:w:a", contract=Contract((), Budget(tool_calls=9)),
                     delegation_grant_id="urn:grant:other")
    auth = authority(work_items=items(prior, other))
    assert auth.charged.tool_calls == 9
    v = violation(lambda: auth.authorize_descendant(WorkItem("urn:w:root"), Contract((), Budget(tool_calls=2))))
    assert v.kind is K.BUDGET
    assert auth.authorize_descendant(WorkItem("urn:w:root"), Contract((), Budget(tool_calls=1)),
                                     work_item_id="urn:w:new") == 1


@pytest.mark.parametrize(
    ("overrides", "kind", "code"),
    [
        ({"actor": Principal("urn:agent:x")}, K.IDENTITY, "AUTH_FORBIDDEN"),
        ({"actor": Principal("urn:agent:d", "human")}, K.IDENTITY, "AUTH_FORBIDDEN"),
        ({"mission": Mission(id="urn:m:2")}, K.SCOPE, "AUTH_FORBIDDEN"),
        ({"membership": None}, K.MEMBERSHIP, "MEMBERSHIP_REQUIRED"),
        ({"membership": Membership(roles=("worker",))}, K.MEMBERSHIP, "MEMBERSHIP_REQUIRED"),
        ({"membership": Membership(status=Status.ENDED)}, K.MEMBERSHIP, "MEMBERSHIP_REQUIRED"),
        ({"membership": Membership(principal=Principal("urn:agent:x"))}, K.MEMBERSHIP,
         "MEMBERSHIP_REQUIRED"),
        ({"membership": Membership(epoch=5)}, K.MEMBERSHIP_EPOCH, "MEMBERSHIP_STALE"),
        ({"mission": Mission(coordinator_epoch=8)}, K.COORDINATOR_EPOCH, "AUTH_STALE_COORDINATOR"),
        ({"mission": Mission(coordinator_id="urn:agent:z")}, K.ISSUER, "AUTH_STALE_COORDINATOR"),
        ({"now": T0 + timedelta(hours=1)}, K.EXPIRED, "AUTH_FORBIDDEN"),
        ({"now": T0 - timedelta(seconds=1)}, K.NOT_YET_VALID, "AUTH_FORBIDDEN"),
        ({"work_items": {**items(), "urn:w:root": WorkItem("urn:w:root", status=Status.VERIFIED)}},
         K.TARGET_CLOSED, "AUTH_FORBIDDEN"),
    ],
)
def test_the_constructor_checks_the_use(overrides: Dict[str, Any], kind: K, code: str) -> None:
    v = violation(lambda: authority(**overrides))
    assert (v.kind, v.code) == (kind, code)


def test_a_malformed_reference_grant_is_a_validation_error() -> None:
    with pytest.raises(pydantic.ValidationError) as info:
        authority(grant=reference_grant(budget={"currency": "USD"}))
    assert info.value.errors()[0]["ctx"]["kind"] == "malformed"


def test_shapes_are_not_mixed() -> None:
    with pytest.raises(TypeError):
        DelegationAuthority(reference_grant(), actor=Principal("urn:agent:d"), now=T0)
    unbound = DelegationAuthority(reference_grant())
    with pytest.raises(TypeError):
        unbound.authorize_existing(WorkItem("urn:w:a"))
    with pytest.raises(TypeError):
        authority().authorize_existing(1, 2)  # type: ignore[call-overload]
