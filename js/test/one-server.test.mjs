// Issue 24's "must show": the same end-to-end script passing from the four clients against ONE
// running server. One `missionweaveprotocol-server` process (the release binary, over SQLite,
// `--allow-insecure` on loopback so the browser joins over plain ws:// — this test only) serves,
// at the same time:
//   - the Rust client (`core/client/examples/participant.rs`, a process) as one Agent,
//   - the Python asyncio AgentClient (`one-server/participant.py`, a process; the wheel
//     installed in $MWP_PYTHON, default the venv of scripts/test-python.sh ($MWP_PY_VENV or
//     <repo>/.venv-ci) — scripts/test-all.sh runs that suite before this one),
//   - the Node AgentClient (napi, this process) as a third,
//   - the browser AgentClient (WebAssembly in headless Chromium, its key generated in the page,
//     its Cursors in IndexedDB) as the fourth.
// The script (written out in participant.rs): authenticate, subscribe to two Groups from the
// durable Cursors of an Agent-local store, send Commands in both, receive every client's Events
// in Group order acknowledging each, disconnect, reopen the store, authenticate again and
// resubscribe from the durable Cursors, send again, receive everything new.
// Checked: every client saw every text at the same (Group, sequence) — one order per Group —
// in ascending order; a new Session Epoch after the reconnect; the first Event after it is the
// successor of the Cursor at the disconnect (nothing twice, nothing lost). Each client checked
// contiguity itself. Nothing asserts on timing.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { chromium } from 'playwright-core';

import { startServer } from '../scripts/serve.mjs';
import { CHROMIUM, CHROMIUM_ARGS, DIST, REPO, TARGET } from './support.mjs';
import {
  AUTHORITY, COORDINATOR, GROUP, MAINS, OTHER_GROUP, WAIT_MS, WORKER, organization, rustServer, within,
} from './network-support.mjs';
import { participate } from './one-server/participant.mjs';

const SCRIBE = 'urn:missionweaveprotocol:agent:scribe';
const AUDITOR = 'urn:missionweaveprotocol:agent:auditor';
const SEEDS = { [SCRIBE]: 25, [AUDITOR]: 28 };
const WORKER_KEY_ID = 'urn:missionweaveprotocol:key:24';
const TAGS = { rust: AUDITOR, python: SCRIBE, node: COORDINATOR, browser: WORKER };
const COUNT = 2;
const GROUPS = [GROUP, OTHER_GROUP];
/** Every text the script posts: each client's COUNT first ones and one `again` in each Group. */
const EXPECT = GROUPS.flatMap((_, g) => Object.keys(TAGS).flatMap((tag) =>
  [...Array.from({ length: COUNT }, (__, i) => String(i)), 'again'].map((suffix) => `one-server:${tag}:${g}:${suffix}`)));

const PYTHON = process.env.MWP_PYTHON ?? join(process.env.MWP_PY_VENV ?? join(REPO, '.venv-ci'), 'bin', 'python');
const RUST_PARTICIPANT = process.env.MWP_PARTICIPANT_BIN ?? join(TARGET, 'release', 'examples', 'participant');

let napi;
let web;
let context;
let profile;
let page;
let server;
let stores;
let org;
const consoleLines = [];

before(async () => {
  for (const [path, how] of [[CHROMIUM, 'apt-get install -y chromium (or set CHROMIUM_PATH)'],
    [PYTHON, 'scripts/test-python.sh creates it with the wheel installed (or set MWP_PYTHON)'],
    [RUST_PARTICIPANT, 'cargo build --release -p missionweaveprotocol-client --example participant']]) {
    if (!existsSync(path)) throw new Error(`${path} is missing: ${how}`);
  }
  napi = await import(join(DIST, 'node.mjs'));
  web = await startServer();
  profile = mkdtempSync(join(tmpdir(), 'mwp-chromium-one-server-'));
  stores = mkdtempSync(join(tmpdir(), 'mwp-one-server-stores-'));
  context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  page = await context.newPage();
  page.on('console', (message) => consoleLines.push(`${message.type()}: ${message.text()}`));
  page.on('pageerror', (error) => consoleLines.push(`pageerror: ${error.message}`));
  await page.goto(`${web.url}/test/browser-client.html`);
  const publicKey = await page.evaluate(async (keyId) => {
    const api = await import('/dist/wasm.mjs');
    const { pageKey } = await import('/test/browser-client-script.mjs');
    const made = pageKey(api, keyId);
    window.__workerKey = made.key;
    return made.publicKey;
  }, WORKER_KEY_ID);
  org = organization(napi, { publicKeys: { [WORKER]: publicKey }, extraAgents: Object.entries(SEEDS) });
  server = await rustServer(org, { insecure: true, members: [SCRIBE, AUDITOR] });
});

