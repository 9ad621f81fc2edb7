// One's own keys on every backend (napi, wasm ESM, wasm CommonJS, the verify-only build):
// SigningKey.generate / fromSeed / base64url, public key export, RegistryBuilder → Registry →
// sign → verify, and the typed errors of each step (positive and negative for every rule).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';

import { backends, DIST } from './support.mjs';

const ORG = 'urn:missionweaveprotocol:organization:acme';
const KEY_ID = 'urn:missionweaveprotocol:key:alice-1';
const ALICE = { type: 'agent', id: 'urn:missionweaveprotocol:agent:alice' };
const SEED = Uint8Array.from({ length: 32 }, (_, i) => i + 1);

/** An unsigned Command by `actor`, issued at `issuedAt` (schema-valid for agents). */
function unsignedCommand(actor = ALICE, issuedAt = '2026-07-15T00:00:00Z') {
  return JSON.stringify({
    protocolVersion: '0.1',
    actionId: 'urn:uuid:11111111-2222-4333-8444-555555555555',
    actor,
    sessionEpoch: 7,
    membershipEpoch: 3,
    coordinatorEpoch: 4,
    groupId: 'urn:missionweaveprotocol:group:demo',
    kind: 'mission.submit_for_approval',
    expectedRevision: 42,
    correlationId: 'urn:uuid:aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee',
    issuedAt,
    payload: { artifactHashes: [`sha256:${'a'.repeat(64)}`] },
  });
}

function caught(fn) {
  try {
    fn();
  } catch (error) {
    return error;
  }
  assert.fail('expected an error');
}

let apis;
before(async () => {
  apis = await backends();
  apis['verify (ESM)'] = await import(join(DIST, 'node-verify.mjs'));
});

