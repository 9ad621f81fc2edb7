"""The two-Missions scenario (issue 13) from Python: the golden vector
``tests/vectors/two-missions.jsonl`` — written once by the Rust core's testkit
(``core/testkit/src/vectors/two_missions``) — performed on ``core.Core``.

Two concurrent Missions in two Groups run requirements → implementation → testing →
code-review → integration as a WorkItem dependency chain, then ``mission.submit_for_approval``
and the human ``mission.approve``; Mission A promotes ``testing`` to a child Mission, gates
``integration`` on a human Execution Approval, and has its Group archived. Every Command is
performed at the instant the vector gives it (the Core's ``clock``), with the vector's Registry,
Group Authority key and Event ID prefix: each Event's signed bytes, each refusal's typed error
and wire code, each Group's replayed log and the digest of the whole log must equal the
vector's, byte for byte — the same bytes ``core/testkit/tests/two_missions.rs`` and
``js/test/two-missions.test.mjs`` check."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Dict, List, Type, Union

import pytest

from missionweaveprotocol.core import (
    Core,
    DependencyError,
    InvalidCommand,
    MissionWeaveProtocolError,
    PolicyViolation,
)
from missionweaveprotocol.crypto import SigningKey
from missionweaveprotocol.models import Principal
from missionweaveprotocol.store import InMemoryStore, SQLiteStore

VECTORS = Path(os.environ.get("MWP_VECTORS_DIR") or Path(__file__).resolve().parents[2] / "tests" / "vectors")
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def records() -> List[Dict[str, Any]]:
    # Split on line feeds only: str.splitlines would also split at U+2028/U+2029.
    text = (VECTORS / "two-missions.jsonl").read_text("utf-8")
    return [json.loads(line) for line in text.split("\n") if line]


RECORDS = records()
SETUP = RECORDS[0]
STEPS = [r for r in RECORDS if r["record"] == "step"]
LOGS = [r for r in RECORDS if r["record"] == "log"]
(DIGEST,) = [r for r in RECORDS if r["record"] == "digest"]

# The typed error each refusal of the scenario raises (the Rust core's family table).
REFUSALS: Dict[str, Type[MissionWeaveProtocolError]] = {
    "b: work.start implementation before requirements is verified": DependencyError,
    "a: work.start integration without an Execution Approval": PolicyViolation,
}

# … and its reason slug.
REASONS = {
    "b: work.start implementation before requirements is verified": "dependency_not_ready",
    "a: work.start integration without an Execution Approval": "execution_approval_required",
}


class StepClock:
    """The Core's clock: the instant of the step being performed."""

    def __init__(self) -> None:
        self.ms = 0

    def __call__(self) -> datetime:
        return EPOCH + timedelta(milliseconds=self.ms)


def make_core(store: Union[InMemoryStore, SQLiteStore], clock: StepClock) -> Core:
    return Core(
        store,
        clock=clock,
        registry=SETUP["registry"].encode("utf-8"),
        authority_key=SigningKey(SETUP["authorityKeyId"], bytes.fromhex(SETUP["authorityKeySeed"])),
        authority=Principal.service(SETUP["authority"]["id"]),
        event_id_prefix=SETUP["eventIdPrefix"],
        bootstrap_services=SETUP["bootstrapServices"],
        policy_services=SETUP["policyServices"],
    )


