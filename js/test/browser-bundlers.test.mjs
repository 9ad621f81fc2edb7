// The packed package where browser users are (issue 28): `npm pack`, the tarball installed into
// a Vite app (test/bundlers/, vite pinned by its package-lock.json) and into a plain
// `<script type="module">` page with an import map; the Vite build must not externalize a Node
// module (a negative control shows the check sees the warning); both pages are served on
// 127.0.0.1 and run in headless Chromium: every golden vector of tests/vectors/
// (test/vectors-check.mjs: canonicalization, verification, admission, …), a signed document
// through the verify-only entry, and a Command signed in the page, byte-identical to the napi
// addon's signature with the same seed.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { chromium } from 'playwright-core';

import { packMain } from '../scripts/pack.mjs';
import { startServer } from '../scripts/serve.mjs';
import { BUNDLE, CHROMIUM, CHROMIUM_ARGS, DIST, JS, VECTORS, vectorText } from './support.mjs';

const HASH = 'sha256:6655c5d67ae3ecc19a4ed04bda7f1372aeaafc7adf939a77715de96ef2100695';
const SEED = Array.from({ length: 32 }, (_, i) => i + 1);
const KEY_ID = 'urn:missionweaveprotocol:key:bundler-1';
const AGENT = { type: 'agent', id: 'urn:missionweaveprotocol:agent:bundler' };
const UNSIGNED = {
  protocolVersion: '0.1', actionId: 'urn:uuid:11111111-2222-4333-8444-555555555555', actor: AGENT,
  sessionEpoch: 1, membershipEpoch: 1, groupId: 'urn:missionweaveprotocol:group:demo', kind: 'mission.submit_for_approval',
  expectedRevision: 1, correlationId: 'urn:uuid:aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee', issuedAt: '2026-07-15T00:00:00Z',
  payload: { artifactHashes: [`sha256:${'b'.repeat(64)}`] }, coordinatorEpoch: 1,
};
/** Vite's words when it replaces a Node built-in by an empty browser stub. */
const EXTERNALIZED = /externalized for browser compatibility|has been externalized/i;

let work;
let app;
let vite;
let badVite;
let server;
let context;
let profile;

