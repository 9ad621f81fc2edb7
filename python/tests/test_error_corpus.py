"""The cross-language corpus of failing calls (``tests/errors/failing-calls.json``): every
binding fails each call with the same error class, wire code, reason and structured fields as
the Rust core (``core/testkit/tests/error_corpus.rs``) and the JavaScript package."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable, Dict, List

import pytest

from missionweaveprotocol import errors
from missionweaveprotocol.admission import replay_historical
from missionweaveprotocol.auth import AgentKeyRegistry, SessionAuthority
from missionweaveprotocol.local_store import SQLiteAgentStore
from missionweaveprotocol.replay import AgentReplay
from missionweaveprotocol.budget import BudgetLedger, ResourceUsage
from missionweaveprotocol.canonical import canonicalize_json
from missionweaveprotocol import core as core_module
from missionweaveprotocol.core import Core
from missionweaveprotocol.execution import RetryController
from missionweaveprotocol.crypto import SigningKey
from missionweaveprotocol.models import Principal
from missionweaveprotocol.registry import AgentRegistryKeyResolver, RegistryBuilder
from missionweaveprotocol.store import InMemoryStore, SQLiteStore
from missionweaveprotocol.scheduler import Scheduler, WorkOffer
from missionweaveprotocol.signed_documents import SignedDocumentCodec
from missionweaveprotocol.wire import parse_frame

from conftest import read
from core_support import make_core
from missionweaveprotocol.signed_documents import SignedDocumentKind

CORPUS = json.loads(
    (Path(__file__).resolve().parents[2] / "tests" / "errors" / "failing-calls.json").read_text()
)

# The core's class names (`ErrorClass::as_str`) → this package's exception classes.
CLASSES: Dict[str, type] = {
    "admission": errors.AdmissionError,
    "argument": errors.InvalidInputError,
    "parse": errors.JsonParseError,
    "canonicalization": errors.CanonicalizationError,
    "verification": errors.SignedDocumentVerificationError,
    "frame": errors.FrameError,
    "budget": errors.BudgetLedgerError,
    "budget-exceeded": errors.BudgetLedgerError,
    "snapshot": errors.SnapshotError,
    "scheduler": errors.SchedulerError,
    "scheduler-state": errors.SchedulerStateError,
    "authentication": errors.AuthenticationError,
    "local-store": errors.LocalStoreError,
    "replay-sequence": errors.ReplaySequenceError,
    "offline": errors.OfflinePolicyError,
}

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _budget(args: Dict[str, Any]) -> None:
    ledger = BudgetLedger()
    limit = ResourceUsage(**args["limit"])
    ledger.register_mission("m", limit, currency="USD")
    ledger.register_work_item("w", "m", limit)
    ledger.consume(args["work_item"], ResourceUsage(**args["delta"]))


def _scheduler(args: Dict[str, Any], reprioritize: bool) -> None:
    s = Scheduler()
    assert s.admit(WorkOffer("a", "g"), now=T0).accepted
    if reprioritize:
        s.reprioritize(args["work_id"], args["priority"])
    else:
        s.cancel(args["work_id"])


class _FoundWithoutRecord:
    """A duck-typed Admission Log whose lookup answers ``found`` with no usable record."""

    def lookup(self, organization_id: str, signing_hash: str) -> object:
        return SimpleNamespace(status="found", record=None)

    def append(self, candidate: object, candidate_bytes: bytes) -> object:
        raise AssertionError("replay never appends")


def _kind(text: str) -> Any:
    """The corpus spells kinds as on the wire; the codec takes the enum (an unknown spelling
    stays a string: the codec's own refusal is what the corpus checks)."""
    return SignedDocumentKind(text) if text in {k.value for k in SignedDocumentKind} else text


def _replay(args: Dict[str, Any]) -> None:
    resolver = AgentRegistryKeyResolver(read(args["registry"]))
    verified = SignedDocumentCodec().verify(
        _kind(args["kind"]), read(args["document"]), resolver
    )
    replay_historical(verified, _FoundWithoutRecord())


def _remember(args: Dict[str, Any]) -> None:
    store = SQLiteAgentStore(":memory:")
    for position in ("first", "second"):
        group_id, sequence = args[position]
        store.remember_event("agent", args["event_id"], group_id=group_id, sequence=sequence)


def _replay_sequence(args: Dict[str, Any]) -> None:
    event = SimpleNamespace(id=args["event_id"], group_id="g", sequence=args["sequence"])

    async def source(group_id: str, *, after: int) -> List[Any]:
        return [event]

    async def projector(event: Any) -> None:
        raise AssertionError("a refused Event is never projected")

    replay = AgentReplay("agent", SQLiteAgentStore(":memory:"), source, projector)
    asyncio.run(replay.reconcile("g"))


def _core_config(args: Dict[str, Any]) -> None:
    key_id = "urn:missionweaveprotocol:key:authority"
    authority = Principal(type="service", id="urn:missionweaveprotocol:service:group-authority")
    bound = SigningKey(key_id, bytes([30] * 32))
    builder = RegistryBuilder("urn:missionweaveprotocol:organization:acme")
    builder.add_key(key_id, ("service", authority.id), bound.public_key_bytes,
                    "2026-01-01T00:00:00Z")
    public_seed = args["snapshot_authority_public_key_seed"]
    offline = args["offline_limits"]
    Core(
        InMemoryStore(),
        registry=builder.build(),
        authority_key=SigningKey(key_id, bytes([args["key_seed"]] * 32)),
        authority=authority,
        snapshot_authority_key_id=args["snapshot_authority_key_id"],
        snapshot_authority_public_key=(
            None if public_seed is None
            else SigningKey(key_id, bytes([public_seed] * 32)).public_key_bytes
        ),
        # A duck-typed object (the reference accepts any with these attributes): the core's
        # own check, not the dataclass's.
        offline_limits=None if offline is None else SimpleNamespace(
            max_disconnect_grace=timedelta(milliseconds=offline["max_disconnect_grace_ms"]),
            max_actions=offline["max_actions"],
            max_usage=ResourceUsage(),
        ),
    )


def _scheduler_rebuild(args: Dict[str, Any]) -> None:
    source = args["source"]
    if isinstance(source, list):
        source = [WorkOffer(o["work_id"], o["group_id"]) for o in source]
    Scheduler.rebuild(source, now=T0)


def _core_closed_store(args: Dict[str, Any]) -> None:
    # A Core over a SQLite store (in memory) closed after the Core was built: its replay fails
    # on the store (a refusal of the Core: its class is the family's, `core.StoreError`).
    async def main() -> None:
        store = SQLiteStore()
        await store.initialize()
        core = make_core(store=store, sessions=False)
        await store.close()
        await core.replay(args["group_id"])

    asyncio.run(main())


OPS: Dict[str, Callable[[Dict[str, Any]], object]] = {
    "canonicalize": lambda a: canonicalize_json(a["text"].encode()),
    "verify": lambda a: SignedDocumentCodec().verify(
        _kind(a["kind"]), a["text"].encode(), AgentRegistryKeyResolver(read(a["registry"]))
    ),
    "parse_frame": lambda a: parse_frame(a["text"]),
    "budget_consume": _budget,
    "budget_rebuild": lambda a: BudgetLedger.rebuild(json.loads(a["text"])),
    "scheduler_reprioritize": lambda a: _scheduler(a, True),
    "scheduler_cancel": lambda a: _scheduler(a, False),
    "replay_found_without_record": _replay,
    "session_verify": lambda a: SessionAuthority(AgentKeyRegistry(), secret=bytes([7] * 32))
    .verify_session(a["token"]),
    "local_store_remember_event": _remember,
    "replay_sequence": _replay_sequence,
    "core_config": _core_config,
    "core_closed_store": _core_closed_store,
    "scheduler_rebuild": _scheduler_rebuild,
    "budget_rebuild_value": lambda a: BudgetLedger.rebuild(a["value"]),
    "retry_restore_value": lambda a: RetryController.restore(a["value"]),
}


def _python_value(value: Any) -> Any:
    # An account is the reference's AccountRef tuple.
    return tuple(value) if isinstance(value, list) else value


@pytest.mark.parametrize("case", CORPUS["cases"], ids=lambda c: c["name"])
def test_failing_call(case: Dict[str, Any]) -> None:
    expect = case["expect"]
    if "family" in expect:
        _check_core_refusal(case)
        return
    with pytest.raises(errors.MissionWeaveError) as caught:
        OPS[case["op"]](case["args"])
    error = caught.value
    assert isinstance(error, CLASSES[expect["class"]]), type(error)
    if "retryable" in expect:
        assert error.retryable is expect["retryable"]
    assert error.code == expect["code"]
    assert error.reason == expect["reason"]
    assert (error.stage.value if error.stage is not None else None) == expect["stage"]
    if expect["fields"] is not None:
        assert dict(error.fields) == {k: _python_value(v) for k, v in expect["fields"].items()}
        for name, value in expect["fields"].items():
            assert getattr(error, name) == _python_value(value)
    if expect["message"] is not None:
        assert str(error) == expect["message"]
    assert "{ " not in str(error)


def _check_core_refusal(case: Dict[str, Any]) -> None:
    # A refusal of the Core: the class is the family's (`core.ErrorCode`), `code` the family and
    # `wire_code` the §19 code; the fields are its `details`.
    expect = case["expect"]
    with pytest.raises(core_module.MissionWeaveProtocolError) as caught:
        OPS[case["op"]](case["args"])
    error = caught.value
    family = core_module.ErrorCode(expect["family"])
    assert type(error).code is family and error.code is family, type(error)
    assert error.wire_code == expect["code"]
    assert error.reason == expect["reason"]
    if "retryable" in expect:
        assert error.retryable is expect["retryable"]
    if expect["fields"] is not None:
        assert error.details == {k: _python_value(v) for k, v in expect["fields"].items()}
    if expect["message"] is not None:
        assert str(error) == expect["message"]


def test_the_corpus_covers_every_op() -> None:
    assert {case["op"] for case in CORPUS["cases"]} == set(OPS)
