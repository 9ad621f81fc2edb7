// Issue 24's "must show": the four clients against ONE running server. One
// `missionweaveprotocol-server` process (the release binary, over SQLite, `--allow-insecure` on
// loopback so the browser joins over plain ws:// — this test only) serves, at the same time:
//   - the Rust client (`core/client/examples/participant.rs`, a process) as one Agent,
//   - the Python asyncio AgentClient (`one-server/participant.py`, a process; the wheel
//     installed in $MWP_PYTHON, default the venv of scripts/test-python.sh ($MWP_PY_VENV or
//     <repo>/.venv-ci) — scripts/test-all.sh runs that suite before this one),
//   - the Node AgentClient (napi, this process) as a third,
//   - the browser AgentClient (WebAssembly in headless Chromium, its key generated in the page)
//     as the fourth.
// Each authenticates, subscribes to the Group, sends two Commands, and reads the Group's verified
// Events in order until it received all eight — its own and the others' — acknowledging each.
// Checked: every client saw the eight Messages at the same sequences (one Group order), each
// list in ascending order; each client checked contiguity itself. Nothing asserts on timing.
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
  AUTHORITY, COORDINATOR, GROUP, MAINS, WAIT_MS, WORKER, organization, rustServer, within,
} from './network-support.mjs';
import { participate } from './one-server/participant.mjs';

const SCRIBE = 'urn:missionweaveprotocol:agent:scribe';
const AUDITOR = 'urn:missionweaveprotocol:agent:auditor';
const SEEDS = { [SCRIBE]: 25, [AUDITOR]: 28 };
const WORKER_KEY_ID = 'urn:missionweaveprotocol:key:24';
const TAGS = { rust: AUDITOR, python: SCRIBE, node: COORDINATOR, browser: WORKER };
const COUNT = 2;
const EXPECT = Object.keys(TAGS).flatMap((tag) => Array.from({ length: COUNT }, (_, i) => `one-server:${tag}:${i}`));

const PYTHON = process.env.MWP_PYTHON ?? join(process.env.MWP_PY_VENV ?? join(REPO, '.venv-ci'), 'bin', 'python');
const RUST_PARTICIPANT = process.env.MWP_PARTICIPANT_BIN ?? join(TARGET, 'release', 'examples', 'participant');

let napi;
let web;
let context;
let profile;
let page;
let server;
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
    url: server.url, agentId, authorityId: AUTHORITY, groupId: GROUP, conversationId: MAINS[GROUP][1],
    tag, count: COUNT, expect: EXPECT,
  };
}

async function rustClient() {
  const p = params(AUDITOR, 'rust');
  const key = org.key(AUDITOR);
  const out = await run(RUST_PARTICIPANT, [p.url, '-', server.registryPath, AUDITOR, key.keyId,
    Buffer.from(new Uint8Array(32).fill(SEEDS[AUDITOR])).toString('base64url'), AUTHORITY, GROUP, p.conversationId,
    p.tag, String(COUNT), EXPECT.join(',')]);
  const lines = out.trim().split('\n');
  assert.match(lines[0], /^epoch \d+$/);
  return { epoch: Number(lines[0].slice(6)), seen: lines.slice(1).map((l) => { const [s, t] = l.split(' '); return [Number(s), t]; }) };
}

async function pythonClient() {
  const p = params(SCRIBE, 'python');
  const config = { ...p, keyId: org.key(SCRIBE).keyId, seedHex: Buffer.from(new Uint8Array(32).fill(SEEDS[SCRIBE])).toString('hex'),
    registryPath: server.registryPath };
  const out = await run(PYTHON, [join(REPO, 'js', 'test', 'one-server', 'participant.py'), JSON.stringify(config)]);
  return JSON.parse(out.trim().split('\n').pop());
}

async function browserClient() {
  const p = { ...params(WORKER, 'browser'), registryBytes: [...org.registryBytes] };
  try {
    return await page.evaluate(async (q) => {
      const api = await import('/dist/wasm.mjs');
      const { participate: inPage } = await import('/test/one-server/participant.mjs');
      return inPage(api, q, window.__workerKey);
    }, p);
  } catch (error) {
    throw new Error(`${error.message}\n--- page console:\n${consoleLines.join('\n')}`);
  }
}

test('one running server: the Rust, Python, Node and browser clients each send Commands and receive all the others\' Events in one Group order', { timeout: 5 * WAIT_MS }, async () => {
  const node = participate(napi, { ...params(COORDINATOR, 'node'), registryBytes: [...org.registryBytes] }, org.key(COORDINATOR));
  let results;
  try {
    results = await within(Promise.all([rustClient(), pythonClient(), node, browserClient()]), 'the four clients', 4 * WAIT_MS);
  } catch (error) {
    throw new Error(`${error.message}\n--- server stderr:\n${server.stderr}`);
  }
  const [rust, python, fromNode, browser] = results;
  for (const [name, result] of Object.entries({ rust, python, node: fromNode, browser })) {
    assert.ok(result.epoch >= 1, `${name}: authenticated`);
    assert.equal(result.seen.length, EXPECT.length, `${name} saw every client's Messages`);
    const sequences = result.seen.map(([sequence]) => sequence);
    assert.deepEqual(sequences, [...sequences].sort((a, b) => a - b), `${name}: Group order`);
  }
  // One Group order: every client saw each Message at the same sequence.
  const order = (result) => Object.fromEntries(result.seen.map(([sequence, text]) => [text, sequence]));
  for (const other of [python, fromNode, browser]) assert.deepEqual(order(other), order(rust));
  assert.deepEqual(new Set(rust.seen.map(([, text]) => text)), new Set(EXPECT));
  assert.ok(!consoleLines.some((line) => /^(error|pageerror)/.test(line)), consoleLines.join('\n'));
});
