// The Node gateway host (`GroupGateway` on an `http` server, the `ws` package) and the Node
// `AgentClient`, both over the Rust sans-IO machines: the end-to-end script, fan-out between
// connections, refused HELLO, the host's limits, framing violations over a real socket, and the
// WebAssembly entries refusing both classes.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { COORDINATOR, GROUP, OTHER_GROUP, WORKER, nodeGateway, organization, within } from './network-support.mjs';
import { badInputs, endToEnd, expectedAnswers, oversized, readUntil } from './network-script.mjs';
import { JS, backends } from './support.mjs';

const { WebSocket } = createRequire(`${JS}/package.json`)('ws');

let api;
let wasm;
let org;
let host;

before(async () => {
  const all = await backends();
  api = all['napi (ESM)'];
  wasm = all['wasm (ESM)'];
  org = organization(api);
  host = await nodeGateway(org);
});

after(async () => { await host?.close(); });

test('end to end through the Node gateway: two Groups, Commands, Events in order, ACK, reconnect from the Cursor', async () => {
  const { events } = await endToEnd(org, host.url);
  assert.equal(events.length, 4);
  // The Events are the Core's: the same signed bytes a replay gives.
  const page = await host.core.replay(GROUP, { after: events[0].sequence - 1, limit: 1 });
  assert.equal(page.events[0].text, events[0].text);
});

test('fan-out: a Command on one connection wakes the subscribers on the others', async () => {
  const store = new api.SqliteAgentStore(':memory:');
  const coordinator = org.client(host.url, COORDINATOR);
  const watchers = [org.client(host.url, WORKER, { store }), org.client(host.url, WORKER)];
  try {
    const epoch = await within(coordinator.connect(), 'HELLO');
    for (const w of watchers) {
      await within(w.connect(), 'HELLO');
      await w.subscribe([OTHER_GROUP]);
    }
    const head = (await host.core.replay(OTHER_GROUP, { after: 0, limit: 10_000 })).lastSequence;
    const sent = await within(coordinator.send(org.post(OTHER_GROUP, COORDINATOR, epoch, 'fan-out')), 'send');
    for (const w of watchers) {
      const seen = await readUntil(w, OTHER_GROUP, sent.eventId, 0);
      assert.equal(seen.length, head + 1);
    }
  } finally {
    await coordinator.close();
    for (const w of watchers) await w.close();
    store.close?.();
  }
});

test('a refused HELLO rejects with AuthenticationError (wire code) and does not reconnect', async () => {
  // The Coordinator's key ID with another key's seed: the challenge signature does not verify.
  const wrong = api.SigningKey.fromSeed(org.key(COORDINATOR).keyId, new Uint8Array(32).fill(99));
  const client = new api.AgentClient(host.url, { agentId: COORDINATOR, signingKey: wrong, registry: org.registry,
    authorityId: org.authority.id, initialBackoffMs: 10 });
  await assert.rejects(within(client.connect(), 'refused HELLO'),
    (error) => error instanceof api.AuthenticationError && error.code === 'AUTH_INVALID_SIGNATURE');
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(client.connections, 1, 'no reconnect after a refused HELLO');
  await client.close();
});

