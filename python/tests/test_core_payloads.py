"""``payloads``: the wire payload models reproduce the wire payloads the engine reads, and a
Command built from them is performed."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from core_support import (
    COORDINATOR,
    CONVERSATION,
    GROUP,
    SELECTION_BASIS,
    W1,
    WORKER,
    contract,
    create_payload,
    evidence,
    make_core,
    signed,
)
from missionweaveprotocol.payloads import (
    MissionCreateWirePayload,
    MissionRenewCoordinatorWirePayload,
    WorkAuthorizeWirePayload,
    WorkOfferWirePayload,
    WorkSubmitWirePayload,
)


def test_models_reproduce_the_wire_payloads() -> None:
    for model, payload in [
        (MissionCreateWirePayload, create_payload()),
        (WorkAuthorizeWirePayload, {"workItemId": W1, "conversationId": CONVERSATION,
                                    "contract": contract()}),
        (WorkOfferWirePayload, {"workItemId": W1, "selectionBasis": SELECTION_BASIS,
                                "candidates": [{"offerId": "urn:x:o", "agentId": WORKER,
                                                "agentCardVersion": 1}]}),
        (WorkSubmitWirePayload, {"workItemId": W1, "ownershipEpoch": 1, "leaseId": "urn:x:l",
                                 "artifactHashes": ["sha256:" + "a" * 64],
                                 "evidence": [evidence(W1, "t", "deterministic_test")]}),
    ]:
        assert model.model_validate(payload).to_payload() == payload


def test_payload_models_refuse_what_the_engine_would() -> None:
    with pytest.raises(ValidationError):
        MissionRenewCoordinatorWirePayload(lease_seconds=0)
    with pytest.raises(ValidationError):
        WorkSubmitWirePayload(work_item_id=W1, ownership_epoch=1, lease_id="l",
                              artifact_hashes=[], evidence=[{}])
    with pytest.raises(ValidationError):
        MissionCreateWirePayload.model_validate({**create_payload(), "title": "extra member"})


def test_a_command_built_from_payload_models_is_performed() -> None:
    async def main() -> None:
        core = make_core()
        create = MissionCreateWirePayload.model_validate(create_payload())
        await core.perform(signed("mission.create", "urn:missionweaveprotocol:human:alice",
                                  create.to_payload()))
        renew = MissionRenewCoordinatorWirePayload(lease_seconds=600)
        event = await core.perform(signed("mission.renew_coordinator", COORDINATOR,
                                          renew.to_payload(), coordinatorEpoch=1))
        assert event.sequence == 2 and event.group_id == GROUP
    asyncio.run(main())
