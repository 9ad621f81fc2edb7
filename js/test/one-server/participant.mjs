// The Node and the browser participants of one-server.test.mjs (no node: imports: the page
// imports it too): the package's AgentClient — napi in Node, WebAssembly in Chromium — against
// the one running server, running the script every host runs (core/client/examples/participant.rs):
// authenticate; subscribe to every Group from the durable Cursors of an Agent-local store (SQLite
// in Node, IndexedDB in the browser; fresh: 0); send `count` `message.post` Commands in each Group
// (texts `one-server:<tag>:<g>:<i>`), read each Group's verified Events in order, acknowledging
// each (the store's Cursor first, then ACK), until every participant's texts of that Group
// arrived; disconnect (client and store closed); reopen the store, authenticate again,
// resubscribe from the durable Cursors, send `one-server:<tag>:<g>:again` in each Group and read
// on until every participant's texts arrived. Answers `{epochs, cursors, resumedAt, seen: [[g,
// sequence, text], …]}`.

const WAIT_MS = 60_000;

function within(promise, what) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), WAIT_MS); }),
  ]);
}

/** `message.post` by `agentId` at `epoch` in Group `g`, issued now, signed with `key`. */
function post(api, { agentId, groups, conversations }, key, epoch, g, text) {
  const document = {
    protocolVersion: '0.1',
    actionId: `urn:missionweaveprotocol:action:js-${crypto.randomUUID()}`,
    actor: { type: 'agent', id: agentId },
    sessionEpoch: epoch,
    membershipEpoch: 1,
    groupId: groups[g],
    kind: 'message.post',
    correlationId: 'urn:missionweaveprotocol:correlation:1',
    issuedAt: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    payload: {
      messageId: `urn:missionweaveprotocol:message:js-${crypto.randomUUID()}`,
      conversationId: conversations[g],
      content: [{ type: 'text', text }],
    },
  };
  return api.signDocument('command', JSON.stringify(document), { key });
}

/** The last part of each participant's texts in a Group: `0..count`, or `again`. */
function suffixes({ count }, again) {
  return again ? ['again'] : Array.from({ length: count }, (_, i) => String(i));
}

/** Every participant's texts of Group `g`: the first ones, or the `again` ones. */
function texts(params, g, again) {
  return new Set(params.tags.flatMap((tag) => suffixes(params, again).map((s) => `one-server:${tag}:${g}:${s}`)));
}

/**
 * One connection: subscribe from the durable Cursors, post, read every Group until its awaited
 * texts arrived. Answers `{epoch, first, cursors}`: the Session Epoch, the first sequence
 * delivered in each Group, each Group's Cursor at the end.
 */
async function session(api, params, key, client, store, awaited, seen, again) {
  const epoch = await within(client.connect(), 'HELLO');
  const start = [];
  for (const group of params.groups) start.push(await store.cursor(params.agentId, group));
  await client.subscribe(params.groups);
  for (let g = 0; g < params.groups.length; g += 1) {
    for (const suffix of suffixes(params, again)) {
      await within(client.send(post(api, params, key, epoch, g, `one-server:${params.tag}:${g}:${suffix}`)), 'send');
    }
  }
  const first = [];
  const cursors = [];
  for (let g = 0; g < params.groups.length; g += 1) {
    let last = start[g];
    let firstDelivered = 0;
    while (awaited[g].size > 0) {
      const event = await within(client.nextEvent(params.groups[g]), `Event after ${last}`);
      if (!event.inOrder || event.sequence !== last + 1) throw new Error(`out of order: ${event.sequence} after ${last}`);
      last = event.sequence;
      firstDelivered ||= event.sequence;
      await client.acknowledge(event);
      if (event.kind !== 'message.posted') continue;
      // The text as a JSON string anywhere in the Event (layout independent).
      for (const text of [...awaited[g]].sort()) {
        if (event.text.includes(JSON.stringify(text))) {
          awaited[g].delete(text);
          seen.push([g, event.sequence, text]);
        }
      }
    }
    first.push(firstDelivered);
    cursors.push(last);
  }
  return { epoch, first, cursors };
}

/**
 * `params`: `{url, agentId, registryBytes, authorityId, groups, conversations, tag, tags, count}`;
 * `key`: the Agent's SigningKey (the page's own in the browser); `openStore()`: opens (again) the
 * Agent-local store, which has `cursor(agent, group)` and `close()`.
 */
export async function participate(api, params, key, openStore) {
  const registry = new api.Registry(Uint8Array.from(params.registryBytes));
  const connect = (store) => new api.AgentClient(params.url, { agentId: params.agentId, signingKey: key, registry, authorityId: params.authorityId, store });
  const seen = [];
  const awaited = params.groups.map((_, g) => texts(params, g, false));

  let store = await openStore();
  let client = connect(store);
  let firstRun;
  try {
    firstRun = await session(api, params, key, client, store, awaited, seen, false);
  } finally {
    await client.close();
    store.close();
  }

  // The reconnect: a new client over the reopened store, from its durable Cursors.
  store = await openStore();
  client = connect(store);
  try {
    for (let g = 0; g < params.groups.length; g += 1) {
      const durable = await store.cursor(params.agentId, params.groups[g]);
      if (durable !== firstRun.cursors[g]) throw new Error(`the reopened store's Cursor is ${durable}, not ${firstRun.cursors[g]}`);
      for (const text of texts(params, g, true)) awaited[g].add(text);
      for (const [i, , text] of seen) if (i === g) awaited[g].delete(text);
    }
    const secondRun = await session(api, params, key, client, store, awaited, seen, true);
    return { epochs: [firstRun.epoch, secondRun.epoch], cursors: firstRun.cursors, resumedAt: secondRun.first, seen };
  } finally {
    await client.close();
    store.close();
  }
}
