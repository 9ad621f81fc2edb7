"""The budget ledger through Python: reservation, atomic ancestry charging, snapshots."""

from __future__ import annotations

import json

import pytest

import missionweaveprotocol as mwp
from missionweaveprotocol.budget import BudgetLedger, BudgetLedgerSnapshot, ResourceUsage
from missionweaveprotocol.errors import BudgetLedgerError, InvalidInputError

DIMENSIONS = ("financial_microunits", "model_tokens", "tool_calls", "compute_seconds",
              "wall_clock_seconds", "external_actions")


def u(n: int) -> ResourceUsage:
    return ResourceUsage.splat(n)


def tree() -> BudgetLedger:
    """root(100) → w1(60) → child Mission c(40) → w2(30) → w3(20); w4(30) under root."""
    ledger = BudgetLedger()
    ledger.register_mission("m", u(100), currency="USD")
    ledger.register_work_item("w1", "m", u(60))
    ledger.register_mission("c", u(40), parent_work_item_id="w1")
    ledger.register_work_item("w2", "c", u(30))
    ledger.register_work_item("w3", "c", u(20), parent_work_item_id="w2")
    ledger.register_work_item("w4", "m", u(30))
    return ledger


def test_root_names() -> None:
    assert mwp.BudgetLedger is BudgetLedger and mwp.ResourceUsage is ResourceUsage
    assert mwp.BudgetLedgerSnapshot is BudgetLedgerSnapshot


def test_resource_usage_values() -> None:
    r = ResourceUsage(tool_calls=3)
    assert r.tool_calls == 3 and r.model_tokens == 0 and not r.is_zero()
    assert r == ResourceUsage(0, 0, 3) and hash(r) == hash(ResourceUsage(tool_calls=3))
    assert set(r.to_dict()) == set(DIMENSIONS)
    for bad in (-1, 2**53, 1.0, True, "1"):
        with pytest.raises(InvalidInputError):
            ResourceUsage(tool_calls=bad)  # type: ignore[arg-type]


def test_children_reserve_against_parents() -> None:
    ledger = tree()
    assert ledger.reserved(("mission", "m")) == u(90)
    with pytest.raises(BudgetLedgerError) as info:
        ledger.register_work_item("w5", "m", u(11))
    e = info.value
    assert (e.code, e.kind, e.dimension, e.account) == (
        "BUDGET_EXCEEDED", "allocation_exceeded", "financial_microunits", ("mission", "m"))
    ledger.register_work_item("w5", "m", u(10))
    assert len(ledger) == 7 and ledger.depth(("work_item", "w3")) == 4


@pytest.mark.parametrize("dimension", DIMENSIONS)
def test_overflow_is_atomic_and_names_the_dimension(dimension: str) -> None:
    ledger = tree()
    before = ledger.snapshot()
    with pytest.raises(BudgetLedgerError) as info:
        ledger.consume("w3", ResourceUsage(**{dimension: 21}))
    assert info.value.code == "BUDGET_EXCEEDED" and info.value.dimension == dimension
    assert info.value.account == ("work_item", "w3")
    assert ledger.snapshot() == before, "nothing was charged"


def test_consumption_rolls_up_and_remaining_is_capped_by_ancestors() -> None:
    ledger = tree()
    assert ledger.consume("w3", ResourceUsage(tool_calls=5)) == ResourceUsage(tool_calls=5)
    for account in [("work_item", "w2"), ("mission", "c"), ("work_item", "w1"), ("mission", "m")]:
        assert ledger.usage(account).tool_calls == 5
    ledger.consume("w4", ResourceUsage(model_tokens=25))
    # w1 has 60 left of its own, but the root has only 75 tokens left overall.
    ledger.consume("w1", ResourceUsage(model_tokens=50))
    assert ledger.remaining(("work_item", "w3")).model_tokens == 10
    with pytest.raises(BudgetLedgerError) as info:
        ledger.consume("w3", ResourceUsage(model_tokens=11))
    assert info.value.account == ("work_item", "w1")


