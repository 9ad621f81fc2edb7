// The verifier page in Debian's Chromium (headless, playwright-core with executablePath):
// served on 127.0.0.1 with the protocol bundle mounted at /bundle/. Screenshots go to
// target/js-artifacts/.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { chromium } from 'playwright-core';

import { startServer } from '../scripts/serve.mjs';
import { BUNDLE, CHROMIUM, CHROMIUM_ARGS, DIST, TARGET } from './support.mjs';
import { GROUP, missionFlow, organization } from './core-support.mjs';

const ARTIFACTS = join(TARGET, 'js-artifacts');

let server;
let context;
let profile;
let page;
const consoleLines = [];
const offOrigin = [];

before(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  mkdirSync(ARTIFACTS, { recursive: true });
  server = await startServer({ bundle: BUNDLE });
  profile = mkdtempSync(join(tmpdir(), 'mwp-chromium-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, viewport: { width: 1360, height: 1100 },
  });
  page = await context.newPage();
  page.on('console', (message) => consoleLines.push(`${message.type()}: ${message.text()}`));
  page.on('pageerror', (error) => consoleLines.push(`pageerror: ${error.message}`));
  page.on('request', (request) => { if (!request.url().startsWith(server.url)) offOrigin.push(request.url()); });
  await page.goto(`${server.url}/page/`);
  await page.waitForFunction(() => document.body.dataset.ready !== undefined, null, { timeout: 20_000 });
  assert.equal(await page.evaluate(() => document.body.dataset.ready), 'true', consoleLines.join('\n'));
});

