"""The proof of concept's Worker process: the shared reviewer's steps 8 and 9
(``docs/poc.md``) as a real OS process, so that "kill and restart a Worker process" (§22) is
a ``SIGKILL`` of a process holding an open session and an open SQLite store, and a new
process on the same store file.

    python -m missionweaveprotocol._poc_worker

One JSON request per stdin line, one JSON answer per stdout line (the demo,
:mod:`missionweaveprotocol.poc`, is the only caller; the answers carry the evidence its checks
are computed from). Requests:

``{"op": "attach", "process", "url", "cafile", "store", "restarted"}``
    the server to use and this process's store file (opened here, kept open); a restarted
    process also loads the replay modules here;
``{"op": "read", "now", "group", "head"}``
    HELLO (a new Session Epoch), subscribe ``group`` from the durable Cursor, remember and
    acknowledge each verified Event up to ``head`` (the Cursor first, then ``ACK``), then the
    same Events again (duplicate delivery);
``{"op": "accept", "now", "items": [[group, workItemId], …]}``
    ``work.accept_offer`` of each offered WorkItem (accepted, not started; the session stays
    open: the demo kills this process here);
``{"op": "restart", "now", "oldEpoch", "pending": {group: workItemId}}``
    the restarted process: HELLO (Session Epoch + 1, which re-issues the queued ownership
    leases), a Command signed for ``oldEpoch`` (refused: fenced), both Groups subscribed from
    their durable Cursors, :class:`~missionweaveprotocol.replay.AgentReplay` over the store and
    the Events delivered past the Cursors rebuilds the Scheduler, which dispatches the queued
    WorkItems; each is started, published and submitted.

EOF on stdin: the client and store are closed and the process exits 0.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import sys
from datetime import datetime
from pathlib import Path
from typing import Any, Dict, List, Optional

from . import poc
from ._native import Dispatch
from .canonical import canonical_bytes
from .client import DeliveredEvent
from .local_store import SQLiteAgentStore

#: The Events after which an owned WorkItem waits in its owner's queue: accepted, checkpointed,
#: unblocked, or its ownership lease re-issued by a new session (``nextState`` ``queued``).
_REQUEUED = ("work.offer.accepted", "work.checkpointed", "work.unblocked",
             "ext.missionweaveprotocol.core.work_execution_lease_revoked")


def _queued_for(agent: str, log: List[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """The WorkItems ``agent`` owns and that wait in a queue, with their current ownership
    lease: the Worker's own reading of its Group's Events (§11.2)."""
    owner: Dict[str, str] = {}
    queued: Dict[str, Optional[Dict[str, Any]]] = {}
    for event in log:
        payload = event.get("payload", {})
        item = payload.get("workItemId")
        kind = event["kind"]
        if item is None:
            continue
        if kind == "work.offer.accepted":
            owner[item] = event["actor"]["id"]
        if owner.get(item) != agent:
            continue
        if kind in _REQUEUED and payload.get("nextState", "queued") == "queued":
            lease = payload.get("ownershipLeaseId", payload.get("leaseId"))
            previous = queued.get(item) or {}
            queued[item] = {"ownershipLeaseId": lease or previous.get("ownershipLeaseId"),
                            "ownershipEpoch": payload.get("ownershipEpoch", previous.get("ownershipEpoch"))}
        elif kind.startswith("work.") and kind not in ("work.offer.created", "work.contract.revised"):
            queued[item] = None
    return {item: lease for item, lease in queued.items() if lease is not None}


class _Attached(poc._Server):
    """The demo's server as this process sees it: its address, the certificate to trust and
    the demo's clock reading (the demo does not move the clock while this process works)."""

    def __init__(self, url: str, cafile: str) -> None:  # no process of its own
        self.url = url
        self.tls = ssl.create_default_context(cafile=cafile)
        self.now = poc.START


