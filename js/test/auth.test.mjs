// Agent authentication (§6.3) through the package's public API (Node entry): the reference's
// API in camelCase, signatures made by Node's own Ed25519 (node:crypto), each rule with a
// positive and a negative case, its §19 code and the core's reason; refusals are the shared
// `AuthenticationError` class. The WebAssembly build serves the same module (core/ffi, sans-IO).
import assert from 'node:assert/strict';
import { createPrivateKey, createPublicKey, sign as nodeSign } from 'node:crypto';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { DIST } from './support.mjs';

const api = await import(join(DIST, 'node.mjs'));
const { AgentKeyRegistry, SessionAuthority, defaultAgentKeyId, AuthenticationError, ArgumentError } = api;

const ALICE = 'urn:missionweaveprotocol:agent:alice';
const BOB = 'urn:missionweaveprotocol:agent:bob';
const T0 = Date.UTC(2026, 5, 1);
const SECRET = Buffer.from('node-test-secret-0123456789abcdef');

/** An Ed25519 identity from a one-byte seed, signed by node:crypto (not by this package). */
function identity(agentId, seedByte) {
  const seed = Buffer.alloc(32, seedByte);
  const privateKey = createPrivateKey({
    key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]),
    format: 'der',
    type: 'pkcs8',
  });
  const publicKey = Buffer.from(createPublicKey(privateKey).export({ format: 'jwk' }).x, 'base64url');
  return { agentId, publicKey, sign: (bytes) => nodeSign(null, bytes, privateKey).toString('base64url') };
}

function world() {
  const alice = identity(ALICE, 1);
  const bob = identity(BOB, 2);
  const registry = new AgentKeyRegistry();
  registry.register(ALICE, alice.publicKey);
  registry.register(BOB, bob.publicKey);
  const authority = new SessionAuthority(registry, { secret: SECRET });
  return { registry, authority, alice, bob };
}

function login(authority, who, now = T0) {
  const challenge = authority.issueChallenge(who.agentId, { now });
  return authority.openSession(challenge.challengeId, who.sign(challenge.signingBytes), now);
}

function refused(call, code, reason, Class = AuthenticationError) {
  assert.throws(call, (error) => {
    assert.ok(error instanceof Class, `${error?.name}: ${error?.message}`);
    assert.equal(error.code, code, error.message);
    assert.equal(error.reason, reason, error.message);
    return true;
  });
}

describe('auth: AgentKeyRegistry', () => {
  test('defaultAgentKeyId takes the last path or colon segment', () => {
    assert.equal(defaultAgentKeyId('agent://acme/reviewer'), 'urn:missionweaveprotocol:key:reviewer');
    assert.equal(defaultAgentKeyId(ALICE), 'urn:missionweaveprotocol:key:alice');
    refused(() => defaultAgentKeyId('agent://acme/'), 'PROTOCOL_VIOLATION', 'invalid_argument');
  });

  test('resolve honours validity; revocation keeps the earliest instant', () => {
    const alice = identity(ALICE, 3);
    const registry = new AgentKeyRegistry();
    registry.register(ALICE, alice.publicKey, { validFrom: T0, validUntil: T0 + 3_600_000 });
    const keyId = defaultAgentKeyId(ALICE);
    assert.deepEqual(Buffer.from(registry.resolve(ALICE, null, T0)), alice.publicKey);
    assert.deepEqual(Buffer.from(registry.resolve(ALICE, keyId, new Date(T0))), alice.publicKey);
    refused(() => registry.resolve(ALICE, keyId, T0 - 1), 'AUTH_INVALID_SIGNATURE', 'key_not_yet_valid');
    refused(() => registry.resolve(ALICE, keyId, T0 + 3_600_000), 'AUTH_INVALID_SIGNATURE', 'key_expired');
    refused(() => registry.resolve(BOB, null, T0), 'AUTH_INVALID_SIGNATURE', 'unknown_key');
    registry.revoke(ALICE, keyId, T0 + 600_000);
    registry.revoke(ALICE, keyId, T0 + 1_200_000);
    assert.ok(registry.resolve(ALICE, keyId, T0 + 599_999));
    refused(() => registry.resolve(ALICE, keyId, T0 + 600_000), 'AUTH_INVALID_SIGNATURE', 'key_revoked');
    assert.equal(registry.matchesRegisteredPublicKey(ALICE, keyId, alice.publicKey), true);
    assert.equal(registry.matchesRegisteredPublicKey(ALICE, keyId, Buffer.alloc(32)), false);
  });

  test('weak keys, reused key IDs and bad instants are refused', () => {
    const registry = new AgentKeyRegistry();
    const identityPoint = Buffer.alloc(32);
    identityPoint[0] = 1;
    refused(() => registry.register(ALICE, identityPoint), 'PROTOCOL_VIOLATION', 'invalid_public_key');
    registry.register(ALICE, identity(ALICE, 1).publicKey);
    refused(() => registry.register(ALICE, identity(ALICE, 2).publicKey), 'PROTOCOL_VIOLATION', 'key_id_reused');
    // Not a whole number of milliseconds: argument misuse, as everywhere in the package.
    refused(() => registry.resolve(ALICE, null, 1.5), 'PROTOCOL_VIOLATION', 'invalid-argument', ArgumentError);
    refused(() => registry.register(ALICE, identity(ALICE, 1).publicKey, { validFrom: 'soon' }), 'PROTOCOL_VIOLATION',
      'invalid-argument', ArgumentError);
  });
});

