// Verification and admission rejections show the same wire surface (issue 9, item 9), on every
// backend: `String(e)` is `<class name>: <CODE>: signed document rejected` for both, `e.name` is
// the class name and not enumerable, the message, `toWire()`, the enumerable members and
// `JSON.stringify(e)` are identical, and `protectedDiagnostic()` has one form. Only the protected
// diagnostic (stage, reason, detail) tells them apart.
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { before, describe, test } from 'node:test';

import { backends, bundleBytes } from './support.mjs';

const VECTORS = 'cryptography/vectors/signed-documents';
const WIRE = 'AUTH_INVALID_SIGNATURE: signed document rejected';
const SERVICE = { type: 'service', id: 'urn:missionweaveprotocol:service:admission' };

let apis;
before(async () => { apis = await backends(); });

function caught(run) {
  try {
    run();
  } catch (error) {
    return error;
  }
  assert.fail('expected a rejection');
}

for (const name of ['napi (ESM)', 'wasm (ESM)', 'wasm (CommonJS)']) {
  describe(name, () => {
    test('verification (stages 3, 4, 6) and admission rejections have one wire surface', () => {
      const api = apis[name];
      const registry = bundleBytes('cryptography/keys/registry-valid.json');
      const valid = bundleBytes(`${VECTORS}/valid/command.json`);
      const verification = ['command-signature-wrong-length', 'command-unknown-key', 'command-payload-tamper']
        .map((file) => caught(() => api.verifySignedDocument('command', bundleBytes(`${VECTORS}/invalid/${file}.json`), registry)));
      assert.deepEqual(verification.map((e) => e.stage), ['signature-envelope', 'key-resolution', 'signature']);
      const other = { type: 'service', id: 'urn:missionweaveprotocol:service:other' };
      const context = { admissionRecordId: 'urn:uuid:1', trustedAcceptedAt: '2026-07-15T00:05:00Z', acceptedBy: other };
      const admission = [
        caught(() => api.replayHistorical('command', valid, registry, new api.InMemoryAdmissionLog(SERVICE))),
        caught(() => api.replayHistorical('command', valid, registry, { lookup: () => ({ status: 'indeterminate' }) })),
        caught(() => api.admitFirst('command', valid, registry, new api.InMemoryAdmissionLog(SERVICE), context)),
      ];
      assert.deepEqual(admission.map((e) => e.reason), ['record-missing', 'log-indeterminate', 'log-authentication-failed']);

      const surface = (error) => ({
        message: error.message,
        string: String(error).slice(error.name.length),
        inspected: inspect(error).split('\n')[0].slice(error.name.length),
        json: JSON.stringify(error),
        keys: Object.keys(error),
        wire: error.toWire(),
        nameEnumerable: Object.keys(error).includes('name'),
        code: error.code,
        retryable: error.retryable,
        wireMessage: error.wireMessage,
      });
      const reference = surface(verification[0]);
      assert.deepEqual(reference, {
        message: WIRE,
        string: `: ${WIRE}`,
        inspected: `: ${WIRE}`,
        json: JSON.stringify({ wireMessage: 'signed document rejected', code: 'AUTH_INVALID_SIGNATURE', retryable: false }),
        keys: ['wireMessage', 'code', 'retryable'],
        wire: { code: 'AUTH_INVALID_SIGNATURE', message: 'signed document rejected', retryable: false },
        nameEnumerable: false,
        code: 'AUTH_INVALID_SIGNATURE',
        retryable: false,
        wireMessage: 'signed document rejected',
      });
      for (const error of verification) {
        assert.ok(error instanceof api.VerificationError);
        assert.equal(error.name, 'VerificationError');
        assert.equal(String(error), `VerificationError: ${WIRE}`);
        assert.deepEqual(surface(error), reference, error.reason);
        assert.equal(error.protectedDiagnostic(), `${error.stage}/${error.reason}: ${error.detail}`);
      }
      for (const error of admission) {
        assert.ok(error instanceof api.AdmissionError);
        assert.ok(!(error instanceof api.VerificationError));
        assert.equal(error.name, 'AdmissionError');
        assert.equal(String(error), `AdmissionError: ${WIRE}`);
        assert.deepEqual(surface(error), reference, error.reason);
        assert.equal(error.stage, 'admission');
        assert.equal(error.protectedDiagnostic(), `admission/${error.reason}: ${error.detail}`);
      }
      // The protected diagnostic never reaches the wire view.
      for (const error of [...verification, ...admission]) {
        assert.ok(!String(error).includes(error.reason) && !JSON.stringify(error).includes(error.reason), error.reason);
        assert.ok(!String(error).includes(error.detail), error.reason);
      }
    });
  });
}
