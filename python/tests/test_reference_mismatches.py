"""Issue 25 "Mismatches seen once the names exist": the reference's call shapes that work as
written here (each with a positive and a negative case). The deliberate differences that remain
are listed in ``docs/switching.md``."""

from __future__ import annotations

import asyncio
import copy
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

import jsonschema
import pytest

from core_support import AUTHORITY, GROUP, KEYS, MISSION, NOW, W1, WORKER, session_open
from missionweaveprotocol.artifacts import ArtifactError, LocalArtifactStore
from missionweaveprotocol.auth import AgentIdentity
from missionweaveprotocol.conformance import SchemaCatalog
from missionweaveprotocol.core import (
    DEFAULT_AUTHORITY,
    DEFAULT_AUTHORITY_KEY_ID,
    AuthorizationDenied,
    Core,
)
from missionweaveprotocol.crypto import SigningKey
from missionweaveprotocol.errors import InvalidInputError, SchemaValidationError
from missionweaveprotocol.models import ActorType, Event, EventKind, Principal
from missionweaveprotocol.scheduler import (
    CheckpointRef,
    Dispatch,
    Preempt,
    Scheduler,
    SchedulerError,
    SchedulerPolicy,
    WorkOffer,
    WorkState,
    WorkTransition,
)
from missionweaveprotocol.signed_documents import SignedDocumentCodec
from missionweaveprotocol.store import InMemoryStore
from missionweaveprotocol.signed_documents import SignedDocumentKind

AT = datetime(2026, 7, 15, 8, 0, 5, tzinfo=timezone.utc)


def test_core_as_the_reference_constructs_it() -> None:
    core = Core(InMemoryStore(), clock=None, cooperation_limits=None,
                snapshot_authority_key_id=None, snapshot_authority_public_key=None)
    assert core.authority == Principal.service(DEFAULT_AUTHORITY)
    assert core.authority_key.key_id == DEFAULT_AUTHORITY_KEY_ID
    # The default Registry binds only the Group Authority: its own bootstrap verifies ...
    document = {
        "protocolVersion": "0.1", "actionId": "urn:missionweaveprotocol:action:d1",
        "actor": {"type": "service", "id": DEFAULT_AUTHORITY},
        "kind": "ext.missionweaveprotocol.identity.session_open",
        "correlationId": "urn:missionweaveprotocol:correlation:1",
        "issuedAt": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "payload": {"agentId": "urn:missionweaveprotocol:agent:a"},
    }
    raw = SignedDocumentCodec().sign(SignedDocumentKind.COMMAND, document, core.authority_key)
    event = asyncio.run(core.perform(raw.canonical_document_bytes))
    assert event.accepted_by == core.authority
    # ... and any other signer is refused (no key of it is registered).
    with pytest.raises(AuthorizationDenied) as raised:
        asyncio.run(core.perform(session_open(WORKER)))
    assert raised.value.wire_code == "AUTH_INVALID_SIGNATURE"


def test_core_snapshot_pair_must_be_the_default_authority_key() -> None:
    with pytest.raises(ValueError):
        Core(InMemoryStore(), snapshot_authority_key_id="urn:x:key:other",
             snapshot_authority_public_key=SigningKey.generate("urn:x:key:other").public_key)


def test_event_with_the_reference_fields() -> None:
    event = Event(id="urn:uuid:1", kind=EventKind.MISSION_CREATED, group_id=GROUP, sequence=1,
                  actor=Principal.human("urn:x:human:o"), action_id="urn:x:action:1",
                  command_hash="sha256:" + "0" * 64, payload={}, occurred_at=AT)
    assert event.action_id == "urn:x:action:1"
    assert event.cause.type == "command"
    assert event.correlation_id is None and event.accepted_by is None
    assert event.signature is None and event.signed_bytes == b""
    by_event = Event(id="urn:uuid:2", kind=EventKind.MISSION_CREATED,
                     actor=Principal.system(), caused_by_event_id="urn:uuid:1",
                     occurred_at=AT)
    assert by_event.cause.type == "event" and by_event.action_id is None
    with pytest.raises(ValueError):
        Event(id="urn:uuid:3", kind=EventKind.MISSION_CREATED, actor=Principal.system(),
              action_id="urn:x:action:1", cause={"type": "command", "id": "urn:x:action:2"},
              occurred_at=AT)
    with pytest.raises(ValueError):  # a cause is still required: no action, no event
        Event(id="urn:uuid:4", kind=EventKind.MISSION_CREATED, actor=Principal.system(),
              occurred_at=AT)
    assert ActorType("system") is ActorType.SERVICE


