// Registry evidence (reference `registry`, §6.4 stage 4): `Registry`, a validated snapshot reused
// for many verifications, and `RegistryBuilder`, evidence for one's own Agents (the core's
// `registry::RegistryBuilder`, refusing what stage 4 would refuse). Other modules take a Registry
// argument through `withRegistry` (a Registry object, or the snapshot bytes for one call).

import { ArgumentError, open } from './errors.mjs';
import { checkString, principalOf } from './convert.mjs';
import { NativeTable, disposable } from './native.mjs';
import { encoder } from './values.mjs';

export function registryApi(ctx) {
  const { raw, backendModule, inputBytes, publicKeyOf, timeText } = ctx;
  const rawRegistries = new NativeTable(raw);
  // The napi addon takes a Registry's bytes in place of a Registry object (validated on the Rust
  // stack for that one call): a call with bytes then creates no JavaScript object at all.
  const registryBytesArgument = backendModule.REGISTRY_BYTES_ARGUMENT === true;

  /** A Registry snapshot (`registry-fixture` form), validated once and reused for many verifications. */
  class Registry {
    /** Throws RegistryError if the snapshot is not usable evidence. */
    constructor(snapshot) {
      const handle = new raw.Registry(inputBytes(snapshot, 'Registry snapshot'));
      let info;
      try {
        info = open(handle.info());
      } catch (error) {
        handle.free?.();
        throw error;
      }
      rawRegistries.set(this, handle);
      this.organizationId = info.organizationId;
      this.digest = info.digest;
      this.size = info.size;
      Object.freeze(this);
    }

    /** The binding of a key ID, or null (display only; verification applies the stage 4 rules). */
    binding(keyId) {
      const binding = open(rawRegistries.get(this, 'Registry').binding(checkString(keyId, 'keyId')));
      return binding && Object.freeze({ ...binding, principal: Object.freeze(binding.principal) });
    }
  }

  disposable(rawRegistries, [Registry]);

  // A Registry object, or snapshot bytes (validated per call; problems fail stage 4). Bytes
  // leave nothing behind when the call returns: the napi addon takes them as they are; a
  // WebAssembly Registry made for the call is freed at once.
  function withRegistry(registry, use) {
    if (registry instanceof Registry) return use(rawRegistries.get(registry, 'Registry'));
    const bytes = inputBytes(registry, 'registry');
    if (registryBytesArgument) return use(bytes);
    const handle = new raw.Registry(bytes);
    try {
      return use(handle);
    } finally {
      handle.free?.();
    }
  }

  /**
   * Registry evidence for one's own Agents (the core's `registry::RegistryBuilder`): bind key IDs
   * to Principals and public keys, then `build()` the snapshot bytes, validated by the same
   * stage-4 rules a verifier applies (§6.4).
   */
  const rawBuilders = new NativeTable(raw);

  class RegistryBuilder {
    constructor(organizationId) {
      rawBuilders.set(this, new raw.RegistryBuilder(checkString(organizationId, 'organizationId')));
      this.organizationId = organizationId;
    }

    /** Binds `keyId` to `principal` and a public key; returns the builder. */
    addKey(keyId, principal, publicKey, validFrom, { history = [] } = {}) {
      const { type, id } = principalOf(principal, 'principal');
      if (!Array.isArray(history)) throw new ArgumentError('history must be an array');
      const records = history.map((record, i) => {
        if (!record || typeof record !== 'object') throw new ArgumentError(`history[${i}] must be an object`);
        const out = {};
        for (const [name, value] of Object.entries(record)) {
          out[name] = value === undefined || value === null ? value : timeText(value, `history[${i}].${name}`);
        }
        return out;
      });
      open(rawBuilders.get(this, 'RegistryBuilder').addKey(checkString(keyId, 'keyId'), type, id, publicKeyOf(publicKey),
        timeText(validFrom, 'validFrom'), JSON.stringify(records)));
      return this;
    }

    /** The RFC 8785 evidence bytes for `new Registry(bytes)`; throws RegistryError on a broken rule. */
    build() { return encoder.encode(open(rawBuilders.get(this, 'RegistryBuilder').build()).evidence); }
  }
  disposable(rawBuilders, [RegistryBuilder]);

  ctx.withRegistry = withRegistry;

  return { Registry, RegistryBuilder };
}
