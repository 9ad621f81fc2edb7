// Each entry point exports exactly what its TypeScript declarations declare, and the package's
// `exports` conditions pick the napi addon under Node and the WebAssembly build elsewhere.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';

import { DIST } from './support.mjs';

const require = createRequire(import.meta.url);

function declaredValues(file) {
  const text = readFileSync(join(DIST, file), 'utf8');
  // Overloaded functions are declared once per signature.
  return [...new Set([...text.matchAll(/^export declare (?:const|function|class) ([A-Za-z_$][\w$]*)/gm)].map((m) => m[1]))].sort();
}

const entries = [
  ['node.mjs', 'node.d.mts'], ['node.cjs', 'node.d.cts'],
  ['node-wasm.mjs', 'wasm.d.mts'], ['wasm.cjs', 'wasm.d.cts'],
];
// dist/wasm.mjs (the browser entry) is node-wasm.mjs with the browser loader: checked in
// browser-entry.test.mjs; it runs in Chromium (browser.test.mjs, browser-bundlers.test.mjs).

for (const [entry, types] of entries) {
  test(`${entry} exports exactly what ${types} declares`, async () => {
    const loaded = entry.endsWith('.mjs') ? await import(join(DIST, entry)) : require(join(DIST, entry));
    const runtime = Object.keys(loaded).filter((k) => k !== 'default').sort();
    assert.deepEqual(runtime, declaredValues(types));
    for (const name of runtime) {
      const isClass = new RegExp(`^export declare class ${name}\\b`, 'm').test(readFileSync(join(DIST, types), 'utf8'));
      if (isClass) assert.equal(typeof loaded[name], 'function', `${name} is a class`);
    }
  });
}

test('node-verify.mjs (verify.mjs under Node) exports exactly what verify.d.mts re-exports, a subset of the full declarations', async () => {
  const loaded = await import(join(DIST, 'node-verify.mjs'));
  const runtime = Object.keys(loaded).filter((k) => k !== 'default').sort();
  const text = readFileSync(join(DIST, 'verify.d.mts'), 'utf8');
  const values = text.match(/^export \{ ([^}]+) \} from '\.\/wasm\.mjs';$/m)[1].split(', ').sort();
  assert.deepEqual(runtime, values);
  const full = declaredValues('wasm.d.mts');
  for (const name of values) assert.ok(full.includes(name), `${name} is declared (with its TSDoc) in wasm.d.mts`);
  for (const name of ['Scheduler', 'BudgetLedger', 'ExecutionLease', 'admitFirst', 'runConformance', 'bundleFile', 'InMemoryAdmissionLog']) {
    assert.ok(!runtime.includes(name), `${name} is not in the verify-only build`);
  }
  for (const name of ['SigningKey', 'RegistryBuilder', 'Registry', 'verifySignedDocument', 'failureReasons', 'VerificationError']) {
    assert.ok(runtime.includes(name), name);
  }
});

test('ESM and CommonJS node entries share one instance', async () => {
  const esm = await import(join(DIST, 'node.mjs'));
  const cjs = require(join(DIST, 'node.cjs'));
  assert.equal(esm.VerificationError, cjs.VerificationError);
  assert.equal(esm.verifySignedDocument, cjs.verifySignedDocument);
});

test('package exports: node → napi, ./wasm → WebAssembly (ESM and require)', async () => {
  // Self-reference by package name resolves through package.json "exports".
  assert.equal((await import('missionweaveprotocol')).backend, 'napi');
  assert.equal(require('missionweaveprotocol').backend, 'napi');
  assert.equal((await import('missionweaveprotocol/wasm')).backend, 'wasm');
  assert.equal(require('missionweaveprotocol/wasm').backend, 'wasm');
  assert.equal(typeof (await import('missionweaveprotocol/verify')).SigningKey, 'function');
  const pkg = JSON.parse(readFileSync(join(DIST, '..', 'package.json'), 'utf8'));
  assert.equal(pkg.exports['.'].browser.default, './dist/wasm.mjs');
  assert.equal(pkg.exports['.'].default.import.default, './dist/wasm.mjs');
  // Under Node the ES module WebAssembly entries read the module from disk (issue 28).
  assert.equal(pkg.exports['./wasm'].node.import.default, './dist/node-wasm.mjs');
  assert.equal(pkg.exports['./wasm'].browser.default, './dist/wasm.mjs');
  assert.equal(pkg.exports['./verify'].node, './dist/node-verify.mjs');
  assert.equal(pkg.exports['./verify'].browser, './dist/verify.mjs');
});