describe('auth: SessionAuthority', () => {
  test('a signed challenge opens a session; the token verifies', () => {
    const { authority, alice } = world();
    const challenge = authority.issueChallenge(ALICE, { clientNonce: 'Y2xpZW50', now: T0 });
    assert.equal(challenge.expiresAt, T0 + 30_000);
    assert.deepEqual(JSON.parse(Buffer.from(challenge.signingBytes).toString()), {
      agentId: ALICE, challengeId: challenge.challengeId, clientNonce: 'Y2xpZW50',
      expiresAt: '2026-06-01T00:00:30+00:00', keyId: defaultAgentKeyId(ALICE),
      protocolVersion: '0.1', serverNonce: challenge.serverNonce,
    });
    const grant = authority.openSession(challenge.challengeId, alice.sign(challenge.signingBytes), T0 + 1);
    assert.equal(grant.sessionEpoch, 1);
    assert.equal(grant.expiresAt, T0 + 1 + 15 * 60_000);
    assert.deepEqual(authority.verifySession(grant.token, T0 + 2), grant);
    assert.equal(authority.currentEpoch(ALICE), 1);
  });

  test('challenges are used once, even after a failure; expired ones are refused', () => {
    const { authority, alice, bob } = world();
    let challenge = authority.issueChallenge(ALICE, { now: T0 });
    const good = alice.sign(challenge.signingBytes);
    authority.openSession(challenge.challengeId, good, T0);
    refused(() => authority.openSession(challenge.challengeId, good, T0), 'AUTH_INVALID_SIGNATURE', 'unknown_challenge');
    challenge = authority.issueChallenge(ALICE, { now: T0 });
    refused(() => authority.openSession(challenge.challengeId, bob.sign(challenge.signingBytes), T0),
      'AUTH_INVALID_SIGNATURE', 'invalid_signature');
    refused(() => authority.openSession(challenge.challengeId, alice.sign(challenge.signingBytes), T0),
      'AUTH_INVALID_SIGNATURE', 'unknown_challenge');
    challenge = authority.issueChallenge(ALICE, { now: T0 });
    refused(() => authority.openSession(challenge.challengeId, alice.sign(challenge.signingBytes), T0 + 30_000),
      'AUTH_INVALID_SIGNATURE', 'challenge_expired');
    refused(() => authority.issueChallenge(ALICE, { protocolVersion: '9.9', now: T0 }), 'UNSUPPORTED_VERSION', 'unsupported_version');
    assert.equal(authority.currentEpoch(ALICE), 1);
  });

  test('cross-agent signatures are refused', () => {
    const { authority, alice } = world();
    const alices = authority.issueChallenge(ALICE, { now: T0 });
    const bobs = authority.issueChallenge(BOB, { now: T0 });
    refused(() => authority.openSession(alices.challengeId, alice.sign(bobs.signingBytes), T0), 'AUTH_INVALID_SIGNATURE', 'invalid_signature');
    refused(() => authority.openSession(bobs.challengeId, alice.sign(bobs.signingBytes), T0), 'AUTH_INVALID_SIGNATURE', 'invalid_signature');
  });

  test('epochs strictly increase; older and synchronized-away tokens are stale', () => {
    const { authority, alice, bob } = world();
    const grants = [login(authority, alice), login(authority, alice), login(authority, alice)];
    assert.deepEqual(grants.map((g) => g.sessionEpoch), [1, 2, 3]);
    assert.equal(login(authority, bob).sessionEpoch, 1);
    refused(() => authority.verifySession(grants[0].token, T0), 'AUTH_STALE_SESSION', 'stale_session');
    authority.synchronizeEpoch(ALICE, 9, defaultAgentKeyId(ALICE));
    refused(() => authority.verifySession(grants[2].token, T0), 'AUTH_STALE_SESSION', 'stale_session');
    authority.synchronizeEpoch(ALICE, 4);
    assert.equal(authority.currentEpoch(ALICE), 9);
    assert.equal(login(authority, alice).sessionEpoch, 10);
    refused(() => authority.synchronizeEpoch(ALICE, 0), 'PROTOCOL_VIOLATION', 'invalid_argument');
    refused(() => authority.synchronizeEpoch(ALICE, 11, 'urn:x:key:other'), 'AUTH_INVALID_SIGNATURE', 'unknown_key');
  });

  test('forged, foreign, expired and revoked-key tokens are refused', () => {
    const { registry, authority, alice } = world();
    const grant = login(authority, alice);
    const [body, mac] = grant.token.split('.');
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString());
    claims.expiresAt += 1;
    const forgedBody = Buffer.from(JSON.stringify(claims)).toString('base64url');
    const other = new SessionAuthority(registry, { secret: Buffer.alloc(32, 7) });
    other.synchronizeEpoch(ALICE, 1);
    for (const forged of [`${forgedBody}.${mac}`, `${body}.${mac.slice(0, -2)}`, '', 'x'.repeat(9000), login(other, alice).token]) {
      refused(() => authority.verifySession(forged, T0), 'AUTH_REQUIRED', 'invalid_token');
    }
    refused(() => authority.verifySession(grant.token, T0 + 15 * 60_000), 'AUTH_REQUIRED', 'session_expired');
    registry.revoke(ALICE, defaultAgentKeyId(ALICE), T0 + 5);
    assert.ok(authority.verifySession(grant.token, T0 + 4));
    refused(() => authority.verifySession(grant.token, T0 + 5), 'AUTH_INVALID_SIGNATURE', 'key_revoked');
  });

  test('configuration is checked; no secret or token appears in errors', () => {
    const { registry, authority, alice } = world();
    refused(() => new SessionAuthority(registry, { secret: Buffer.alloc(8) }), 'PROTOCOL_VIOLATION', 'invalid_argument');
    refused(() => new SessionAuthority(registry, { challengeTtlMs: 0 }), 'PROTOCOL_VIOLATION', 'invalid_argument');
    assert.ok(new SessionAuthority(registry));
    const grant = login(authority, alice);
    const mac = grant.token.split('.')[1];
    try {
      authority.verifySession(`${grant.token}x`, T0);
      assert.fail('accepted');
    } catch (error) {
      for (const text of [error.message, String(error), JSON.stringify(error)]) {
        assert.ok(!text.includes(mac) && !text.includes(SECRET.toString()), text);
      }
    }
  });
});

