// The verifier page's layout and behaviour in headless Chromium: no horizontal overflow at
// 390×844 and 1280×800 (light and dark), the dark theme, the loading state while WebAssembly
// initialises, copy buttons, the core's explanation for every failing bundle evaluation, and
// the verify-only build used on its own in the browser (own keys → Registry → sign → verify).
// Screenshots: target/js-artifacts/page-*.png.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { chromium } from 'playwright-core';

import { startServer } from '../scripts/serve.mjs';
import { BUNDLE, CHROMIUM, CHROMIUM_ARGS, DIST, TARGET } from './support.mjs';

const ARTIFACTS = join(TARGET, 'js-artifacts');
const VIEWPORTS = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 800 } };

let server;
let browser;
let reasons;

before(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  server = await startServer({ bundle: BUNDLE });
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  reasons = (await import(join(DIST, 'node-verify.mjs'))).failureReasons();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

async function openPage({ viewport = VIEWPORTS.desktop, colorScheme = 'light', permissions = [] } = {}) {
  const context = await browser.newContext({ viewport, colorScheme });
  if (permissions.length) await context.grantPermissions(permissions, { origin: server.url });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (message) => { if (message.type() === 'error') problems.push(message.text()); });
  return { context, page, problems };
}

async function ready(page) {
  await page.goto(`${server.url}/page/`);
  await page.waitForFunction(() => document.body.dataset.ready !== undefined, null, { timeout: 20_000 });
  assert.equal(await page.evaluate(() => document.body.dataset.ready), 'true');
}

async function sample(page, id) {
  await page.evaluate((which) => window.__verifier.loadSample(which), id);
}

const overflow = (page) => page.evaluate(() => ({
  scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth,
}));

for (const colorScheme of ['light', 'dark']) {
  for (const [size, viewport] of Object.entries(VIEWPORTS)) {
    test(`no horizontal overflow at ${viewport.width}x${viewport.height} (${colorScheme})`, async () => {
      const { context, page, problems } = await openPage({ viewport, colorScheme });
      try {
        await ready(page);
        const states = [
          ['start', async () => {}],
          ['valid', () => sample(page, 'accept.command.golden#0')],
          ['tampered', () => sample(page, 'reject.signature.equation-matrix#1')],
          // A long unbroken key ID and reasons table open: the widest content the page shows.
          ['unknown-key', async () => {
            await sample(page, 'reject.key-resolution.unknown-key#0');
            await page.evaluate(() => { document.getElementById('reasons').open = true; });
          }],
        ];
        for (const [state, reach] of states) {
          await reach();
          const { scrollWidth, innerWidth } = await overflow(page);
          assert.ok(scrollWidth <= innerWidth, `${state}: scrollWidth ${scrollWidth} > innerWidth ${innerWidth}`);
          await page.screenshot({ path: join(ARTIFACTS, `page-${size}-${colorScheme}-${state}.png`), fullPage: true });
        }
        assert.deepEqual(problems, []);
      } finally {
        await context.close();
      }
    });
  }
}

test('dark theme follows prefers-color-scheme; light stays light', async () => {
  const luminance = async (colorScheme) => {
    const { context, page } = await openPage({ colorScheme });
    try {
      await ready(page);
      return await page.evaluate(() => {
        const [r, g, b] = getComputedStyle(document.documentElement).backgroundColor.match(/\d+/g).map(Number);
        const [ir, ig, ib] = getComputedStyle(document.body).color.match(/\d+/g).map(Number);
        return { background: (r + g + b) / 3, ink: (ir + ig + ib) / 3 };
      });
    } finally {
      await context.close();
    }
  };
  const dark = await luminance('dark');
  const light = await luminance('light');
  assert.ok(dark.background < 60 && dark.ink > 180, JSON.stringify(dark));
  assert.ok(light.background > 200 && light.ink < 80, JSON.stringify(light));
});

test('loading state while WebAssembly initialises, then ready', async () => {
  const { context, page } = await openPage({ viewport: VIEWPORTS.phone });
  try {
    let release;
    const held = new Promise((resolve) => { release = resolve; });
    await page.route('**/wasm-verify/*.wasm', async (route) => { await held; await route.continue(); });
    await page.goto(`${server.url}/page/`);
    await page.waitForSelector('#loading', { state: 'visible' });
    const during = await page.evaluate(() => ({
      state: document.body.dataset.state,
      text: document.getElementById('loading-text').textContent,
      verifyDisabled: document.getElementById('verify').disabled,
      sampleDisabled: document.querySelector('[data-sample]').disabled,
    }));
    assert.deepEqual(during, { state: 'loading', text: 'Loading the WebAssembly verifier…', verifyDisabled: true, sampleDisabled: true });
    await page.screenshot({ path: join(ARTIFACTS, 'page-phone-loading.png') });
    release();
    await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 20_000 });
    assert.equal(await page.evaluate(() => document.body.dataset.state), 'ready');
    assert.equal(await page.isVisible('#loading'), false);
    assert.equal(await page.isEnabled('#verify'), true);
  } finally {
    await context.close();
  }
});

test('a module that cannot load is reported, not a blank page', async () => {
  const { context, page } = await openPage();
  try {
    await page.route('**/wasm-verify/*.wasm', (route) => route.fulfill({ status: 404, body: 'gone' }));
    await page.goto(`${server.url}/page/`);
    await page.waitForFunction(() => document.body.dataset.state === 'error', null, { timeout: 20_000 });
    assert.match(await page.textContent('#loading-text'), /could not be loaded/);
    assert.equal(await page.isEnabled('#verify'), false);
  } finally {
    await context.close();
  }
});

