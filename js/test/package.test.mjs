// Packaging: `npm pack` the main package and this platform's napi package (the napi-rs
// convention, scripts/platform-packages.mjs), install both into a fresh project, then import
// with ESM and with require and run one verification each (napi by default, WebAssembly via
// ./wasm); a second project gets the main tarball alone and falls back to WebAssembly.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { installInto, packPackages, TRIPLE } from './pack-support.mjs';
import { BUNDLE, JS } from './support.mjs';

const { PREBUILDS } = createRequire(import.meta.url)(join(JS, 'src', 'native-loader.cjs'));
const pkg = JSON.parse(readFileSync(join(JS, 'package.json'), 'utf8'));
let work;
let project;
let wasmOnly;
let mainTarball;
let platformTarball;

before(() => {
  work = mkdtempSync(join(tmpdir(), 'mwp-pack-'));
  ({ main: mainTarball, platform: platformTarball } = packPackages(work));
  project = join(work, 'consumer');
  installInto(project, [mainTarball, platformTarball]);
  wasmOnly = join(work, 'consumer-wasm');
  installInto(wasmOnly, [mainTarball]);
});

after(() => { if (work) rmSync(work, { recursive: true, force: true }); });

const DOC = JSON.stringify(join(BUNDLE, 'cryptography/vectors/signed-documents/valid/command.json'));
const REG = JSON.stringify(join(BUNDLE, 'cryptography/keys/registry-valid.json'));
const HASH = 'sha256:6655c5d67ae3ecc19a4ed04bda7f1372aeaafc7adf939a77715de96ef2100695';

function run(file, source, cwd = project) {
  writeFileSync(join(cwd, file), source);
  return execFileSync(process.execPath, [file], { cwd, encoding: 'utf8' }).trim();
}

const tarList = (tarball) => execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' }).split('\n').filter(Boolean);

