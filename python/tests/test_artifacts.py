"""``missionweaveprotocol.artifacts``: content-addressed bytes under ``<root>/<hex[:2]>/<hex[2:]>``,
the manifest as the protocol's signed Artifact document (six-stage verifier, Artifact profile),
and a manifest from ``put`` accepted by ``Core.perform`` of ``artifact.publish``. Each rule has a
positive and a negative case."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any, Dict

import pytest

from core_support import (
    COORDINATOR,
    GROUP,
    KEYS,
    MISSION,
    NOW,
    REGISTRY,
    W1,
    W2,
    WORKER,
    accept,
    authorize,
    by_worker,
    create,
    make_core,
    offer,
    signed,
)
from missionweaveprotocol.artifacts import (
    ArtifactError,
    ArtifactManifest,
    LocalArtifactStore,
    ModelVersion,
    content_hash,
)
from missionweaveprotocol.core import Core, MissionWeaveProtocolError
from missionweaveprotocol.errors import MissionWeaveError
from missionweaveprotocol.models import Query, QueryKind

CONTENT = b'{"total": 42}\n'


def put(store: LocalArtifactStore, content: bytes = CONTENT, **overrides: Any) -> ArtifactManifest:
    arguments: Dict[str, Any] = dict(
        key=KEYS[WORKER],
        producer=WORKER,
        agent_card_version=1,
        capability="text.summarise",
        capability_version="1.2.0",
        mission_id=MISSION,
        group_id=GROUP,
        work_item_id=W1,
        media_type="application/json",
        classification="internal",
        schema_uri="https://example.org/report.json",
        tool_versions={"ledger-tool": "2.0"},
        model_versions=[("acme", "m", "1")],
        created_at=NOW,
    )
    arguments.update(overrides)
    return store.put(content, **arguments)


def test_artifact_error_is_a_value_error() -> None:
    assert issubclass(ArtifactError, ValueError)
    assert issubclass(ArtifactError, MissionWeaveError)


def test_content_hash_is_sha256() -> None:
    assert content_hash(CONTENT) == "sha256:" + hashlib.sha256(CONTENT).hexdigest()
    assert content_hash(b"a") != content_hash(b"b")


def test_put_get_round_trip_and_layout(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path)
    manifest = put(store)
    digest = hashlib.sha256(CONTENT).hexdigest()
    assert manifest.content_hash == f"sha256:{digest}"
    assert manifest.size_bytes == len(CONTENT)
    assert manifest.producer.agent_id == WORKER
    assert manifest.tool_versions[0].name == "ledger-tool"
    assert manifest.model_versions == (ModelVersion(provider="acme", model="m", version="1"),)
    assert manifest.uri.startswith("ni:///sha-256;")
    path = tmp_path / digest[:2] / digest[2:]
    assert store.path_of(manifest.content_hash) == path
    assert path.read_bytes() == CONTENT
    assert sorted(p.name for p in path.parent.iterdir()) == [digest[2:]]
    assert store.get(manifest) == CONTENT
    assert store.get(manifest.to_wire()) == CONTENT
    # Same bytes again: kept; the same WorkItem names the same Artifact.
    again = put(store)
    assert again.artifact_id == manifest.artifact_id
    assert put(store, work_item_id=W2).artifact_id != manifest.artifact_id
    # No inline content: the manifest names the bytes, never holds them.
    assert "total" not in manifest.signed_bytes.decode()


def test_tampered_truncated_and_missing_bytes_raise(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path)
    manifest = put(store)
    path = store.path_of(manifest.content_hash)
    path.write_bytes(CONTENT.replace(b"42", b"43"))
    with pytest.raises(ArtifactError) as caught:
        store.get(manifest)
    assert caught.value.reason == "hash_mismatch"
    assert caught.value.code == "PROTOCOL_VIOLATION"
    assert caught.value.content_hash == manifest.content_hash
    assert not caught.value.retryable
    path.write_bytes(b"short")
    with pytest.raises(ArtifactError) as caught:
        store.get(manifest)
    assert caught.value.reason == "size_mismatch"
    assert caught.value.fields["actual_size"] == 5
    path.unlink()
    with pytest.raises(ArtifactError) as caught:
        store.get(manifest)
    assert caught.value.reason == "content_missing"
    with pytest.raises(ArtifactError) as caught:
        store.get({**manifest.to_wire(), "contentHash": "sha256:../../etc"})
    assert caught.value.reason == "unsupported_hash"


def test_put_never_overwrites_other_bytes(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path)
    path = store.path_of(content_hash(CONTENT))
    path.parent.mkdir(parents=True)
    path.write_bytes(b"planted")
    with pytest.raises(ArtifactError) as caught:
        put(store)
    assert caught.value.reason == "stored_bytes_conflict"
    assert path.read_bytes() == b"planted"
    path.write_bytes(CONTENT)
    assert store.get(put(store)) == CONTENT


def test_refused_metadata_stores_nothing(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    with pytest.raises(ArtifactError) as caught:
        put(store, media_type="not a media type")
    assert caught.value.reason == "unsignable_manifest"
    assert caught.value.code == "SCHEMA_VALIDATION_FAILED"
    assert caught.value.stage == "schema"
    with pytest.raises(ArtifactError):
        put(store, classification="secret")
    assert not (tmp_path / "store").exists()


def test_manifest_verifies_with_the_registry(tmp_path: Path) -> None:
    manifest = put(LocalArtifactStore(tmp_path))
    verified = manifest.verify(REGISTRY)
    assert verified.document["contentHash"] == manifest.content_hash
    assert verified.resolved_key.principal.id == WORKER
    # The wire round trip keeps the exact signed bytes.
    again = ArtifactManifest.from_wire(manifest.signed_bytes)
    assert again == manifest
    assert again.signed_bytes == manifest.signed_bytes
    assert b"signature" not in manifest.signing_bytes()
    manifest.check_content(CONTENT)
    with pytest.raises(ArtifactError):
        manifest.check_content(CONTENT + b" ")


def test_from_wire_refuses_what_is_not_a_manifest(tmp_path: Path) -> None:
    document = put(LocalArtifactStore(tmp_path)).to_wire()
    assert ArtifactManifest.from_wire(json.dumps(document).encode()).content_hash == document["contentHash"]
    for bad in (b"[]", json.dumps({**document, "inlineContent": "e30="}).encode(),
                json.dumps({k: v for k, v in document.items() if k != "signature"}).encode()):
        with pytest.raises(ArtifactError) as caught:
            ArtifactManifest.from_wire(bad)
        assert caught.value.reason == "invalid_metadata"


def test_forged_or_tampered_manifest_is_rejected(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path)
    # Signed with the Coordinator's key but naming the Worker as producer.
    forged = put(store, key=KEYS[COORDINATOR])
    with pytest.raises(ArtifactError) as caught:
        forged.verify(REGISTRY)
    assert caught.value.reason == "manifest_rejected"
    assert caught.value.code == "AUTH_INVALID_SIGNATURE"
    # A member changed after signing.
    document = put(store).to_wire()
    document["classification"] = "public"
    tampered = ArtifactManifest.from_wire(json.dumps(document).encode())
    with pytest.raises(ArtifactError) as caught:
        tampered.verify(REGISTRY)
    assert caught.value.code == "AUTH_INVALID_SIGNATURE"


async def _active_w1(core: Core) -> tuple[int, str]:
    for raw in (create(), authorize(), offer(), accept()):
        await core.perform(raw)
    item = (await core.query(Query(kind=QueryKind.WORK_ITEM, entity_id=W1))).value
    epoch, lease = item["owner"]["ownershipEpoch"], item["owner"]["ownershipLeaseId"]
    await core.perform(by_worker("work.start", W1, epoch, lease))
    execution = (await core.query(Query(kind=QueryKind.EXECUTION_LEASE, entity_id=W1))).value
    return epoch, execution["leaseId"]


def test_manifest_from_put_is_accepted_by_artifact_publish(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path)

    async def scenario() -> None:
        core = make_core()
        epoch, lease = await _active_w1(core)
        manifest = put(store)
        event = await core.perform(
            signed("artifact.publish", WORKER,
                   {"manifest": manifest.to_wire(), "ownershipEpoch": epoch, "leaseId": lease})
        )
        assert event.kind == "artifact.published"
        published = ArtifactManifest.model_validate(event.payload["artifact"])
        assert published.signed_bytes == manifest.signed_bytes
        assert store.get(published) == CONTENT
        # Negative: a manifest signed with another Agent's key is refused by the Core.
        forged = put(store, content=b"other", key=KEYS[COORDINATOR])
        with pytest.raises(MissionWeaveProtocolError) as caught:
            await core.perform(
                signed("artifact.publish", WORKER,
                       {"manifest": forged.to_wire(), "ownershipEpoch": epoch, "leaseId": lease})
            )
        assert caught.value.wire_code == "AUTH_INVALID_SIGNATURE"

    asyncio.run(scenario())