def test_artifact_store_put_with_identity(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path)
    identity = AgentIdentity(WORKER, KEYS[WORKER])
    arguments = dict(agent_card_version=1, capability="text.summarise",
                     capability_version="1.2.0", mission_id=MISSION, group_id=GROUP,
                     work_item_id=W1, media_type="application/json",
                     classification="internal", created_at=NOW)
    manifest = store.put(b"{}", identity=identity,
                         schema_uri="https://example.org/report.json", **arguments)
    assert manifest.producer.agent_id == WORKER
    assert store.get(manifest) == b"{}"
    with pytest.raises(ArtifactError):  # identity and key: ambiguous
        store.put(b"{}", identity=identity, key=KEYS[WORKER],
                  schema_uri="https://example.org/report.json", **arguments)
    with pytest.raises(ArtifactError) as raised:  # the Artifact schema requires schemaUri
        store.put(b"{}", identity=identity, **arguments)
    assert str(raised.value.code) == "SCHEMA_VALIDATION_FAILED"


def test_checkpoint_ref_with_the_reference_fields() -> None:
    ref = CheckpointRef("c1", work_id="w1", group_id="g", run_id="w1:1", created_at=AT)
    assert (ref.work_id, ref.group_id, ref.run_id, ref.created_at) == ("w1", "g", "w1:1", AT)
    assert ref.durable and ref.safe
    assert ref != CheckpointRef("c1")
    assert CheckpointRef("c1").work_id is None
    with pytest.raises(ValueError):
        CheckpointRef("c1", created_at=datetime(2026, 7, 15))  # naive


def test_scheduler_snapshot_records() -> None:
    scheduler = Scheduler()
    assert scheduler.admit(WorkOffer("w1", "g"), now=AT).accepted
    assert scheduler.admit(WorkOffer("w2", "g"), now=AT).accepted
    records = scheduler.snapshot().records
    assert isinstance(records, tuple) and len(records) == 2
    assert Scheduler().snapshot().records == ()


def test_schema_errors_are_jsonschema_validation_errors() -> None:
    with pytest.raises(jsonschema.ValidationError) as raised:
        SchemaCatalog().validate("command", {"protocolVersion": "0.1"})
    error = raised.value
    assert isinstance(error, SchemaValidationError)
    assert str(error.code) == "SCHEMA_VALIDATION_FAILED"
    assert error.message and error.validator == error.keyword
    # A valid instance raises nothing.
    SchemaCatalog().validate("common", {})


def test_authority_constant_is_a_service() -> None:
    assert Principal.system(AUTHORITY).type == ActorType.SERVICE


def test_signature_created_at_is_text() -> None:
    document = {
        "protocolVersion": "0.1", "actionId": "urn:missionweaveprotocol:action:t1",
        "actor": {"type": "service", "id": AUTHORITY},
        "kind": "ext.missionweaveprotocol.identity.session_open",
        "correlationId": "urn:missionweaveprotocol:correlation:1",
        "issuedAt": "2026-07-15T08:00:05Z", "payload": {"agentId": WORKER},
    }
    from core_support import AUTHORITY_KEY

    signed = SignedDocumentCodec().sign(SignedDocumentKind.COMMAND, document, AUTHORITY_KEY)
    created = signed.signature.created_at
    assert isinstance(created, str) and created == "2026-07-15T08:00:05Z"
    assert signed.signature.created_at_time.text == created
    assert signed.signature.created_at_time.instant.epoch_second == int(AT.timestamp())


