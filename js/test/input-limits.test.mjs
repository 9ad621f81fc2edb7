// Issue 9, item 1, through napi and WebAssembly: a 50 MB document (8.5 GB peak in napi, a 4 GB
// trap in WebAssembly before) is refused at stage 1 before any work; the entry limit and the
// number limit are typed stage-1 errors with their fields (docs/limits.md). The memory bound
// itself is measured with an allocation counter in core/protocol/tests/json_memory.rs.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { backends, bundleBytes } from './support.mjs';

const REGISTRY = 'cryptography/keys/registry-valid.json';

function caught(fn) {
  try {
    fn();
  } catch (error) {
    return error;
  }
  assert.fail('expected an error');
}

function repeated(item, count, last) {
  return Buffer.concat([Buffer.from('['), Buffer.from(item.repeat(count)), Buffer.from(`${last}]`)]);
}

let apis;
before(async () => { apis = await backends(); });

for (const name of ['napi (ESM)', 'wasm (ESM)']) {
  describe(`input limits (${name})`, () => {
    test('fifty megabytes of empty objects: stage 1, limit-exceeded', () => {
      const api = apis[name];
      const hostile = repeated('{},', 50_000_000 / 3, '{}');
      const error = caught(() => api.verifySignedDocument('command', hostile, bundleBytes(REGISTRY)));
      assert.ok(error instanceof api.VerificationError, String(error));
      assert.deepEqual([error.stage, error.reason, error.code], ['parse', 'limit-exceeded', 'PROTOCOL_VIOLATION']);
      assert.equal(error.message, 'PROTOCOL_VIOLATION: signed document rejected');
    });

    test('more entries than the document profile allows: stage 1', () => {
      const api = apis[name];
      const error = caught(() => api.verifySignedDocument('command', repeated('0,', 70_000, '0'), bundleBytes(REGISTRY)));
      assert.deepEqual([error.stage, error.reason], ['parse', 'limit-exceeded']);
    });

    test('within the limits a hostile shape reaches the schema stage', () => {
      const api = apis[name];
      const error = caught(() => api.verifySignedDocument('command', repeated('{},', 60_000, '{}'), bundleBytes(REGISTRY)));
      assert.equal(error.stage, 'schema');
    });

    test('a number over the state profile is a typed parse error with its fields', () => {
      const api = apis[name];
      const { STATE } = api.parseLimits();
      const limit = 1 << 20;
      for (const call of [api.canonicalize, api.canonicalHash]) {
        const error = caught(() => call('1'.repeat(limit + 1), { limits: STATE }));
        assert.ok(error instanceof api.MwpError, String(error));
        assert.deepEqual([error.code, error.reason], ['PROTOCOL_VIOLATION', 'limit-exceeded']);
        assert.deepEqual([error.fields.limit, error.fields.maximum], ['number-chars', limit]);
      }
    });

    test('untrusted input defaults to the document profile; the state profile is explicit', () => {
      const api = apis[name];
      const { STATE } = api.parseLimits();
      const long = '1'.repeat(257);
      for (const call of [api.canonicalize, api.canonicalHash]) {
        const error = caught(() => call(long));
        assert.deepEqual([error.fields.limit, error.fields.maximum], ['number-chars', 256]);
        assert.equal(typeof call(long, { limits: STATE }), 'string');
      }
      assert.equal(typeof api.canonicalize('1'.repeat(256)), 'string');
    });

    test('a number over the document profile is refused by verify at stage 1', () => {
      const api = apis[name];
      const hostile = Buffer.from(`{"n":${'1'.repeat(257)}}`);
      const error = caught(() => api.verifySignedDocument('command', hostile, bundleBytes(REGISTRY)));
      assert.deepEqual([error.stage, error.reason], ['parse', 'limit-exceeded']);
      const within = Buffer.from(`{"n":${'1'.repeat(256)}}`);
      assert.equal(caught(() => api.verifySignedDocument('command', within, bundleBytes(REGISTRY))).stage, 'schema');
    });

    test('limits are the core profiles and configurable per call', () => {
      const api = apis[name];
      const { DOCUMENT, STATE } = api.parseLimits();
      assert.deepEqual(DOCUMENT, { maxDocumentBytes: 4 << 20, maxContainerEntries: 65536, maxStringBytes: 1 << 20, maxNumberChars: 256 });
      assert.equal(STATE.maxNumberChars, 1 << 20);
      assert.ok(Object.isFrozen(DOCUMENT));
      const small = { ...DOCUMENT, maxContainerEntries: 10 };
      const shape = repeated('0,', 10, '0');
      let error = caught(() => api.verifySignedDocument('command', shape, bundleBytes(REGISTRY), { limits: small }));
      assert.deepEqual([error.stage, error.reason], ['parse', 'limit-exceeded']);
      assert.equal(caught(() => api.verifySignedDocument('command', shape, bundleBytes(REGISTRY))).stage, 'schema');
      const [item] = api.verifySignedDocuments([{ kind: 'command', document: shape }], bundleBytes(REGISTRY), { limits: small });
      assert.deepEqual([item.stage, item.reason], ['parse', 'limit-exceeded']);
      error = caught(() => api.canonicalize('[1,2,3]', { limits: { ...STATE, maxContainerEntries: 2 } }));
      assert.deepEqual([error.reason, error.fields.limit, error.fields.maximum], ['limit-exceeded', 'container-entries', 2]);
      assert.equal(api.canonicalHash('[1,2]', { limits: { ...STATE, maxContainerEntries: 2 } }), api.canonicalHash('[1,2]'));
    });

    test('bad limits are argument errors', () => {
      const api = apis[name];
      const { DOCUMENT } = api.parseLimits();
      for (const limits of [null, 5, [], { ...DOCUMENT, maxDocumentBytes: 0 }, { ...DOCUMENT, maxNumberChars: 1.5 },
        { ...DOCUMENT, maxStringBytes: Infinity }, { ...DOCUMENT, extra: 1 }, { maxDocumentBytes: 10 }]) {
        const error = caught(() => api.canonicalize('[]', { limits }));
        assert.ok(error instanceof api.ArgumentError, `${JSON.stringify(limits)}: ${error}`);
        assert.equal(error.code, 'PROTOCOL_VIOLATION');
      }
    });
  });
}

test('the verify-only build has the same limits', async () => {
  const verify = await import(new URL('../dist/node-verify.mjs', import.meta.url));
  assert.deepEqual(verify.parseLimits(), apis['napi (ESM)'].parseLimits());
  const shape = repeated('0,', 10, '0');
  const limits = { ...verify.parseLimits().DOCUMENT, maxContainerEntries: 10 };
  const error = caught(() => verify.verifySignedDocument('command', shape, bundleBytes(REGISTRY), { limits }));
  assert.deepEqual([error.stage, error.reason], ['parse', 'limit-exceeded']);
});
