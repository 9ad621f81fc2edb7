// The programs in examples/js, run the way a new user runs them: `npm pack`, install the
// tarballs (the main package and this platform's napi package) into a fresh project, copy the example beside it, `node example.mjs`. Each must exit 0
// and print its expected lines.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { installInto, packPackages } from './pack-support.mjs';
import { JS, REPO } from './support.mjs';

const EXAMPLES = join(REPO, 'examples', 'js');

/** Expected output, line by line (a string is an exact line, a RegExp must match the line). */
const EXPECTED = {
  'own-keys.mjs': [
    'key urn:missionweaveprotocol:key:alice-1: public key 32 bytes, same after reload: true',
    'registry urn:missionweaveprotocol:organization:acme: 1 key',
    /^signed command: \d+ bytes$/,
    'verified: signed by agent urn:missionweaveprotocol:agent:alice with urn:missionweaveprotocol:key:alice-1',
    'rejected: {"code":"AUTH_INVALID_SIGNATURE","message":"signed document rejected","retryable":false}',
    'audit: signature/signature-mismatch: Ed25519 equation does not hold',
    'why: The Ed25519 equation does not hold: the signed content was changed after signing, or another key signed it. (§6.4 stage 6 (signature))',
  ],
  'verify-many.mjs': [
    '#0 verified urn:missionweaveprotocol:agent:bob',
    '#1 verified urn:missionweaveprotocol:agent:alice',
    /^#2 rejected AUTH_INVALID_SIGNATURE at signature: The Ed25519 equation does not hold/,
    '#3 verified urn:missionweaveprotocol:agent:alice',
    '#4 verified urn:missionweaveprotocol:agent:bob',
    '#5 verified urn:missionweaveprotocol:agent:alice',
    '#6 rejected AUTH_INVALID_SIGNATURE at key-resolution: The Registry has no binding for signature.keyId.',
    '5 of 7 verified',
  ],
  'lease-budget-scheduler.mjs': [
    'admit search: accepted',
    'admit write: accepted',
    'dispatch search (run 1), lease until 2026-07-15T09:01:01.000Z',
    'dispatch write (run 1), lease until 2026-07-15T09:01:01.000Z',
    'tool call 1: charged, 2 left',
    'tool call 2: charged, 1 left',
    'tool call 3: charged, 0 left',
    'tool call 4: refused BUDGET_EXCEEDED (tool_calls)',
    'mission spent 1200000 micro-USD',
    'search: completed, lease released',
    'write: completed, lease released',
    /^late claim: WORK_LEASE_EXPIRED \(closed\)$/,
    'scheduler: 0 items left',
  ],
  'gateway-service.mjs': [
    'gateway: ws://127.0.0.1:<port>/ws',
    'authenticated: session epoch 1',
    'sent: message.posted at sequence 2',
    'event 1: mission.created',
    'event 2: message.posted',
    'cursor: 2',
    'refused: AUTH_STALE_SESSION',
  ],
  'serve-verifier-page.mjs': [
    /^verifier page: http:\/\/127\.0\.0\.1:\d+\/page\/$/,
    '/page/: 200 text/html',
    '/page/verifier.mjs: 200 text/javascript',
    '/dist/verify.mjs: 200 text/javascript',
    '/dist/wasm-verify/missionweaveprotocol_wasm_verify_bg.wasm: 200 application/wasm',
  ],
};
const ARGS = { 'serve-verifier-page.mjs': ['--check'] };

let work;
let project;

before(() => {
  work = mkdtempSync(join(tmpdir(), 'mwp-examples-'));
  // The main tarball and this platform's napi package, as npm installs them for a user.
  const { main, platform } = packPackages(work);
  project = join(work, 'app');
  installInto(project, [main, platform], { name: 'app', type: 'module' });
});

after(() => { if (work) rmSync(work, { recursive: true, force: true }); });

test('every example has its expected output listed', () => {
  assert.deepEqual(readdirSync(EXAMPLES).filter((f) => f.endsWith('.mjs')).sort(), Object.keys(EXPECTED).sort());
});

for (const [file, expected] of Object.entries(EXPECTED)) {
  test(`examples/js/${file}: exit 0 and the expected output`, () => {
    copyFileSync(join(EXAMPLES, file), join(project, file));
    const run = spawnSync(process.execPath, [file, ...(ARGS[file] ?? [])], { cwd: project, encoding: 'utf8', timeout: 60_000 });
    assert.equal(run.status, 0, `exit ${run.status}\n${run.stdout}\n${run.stderr}`);
    const lines = run.stdout.trimEnd().split('\n');
    assert.equal(lines.length, expected.length, run.stdout);
    expected.forEach((want, i) => {
      if (want instanceof RegExp) assert.match(lines[i], want);
      else assert.equal(lines[i], want);
    });
  });
}

test('the README quickstart runs as written', () => {
  const readme = readFileSync(join(JS, 'README.md'), 'utf8');
  const start = readme.indexOf('## Quickstart');
  const code = readme.slice(start).match(/```js\n([\s\S]*?)```/)[1];
  writeFileSync(join(project, 'quickstart.mjs'), code);
  const run = spawnSync(process.execPath, ['quickstart.mjs'], { cwd: project, encoding: 'utf8', timeout: 60_000 });
  assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
  assert.deepEqual(run.stdout.trimEnd().split('\n'), [
    '32 true',
    'urn:missionweaveprotocol:agent:alice urn:missionweaveprotocol:key:alice-1',
    '{"code":"AUTH_INVALID_SIGNATURE","message":"signed document rejected","retryable":false}',
    'signature/signature-mismatch: Ed25519 equation does not hold',
    '§6.4 stage 6 (signature)',
  ]);
});
