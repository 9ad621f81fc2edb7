// Issue 9, item 6: a JavaScript string crosses to the core as UTF-8, and TextEncoder silently
// repairs an unpaired surrogate to U+FFFD, so `canonicalHash('"\uD800"')` used to equal
// `canonicalHash('"\uFFFD"')`. Such a string is now refused before encoding, with the error the
// core itself gives for the escaped code unit (stage 5, `unpaired-surrogate`), on every backend.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { backends, bundleBytes } from './support.mjs';

const REGISTRY = 'cryptography/keys/registry-valid.json';
const VALID = 'cryptography/vectors/signed-documents/valid/command.json';
const utf8 = (text) => new TextEncoder().encode(text);

function caught(fn) {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return assert.fail('expected an error');
}

// Everything an error says about itself, for comparing the refusal with the core's own error.
function described(error) {
  return {
    name: error.name, class: error.constructor.name, message: error.message, code: error.code, stage: error.stage,
    reason: error.reason, detail: error.detail, retryable: error.retryable, fields: error.fields, wire: String(error.wireError?.code),
  };
}

const ILL_FORMED = ['"\uD800"', '["a\uDC00b"]', '{"\uDFFF":1}', '"\uD83D"', '"\uDE00\uD83D"'];

let apis;
before(async () => { apis = await backends(); });

for (const name of ['napi (ESM)', 'wasm (ESM)', 'wasm (CommonJS)']) {
  describe(name, () => {
    test('the reproduction: "\\uD800" no longer hashes as "\\uFFFD"', () => {
      const api = apis[name];
      assert.equal('"\uD800"'.isWellFormed(), false);
      const error = caught(() => api.canonicalHash('"\uD800"'));
      assert.ok(error instanceof api.CanonicalizationError);
      assert.match(api.canonicalHash('"\uFFFD"'), /^sha256:[0-9a-f]{64}$/);
      assert.equal(api.canonicalHash('"\uFFFD"'), api.canonicalHash(utf8('"\uFFFD"')));
    });

    test('JSON text: the core\'s own stage-5 CanonicalizationError, identical for every entry', () => {
      const api = apis[name];
      // What the core says for the exact code unit, given as an escape in UTF-8 bytes.
      const core = caught(() => api.canonicalize(utf8('"\\ud800"')));
      assert.ok(core instanceof api.CanonicalizationError);
      assert.equal(core.code, 'PROTOCOL_VIOLATION');
      assert.equal(core.reason, 'unpaired-surrogate');
      assert.equal(core.stage, 'canonicalization');
      assert.equal(core.message, 'string holds an unpaired UTF-16 surrogate');
      for (const text of ILL_FORMED) {
        assert.equal(text.isWellFormed(), false, JSON.stringify(text));
        for (const call of [api.canonicalize, api.canonicalBytes, api.canonicalHash, api.checkStrictJson, api.detectKinds,
          (json) => api.validateSchema('command', json)]) {
          const error = caught(() => call(text));
          assert.ok(error instanceof api.CanonicalizationError, `${call.name}(${JSON.stringify(text)})`);
          assert.deepEqual(described(error), described(core));
        }
      }
    });

    test('documents: the core\'s own stage-5 VerificationError; a batch reports it for that item', () => {
      const api = apis[name];
      const registry = bundleBytes(REGISTRY);
      const core = caught(() => api.signingPreview(utf8('{"s":"\\ud800"}')));
      assert.ok(core instanceof api.VerificationError);
      assert.equal(core.stage, 'canonicalization');
      assert.equal(core.code, 'PROTOCOL_VIOLATION');
      const valid = bundleBytes(VALID).toString('utf8');
      // A valid document with a lone surrogate written into one of its strings.
      const tampered = valid.replace('"urn:', '"\uD800urn:');
      assert.notEqual(tampered, valid);
      assert.equal(tampered.isWellFormed(), false);
      for (const call of [() => api.verifySignedDocument('command', tampered, registry), () => api.signingPreview(tampered)]) {
        const error = caught(call);
        assert.ok(error instanceof api.VerificationError);
        assert.deepEqual(described(error), described(core));
      }
      const [refused, verified] = api.verifySignedDocuments(
        [{ kind: 'command', document: tampered }, { kind: 'command', document: valid }], registry);
      assert.deepEqual(described(refused), described(core));
      assert.equal(verified.kind, 'command');
    });

    test('well-formed strings, surrogate pairs included, are unchanged', () => {
      const api = apis[name];
      assert.equal(api.canonicalHash('"\uD83D\uDE00"'), api.canonicalHash(utf8('"\\ud83d\\ude00"')));
      assert.equal(api.canonicalize('["\uD83D\uDE00",1]'), '["\uD83D\uDE00",1]');
      assert.equal(api.verifySignedDocument('command', bundleBytes(VALID).toString('utf8'), bundleBytes(REGISTRY)).kind, 'command');
    });
  });
}
