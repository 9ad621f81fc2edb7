"""§9.1 Delegation Grants and §20 Cooperation Override Grants through ``core.Core`` (the
generic perform path onto the Rust engine): each Command applied with its Event kind, and
refused with its §19 wire code and nothing appended."""

from __future__ import annotations

import asyncio
from typing import Any, Dict

import pytest

from core_support import (
    CONVERSATION,
    COORDINATOR,
    GROUP,
    OTHER_HUMAN,
    OWNER,
    W1,
    W2,
    WORKER,
    authorize,
    by_coordinator,
    contract,
    create,
    make_core,
    signed,
)
from missionweaveprotocol.core import Core, MissionWeaveProtocolError
from missionweaveprotocol.models import Query, QueryKind
from missionweaveprotocol.payloads import (
    MembershipGrantDelegationWirePayload,
    PolicyGrantCooperationOverrideWirePayload,
    WorkAuthorizeWirePayload,
)

GRANT = "urn:missionweaveprotocol:grant:py-1"
OVERRIDE = "urn:missionweaveprotocol:grant:py-override"
EXPIRES = "2026-07-15T10:30:00Z"


def grant_payload() -> Dict[str, Any]:
    return {
        "grantId": GRANT,
        "granteeAgentId": WORKER,
        "targetWorkItemId": W1,
        "allowedCapabilities": [{"id": "text.summarise", "version": "1.0.0"}],
        "budget": {"currency": "EUR", "financialLimit": 0, "modelTokenLimit": 0,
                   "toolCallLimit": 25, "computeSecondsLimit": 0, "wallClockSecondsLimit": 0,
                   "externalSideEffectLimit": 0},
        "maxDescendantDepth": 2,
        "expiresAt": EXPIRES,
    }


def delegated_authorize(grant_id: str) -> bytes:
    return signed("work.authorize", WORKER, {
        "workItemId": W2, "conversationId": CONVERSATION, "contract": contract(),
        "parentWorkItemId": W1, "delegationGrantId": grant_id})


def override_payload(actor_action: str) -> Dict[str, Any]:
    return {"grantId": OVERRIDE, "policyName": "queued_work_items",
            "beneficiary": {"type": "agent", "id": COORDINATOR},
            "targetCommandKind": "work.authorize", "targetActionId": actor_action,
            "reason": "month-end backlog", "expiresAt": EXPIRES}


def perform(core: Core, raw: bytes) -> str:
    return str(asyncio.run(core.perform(raw)).kind)


def refused(core: Core, raw: bytes, wire_code: str) -> MissionWeaveProtocolError:
    before = core.store.last_sequence(GROUP)
    with pytest.raises(MissionWeaveProtocolError) as raised:
        asyncio.run(core.perform(raw))
    assert raised.value.wire_code == wire_code, (raised.value.wire_code, raised.value.reason)
    assert core.store.last_sequence(GROUP) == before, "a refusal appends nothing"
    return raised.value


def delegate_ready() -> Core:
    core = make_core()
    perform(core, create())
    perform(core, signed("membership.change", OWNER, {
        "member": {"type": "agent", "id": WORKER}, "role": "work_delegate",
        "scopes": ["work:delegate"]}))
    perform(core, authorize(W1))
    return core


def test_the_coordinator_grants_delegation_and_the_grantee_uses_it() -> None:
    core = delegate_ready()
    kind = perform(core, by_coordinator("membership.grant_delegation", grant_payload()))
    assert kind == "membership.delegation.granted"
    assert perform(core, delegated_authorize(GRANT)) == "work.authorized"
    stored = asyncio.run(core.query(Query(kind=QueryKind.DELEGATION_GRANT, entity_id=GRANT)))
    assert stored.value["grant"]["granteeMembershipEpoch"] == 1
    assert [use["workItemId"] for use in stored.value["uses"]] == [W2]


def test_another_agent_cannot_grant_and_a_forged_grant_authorizes_nothing() -> None:
    core = delegate_ready()
    error = refused(
        core,
        signed("membership.grant_delegation", WORKER, grant_payload(), coordinatorEpoch=1),
        "AUTH_FORBIDDEN",
    )
    assert error.reason == "not_current_coordinator"
    error = refused(core, delegated_authorize("urn:missionweaveprotocol:grant:forged"),
                    "AUTH_FORBIDDEN")
    assert error.reason == "unknown_delegation_grant"


def test_the_mission_owner_grants_a_cooperation_override() -> None:
    core = make_core()
    perform(core, create())
    kind = perform(core, signed("policy.grant_cooperation_override", OWNER,
                                override_payload("urn:missionweaveprotocol:action:t1")))
    assert kind == "policy.cooperation_override.granted"


def test_another_human_cannot_grant_an_override_and_a_forged_one_is_refused() -> None:
    core = make_core()
    perform(core, create())
    error = refused(core, signed("policy.grant_cooperation_override", OTHER_HUMAN,
                                 override_payload("urn:missionweaveprotocol:action:t1")),
                    "AUTH_FORBIDDEN")
    assert error.reason == "not_owner_or_policy"
    forged = by_coordinator("work.authorize", {
        "workItemId": W1, "conversationId": CONVERSATION, "contract": contract()},
        cooperationOverrideGrantId="urn:missionweaveprotocol:grant:forged")
    error = refused(core, forged, "AUTH_FORBIDDEN")
    assert error.reason == "unknown_override_grant"


def test_the_wire_payload_models_give_the_payloads_the_engine_reads() -> None:
    grant = MembershipGrantDelegationWirePayload.model_validate(grant_payload())
    assert grant.max_descendant_depth == 2
    assert grant.to_payload() == grant_payload()
    override = PolicyGrantCooperationOverrideWirePayload.model_validate(
        override_payload("urn:missionweaveprotocol:action:t1"))
    assert override.to_payload() == override_payload("urn:missionweaveprotocol:action:t1")
    authorize_payload = WorkAuthorizeWirePayload(
        work_item_id=W2, conversation_id=CONVERSATION, contract=contract(),
        parent_work_item_id=W1, delegation_grant_id=GRANT).to_payload()
    assert authorize_payload["parentWorkItemId"] == W1
    assert authorize_payload["delegationGrantId"] == GRANT
    core = delegate_ready()
    perform(core, by_coordinator("membership.grant_delegation", grant.to_payload()))
    assert perform(core, signed("work.authorize", WORKER, authorize_payload)) == "work.authorized"
