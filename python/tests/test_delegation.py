"""Delegation Grants through Python: every rule, typed violations, latching."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pydantic
import pytest

import missionweaveprotocol as mwp
from missionweaveprotocol.delegation import (
    CapabilityRef,
    DelegatedWork,
    DelegationAuthority,
    DelegationBudget,
    DelegationContext,
    DelegationGrant,
    DelegationViolation,
    DelegationViolationKind as K,
    MembershipView,
    ResourceUsage,
    WorkItemTree,
    budget_within_ceiling,
)
from missionweaveprotocol.errors import InvalidInputError, MissionWeaveError

T0 = datetime(2026, 4, 1, tzinfo=timezone.utc)


def grant(**kw: Any) -> DelegationGrant:
    args: dict[str, Any] = dict(
        grant_id="urn:grant:1", grantee_agent_id="urn:agent:d", mission_id="urn:m:1",
        group_id="urn:g:1", target_work_item_id="root",
        allowed_capabilities=[CapabilityRef("code.review", "1.2.0"), ("test.run", "2.0.0")],
        budget=DelegationBudget(currency="USD", financial_microunits=1000, model_tokens=100,
                                tool_calls=10, compute_seconds=10, wall_clock_seconds=10,
                                external_actions=1),
        max_descendant_depth=2, grantee_membership_epoch=4, coordinator_epoch=7,
        granted_by="urn:agent:c", granted_at=T0, expires_at=T0 + timedelta(hours=1),
    )
    args.update(kw)
    return DelegationGrant(**args)


def ctx(**kw: Any) -> DelegationContext:
    args: dict[str, Any] = dict(
        actor_agent_id="urn:agent:d", mission_id="urn:m:1", group_id="urn:g:1",
        coordinator_epoch=7, coordinator_agent_id="urn:agent:c", now=T0 + timedelta(minutes=1),
        membership=MembershipView("urn:g:1", epoch=4), organization_max_depth=3,
    )
    args.update(kw)
    return DelegationContext(**args)


def tree() -> WorkItemTree:
    t = WorkItemTree()
    t.add("root", mission_id="urn:m:1")
    t.add("a", mission_id="urn:m:1", parent_work_item_id="root")
    t.add("b", mission_id="urn:m:1", parent_work_item_id="a")
    t.add("outside", mission_id="urn:m:1")
    return t


def work(**kw: Any) -> DelegatedWork:
    args: dict[str, Any] = dict(required_capabilities=[("code.review", "1.3.0")],
                                budget=ResourceUsage(tool_calls=3))
    args.update(kw)
    return DelegatedWork(**args)


def violation(call: Any) -> DelegationViolation:
    with pytest.raises(DelegationViolation) as info:
        call()
    assert isinstance(info.value, MissionWeaveError)
    return info.value


def test_root_names() -> None:
    assert mwp.DelegationAuthority is DelegationAuthority and mwp.DelegationGrant is DelegationGrant
    assert mwp.DelegationBudget is DelegationBudget and mwp.DelegationViolationKind is K
    assert mwp.DelegationViolation is DelegationViolation


def test_offer_and_descendants_within_scope_depth_and_budget() -> None:
    auth = DelegationAuthority(grant())
    assert auth.authorize_existing(ctx(), tree(), "a", work()) == 1
    assert auth.authorize_existing(ctx(), tree(), "a", work()) == 1, "re-offer charges once"
    assert auth.charged == ResourceUsage(tool_calls=3)
    assert auth.authorize_descendant(ctx(), tree(), "c", "a", work()) == 2
    assert auth.remaining.tool_calls == 4
    v = violation(lambda: auth.authorize_descendant(ctx(), tree(), "d", "b", work()))
    assert (v.kind, v.code) == (K.DEPTH, "AUTH_FORBIDDEN")
    v = violation(lambda: auth.authorize_existing(ctx(), tree(), "outside", work()))
    assert v.kind is K.SCOPE
    v = violation(lambda: auth.authorize_descendant(
        ctx(), tree(), "e", "root", work(budget=ResourceUsage(tool_calls=5))))
    assert (v.kind, v.code, v.dimension) == (K.BUDGET, "BUDGET_EXCEEDED", "tool_calls")
    assert auth.remaining.tool_calls == 4, "a refused use charges nothing"
    v = violation(lambda: auth.authorize_descendant(
        ctx(), tree(), "e", "root", work(budget=ResourceUsage(financial_microunits=1))))
    assert (v.kind, v.dimension) == (K.BUDGET, "financial_microunits"), "currency required"
    assert auth.authorize_descendant(ctx(), tree(), "e", "root", work(
        budget=ResourceUsage(financial_microunits=1), currency="USD")) == 1
    assert auth.invalidated is None


def test_capability_minimum_versions() -> None:
    auth = DelegationAuthority(grant())
    for caps in ([("code.review", "1.1.9")], [("code.review", "1.2.0-rc.1")], [("x.y", "9.0.0")]):
        v = violation(lambda: auth.authorize_existing(
            ctx(), tree(), "a", work(required_capabilities=caps)))
        assert v.kind is K.CAPABILITY
    assert auth.authorize_existing(
        ctx(), tree(), "a", work(required_capabilities=[("test.run", "2.0.0")])) == 1


@pytest.mark.parametrize(
    ("context", "kind", "code", "latches"),
    [
        ({"actor_agent_id": "urn:agent:x"}, K.IDENTITY, "AUTH_FORBIDDEN", False),
        ({"group_id": "urn:g:2"}, K.SCOPE, "AUTH_FORBIDDEN", False),
        ({"membership": None}, K.MEMBERSHIP, "MEMBERSHIP_REQUIRED", True),
        ({"membership": MembershipView("urn:g:1", epoch=4, work_delegate=False)},
         K.MEMBERSHIP, "MEMBERSHIP_REQUIRED", True),
        ({"membership": MembershipView("urn:g:1", epoch=5)}, K.MEMBERSHIP_EPOCH,
         "MEMBERSHIP_STALE", True),
        ({"coordinator_epoch": 8}, K.COORDINATOR_EPOCH, "AUTH_STALE_COORDINATOR", True),
        ({"coordinator_agent_id": "urn:agent:z"}, K.ISSUER, "AUTH_STALE_COORDINATOR", True),
        ({"now": T0 - timedelta(seconds=1)}, K.NOT_YET_VALID, "AUTH_FORBIDDEN", False),
        ({"now": T0 + timedelta(hours=1)}, K.EXPIRED, "AUTH_FORBIDDEN", True),
    ],
)
def test_use_time_checks(context: dict[str, Any], kind: K, code: str, latches: bool) -> None:
    auth = DelegationAuthority(grant())
    v = violation(lambda: auth.check_use(ctx(**context), tree()))
    assert (v.kind, v.code) == (kind, code)
    if latches:
        # Invalidation is permanent: a correct context later does not revive the Grant.
        again = violation(lambda: auth.check_use(ctx(), tree()))
        assert again.kind is kind and auth.invalidated is not None
    else:
        auth.check_use(ctx(), tree())
        assert auth.invalidated is None


def test_target_closed_or_missing_invalidates() -> None:
    t = tree()
    t.set_closed("root")
    auth = DelegationAuthority(grant())
    assert violation(lambda: auth.check_use(ctx(), t)).kind is K.TARGET_CLOSED
    t.set_closed("root", False)
    assert violation(lambda: auth.check_use(ctx(), t)).kind is K.TARGET_CLOSED
    auth = DelegationAuthority(grant(target_work_item_id="gone"))
    assert violation(lambda: auth.check_use(ctx(), tree())).kind is K.TARGET_MISSING


@pytest.mark.parametrize(
    ("overrides", "code", "kind"),
    [
        ({"allowed_capabilities": []}, "INVALID_COMMAND", "malformed"),
        ({"expires_at": T0}, "INVALID_COMMAND", "malformed"),
        ({"allowed_capabilities": [("x.y", "1.0")]}, "PROTOCOL_VIOLATION", None),  # not SemVer
        ({"granted_at": datetime(2026, 1, 1)}, "timezone_aware", None),
        ({"budget": {"currency": "usd", "financial_microunits": 1, "model_tokens": 1,
                     "tool_calls": 1, "compute_seconds": 1, "wall_clock_seconds": 1,
                     "external_actions": 1}}, "PROTOCOL_VIOLATION", None),
        ({"budget": {"currency": "USD", "tool_calls": 1}}, "INVALID_COMMAND", "malformed"),
        ({"granted_by": {"type": "human", "id": "urn:human:h"}}, "INVALID_COMMAND", "malformed"),
    ],
)
def test_malformed_grants_are_validation_errors(
    overrides: dict[str, Any], code: str, kind: Any
) -> None:
    # The reference's DelegationGrant is a pydantic model: a malformed one is refused when it
    # is made, as pydantic.ValidationError (a ValueError), with the core's code.
    with pytest.raises(pydantic.ValidationError) as info:
        grant(**overrides)
    (error,) = info.value.errors()
    assert error["type"] == code
    if kind is not None:
        assert error["ctx"]["kind"] == kind


def test_the_grant_is_the_reference_model() -> None:
    g = grant()
    assert isinstance(g, pydantic.BaseModel) and g.id == g.grant_id == "urn:grant:1"
    dumped = g.model_dump(by_alias=True, mode="json")
    assert dumped["id"] == "urn:grant:1" and dumped["grantedBy"] == "urn:agent:c"
    assert dumped["allowedCapabilities"][0] == {"id": "code.review", "minimumVersion": "1.2.0"}
    assert dumped["budget"]["currency"] == "USD" and dumped["budget"]["toolCalls"] == 10
    assert DelegationGrant.model_validate(dumped) == g
    assert DelegationGrant.model_validate_json(g.model_dump_json()) == g
    assert g.budget.ceilings() == ResourceUsage(1000, 100, 10, 10, 10, 1)
    assert g.budget.contains(ResourceUsage(tool_calls=10)) and not g.budget.contains({"tool_calls": 11})
    with pytest.raises(pydantic.ValidationError):  # assignment is validated by the core too
        g.expires_at = T0
    assert g.expires_at == T0 + timedelta(hours=1)


def test_bad_input() -> None:
    with pytest.raises(InvalidInputError):
        DelegationAuthority(grant()).check_use(ctx(), {"root": None})  # type: ignore[arg-type]


def test_restore_attribution_rebuilds_the_charge() -> None:
    auth = DelegationAuthority(grant())
    auth.restore_attribution("a", ResourceUsage(tool_calls=9))
    auth.restore_attribution("a", ResourceUsage(tool_calls=9))
    assert auth.charged.tool_calls == 9
    v = violation(lambda: auth.authorize_existing(ctx(), tree(), "b", work()))
    assert v.kind is K.BUDGET
    assert auth.authorize_existing(ctx(), tree(), "a", work()) == 1, "already attributed"
    assert budget_within_ceiling(ResourceUsage(tool_calls=1), ResourceUsage(tool_calls=1))
    assert not budget_within_ceiling(ResourceUsage(model_tokens=1), ResourceUsage(tool_calls=9))
