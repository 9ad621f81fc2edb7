// The end-to-end script of issue 24 run INSIDE a browser page (imported by
// browser-client.test.mjs through page.evaluate): the WebAssembly entry's AgentClient over the
// page's WebSocket, the Rust session compiled to wasm verifying every Event, Cursors in
// IndexedDB. Browser-only code (no node: imports); it checks as it goes and answers a summary
// that the Node side checks again (the Events' bytes against the napi verifier).

const WAIT_MS = 60_000;

function check(condition, what) {
  if (!condition) throw new Error(`browser script: ${what}`);
}

function within(promise, what, ms = WAIT_MS) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms); }),
  ]);
}

async function expectRefusal(promise, api, code) {
  try {
    await within(promise, `refusal ${code}`);
  } catch (error) {
    check(error instanceof api.CommandRefused, `a CommandRefused, not ${error}`);
    check(error.code === code, `code ${code}, got ${error.code}`);
    return error;
  }
  throw new Error(`browser script: the Command was accepted, expected ${code}`);
}

/** A fresh Ed25519 seed from WebCrypto, held by the page: its SigningKey and public key. */
export function pageKey(api, keyId) {
  const seed = crypto.getRandomValues(new Uint8Array(32));
  const key = api.SigningKey.fromSeed(keyId, seed);
  return { key, publicKey: [...key.publicKey] };
}

/** Reads `client`'s Events of `group` until `eventId`, checking Group order from `from`; ACKs each. */
async function readUntil(client, group, eventId, from) {
  const seen = [];
  let expected = from + 1;
  for (;;) {
    const event = await within(client.nextEvent(group), `${group} Event after ${expected - 1}`);
    check(event.groupId === group, `Group ${group}, got ${event.groupId}`);
    check(event.sequence === expected, `sequence ${expected} in Group order, got ${event.sequence}`);
    check(event.inOrder, 'in order');
    expected += 1;
    seen.push(event);
    await client.acknowledge(event);
    if (event.eventId === eventId) return seen;
  }
}

/**
 * `params`: `{url, registryBytes, authorityId, registrarId, coordinator: {id, keyId, seed},
 * worker: {id}, groups: [group, other], absentGroup, conversations: {group: conversationId}}`;
 * `workerKey`: the page's own SigningKey of the Worker. Answers the summary.
 */