def _signed_command() -> Any:
    from core_support import AUTHORITY_KEY

    document = {
        "protocolVersion": "0.1", "actionId": "urn:missionweaveprotocol:action:t2",
        "actor": {"type": "service", "id": AUTHORITY},
        "kind": "ext.missionweaveprotocol.identity.session_open",
        "correlationId": "urn:missionweaveprotocol:correlation:1",
        "issuedAt": "2026-07-15T08:00:05Z", "payload": {"agentId": WORKER},
        "extensions": {"urn:x:ext": {"version": "1.0.0", "critical": False, "data": [1, {"a": 2}]}},
    }
    return document, SignedDocumentCodec().sign(SignedDocumentKind.COMMAND, document, AUTHORITY_KEY)


def test_signed_documents_are_immutable() -> None:
    document, signed = _signed_command()
    frozen = signed.document
    assert isinstance(frozen, Mapping) and frozen["payload"] == {"agentId": WORKER}
    data = frozen["extensions"]["urn:x:ext"]["data"]
    for mutate in (lambda: frozen.__setitem__("kind", "x"), lambda: frozen.pop("kind"),
                   lambda: frozen.update(kind="x"), lambda: frozen["payload"].clear(),
                   lambda: data.append(3), lambda: data[1].__setitem__("a", 3),
                   lambda: data.sort(), lambda: frozen.__init__({"kind": "x"}),
                   lambda: data.__init__([9])):
        with pytest.raises(TypeError):
            mutate()
    assert signed.document == {**document, "signature": frozen["signature"]}
    # Still JSON, still copyable: a copy is what is edited.
    assert json.loads(json.dumps(frozen)) == frozen
    assert copy.deepcopy(frozen) is frozen
    editable = json.loads(json.dumps(frozen))
    editable["kind"] = "x"
    assert signed.document["kind"] == document["kind"]


def test_codec_kind_must_be_the_enum() -> None:
    document, signed = _signed_command()
    from core_support import AUTHORITY_KEY, REGISTRY

    del document["extensions"]
    for kind in ("command", None, 7):
        for call in (lambda: SignedDocumentCodec().sign(kind, document, AUTHORITY_KEY),
                     lambda: SignedDocumentCodec().verify(
                         kind, signed.canonical_document_bytes, REGISTRY)):
            with pytest.raises(TypeError) as refused:
                call()  # type: ignore[arg-type]
            assert isinstance(refused.value, InvalidInputError)
            assert refused.value.code == "PROTOCOL_VIOLATION"
    verified = SignedDocumentCodec().verify(
        SignedDocumentKind.COMMAND, signed.canonical_document_bytes, REGISTRY)
    assert verified.document == signed.document


def test_outbox_payload_is_an_object(tmp_path: Path) -> None:
    from missionweaveprotocol.local_store import LocalStoreError, SQLiteAgentStore

    store = SQLiteAgentStore(tmp_path / "agent.sqlite3")
    assert store.enqueue_action("urn:a:1", "act-1", {"kind": "message.post"}) is not False
    with pytest.raises(LocalStoreError) as raised:
        store.enqueue_action("urn:a:1", "act-2", (1, 2))  # type: ignore[arg-type]
    assert raised.value.reason == "invalid_argument"
    assert [a for a in store.pending_actions("urn:a:1")] == [{"kind": "message.post"}]
    store.close()


def test_host_integers_are_binary64_in_canonical_json() -> None:
    from missionweaveprotocol.canonical import canonical_json

    assert canonical_json({"n": 2**53 + 1}) == '{"n":9007199254740992}'
    assert canonical_json({"n": 10**30}) == '{"n":1e+30}'
    assert canonical_json({"n": 7}) == '{"n":7}'


