"""Issue 25 "Mismatches seen once the names exist": the reference's call shapes that work as
written here (each with a positive and a negative case). The deliberate differences that remain
are listed in ``docs/switching.md``."""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from pathlib import Path

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
from missionweaveprotocol.errors import SchemaValidationError
from missionweaveprotocol.models import ActorType, Event, EventKind, Principal
from missionweaveprotocol.scheduler import CheckpointRef, Scheduler, WorkOffer
from missionweaveprotocol.signed_documents import SignedDocumentCodec
from missionweaveprotocol.store import InMemoryStore

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
    raw = SignedDocumentCodec().sign("command", document, core.authority_key)
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

    signed = SignedDocumentCodec().sign("command", document, AUTHORITY_KEY)
    created = signed.signature.created_at
    assert isinstance(created, str) and created == "2026-07-15T08:00:05Z"
    assert signed.signature.created_at_time.text == created
    assert signed.signature.created_at_time.instant.epoch_second == int(AT.timestamp())


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


def test_capability_requirement_equality_is_the_cores_reading() -> None:
    from missionweaveprotocol.models import CapabilityRequirement

    one = CapabilityRequirement(id="text.summarise", minimum_version=1)
    assert one == CapabilityRequirement(id="text.summarise", minimum_version="1.0.0")
    assert hash(one) == hash(CapabilityRequirement(id="text.summarise", minimum_version="1.0.0"))
    assert one != CapabilityRequirement(id="text.summarise", minimum_version=2)
    assert one != CapabilityRequirement(id="text.other", minimum_version=1)