test('copy buttons put the shown result on the clipboard', async () => {
  const { context, page } = await openPage({ permissions: ['clipboard-read', 'clipboard-write'] });
  try {
    await ready(page);
    assert.equal(await page.isDisabled('[data-copy="signing-hash"]'), true, 'nothing to copy yet');
    await sample(page, 'accept.command.golden#0');
    for (const id of ['signing-hash', 'key-id', 'signing-bytes']) {
      await page.click(`[data-copy="${id}"]`);
      await page.waitForSelector(`[data-copy="${id}"].done`);
      const copied = await page.evaluate(() => navigator.clipboard.readText());
      assert.equal(copied, await page.textContent(`#${id}`), id);
    }
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()).then((t) => t.startsWith('{"actionId"')), true);
    await sample(page, 'reject.parse.duplicate-decoded-member#0');
    assert.equal(await page.isDisabled('[data-copy="signing-hash"]'), true, 'stage 1 failed: no signing hash to copy');
    await sample(page, 'reject.signature.equation-matrix#1');
    await page.click('[data-copy="wire"]');
    await page.waitForSelector('[data-copy="wire"].done');
    assert.equal(JSON.parse(await page.evaluate(() => navigator.clipboard.readText())).error.code, 'AUTH_INVALID_SIGNATURE');
  } finally {
    await context.close();
  }
});

test('every failing bundle evaluation is explained by the core table, with its §6.4 section', async () => {
  const { context, page } = await openPage();
  try {
    await ready(page);
    const ids = await page.evaluate(() => [...document.querySelectorAll('#sample-all option')].map((o) => o.value).filter(Boolean));
    assert.ok(ids.length >= 60, `${ids.length} samples`);
    let failures = 0;
    for (const id of ids) {
      await sample(page, id);
      const shown = await page.evaluate(() => ({
        last: window.__verifier.last,
        hidden: document.getElementById('explanation').hidden,
        text: document.getElementById('explanation-text').textContent,
        section: document.getElementById('explanation-section').textContent,
      }));
      if (shown.last.ok) {
        assert.equal(shown.hidden, true, id);
        continue;
      }
      failures += 1;
      const row = reasons.find((r) => r.stage === shown.last.stage && r.reason === shown.last.reason);
      assert.ok(row, `${id}: ${shown.last.stage}/${shown.last.reason} has an explanation`);
      assert.equal(shown.hidden, false, id);
      assert.equal(shown.text, row.explanation, id);
      assert.equal(shown.section, `(${row.section})`, id);
      assert.match(shown.section, /^\(§6\.4 stage [1-6] \(/);
    }
    assert.ok(failures >= 40, `${failures} failing evaluations`);
    // The reasons list is the same table.
    const listed = await page.evaluate(() => document.querySelectorAll('#reason-list li').length);
    assert.equal(listed, reasons.length);
  } finally {
    await context.close();
  }
});

test('the verify-only build in Chromium: own keys → Registry → sign → verify → handle the error', async () => {
  const { context, page, problems } = await openPage();
  const requests = [];
  page.on('request', (request) => requests.push(new URL(request.url()).pathname));
  try {
    await ready(page);
    const out = await page.evaluate(async () => {
      const mwp = await import('/dist/verify.mjs');
      const key = mwp.SigningKey.generate('urn:missionweaveprotocol:key:browser-1');
      const agent = { type: 'agent', id: 'urn:missionweaveprotocol:agent:browser' };
      const registry = new mwp.Registry(new mwp.RegistryBuilder('urn:missionweaveprotocol:organization:acme')
        .addKey(key.keyId, agent, key.publicKey, '2026-01-01T00:00:00Z').build());
      const unsigned = {
        protocolVersion: '0.1', actionId: 'urn:uuid:11111111-2222-4333-8444-555555555555', actor: agent,
        sessionEpoch: 1, membershipEpoch: 1, groupId: 'urn:missionweaveprotocol:group:demo', kind: 'mission.submit_for_approval',
        expectedRevision: 1, correlationId: 'urn:uuid:aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee', issuedAt: '2026-07-15T00:00:00Z',
        payload: { artifactHashes: [`sha256:${'b'.repeat(64)}`] }, coordinatorEpoch: 1,
      };
      const signed = key.sign('command', JSON.stringify(unsigned), { registry });
      const verified = mwp.verifySignedDocument('command', signed.bytes, registry);
      let rejected;
      try {
        mwp.verifySignedDocument('command', signed.text.replace('"expectedRevision":1', '"expectedRevision":2'), registry);
      } catch (error) {
        rejected = { isVerificationError: error instanceof mwp.VerificationError, reason: error.reason, wire: error.toWire(), why: mwp.explainFailure(error).section };
      }
      return { backend: mwp.backend, keyId: verified.keyId, hasScheduler: 'Scheduler' in mwp, rejected };
    });
    assert.deepEqual(out, {
      backend: 'wasm', keyId: 'urn:missionweaveprotocol:key:browser-1', hasScheduler: false,
      rejected: { isVerificationError: true, reason: 'signature-mismatch', wire: { code: 'AUTH_INVALID_SIGNATURE', message: 'signed document rejected', retryable: false }, why: '§6.4 stage 6 (signature)' },
    });
    assert.ok(requests.some((p) => p.endsWith('/wasm-verify/missionweaveprotocol_wasm_verify_bg.wasm')));
    assert.ok(!requests.some((p) => p.includes('/wasm-web/')), 'the page never downloads the full build');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});