def test_bad_requests_are_typed() -> None:
    ledger = tree()
    cases = [
        (lambda: ledger.consume("w3", ResourceUsage()), "zero_delta", "INVALID_COMMAND"),
        (lambda: ledger.consume("nope", u(1)), "unknown_account", "INVALID_COMMAND"),
        (lambda: ledger.register_mission("m", u(1), currency="USD"), "duplicate", "INVALID_COMMAND"),
        (lambda: ledger.register_mission("x", u(1)), "currency", "INVALID_COMMAND"),
        (lambda: ledger.register_mission("y", u(1), currency="EUR", parent_work_item_id="w4"),
         "currency", "INVALID_COMMAND"),
        (lambda: ledger.register_work_item("w9", "c", u(1), parent_work_item_id="w4"),
         "cross_mission_parent", "INVALID_COMMAND"),
    ]
    for call, kind, code in cases:
        with pytest.raises(BudgetLedgerError) as info:
            call()
        assert (info.value.kind, info.value.code) == (kind, code)
    with pytest.raises(InvalidInputError):
        ledger.remaining(("account", "m"))
    with pytest.raises(InvalidInputError):
        ledger.register_mission("z", u(0), currency="usd")
    assert ledger.currency(("work_item", "w3")) == "USD"


def test_snapshot_round_trips_through_json() -> None:
    ledger = tree()
    ledger.consume("w3", ResourceUsage(1, 2, 3, 4, 5, 6))
    snap = ledger.snapshot()
    data = json.loads(json.dumps(snap.to_dict()))
    assert data["schemaVersion"] == 2 and data["missions"][0]["currency"] == "USD"
    assert data["workItems"][2]["directUsage"]["externalActions"] == 6
    rebuilt = BudgetLedger.rebuild(data)
    assert rebuilt.snapshot() == snap
    assert BudgetLedgerSnapshot.from_json(snap.to_json()) == snap
    core = json.loads(json.dumps(snap.to_core_dict()))
    assert core["version"] == 1 and "parentMissionId" not in core["missions"][1]
    assert BudgetLedger.rebuild(core).snapshot() == snap
    assert BudgetLedgerSnapshot.from_dict(core) == snap == BudgetLedgerSnapshot.from_dict(data)
    assert BudgetLedger.rebuild(snap).remaining(("work_item", "w3")) == ledger.remaining(
        ("work_item", "w3"))
    # The rebuilt ledger enforces the same limits.
    with pytest.raises(BudgetLedgerError):
        rebuilt.consume("w3", ResourceUsage(tool_calls=18))


def test_rebuild_rejects_corruption() -> None:
    data = tree().snapshot().to_core_dict()
    bad_usage = json.loads(json.dumps(data))
    bad_usage["missions"][0]["usage"]["toolCalls"] = 1
    with pytest.raises(BudgetLedgerError) as info:
        BudgetLedger.rebuild(bad_usage)
    assert (info.value.kind, info.value.code) == ("corrupt_totals", "INTERNAL_ERROR")
    cycle = json.loads(json.dumps(data))
    cycle["missions"][0]["parentWorkItemId"] = "w3"
    with pytest.raises(BudgetLedgerError) as info:
        BudgetLedger.rebuild(cycle)
    assert info.value.kind == "cycle"
    unknown = json.loads(json.dumps(data))
    unknown["workItems"][0]["extra"] = 1
    with pytest.raises(BudgetLedgerError) as info:
        BudgetLedger.rebuild(unknown)
    assert (info.value.kind, info.value.path) == ("malformed_snapshot", "/workItems/0")
    dup = json.loads(json.dumps(data))
    dup["workItems"].append(dup["workItems"][0])
    with pytest.raises(BudgetLedgerError) as info:
        BudgetLedger.rebuild(dup)
    assert info.value.kind == "duplicate"
