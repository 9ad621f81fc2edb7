"""Group archival through ``core.Core`` (§7.4, §15.2, §16): ``…core.group_archive`` with a Group
Snapshot signed by the snapshot authority (the Group Authority) emits ``group.snapshot.created``
and ``group.archived``; a Mission that is not terminal is refused; after archival the Group
accepts nothing and an old replay cursor is ``CURSOR_TOO_OLD``. The rules live in Rust
(``core/engine/src/archive/``); this checks they reach Python through the generic perform."""

from __future__ import annotations

import asyncio
from typing import Any, Coroutine, Dict, List, TypeVar

import pytest

from core_support import (
    AUTHORITY,
    AUTHORITY_KEY,
    GROUP,
    HASH_A,
    KEYS,
    NOW,
    OWNER,
    SERVICE,
    create,
    kinds,
    make_core,
    signed,
)
from missionweaveprotocol.core import AuthorizationDenied, Core, InvalidTransition, NotFound
from missionweaveprotocol.models import CommandKind, EventKind, Query, QueryKind
from missionweaveprotocol.payloads import GroupArchiveWirePayload
from missionweaveprotocol.signed_documents import SignedDocumentCodec
from missionweaveprotocol.signed_documents import SignedDocumentKind

T = TypeVar("T")
ARCHIVE = str(CommandKind.ARCHIVE_GROUP)


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


def snapshot(event_ids: List[str], signer: str = AUTHORITY) -> Dict[str, Any]:
    """A Group Snapshot of ``GROUP`` covering ``event_ids`` (sequences 1..n), signed by
    ``signer`` (the Group Authority, or another registered service)."""
    document = {
        "snapshotId": "urn:missionweaveprotocol:snapshot:py-final",
        "groupId": GROUP,
        "throughSequence": len(event_ids),
        "eventIds": event_ids,
        "stateHash": HASH_A,
        "policyLog": [{
            "entryId": "urn:missionweaveprotocol:policy-log:py-1",
            "decision": "verified the exact signed human decision before archiving",
            "actor": {"type": "service", "id": AUTHORITY},
            "occurredAt": NOW.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "details": {},
        }],
        "createdBy": {"type": "service", "id": signer},
        "createdAt": NOW.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    key = AUTHORITY_KEY if signer == AUTHORITY else KEYS[signer]
    return SignedDocumentCodec().sign(SignedDocumentKind.GROUP_SNAPSHOT, document, key).document


async def ids(core: Core) -> List[str]:
    return [event.id for event in await core.replay(GROUP)]


def test_a_cancelled_missions_group_is_archived_and_replay_resumes_after_it() -> None:
    async def scenario() -> None:
        core = make_core(policy_services=[SERVICE])
        await core.perform(create())
        await core.perform(signed("mission.cancel", OWNER, {"reason": "no longer needed"}))
        history = await ids(core)
        payload = GroupArchiveWirePayload(snapshot=snapshot(history)).to_payload()
        events = await core.perform_all(signed(ARCHIVE, SERVICE, payload))
        assert kinds(events) == [EventKind.GROUP_SNAPSHOT_CREATED, EventKind.GROUP_ARCHIVED]
        assert events[1].payload["archiveSnapshotId"] == "urn:missionweaveprotocol:snapshot:py-final"
        group = (await core.query(Query(kind=QueryKind.GROUP, entity_id=GROUP))).value
        assert group["state"] == "archived"
        # §16: the archived history is offline; the two archival Events stay online.
        with pytest.raises(NotFound) as old:
            await core.replay(GROUP, after=0)
        assert old.value.wire_code == "CURSOR_TOO_OLD"
        assert old.value.details["snapshot_artifact_hash"] == events[0].payload["snapshotArtifactHash"]
        after = await core.replay(GROUP, after=len(history))
        assert [e.id for e in after] == [e.id for e in events]
        # Writes after archival are refused.
        with pytest.raises(InvalidTransition) as late:
            await core.perform(signed("mission.cancel", OWNER, {"reason": "again"}))
        assert late.value.wire_code == "INVALID_STATE_TRANSITION"

    run(scenario())


def test_an_active_missions_group_is_not_archived() -> None:
    async def scenario() -> None:
        core = make_core(policy_services=[SERVICE])
        await core.perform(create())
        history = await ids(core)
        with pytest.raises(InvalidTransition) as refused:
            await core.perform(signed(ARCHIVE, SERVICE, {"snapshot": snapshot(history)}))
        assert refused.value.wire_code == "INVALID_STATE_TRANSITION"
        assert await ids(core) == history
        group = (await core.query(Query(kind=QueryKind.GROUP, entity_id=GROUP))).value
        assert group["state"] == "active"

    run(scenario())


def test_a_snapshot_not_signed_by_the_snapshot_authority_is_refused() -> None:
    async def scenario() -> None:
        core = make_core(policy_services=[SERVICE])
        await core.perform(create())
        await core.perform(signed("mission.cancel", OWNER, {"reason": "no longer needed"}))
        history = await ids(core)
        foreign = snapshot(history, signer=SERVICE)
        with pytest.raises(AuthorizationDenied) as refused:
            await core.perform(signed(ARCHIVE, SERVICE, {"snapshot": foreign}))
        assert refused.value.wire_code == "AUTH_FORBIDDEN"
        assert await ids(core) == history

    run(scenario())
