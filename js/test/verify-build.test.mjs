// The verify-only WebAssembly build (bindings/wasm-verify → dist/wasm-verify, entry
// `missionweaveprotocol/verify`): within its size budget, without the embedded conformance
// vectors or the authority calls, and verifying exactly like the full build under Node.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { MODULES, VERIFY_BUDGET_GZIP, moduleSizes } from '../scripts/sizes.mjs';
import { bundleBytes, DIST } from './support.mjs';

test(`verify-only module is at most ${VERIFY_BUDGET_GZIP / 1024} KiB gzipped and smaller than the full build`, () => {
  const sizes = Object.fromEntries(moduleSizes().map((s) => [s.name, s]));
  assert.ok(sizes.verify.gzipBytes <= VERIFY_BUDGET_GZIP, `verify: ${sizes.verify.gzipBytes} bytes gzipped`);
  assert.ok(sizes.verify.gzipBytes < sizes.full.gzipBytes * 0.6, `verify ${sizes.verify.gzipBytes} vs full ${sizes.full.gzipBytes}`);
});

test('no embedded conformance vectors and no authority calls in the verify-only module', () => {
  const verify = readFileSync(MODULES.verify);
  const full = readFileSync(MODULES.full);
  // Text that only the embedded bundles hold (a vector path and a manifest member).
  for (const marker of ['cryptography/manifest.json', 'signed-documents/invalid/command-invalid-utf8.bin']) {
    assert.ok(full.includes(marker), `the full build embeds ${marker}`);
    assert.ok(!verify.includes(marker), `the verify build does not embed ${marker}`);
  }
  const glue = readFileSync(join(DIST, 'wasm-verify', 'missionweaveprotocol_wasm_verify.js'), 'utf8');
  for (const name of ['class Scheduler', 'class Ledger', 'class Lease', 'class PolicyGuard', 'class AuthSessionAuthority',
    'idempotencyKey', 'contextPublish', 'controlCommand', 'runConformance', 'bundleFile', 'admitWithHost', 'AdmissionSession']) {
    assert.ok(!glue.includes(name), `${name} is not exported by the verify build`);
  }
  for (const name of ['class Registry', 'class RegistryBuilder', 'function verify(', 'function keyInfo(', 'function failureReasons(',
    'function retryableWireCodes(']) {
    assert.ok(glue.includes(name), name);
  }
});

test('verify-only and full builds agree under Node (the whole cryptography bundle)', async () => {
  const verify = await import(join(DIST, 'node-verify.mjs'));
  const full = await import(join(DIST, 'node-wasm.mjs'));
  const manifest = JSON.parse(bundleBytes('cryptography/manifest.json'));
  let compared = 0;
  for (const testCase of manifest.cases) {
    for (const evaluation of testCase.evaluations.filter((e) => e.document)) {
      const outcome = (api) => {
        try {
          return api.verifySignedDocument(evaluation.profileId, bundleBytes(evaluation.document), bundleBytes(evaluation.registry)).signingHash;
        } catch (error) {
          return `${error.constructor.name} ${error.stage}/${error.reason}`;
        }
      };
      assert.equal(outcome(verify), outcome(full), evaluation.document);
      compared += 1;
    }
  }
  assert.ok(compared >= 60, `${compared}`);
});

test('verify-only build refuses a string holding a lone surrogate like the full build (issue 9)', async () => {
  const verify = await import(join(DIST, 'node-verify.mjs'));
  const full = await import(join(DIST, 'node-wasm.mjs'));
  const registry = bundleBytes('cryptography/keys/registry-valid.json');
  const outcome = (call) => {
    try {
      call();
    } catch (error) {
      return `${error.constructor.name} ${error.code} ${error.stage}/${error.reason} ${error.message}`;
    }
    return 'accepted';
  };
  for (const [api, expected] of [[verify, 'verify'], [full, 'full']]) {
    const json = outcome(() => api.canonicalHash('"\uD800"'));
    assert.equal(json, 'CanonicalizationError PROTOCOL_VIOLATION canonicalization/unpaired-surrogate string holds an unpaired UTF-16 surrogate', expected);
    const document = outcome(() => api.verifySignedDocument('command', '{"s":"\uD800"}', registry));
    assert.match(document, /^VerificationError PROTOCOL_VIOLATION canonicalization\//, expected);
  }
  assert.equal(outcome(() => verify.verifySignedDocument('command', '{"s":"\uD800"}', registry)),
    outcome(() => full.verifySignedDocument('command', '{"s":"\uD800"}', registry)));
});
