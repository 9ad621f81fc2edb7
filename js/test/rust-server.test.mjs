// The Node AgentClient against the real Rust server binary (`missionweaveprotocol-server --dev`:
// TLS 1.3 on loopback, its throwaway certificate trusted through `ca`), over a SQLite store seeded
// by a JavaScript Core; and the same bad inputs answered with identical ERROR frames and close
// codes by the Rust server and the Node gateway host.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { COORDINATOR, nodeGateway, organization, rustServer, within } from './network-support.mjs';
import { authenticatedRefusals, badInputs, endToEnd, expectedAnswers } from './network-script.mjs';
import { backends } from './support.mjs';

let api;
let org;
let server;
let host;

before(async () => {
  api = (await backends())['napi (ESM)'];
  org = organization(api);
  server = await rustServer(org);
  host = await nodeGateway(org);
});

after(async () => {
  await host?.close();
  await server?.stop();
});

test('end to end against the Rust server over wss (custom CA): two Groups, Commands, Events, ACK, reconnect from the Cursor', async () => {
  assert.match(server.url, /^wss:\/\/127\.0\.0\.1:\d+\/ws$/);
  await endToEnd(org, server.url, { ca: server.ca });
});

test('without the dev certificate as CA the TLS handshake fails', async () => {
  const client = org.client(server.url, COORDINATOR, { reconnect: false });
  await assert.rejects(within(client.connect(), 'untrusted TLS'), (error) => error instanceof api.ConnectionLost);
  await client.close();
});

test('error frames for bad input: the Rust server and the Node gateway answer the corpus (tests/errors/gateway-frames.json) identically', async () => {
  const rust = await badInputs(server.url, { ca: server.ca });
  const node = await badInputs(host.url);
  assert.deepEqual(rust, expectedAnswers());
  assert.deepEqual(node, rust);
});

test('refusals after HELLO are the same wire errors from the Rust server and the Node gateway', async () => {
  const rust = await authenticatedRefusals(org, server.url, { ca: server.ca });
  const node = await authenticatedRefusals(org, host.url);
  assert.deepEqual(node, rust);
  assert.equal(rust.subscribe[0].code, 'GROUP_NOT_FOUND');
  assert.equal(rust['stale epoch'].code, 'AUTH_STALE_SESSION');
  assert.equal(rust['absent Group'].code, 'GROUP_NOT_FOUND');
});
