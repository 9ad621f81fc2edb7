"""The budget snapshot as the reference's frozen camelCase pydantic models, validated by the
Rust core, and the reference's BudgetLedger call shapes (parent_mission_id, limits with unset
dimensions)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional

import pydantic
import pytest

import missionweaveprotocol as mwp
from missionweaveprotocol.budget import (
    BudgetLedger,
    BudgetLedgerSnapshot,
    BudgetLimitState,
    BudgetUsageState,
    MissionBudgetState,
    ResourceUsage,
    WorkItemBudgetState,
)
from missionweaveprotocol.errors import BudgetLedgerError


@dataclass
class ResourceBudget:  # the reference's shape: every dimension optional, None allows nothing
    financial_microunits: Optional[int] = None
    model_tokens: Optional[int] = None
    tool_calls: Optional[int] = None
    compute_seconds: Optional[int] = None
    wall_clock_seconds: Optional[int] = None
    external_actions: Optional[int] = None


def ledger() -> BudgetLedger:
    led = BudgetLedger()
    led.register_mission("urn:m:root", ResourceBudget(tool_calls=10, model_tokens=100))
    led.register_work_item("urn:w:1", "urn:m:root", ResourceBudget(tool_calls=6))
    led.register_mission("urn:m:child", ResourceBudget(tool_calls=4), parent_mission_id="urn:m:root",
                         parent_work_item_id="urn:w:1")
    led.register_work_item("urn:w:2", "urn:m:child", {"toolCalls": 3})
    led.consume("urn:w:2", ResourceBudget(tool_calls=2))
    return led


def test_the_models_are_frozen_camel_case_pydantic_models() -> None:
    snap = ledger().snapshot()
    assert mwp.BudgetLedgerSnapshot is BudgetLedgerSnapshot and isinstance(snap, pydantic.BaseModel)
    assert snap.schema_version == 2 and [m.mission_id for m in snap.missions] == ["urn:m:root", "urn:m:child"]
    child = snap.missions[1]
    assert isinstance(child, MissionBudgetState) and child.parent_mission_id == "urn:m:root"
    assert child.parent_work_item_id == "urn:w:1" and child.usage.tool_calls == 2
    item = snap.work_items[1]
    assert isinstance(item, WorkItemBudgetState) and item.direct_usage.tool_calls == 2
    with pytest.raises(pydantic.ValidationError) as info:
        snap.schema_version = 3  # type: ignore[misc]
    assert info.value.errors()[0]["type"] == "frozen_instance"
    dumped = snap.model_dump(by_alias=True)
    assert set(dumped) == {"schemaVersion", "missions", "workItems"}
    assert set(dumped["workItems"][0]) >= {"workItemId", "missionId", "limit", "directUsage", "usage"}
    assert json.loads(json.dumps(snap.to_dict())) == snap.to_dict()
    assert list(MissionBudgetState.model_fields)[:5] == [
        "mission_id", "parent_mission_id", "parent_work_item_id", "limit", "usage"]
    assert list(WorkItemBudgetState.model_fields) == [
        "work_item_id", "mission_id", "parent_work_item_id", "limit", "direct_usage", "usage"]


def test_limit_and_usage_states_convert() -> None:
    limit = BudgetLimitState.from_budget(ResourceBudget(tool_calls=3))
    assert limit.tool_calls == 3 and limit.to_budget() == ResourceUsage(tool_calls=3)
    assert BudgetLimitState().to_budget() == ResourceUsage(), "unset limits allow nothing"
    usage = BudgetUsageState.from_usage(ResourceUsage(model_tokens=7))
    assert usage.model_tokens == 7 and usage.to_usage() == ResourceUsage(model_tokens=7)
    with pytest.raises(pydantic.ValidationError):
        BudgetUsageState(tool_calls=True)


def test_validation_rebuilds_the_ledger_in_the_core() -> None:
    data = ledger().snapshot().to_dict()
    assert BudgetLedgerSnapshot.model_validate(data) == ledger().snapshot()
    keyed = {**data, "missions": {m["missionId"]: m for m in data["missions"]}}
    assert BudgetLedgerSnapshot.model_validate(keyed).mission_ids == ["urn:m:root", "urn:m:child"]
    cases = [
        (lambda d: d["missions"][0]["usage"].update(toolCalls=0), "INTERNAL_ERROR", "corrupt_totals"),
        (lambda d: d["workItems"].append(d["workItems"][0]), "INVALID_COMMAND", "duplicate"),
        # Over-reservation: a snapshot the ledger could never have produced.
        (lambda d: d["workItems"][0]["limit"].update(toolCalls=11), "INTERNAL_ERROR", "corrupt_totals"),
        (lambda d: d["missions"][0].update(parentWorkItemId="urn:w:2"), "INTERNAL_ERROR", "cycle"),
        (lambda d: d["missions"][1].update(parentMissionId="urn:m:other"), "INVALID_COMMAND", "parent"),
    ]
    for mutate, code, kind in cases:
        bad: Any = json.loads(json.dumps(data))
        mutate(bad)
        with pytest.raises(pydantic.ValidationError) as info:
            BudgetLedgerSnapshot.model_validate(bad)
        (error,) = info.value.errors()
        assert (error["type"], error["ctx"]["kind"]) == (code, kind), kind
        with pytest.raises((BudgetLedgerError, pydantic.ValidationError)):
            BudgetLedger.rebuild(bad)
    with pytest.raises(pydantic.ValidationError) as info:
        BudgetLedgerSnapshot.model_validate({**data, "schemaVersion": 1})
    assert info.value.errors()[0]["ctx"]["reason"] == "unsupported_version"
    with pytest.raises(pydantic.ValidationError):
        BudgetLedgerSnapshot.model_validate({**data, "extra": 1})


def test_reference_ledger_calls() -> None:
    led = ledger()
    assert led.remaining(("work_item", "urn:w:2")).tool_calls == 1
    assert BudgetLedger.rebuild(led.snapshot()).remaining(("mission", "urn:m:child")) == led.remaining(
        ("mission", "urn:m:child"))
    with pytest.raises(BudgetLedgerError) as info:
        led.consume("urn:w:2", ResourceBudget(model_tokens=1))  # unset limit: zero allowance
    assert info.value.code == "BUDGET_EXCEEDED" and info.value.dimension == "model_tokens"
    with pytest.raises(BudgetLedgerError) as info:
        led.register_mission("urn:m:x", ResourceBudget(), parent_mission_id="urn:m:child",
                             parent_work_item_id="urn:w:1")
    assert info.value.kind == "parent"
    with pytest.raises(BudgetLedgerError):
        led.consume("urn:w:2", "two")


def test_differences_from_the_reference() -> None:
    led = BudgetLedger()
    # Money needs a currency (the reference added up amounts of no stated currency).
    with pytest.raises(BudgetLedgerError) as info:
        led.register_mission("urn:m:1", ResourceBudget(financial_microunits=5))
    assert info.value.kind == "currency"
    led.register_mission("urn:m:1", ResourceBudget(financial_microunits=5), currency="EUR")
    assert led.snapshot().missions[0].currency == "EUR"
    # A child Mission is reserved against the WorkItem it was promoted from (§14).
    with pytest.raises(BudgetLedgerError) as info:
        led.register_mission("urn:m:2", ResourceBudget(), parent_mission_id="urn:m:1")
    assert info.value.kind == "parent"