after(async () => {
  await context?.close();
  await web?.close();
  await server?.stop();
  if (profile) rmSync(profile, { recursive: true, force: true });
  if (stores) rmSync(stores, { recursive: true, force: true });
});

/** Runs `command args`; resolves to its stdout (rejects with stderr on a non-zero exit). */
function run(command, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => { stdout += chunk; });
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0) resolve(stdout);
      else reject(new Error(`${command} exited (${code ?? signal}):\n${stderr}\n${stdout}`));
    });
  });
}

function params(agentId, tag) {
  return {
    url: server.url, agentId, authorityId: AUTHORITY, groups: GROUPS, conversations: GROUPS.map((g) => MAINS[g][1]),
    tag, tags: Object.keys(TAGS), count: COUNT,
  };
}

async function rustClient() {
  const p = params(AUDITOR, 'rust');
  const key = org.key(AUDITOR);
  const out = await run(RUST_PARTICIPANT, [p.url, '-', server.registryPath, AUDITOR, key.keyId,
    Buffer.from(new Uint8Array(32).fill(SEEDS[AUDITOR])).toString('base64url'), AUTHORITY, p.groups.join(','),
    p.conversations.join(','), join(stores, 'rust.db'), p.tag, p.tags.join(','), String(COUNT)]);
  return JSON.parse(out.trim().split('\n').pop());
}

async function pythonClient() {
  const p = params(SCRIBE, 'python');
  const config = { ...p, keyId: org.key(SCRIBE).keyId, seedHex: Buffer.from(new Uint8Array(32).fill(SEEDS[SCRIBE])).toString('hex'),
    registryPath: server.registryPath, storePath: join(stores, 'python.db') };
  const out = await run(PYTHON, [join(REPO, 'js', 'test', 'one-server', 'participant.py'), JSON.stringify(config)]);
  return JSON.parse(out.trim().split('\n').pop());
}

async function browserClient() {
  const p = { ...params(WORKER, 'browser'), registryBytes: [...org.registryBytes] };
  try {
    return await page.evaluate(async (q) => {
      const api = await import('/dist/wasm.mjs');
      const { participate: inPage } = await import('/test/one-server/participant.mjs');
      const name = `mwp-one-server-${crypto.randomUUID()}`;
      try {
        return await inPage(api, q, window.__workerKey, () => api.IndexedDbCursorStore.open(name));
      } finally {
        indexedDB.deleteDatabase(name);
      }
    }, p);
  } catch (error) {
    throw new Error(`${error.message}\n--- page console:\n${consoleLines.join('\n')}`);
  }
}

test('one running server: the Rust, Python, Node and browser clients each run the script (two Groups, disconnect, reconnect from the Cursor) and see one order per Group', { timeout: 5 * WAIT_MS }, async () => {
  const nodeStore = join(stores, 'node.db');
  const node = participate(napi, { ...params(COORDINATOR, 'node'), registryBytes: [...org.registryBytes] }, org.key(COORDINATOR),
    () => new napi.SqliteAgentStore(nodeStore));
  let results;
  try {
    results = await within(Promise.all([rustClient(), pythonClient(), node, browserClient()]), 'the four clients', 4 * WAIT_MS);
  } catch (error) {
    throw new Error(`${error.message}\n--- server stderr:\n${server.stderr}`);
  }
  const [rust, python, fromNode, browser] = results;
  const all = { rust, python, node: fromNode, browser };
  for (const [name, result] of Object.entries(all)) {
    const [first, second] = result.epochs;
    assert.ok(first >= 1 && second > first, `${name}: a new Session Epoch after the reconnect (${result.epochs})`);
    assert.equal(result.seen.length, EXPECT.length, `${name} saw every client's Messages in both Groups`);
    GROUPS.forEach((_, g) => {
      assert.ok(result.cursors[g] >= 1, `${name}: a durable Cursor in Group ${g}`);
      assert.equal(result.resumedAt[g], result.cursors[g] + 1, `${name}: resumed right after its Cursor in Group ${g}`);
      const sequences = result.seen.filter(([i]) => i === g).map(([, sequence]) => sequence);
      assert.deepEqual(sequences, [...sequences].sort((a, b) => a - b), `${name}: Group order in Group ${g}`);
    });
  }
  // One order per Group: every client saw each text at the same (Group, sequence).
  const order = (result) => Object.fromEntries(result.seen.map(([g, sequence, text]) => [text, `${g}:${sequence}`]));
  for (const other of [python, fromNode, browser]) assert.deepEqual(order(other), order(rust));
  assert.deepEqual(new Set(rust.seen.map(([, , text]) => text)), new Set(EXPECT));
  // The texts of Group g are in Group g.
  for (const [g, , text] of rust.seen) assert.equal(text.split(':')[2], String(g));
  assert.ok(!consoleLines.some((line) => /^(error|pageerror)/.test(line)), consoleLines.join('\n'));
});
