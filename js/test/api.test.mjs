// The public API on every backend: signing and verification of all nine kinds, batches,
// admission with the in-memory log and a JavaScript log, frames, bundle access, error classes
// with the wire/protected split, and bad input (typed errors, never a crash).
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { backends, bundleBytes, bundleJson } from './support.mjs';

const VALID = 'cryptography/vectors/signed-documents/valid/';
const INVALID = 'cryptography/vectors/signed-documents/invalid/';
const REGISTRY = 'cryptography/keys/registry-valid.json';
const SERVICE = { type: 'service', id: 'urn:missionweaveprotocol:service:admission' };

const matrix = bundleJson('cryptography/manifest.json').cases
  .find((c) => c.id === 'accept.profile-matrix.all-nine').evaluations;

function caught(fn) {
  try {
    fn();
  } catch (error) {
    return error;
  }
  assert.fail('expected an error');
}

let apis;
before(async () => { apis = await backends(); });

function unsignedOf(api, kind) {
  const evaluation = matrix.find((e) => e.profileId === kind);
  const verified = api.verifySignedDocument(kind, bundleBytes(evaluation.document), bundleBytes(evaluation.registry));
  const key = bundleJson(evaluation.signingKey);
  return { evaluation, verified, key: { keyId: key.keyId, seed: Buffer.from(key.seed, 'base64url') } };
}