for (const name of ['napi (ESM)', 'wasm (ESM)', 'wasm (CommonJS)', 'verify (ESM)']) {
  describe(name, () => {
    test('generate: random seed from crypto.getRandomValues, public key in bytes and base64url', () => {
      const { SigningKey } = apis[name];
      const a = SigningKey.generate(KEY_ID);
      const b = SigningKey.generate(KEY_ID);
      assert.notDeepEqual(a.seedBytes(), b.seedBytes(), 'two keys, two seeds');
      assert.equal(a.keyId, KEY_ID);
      assert.equal(a.algorithm, 'Ed25519');
      assert.ok(a.publicKey instanceof Uint8Array && a.publicKey.length === 32);
      assert.equal(Buffer.from(a.publicKey).toString('base64url'), a.publicKeyBase64url);
      assert.match(a.publicKeyBase64url, /^[A-Za-z0-9_-]{43}$/);
      a.publicKey[0] ^= 1;
      assert.equal(Buffer.from(a.publicKey).toString('base64url'), a.publicKeyBase64url, 'publicKey is a copy');
      // The public view never holds the seed.
      assert.deepEqual(Object.keys(JSON.parse(JSON.stringify(a))).sort(), ['algorithm', 'keyId', 'publicKey']);
      assert.ok(!JSON.stringify(a).includes(a.toSeedBase64url()));
    });

    test('fromSeed and base64url round trip; same seed, same key', () => {
      const { SigningKey } = apis[name];
      const key = SigningKey.fromSeed(KEY_ID, SEED);
      assert.deepEqual(key.seedBytes(), SEED);
      const text = key.toSeedBase64url();
      assert.equal(text, Buffer.from(SEED).toString('base64url'));
      const again = SigningKey.fromSeedBase64url(KEY_ID, text);
      assert.equal(again.publicKeyBase64url, key.publicKeyBase64url);
      assert.equal(new SigningKey(KEY_ID, SEED).publicKeyBase64url, key.publicKeyBase64url);
      // RFC 8032 test 1: the seed 9d61…7f60 has public key d75a…511a.
      const rfc = SigningKey.fromSeed(KEY_ID, Buffer.from('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60', 'hex'));
      assert.equal(Buffer.from(rfc.publicKey).toString('hex'), 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a');
    });

    test('bad keys: typed ArgumentError, never a crash', () => {
      const api = apis[name];
      for (const bad of [
        () => api.SigningKey.fromSeed(KEY_ID, new Uint8Array(31)),
        () => api.SigningKey.fromSeed('not a uri', SEED),
        () => api.SigningKey.fromSeed(KEY_ID, null),
        () => api.SigningKey.generate(42),
        () => api.SigningKey.fromSeedBase64url(KEY_ID, `${Buffer.from(SEED).toString('base64url')}=`),
        () => api.SigningKey.fromSeedBase64url(KEY_ID, Buffer.from(SEED).toString('base64')), // '+' or '/' spelling
        () => api.SigningKey.fromSeedBase64url(KEY_ID, Buffer.from(SEED.slice(1)).toString('base64url')),
      ]) {
        const error = caught(bad);
        assert.ok(error instanceof api.ArgumentError, `${error}`);
        assert.equal(error.code, 'PROTOCOL_VIOLATION');
      }
      // Nonzero unused pad bits: the canonical rule of §2, also for seeds.
      const text = Buffer.from(SEED).toString('base64url');
      const last = text.at(-1);
      const flipped = text.slice(0, -1) + (last === 'A' ? 'B' : String.fromCharCode(last.charCodeAt(0) + 1));
      assert.ok(caught(() => api.SigningKey.fromSeedBase64url(KEY_ID, flipped)) instanceof api.ArgumentError);
    });

    test('own keys → RegistryBuilder → Registry → sign → verify', () => {
      const api = apis[name];
      const key = api.SigningKey.generate(KEY_ID);
      const bytes = new api.RegistryBuilder(ORG).addKey(key.keyId, ALICE, key.publicKey, '2026-01-01T00:00:00Z').build();
      assert.ok(bytes instanceof Uint8Array);
      const registry = new api.Registry(bytes);
      assert.deepEqual([registry.organizationId, registry.size], [ORG, 1]);
      assert.equal(registry.binding(KEY_ID).publicKey, key.publicKeyBase64url);
      const signed = key.sign('command', unsignedCommand(), { registry });
      const verified = api.verifySignedDocument('command', signed.bytes, registry);
      assert.equal(verified.keyId, KEY_ID);
      assert.deepEqual({ ...verified.principal }, ALICE);
      assert.equal(verified.signingHash, signed.signingHash);
      // signDocument with {key} is the same signature (Ed25519 is deterministic).
      assert.equal(api.signDocument('command', unsignedCommand(), { key }).signature, signed.signature);
      // Public key as base64url text and as the SigningKey itself give the same evidence.
      const viaText = new api.RegistryBuilder(ORG).addKey(key.keyId, ALICE, key.publicKeyBase64url, new Date('2026-01-01T00:00:00Z')).build();
      const viaKey = new api.RegistryBuilder(ORG).addKey(key.keyId, ALICE, key, '2026-01-01T00:00:00.000Z').build();
      assert.equal(new api.Registry(viaText).binding(KEY_ID).publicKey, key.publicKeyBase64url);
      assert.equal(new api.Registry(viaKey).size, 1);
    });

    test('then handle the error: tampered, wrong key, revoked, before validFrom', () => {
      const api = apis[name];
      const key = api.SigningKey.fromSeed(KEY_ID, SEED);
      const history = [{ recordedAt: '2026-08-01T00:00:00Z', revokedAt: '2026-08-01T00:00:00Z' }];
      const registry = new api.Registry(new api.RegistryBuilder(ORG)
        .addKey(key.keyId, ALICE, key.publicKey, '2026-01-01T00:00:00Z', { history }).build());
      const signed = key.sign('command', unsignedCommand());
      assert.equal(api.verifySignedDocument('command', signed.bytes, registry).keyId, KEY_ID);

      const tampered = signed.text.replace('"expectedRevision":42', '"expectedRevision":43');
      const stage6 = caught(() => api.verifySignedDocument('command', tampered, registry));
      assert.ok(stage6 instanceof api.VerificationError);
      assert.deepEqual([stage6.code, stage6.stage, stage6.reason], ['AUTH_INVALID_SIGNATURE', 'signature', 'signature-mismatch']);
      assert.deepEqual(stage6.toWire(), { code: 'AUTH_INVALID_SIGNATURE', message: 'signed document rejected', retryable: false });
      assert.match(api.explainFailure(stage6).explanation, /changed after signing/);
      assert.equal(api.explainFailure(stage6).section, '§6.4 stage 6 (signature)');

      const other = api.SigningKey.fromSeed('urn:missionweaveprotocol:key:mallory-1', SEED.map((b) => b ^ 0xff));
      const forged = caught(() => api.verifySignedDocument('command', other.sign('command', unsignedCommand()).bytes, registry));
      assert.deepEqual([forged.stage, forged.reason], ['key-resolution', 'unknown-key']);

      const afterRevocation = key.sign('command', unsignedCommand(ALICE, '2026-08-01T00:00:00Z'));
      const revoked = caught(() => api.verifySignedDocument('command', afterRevocation.bytes, registry));
      assert.deepEqual([revoked.stage, revoked.reason], ['key-resolution', 'key-revoked']);

      const early = key.sign('command', unsignedCommand(ALICE, '2025-12-31T23:59:59Z'));
      const notYet = caught(() => api.verifySignedDocument('command', early.bytes, registry));
      assert.deepEqual([notYet.reason, notYet.code], ['key-not-yet-valid', 'AUTH_INVALID_SIGNATURE']);

      // Signing against the Registry refuses what would not verify.
      const refused = caught(() => key.sign('command', unsignedCommand(ALICE, '2026-08-01T00:00:00Z'), { registry }));
      assert.ok(refused instanceof api.SigningError);
      assert.equal(refused.stage, 'key-resolution');
    });

    test('RegistryBuilder errors: typed RegistryError with the stage-4 reason', () => {
      const api = apis[name];
      const key = api.SigningKey.fromSeed(KEY_ID, SEED);
      const identity = new Uint8Array(32);
      identity[0] = 1;
      const point = caught(() => new api.RegistryBuilder(ORG).addKey(KEY_ID, ALICE, identity, '2026-01-01T00:00:00Z'));
      assert.ok(point instanceof api.RegistryError);
      assert.equal(point.reason, 'public-key-point');
      const time = caught(() => new api.RegistryBuilder(ORG).addKey(KEY_ID, ALICE, key.publicKey, '2026-01-01 00:00:00'));
      assert.deepEqual([time.constructor, time.reason], [api.RegistryError, 'valid-from-malformed']);
      const reused = caught(() => new api.RegistryBuilder(ORG)
        .addKey(KEY_ID, ALICE, key.publicKey, '2026-01-01T00:00:00Z')
        .addKey('urn:missionweaveprotocol:key:alice-2', ALICE, key.publicKey, '2026-01-01T00:00:00Z')
        .build());
      assert.deepEqual([reused.constructor, reused.reason, reused.code], [api.RegistryError, 'public-key-reused', 'AUTH_INVALID_SIGNATURE']);
      const org = caught(() => new api.RegistryBuilder('acme').addKey(KEY_ID, ALICE, key.publicKey, '2026-01-01T00:00:00Z').build());
      assert.equal(org.reason, 'organization-id-invalid');
      assert.equal(caught(() => new api.RegistryBuilder(ORG).build()).reason, 'no-bindings');
      const later = caught(() => new api.RegistryBuilder(ORG).addKey(KEY_ID, ALICE, key.publicKey, '2026-01-01T00:00:00Z', {
        history: [{ recordedAt: '2026-02-01T00:00:00Z', validUntil: '2026-03-01T00:00:00Z' },
          { recordedAt: '2026-02-02T00:00:00Z', validUntil: '2026-04-01T00:00:00Z' }],
      }).build());
      assert.equal(later.reason, 'validity-boundary-moved-later');
      for (const bad of [
        () => new api.RegistryBuilder(ORG).addKey(KEY_ID, { type: 'robot', id: ALICE.id }, key.publicKey, '2026-01-01T00:00:00Z'),
        () => new api.RegistryBuilder(ORG).addKey(KEY_ID, ALICE, key.publicKey, '2026-01-01T00:00:00Z', { history: [{ recordedAt: '2026-02-01T00:00:00Z', revokedat: 'x' }] }),
        () => new api.RegistryBuilder(ORG).addKey(KEY_ID, ALICE, 'not base64url!', '2026-01-01T00:00:00Z'),
        () => new api.RegistryBuilder(ORG).addKey(KEY_ID, ALICE, key.publicKey, new Date(Number.NaN)),
        () => new api.RegistryBuilder(42),
      ]) {
        assert.ok(caught(bad) instanceof api.ArgumentError);
      }
    });

    test('failure reasons: one table from the core, one sentence and a §6.4 section each', () => {
      const api = apis[name];
      const rows = api.failureReasons();
      assert.ok(rows.length >= 43, `${rows.length}`);
      for (const row of rows) {
        assert.match(row.explanation, /^[^\n]+\.$/);
        if (row.stage === 'admission') {
          assert.deepEqual([row.stageNumber, row.code], [null, 'AUTH_INVALID_SIGNATURE']);
          assert.match(row.section, /^§6\.4 .*\(admission\)$/);
          continue;
        }
        assert.ok(api.STAGES.includes(row.stage));
        assert.equal(row.stageNumber, api.STAGES.indexOf(row.stage) + 1);
        assert.ok(row.section.startsWith(`§6.4 stage ${row.stageNumber} (${row.stage})`), row.section);
      }
      assert.equal(rows.filter((r) => r.stage === 'admission').length, 12);
      assert.equal(api.explainFailure('key-resolution', 'unknown-key').explanation, 'The Registry has no binding for signature.keyId.');
      assert.equal(api.explainFailure('signature', 'no-such-reason'), null);
      assert.equal(api.explainFailure(new api.ArgumentError('x')), null);
      if (api.replayHistorical) {
        // An AdmissionError is explained too: replay without a First-Admission Record.
        const key = api.SigningKey.fromSeed(KEY_ID, SEED);
        const registry = new api.Registry(new api.RegistryBuilder(ORG).addKey(KEY_ID, ALICE, key, '2026-01-01T00:00:00Z').build());
        const log = new api.InMemoryAdmissionLog({ type: 'service', id: 'urn:missionweaveprotocol:service:log' });
        const error = caught(() => api.replayHistorical('command', key.sign('command', unsignedCommand()).bytes, registry, log));
        assert.ok(error instanceof api.AdmissionError);
        assert.equal(api.explainFailure(error).explanation,
          'Historical replay found no First-Admission Record for the document; replay never creates one.');
      }
    });
  });
}

test('every backend builds the same evidence bytes and signatures', () => {
  const outputs = Object.entries(apis).map(([name, api]) => {
    const key = api.SigningKey.fromSeed(KEY_ID, SEED);
    const evidence = new api.RegistryBuilder(ORG).addKey(KEY_ID, ALICE, key.publicKey, '2026-01-01T00:00:00Z').build();
    return [name, Buffer.from(evidence).toString(), key.sign('command', unsignedCommand()).text];
  });
  for (const [name, evidence, signed] of outputs.slice(1)) {
    assert.equal(evidence, outputs[0][1], name);
    assert.equal(signed, outputs[0][2], name);
  }
});
