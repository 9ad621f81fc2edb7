// The browser AgentClient (issue 24 item 5) in Debian's Chromium (headless, playwright-core)
// against the real Rust server binary on loopback (`--allow-insecure`: plain ws:// for this test
// only). The page imports the WebAssembly entry (/dist/wasm.mjs) from the static server and runs
// the end-to-end script (browser-client-script.mjs): authenticate, subscribe to two Groups, send
// Commands, receive the Events, disconnect, reconnect from the IndexedDB Cursor. The Worker's key
// is generated in the page (WebCrypto); only its public key leaves the page, into the server's
// Registry and Agent Card. Nothing asserts on timing.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { chromium } from 'playwright-core';

import { startServer } from '../scripts/serve.mjs';
import { CHROMIUM, CHROMIUM_ARGS, DIST } from './support.mjs';
import {
  ABSENT_GROUP, AUTHORITY, COORDINATOR, GROUP, MAINS, OTHER_GROUP, REGISTRAR, WAIT_MS, WORKER, organization, rustServer,
} from './network-support.mjs';

const WORKER_KEY_ID = 'urn:missionweaveprotocol:key:24';

let napi;
let web;
let context;
let profile;
let page;
let server;
let org;
const consoleLines = [];

before(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  napi = await import(join(DIST, 'node.mjs'));
  web = await startServer();
  profile = mkdtempSync(join(tmpdir(), 'mwp-chromium-client-'));
  context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  page = await context.newPage();
  page.on('console', (message) => consoleLines.push(`${message.type()}: ${message.text()}`));
  page.on('pageerror', (error) => consoleLines.push(`pageerror: ${error.message}`));
  await page.goto(`${web.url}/test/browser-client.html`);
  // The Worker's key: generated in the page, kept there (window.__workerKey).
  const publicKey = await page.evaluate(async (keyId) => {
    const api = await import('/dist/wasm.mjs');
    const { pageKey } = await import('/test/browser-client-script.mjs');
    const made = pageKey(api, keyId);
    window.__workerKey = made.key;
    return made.publicKey;
  }, WORKER_KEY_ID);
  assert.equal(publicKey.length, 32);
  org = organization(napi, { publicKeys: { [WORKER]: publicKey } });
  server = await rustServer(org, { insecure: true });
  assert.match(server.url, /^ws:\/\/127\.0\.0\.1:\d+\/ws$/);
});

after(async () => {
  await context?.close();
  await web?.close();
  await server?.stop();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

test('Chromium: the wasm AgentClient runs the end-to-end script against the Rust server, Cursors in IndexedDB', { timeout: 5 * WAIT_MS }, async () => {
  const params = {
    url: server.url,
    registryBytes: [...org.registryBytes],
    authorityId: AUTHORITY,
    registrarId: REGISTRAR,
    coordinator: { id: COORDINATOR, keyId: org.key(COORDINATOR).keyId, seed: [...new Uint8Array(32).fill(23)] },
    worker: { id: WORKER },
    groups: [GROUP, OTHER_GROUP],
    absentGroup: ABSENT_GROUP,
    conversations: { [GROUP]: MAINS[GROUP][1], [OTHER_GROUP]: MAINS[OTHER_GROUP][1] },
  };
  assert.deepEqual(napi.SigningKey.fromSeed(params.coordinator.keyId, Uint8Array.from(params.coordinator.seed)).publicKey,
    org.key(COORDINATOR).publicKey, 'the imported seed is the registered Coordinator key');
  let summary;
  try {
    summary = await page.evaluate(async (p) => {
      const api = await import('/dist/wasm.mjs');
      const { run } = await import('/test/browser-client-script.mjs');
      return run(api, p, window.__workerKey);
    }, params);
  } catch (error) {
    throw new Error(`${error.message}\n--- page console:\n${consoleLines.join('\n')}\n--- server stderr:\n${server.stderr}`);
  }
  assert.ok(summary.again > summary.workerEpoch, 'a new Session Epoch after the reconnect');
  assert.deepEqual(summary.refusals, [['AUTH_STALE_SESSION', false], ['GROUP_NOT_FOUND', false]]);
  const [first, second, third, fourth] = summary.events;
  assert.deepEqual([first.groupId, second.groupId, third.groupId, fourth.groupId], [GROUP, OTHER_GROUP, GROUP, GROUP]);
  assert.equal(summary.durable, third.sequence, 'the IndexedDB Cursor survived the client');
  assert.deepEqual(summary.cursors, { [GROUP]: fourth.sequence, [OTHER_GROUP]: second.sequence });
  // Every Event the page handed on verifies here too (napi, six stages) and is the Authority's.
  for (const text of summary.received) {
    const verified = napi.verifySignedDocument('event', text, org.registry);
    assert.deepEqual([verified.principal.type, verified.principal.id], ['service', AUTHORITY]);
  }
  // The negative: the Group's Events, refused in wasm when another Authority is expected.
  assert.equal(summary.doubter.cursor, 0, 'no Event handed on');
  assert.ok(summary.doubter.rejected.length >= summary.doubter.head, JSON.stringify(summary.doubter));
  for (const reason of summary.doubter.rejected) assert.equal(reason, 'the Event is not signed by the Group Authority');
  assert.ok(!consoleLines.some((line) => /^(error|pageerror)/.test(line)), consoleLines.join('\n'));
});
