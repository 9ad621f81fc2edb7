// The Node `GroupGateway`'s `cursors` option (the reference's `GroupGateway(cursors=…)`): an ACK
// that moves a Cursor forward is written into the store, a SUBSCRIBE from afterSequence 0 replays
// after the stored Cursor (a Cursor the Agent names is honoured, §16), duplicate and older ACKs
// are never written, a failing store is a retryable INTERNAL_ERROR, and without the option
// nothing is asked. Every decision is the Rust machine's (server/host_cursors.rs); the peer is
// the napi client session over a raw `ws` socket, so the replayed frames are seen as sent.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { GROUP, MAINS, OWNER, WORKER, nodeGateway, organization, within } from './network-support.mjs';
import { ADDON, JS, backends } from './support.mjs';

const require = createRequire(import.meta.url);
const { WebSocket } = createRequire(`${JS}/package.json`)('ws');
const raw = require(ADDON);

let api;
let org;

before(async () => {
  api = (await backends())['napi (ESM)'];
  org = organization(api);
});

/** A store that keeps every write as given (not monotonic itself) and counts reads. */
class Recording {
  constructor(stored = 0) { this.stored = stored; this.writes = []; this.reads = 0; }
  acknowledge(agentId, groupId, sequence) { this.writes.push([agentId, groupId, sequence]); this.stored = sequence; }
  async cursor() { this.reads += 1; return this.stored; }
}

/** The Worker over a raw socket, authenticated: `frames` (parsed, in order), `session`, `send`. */
async function rawWorker(url) {
  const session = new raw.ClientSession(WORKER, org.registryBytes, org.authority.id, org.key(WORKER).keyId,
    new Uint8Array(32).fill(24));
  assert.deepEqual(JSON.parse(session.status()), { ok: null });
  const socket = new WebSocket(url);
  const frames = [];
  let wake = () => {};
  const flush = () => { for (const out of session.pollOutput()) socket.send(out, { binary: false }); };
  socket.on('message', (data) => {
    frames.push(JSON.parse(data.toString('utf8')));
    session.onText(data, Date.now());
    flush();
    wake();
  });
  await new Promise((resolve, reject) => { socket.once('open', resolve); socket.once('error', reject); });
  /** Waits until `count` frames of `type` arrived after index `from`; those frames. */
  const waitFor = (type, count, from = 0) => within(new Promise((resolve) => {
    const check = () => {
      const found = frames.slice(from).filter((f) => f.frameType === type);
      if (found.length >= count) resolve(found.slice(0, count));
    };
    wake = check;
    check();
  }), `${count} ${type}`);
  session.start(Date.now());
  flush();
  await waitFor('HELLO', 2);
  assert.equal(frames[1].phase, 'server_accept');
  return {
    frames, waitFor,
    subscribe(after) { session.subscribe(JSON.stringify([{ groupId: GROUP, afterSequence: after }]), Date.now()); flush(); },
    ack(sequence) { session.acknowledge(GROUP, sequence, Date.now()); flush(); },
    raw(text) { socket.send(text, { binary: false }); },
    /** A PING and its reply: everything sent before was handled (the store called). */
    async sync() {
      const from = frames.length;
      session.ping(undefined, Date.now());
      flush();
      await waitFor('PING', 1, from);
    },
    close() { socket.close(1000); },
  };
}

const sequences = (frames) => frames.map((f) => f.event.sequence);

async function withGateway(cursors, run) {
  const host = await nodeGateway(org, { cursors });
  try {
    // Three Messages after the seed, so a Cursor has room to move.
    for (let i = 0; i < 3; i += 1) {
      await host.core.perform(org.command(GROUP, 'message.post', OWNER, 0, {
        messageId: `urn:missionweaveprotocol:message:cursors-${process.pid}-${i}-${Date.now()}`,
        conversationId: MAINS[GROUP][1],
        content: [{ type: 'text', text: `seed ${i}` }],
      }));
    }
    const head = (await host.core.replay(GROUP, { after: 0, limit: 10_000 })).lastSequence;
    await run(host, head);
  } finally {
    await host.close();
  }
}