test('a Group the Agent may not see is refused at SUBSCRIBE like an absent one, and the connection stays open', async () => {
  const outsider = org.client(host.url, 'urn:missionweaveprotocol:agent:stranger');
  try {
    const epoch = await within(outsider.connect(), 'HELLO');
    await outsider.subscribe([GROUP]);
    const deadline = Date.now() + 30_000;
    while (outsider.errors.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(outsider.errors[0]?.code, 'GROUP_NOT_FOUND');
    assert.equal(outsider.errors[0]?.message, 'group not found');
    // Still open: a Command is answered (refused, as the Group is hidden).
    await assert.rejects(outsider.send(org.post(GROUP, 'urn:missionweaveprotocol:agent:stranger', epoch)),
      (error) => error instanceof api.CommandRefused && error.code === 'GROUP_NOT_FOUND');
    assert.equal(outsider.connections, 1);
  } finally {
    await outsider.close();
  }
});

test('bad input over a real socket: one ERROR, then the close code the machine names (the corpus)', async () => {
  const answers = await badInputs(host.url);
  assert.deepEqual(answers, expectedAnswers());
  assert.equal(answers['a frame before HELLO'].close, 'open');
  assert.equal(answers['not JSON'].close, 1007);
});

test('the host limits: maxFrameBytes sets the message limit; an unknown limit is an ArgumentError', async () => {
  const small = await nodeGateway(org, { limits: { maxFrameBytes: 1024 } });
  try {
    const big = await oversized(small.url, 2048);
    assert.equal(big.close, 1009);
    assert.match(big.frames[0].error.message, /1024 bytes/);
  } finally {
    await small.close();
  }
  const sessions = new api.SessionAuthority(new api.AgentKeyRegistry());
  assert.throws(() => new api.GroupGateway(host.core, sessions, { limits: { maxFrames: 1 } }),
    (error) => error instanceof api.ArgumentError && /maxFrames/.test(error.message));
  assert.throws(() => new api.GroupGateway(host.core, sessions, { limits: { maxQueueFrames: 0 } }),
    (error) => error instanceof api.ArgumentError);
  assert.throws(() => new api.GroupGateway({}, sessions), (error) => error instanceof api.ArgumentError);
  assert.throws(() => new api.GroupGateway(host.core, {}), (error) => error instanceof api.ArgumentError);
  // A freed SessionAuthority or Core lends nothing (the freed-object error, never a crash).
  const freed = new api.SessionAuthority(new api.AgentKeyRegistry());
  freed.free();
  assert.throws(() => new api.GroupGateway(host.core, freed), (error) => error instanceof api.ArgumentError);
  const core = org.core();
  core.free();
  assert.throws(() => new api.GroupGateway(core, sessions), (error) => error instanceof api.ArgumentError);
});

test('attached to an https server: wss with a custom CA (TLS 1.3), the same machine', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mwp-wss-'));
  const [cert, key] = [join(dir, 'cert.pem'), join(dir, 'key.pem')];
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key,
    '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  const server = createTlsServer({ cert: readFileSync(cert), key: readFileSync(key), minVersion: 'TLSv1.3' });
  const sessions = new api.SessionAuthority(new api.AgentKeyRegistry());
  const gateway = new api.GroupGateway(host.core, sessions).attach(server);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `wss://127.0.0.1:${server.address().port}/ws`;
  const client = org.client(url, COORDINATOR, { ca: readFileSync(cert, 'utf8') });
  try {
    const epoch = await within(client.connect(), 'HELLO over wss');
    await client.subscribe([GROUP]);
    const event = await within(client.send(org.post(GROUP, COORDINATOR, epoch, 'over tls')), 'send over wss');
    assert.equal(event.groupId, GROUP);
    assert.equal(gateway.connectionCount, 1);
    assert.equal(gateway.agentConnections(COORDINATOR), 1);
    // Without the CA the handshake fails (Node's roots do not hold it).
    const untrusted = org.client(url, COORDINATOR, { reconnect: false });
    await assert.rejects(within(untrusted.connect(), 'untrusted'), (error) => error instanceof api.ConnectionLost);
    await untrusted.close();
  } finally {
    await client.close();
    await gateway.close();
    assert.equal(gateway.connectionCount, 0);
    server.closeAllConnections?.();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a catch-up larger than the queue: bounded drains, blocked Groups resume, every Event once and in order', async () => {
  const small = await nodeGateway(org, { limits: { maxQueueFrames: 8, groupShareFrames: 4 } });
  const client = org.client(small.url, WORKER);
  try {
    const epoch = await within(client.connect(), 'HELLO');
    // 60 Events committed before the subscription (the Core directly: the gateway reads them back).
    for (let i = 0; i < 30; i += 1) {
      await small.core.perform(org.post(GROUP, WORKER, epoch, `backlog ${i}`));
      await small.core.perform(org.post(OTHER_GROUP, WORKER, epoch, `backlog ${i}`));
    }
    const heads = {};
    for (const group of [GROUP, OTHER_GROUP]) heads[group] = (await small.core.replay(group, { after: 0, limit: 10_000 })).lastSequence;
    await client.subscribe([GROUP, OTHER_GROUP]);
    for (const group of [GROUP, OTHER_GROUP]) {
      for (let expected = 1; expected <= heads[group]; expected += 1) {
        const event = await within(client.nextEvent(group), `${group} ${expected}`);
        assert.equal(event.sequence, expected);
      }
    }
    assert.deepEqual(client.errors, [], 'a catch-up is no backpressure error');
  } finally {
    await client.close();
    await small.close();
  }
});

test('the host timer: an unauthenticated connection past handshakeTimeoutMs gets AUTH_REQUIRED and close 1008', async () => {
  const slow = await nodeGateway(org, { limits: { handshakeTimeoutMs: 500 } });
  try {
    const { frames, close } = await within(new Promise((resolve) => {
      const socket = new WebSocket(slow.url);
      const seen = [];
      socket.on('message', (data) => seen.push(JSON.parse(data.toString('utf8'))));
      socket.on('close', (code) => resolve({ frames: seen, close: code }));
    }), 'handshake timeout');
    assert.equal(close, 1008);
    assert.equal(frames.length, 1);
    assert.equal(frames[0].error.code, 'AUTH_REQUIRED');
    assert.equal(frames[0].error.fatal, true);
  } finally {
    await slow.close();
  }
});

test('other upgrade paths are not served', async () => {
  const server = createServer();
  const sessions = new api.SessionAuthority(new api.AgentKeyRegistry());
  const gateway = new api.GroupGateway(host.core, sessions).attach(server);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const client = org.client(`ws://127.0.0.1:${server.address().port}/other`, COORDINATOR, { reconnect: false });
    await assert.rejects(client.connect(), (error) => error instanceof api.ConnectionLost);
    await client.close();
  } finally {
    await gateway.close();
    await new Promise((resolve) => server.close(resolve));
  }
});

