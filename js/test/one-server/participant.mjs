// The Node and the browser participants of one-server.test.mjs (no node: imports: the page
// imports it too): the package's AgentClient — napi in Node, WebAssembly in Chromium — against
// the one running server. Authenticate, subscribe to the Group from 0, send `count`
// `message.post` Commands (texts `one-server:<tag>:<i>`), then read the Group's verified Events
// in order until every text of `expect` arrived, acknowledging each. Answers
// `{epoch, seen: [[sequence, text], …]}` (the expected `message.posted` Events, in Group order).

const WAIT_MS = 60_000;

function within(promise, what) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), WAIT_MS); }),
  ]);
}

/** `message.post` by `agentId` at `epoch`, issued now, signed with `key`. */
function post(api, { agentId, groupId, conversationId }, key, epoch, text) {
  const document = {
    protocolVersion: '0.1',
    actionId: `urn:missionweaveprotocol:action:js-${crypto.randomUUID()}`,
    actor: { type: 'agent', id: agentId },
    sessionEpoch: epoch,
    membershipEpoch: 1,
    groupId,
    kind: 'message.post',
    correlationId: 'urn:missionweaveprotocol:correlation:1',
    issuedAt: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    payload: {
      messageId: `urn:missionweaveprotocol:message:js-${crypto.randomUUID()}`,
      conversationId,
      content: [{ type: 'text', text }],
    },
  };
  return api.signDocument('command', JSON.stringify(document), { key });
}

/**
 * `params`: `{url, agentId, registryBytes, authorityId, groupId, conversationId, tag, count,
 * expect}`; `key`: the Agent's SigningKey (the page's own in the browser).
 */
export async function participate(api, params, key) {
  const registry = new api.Registry(Uint8Array.from(params.registryBytes));
  const client = new api.AgentClient(params.url, { agentId: params.agentId, signingKey: key, registry, authorityId: params.authorityId });
  const expect = new Set(params.expect);
  const seen = [];
  try {
    const epoch = await within(client.connect(), 'HELLO');
    await client.subscribe([params.groupId]);
    for (let i = 0; i < params.count; i += 1) {
      await within(client.send(post(api, params, key, epoch, `one-server:${params.tag}:${i}`)), 'send');
    }
    let last = 0;
    while (expect.size > 0) {
      const event = await within(client.nextEvent(params.groupId), `Event after ${last}`);
      if (!event.inOrder || event.sequence !== last + 1) throw new Error(`out of order: ${event.sequence} after ${last}`);
      last = event.sequence;
      await client.acknowledge(event);
      if (event.kind !== 'message.posted') continue;
      // The text as a JSON string anywhere in the Event (layout independent).
      for (const text of [...expect].sort()) {
        if (event.text.includes(JSON.stringify(text))) {
          expect.delete(text);
          seen.push([event.sequence, text]);
        }
      }
    }
    return { epoch, seen };
  } finally {
    await client.close();
  }
}
