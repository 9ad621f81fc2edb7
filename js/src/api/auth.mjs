// Agent authentication (reference `auth`, §6.3). Every rule (key validity, one-use challenges,
// the transcript, token MACs, Session Epochs) and every refusal (`AuthenticationError`, the
// core's code and reason) is the core's `auth` module (`core/ffi/src/auth.rs`); this converts
// arguments and supplies the clock. The verify-only build has no `auth` module: there each name
// is an ArgumentError that says so.

import { ArgumentError, open } from './errors.mjs';
import { checkFinite, checkString, toMillis } from './convert.mjs';
import { NativeTable, adopt, disposable } from './native.mjs';
import { PROTOCOL_VERSION } from './types.mjs';
import { encoder } from './values.mjs';

export function authApi(ctx) {
  const { raw, inputBytes, publicKeyOf } = ctx;
  const native = new NativeTable(raw);

  // Both full backends have the `auth` module (sans-IO; napi draws randomness from the OS, the
  // WebAssembly build from `crypto.getRandomValues`); the verify-only build does not.
  function needsAuth(what) {
    if (typeof raw.AuthKeyRegistry !== 'function') {
      throw new ArgumentError(`${what} needs the full core (the Node or WebAssembly entry), not the verify-only build`);
    }
  }

  const now = (value, what) => (value === undefined ? Date.now() : toMillis(value, what));
  const optMillis = (value, what) => (value === undefined || value === null ? undefined : toMillis(value, what));
  const optString = (value, what) => (value === undefined || value === null ? undefined : checkString(value, what));
  const optCount = (value, what) => (value === undefined ? undefined : checkFinite(value, what));

  /** `urn:missionweaveprotocol:key:<last path or colon segment of agentId>`. */
  function defaultAgentKeyId(agentId) {
    needsAuth('defaultAgentKeyId');
    return open(raw.authDefaultAgentKeyId(checkString(agentId, 'agentId')));
  }

  /** The Organization's Agent keys; a `SessionAuthority` built on them sees later changes. */
  class AgentKeyRegistry {
    constructor() {
      needsAuth('AgentKeyRegistry');
      native.set(this, new raw.AuthKeyRegistry());
    }

    /** Registers a public key (32 bytes, base64url text or a SigningKey; `keyId` defaults to `defaultAgentKeyId(agentId)`). */
    register(agentId, publicKey, { keyId, validFrom, validUntil, revokedAt } = {}) {
      open(native.get(this).register(checkString(agentId, 'agentId'), publicKeyOf(publicKey),
        optString(keyId, 'keyId'), optMillis(validFrom, 'validFrom'), optMillis(validUntil, 'validUntil'),
        optMillis(revokedAt, 'revokedAt')));
    }

    /** The 32 public-key bytes of the Agent's key valid at `at` (default: now). */
    resolve(agentId, keyId, at) {
      const result = native.get(this).resolve(checkString(agentId, 'agentId'), optString(keyId, 'keyId'), now(at, 'at'));
      if (typeof result === 'string') open(result);
      return new Uint8Array(result);
    }

    /** Whether the bytes are the key's registered material (constant-time comparison). */
    matchesRegisteredPublicKey(agentId, keyId, publicKeyBytes) {
      return open(native.get(this).matchesRegisteredPublicKey(checkString(agentId, 'agentId'),
        checkString(keyId, 'keyId'), inputBytes(publicKeyBytes, 'publicKeyBytes')));
    }

    /** Revokes the key from `revokedAt` (default: now); the earliest revocation is kept. */
    revoke(agentId, keyId, revokedAt) {
      open(native.get(this).revoke(checkString(agentId, 'agentId'), checkString(keyId, 'keyId'), now(revokedAt, 'revokedAt')));
    }
  }

  const challengeOf = (value) => Object.freeze({ ...value, signingBytes: encoder.encode(value.signingBytes) });

  /**
   * One-use HELLO challenges, HMAC-SHA256 session tokens and per-Agent Session Epochs. `secret`
   * (at least 32 bytes) defaults to 32 random bytes; lifetimes are milliseconds, absent ones the
   * core's (`SessionConfig::default()`).
   */
  class SessionAuthority {
    constructor(registry, { secret, challengeTtlMs, sessionTtlMs } = {}) {
      needsAuth('SessionAuthority');
      if (!(registry instanceof AgentKeyRegistry)) throw new ArgumentError('registry must be an AgentKeyRegistry', { fields: { argument: 'registry' } });
      adopt(native, this, new raw.AuthSessionAuthority(native.get(registry),
        secret === undefined ? undefined : inputBytes(secret, 'secret'),
        optCount(challengeTtlMs, 'challengeTtlMs'), optCount(sessionTtlMs, 'sessionTtlMs')));
    }

    /** `toString`/`inspect` never show the secret. */
    toString() { return 'SessionAuthority(<secret redacted>)'; }

    /** A fresh one-use challenge (`signingBytes`: the canonical transcript the Agent signs). */
    issueChallenge(agentId, { keyId, clientNonce, protocolVersion = PROTOCOL_VERSION, now: at } = {}) {
      return challengeOf(open(native.get(this).issueChallenge(checkString(agentId, 'agentId'), optString(keyId, 'keyId'),
        optString(clientNonce, 'clientNonce'), checkString(protocolVersion, 'protocolVersion'), now(at, 'now'))));
    }

    /** Spends the challenge; a valid signature (base64url) opens a session at the next epoch. */
    openSession(challengeId, signature, at) {
      return Object.freeze(open(native.get(this).openSession(checkString(challengeId, 'challengeId'),
        checkString(signature, 'signature'), now(at, 'now'))));
    }

    /** The session `token` proves at `at` (default: now): MAC, expiry, current epoch, key still valid. */
    verifySession(token, at) {
      return Object.freeze(open(native.get(this).verifySession(checkString(token, 'token'), now(at, 'now'))));
    }

    /** Adopts the authoritative Core's epoch (never lowers it); with `keyId`, that key must be registered. */
    synchronizeEpoch(agentId, authoritativeEpoch, keyId) {
      open(native.get(this).synchronizeEpoch(checkString(agentId, 'agentId'),
        checkFinite(authoritativeEpoch, 'authoritativeEpoch'), optString(keyId, 'keyId')));
    }

    /** The Agent's current Session Epoch (0 before its first session). */
    currentEpoch(agentId) { return open(native.get(this).currentEpoch(checkString(agentId, 'agentId'))); }
  }

  disposable(native, [AgentKeyRegistry, SessionAuthority]);
  /** The native authority of a `SessionAuthority` (the gateway host keys its twin with it). */
  ctx.sessionAuthorityNative = (sessions) => {
    if (!(sessions instanceof SessionAuthority)) throw new ArgumentError('sessions must be a SessionAuthority', { fields: { argument: 'sessions' } });
    return native.get(sessions);
  };
  return { AgentKeyRegistry, SessionAuthority, defaultAgentKeyId };
}
