"""The Python participant of js/test/one-server.test.mjs: the package's asyncio ``AgentClient``
against the one running server, running the script every host runs (see
core/client/examples/participant.rs): authenticate; subscribe to every Group from the durable
Cursors of a ``local_store.SQLiteAgentStore`` (fresh: 0); send ``count`` ``message.post``
Commands in each Group (texts ``one-server:<tag>:<g>:<i>``), read each Group's verified Events
in order, acknowledging each (the store's Cursor first, then ``ACK``), until every participant's
texts of that Group arrived; disconnect (client and store closed); reopen the store, authenticate
again, resubscribe from the durable Cursors, send ``one-server:<tag>:<g>:again`` in each Group
and read on until every participant's texts arrived.

Argument: a JSON object ``{url, agentId, keyId, seedHex, registryPath, storePath, authorityId,
groups, conversations, tag, tags, count}``. Prints one JSON line ``{"epochs", "cursors",
"resumedAt", "seen": [[g, sequence, text], ...]}``."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from datetime import datetime, timezone
from typing import Any, Dict, List, Set, Tuple

from missionweaveprotocol.client import AgentClient
from missionweaveprotocol.crypto import SigningKey
from missionweaveprotocol.local_store import SQLiteAgentStore
from missionweaveprotocol.registry import AgentRegistryKeyResolver
from missionweaveprotocol.signed_documents import SignedDocumentCodec, SignedDocumentKind


def post(config: Dict[str, Any], key: SigningKey, epoch: int, g: int, text: str) -> bytes:
    document = {
        "protocolVersion": "0.1",
        "actionId": f"urn:missionweaveprotocol:action:py-{uuid.uuid4().hex}",
        "actor": {"type": "agent", "id": config["agentId"]},
        "sessionEpoch": epoch,
        "membershipEpoch": 1,
        "groupId": config["groups"][g],
        "kind": "message.post",
        "correlationId": "urn:missionweaveprotocol:correlation:1",
        "issuedAt": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "payload": {
            "messageId": f"urn:missionweaveprotocol:message:py-{uuid.uuid4().hex}",
            "conversationId": config["conversations"][g],
            "content": [{"type": "text", "text": text}],
        },
    }
    return SignedDocumentCodec().sign(SignedDocumentKind.COMMAND, document, key).canonical_document_bytes


def suffixes(config: Dict[str, Any], again: bool) -> List[str]:
    """The last part of each participant's texts in a Group: ``0..count``, or ``again``."""
    return ["again"] if again else [str(i) for i in range(config["count"])]


def texts(config: Dict[str, Any], g: int, again: bool) -> Set[str]:
    """Every participant's texts of Group ``g``: the first ones, or the ``again`` ones."""
    return {f"one-server:{tag}:{g}:{s}" for tag in config["tags"] for s in suffixes(config, again)}


async def session(config: Dict[str, Any], client: AgentClient, store: SQLiteAgentStore, key: SigningKey,
                  awaited: List[Set[str]], seen: List[List[Any]], again: bool) -> Tuple[int, List[int], List[int]]:
    """One connection: subscribe from the durable Cursors, post, read every Group until its awaited
    texts arrived. Answers the Session Epoch, the first sequence delivered in each Group and each
    Group's Cursor at the end."""
    epoch = await client.authenticated()
    groups = config["groups"]
    start = [store.cursor(config["agentId"], group) for group in groups]
    await client.subscribe(groups)
    for g in range(len(groups)):
        for suffix in suffixes(config, again):
            event = await client.send(post(config, key, epoch, g, f"one-server:{config['tag']}:{g}:{suffix}"))
            assert event.group_id == groups[g]
    first: List[int] = []
    cursors: List[int] = []
    for g, group in enumerate(groups):
        last = start[g]
        first_delivered = 0
        while awaited[g]:
            event = await asyncio.wait_for(client.next_event(group), 60)
            assert event.in_order and event.sequence == last + 1, (event.sequence, last)
            last = event.sequence
            first_delivered = first_delivered or event.sequence
            await client.acknowledge(event)
            if event.kind == "message.posted":
                # The text as a JSON string anywhere in the Event (layout independent).
                dumped = json.dumps(event.document, ensure_ascii=False)
                for text in sorted(awaited[g]):
                    if json.dumps(text) in dumped:
                        awaited[g].discard(text)
                        seen.append([g, event.sequence, text])
        first.append(first_delivered)
        cursors.append(last)
    return epoch, first, cursors


async def main(config: Dict[str, Any]) -> None:
    key = SigningKey(config["keyId"], bytes.fromhex(config["seedHex"]))
    with open(config["registryPath"], "rb") as registry_file:
        registry = AgentRegistryKeyResolver(registry_file.read())
    groups = config["groups"]
    seen: List[List[Any]] = []
    awaited = [texts(config, g, False) for g in range(len(groups))]

    def connect(store: SQLiteAgentStore) -> AgentClient:
        return AgentClient(config["url"], agent_id=config["agentId"], signing_key=key, registry=registry,
                           authority_id=config["authorityId"], store=store)

    store = SQLiteAgentStore(config["storePath"])
    async with connect(store) as client:
        first_epoch, _, cursors = await session(config, client, store, key, awaited, seen, False)
    store.close()

    # The reconnect: a new client over the reopened store, from its durable Cursors.
    store = SQLiteAgentStore(config["storePath"])
    for g, group in enumerate(groups):
        durable = store.cursor(config["agentId"], group)
        assert durable == cursors[g], (group, durable, cursors[g])
        awaited[g] |= texts(config, g, True)
        awaited[g] -= {text for i, _, text in seen if i == g}
    async with connect(store) as client:
        second_epoch, resumed_at, _ = await session(config, client, store, key, awaited, seen, True)
    store.close()
    print(json.dumps({"epochs": [first_epoch, second_epoch], "cursors": cursors, "resumedAt": resumed_at,
                      "seen": seen}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1])))
