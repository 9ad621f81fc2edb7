// The end-to-end script every host runs (issue 24, "Must show"): authenticate, subscribe to two
// Groups, send Commands, receive the Events in Group order, acknowledge, disconnect, reconnect
// from the Cursor; and the bad inputs whose ERROR frames must be identical on every host.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { ABSENT_GROUP, COORDINATOR, GROUP, OTHER_GROUP, WAIT_MS, WORKER, within } from './network-support.mjs';
import { JS, REPO } from './support.mjs';

const require = createRequire(`${JS}/package.json`);
const { WebSocket } = require('ws');

/** Reads `client`'s Events of `group` until `eventId` arrives: every Event, checked gap-free from `from`. */
export async function readUntil(client, group, eventId, from) {
  const seen = [];
  let expected = from + 1;
  for (;;) {
    const event = await within(client.nextEvent(group), `${group} Event after ${expected - 1}`);
    assert.equal(event.groupId, group);
    assert.equal(event.sequence, expected, 'Events come in Group order, without gaps or repeats');
    assert.ok(event.inOrder);
    expected += 1;
    seen.push(event);
    await client.acknowledge(event);
    if (event.eventId === eventId) return seen;
  }
}

/**
 * The script: the Coordinator and the Worker (with a durable store) subscribe to both Groups; the
 * Coordinator's Commands come back as their Events and reach the Worker in order; a refused
 * Command is a typed `CommandRefused` with the wire code; the Worker's socket drops and it
 * reconnects (new Session Epoch) from its Cursor; then a new client over the same store resumes
 * after the acknowledged Cursor.
 */
export async function endToEnd(org, url, options = {}) {
  const { api } = org;
  const store = new api.SqliteAgentStore(':memory:');
  const coordinator = org.client(url, COORDINATOR, options);
  let worker = org.client(url, WORKER, { ...options, store, initialBackoffMs: 50 });
  try {
    const epoch = await within(coordinator.connect(), 'coordinator HELLO');
    assert.ok(epoch >= 1);
    assert.equal(coordinator.sessionEpoch, epoch);
    const workerEpoch = await within(worker.connect(), 'worker HELLO');
    await coordinator.subscribe([GROUP, OTHER_GROUP]);
    await worker.subscribe([GROUP, OTHER_GROUP]);

    // Commands -> their Events (the sender gets the Command's first Event).
    const first = await within(coordinator.send(org.post(GROUP, COORDINATOR, epoch, 'one')), 'post one');
    assert.equal(first.groupId, GROUP);
    assert.equal(first.kind, 'message.posted');
    assert.equal(first.document.actor.id, COORDINATOR);
    const second = await within(coordinator.send(org.post(OTHER_GROUP, COORDINATOR, epoch, 'two')), 'post two');
    assert.equal(second.groupId, OTHER_GROUP);

    // The Worker gets both Groups' Events in order, from the start (its Cursor is 0).
    const inGroup = await readUntil(worker, GROUP, first.eventId, 0);
    const inOther = await readUntil(worker, OTHER_GROUP, second.eventId, 0);
    assert.equal(inGroup.at(-1).text, first.text, 'the subscriber gets the same signed bytes');
    assert.equal(store.cursor(WORKER, GROUP), first.sequence);
    assert.equal(store.cursor(WORKER, OTHER_GROUP), second.sequence);
    // The Coordinator's own subscription delivers the same Events.
    await readUntil(coordinator, GROUP, first.eventId, 0);

    // Refusals: a stale Session Epoch, a Group that does not exist (typed, wire codes, §19).
    await assert.rejects(coordinator.send(org.post(GROUP, COORDINATOR, epoch + 5, 'stale')),
      (error) => error instanceof api.CommandRefused && error.code === 'AUTH_STALE_SESSION' && error.error.relatedActionId !== undefined);
    await assert.rejects(coordinator.send(org.post(ABSENT_GROUP, COORDINATOR, epoch, 'nowhere')),
      (error) => error instanceof api.CommandRefused && error.code === 'GROUP_NOT_FOUND' && error.retryable === false);

    // Disconnect: the Worker's socket drops; it reconnects (a new Session Epoch) from its Cursor.
    await worker.drop();
    const again = await within(worker.authenticated(), 'worker reconnect');
    assert.ok(again > workerEpoch, 'a new Session Epoch after the reconnect');
    assert.equal(worker.connections, 2);
    const third = await within(coordinator.send(org.post(GROUP, COORDINATOR, epoch, 'three')), 'post three');
    const resumed = await readUntil(worker, GROUP, third.eventId, first.sequence);
    assert.equal(resumed[0].sequence, first.sequence + 1, 'no Event is delivered twice after the reconnect');

    // A new client over the same store resumes after the acknowledged Cursor.
    await worker.close();
    const fourth = await within(coordinator.send(org.post(GROUP, COORDINATOR, epoch, 'four')), 'post four');
    worker = org.client(url, WORKER, { ...options, store });
    await within(worker.connect(), 'new worker HELLO');
    await worker.subscribe([GROUP]);
    const fromCursor = await readUntil(worker, GROUP, fourth.eventId, third.sequence);
    assert.equal(fromCursor[0].sequence, third.sequence + 1);
    return { epoch, events: [first, second, third, fourth] };
  } finally {
    await coordinator.close();
    await worker.close();
    store.close?.();
  }
}