test('the tarball holds the built entries, both backends, the declarations, the pages and the licence', () => {
  const listing = tarList(mainTarball);
  for (const file of ['LICENSE', 'README.md', 'package.json', 'dist/node.mjs', 'dist/node.cjs', 'dist/native-loader.cjs',
    'dist/wasm.mjs', 'dist/node-wasm.mjs', 'dist/wasm.cjs', 'dist/api.mjs', 'dist/api.cjs',
    'dist/load-wasm-browser.mjs', 'dist/load-wasm-node.mjs',
    'dist/node.d.mts', 'dist/node.d.cts', 'dist/wasm.d.mts', 'dist/wasm.d.cts',
    'dist/wasm-web/missionweaveprotocol_wasm_bg.wasm', 'dist/wasm-node/missionweaveprotocol_wasm.js',
    'dist/verify.mjs', 'dist/node-verify.mjs', 'dist/verify.d.mts', 'dist/wasm-verify/missionweaveprotocol_wasm_verify_bg.wasm',
    'page/index.html', 'page/style.css', 'page/verifier.mjs', 'page/approve.html', 'page/approve.mjs']) {
    assert.ok(listing.includes(`package/${file}`), file);
  }
  // The repository's LICENSE (copied by scripts/build.mjs): the project header, then Apache-2.0.
  const licence = readFileSync(join(JS, 'LICENSE'), 'utf8');
  assert.equal(licence, readFileSync(join(JS, '..', 'LICENSE'), 'utf8'));
  assert.match(licence, /Apache License\s+Version 2\.0, January 2004/);
  const stray = listing.filter((f) => /^package\/(test|src|scripts|bench|node_modules)\//.test(f) || /\.map$|\.test\.|\.node$/.test(f));
  assert.deepEqual(stray, [], 'no tests, sources, source maps or addons (the platform packages carry those)');
  // One WebAssembly module: the nodejs glue reads wasm-web's (scripts/build.mjs).
  assert.ok(!listing.includes('package/dist/wasm-node/missionweaveprotocol_wasm_bg.wasm'), 'the module ships once');
  const size = statSync(mainTarball).size;
  console.log(`npm pack: ${mainTarball.split('/').pop()} ${size} bytes (${listing.length} files); ` +
    `${platformTarball.split('/').pop()} ${statSync(platformTarball).size} bytes`);
  // Two WebAssembly modules, gzip'd by npm: a few MB; a stray build tree would be far more.
  assert.ok(size < 6_000_000, `${size} bytes`);
});

test('the platform package: os/cpu/libc of its triple, the addon as main, the version of the main package', () => {
  const listing = tarList(platformTarball);
  assert.deepEqual(listing.sort(), ['package/LICENSE', 'package/README.md', `package/missionweaveprotocol.${TRIPLE}.node`, 'package/package.json']);
  const manifest = JSON.parse(execFileSync('tar', ['xzfO', platformTarball, 'package/package.json'], { encoding: 'utf8' }));
  const platform = PREBUILDS[TRIPLE];
  assert.deepEqual([manifest.name, manifest.version, manifest.os, manifest.cpu, manifest.libc, manifest.main],
    [`missionweaveprotocol-${TRIPLE}`, pkg.version, [platform.os], [platform.cpu], [platform.libc], `missionweaveprotocol.${TRIPLE}.node`]);
  // The main package as published lists all four, at its own version (scripts/pack.mjs); the
  // source package.json lists none (npm ci could not lock them before they are published).
  const published = JSON.parse(execFileSync('tar', ['xzfO', mainTarball, 'package/package.json'], { encoding: 'utf8' }));
  assert.deepEqual(published.optionalDependencies, Object.fromEntries(Object.keys(PREBUILDS).map((t) => [`missionweaveprotocol-${t}`, pkg.version])));
  assert.equal(pkg.optionalDependencies, undefined);
  assert.deepEqual({ ...published, optionalDependencies: undefined }, { ...pkg, optionalDependencies: undefined });
});

test('npm pack --dry-run: the verifier and approval pages ship beside dist/, which they import', () => {
  const listing = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json'], { cwd: JS, encoding: 'utf8' }))[0];
  const files = listing.files.map((f) => f.path);
  for (const file of ['page/index.html', 'page/style.css', 'page/verifier.mjs', 'dist/verify.mjs',
    'page/approve.html', 'page/approve.mjs', 'dist/wasm.mjs']) {
    assert.ok(files.includes(file), file);
  }
  assert.ok(!files.some((f) => f.startsWith('test/') || f.startsWith('src/') || f.startsWith('scripts/')), files.join(' '));
  assert.ok(files.includes('LICENSE'), 'LICENSE');
  // The page's one import resolves inside the package.
  const page = readFileSync(join(JS, 'page', 'verifier.mjs'), 'utf8');
  const imports = [...page.matchAll(/import\('([^']+)'\)/g)].map((m) => m[1]);
  assert.deepEqual(imports, ['../dist/verify.mjs']);
  // The approval page loads the full WebAssembly entry (the client) and the server's configuration.
  const approve = readFileSync(join(JS, 'page', 'approve.mjs'), 'utf8');
  assert.deepEqual([...approve.matchAll(/import\('([^']+)'\)/g)].map((m) => m[1]), ['../dist/wasm.mjs']);
});

test('ESM import, one verification each backend', () => {
  const out = run('esm.mjs', `
    import { readFileSync } from 'node:fs';
    import * as mwp from 'missionweaveprotocol';
    import * as wasm from 'missionweaveprotocol/wasm';
    import * as verify from 'missionweaveprotocol/verify';
    for (const api of [mwp, wasm, verify]) {
      const v = api.verifySignedDocument('command', readFileSync(${DOC}), new api.Registry(readFileSync(${REG})));
      console.log(api.backend, v.signingHash);
    }`);
  assert.equal(out, `napi ${HASH}\nwasm ${HASH}\nwasm ${HASH}`);
});

test('require, one verification each backend, errors are Error subclasses', () => {
  const out = run('cjs.cjs', `
    const { readFileSync } = require('node:fs');
    for (const api of [require('missionweaveprotocol'), require('missionweaveprotocol/wasm')]) {
      const v = api.verifySignedDocument('command', readFileSync(${DOC}), readFileSync(${REG}));
      let rejected;
      try { api.verifySignedDocument('command', '{"a":1,"a":2}', readFileSync(${REG})); } catch (e) { rejected = e; }
      console.log(api.backend, v.signingHash, rejected instanceof Error && rejected instanceof api.VerificationError, rejected.code);
    }`);
  assert.equal(out, `napi ${HASH} true PROTOCOL_VIOLATION\nwasm ${HASH} true PROTOCOL_VIOLATION`);
});

test('the napi backend comes from the platform package; without it the default entry is WebAssembly', () => {
  // The main tarball has no addon (checked above), so napi here is the platform package's.
  const source = `
    const { readFileSync } = require('node:fs');
    let platform = null;
    try { platform = require.resolve('missionweaveprotocol-${TRIPLE}'); } catch {}
    for (const api of [require('missionweaveprotocol')]) {
      const v = api.verifySignedDocument('command', readFileSync(${DOC}), readFileSync(${REG}));
      console.log(api.backend, v.signingHash, platform !== null && platform.endsWith('missionweaveprotocol.${TRIPLE}.node'));
    }`;
  assert.equal(run('platform.cjs', source), `napi ${HASH} true`);
  assert.equal(run('platform.cjs', source, wasmOnly), `wasm ${HASH} false`);
  assert.equal(run('esm.mjs', `import * as m from 'missionweaveprotocol';\nconsole.log(m.backend, typeof m.Scheduler);`, wasmOnly), 'wasm function');
  // NODE_DEBUG=missionweaveprotocol says why no addon loaded; silent when one did.
  const debug = (cwd) => spawnSync(process.execPath, ['-e', "require('missionweaveprotocol')"], {
    cwd, encoding: 'utf8', env: { ...process.env, NODE_DEBUG: 'missionweaveprotocol' } }).stderr;
  assert.match(debug(wasmOnly), new RegExp(`no napi addon \\(missionweaveprotocol-${TRIPLE}: MODULE_NOT_FOUND; \\./missionweaveprotocol\\.${TRIPLE}\\.node: MODULE_NOT_FOUND\\): WebAssembly`));
  assert.equal(debug(project), '');
});

test('the declarations type-check for ESM and CommonJS consumers (tsc, nodenext, strict)', () => {
  const use = (from) => `
    import { verifySignedDocument, Registry, VerificationError, admitFirst, InMemoryAdmissionLog,
      type VerifiedDocument, type DocumentKind, type AdmissionLog, type NativeResource } from '${from}';
    declare const readFileSync: (path: string) => Uint8Array;
    const kind: DocumentKind = 'command';
    const registry = new Registry(readFileSync('r.json'));
    const verified: VerifiedDocument = verifySignedDocument(kind, readFileSync('d.json'), registry);
    const hash: string = verified.signingHash;
    const log: AdmissionLog = { lookup: () => ({ status: 'authoritative-absence' }), append: (_c, bytes) => ({ status: 'committed', record: bytes, authenticatedService: { type: 'service', id: 'x' } }) };
    admitFirst(kind, 'doc', registry, new InMemoryAdmissionLog({ type: 'service', id: 'x' }), () => ({ admissionRecordId: 'a', trustedAcceptedAt: 't', acceptedBy: { type: 'service', id: 's' } }));
    try { verifySignedDocument('command', '{}', registry); } catch (e) { if (e instanceof VerificationError) { const s: string = e.toWire().code + e.stage + hash; void s; } }
    // Native memory is released by free() or [Symbol.dispose]() (issue 9, item 10).
    const resource: NativeResource = registry;
    resource[Symbol.dispose]();
    registry.free();
    void log;`;
  // \`using\` (TypeScript 5.2+ with the esnext.disposable library) frees at the end of the block.
  const using = (from) => `
    import { Registry, Scheduler, verifySignedDocument } from '${from}';
    declare const bytes: Uint8Array;
    {
      using registry = new Registry(bytes);
      using scheduler = new Scheduler();
      verifySignedDocument('command', '{}', registry);
      void scheduler.size;
    }`;
  // The call shapes generated from core/ffi (ffi-types.d.ts) ship inside the declarations.
  const shapes = (from) => `
    import { Scheduler, type SchedulerPolicyInput, type WorkOfferInput, type TransitionInput } from '${from}';
    const policy: SchedulerPolicyInput = { capacitySlots: 2, groups: { a: { weight: 2 } } };
    const offer: WorkOfferInput = { workId: 'w', groupId: 'a', deadline: new Date(), requiredCapabilities: [{ id: 'tool.search', version: '1.0.0' }] };
    const done: TransitionInput = { kind: 'completed', generation: 1 };
    const scheduler = new Scheduler(policy);
    const decision = scheduler.admit(offer, Date.now());
    if (decision.accepted) scheduler.apply('w', done, Date.now());
    // @ts-expect-error: the core refuses unknown members, so the type does too.
    const wrong: WorkOfferInput = { workId: 'w', groupId: 'a', colour: 'red' };
    void wrong;`;
  const keys = (from) => `
    import { SigningKey, RegistryBuilder, Registry, verifySignedDocument, explainFailure, VerificationError,
      type FailureReason, type Principal } from '${from}';
    const key: SigningKey = SigningKey.generate('urn:missionweaveprotocol:key:a-1');
    const alice: Principal = { type: 'agent', id: 'urn:missionweaveprotocol:agent:a' };
    const bytes: Uint8Array = new RegistryBuilder('urn:missionweaveprotocol:organization:o')
      .addKey(key.keyId, alice, key.publicKey, new Date(), { history: [{ recordedAt: '2026-01-01T00:00:00Z', revokedAt: new Date() }] })
      .build();
    const signed = key.sign('command', '{}', { registry: new Registry(bytes) });
    try { verifySignedDocument('command', signed.bytes, bytes); } catch (e) {
      if (e instanceof VerificationError) { const why: FailureReason | null = explainFailure(e); void why; }
    }
    const seed: string = key.toSeedBase64url(); void SigningKey.fromSeedBase64url(key.keyId, seed);`;
  // The authoritative Core: Promise-returning calls, typed results and family classes.
  const core = (from) => `
    import { Core, InMemoryStore, QueryKind, ErrorCode, RevisionConflict, MissionWeaveProtocolError, SigningKey,
      type PerformResult, type Event, type ReplayPage, type ErrorCodeName } from '${from}';
    declare const registry: Uint8Array;
    const key = SigningKey.generate('urn:missionweaveprotocol:key:authority');
    const core = new Core({ registry, authority: { type: 'service', id: 'urn:missionweaveprotocol:service:a' }, authorityKey: key,
      store: new InMemoryStore(), clock: () => new Date(), eventIdPrefix: 'urn:missionweaveprotocol:event:x-', maxAgeMs: 60_000 });
    async function go(): Promise<number> {
      const result: PerformResult = await core.perform('{}');
      const event: Event = result.event;
      const mission = await core.query({ kind: QueryKind.MISSION, entityId: 'urn:missionweaveprotocol:mission:m' });
      const page: ReplayPage = await core.replay('urn:missionweaveprotocol:group:g', { after: 0, limit: 10 });
      try { await core.perform(event.bytes); } catch (e) {
        if (e instanceof RevisionConflict) { const family: ErrorCodeName = e.family; void family; }
        if (e instanceof MissionWeaveProtocolError && e.family === ErrorCode.NOT_FOUND) { const code: ErrorCodeName = e.asDict().code; void code; }
      }
      void mission;
      return page.events.length + event.sequence + (page.continuation ?? 0);
    }
    void go;
    core.free();`;
  // The browser client: AgentClient with IndexedDB Cursors and a page-held key (the wasm entry).
  const browserClient = (from) => `
    import { AgentClient, IndexedDbCursorStore, SigningKey, CommandRefused, type CursorStore, type DeliveredEvent } from '${from}';
    declare const registry: Uint8Array;
    declare const command: Uint8Array;
    async function go(): Promise<number> {
      const store: CursorStore = await IndexedDbCursorStore.open('cursors');
      const signingKey = SigningKey.fromSeed('urn:missionweaveprotocol:key:a-1', new Uint8Array(32));
      const client = new AgentClient('wss://gw.example/ws', { agentId: 'urn:missionweaveprotocol:agent:a', signingKey, registry,
        authorityId: 'urn:missionweaveprotocol:service:ga', store });
      const epoch: number = await client.connect();
      await client.subscribe(['urn:missionweaveprotocol:group:g']);
      try { const event: DeliveredEvent = await client.send(command); await client.acknowledge(event); } catch (e) {
        if (e instanceof CommandRefused) { const code: string = e.code; void code; }
      }
      const reasons: string[] = client.rejected.map((r) => r.reason);
      const cursor: number = await store.cursor(client.agentId, 'urn:missionweaveprotocol:group:g');
      await client.close();
      return epoch + cursor + reasons.length;
    }
    void go;`;
  writeFileSync(join(project, 'browser-client.mts'), browserClient('missionweaveprotocol/wasm'));
  writeFileSync(join(project, 'core.mts'), core('missionweaveprotocol'));
  writeFileSync(join(project, 'core.cts'), core('missionweaveprotocol/wasm'));
  writeFileSync(join(project, 'keys.mts'), keys('missionweaveprotocol'));
  writeFileSync(join(project, 'keys-verify.mts'), keys('missionweaveprotocol/verify'));
  writeFileSync(join(project, 'esm.mts'), use('missionweaveprotocol'));
  writeFileSync(join(project, 'wasm.mts'), use('missionweaveprotocol/wasm'));
  writeFileSync(join(project, 'cjs.cts'), use('missionweaveprotocol'));
  writeFileSync(join(project, 'shapes.mts'), shapes('missionweaveprotocol'));
  writeFileSync(join(project, 'shapes.cts'), shapes('missionweaveprotocol'));
  // A name the package does not export must not type-check: no benchmark loop is published.
  writeFileSync(join(project, 'wrong.mts'), `import { nativeVerifyLoop } from 'missionweaveprotocol';\nvoid nativeVerifyLoop;\n`);
  const tsc = join(JS, 'node_modules', 'typescript', 'bin', 'tsc');
  const flags = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--lib', 'es2022,dom', '--skipLibCheck', 'false'];
  const check = (files) => execFileSync(process.execPath, [tsc, ...flags, ...files], { cwd: project, encoding: 'utf8', stdio: 'pipe' });
  writeFileSync(join(project, 'using.mts'), using('missionweaveprotocol'));
  writeFileSync(join(project, 'using.cts'), using('missionweaveprotocol'));
  try {
    check(['esm.mts', 'wasm.mts', 'cjs.cts', 'keys.mts', 'keys-verify.mts', 'shapes.mts', 'shapes.cts', 'core.mts', 'core.cts', 'browser-client.mts']);
    execFileSync(process.execPath, [tsc, ...flags.map((f) => (f === 'es2022,dom' ? 'es2022,esnext.disposable,dom' : f)), 'using.mts', 'using.cts'],
      { cwd: project, encoding: 'utf8', stdio: 'pipe' });
  } catch (error) {
    assert.fail(`tsc: ${error.stdout}${error.stderr}`);
  }
  assert.throws(() => check(['wrong.mts']), (e) => /has no exported member 'nativeVerifyLoop'/.test(e.stdout));
});