def test_a_signed_documents_host_numbers_are_what_was_signed() -> None:
    # §6.4 stage 5 canonicalizes numbers as binary64 (as the reference's codec does): the
    # signed bytes carry 2^53 + 1 as 9007199254740992, and the document view is those bytes.
    from core_support import AUTHORITY_KEY

    document, _ = _signed_command()
    document["extensions"]["urn:x:ext"]["data"] = {"n": 2**53 + 1, "f": 1.0, "big": 10**30, "k": 7}
    signed = SignedDocumentCodec().sign(SignedDocumentKind.COMMAND, document, AUTHORITY_KEY)
    data = signed.document["extensions"]["urn:x:ext"]["data"]
    assert data == {"n": 2**53, "f": 1, "big": 1e30, "k": 7}
    assert type(data["f"]) is int and type(data["big"]) is float
    assert signed.document == json.loads(signed.canonical_document_bytes)
    assert b'"n":9007199254740992' in signed.canonical_signing_bytes
    # A number binary64 cannot hold is refused, not approximated to infinity.
    document["extensions"]["urn:x:ext"]["data"] = {"n": 10**400}
    with pytest.raises(Exception):
        SignedDocumentCodec().sign(SignedDocumentKind.COMMAND, document, AUTHORITY_KEY)


def test_capability_requirement_equality_is_the_cores_reading() -> None:
    from missionweaveprotocol.models import CapabilityRequirement

    one = CapabilityRequirement(id="text.summarise", minimum_version=1)
    assert one == CapabilityRequirement(id="text.summarise", minimum_version="1.0.0")
    assert hash(one) == hash(CapabilityRequirement(id="text.summarise", minimum_version="1.0.0"))
    assert one != CapabilityRequirement(id="text.summarise", minimum_version=2)
    assert one != CapabilityRequirement(id="text.other", minimum_version=1)


def _running_low_and_waiting_high() -> tuple[Scheduler, Dispatch]:
    s = Scheduler(SchedulerPolicy(capacity_slots=1, preemption_margin_points=1))
    s.admit(WorkOffer("urn:w:low", "urn:g:1"), now=AT)
    (run,) = s.schedule(now=AT)
    assert isinstance(run, Dispatch)
    s.admit(WorkOffer("urn:w:high", "urn:g:1", organizational_priority=50), now=AT)
    return s, run


def test_preemption_is_requested_before_the_checkpoint_as_spec_11_3_orders() -> None:
    # §11.3: 1. the Scheduler requests preemption; 2. the Worker reaches a safe checkpoint;
    # 3.-5. it emits it, the slot is released, the item is requeued. The reference waits for a
    # checkpoint before step 1 (work that only checkpoints when asked is never preempted there).
    s, run = _running_low_and_waiting_high()
    (preempt,) = [a for a in s.schedule(now=AT) if isinstance(a, Preempt)]
    assert (preempt.work_id, preempt.run_id, preempt.checkpoint) == ("urn:w:low", run.run_id, None)
    # The request takes nothing: the slot stays held until a durable, safe checkpoint.
    assert s.state("urn:w:low") is WorkState.PREEMPTING and s.used_slots == 1
    assert not [a for a in s.schedule(now=AT) if isinstance(a, Dispatch)]
    unsafe = CheckpointRef("urn:c:1", work_id="urn:w:low", group_id="urn:g:1",
                           run_id=run.run_id, created_at=AT, safe=False)
    with pytest.raises(SchedulerError) as refused:
        s.apply(WorkTransition("urn:w:low", "preempted", run_id=run.run_id, checkpoint=unsafe), now=AT)
    assert refused.value.code == "INVALID_COMMAND"
    assert s.state("urn:w:low") is WorkState.PREEMPTING and s.used_slots == 1
    safe = CheckpointRef("urn:c:2", work_id="urn:w:low", group_id="urn:g:1",
                         run_id=run.run_id, created_at=AT)
    s.apply(WorkTransition("urn:w:low", "preempted", run_id=run.run_id, checkpoint=safe), now=AT)
    assert s.state("urn:w:low") is WorkState.READY
    (high,) = [a for a in s.schedule(now=AT) if isinstance(a, Dispatch)]
    assert high.work_id == "urn:w:high"


