// One's own keys (reference `crypto`): `SigningKey`, an Ed25519 key with its key ID. The core
// holds no randomness: `generate` draws the 32-byte seed from `crypto.getRandomValues`. Other
// modules read a key's seed through `seedOf` (never enumerable, never in `toJSON()`).

import { ArgumentError, open } from './errors.mjs';
import { checkDate, checkString } from './convert.mjs';
import { hidden } from './values.mjs';

export function cryptoApi(ctx) {
  const { raw, inputBytes } = ctx;
  const seeds = new WeakMap();

  function decodeBase64url(text, length, what) {
    return Uint8Array.from(open(raw.base64urlDecode(checkString(text, what), length, what)));
  }

  /**
   * An Ed25519 signing key with its key ID. The core holds no randomness: `generate` draws the
   * 32-byte seed from `crypto.getRandomValues`. The seed never appears in `toJSON()`.
   */
  class SigningKey {
    constructor(keyId, seed) {
      const seedBytes = Uint8Array.from(inputBytes(seed, 'seed'));
      const info = open(raw.keyInfo(checkString(keyId, 'keyId'), seedBytes));
      seeds.set(this, seedBytes);
      this.keyId = info.keyId;
      this.algorithm = info.algorithm;
      this.publicKeyBase64url = info.publicKey;
      hidden(this, { publicKeyBytes: decodeBase64url(info.publicKey, 32, 'publicKey') });
      Object.freeze(this);
    }

    /** A new key from 32 random bytes (`crypto.getRandomValues`). */
    static generate(keyId) {
      const random = globalThis.crypto?.getRandomValues;
      if (typeof random !== 'function') throw new ArgumentError('crypto.getRandomValues is not available in this runtime');
      return new SigningKey(keyId, globalThis.crypto.getRandomValues(new Uint8Array(32)));
    }

    /** The key of a 32-byte seed. */
    static fromSeed(keyId, seed) { return new SigningKey(keyId, seed); }

    /** The key of a seed in canonical unpadded base64url (§2). */
    static fromSeedBase64url(keyId, text) { return new SigningKey(keyId, decodeBase64url(text, 32, 'seed')); }

    /** The 32-byte public key (a fresh copy). */
    get publicKey() { return this.publicKeyBytes.slice(); }

    /** The 32-byte seed (a fresh copy): keep it secret. */
    seedBytes() { return seeds.get(this).slice(); }

    /** The seed in canonical unpadded base64url: keep it secret. */
    toSeedBase64url() { return open(raw.base64urlEncode(seeds.get(this))); }

    /** Signs an unsigned document (see `signDocument`). */
    sign(kind, unsigned, { registry } = {}) { return ctx.signDocument(kind, unsigned, { key: this, registry }); }

    /** The public view: `{keyId, algorithm, publicKey}` (base64url); never the seed. */
    toJSON() { return { keyId: this.keyId, algorithm: this.algorithm, publicKey: this.publicKeyBase64url }; }
  }

  function timeText(value, what) {
    if (value instanceof Date) {
      checkDate(value, what);
      return value.toISOString();
    }
    return checkString(value, what);
  }

  function publicKeyOf(value) {
    if (value instanceof SigningKey) return value.publicKey;
    if (typeof value === 'string') return decodeBase64url(value, 32, 'publicKey');
    return inputBytes(value, 'publicKey');
  }

  ctx.seedOf = (key) => seeds.get(key);
  ctx.decodeBase64url = decodeBase64url;
  ctx.publicKeyOf = publicKeyOf;
  ctx.timeText = timeText;
  ctx.SigningKey = SigningKey;

  return { SigningKey };
}
