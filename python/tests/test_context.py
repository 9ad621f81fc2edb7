"""``missionweaveprotocol.context`` (§13.3, §7.4): Context Packages published from a real
Core's Events verify under the normative codec and install into their Group only; knowledge
publications carry the package's provenance; the archival service's Group Snapshot is accepted
by the Core for ``group_archive``. Each rule with a positive and a negative case; the rules are
the core's (``authority::context``)."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import List

import pytest

from core_support import (
    AUTHORITY,
    AUTHORITY_KEY,
    COORDINATOR,
    GROUP,
    KEYS,
    MISSION,
    NOW,
    OWNER,
    REGISTRY,
    SERVICE,
    create,
    make_core,
    signed,
)
from missionweaveprotocol.agent import AgentRuntime
from missionweaveprotocol.canonical import canonical_bytes
from missionweaveprotocol.context import (
    ContextDecision,
    ContextPackage,
    ContextPackageService,
    GroupSnapshot,
    KnowledgePublisher,
    SnapshotArchive,
)
from missionweaveprotocol.errors import (
    ContextPackageError,
    SignedDocumentSigningError,
    SignedDocumentVerificationError,
    StaleContextError,
)
from missionweaveprotocol.models import Event, EventKind, Principal
from missionweaveprotocol.scheduler import Scheduler, SchedulerPolicy, WorkOffer
from missionweaveprotocol.signed_documents import SignedDocumentCodec
from missionweaveprotocol.signed_documents import SignedDocumentKind

KEY = KEYS[COORDINATOR]


def service() -> ContextPackageService:
    return ContextPackageService(agent_id=COORDINATOR, key_id=KEY.key_id, private_key=KEY,
                                 public_key=KEY.public_key_bytes)


def history() -> List[Event]:
    core = make_core()
    asyncio.run(core.perform(create()))
    asyncio.run(core.perform(signed("mission.cancel", OWNER, {"reason": "done"})))
    return list(asyncio.run(core.replay(GROUP)))


def publish(events: List[Event], **extra: object) -> ContextPackage:
    return service().publish(
        mission_id=MISSION, group_id=GROUP, version=1, events=events,
        summary="The books were opened, then cancelled.", generated_at=NOW,
        decisions=[ContextDecision(description="cancel", source_event_ids=(events[-1].id,))],
        **extra,  # type: ignore[arg-type]
    )


def test_a_package_of_real_events_verifies_under_the_codec_without_null_members() -> None:
    events = history()
    package = publish(events)
    assert package.source_event_range.from_sequence == 1
    assert package.source_event_range.to_sequence == len(events)
    assert package.work_item_id is None and package.previous_context_package_id is None
    # The reference's gap: its dump signs `null`s and fails the codec at stage `signature`.
    wire = package.to_wire()
    assert "workItemId" not in wire and "previousContextPackageId" not in wire
    # The model's wire form is the signed document: it verifies against the Organization's
    # Registry as it is.
    SignedDocumentCodec().verify(SignedDocumentKind.CONTEXT_PACKAGE, canonical_bytes(wire), REGISTRY)
    service().verify(package)


def test_gaps_foreign_groups_and_decisions_outside_the_range_are_refused() -> None:
    events = history()
    with pytest.raises(ContextPackageError) as gap:
        publish([events[1], events[0]])  # out of order: not one ascending range
    assert (gap.value.code, gap.value.reason) == ("PROTOCOL_VIOLATION", "source_range_gap")
    with pytest.raises(ContextPackageError) as outside:
        service().publish(mission_id=MISSION, group_id=GROUP, version=1, events=events[:1],
                          summary="s", generated_at=NOW,
                          decisions=[ContextDecision(description="d",
                                                     source_event_ids=(events[-1].id,))])
    assert outside.value.reason == "decision_outside_range"
    with pytest.raises(ContextPackageError) as chain:
        publish(events, previous_context_package_id="urn:missionweaveprotocol:context:x")
    assert chain.value.reason == "version_chain"
    with pytest.raises(SignedDocumentSigningError):
        service().publish(mission_id=MISSION, group_id=GROUP, version=1, events=events,
                          summary="", generated_at=NOW)


def test_a_tampered_package_or_another_generator_is_refused() -> None:
    package = publish(history())
    tampered = package.model_copy(update={"summary": "Something else."})
    with pytest.raises(SignedDocumentVerificationError) as bad:
        service().verify(tampered)
    assert bad.value.wire_error.code == "AUTH_INVALID_SIGNATURE"
    other = KEYS[OWNER]
    foreign = ContextPackageService(agent_id=OWNER, key_id=other.key_id, private_key=other,
                                    public_key=other.public_key_bytes)
    with pytest.raises((ContextPackageError, SignedDocumentVerificationError)):
        foreign.verify(package)


def test_install_gives_the_package_to_its_group_only() -> None:
    package = publish(history())
    scheduler = Scheduler(SchedulerPolicy(capacity_slots=1), clock=lambda: NOW)
    assert scheduler.admit(WorkOffer(work_id="urn:w:1", group_id=GROUP)).accepted
    dispatch = scheduler.schedule()[0]
    session = AgentRuntime(COORDINATOR, scheduler).start_session(1)
    service().install(package, session, expected_mission_id=MISSION)
    context = session.prepare(dispatch)
    assert context.values["contextPackageId"] == package.context_package_id
    assert context.values["contextPackageHash"].startswith("sha256:")
    with pytest.raises(StaleContextError):  # the same revision again
        service().install(package, session, expected_mission_id=MISSION)
    with pytest.raises(ContextPackageError) as scope:
        service().install(package, session, expected_mission_id="urn:missionweaveprotocol:mission:x")
    assert (scope.value.code, scope.value.reason) == ("AUTH_FORBIDDEN", "scope_mismatch")


def test_knowledge_carries_the_packages_provenance() -> None:
    package = publish(history())
    publisher = KnowledgePublisher(publisher=Principal.agent(COORDINATOR), key_id=KEY.key_id,
                                   private_key=KEY, public_key=KEY.public_key_bytes)
    publication = publisher.publish(context=package, artifact_hash="sha256:" + "e" * 64,
                                    target_scope="urn:missionweaveprotocol:organization:acme",
                                    classification="internal", summary="lessons", published_at=NOW)
    assert publication.provenance_event_ids == package.source_event_range.event_ids
    assert publication.source_group_id == GROUP
    publisher.verify(publication, context=package)
    with pytest.raises(ContextPackageError) as altered:
        publisher.verify(publication.model_copy(update={"classification": "public"}))
    assert (altered.value.code, altered.value.reason) == ("AUTH_INVALID_SIGNATURE", "bad_signature")
    with pytest.raises(ContextPackageError):
        publisher.publish(context=package, artifact_hash="md5:0", target_scope="x",
                          classification="internal", summary="s", published_at=NOW)


def test_the_archival_services_snapshot_is_accepted_by_the_core() -> None:
    core = make_core(policy_services=[SERVICE])
    asyncio.run(core.perform(create()))
    asyncio.run(core.perform(signed("mission.cancel", OWNER, {"reason": "done"})))
    events = list(asyncio.run(core.replay(GROUP)))
    archive = SnapshotArchive(authority=Principal.service(AUTHORITY), key_id=AUTHORITY_KEY.key_id,
                              private_key=AUTHORITY_KEY, public_key=AUTHORITY_KEY.public_key_bytes)
    policy_log = [{"entryId": "urn:missionweaveprotocol:policy-log:1", "decision": "archive",
                   "actor": {"type": "service", "id": AUTHORITY},
                   "occurredAt": "2026-07-15T09:30:00Z", "details": {}}]
    snapshot = archive.archive(group_id=GROUP, events=events, state={"mission": "cancelled"},
                               policy_log=policy_log, created_at=NOW + timedelta(seconds=1))
    assert isinstance(snapshot, GroupSnapshot) and archive.get(snapshot.snapshot_id) == snapshot
    archive.verify(snapshot)
    with pytest.raises(KeyError):
        archive.get("urn:missionweaveprotocol:snapshot:none")
    accepted = asyncio.run(core.perform(signed(
        "ext.missionweaveprotocol.core.group_archive", SERVICE, {"snapshot": snapshot.to_wire()})))
    assert accepted.kind == EventKind.GROUP_SNAPSHOT_CREATED
    with pytest.raises(ContextPackageError) as gap:
        archive.archive(group_id=GROUP, events=events[1:], state={}, policy_log=policy_log,
                        created_at=NOW)
    assert gap.value.reason == "snapshot_coverage"