async def perform_all(core: Core, clock: StepClock, skew_ms: int = 0) -> List[str]:
    """Performs every step; what differs from the vector (empty: byte-identical)."""
    problems: List[str] = []
    log = b""
    for step in STEPS:
        clock.ms = step["now"] + skew_ms
        label = step["label"]
        try:
            events = await core.perform_all(step["command"].encode("utf-8"))
        except MissionWeaveProtocolError as error:
            expected = step.get("refused")
            if expected is None:
                problems.append(f"{label}: refused {error.wire_code}")
            elif error.wire_code != expected or type(error) is not REFUSALS[label]:
                problems.append(f"{label}: {type(error).__name__} {error.wire_code}, expected {expected}")
            continue
        if "refused" in step:
            problems.append(f"{label}: applied, expected {step['refused']}")
            continue
        got = [event.signed_bytes for event in events]
        want = [event["body"].encode("utf-8") for event in step["events"]]
        if got != want:
            problems.append(f"{label}: Events differ")
        log += b"".join(body + b"\n" for body in got)
    for group in LOGS:
        replayed = await core.replay(group["groupId"], after=group["after"], limit=10_000)
        data = b"".join(event.signed_bytes + b"\n" for event in replayed)
        if "sha256:" + hashlib.sha256(data).hexdigest() != group["sha256"]:
            problems.append(f"replay of {group['groupId']} differs")
        if [event.id for event in replayed] != [e["eventId"] for e in group["replay"]]:
            problems.append(f"replay of {group['groupId']}: other Event IDs")
    if "sha256:" + hashlib.sha256(log).hexdigest() != DIGEST["sha256"]:
        problems.append("the log digest differs")
    return problems


def test_the_vector_is_the_scenario() -> None:
    assert SETUP["stages"] == ["requirements", "implementation", "testing", "code-review", "integration"]
    assert len(STEPS) == DIGEST["steps"]
    assert {label: step["refused"] for step in STEPS if "refused" in step for label in [step["label"]]} == {
        "b: work.start implementation before requirements is verified": "INVALID_COMMAND",
        "a: work.start integration without an Execution Approval": "APPROVAL_REQUIRED",
    }
    kinds = [e["kind"] for step in STEPS for e in step.get("events", [])]
    for kind in ("mission.child.created", "approval.execution.granted", "group.archived"):
        assert kind in kinds
    assert kinds.count("mission.approved") == 3  # A, B and A's child


def test_core_in_memory_reproduces_the_log_byte_for_byte() -> None:
    clock = StepClock()
    problems = asyncio.run(perform_all(make_core(InMemoryStore(), clock), clock))
    assert problems == []


def test_core_over_sqlite_reproduces_the_log_byte_for_byte(tmp_path: Path) -> None:
    async def scenario() -> List[str]:
        store = SQLiteStore(tmp_path / "two-missions.db")
        await store.initialize()
        clock = StepClock()
        try:
            return await perform_all(make_core(store, clock), clock)
        finally:
            await store.close()

    assert asyncio.run(scenario()) == []


def test_another_clock_gives_another_log() -> None:
    # The comparison can fail: 1 ms later, every Event's occurredAt and signature move.
    clock = StepClock()
    problems = asyncio.run(perform_all(make_core(InMemoryStore(), clock), clock, skew_ms=1))
    assert "the log digest differs" in problems
    assert any(p.endswith("Events differ") for p in problems)


@pytest.mark.parametrize("label", sorted(REFUSALS))
def test_each_refusal_is_typed_with_its_wire_code(label: str) -> None:
    async def scenario() -> MissionWeaveProtocolError:
        clock = StepClock()
        core = make_core(InMemoryStore(), clock)
        for step in STEPS:
            clock.ms = step["now"]
            if "refused" in step:
                with pytest.raises(MissionWeaveProtocolError) as raised:
                    await core.perform_all(step["command"].encode("utf-8"))
                if step["label"] == label:
                    return raised.value
            else:
                await core.perform_all(step["command"].encode("utf-8"))
        raise AssertionError(f"no step {label}")

    error = asyncio.run(scenario())
    step = next(s for s in STEPS if s["label"] == label)
    assert type(error) is REFUSALS[label]
    assert error.wire_code == step["refused"]
    # The wire code is not the family: INVALID_COMMAND here is a DependencyError, not the
    # InvalidCommand family (the core's reason slug decides).
    assert not isinstance(error, InvalidCommand)
    assert error.reason == REASONS[label]