describe('auth: the package error model, free() and the entries', () => {
  test('a refusal is an AuthenticationError carrying the core description', () => {
    const registry = new AgentKeyRegistry();
    assert.throws(() => registry.resolve(ALICE, null, T0), (error) => {
      assert.ok(error instanceof AuthenticationError && error instanceof api.MwpError);
      assert.equal(error.name, 'AuthenticationError');
      assert.equal(error.code, 'AUTH_INVALID_SIGNATURE');
      assert.equal(error.reason, 'unknown_key');
      assert.equal(error.retryable, false);
      assert.equal(error.stage, null);
      assert.equal(error.message, 'no registered key for this Agent and key ID');
      return true;
    });
    // The class the core names for the `authentication` error class.
    assert.equal(api.vocabularies().js_error_class.authentication, 'AuthenticationError');
    refused(() => registry.register(42, Buffer.alloc(32)), 'PROTOCOL_VIOLATION', 'invalid-argument', ArgumentError);
    refused(() => new SessionAuthority({}), 'PROTOCOL_VIOLATION', 'invalid-argument', ArgumentError);
  });

  test('free() drops the native state; an authority keeps the keys it was built on', () => {
    const { registry, authority, alice } = world();
    registry.free();
    registry.free();
    refused(() => registry.resolve(ALICE, null, T0), 'PROTOCOL_VIOLATION', 'invalid-argument', ArgumentError);
    refused(() => new SessionAuthority(registry), 'PROTOCOL_VIOLATION', 'invalid-argument', ArgumentError);
    assert.equal(login(authority, alice).sessionEpoch, 1);
    authority.free();
    refused(() => authority.currentEpoch(ALICE), 'PROTOCOL_VIOLATION', 'invalid-argument', ArgumentError);
    assert.equal(String(new SessionAuthority(new AgentKeyRegistry(), { secret: SECRET })), 'SessionAuthority(<secret redacted>)');
  });

  test('the WebAssembly build serves the same auth module (sans-IO, crypto.getRandomValues)', async () => {
    const wasm = await import(join(DIST, 'node-wasm.mjs'));
    assert.equal(typeof wasm.AuthenticationError, 'function');
    assert.equal(wasm.defaultAgentKeyId(ALICE), defaultAgentKeyId(ALICE));
    const alice = identity(ALICE, 1);
    const registry = new wasm.AgentKeyRegistry();
    registry.register(ALICE, alice.publicKey);
    assert.deepEqual([...registry.resolve(ALICE, null, T0)], [...alice.publicKey]);
    const authority = new wasm.SessionAuthority(registry, { secret: SECRET });
    assert.equal(login(authority, alice).sessionEpoch, 1);
    assert.equal(authority.currentEpoch(ALICE), 1);
    // A registry of the other backend is not one of this backend's objects.
    assert.throws(() => new wasm.SessionAuthority(new AgentKeyRegistry()), wasm.ArgumentError);
  });
});