class _Worker:
    """The reviewer in this process: its store (kept open until the process ends or is killed)
    and, once connected, its client."""

    def __init__(self, url: str, cafile: str, store: str, process: str) -> None:
        self.server = _Attached(url, cafile)
        self.world = poc._World(self.server, Path(store).parent, actions_prefix=f"poc-{process}")
        self.store = SQLiteAgentStore(store)
        self.reviewer: Optional[poc._Agent] = None

    async def connect(self) -> poc._Agent:
        self.reviewer = await self.world.connect(poc.REVIEWER, self.store)
        return self.reviewer

    async def read(self, group: str, head: int) -> Dict[str, Any]:
        reviewer = await self.connect()
        await reviewer.client.subscribe([group])
        delivered: List[DeliveredEvent] = []
        firsts: List[bool] = []
        while not delivered or delivered[-1].sequence < head:
            event = await asyncio.wait_for(reviewer.client.next_event(group), poc.WAIT)
            firsts.append(self.store.remember_event(poc.REVIEWER, event.event_id, group_id=group,
                                                    sequence=event.sequence))
            await reviewer.client.acknowledge(event)
            delivered.append(event)
        # Duplicate delivery: the same Events again change nothing.
        again = [self.store.remember_event(poc.REVIEWER, e.event_id, group_id=group, sequence=e.sequence)
                 for e in delivered]
        return {"sessionEpoch": reviewer.client.session_epoch, "sequences": [e.sequence for e in delivered],
                "firstsRemembered": all(firsts), "againRemembered": sum(again),
                "cursor": self.store.cursor(poc.REVIEWER, group)}

    async def accept(self, items: List[List[str]]) -> Dict[str, Any]:
        assert self.reviewer is not None
        accepted = {}
        for group, item in items:
            event = await self.world.do(self.reviewer, "work.accept_offer",
                                        {"capabilityPins": [poc.CAPABILITY], "workItemId": item}, group)
            accepted[item] = {"eventId": event["eventId"], "sequence": event["sequence"]}
        return {"accepted": accepted, "sessionEpoch": self.reviewer.client.session_epoch}

    async def restart(self, old_epoch: int, pending: Dict[str, str]) -> Dict[str, Any]:
        from .models import Event
        from .replay import AgentReplay, EventProjection
        from .scheduler import GroupSchedulingPolicy, SchedulerPolicy, WorkOffer, WorkState, WorkTransition

        world = self.world
        groups = sorted(pending)
        cursors = {g: self.store.cursor(poc.REVIEWER, g) for g in groups}
        reviewer = await self.connect()
        fenced, _ = await world.attempt(reviewer, world.agent_command(reviewer, "message.post", {
            "conversationId": f"{poc._mission_of(poc.GROUP_AUTH)}:conversation:main",
            "messageId": "urn:missionweaveprotocol:message:poc-stale",
            "content": [{"type": "text", "text": "from the old session"}]}, poc.GROUP_AUTH, session_epoch=old_epoch))
        # Both Groups from their durable Cursors; each read up to a Message this Worker posts
        # (the head it knows has every Event its new session caused, the re-issued leases too).
        await reviewer.client.subscribe(groups)
        logs: Dict[str, List[Dict[str, Any]]] = {}
        for group in groups:
            head = await world.do(reviewer, "message.post", {
                "conversationId": f"{poc._mission_of(group)}:conversation:main",
                "messageId": f"urn:missionweaveprotocol:message:poc-restarted-{group.rsplit(':', 1)[-1]}",
                "content": [{"type": "text", "text": "back"}]}, group)
            log: List[Dict[str, Any]] = []
            while not log or log[-1]["eventId"] != head["eventId"]:
                log.append((await asyncio.wait_for(reviewer.client.next_event(group), poc.WAIT)).document)
            logs[group] = log
        owned = {g: _queued_for(poc.REVIEWER, log) for g, log in logs.items()}
        queued = {g: set(items) for g, items in owned.items()}

        def source(group_id: str, *, after: int) -> List[Event]:
            return [Event.from_signed_bytes(canonical_bytes(e)) for e in logs[group_id] if e["sequence"] > after]

        def projector(event: Event) -> Optional[EventProjection]:
            item = event.payload.get("workItemId")
            if event.kind in _REQUEUED and event.group_id in queued and item in queued[event.group_id]:
                return EventProjection((WorkOffer(str(item), str(event.group_id), organizational_priority=0,
                                                  capability=(poc.CAPABILITY["id"], poc.CAPABILITY["version"])),))
            return None

        policy = SchedulerPolicy(
            capacity_slots=2,
            groups={poc.GROUP_AUTH: GroupSchedulingPolicy(weight=2, slot_quota=1),
                    poc.GROUP_CLI: GroupSchedulingPolicy(weight=1, slot_quota=2)},
            supported_capabilities=[(poc.CAPABILITY["id"], poc.CAPABILITY["version"])])
        replay = AgentReplay(poc.REVIEWER, self.store, source, projector,  # type: ignore[arg-type]
                             scheduler_policy=policy, clock=lambda: self.server.now)
        results = await replay.reconcile(groups)
        scheduler = replay.scheduler
        rebuilt = {g: sorted(w for w in (pending[g],) if scheduler.state(w) is WorkState.READY) for g in groups}
        queues = {g: sorted(queued[g]) for g in groups}
        size = len(scheduler)
        group_of = {w: g for g, w in pending.items()}
        submitted = []
        for action in scheduler.schedule():
            if not isinstance(action, Dispatch):
                continue
            group = group_of[action.work_id]
            artifact = await poc._produce(world, reviewer, poc._mission_of(group), group, action.work_id,
                                          [], owned[group][action.work_id], "handbook")
            scheduler.apply(WorkTransition(action.work_id, "completed", generation=action.generation))
            submitted.append({"groupId": group, "workItemId": action.work_id, "artifactHash": artifact})
        return {
            "sessionEpoch": reviewer.client.session_epoch, "fenced": fenced, "cursors": cursors,
            "resumed": {g: {"sequence": logs[g][0]["sequence"], "eventId": logs[g][0]["eventId"]} for g in groups},
            "heads": {g: {"sequence": logs[g][-1]["sequence"], "eventId": logs[g][-1]["eventId"]} for g in groups},
            "replay": {g: {"start": results[g].start_cursor, "end": results[g].end_cursor,
                           "queued": queues[g], "rebuilt": rebuilt[g]} for g in groups},
            "schedulerSize": size, "submitted": submitted,
        }

    async def close(self) -> None:
        if self.reviewer is not None:
            await self.reviewer.client.close()
        self.store.close()


