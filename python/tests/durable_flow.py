"""One Work flow on a durable store, then a new Core over a new store on the same database:
what every durable backend must do (SQLite: ``test_core_sql_store.py``, PostgreSQL:
``test_core_postgresql_store.py``)."""

from __future__ import annotations

from typing import Any, List

from core_support import (
    GROUP,
    MISSION,
    W1,
    accept,
    authorize,
    by_worker,
    create,
    kinds,
    make_core,
    offer,
)
from missionweaveprotocol.core import Core
from missionweaveprotocol.models import Event, EventKind, Query, QueryKind
from missionweaveprotocol.store import SQLStore

COMMANDS = (create(), authorize(), offer(), accept())


async def work_item(core: Core) -> Any:
    return (await core.query(Query(kind=QueryKind.WORK_ITEM, entity_id=W1))).value


async def first_flow(store: SQLStore) -> List[Event]:
    """On an initialized, empty ``store``: Mission, WorkItem, offer, acceptance; then close."""
    core = make_core(store=store, event_id_prefix=None)
    events = [await core.perform(raw) for raw in COMMANDS]
    assert kinds(events) == [EventKind.MISSION_CREATED, EventKind.WORK_ITEM_CREATED,
                             EventKind.WORK_ITEM_OFFERED, EventKind.WORK_OFFER_ACCEPTED]
    assert [e.sequence for e in events] == [1, 2, 3, 4]
    assert store.last_sequence(GROUP) == 4
    await store.close()
    return events


async def second_flow(store: SQLStore, events: List[Event]) -> None:
    """On a new initialized store over the first one's database: the same Events byte for byte,
    a duplicate answered with its first Event, the log continued, the states of an
    ``InMemoryStore`` run of the same Commands; then close."""
    assert store.last_sequence(GROUP) == 4
    # The Agents' sessions were opened in the first process: they are stored too.
    core = make_core(store=store, sessions=False, event_id_prefix=None)
    replayed = await core.replay(GROUP)
    assert [e.signed_bytes for e in replayed] == [e.signed_bytes for e in events]
    # The same signed Command answers its first result again (§15.1), nothing appended.
    again = await core.perform(COMMANDS[0])
    assert again.signed_bytes == events[0].signed_bytes
    assert store.last_sequence(GROUP) == 4
    # The Group's log continues where it stopped.
    item = await work_item(core)
    epoch, lease = item["owner"]["ownershipEpoch"], item["owner"]["ownershipLeaseId"]
    started = await core.perform(by_worker("work.start", W1, epoch, lease))
    assert started.kind is EventKind.WORK_ITEM_STARTED and started.sequence == 5
    # The same Commands on an InMemoryStore lead to the same states.
    memory = make_core(event_id_prefix=None)
    for raw in COMMANDS:
        await memory.perform(raw)
    await memory.perform(by_worker("work.start", W1, epoch, lease))
    for kind, entity in ((QueryKind.WORK_ITEM, W1), (QueryKind.MISSION, MISSION)):
        durable = (await core.query(Query(kind=kind, entity_id=entity))).value
        reference = (await memory.query(Query(kind=kind, entity_id=entity))).value
        assert durable["state"] == reference["state"]
        assert durable["revision"] == reference["revision"]
    assert [e.sequence for e in await core.replay(GROUP)] == [1, 2, 3, 4, 5]
    await store.close()
