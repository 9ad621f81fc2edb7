"""A user file driving a Mission through the human control interface; `mypy --strict` must
accept it (scripts/test-python.sh). Never run: it types the calls a user writes."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Dict, Tuple

from missionweaveprotocol.control import (
    ControlReceipt,
    HumanControl,
    HumanIdentity,
    MissionInspection,
)
from missionweaveprotocol.core import Core
from missionweaveprotocol.models import Command, Event, Principal


async def drive(core: Core) -> Tuple[ControlReceipt, Dict[str, Any], MissionInspection]:
    identity = HumanIdentity.generate("urn:example:human:alice")
    owner: Principal = identity.principal
    assert owner.id == identity.human_id
    control = HumanControl(core, identity, clock=lambda: datetime.now(timezone.utc),
                           action_id_factory=lambda: "urn:example:action:1")
    created = await control.create(
        mission_id="urn:example:mission:m", group_id="urn:example:group:g",
        coordinator_id="urn:example:agent:planner", title="t", objective="o",
        definition_of_done=["done", {"criterionId": "c", "description": "d",
                                     "evidenceRequired": ["human_review"]}],
        deadline=datetime(2026, 8, 1, tzinfo=timezone.utc), budget={"toolCallLimit": 10},
    )
    event: Event = created.event
    command: Command = await control.accepted_command(event.id)
    assert identity.verify(identity.sign(command))
    await control.direct("urn:example:mission:m", "hello", mentions=[owner])
    receipt, approval = await control.approve("urn:example:mission:m", comments="ok")
    _, stored = await control.approve_execution(
        "urn:example:mission:m", work_item_id="urn:example:work:w", ownership_epoch=1,
        operations=["deploy"])
    assert stored
    await control.request_changes("urn:example:mission:m", "more", mission_revision=2)
    await control.replace_coordinator("urn:example:mission:m", "urn:example:agent:b",
                                      lease_seconds=60)
    await control.cancel("urn:example:mission:m", "stop")
    return receipt, approval, await control.inspect("urn:example:mission:m")