for (const name of ['napi (ESM)', 'wasm (ESM)', 'wasm (CommonJS)']) {
  describe(name, () => {
    test('backend and constants', () => {
      const api = apis[name];
      assert.equal(api.backend, name.startsWith('napi') ? 'napi' : 'wasm');
      assert.equal(api.DOCUMENT_KINDS.length, 9);
      assert.deepEqual(api.STAGES, ['parse', 'schema', 'signature-envelope', 'key-resolution', 'canonicalization', 'signature']);
      assert.match(api.sourceCommit, /^[0-9a-f]{7,40}$/);
    });

    test('canonicalize, canonical hash, strict parse check', () => {
      const api = apis[name];
      assert.equal(api.canonicalize('{"b": false, "c": 12e1, "a": "Hello!", "d": -0.0}'), '{"a":"Hello!","b":false,"c":120,"d":0}');
      assert.deepEqual([...api.canonicalBytes('[1.0]')], [...Buffer.from('[1]')]);
      assert.equal(api.canonicalHash('{"a":1}'), 'sha256:015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862');
      assert.equal(api.checkStrictJson(' {"a":[]} '), 'object');
      assert.equal(api.checkStrictJson('"x"'), 'string');
      assert.equal(api.canonicalize(new Uint8Array(Buffer.from('{"z":1,"a":2}'))), '{"a":2,"z":1}');
    });

    test('schema validation by name', () => {
      const api = apis[name];
      assert.ok(api.schemaNames().includes('command'));
      assert.equal(api.schemaNames().length, 22);
      api.validateSchema('command.schema.json', bundleBytes('conformance/vectors/valid/command.json'));
      api.validateSchema('command', bundleBytes('conformance/vectors/valid/command.json'));
      assert.throws(() => api.validateSchema('command', '{"protocolVersion":"0.1"}'), api.SchemaValidationError);
      assert.throws(() => api.validateSchema('command', '{"protocolVersion":"0.1"}'), (e) =>
        e instanceof Error && e.code === 'SCHEMA_VALIDATION_FAILED' && e.stage === 'schema' && typeof e.keyword === 'string');
      assert.throws(() => api.validateSchema('no-such-schema', '{}'), (e) => e instanceof api.ArgumentError && e.code === 'PROTOCOL_VIOLATION');
    });

    test('sign and verify all nine kinds with a Registry snapshot', () => {
      const api = apis[name];
      for (const kind of api.DOCUMENT_KINDS) {
        const { evaluation, verified, key } = unsignedOf(api, kind);
        const registry = new api.Registry(bundleBytes(evaluation.registry));
        const signed = api.signDocument(kind, verified.signingBytes, { ...key, registry });
        assert.ok(signed instanceof api.SignedDocument);
        assert.equal(signed.signature, evaluation.expect.verified.signature, kind);
        assert.equal(signed.signingHash, evaluation.expect.verified.signingHash, kind);
        const again = api.verifySignedDocument(kind, signed.bytes, registry);
        assert.ok(again instanceof api.VerifiedDocument);
        assert.equal(again.signedDocumentHash, signed.documentHash);
        assert.deepEqual({ ...again.principal }, evaluation.expect.verified.principal);
        assert.equal(again.signingText, new TextDecoder().decode(signed.signingBytes));
        assert.equal(again.publicKey, registry.binding(again.keyId).publicKey);
      }
    });

    test('a Registry object validates once; a bad snapshot is a RegistryError, or stage 4 as bytes', () => {
      const api = apis[name];
      const registry = new api.Registry(bundleBytes(REGISTRY));
      assert.match(registry.digest, /^sha256:[0-9a-f]{64}$/);
      assert.ok(registry.size > 0);
      assert.equal(registry.binding('urn:missionweaveprotocol:key:none'), null);
      const bad = bundleBytes('cryptography/keys/registry-organization-id-relative-reference.json');
      assert.throws(() => new api.Registry(bad), (e) => e instanceof api.RegistryError && e.code === 'AUTH_INVALID_SIGNATURE' && e.stage === 'key-resolution');
      assert.throws(() => api.verifySignedDocument('command', bundleBytes(`${VALID}command.json`), bad),
        (e) => e instanceof api.VerificationError && e.stage === 'key-resolution' && e.stageNumber === 4);
      assert.throws(() => new api.Registry('{"not":"a registry"}'), api.RegistryError);
    });

    test('signing refuses what would not verify', () => {
      const api = apis[name];
      const { verified, key } = unsignedOf(api, 'command');
      // Another Principal's key: signs, but six-stage verification against the Registry fails.
      const other = bundleJson('cryptography/keys/signing-mission-owner.json');
      assert.throws(() => api.signDocument('command', verified.signingBytes, {
        keyId: other.keyId, seed: Buffer.from(other.seed, 'base64url'), registry: bundleBytes(REGISTRY),
      }), (e) => e instanceof api.SigningError && e.stage === 'key-resolution');
      assert.throws(() => api.signDocument('command', '{"protocolVersion":"0.1"}', key),
        (e) => e instanceof api.SigningError && e.stage === 'schema' && e.code === 'SCHEMA_VALIDATION_FAILED');
      assert.throws(() => api.signDocument('command', verified.signingBytes, { ...key, seed: new Uint8Array(31) }),
        (e) => e instanceof api.ArgumentError && /32 bytes/.test(e.message));
    });

    test('verification errors keep the wire/protected split', () => {
      const api = apis[name];
      const rejection = (file) => caught(() => api.verifySignedDocument('command', bundleBytes(`${INVALID}${file}`), bundleBytes(REGISTRY)));
      const error = rejection('command-payload-tamper.json');
      assert.ok(error instanceof api.VerificationError && error instanceof api.MwpError && error instanceof Error);
      assert.equal(error.name, 'VerificationError');
      assert.equal(error.code, 'AUTH_INVALID_SIGNATURE');
      assert.equal(error.message, 'AUTH_INVALID_SIGNATURE: signed document rejected');
      assert.equal(error.stage, 'signature');
      assert.equal(error.stageNumber, 6);
      assert.equal(error.reason, 'signature-mismatch');
      assert.ok(error.detail.length > 0);
      assert.deepEqual(error.toWire(), { code: 'AUTH_INVALID_SIGNATURE', message: 'signed document rejected', retryable: false });
      // Accidental serialization shows the wire view only.
      assert.deepEqual(JSON.parse(JSON.stringify(error)), { code: 'AUTH_INVALID_SIGNATURE', wireMessage: 'signed document rejected', retryable: false });
      assert.ok(!String(error).includes('signature-mismatch'));
      assert.match(error.protectedDiagnostic(), /^signature\/signature-mismatch: /);
      // Stage 3 and stage 4 failures look identical on the wire.
      const stage3 = rejection('command-created-at-mismatch.json');
      const stage4 = rejection('command-unknown-key.json');
      assert.deepEqual([stage3.stage, stage4.stage], ['signature-envelope', 'key-resolution']);
      assert.deepEqual(stage3.toWire(), stage4.toWire());
      assert.equal(stage3.message, stage4.message);
    });

    test('batch verification returns results and errors in order', () => {
      const api = apis[name];
      const registry = new api.Registry(bundleBytes(REGISTRY));
      const results = api.verifySignedDocuments([
        { kind: 'command', document: bundleBytes(`${VALID}command.json`) },
        { kind: 'command', document: bundleBytes(`${INVALID}command-duplicate-decoded-member.json`) },
        { kind: 'event', document: bundleBytes(`${VALID}event.json`) },
        { kind: 'command', document: bundleBytes(`${INVALID}command-payload-tamper.json`) },
      ], registry, { threads: 2 });
      assert.ok(results[0] instanceof api.VerifiedDocument);
      assert.ok(results[1] instanceof api.VerificationError && results[1].stage === 'parse' && results[1].code === 'PROTOCOL_VIOLATION');
      assert.ok(results[2] instanceof api.VerifiedDocument && results[2].kind === 'event');
      assert.ok(results[3] instanceof api.VerificationError && results[3].stage === 'signature');
      assert.deepEqual(api.verifySignedDocuments([], registry), []);
      assert.throws(() => api.verifySignedDocuments([{ kind: 'nope', document: '{}' }], registry), api.ArgumentError);
    });

    test('First Admission with the in-memory log, idempotent retry, historical replay', () => {
      const api = apis[name];
      const log = new api.InMemoryAdmissionLog(SERVICE);
      const document = bundleBytes(`${VALID}command.json`);
      const registry = new api.Registry(bundleBytes(REGISTRY));
      let asked = 0;
      const context = () => {
        asked += 1;
        return { admissionRecordId: 'urn:missionweaveprotocol:admission-record:js-test', trustedAcceptedAt: '2026-07-15T00:05:00Z', acceptedBy: SERVICE };
      };
      assert.throws(() => api.replayHistorical('command', document, registry, log),
        (e) => e instanceof api.AdmissionError && e.reason === 'record-missing' && e.stage === 'admission' && e.code === 'AUTH_INVALID_SIGNATURE');
      const first = api.admitFirst('command', document, registry, log, context);
      assert.ok(first instanceof api.AdmittedDocument);
      assert.equal(first.existing, false);
      assert.equal(first.record.documentKind, 'command');
      assert.equal(log.size, 1);
      const retry = api.admitFirst('command', document, registry, log, context);
      assert.equal(retry.existing, true);
      assert.equal(asked, 1, 'the trusted context is asked only on authoritative absence');
      assert.deepEqual([...api.replayHistorical('command', document, registry, log).recordBytes], [...first.recordBytes]);
      // Trusted time outside the key interval fails closed.
      const late = new api.InMemoryAdmissionLog(SERVICE);
      assert.throws(() => api.admitFirst('command', document, registry, late, { ...context(), trustedAcceptedAt: '2030-01-01T00:00:00Z' }),
        (e) => e instanceof api.AdmissionError && e.reason === 'trusted-time-outside-key-interval');
      assert.equal(late.size, 0);
    });

    test('a JavaScript Admission Log: committed, thrown, async and malformed replies', () => {
      const api = apis[name];
      const document = bundleBytes(`${VALID}command.json`);
      const registry = bundleBytes(REGISTRY);
      const context = { admissionRecordId: 'urn:missionweaveprotocol:admission-record:js-log', trustedAcceptedAt: '2026-07-15T00:05:00Z', acceptedBy: SERVICE };
      const stored = new Map();
      const log = {
        lookup(org, hash) {
          const record = stored.get(`${org} ${hash}`);
          return record ? { status: 'found', record, authenticatedService: SERVICE } : { status: 'authoritative-absence' };
        },
        append(candidate, bytes) {
          assert.ok(bytes instanceof Uint8Array);
          stored.set(`${candidate.organizationId} ${candidate.signingHash}`, bytes);
          return { status: 'committed', record: bytes, authenticatedService: SERVICE };
        },
      };
      const admitted = api.admitFirst('command', document, registry, log, context);
      assert.equal(admitted.existing, false);
      assert.equal(stored.size, 1);
      assert.equal(api.replayHistorical('command', document, registry, log).existing, true);

      const boom = new Error('database down');
      assert.throws(() => api.admitFirst('command', document, registry, { lookup() { throw boom; }, append() {} }, context),
        (e) => e instanceof api.AdmissionError && e.reason === 'log-indeterminate' && e.cause === boom);
      assert.throws(() => api.admitFirst('command', document, registry, { lookup: async () => ({ status: 'authoritative-absence' }), append() {} }, context),
        (e) => e instanceof api.AdmissionError && e.reason === 'log-indeterminate' && e.cause instanceof api.ArgumentError);
      assert.throws(() => api.admitFirst('command', document, registry, { lookup: () => 42, append() {} }, context),
        (e) => e instanceof api.AdmissionError && e.reason === 'log-indeterminate');
      // `found` without a usable record: the log answered, but nothing authenticates the record
      // (read fail-closed by the core, as in Python: tests/errors/failing-calls.json).
      assert.throws(() => api.admitFirst('command', document, registry, { lookup: () => ({ status: 'found' }), append() {} }, context),
        (e) => e instanceof api.AdmissionError && e.reason === 'log-authentication-failed');
      assert.throws(() => api.admitFirst('command', document, registry, { lookup: () => ({ status: 'authoritative-absence' }), append: () => ({ status: 'conflict' }) }, context),
        (e) => e instanceof api.AdmissionError && e.reason === 'record-conflict');
      const appended = [];
      assert.throws(() => api.admitFirst('command', document, registry, { lookup: () => ({ status: 'authoritative-absence' }), append: (c) => { appended.push(c); } },
        () => ({ ...context, acceptedBy: { type: 'robot', id: 'x' } })), (e) => e instanceof api.ArgumentError && /acceptedBy/.test(e.message));
      assert.deepEqual(appended, [], 'a malformed context never reaches append');
      assert.throws(() => api.admitFirst('command', document, registry, {}, context), api.ArgumentError);
      assert.throws(() => api.admitFirst('command', bundleBytes(`${INVALID}command-payload-tamper.json`), registry, log, context),
        (e) => e instanceof api.VerificationError && e.stage === 'signature');
    });

    test('frames: parse, received COMMAND bytes, encode, ERROR frames', () => {
      const api = apis[name];
      const frame = api.parseFrame(bundleBytes('conformance/vectors/valid/websocket-frame.json'));
      assert.ok(frame instanceof api.Frame);
      assert.equal(frame.frameType, 'SUBSCRIBE');
      assert.equal(frame.value.groups.length, 2);
      assert.equal(api.encodeFrame(frame.value), frame.json);
      const command = bundleBytes(`${VALID}command.json`).toString('utf8').trimEnd();
      const wire = `{"protocolVersion":"0.1","frameId":"urn:uuid:00000000-0000-4000-8000-000000000009","frameType":"COMMAND","command":${command}}`;
      const received = api.parseReceivedFrame(wire);
      assert.ok(received instanceof api.ReceivedCommandFrame);
      assert.equal(new TextDecoder().decode(received.commandBytes), command, 'the exact Command bytes');
      assert.equal(api.verifySignedDocument('command', received.commandBytes, bundleBytes(REGISTRY)).signingHash,
        'sha256:6655c5d67ae3ecc19a4ed04bda7f1372aeaafc7adf939a77715de96ef2100695');
      const error = api.errorFrame({ frameId: 'urn:uuid:00000000-0000-4000-8000-00000000000a', code: 'AUTH_INVALID_SIGNATURE', message: 'signed document rejected', occurredAt: '2026-07-15T00:00:00Z' });
      assert.equal(api.parseFrame(error).frameType, 'ERROR');
      assert.equal(JSON.parse(error).error.retryable, false);
      assert.throws(() => api.parseFrame('{"frameType":"NOPE"}'), (e) => e instanceof api.FrameError && e.code === 'SCHEMA_VALIDATION_FAILED');
      assert.throws(() => api.parseFrame('{"a":1,"a":1}'), (e) => e instanceof api.FrameError && e.code === 'PROTOCOL_VIOLATION');
      assert.throws(() => api.errorFrame({ frameId: 'x', code: 'NOT_A_CODE', message: 'm', occurredAt: '2026-07-15T00:00:00Z' }), api.ArgumentError);
    });

    test('bundle files, kind detection, signing preview', () => {
      const api = apis[name];
      assert.deepEqual(Buffer.from(api.bundleFile('cryptography/manifest.json')), bundleBytes('cryptography/manifest.json'));
      assert.equal(api.bundleFile('no/such/file'), undefined);
      assert.ok(api.bundlePaths().includes('admission/manifest.json'));
      assert.deepEqual(api.detectKinds(bundleBytes(`${VALID}event.json`)), ['event']);
      assert.deepEqual(api.detectKinds('{}'), []);
      for (const kind of api.DOCUMENT_KINDS) {
        assert.deepEqual(api.detectKinds(bundleBytes(`${VALID}${kind}.json`)), [kind]);
      }
      assert.equal(caught(() => api.detectKinds('{"a":1,"a":2}')).code, 'PROTOCOL_VIOLATION');
      assert.equal(caught(() => api.signingPreview('{"n":1e400}')).stage, 'canonicalization');
      const preview = api.signingPreview(bundleBytes(`${INVALID}command-payload-tamper.json`));
      assert.match(preview.signingHash, /^sha256:[0-9a-f]{64}$/);
      assert.notEqual(preview.signingHash, 'sha256:6655c5d67ae3ecc19a4ed04bda7f1372aeaafc7adf939a77715de96ef2100695');
    });

    test('bad input gives typed errors, never a crash', () => {
      const api = apis[name];
      const registry = bundleBytes(REGISTRY);
      const isArg = (e) => e instanceof api.ArgumentError && e instanceof Error && e.code === 'PROTOCOL_VIOLATION';
      for (const input of [null, undefined, 42, {}, [], true]) {
        assert.throws(() => api.canonicalize(input), isArg);
        assert.throws(() => api.verifySignedDocument('command', input, registry), isArg);
      }
      assert.throws(() => api.verifySignedDocument('Command', '{}', registry), isArg);
      assert.throws(() => api.verifySignedDocument(undefined, '{}', registry), isArg);
      assert.throws(() => api.verifySignedDocument('command', '{}', null), isArg);
      assert.throws(() => new api.InMemoryAdmissionLog({ type: 'robot', id: 'x' }), isArg);
      assert.throws(() => api.runConformance(['nope']), isArg);
      const parse = (e) => e instanceof api.ParseError && e.code === 'PROTOCOL_VIOLATION' && e.stage === 'parse';
      for (const bad of ['', '{', '{"a":1,"a":2}', '[1,]', '01', 'nul', '{"a":1} x', '\uFEFF{}', '"\u0001"',
        new Uint8Array([0xff, 0xfe]), new Uint8Array([0x22, 0xc3, 0x28, 0x22]), '['.repeat(100000)]) {
        assert.throws(() => api.canonicalize(bad), parse, JSON.stringify(String(bad).slice(0, 20)));
        assert.throws(() => api.verifySignedDocument('command', bad, registry),
          (e) => e instanceof api.VerificationError && e.stage === 'parse' && e.code === 'PROTOCOL_VIOLATION');
      }
      assert.throws(() => api.canonicalize('[1e400]'), (e) => e instanceof api.CanonicalizationError && e.code === 'PROTOCOL_VIOLATION');
      assert.throws(() => api.canonicalize('["\\ud800"]'), (e) => e instanceof api.CanonicalizationError && e.stage === 'canonicalization');
      assert.throws(() => api.verifySignedDocument('command', '{}', registry),
        (e) => e instanceof api.VerificationError && e.code === 'SCHEMA_VALIDATION_FAILED' && e.stage === 'schema');
      assert.throws(() => api.verifySignedDocument('command', bundleBytes(`${VALID}command.json`), 'garbage'),
        (e) => e instanceof api.VerificationError && e.stage === 'key-resolution');
      // Large input within the DOCUMENT limits (the default for outside input) is fine; past
      // them it is refused, typed; the module keeps working after every failure above.
      const big = `[${'1,'.repeat(60000)}1]`;
      assert.equal(api.canonicalHash(big).length, 71);
      assert.throws(() => api.canonicalHash(`[${'1,'.repeat(200000)}1]`),
        (e) => e.code === 'PROTOCOL_VIOLATION' && /more than 65536 entries/.test(e.message));
      assert.equal(api.canonicalize('{"ok":true}'), '{"ok":true}');
    });
  });
}