export async function run(api, params, workerKey) {
  const { url, authorityId, coordinator: c, worker: w, groups: [group, other], absentGroup, conversations } = params;
  const registry = new api.Registry(Uint8Array.from(params.registryBytes));
  // The Coordinator's key is imported (its seed handed to the page); the Worker's was generated here.
  const coordinatorKey = api.SigningKey.fromSeed(c.keyId, Uint8Array.from(c.seed));
  let nextAction = 1;
  const post = (groupId, epoch, text) => api.signDocument('command', JSON.stringify({
    protocolVersion: '0.1',
    actionId: `urn:missionweaveprotocol:action:browser-${Date.now()}-${nextAction}`,
    actor: { type: 'agent', id: c.id },
    sessionEpoch: epoch,
    membershipEpoch: 1,
    groupId,
    kind: 'message.post',
    correlationId: 'urn:missionweaveprotocol:correlation:browser',
    issuedAt: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    payload: {
      messageId: `urn:missionweaveprotocol:message:browser-${Date.now()}-${nextAction++}`,
      conversationId: conversations[groupId] ?? 'urn:missionweaveprotocol:conversation:nowhere',
      content: [{ type: 'text', text }],
    },
  }), { key: coordinatorKey });

  const storeName = `mwp-browser-test-${crypto.getRandomValues(new Uint32Array(1))[0]}`;
  let store = await api.IndexedDbCursorStore.open(storeName);
  const options = { registry, authorityId };
  const coordinator = new api.AgentClient(url, { ...options, agentId: c.id, signingKey: coordinatorKey });
  let worker = new api.AgentClient(url, { ...options, agentId: w.id, signingKey: workerKey, store, initialBackoffMs: 50 });
  // Negative (run last, alone as the Worker): a client that expects another Group Authority
  // refuses every Event in wasm and hands none on.
  const doubter = new api.AgentClient(url, { registry, authorityId: params.registrarId, agentId: w.id, signingKey: workerKey, reconnect: false });
  const summary = {};
  try {
    const epoch = await within(coordinator.connect(), 'coordinator HELLO');
    check(epoch >= 1 && coordinator.sessionEpoch === epoch, 'a Session Epoch');
    const workerEpoch = await within(worker.connect(), 'worker HELLO');
    await coordinator.subscribe([group, other]);
    await worker.subscribe([group, other]);

    const first = await within(coordinator.send(post(group, epoch, 'one')), 'post one');
    check(first.groupId === group && first.kind === 'message.posted', 'post one -> message.posted');
    check(first.document.actor.id === c.id, 'the Event names the Coordinator');
    const second = await within(coordinator.send(post(other, epoch, 'two')), 'post two');
    check(second.groupId === other, 'post two in the other Group');

    const inGroup = await readUntil(worker, group, first.eventId, 0);
    const inOther = await readUntil(worker, other, second.eventId, 0);
    check(inGroup.at(-1).text === first.text, 'the subscriber gets the same signed bytes');
    check(await store.cursor(w.id, group) === first.sequence, 'IndexedDB Cursor of the Group');
    check(await store.cursor(w.id, other) === second.sequence, 'IndexedDB Cursor of the other Group');
    await readUntil(coordinator, group, first.eventId, 0);

    const stale = await expectRefusal(coordinator.send(post(group, epoch + 5, 'stale')), api, 'AUTH_STALE_SESSION');
    const absent = await expectRefusal(coordinator.send(post(absentGroup, epoch, 'nowhere')), api, 'GROUP_NOT_FOUND');
    summary.refusals = [[stale.code, stale.retryable], [absent.code, absent.retryable]];

    await worker.drop();
    const again = await within(worker.authenticated(), 'worker reconnect');
    check(again > workerEpoch, 'a new Session Epoch after the reconnect');
    check(worker.connections === 2, 'two connections');
    const third = await within(coordinator.send(post(group, epoch, 'three')), 'post three');
    const resumed = await readUntil(worker, group, third.eventId, first.sequence);
    check(resumed[0].sequence === first.sequence + 1, 'no Event twice after the reconnect');

    // A new client over the same IndexedDB database (reopened, as after a page reload).
    await worker.close();
    store.close();
    const fourth = await within(coordinator.send(post(group, epoch, 'four')), 'post four');
    store = await api.IndexedDbCursorStore.open(storeName);
    const durable = await store.cursor(w.id, group);
    check(durable === third.sequence, `the reopened IndexedDB Cursor is ${third.sequence}, got ${durable}`);
    worker = new api.AgentClient(url, { ...options, agentId: w.id, signingKey: workerKey, store });
    await within(worker.connect(), 'new worker HELLO');
    await worker.subscribe([group]);
    const fromCursor = await readUntil(worker, group, fourth.eventId, third.sequence);
    check(fromCursor[0].sequence === third.sequence + 1, 'resumed after the IndexedDB Cursor');
    await worker.close();

    // The doubter replays the Group from 0 and refuses each Event (Group Authority mismatch).
    await within(doubter.connect(), 'doubter HELLO');
    await doubter.subscribe([group]);
    const deadline = Date.now() + WAIT_MS;
    while (doubter.rejected.length < fourth.sequence && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    summary.doubter = { rejected: doubter.rejected.map((r) => r.reason), cursor: doubter.cursor(group), head: fourth.sequence };

    Object.assign(summary, {
      epoch, workerEpoch, again, durable,
      events: [first, second, third, fourth].map((e) => ({ groupId: e.groupId, sequence: e.sequence, text: e.text })),
      received: [...inGroup, ...inOther, ...resumed, ...fromCursor].map((e) => e.text),
      cursors: { [group]: await store.cursor(w.id, group), [other]: await store.cursor(w.id, other) },
    });
    return summary;
  } finally {
    await coordinator.close();
    await worker.close();
    await doubter.close();
    store.close();
    indexedDB.deleteDatabase(storeName);
  }
}
