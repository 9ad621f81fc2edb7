"""The Python participant of js/test/one-server.test.mjs: the package's asyncio ``AgentClient``
against the one running server. Argument: a JSON object ``{url, agentId, keyId, seedHex,
registryPath, authorityId, groupId, conversationId, tag, count, expect}``. It authenticates,
subscribes to the Group from 0, sends ``count`` ``message.post`` Commands (texts
``one-server:<tag>:<i>``), then reads the Group's verified Events in order until every text of ``expect``
arrived, acknowledging each. Prints one JSON line: ``{"epoch", "seen": [[sequence, text], ...]}``
(the ``message.posted`` Events whose text is expected, in Group order)."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from datetime import datetime, timezone
from typing import Any, Dict, List

from missionweaveprotocol.client import AgentClient
from missionweaveprotocol.crypto import SigningKey
from missionweaveprotocol.registry import AgentRegistryKeyResolver
from missionweaveprotocol.signed_documents import SignedDocumentCodec, SignedDocumentKind


def post(config: Dict[str, Any], key: SigningKey, epoch: int, text: str) -> bytes:
    document = {
        "protocolVersion": "0.1",
        "actionId": f"urn:missionweaveprotocol:action:py-{uuid.uuid4().hex}",
        "actor": {"type": "agent", "id": config["agentId"]},
        "sessionEpoch": epoch,
        "membershipEpoch": 1,
        "groupId": config["groupId"],
        "kind": "message.post",
        "correlationId": "urn:missionweaveprotocol:correlation:1",
        "issuedAt": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "payload": {
            "messageId": f"urn:missionweaveprotocol:message:py-{uuid.uuid4().hex}",
            "conversationId": config["conversationId"],
            "content": [{"type": "text", "text": text}],
        },
    }
    return SignedDocumentCodec().sign(SignedDocumentKind.COMMAND, document, key).canonical_document_bytes


async def main(config: Dict[str, Any]) -> None:
    key = SigningKey(config["keyId"], bytes.fromhex(config["seedHex"]))
    with open(config["registryPath"], "rb") as registry_file:
        registry = AgentRegistryKeyResolver(registry_file.read())
    group = config["groupId"]
    expect = set(config["expect"])
    seen: List[List[Any]] = []
    async with AgentClient(config["url"], agent_id=config["agentId"], signing_key=key,
                           registry=registry, authority_id=config["authorityId"]) as client:
        epoch = await client.authenticated()
        await client.subscribe([group])
        for i in range(config["count"]):
            event = await client.send(post(config, key, epoch, f"one-server:{config['tag']}:{i}"))
            assert event.group_id == group
        last = 0
        while expect:
            event = await asyncio.wait_for(client.next_event(group), 60)
            assert event.in_order and event.sequence == last + 1, (event.sequence, last)
            last = event.sequence
            await client.acknowledge(event)
            if event.kind == "message.posted":
                # The text as a JSON string anywhere in the Event (layout independent).
                dumped = json.dumps(event.document, ensure_ascii=False)
                for text in sorted(expect):
                    if json.dumps(text) in dumped:
                        expect.discard(text)
                        seen.append([event.sequence, text])
    print(json.dumps({"epoch": epoch, "seen": seen}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1])))