test('ACKs are written into the cursors store and SUBSCRIBE from 0 resumes after the stored Cursor', async () => {
  const store = new api.SqliteAgentStore(':memory:');
  try {
    await withGateway(store, async (host, head) => {
      assert.ok(head >= 3);
      assert.equal(host.gateway.cursors, store);
      const first = await rawWorker(host.url);
      first.subscribe(0);
      assert.deepEqual(sequences(await first.waitFor('EVENT', head)), Array.from({ length: head }, (_, i) => i + 1));
      first.ack(2);
      await first.sync();
      assert.equal(store.cursor(WORKER, GROUP), 2);
      first.close();
      // A new connection from 0: only what follows the stored Cursor.
      const second = await rawWorker(host.url);
      second.subscribe(0);
      assert.deepEqual(sequences(await second.waitFor('EVENT', head - 2)), Array.from({ length: head - 2 }, (_, i) => i + 3));
      second.close();
      // A Cursor the Agent names is honoured (§16), below the stored one too.
      const third = await rawWorker(host.url);
      third.subscribe(1);
      assert.deepEqual(sequences(await third.waitFor('EVENT', head - 1)), Array.from({ length: head - 1 }, (_, i) => i + 2));
      third.close();
    });
  } finally {
    store.close();
  }
});

test('duplicate and older ACKs are never written: the stored Cursor never moves back', async () => {
  const store = new Recording();
  await withGateway(store, async (host, head) => {
    const worker = await rawWorker(host.url);
    worker.subscribe(0);
    await worker.waitFor('EVENT', head);
    assert.equal(store.reads, 1);
    for (const sequence of [3, 3, 1, 2, 3]) worker.ack(sequence);
    await worker.sync();
    assert.deepEqual(store.writes, [[WORKER, GROUP, 3]]);
    worker.ack(head);
    await worker.sync();
    assert.deepEqual(store.writes, [[WORKER, GROUP, 3], [WORKER, GROUP, head]]);
    worker.close();
  });
});

test('a failing store is a retryable INTERNAL_ERROR; the connection stays open', async () => {
  const failing = {
    acknowledge() { throw new Error('disk full'); },
    async cursor() { throw new Error('disk gone'); },
  };
  await withGateway(failing, async (host) => {
    const errors = [];
    host.gateway.addEventListener('error', (event) => errors.push(event.error));
    const worker = await rawWorker(host.url);
    worker.subscribe(0);
    const [refused] = await worker.waitFor('ERROR', 1);
    assert.equal(refused.error.code, 'INTERNAL_ERROR');
    assert.equal(refused.error.retryable, true);
    assert.ok(!refused.error.message.includes('disk'));
    worker.raw(JSON.stringify({ acknowledgements: [{ groupId: GROUP, sequence: 1 }], frameId: 'urn:missionweaveprotocol:frame:ack-1',
      frameType: 'ACK', protocolVersion: '0.1', sentAt: '2026-07-15T09:30:00Z' }));
    const [ackError] = await worker.waitFor('ERROR', 2).then((found) => found.slice(1));
    assert.equal(ackError.error.code, 'INTERNAL_ERROR');
    assert.equal(ackError.error.groupId, GROUP);
    assert.equal(ackError.error.relatedFrameId, 'urn:missionweaveprotocol:frame:ack-1');
    await worker.sync();
    assert.equal(errors.length, 2, 'each store failure is reported as an error event');
    worker.close();
  });
});

test('a cursor that is not a safe non-negative integer counts as a failed store', async () => {
  await withGateway({ acknowledge() {}, cursor: () => -1 }, async (host) => {
    const worker = await rawWorker(host.url);
    worker.subscribe(0);
    const [refused] = await worker.waitFor('ERROR', 1);
    assert.equal(refused.error.code, 'INTERNAL_ERROR');
    worker.close();
  });
});

test('without the option nothing is asked: replay after afterSequence', async () => {
  await withGateway(undefined, async (host, head) => {
    assert.equal(host.gateway.cursors, undefined);
    const worker = await rawWorker(host.url);
    worker.subscribe(0);
    await worker.waitFor('EVENT', head);
    worker.ack(head);
    await worker.sync();
    worker.close();
    const again = await rawWorker(host.url);
    again.subscribe(0);
    assert.deepEqual(sequences(await again.waitFor('EVENT', head)), Array.from({ length: head }, (_, i) => i + 1));
    again.close();
  });
});

test('a cursors object without the two methods is an ArgumentError', async () => {
  const core = org.core();
  const sessions = new api.SessionAuthority(new api.AgentKeyRegistry(), { secret: new Uint8Array(32).fill(7) });
  assert.throws(() => new api.GroupGateway(core, sessions, { cursors: {} }), api.ArgumentError);
});

after(() => {});