test('argument checks of AgentClient', () => {
  const base = { agentId: COORDINATOR, signingKey: org.key(COORDINATOR), registry: org.registry, authorityId: org.authority.id };
  assert.throws(() => new api.AgentClient('http://x/ws', base), api.ArgumentError);
  assert.throws(() => new api.AgentClient('ws://x/ws', { ...base, ca: 'pem' }), api.ArgumentError);
  assert.throws(() => new api.AgentClient('ws://x/ws', { ...base, signingKey: 'k' }), api.ArgumentError);
  assert.throws(() => new api.AgentClient('ws://x/ws', { ...base, registry: new Uint8Array([1, 2]) }));
  assert.throws(() => new api.AgentClient('ws://x/ws', { ...base, commandTimeoutMs: 0 }), api.ArgumentError);
});

test('the WebAssembly entry: AgentClient over the runtime\'s WebSocket (refused without one), no GroupGateway', () => {
  const worg = organization(wasm);
  const make = () => new wasm.AgentClient('ws://127.0.0.1:1/ws', { agentId: COORDINATOR, signingKey: worg.key(COORDINATOR),
    registry: worg.registry, authorityId: worg.authority.id });
  // Node 22+ and browsers have a global WebSocket (the browser client, browser-client.test.mjs).
  if (typeof globalThis.WebSocket === 'function') assert.equal(make().agentId, COORDINATOR);
  else assert.throws(make, (error) => error instanceof wasm.ArgumentError && /WebSocket/.test(error.message));
  assert.throws(() => new wasm.AgentClient('ws://127.0.0.1:1/ws', { agentId: COORDINATOR, signingKey: worg.key(COORDINATOR),
    registry: worg.registry, authorityId: worg.authority.id, ca: 'pem' }), wasm.ArgumentError);
  const core = worg.core();
  const sessions = new wasm.SessionAuthority(new wasm.AgentKeyRegistry());
  assert.throws(() => new wasm.GroupGateway(core, sessions), (error) => error instanceof wasm.ArgumentError && /Node/.test(error.message));
});