after(async () => {
  await context?.close();
  await server?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

async function clickSample(id) {
  const runs = await page.evaluate(() => Number(document.body.dataset.verified ?? 0));
  await page.click(`[data-sample="${id}"]`);
  await page.waitForFunction((n) => Number(document.body.dataset.verified ?? 0) > n, runs, { timeout: 10_000 });
  return page.evaluate(() => ({
    stages: Object.fromEntries([...document.querySelectorAll('#stages li')].map((li) => [li.dataset.stage, li.dataset.status])),
    verdict: document.getElementById('verdict').textContent,
    wire: document.getElementById('wire').textContent,
    signingHash: document.getElementById('signing-hash').textContent,
    signingBytes: document.getElementById('signing-bytes').textContent,
    keyId: document.getElementById('key-id').textContent,
    principal: document.getElementById('principal').textContent,
    diagnostic: document.getElementById('diagnostic').textContent,
    last: window.__verifier.last,
  }));
}

test('a valid Command passes all six stages', async () => {
  const shown = await clickSample('accept.command.golden#0');
  assert.deepEqual(shown.stages, {
    parse: 'pass', schema: 'pass', 'signature-envelope': 'pass', 'key-resolution': 'pass', canonicalization: 'pass', signature: 'pass',
  });
  assert.equal(shown.last.kind, 'command');
  assert.equal(shown.signingHash, 'sha256:6655c5d67ae3ecc19a4ed04bda7f1372aeaafc7adf939a77715de96ef2100695');
  assert.ok(shown.signingBytes.startsWith('{"actionId":"urn:uuid:11111111-2222-4333-8444-555555555555"'));
  assert.equal(shown.keyId, 'urn:missionweaveprotocol:key:crypto-vector-rfc8032-1');
  assert.equal(shown.principal, 'agent urn:missionweaveprotocol:agent:crypto-vector-coordinator');
  assert.match(shown.verdict, /all six stages passed/);
  await page.screenshot({ path: join(ARTIFACTS, 'verifier-valid.png'), fullPage: true });
});

test('a tampered Command fails stage 6 with AUTH_INVALID_SIGNATURE', async () => {
  const shown = await clickSample('reject.signature.equation-matrix#1');
  assert.deepEqual(shown.stages, {
    parse: 'pass', schema: 'pass', 'signature-envelope': 'pass', 'key-resolution': 'pass', canonicalization: 'pass', signature: 'fail',
  });
  assert.equal(shown.last.code, 'AUTH_INVALID_SIGNATURE');
  const wire = JSON.parse(shown.wire);
  assert.deepEqual([wire.frameType, wire.error.code, wire.error.message, wire.error.retryable],
    ['ERROR', 'AUTH_INVALID_SIGNATURE', 'signed document rejected', false]);
  assert.ok(!shown.wire.includes('signature-mismatch'), 'the wire error hides the stage and reason');
  assert.match(shown.diagnostic, /^signature\/signature-mismatch/);
  assert.match(shown.signingHash, /^sha256:[0-9a-f]{64}$/, 'stage 5 passed: signing hash shown');
  assert.equal(shown.keyId, 'urn:missionweaveprotocol:key:crypto-vector-rfc8032-1', 'stage 4 passed: key shown');
  await page.screenshot({ path: join(ARTIFACTS, 'verifier-tampered.png'), fullPage: true });
});

test('a duplicate member fails stage 1 with PROTOCOL_VIOLATION', async () => {
  const shown = await clickSample('reject.parse.duplicate-decoded-member#0');
  assert.deepEqual(shown.stages, {
    parse: 'fail', schema: 'not-run', 'signature-envelope': 'not-run', 'key-resolution': 'not-run', canonicalization: 'not-run', signature: 'not-run',
  });
  assert.equal(JSON.parse(shown.wire).error.code, 'PROTOCOL_VIOLATION');
  assert.equal(shown.signingHash, '—');
  await page.screenshot({ path: join(ARTIFACTS, 'verifier-duplicate.png'), fullPage: true });
});

test('pasted input, chosen kind, and no request leaves the origin', async () => {
  await page.fill('#document', '{"a":1}');
  await page.selectOption('#kind', 'event');
  await page.click('#verify');
  const last = await page.evaluate(() => window.__verifier.last);
  assert.deepEqual([last.kind, last.stage, last.code], ['event', 'schema', 'SCHEMA_VALIDATION_FAILED']);
  assert.deepEqual(offOrigin, []);
  assert.ok(!consoleLines.some((line) => /^(error|pageerror)/.test(line)), consoleLines.join('\n'));
});

test('dropped files keep their exact bytes (invalid UTF-8 fails stage 1)', async () => {
  const drop = async (selector, path) => {
    const bytes = [...readFileSync(join(BUNDLE, path))];
    const dataTransfer = await page.evaluateHandle(({ data, name }) => {
      const transfer = new DataTransfer();
      transfer.items.add(new File([new Uint8Array(data)], name));
      return transfer;
    }, { data: bytes, name: path.split('/').pop() });
    await page.dispatchEvent(selector, 'drop', { dataTransfer });
    const origin = `dropped: ${path.split('/').pop()}`;
    await page.waitForFunction(([s, o]) => document.getElementById(`${s.slice(1)}-origin`).textContent === o, [selector, origin]);
  };
  await drop('#registry', 'cryptography/keys/registry-valid.json');
  await drop('#document', 'cryptography/vectors/signed-documents/invalid/command-invalid-utf8.bin');
  await page.selectOption('#kind', 'command');
  await page.click('#verify');
  const last = await page.evaluate(() => window.__verifier.last);
  assert.deepEqual([last.stage, last.code], ['parse', 'PROTOCOL_VIOLATION']);
  await drop('#document', 'cryptography/vectors/signed-documents/valid/command.json');
  await page.selectOption('#kind', 'auto');
  await page.click('#verify');
  assert.equal((await page.evaluate(() => window.__verifier.last)).ok, true);
});

test('an in-browser Group simulation: the wasm Core runs a Mission to approval, byte-identical to napi', async () => {
  const texts = await page.evaluate(async (group) => {
    const api = await import('/dist/wasm.mjs');
    const support = await import('/test/core-support.mjs');
    const org = support.organization(api);
    const core = await org.ready();
    await support.missionFlow(org, core);
    const { events } = await core.replay(group);
    for (const event of events) api.verifySignedDocument('event', event.bytes, org.registry);
    core.free();
    return events.map((event) => event.text);
  }, GROUP);
  assert.equal(texts.length, 11);
  const napi = await import(join(DIST, 'node.mjs'));
  const org = organization(napi);
  const core = await org.ready();
  await missionFlow(org, core);
  assert.deepEqual(texts, (await core.replay(GROUP)).events.map((event) => event.text));
  core.free();
  assert.ok(!consoleLines.some((line) => /^(error|pageerror)/.test(line)), consoleLines.join('\n'));
});
