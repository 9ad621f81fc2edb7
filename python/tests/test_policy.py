"""``missionweaveprotocol.policy``: the reference's names and kinds, membership tokens and
capability grants (positive and negative, forged / expired / replayed / cross-Group), the live
``ExecutionAuthorization`` over a real ``Core``, ``BudgetMeter`` and ``PolicyGuard``."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
from datetime import datetime, timedelta, timezone
from typing import Any, Coroutine, TypeVar

import pydantic
import pytest

from core_support import (
    MISSION,
    NOW,
    W1,
    WORKER,
    COORDINATOR,
    Clock,
    accept,
    authorize,
    by_worker,
    create,
    make_core,
    offer,
)
from missionweaveprotocol import policy
from missionweaveprotocol.core import Core
from missionweaveprotocol.lease import ExecutionLease
from missionweaveprotocol.models import Principal, Query, QueryKind
from missionweaveprotocol.policy import (
    AuthorizationService,
    BudgetMeter,
    CapabilityGrant,
    CooperationLimits,
    ExecutionAuthorization,
    IssuedCapabilityGrant,
    IssuedMembershipToken,
    MembershipTokenClaims,
    MembershipTokenService,
    PolicyError,
    PolicyGuard,
    ResourceUsage,
)

T = TypeVar("T")
SECRET = b"0123456789abcdef0123456789abcdef"
AGENT = "urn:missionweaveprotocol:agent:worker"
GROUP_ID = "urn:missionweaveprotocol:group:finance"
T0 = datetime(2026, 7, 15, 9, 30, tzinfo=timezone.utc)
MINUTE = timedelta(minutes=1)


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


def check(excinfo: Any, code: str, reason: str) -> None:
    error = excinfo.value
    assert (str(error.code), error.reason, error.kind) == (code, reason, reason), error


# ---- the reference's surface ----------------------------------------------------------------


def test_public_names_and_kinds_mirror_the_reference() -> None:
    for name in ("PolicyError", "MembershipTokenClaims", "IssuedMembershipToken", "MembershipTokenService",
                 "CapabilityGrant", "IssuedCapabilityGrant", "AuthorizationService",
                 "AuthoritativePolicyReader", "ExecutionAuthorization", "BudgetMeter",
                 "CooperationLimits", "PolicyGuard", "ResourceUsage"):
        assert name in policy.__all__, name
    assert issubclass(PolicyError, ValueError)
    for model in (MembershipTokenClaims, CapabilityGrant, CooperationLimits):
        assert issubclass(model, pydantic.BaseModel)
    for data in (IssuedMembershipToken, IssuedCapabilityGrant):
        assert dataclasses.is_dataclass(data)
    assert asyncio.iscoroutinefunction(ExecutionAuthorization.issue)
    assert policy.HIGH_RISK_OPERATION_PREFIXES == ("production.", "payment.", "external.send", "destructive.")
    limits = CooperationLimits()
    assert (limits.maximum_delegation_depth, limits.maximum_queued_work_items,
            limits.maximum_active_work_items, limits.maximum_unresolved_clarifications,
            limits.maximum_message_rate_per_minute, limits.maximum_proposal_rate_per_minute,
            limits.maximum_clarification_rate_per_minute) == (3, 100, 4, 5, 120, 30, 30)


# ---- membership tokens ----------------------------------------------------------------------


def membership(**kw: Any) -> dict:
    args: dict = dict(principal=Principal.agent(AGENT), group_id=GROUP_ID, roles=["worker"],
                      membership_epoch=2, session_epoch=3)
    args.update(kw)
    return args


def test_membership_token_round_trip_and_secret_hygiene() -> None:
    service = MembershipTokenService(SECRET)
    issued = service.issue(**membership(roles=["worker", "reviewer"]), ttl=5 * MINUTE, now=T0)
    assert issued.claims.roles == ("reviewer", "worker")
    assert issued.claims.expires_at == T0 + 5 * MINUTE
    assert issued.claims.principal == Principal.agent(AGENT)
    claims = service.verify(issued.token, **membership(roles=["reviewer", "worker"]), now=T0 + MINUTE)
    assert claims == issued.claims
    assert issued.token not in repr(issued)
    assert "0123456789" not in repr(service)
    # The token format: b64url(canonical claims).b64url(HMAC-SHA256).
    body, mac = issued.token.split(".")
    assert len(base64.urlsafe_b64decode(mac + "=")) == 32
    assert json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))["groupId"] == GROUP_ID


def test_membership_token_is_short_lived_and_fenced() -> None:
    service = MembershipTokenService(SECRET)
    token = service.issue(**membership(), ttl=MINUTE, now=T0).token
    now = T0 + timedelta(seconds=1)
    cases = [
        (membership(group_id="urn:missionweaveprotocol:group:other"), "MEMBERSHIP_REQUIRED", "token_group_mismatch"),
        (membership(session_epoch=4), "AUTH_STALE_SESSION", "token_session_stale"),
        (membership(membership_epoch=3), "MEMBERSHIP_STALE", "token_membership_stale"),
        (membership(roles=["reviewer"]), "MEMBERSHIP_STALE", "token_roles_stale"),
        (membership(principal=Principal.agent("urn:x:agent:other")), "AUTH_FORBIDDEN", "token_principal_mismatch"),
    ]
    for expected, code, reason in cases:
        with pytest.raises(PolicyError) as excinfo:
            service.verify(token, **expected, now=now)
        check(excinfo, code, reason)
    with pytest.raises(PolicyError) as excinfo:
        service.verify(token, **membership(), now=T0 + MINUTE)
    check(excinfo, "AUTH_INVALID_SIGNATURE", "token_expired")
    with pytest.raises(PolicyError) as excinfo:
        service.issue(**membership(), ttl=timedelta(minutes=16), now=T0)
    check(excinfo, "INVALID_COMMAND", "invalid_argument")
    with pytest.raises(PolicyError):
        service.issue(**membership(principal=Principal.human("urn:x:human:h")), ttl=MINUTE, now=T0)
    assert service.verify(token, **membership(), now=now).membership_epoch == 2


def test_forged_and_tampered_tokens_are_refused() -> None:
    service = MembershipTokenService(SECRET)
    token = service.issue(**membership(), ttl=MINUTE, now=T0).token
    forged = MembershipTokenService(b"f" * 32).issue(**membership(), ttl=MINUTE, now=T0).token
    body, mac = token.split(".")
    flipped = body + "." + ("A" if mac[0] != "A" else "B") + mac[1:]
    for bad in (forged, flipped):
        with pytest.raises(PolicyError) as excinfo:
            service.verify(bad, **membership(), now=T0)
        check(excinfo, "AUTH_INVALID_SIGNATURE", "token_forged")
    for bad in ("", "no-dot", "a.b.c", "x" * 20_000):
        with pytest.raises(PolicyError) as excinfo:
            service.verify(bad, **membership(), now=T0)
        check(excinfo, "AUTH_INVALID_SIGNATURE", "token_malformed")
    # A process-random secret (no secret given) verifies only its own tokens.
    with pytest.raises(PolicyError):
        MembershipTokenService().verify(token, **membership(), now=T0)


def membership_document(state: str = "active") -> dict:
    return {"membershipId": "m", "missionId": MISSION, "groupId": GROUP_ID,
            "member": {"type": "agent", "id": AGENT}, "role": "worker", "state": state,
            "membershipEpoch": 2, "scopes": [], "visibilityStartSequence": 0,
            "grantedAt": "2026-07-15T09:30:00Z"}


def test_tokens_for_membership_documents() -> None:
    service = MembershipTokenService(SECRET)
    issued = service.issue_for_membership(membership_document(), session_epoch=3, ttl=MINUTE, now=T0)
    assert issued.claims.roles == ("worker",)
    assert service.verify_membership(issued.token, membership_document(), session_epoch=3, now=T0).group_id == GROUP_ID
    with pytest.raises(PolicyError) as excinfo:
        service.verify_membership(issued.token, membership_document("ended"), session_epoch=3, now=T0)
    check(excinfo, "MEMBERSHIP_REQUIRED", "membership_not_active")
    with pytest.raises(PolicyError) as excinfo:
        service.verify_membership(issued.token, membership_document(), session_epoch=4, now=T0)
    check(excinfo, "AUTH_STALE_SESSION", "token_session_stale")


# ---- capability grants ----------------------------------------------------------------------


def execution_lease(**kw: Any) -> ExecutionLease:
    args: dict = dict(lease_id="urn:missionweaveprotocol:lease:exec-1", mission_id=MISSION,
                      group_id=GROUP_ID, work_item_id=W1, holder_agent_id=AGENT, session_epoch=3,
                      ownership_epoch=1, issued_at=T0, starts_at=T0, expires_at=T0 + 5 * MINUTE)
    args.update(kw)
    return ExecutionLease(**args)


def grant_args(**kw: Any) -> dict:
    args: dict = dict(worker_id=AGENT, session_epoch=3, work_item_id=W1, ownership_epoch=1,
                      execution_lease=execution_lease())
    args.update(kw)
    return args


def test_capability_grant_is_bound_and_never_outlives_its_lease() -> None:
    service = AuthorizationService(SECRET)
    issued = service.issue(**grant_args(), ttl=10 * MINUTE, allowed_operations=["ledger.read"],
                           budget=ResourceUsage(tool_calls=3), now=T0)
    assert issued.claims.expires_at == T0 + 5 * MINUTE
    assert issued.claims.budget.tool_calls == 3
    grant = service.verify(issued.token, **grant_args(), operation="ledger.read", now=T0 + MINUTE)
    assert grant == issued.claims
    cases = [
        (grant_args(session_epoch=4), None, "AUTH_STALE_SESSION", "token_session_stale"),
        (grant_args(ownership_epoch=2), None, "WORK_STALE_OWNERSHIP", "token_ownership_stale"),
        (grant_args(worker_id="urn:x:agent:y"), None, "AUTH_FORBIDDEN", "token_worker_mismatch"),
        (grant_args(execution_lease=execution_lease(lease_id="urn:missionweaveprotocol:lease:exec-2")),
         None, "WORK_LEASE_EXPIRED", "token_lease_mismatch"),
        (grant_args(), "ledger.write", "AUTH_FORBIDDEN", "operation_not_granted"),
    ]
    for expected, operation, code, reason in cases:
        with pytest.raises(PolicyError) as excinfo:
            service.verify(issued.token, **expected, operation=operation, now=T0 + MINUTE)
        check(excinfo, code, reason)
    revoked = execution_lease().close("revoked", at=T0 + MINUTE, reason="session replaced")
    with pytest.raises(PolicyError) as excinfo:
        service.verify(issued.token, **grant_args(execution_lease=revoked), now=T0 + 2 * MINUTE)
    check(excinfo, "WORK_LEASE_EXPIRED", "lease_not_live")


def test_capability_grant_survives_renewal() -> None:
    service = AuthorizationService(SECRET)
    lease = execution_lease()
    token = service.issue(**grant_args(execution_lease=lease), ttl=MINUTE, now=T0).token
    renewed = lease.renew(at=T0 + timedelta(seconds=30), expires_at=T0 + 20 * MINUTE)
    assert service.verify(token, **grant_args(execution_lease=renewed), now=T0 + timedelta(seconds=31))


def test_direct_high_risk_issue_cannot_trust_an_approval_id() -> None:
    service = AuthorizationService(SECRET)
    for kw in (dict(high_risk=True), dict(approval_id="approval:anything"),
               dict(allowed_operations=["payment.send"])):
        with pytest.raises(PolicyError) as excinfo:
            service.issue(**grant_args(), ttl=MINUTE, now=T0, **kw)
        assert str(excinfo.value.code) == "APPROVAL_REQUIRED"


def test_tokens_do_not_cross_kinds() -> None:
    memberships = MembershipTokenService(SECRET)
    grants = AuthorizationService(SECRET)
    token = memberships.issue(**membership(), ttl=MINUTE, now=T0).token
    with pytest.raises(PolicyError) as excinfo:
        grants.verify(token, **grant_args(), now=T0)
    check(excinfo, "AUTH_INVALID_SIGNATURE", "token_forged")


# ---- ExecutionAuthorization over a live Core -------------------------------------------------


async def active_core(**contract_args: Any) -> Core:
    core = make_core(Clock())
    await core.perform(create())
    await core.perform(authorize(**contract_args))
    await core.perform(offer())
    await core.perform(accept())
    item = (await core.query(Query(kind=QueryKind.WORK_ITEM, entity_id=W1))).value
    await core.perform(by_worker("work.start", W1, item["owner"]["ownershipEpoch"],
                                 item["owner"]["ownershipLeaseId"]))
    return core


def test_execution_authorization_checks_live_state() -> None:
    async def main() -> None:
        core = await active_core()
        authority = ExecutionAuthorization(core, AuthorizationService(SECRET), clock=lambda: NOW)
        issued = await authority.issue(worker_id=WORKER, session_epoch=1, work_item_id=W1,
                                       ownership_epoch=1, ttl=MINUTE)
        lease = (await core.query(Query(kind=QueryKind.EXECUTION_LEASE, entity_id=W1))).value
        assert issued.claims.execution_lease_id == lease["leaseId"]
        # The authoritative remaining budget (toolCallLimit 10) is the default.
        assert issued.claims.budget == ResourceUsage(tool_calls=10)
        assert issued.claims.expires_at == NOW + MINUTE
        cases = [
            (dict(session_epoch=2), "AUTH_STALE_SESSION", "session_stale"),
            (dict(ownership_epoch=2), "WORK_STALE_OWNERSHIP", "ownership_stale"),
            (dict(worker_id=COORDINATOR), "AUTH_FORBIDDEN", "not_owner"),
            (dict(budget=ResourceUsage(tool_calls=11)), "BUDGET_EXCEEDED", "budget_exceeded"),
            (dict(budget=ResourceUsage(model_tokens=1)), "BUDGET_EXCEEDED", "budget_exceeded"),
            (dict(allowed_tools=["shell"]), "AUTH_FORBIDDEN", "tool_not_in_contract"),
            (dict(allowed_resources=["repo:x"]), "AUTH_FORBIDDEN", "resource_not_in_contract"),
            (dict(allowed_operations=["production.deploy"]), "AUTH_FORBIDDEN", "operation_not_in_contract"),
            (dict(work_item_id="urn:missionweaveprotocol:work:none"), "GROUP_NOT_FOUND", "not_found"),
        ]
        for overrides, code, reason in cases:
            args: dict = dict(worker_id=WORKER, session_epoch=1, work_item_id=W1, ownership_epoch=1, ttl=MINUTE)
            args.update(overrides)
            with pytest.raises(PolicyError) as excinfo:
                await authority.issue(**args)
            check(excinfo, code, reason)
        # Later than the Execution Lease (300 s): the lease is no longer live.
        late = ExecutionAuthorization(core, AuthorizationService(SECRET), clock=lambda: NOW + timedelta(minutes=6))
        with pytest.raises(PolicyError) as excinfo:
            await late.issue(worker_id=WORKER, session_epoch=1, work_item_id=W1, ownership_epoch=1, ttl=MINUTE)
        check(excinfo, "WORK_LEASE_EXPIRED", "lease_not_live")

    run(main())


def test_execution_authorization_refuses_approval_gated_work_without_approval_state() -> None:
    async def main() -> None:
        core = await active_core()
        authority = ExecutionAuthorization(core, AuthorizationService(SECRET), clock=lambda: NOW)
        with pytest.raises(PolicyError) as excinfo:
            await authority.issue(worker_id=WORKER, session_epoch=1, work_item_id=W1, ownership_epoch=1,
                                  ttl=MINUTE, approval_id="approval:forged")
        check(excinfo, "APPROVAL_REQUIRED", "approval_not_found")

    run(main())


# ---- BudgetMeter and PolicyGuard ------------------------------------------------------------


def test_budget_meter_overrun_and_unallocated_dimensions() -> None:
    meter = BudgetMeter(ResourceUsage(tool_calls=3))
    assert meter.consume(ResourceUsage(tool_calls=2)) == ResourceUsage(tool_calls=2)
    with pytest.raises(PolicyError) as excinfo:
        meter.consume(ResourceUsage(tool_calls=2))
    check(excinfo, "BUDGET_EXCEEDED", "budget_exceeded")
    assert excinfo.value.dimension == "tool_calls"
    with pytest.raises(PolicyError) as excinfo:
        meter.consume(ResourceUsage(model_tokens=1))
    assert excinfo.value.dimension == "model_tokens"
    assert meter.consume({"tool_calls": 1}) == ResourceUsage(tool_calls=3)


def test_policy_guard_limits() -> None:
    guard = PolicyGuard(CooperationLimits(maximum_message_rate_per_minute=2, maximum_tracked_keys=2))
    guard.check_delegation_depth(3)
    guard.check_queue(100, 4)
    guard.check_unresolved_clarifications(5)
    for call in (lambda: guard.check_delegation_depth(4), lambda: guard.check_queue(101, 0),
                 lambda: guard.check_queue(0, 5), lambda: guard.check_unresolved_clarifications(6)):
        with pytest.raises(PolicyError) as excinfo:
            call()
        check(excinfo, "RATE_LIMITED", "threshold_reached")
    guard.check_message_rate("a", "g", now=T0)
    guard.check_message_rate("a", "g", now=T0 + timedelta(seconds=10))
    with pytest.raises(PolicyError) as excinfo:
        guard.check_message_rate("a", "g", now=T0 + timedelta(seconds=20))
    check(excinfo, "RATE_LIMITED", "rate_limited")
    assert excinfo.value.retry_after_ms == 40_000 and excinfo.value.retryable
    guard.check_message_rate("a", "other-group", now=T0)
    # Two keys tracked (the bound): a third principal waits until a window passes.
    with pytest.raises(PolicyError) as excinfo:
        guard.check_message_rate("b", "g", now=T0 + timedelta(seconds=20))
    check(excinfo, "RATE_LIMITED", "rate_tracker_full")
    guard.check_message_rate("b", "g", now=T0 + timedelta(minutes=2))
    assert guard.tracked_keys <= 2
    rates = PolicyGuard(CooperationLimits(maximum_proposal_rate_per_minute=1,
                                          maximum_clarification_rate_per_minute=1))
    rates.check_proposal_rate("a", "g", now=T0)
    rates.check_clarification_rate("a", "g", now=T0)
    for call in (rates.check_proposal_rate, rates.check_clarification_rate):
        with pytest.raises(PolicyError) as excinfo:
            call("a", "g", now=T0 + timedelta(seconds=1))
        check(excinfo, "RATE_LIMITED", "rate_limited")
    assert PolicyGuard.classify_action("production.deploy") == "human_approval_required"
    assert PolicyGuard.classify_action("repo.read") == "automatic"