/** The cross-host corpus of bad input and the answers every gateway host gives (tests/errors/gateway-frames.json). */
export const GATEWAY_FRAMES = JSON.parse(readFileSync(join(REPO, 'tests', 'errors', 'gateway-frames.json'), 'utf8'));

/**
 * Raw WebSocket exchanges with the corpus' bad input, one connection each: `{name: {frames,
 * close}}`, the frames the server answered (frame IDs replaced, `occurredAt` removed) and the
 * close code (`"open"`: still open).
 */
export async function badInputs(url, { ca } = {}) {
  const out = {};
  for (const c of GATEWAY_FRAMES.cases) {
    if (c.oversizedBytes !== undefined) out[c.name] = await oversized(url, c.oversizedBytes, { ca });
    else if (c.text !== undefined) out[c.name] = await exchange(url, ca, c.text);
    else if (c.textHex !== undefined) out[c.name] = await exchange(url, ca, { text: Buffer.from(c.textHex, 'hex') });
    else out[c.name] = await exchange(url, ca, { binary: Buffer.from(c.binaryHex, 'hex') });
  }
  return out;
}

/** What the corpus expects, in the shape `badInputs` answers. */
export function expectedAnswers() {
  return Object.fromEntries(GATEWAY_FRAMES.cases.map((c) => [c.name, { frames: c.frames, close: c.close }]));
}

function exchange(url, ca, message) {
  return within(new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { ...(ca ? { ca, minVersion: 'TLSv1.3' } : {}), skipUTF8Validation: true });
    const frames = [];
    let timer;
    const done = (close) => { clearTimeout(timer); resolve({ frames, close }); };
    socket.on('open', () => {
      if (typeof message === 'string') socket.send(message);
      else if (message.text) socket.send(message.text, { binary: false });
      else socket.send(message.binary, { binary: true });
    });
    socket.on('message', (data) => {
      const frame = JSON.parse(data.toString('utf8'));
      frames.push(normalize(frame));
      // A refusal that keeps the connection open: after its ERROR, a short wait for anything
      // more (a fatal one is followed by the server's close at once).
      clearTimeout(timer);
      timer = setTimeout(() => { socket.close(1000); }, 2000);
    });
    socket.on('close', (code) => done(code === 1000 || code === 1005 ? 'open' : code));
    socket.on('error', reject);
  }), `bad input exchange with ${url}`);
}

// The members that differ by run: frame IDs (random per connection) and times.
function normalize(frame) {
  const copy = JSON.parse(JSON.stringify(frame));
  if (typeof copy.frameId === 'string') copy.frameId = '<frame>';
  if (copy.error && typeof copy.error === 'object') delete copy.error.occurredAt;
  return copy;
}

/** One message over the limit, declared in its header (`bytes` long, only the start sent). */
export function oversized(url, bytes, { ca } = {}) {
  return within(new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { ...(ca ? { ca, minVersion: 'TLSv1.3' } : {}) });
    const frames = [];
    socket.on('open', () => {
      // A masked text frame header with a 64-bit length, then a few payload bytes.
      const header = Buffer.alloc(14);
      header[0] = 0x81;
      header[1] = 0x80 | 127;
      header.writeBigUInt64BE(BigInt(bytes), 2);
      socket._socket.write(Buffer.concat([header, Buffer.from('{"a":')]));
    });
    socket.on('message', (data) => frames.push(normalize(JSON.parse(data.toString('utf8')))));
    socket.on('close', (code) => resolve({ frames, close: code }));
    socket.on('error', () => {});
    setTimeout(() => reject(new Error('no close after an oversized message')), 30_000).unref();
  }), 'oversized message');
}

/**
 * Refusals after HELLO, as the client reports them (the wire `error` objects, `relatedFrameId`
 * and `relatedActionId` replaced: they name this run's frames and Actions): a SUBSCRIBE naming
 * an absent Group, a Command for a stale Session Epoch, a Command for an absent Group.
 */
export async function authenticatedRefusals(org, url, options = {}) {
  const { api } = org;
  const client = org.client(url, COORDINATOR, options);
  const scrub = (error) => {
    const copy = { ...error };
    for (const name of ['relatedFrameId', 'relatedActionId']) if (name in copy) copy[name] = `<${name}>`;
    return copy;
  };
  try {
    const epoch = await within(client.connect(), 'HELLO');
    await client.subscribe([ABSENT_GROUP]);
    const deadline = Date.now() + WAIT_MS;
    while (client.errors.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    const out = { subscribe: client.errors.map(scrub) };
    for (const [name, command] of [
      ['stale epoch', org.post(GROUP, COORDINATOR, epoch + 5)],
      ['absent Group', org.post(ABSENT_GROUP, COORDINATOR, epoch)],
    ]) {
      out[name] = await client.send(command).then(() => 'accepted', (error) => {
        assert.ok(error instanceof api.CommandRefused, String(error));
        return scrub(error.error);
      });
    }
    return out;
  } finally {
    await client.close();
  }
}