def test_a_preempt_names_the_checkpoint_the_run_already_holds() -> None:
    s = Scheduler(SchedulerPolicy(capacity_slots=1, preemption_margin_points=1))
    s.admit(WorkOffer("urn:w:low", "urn:g:1"), now=AT)
    (run,) = s.schedule(now=AT)
    assert isinstance(run, Dispatch)
    saved = CheckpointRef("urn:c:1", work_id="urn:w:low", group_id="urn:g:1",
                          run_id=run.run_id, created_at=AT)
    s.apply(WorkTransition("urn:w:low", "checkpoint_saved", run_id=run.run_id, checkpoint=saved),
            now=AT)
    s.admit(WorkOffer("urn:w:high", "urn:g:1", organizational_priority=50), now=AT)
    (preempt,) = [a for a in s.schedule(now=AT) if isinstance(a, Preempt)]
    assert preempt.checkpoint is not None and preempt.checkpoint.checkpoint_id == "urn:c:1"


@pytest.mark.parametrize("checkpoint", ["none", "unsafe", "not-durable"])
def test_blocked_without_a_durable_safe_checkpoint_is_refused(checkpoint: str) -> None:
    # §11.4: "When blocked, a Worker MUST checkpoint, emit work.blocked ..., and release its
    # execution slot." A report without one is refused and changes nothing.
    s, run = _running_low_and_waiting_high()
    ref = None if checkpoint == "none" else CheckpointRef(
        "urn:c:1", work_id="urn:w:low", group_id="urn:g:1", run_id=run.run_id, created_at=AT,
        safe=checkpoint != "unsafe", durable=checkpoint != "not-durable")
    # Without any checkpoint the report cannot even be made (InvalidInputError); with an
    # unsafe or non-durable one the Scheduler refuses it (SchedulerError). Both INVALID_COMMAND.
    with pytest.raises((SchedulerError, InvalidInputError)) as refused:
        s.apply(WorkTransition("urn:w:low", "blocked", run_id=run.run_id, checkpoint=ref,
                               reason="needs credentials"), now=AT)
    expected = "PROTOCOL_VIOLATION" if checkpoint == "none" else "INVALID_COMMAND"
    assert refused.value.code == expected
    assert s.state("urn:w:low") is WorkState.RUNNING and s.used_slots == 1


def test_blocked_with_a_checkpoint_releases_the_slot() -> None:
    s, run = _running_low_and_waiting_high()
    ref = CheckpointRef("urn:c:1", work_id="urn:w:low", group_id="urn:g:1", run_id=run.run_id,
                        created_at=AT)
    s.apply(WorkTransition("urn:w:low", "blocked", run_id=run.run_id, checkpoint=ref,
                           reason="needs credentials"), now=AT)
    assert s.state("urn:w:low") is WorkState.BLOCKED and s.used_slots == 0


def test_presence_staleness_is_the_cores_rule() -> None:
    from datetime import timedelta

    from missionweaveprotocol import _native
    from missionweaveprotocol.registry import (
        AgentCard, AgentRegistry, PresenceRecord, RegistryError)

    organization = AgentIdentity.generate("agent://acme/organization")
    card = AgentCard(agent_id="agent://acme/worker", owner="acme", version="1.0.0",
                     public_key=organization.public_key, capabilities=(),
                     issued_at=AT).signed_by(organization)
    ttl = timedelta(seconds=10)
    registry = AgentRegistry(organization.public_key, presence_ttl=ttl)
    registry.register(card)
    record = PresenceRecord(agent_id=card.agent_id, status="busy", available_slots=1,
                            heartbeat_at=AT)
    registry.update_presence(record)
    # Exactly the TTL ago is fresh; one microsecond more reads offline with no slots (§6.2).
    assert registry.presence(card.agent_id, now=AT + ttl) == record
    stale = registry.presence(card.agent_id, now=AT + ttl + timedelta(microseconds=1))
    assert stale is not None and (stale.status, stale.available_slots) == ("offline", 0)
    assert registry.presence(card.agent_id, now=AT - timedelta(hours=1)) == record  # skew
    assert _native.presence_is_stale(AT, AT + ttl + timedelta(microseconds=1), ttl)
    for bad in (timedelta(0), timedelta(microseconds=-1)):
        with pytest.raises(RegistryError) as refused:
            AgentRegistry(organization.public_key, presence_ttl=bad)
        assert "presence_ttl must be positive" in str(refused.value)
    with pytest.raises(InvalidInputError):
        _native.presence_is_stale(AT, AT, 10)  # type: ignore[arg-type]
