// Every golden vector of tests/vectors/ (written by the Rust core: `scripts/write-vectors.sh`)
// through the public JavaScript API on every backend: the napi addon, the WebAssembly build in
// Node (ES module and CommonJS), and the WebAssembly build in headless Chromium. Per area, the
// number of vectors compared must equal the manifest's count: nothing is skipped silently.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { chromium } from 'playwright-core';

import { startServer } from '../scripts/serve.mjs';
import { BUNDLE, CHROMIUM, CHROMIUM_ARGS, VECTORS, backends, vectorText } from './support.mjs';
import { checkVectors } from './vectors-check.mjs';

const manifest = JSON.parse(vectorText('manifest.json'));
let apis;
before(async () => {
  apis = await backends();
});

function assertComplete({ counts, expected, problems }) {
  assert.deepEqual(problems.slice(0, 20), [], `${problems.length} vectors differ`);
  assert.deepEqual(counts, expected, 'vectors checked per area');
  assert.deepEqual(expected, manifest.areas);
}

test('the manifest lists every vector file with its SHA-256 and size', async () => {
  const { createHash } = await import('node:crypto');
  assert.equal(manifest.formatVersion, 1);
  for (const file of manifest.files) {
    const bytes = readFileSync(join(VECTORS, file.path));
    assert.equal(`sha256:${createHash('sha256').update(bytes).digest('hex')}`, file.sha256, file.path);
    assert.equal(bytes.length, file.bytes, file.path);
  }
  const perFile = {};
  for (const file of manifest.files) {
    for (const [area, n] of Object.entries(file.areas)) perFile[area] = (perFile[area] ?? 0) + n;
  }
  assert.deepEqual(perFile, manifest.areas);
  assert.deepEqual(Object.keys(manifest.areas).sort(),
    ['admission', 'budget', 'canonical', 'cryptography', 'delegation', 'lease', 'retry', 'scheduler', 'scheduling', 'structural']);
});

for (const name of ['napi (ESM)', 'wasm (ESM)', 'wasm (CommonJS)']) {
  describe(name, () => {
    test('every golden vector equals the Rust core', async () => {
      assertComplete(await checkVectors(apis[name], {
        readVector: (file) => vectorText(file),
        readBundle: (path) => readFileSync(join(BUNDLE, path)),
      }));
    });
  });
}

test('a changed or missing vector is reported, not skipped', async () => {
  const tamper = (file) => {
    const text = vectorText(file);
    if (file === 'authority.jsonl') return text.replace('"ok":"expired"', '"ok":"active"');
    if (file === 'canonical.jsonl') return text.split('\n').slice(1).join('\n');
    return text;
  };
  const result = await checkVectors(apis['napi (ESM)'], {
    readVector: tamper,
    readBundle: (path) => readFileSync(join(BUNDLE, path)),
  });
  assert.equal(result.problems.length, 1);
  assert.match(result.problems[0], /^lease\/lease\.execution#1:stateAt: /);
  assert.equal(result.counts.canonical, result.expected.canonical - 1);
});

describe('wasm in headless Chromium', () => {
  let server;
  let context;
  let profile;
  before(async () => {
    server = await startServer({ bundle: BUNDLE, vectors: VECTORS });
    profile = mkdtempSync(join(tmpdir(), 'mwp-chromium-vectors-'));
    context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await context?.close();
    await server?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  test('every golden vector equals the Rust core', async () => {
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (error) => errors.push(error.message));
    // A page of the same origin, so the modules, the bundle and the vectors are same-origin fetches.
    await page.goto(`${server.url}/page/`);
    const result = await page.evaluate(async () => {
      const api = await import('/dist/wasm.mjs');
      const { checkVectors } = await import('/test/vectors-check.mjs');
      const get = async (url) => {
        const response = await fetch(url);
        if (!response.ok) throw new Error(`${url}: ${response.status}`);
        return response;
      };
      return checkVectors(api, {
        readVector: async (file) => (await get(`/vectors/${file}`)).text(),
        readBundle: async (path) => new Uint8Array(await (await get(`/bundle/${path}`)).arrayBuffer()),
      });
    });
    assert.deepEqual(errors, []);
    assertComplete(result);
  });
});
