"""offline.py: reversible progress is bound, signed and queued within the grace window and the
bounds; everything else is refused atomically with OfflinePolicyError and a §19 code; rebasing
keeps the binding and re-signs for the current session."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, List

import pydantic
import pytest

import core_support as cs

from missionweaveprotocol import crypto
from missionweaveprotocol import registry as reg
from missionweaveprotocol import signed_documents as sd
from missionweaveprotocol._native import ResourceUsage, canonical_bytes, encode_base64url, parse_json
from missionweaveprotocol.core import MissionWeaveProtocolError
from missionweaveprotocol.models import Command, Query, QueryKind
from missionweaveprotocol.offline import (
    OFFLINE_EXECUTION_EXTENSION,
    OFFLINE_EXECUTION_EXTENSION_VERSION,
    OFFLINE_REVERSIBLE_KINDS,
    InMemoryOutbox,
    OfflineExecutionPolicy,
    OfflineLimits,
    OfflinePolicyError,
    OfflineProgressBinding,
    offline_command_to_wire,
    rebase_offline_command,
)
from missionweaveprotocol.signed_documents import SignedDocumentKind

T0 = datetime(2026, 7, 15, 9, 30, tzinfo=timezone.utc)
AGENT = "urn:missionweaveprotocol:agent:worker"
GROUP = "urn:missionweaveprotocol:group:finance"
ITEM = "urn:missionweaveprotocol:work:ledger"
LEASE = "urn:missionweaveprotocol:lease:exec-1"
CONVERSATION = "urn:missionweaveprotocol:conversation:ledger"
KEY = crypto.SigningKey("urn:missionweaveprotocol:key:worker", bytes(range(32)))


class Identity:
    """A SigningKey-protocol identity with an Agent ID."""

    agent_id = AGENT
    signing_key = KEY


class ReferenceIdentity:
    """The reference AgentIdentity shape: public_key and sign() as base64url text."""

    agent_id = AGENT

    @property
    def public_key(self) -> str:
        return encode_base64url(KEY.public_key_bytes)

    def sign(self, payload: bytes) -> str:
        return encode_base64url(KEY.sign(payload))


class DictStore:
    """A duck-typed local store outbox."""

    def __init__(self) -> None:
        self.rows: Dict[str, Any] = {}
        self.sent: set[str] = set()

    def enqueue_action(self, agent_id: str, action_id: str, payload: Dict[str, Any]) -> None:
        if action_id in self.rows and self.rows[action_id] != payload:
            raise ValueError("collision")
        self.rows[action_id] = payload

    def pending_actions(self, agent_id: str) -> List[Dict[str, Any]]:
        return [p for a, p in self.rows.items() if a not in self.sent]

    def mark_action_sent(self, agent_id: str, action_id: str) -> None:
        self.sent.add(action_id)


WORK_ITEM = {
    "id": ITEM,
    "group_id": GROUP,
    "conversation_id": CONVERSATION,
    "status": "active",
    "assignee_id": AGENT,
    "ownership_epoch": 2,
    "execution_lease_id": LEASE,
    "execution_lease_expires_at": T0 + timedelta(minutes=10),
    "session_epoch": 3,
}

LIMITS = OfflineLimits(
    max_disconnect_grace=timedelta(minutes=5),
    max_actions=2,
    max_usage=ResourceUsage(model_tokens=4, compute_seconds=2),
)


def command(n: int, kind: str, payload: Dict[str, Any], **extra: Any) -> Dict[str, Any]:
    document = {
        "protocolVersion": "0.1",
        "actionId": f"urn:uuid:00000000-0000-4000-8000-00000000000{n}",
        "actor": {"type": "agent", "id": AGENT},
        "sessionEpoch": 3,
        "membershipEpoch": 1,
        "groupId": GROUP,
        "workItemId": ITEM,
        "kind": kind,
        "correlationId": "urn:missionweaveprotocol:correlation:1",
        "issuedAt": "2026-07-15T09:30:00Z",
        "payload": payload,
    }
    document.update(extra)
    return document


def checkpoint(n: int = 1) -> Dict[str, Any]:
    return command(n, "work.checkpoint", {
        "ownershipEpoch": 2, "leaseId": LEASE,
        "checkpoint": {"currentPhase": "draft", "completedMilestones": [], "nextCheckpoint": "review",
                       "blockers": [], "updatedCompletionEstimate": "2026-07-15T11:00:00Z", "evidenceIds": []}})


def message(n: int, content: str = "draft ready") -> Dict[str, Any]:
    return command(n, "message.post", {"messageId": f"urn:missionweaveprotocol:message:{n}", "content": content},
                   conversationId=CONVERSATION)


def policy(store: Any = None, identity: Any = None, clock: Any = None) -> OfflineExecutionPolicy:
    return OfflineExecutionPolicy(store if store is not None else InMemoryOutbox(), identity or Identity(), WORK_ITEM,
                                  disconnected_at=T0, limits=LIMITS, clock=clock)


def verify(document: Dict[str, Any]) -> None:
    registry = reg.RegistryBuilder("urn:example:org").add_key(
        KEY.key_id, ("agent", AGENT), KEY, "2026-01-01T00:00:00Z").build()
    codec = sd.SignedDocumentCodec()
    codec.verify(SignedDocumentKind.COMMAND, canonical_bytes(document), reg.AgentRegistryKeyResolver(registry))


def test_reference_names_and_kinds() -> None:
    assert OFFLINE_EXECUTION_EXTENSION == "urn:missionweaveprotocol:extension:bounded-offline-execution"
    assert OFFLINE_EXECUTION_EXTENSION_VERSION == "0.1.0"
    assert OFFLINE_REVERSIBLE_KINDS == {"message.post", "work.checkpoint"}
    assert issubclass(OfflinePolicyError, ValueError)
    assert issubclass(OfflineProgressBinding, pydantic.BaseModel)
    assert dataclasses.is_dataclass(OfflineLimits)


@pytest.mark.parametrize("identity", [Identity(), ReferenceIdentity()], ids=["signing-key", "reference"])
def test_reversible_progress_is_bound_signed_and_queued(identity: Any) -> None:
    store = DictStore()
    p = policy(store, identity)
    assert p.grace_deadline == T0 + timedelta(minutes=5)
    signed = p.buffer(checkpoint(), usage=ResourceUsage(model_tokens=2, compute_seconds=1), now=T0 + timedelta(seconds=30))
    assert isinstance(signed, Command)
    assert signed.signed_bytes is not None
    wire = parse_json(signed.signed_bytes)
    verify(wire)
    envelope = wire["extensions"][OFFLINE_EXECUTION_EXTENSION]
    assert envelope["critical"] is True and envelope["version"] == "0.1.0"
    binding = OfflineProgressBinding.from_command(signed)
    assert binding is not None
    assert (binding.agent_id, binding.execution_lease_id, binding.session_epoch, binding.ownership_epoch) == (AGENT, LEASE, 3, 2)
    assert binding.buffered_at == T0 + timedelta(seconds=30)
    assert binding.resource_usage_delta == ResourceUsage(model_tokens=2, compute_seconds=1)
    second = p.buffer(message(2), now=T0 + timedelta(seconds=40))
    verify(parse_json(second.wire_bytes()))
    assert list(store.rows) == [wire["actionId"], second.action_id]
    assert len(p.buffered_actions) == 2
    assert p.cumulative_usage == ResourceUsage(model_tokens=2, compute_seconds=1)


def test_buffering_is_idempotent_and_collisions_refused() -> None:
    p = policy(clock=lambda: T0 + timedelta(seconds=5))
    first = p.buffer(checkpoint(), usage={"model_tokens": 1})
    assert p.buffer(checkpoint(), usage={"model_tokens": 1}).wire_bytes() == first.wire_bytes()
    assert p.cumulative_usage == ResourceUsage(model_tokens=1)
    other = checkpoint()
    other["issuedAt"] = "2026-07-15T09:31:00Z"
    with pytest.raises(OfflinePolicyError) as error:
        p.buffer(other)
    assert (error.value.code, error.value.kind) == ("ACTION_ID_COLLISION", "action_id_collision")
    assert error.value.reason == "action_id_collision" and error.value.action_id


def test_grace_window_is_rechecked_each_time() -> None:
    p = policy()
    p.buffer(checkpoint(), now=T0 + timedelta(minutes=5))
    with pytest.raises(OfflinePolicyError) as error:
        p.buffer(message(2), now=T0 + timedelta(minutes=5, seconds=1))
    assert (error.value.code, error.value.kind) == ("WORK_LEASE_EXPIRED", "outside_grace")


def test_action_and_usage_bounds_are_atomic() -> None:
    store = InMemoryOutbox()
    p = policy(store)
    with pytest.raises(OfflinePolicyError) as error:
        p.buffer(checkpoint(), usage=ResourceUsage(model_tokens=5), now=T0)
    assert (error.value.code, error.value.kind) == ("BUDGET_EXCEEDED", "usage_exceeded")
    assert store.pending_actions(AGENT) == [] and p.cumulative_usage.is_zero()
    p.buffer(checkpoint(), usage=ResourceUsage(model_tokens=4), now=T0)
    p.buffer(message(2), now=T0)
    with pytest.raises(OfflinePolicyError) as error:
        p.buffer(message(3), now=T0)
    assert (error.value.code, error.value.kind) == ("RATE_LIMITED", "too_many_actions")
    assert len(store.pending_actions(AGENT)) == 2


@pytest.mark.parametrize("kind", ["work.submit", "work.start", "work.accept_offer", "artifact.publish"])
def test_irreversible_and_new_work_is_refused(kind: str) -> None:
    with pytest.raises(OfflinePolicyError) as error:
        policy().buffer(command(1, kind, {}), now=T0)
    assert (error.value.code, error.value.kind) == ("INVALID_COMMAND", "not_reversible")


def test_external_usage_and_secrets_are_refused() -> None:
    p = policy()
    with pytest.raises(OfflinePolicyError, match="external"):
        p.buffer(checkpoint(), usage=ResourceUsage(external_actions=1), now=T0)
    secret = message(2)
    secret["payload"]["attachments"] = [{"accessToken": "t"}]
    with pytest.raises(OfflinePolicyError) as error:
        p.buffer(secret, now=T0)
    assert error.value.kind == "external_effect"


@pytest.mark.parametrize("member,value", [
    ("workItemId", "urn:missionweaveprotocol:work:other"),
    ("groupId", "urn:missionweaveprotocol:group:other"),
    ("conversationId", "urn:missionweaveprotocol:conversation:other"),
    ("sessionEpoch", 4),
])
def test_commands_outside_the_assignment_are_refused(member: str, value: Any) -> None:
    document = message(1)
    document[member] = value
    with pytest.raises(OfflinePolicyError) as error:
        policy().buffer(document, now=T0)
    assert (error.value.code, error.value.kind) == ("INVALID_COMMAND", "outside_assignment")


def test_the_work_item_must_be_active_owned_and_leased() -> None:
    for change, code in (({"status": "queued"}, "INVALID_STATE_TRANSITION"),
                         ({"assignee_id": "urn:missionweaveprotocol:agent:other"}, "WORK_STALE_OWNERSHIP"),
                         ({"execution_lease_id": None}, "INVALID_STATE_TRANSITION")):
        with pytest.raises(OfflinePolicyError) as error:
            OfflineExecutionPolicy(InMemoryOutbox(), Identity(), {**WORK_ITEM, **change}, disconnected_at=T0, limits=LIMITS)
        assert error.value.code == code
    with pytest.raises(OfflinePolicyError) as error:
        OfflineExecutionPolicy(InMemoryOutbox(), Identity(), WORK_ITEM, disconnected_at=T0 + timedelta(minutes=10), limits=LIMITS)
    assert error.value.kind == "lease_closed"
    with pytest.raises(TypeError):
        OfflineExecutionPolicy(object(), Identity(), WORK_ITEM, disconnected_at=T0, limits=LIMITS)


def test_limits_are_validated() -> None:
    with pytest.raises(OfflinePolicyError):
        OfflineLimits(timedelta(0), 1, ResourceUsage())
    with pytest.raises(OfflinePolicyError):
        OfflineLimits(timedelta(seconds=1), 0, ResourceUsage())


def test_binding_model_enforces_the_ordered_window() -> None:
    good = dict(agent_id=AGENT, group_id=GROUP, work_item_id=ITEM, session_epoch=3, ownership_epoch=2,
                execution_lease_id=LEASE, disconnected_at=T0, buffered_at=T0 + timedelta(seconds=1),
                grace_deadline=T0 + timedelta(seconds=2), execution_lease_expires_at=T0 + timedelta(seconds=3))
    binding = OfflineProgressBinding(**good)
    assert binding.to_wire()["resourceUsageDelta"]["toolCalls"] == 0
    assert OfflineProgressBinding.model_validate(binding.to_wire()) == binding
    with pytest.raises(pydantic.ValidationError):
        OfflineProgressBinding(**{**good, "buffered_at": T0 - timedelta(seconds=1)})
    with pytest.raises(pydantic.ValidationError):
        OfflineProgressBinding(**{**good, "resource_usage_delta": {"external_actions": 1}})


def test_rebase_keeps_the_binding_and_re_signs() -> None:
    p = policy()
    buffered = p.buffer(checkpoint(), usage=ResourceUsage(model_tokens=1), now=T0 + timedelta(seconds=30))
    later = T0 + timedelta(minutes=15)
    rebased = rebase_offline_command(buffered, Identity(), session_epoch=4, membership_epoch=2, issued_at=later,
                                     execution_lease_id="urn:missionweaveprotocol:lease:exec-2")
    assert isinstance(rebased, Command)
    wire = offline_command_to_wire(buffered, ReferenceIdentity(), session_epoch=4, membership_epoch=2, issued_at=later,
                                   execution_lease_id="urn:missionweaveprotocol:lease:exec-2", key_id=KEY.key_id)
    assert rebased.signed_bytes is not None
    assert wire == parse_json(rebased.signed_bytes)
    verify(wire)
    assert (wire["sessionEpoch"], wire["membershipEpoch"]) == (4, 2)
    assert wire["payload"]["leaseId"] == "urn:missionweaveprotocol:lease:exec-2"
    assert OfflineProgressBinding.from_command(wire) == OfflineProgressBinding.from_command(buffered)
    with pytest.raises(OfflinePolicyError) as error:
        rebase_offline_command(checkpoint(2), Identity(), session_epoch=4, membership_epoch=2, issued_at=later)
    assert error.value.kind == "invalid_binding"
    submit = parse_json(buffered.wire_bytes())
    submit["kind"] = "work.submit"
    with pytest.raises(OfflinePolicyError) as error:
        rebase_offline_command(submit, Identity(), session_epoch=4, membership_epoch=2, issued_at=later)
    assert error.value.kind == "not_reversible"
    with pytest.raises(OfflinePolicyError):
        rebase_offline_command(buffered, Identity(), session_epoch=2, membership_epoch=2, issued_at=later)


# ---- end to end: buffered offline, reconciled by the authoritative Core (§11.5) ----------


def test_the_core_reconciles_rebased_offline_progress_before_applying_it() -> None:
    _offline_flow(None)


def test_the_cores_own_offline_limits_bound_what_it_reconciles() -> None:
    # The Core's bound (1 tool call per historical lease) is tighter than the contract's
    # budget: the buffered checkpoint (2 tool calls) is refused, nothing applied.
    _offline_flow(OfflineLimits(timedelta(minutes=5), 4, ResourceUsage(tool_calls=1)))


@pytest.mark.parametrize(
    "limits", [(timedelta(0), 1, ResourceUsage()), (timedelta(minutes=1), 0, ResourceUsage())]
)
def test_bad_core_offline_limits_are_refused_by_the_core(limits: Any) -> None:
    bad = type("Limits", (), dict(zip(("max_disconnect_grace", "max_actions", "max_usage"), limits)))()
    with pytest.raises(OfflinePolicyError):
        cs.make_core(sessions=False, offline_limits=bad)
    with pytest.raises(TypeError):
        cs.make_core(sessions=False, offline_limits=object())


def _offline_flow(core_limits: Any) -> None:
    class Worker:
        agent_id = cs.WORKER
        signing_key = cs.KEYS[cs.WORKER]

    async def main() -> None:
        clock = cs.Clock()
        core = cs.make_core(clock, offline_limits=core_limits)

        async def query(kind: QueryKind, entity: str) -> Any:
            return (await core.query(Query(kind=kind, entity_id=entity))).value

        for raw in (cs.create(), cs.authorize(), cs.offer(), cs.accept()):
            await core.perform(raw)
        item = await query(QueryKind.WORK_ITEM, cs.W1)
        epoch = item["owner"]["ownershipEpoch"]
        await core.perform(cs.by_worker("work.start", cs.W1, epoch, item["owner"]["ownershipLeaseId"]))
        lease = await query(QueryKind.EXECUTION_LEASE, cs.W1)
        work_item = {
            "id": cs.W1, "group_id": cs.GROUP, "conversation_id": cs.CONVERSATION, "status": "active",
            "assignee_id": cs.WORKER, "ownership_epoch": epoch, "execution_lease_id": lease["leaseId"],
            "execution_lease_expires_at": datetime.fromisoformat(lease["expiresAt"].replace("Z", "+00:00")),
            "session_epoch": 1,
        }
        outbox = InMemoryOutbox()
        offline = OfflineExecutionPolicy(outbox, Worker(), work_item, disconnected_at=cs.later(10),
                                         limits=OfflineLimits(timedelta(minutes=1), 2, ResourceUsage(tool_calls=20)))
        checkpoint_payload = {
            "workItemId": cs.W1, "ownershipEpoch": epoch, "leaseId": lease["leaseId"],
            "checkpoint": {"currentPhase": "draft", "completedMilestones": [], "nextCheckpoint": "review",
                           "blockers": [], "updatedCompletionEstimate": "2026-07-15T11:00:00Z", "evidenceIds": []}}
        fits = offline.buffer(cs.unsigned("work.checkpoint", cs.WORKER, checkpoint_payload),
                              usage=ResourceUsage(tool_calls=2), now=cs.later(20))
        too_much = offline.buffer(cs.unsigned("work.checkpoint", cs.WORKER, checkpoint_payload),
                                  usage=ResourceUsage(tool_calls=11), now=cs.later(25))
        assert len(outbox.pending_actions(cs.WORKER)) == 2

        # Reconnect: a new session revokes the lease; the Worker re-starts under a new one.
        clock.now = cs.later(40)
        # (Through the native object: models.EventKind does not list the engine's
        # `…work_execution_lease_revoked` Event yet.)
        opened, _, _ = core._native.perform(cs.session_open(cs.WORKER, clock()), int(clock().timestamp() * 1000))
        revoked = [e for e in map(parse_json, opened) if e["kind"].endswith("work_execution_lease_revoked")]
        assert len(revoked) == 1
        replacement = revoked[0]["payload"]["leaseId"]
        await core.perform(cs.sign(cs.WORKER, cs.unsigned(
            "work.start", cs.WORKER,
            {"workItemId": cs.W1, "ownershipEpoch": epoch, "leaseId": replacement},
            sessionEpoch=2, issued_at=clock())))
        new_lease = (await query(QueryKind.EXECUTION_LEASE, cs.W1))["leaseId"]

        def rebased(command: Command) -> bytes:
            document = offline_command_to_wire(command, Worker(), session_epoch=2, membership_epoch=1,
                                               issued_at=clock(), execution_lease_id=new_lease)
            return canonical_bytes(document)

        # Over the contract's 10-tool-call budget: nothing is charged, nothing applied.
        with pytest.raises(MissionWeaveProtocolError) as refused:
            await core.perform(rebased(too_much))
        assert refused.value.wire_code == "BUDGET_EXCEEDED"
        assert (await query(QueryKind.WORK_ITEM, cs.W1))["state"] == "active"
        if core_limits is not None:
            # Over the Core's own offline usage bound: refused the same way.
            with pytest.raises(MissionWeaveProtocolError) as refused:
                await core.perform(rebased(fits))
            assert refused.value.wire_code == "BUDGET_EXCEEDED"
            budget = await query(QueryKind.BUDGET_REMAINING, cs.W1)
            assert budget["remaining"]["toolCalls"] == 10
            return
        events = await core.perform_all(rebased(fits))
        assert cs.kinds(events) == ["ext.missionweaveprotocol.core.resource_usage_recorded", "work.checkpointed"]
        budget = await query(QueryKind.BUDGET_REMAINING, cs.W1)
        assert budget["remaining"]["toolCalls"] == 8

    asyncio.run(main())