const npm = (args, cwd) => execFileSync('npm', [...args, '--no-audit', '--no-fund', '--prefer-offline'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** `vite build` of `root` (relative to the app): its exit status and its output (stdout and stderr). */
function viteBuild(root, outDir) {
  const result = spawnSync(process.execPath, [join(app, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', root,
    '--base', './', '--outDir', outDir, '--emptyOutDir'], { cwd: app, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  return { status: result.status, output: `${result.stdout}\n${result.stderr}` };
}

before(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  work = mkdtempSync(join(tmpdir(), 'mwp-bundlers-'));
  const tarball = packMain(work);
  app = join(work, 'app');
  cpSync(join(JS, 'test', 'bundlers'), app, { recursive: true });
  cpSync(join(JS, 'test', 'vectors-check.mjs'), join(app, 'vectors-check.mjs'));
  npm(['ci'], app);
  npm(['install', tarball], app);
  vite = viteBuild('.', 'dist');
  assert.equal(vite.status, 0, vite.output);
  // Whether the build also fails on the stub's missing named export or only warns, the warning is printed.
  badVite = viteBuild('node-import', '../dist-node-import');
  server = await startServer({ root: app, bundle: BUNDLE, vectors: VECTORS });
  profile = mkdtempSync(join(tmpdir(), 'mwp-chromium-'));
  context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
});

after(async () => {
  await context?.close();
  await server?.close();
  for (const dir of [profile, work]) if (dir) rmSync(dir, { recursive: true, force: true });
});

test('vite build: no Node module externalized, the WebAssembly modules emitted as assets', () => {
  assert.doesNotMatch(vite.output, EXTERNALIZED, vite.output);
  assert.doesNotMatch(vite.output, /node:/, vite.output);
  console.log(vite.output.split('\n').filter((line) => /^dist\/|built in/.test(line.trim())).map((l) => l.trim()).join('\n'));
  const assets = readdirSync(join(app, 'dist', 'assets'));
  assert.ok(assets.some((f) => /^missionweaveprotocol_wasm_bg-.*\.wasm$/.test(f)), assets.join(' '));
  assert.ok(assets.some((f) => /^missionweaveprotocol_wasm_verify_bg-.*\.wasm$/.test(f)), assets.join(' '));
});

test('vite build of the Node-only entry: the externalized node:fs/promises is reported (negative control)', () => {
  assert.match(badVite.output, EXTERNALIZED, badVite.output);
  assert.match(badVite.output, /node:fs\/promises/, badVite.output);
});

const manifest = JSON.parse(vectorText('manifest.json'));
const napi = await import(join(DIST, 'node.mjs'));

/** The signed Command napi makes from the same seed (Ed25519 signatures are deterministic). */
function napiSigned() {
  const key = napi.SigningKey.fromSeed(KEY_ID, new Uint8Array(SEED));
  const registry = new napi.Registry(new napi.RegistryBuilder('urn:missionweaveprotocol:organization:acme')
    .addKey(key.keyId, AGENT, key.publicKey, '2026-01-01T00:00:00Z').build());
  return key.sign('command', JSON.stringify(UNSIGNED), { registry }).text;
}

for (const [name, path] of [['the Vite app', '/dist/index.html'], ['the <script type="module"> page', '/script.html']]) {
  describe(name, () => {
    test('in Chromium: every golden vector, a signed document verified, a Command signed and canonicalized', async () => {
      const page = await context.newPage();
      const problems = [];
      const requests = [];
      page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
      page.on('console', (message) => { if (message.type() === 'error') problems.push(message.text()); });
      page.on('request', (request) => requests.push(request.url()));
      page.on('response', (response) => { if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`); });
      try {
        await page.goto(`${server.url}${path}`);
        await page.waitForFunction(() => document.body.dataset.ready !== undefined, null, { timeout: 30_000 });
        const out = await page.evaluate(async ({ seed, keyId, agent, unsigned }) => {
          const { full, verify } = window.__mwp;
          const get = async (url) => {
            const response = await fetch(url);
            if (!response.ok) throw new Error(`${url}: ${response.status}`);
            return response;
          };
          const bundle = async (p) => new Uint8Array(await (await get(`/bundle/${p}`)).arrayBuffer());
          const { checkVectors } = await import('/vectors-check.mjs');
          const vectors = await checkVectors(full, {
            readVector: async (file) => (await get(`/vectors/${file}`)).text(),
            readBundle: bundle,
          });
          const verified = verify.verifySignedDocument('command',
            await bundle('cryptography/vectors/signed-documents/valid/command.json'),
            new verify.Registry(await bundle('cryptography/keys/registry-valid.json')));
          const key = full.SigningKey.fromSeed(keyId, new Uint8Array(seed));
          const registry = new full.Registry(new full.RegistryBuilder('urn:missionweaveprotocol:organization:acme')
            .addKey(key.keyId, agent, key.publicKey, '2026-01-01T00:00:00Z').build());
          const signed = key.sign('command', JSON.stringify(unsigned), { registry });
          const back = full.verifySignedDocument('command', signed.bytes, registry);
          return {
            backend: full.backend, verifyBackend: verify.backend, vectors,
            verified: verified.signingHash, signed: signed.text, signedKeyId: back.keyId,
          };
        }, { seed: SEED, keyId: KEY_ID, agent: AGENT, unsigned: UNSIGNED });
        assert.deepEqual(problems, []);
        assert.equal(out.backend, 'wasm');
        assert.equal(out.verifyBackend, 'wasm');
        assert.deepEqual(out.vectors.problems.slice(0, 20), [], `${out.vectors.problems.length} vectors differ`);
        // canonical.jsonl: RFC 8785 canonicalization and its hash, each vector (test/vectors-check.mjs).
        assert.deepEqual(out.vectors.counts, manifest.areas, 'vectors checked per area');
        assert.ok(manifest.areas.canonical > 0 && manifest.areas.cryptography > 0);
        assert.equal(out.verified, HASH);
        assert.equal(out.signed, napiSigned());
        assert.equal(out.signedKeyId, KEY_ID);
        // Everything came from the loopback server: no CDN, no second origin.
        assert.deepEqual(requests.filter((u) => !u.startsWith(server.url)), []);
      } finally {
        await page.close();
      }
    });
  });
}