async def _serve() -> int:
    worker: Optional[_Worker] = None
    process = "worker"
    try:
        while True:
            line = await asyncio.to_thread(sys.stdin.readline)
            if not line:
                return 0
            request = json.loads(line)
            op = request["op"]
            if op == "attach":
                process = request["process"]
                worker = _Worker(request["url"], request["cafile"], request["store"], process)
                if request.get("restarted"):
                    # A restarted process replays: it loads the replay machinery now (the demo
                    # sends this request while it goes on without the reviewer).
                    from . import replay  # noqa: F401
                answer: Dict[str, Any] = {"attached": process}
            else:
                assert worker is not None, "attach first"
                worker.server.now = datetime.fromisoformat(request["now"])
                if op == "read":
                    answer = await worker.read(request["group"], int(request["head"]))
                elif op == "accept":
                    answer = await worker.accept(request["items"])
                elif op == "restart":
                    answer = await worker.restart(int(request["oldEpoch"]), dict(request["pending"]))
                else:
                    raise ValueError(f"unknown op {op!r}")
            sys.stdout.write(json.dumps(answer, sort_keys=True) + "\n")
            sys.stdout.flush()
    finally:
        if worker is not None:
            await worker.close()


def main() -> int:
    return asyncio.run(_serve())


if __name__ == "__main__":
    sys.exit(main())
