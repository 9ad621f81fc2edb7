// Bounded offline execution (reference `offline`, §11.5; napi only). Every rule (the grace
// window, the bounds, reversible kinds only, the assignment, the critical binding, signing,
// rebasing) and every refusal (OfflinePolicyError, the core's code and reason) is the core's
// `offline` module. The wrapper reads the WorkItem as Python's does and supplies the clock; the
// outbox is the caller's store, called back from the core.

import { ArgumentError, OfflinePolicyError, open } from './errors.mjs';
import { argumentJson, checkDate, checkString, jsonArgs, toMillis } from './convert.mjs';
import { NativeTable, disposable } from './native.mjs';
import { ResourceUsage } from './budget.mjs';
import { SignedDocument } from './signed_documents.mjs';
import { deepFreeze } from './values.mjs';

export function offlineApi({ raw, SigningKey, seedOf }) {
  const native = new NativeTable(raw);
  // The core's names; a backend without the authority calls (the verify-only build) has none.
  let constants = { extension: undefined, version: undefined, reversibleKinds: [] };
  if (typeof raw.offlineConstants === 'function') {
    try { constants = open(raw.offlineConstants()); } catch { /* a failing backend: its calls report it */ }
  }

  function needsNode(what) {
    if (typeof raw.OfflinePolicy !== 'function') {
      throw new ArgumentError(`${what} needs the Node (napi) entry, not the WebAssembly build`);
    }
  }

  const instantText = (value, what) => {
    if (value instanceof Date) {
      checkDate(value, what);
      return value.toISOString().replace('.000Z', 'Z');
    }
    return checkString(value, what);
  };

  // A wire Command as JSON text: an object, its JSON text, or a SignedDocument (its exact text).
  function commandText(command) {
    if (typeof command === 'string') return command;
    if (command instanceof SignedDocument) return command.text;
    if (command && typeof command === 'object') return argumentJson(command, 'command');
    throw new ArgumentError('command must be a wire Command object, its JSON text or a SignedDocument', { fields: { argument: 'command' } });
  }

  // `{agentId, signingKey}`: the Agent and its SigningKey.
  function signerOf(identity, keyId) {
    const key = identity?.signingKey;
    if (!(key instanceof SigningKey)) throw new ArgumentError('identity.signingKey must be a SigningKey', { fields: { argument: 'identity' } });
    return { keyId: keyId === undefined || keyId === null ? key.keyId : checkString(keyId, 'keyId'), seed: seedOf(key) };
  }

  /** The offline bounds: `maxDisconnectGraceMs` > 0, `maxActions` ≥ 1, `maxUsage`. */
  class OfflineLimits {
    constructor({ maxDisconnectGraceMs, maxActions, maxUsage = {} } = {}) {
      needsNode('OfflineLimits');
      const usage = maxUsage instanceof ResourceUsage ? { ...maxUsage } : maxUsage;
      open(raw.offlineValidateLimits(jsonArgs([{ maxDisconnectGraceMs, maxActions, maxUsage: usage }])));
      this.maxDisconnectGraceMs = maxDisconnectGraceMs;
      this.maxActions = maxActions;
      this.maxUsage = new ResourceUsage(usage);
      Object.freeze(this);
    }
  }

  /** The data of the critical offline extension; instants are §2 timestamps (a Date is accepted). */
  class OfflineProgressBinding {
    constructor(fields) {
      needsNode('OfflineProgressBinding');
      if (!fields || typeof fields !== 'object') throw new ArgumentError('OfflineProgressBinding needs an object', { fields: { argument: 'binding' } });
      const data = { ...fields };
      for (const name of ['disconnectedAt', 'bufferedAt', 'graceDeadline', 'executionLeaseExpiresAt']) {
        if (data[name] instanceof Date) data[name] = instantText(data[name], name);
      }
      // Absent: no usage (the reference's default); every dimension is written, as the core requires.
      data.resourceUsageDelta = { ...(data.resourceUsageDelta instanceof ResourceUsage ? data.resourceUsageDelta : new ResourceUsage(data.resourceUsageDelta ?? {})) };
      const normalized = open(raw.offlineValidateBinding(jsonArgs([data])));
      Object.assign(this, normalized);
      this.resourceUsageDelta = new ResourceUsage(normalized.resourceUsageDelta);
      Object.freeze(this);
    }

    /** The extension's `data` (camelCase, §2 timestamps). */
    toWire() { return { ...this, resourceUsageDelta: { ...this.resourceUsageDelta } }; }

    toJSON() { return this.toWire(); }

    /** The binding a Command carries (object, JSON text or SignedDocument), or null. */
    static fromCommand(command) {
      needsNode('OfflineProgressBinding.fromCommand');
      const data = open(raw.offlineBindingOf(`[${commandText(command)}]`));
      return data && new OfflineProgressBinding(data);
    }
  }

  /** The core's in-memory outbox (`enqueueAction`, `pendingActions`, `markActionSent`). */
  class InMemoryOutbox {
    constructor() {
      needsNode('InMemoryOutbox');
      native.set(this, new raw.OfflineOutboxMemory());
    }

    enqueueAction(agentId, actionId, payload) {
      open(native.get(this).enqueueAction(jsonArgs({ agentId, actionId, payload })));
    }

    pendingActions(agentId) { return open(native.get(this).pendingActions(jsonArgs({ agentId }))); }

    markActionSent(agentId, actionId) { open(native.get(this).markActionSent(jsonArgs({ agentId, actionId }))); }
  }

  const read = (obj, ...names) => {
    for (const name of names) if (obj?.[name] !== undefined && obj?.[name] !== null) return obj[name];
    return undefined;
  };
  const refusal = (message, code, reason) => new OfflinePolicyError(message, { code, reason });

  /**
   * Bounded, reversible, signed buffering for one active, owned, leased WorkItem (reference
   * `OfflineExecutionPolicy`). `store` provides `enqueueAction`, `pendingActions` and
   * `markActionSent` (a SqliteAgentStore or an InMemoryOutbox); `identity` is `{agentId, signingKey}`.
   */
  class OfflineExecutionPolicy {
    #store;
    #signer;
    #clock;

    constructor(store, identity, workItem, { disconnectedAt, limits, clock = Date.now, sessionEpoch } = {}) {
      needsNode('OfflineExecutionPolicy');
      for (const method of ['enqueueAction', 'pendingActions', 'markActionSent']) {
        if (typeof store?.[method] !== 'function') throw new ArgumentError(`store must provide ${method}()`, { fields: { argument: 'store' } });
      }
      if (!(limits instanceof OfflineLimits)) throw new ArgumentError('limits must be OfflineLimits', { fields: { argument: 'limits' } });
      if (typeof clock !== 'function') throw new ArgumentError('clock must be a function', { fields: { argument: 'clock' } });
      const agentId = checkString(identity?.agentId, 'identity.agentId');
      const signer = signerOf(identity);
      const status = read(workItem, 'status', 'state');
      if (status !== undefined && String(status) !== 'active') {
        throw refusal('offline progress needs an active WorkItem', 'INVALID_STATE_TRANSITION', 'not_active');
      }
      const assignee = read(workItem, 'assigneeId', 'ownerAgentId');
      if (assignee !== undefined && assignee !== agentId) {
        throw refusal('the WorkItem is owned by another Agent', 'WORK_STALE_OWNERSHIP', 'stale_ownership');
      }
      const leaseId = read(workItem, 'executionLeaseId');
      const expiresAt = read(workItem, 'executionLeaseExpiresAt');
      const epoch = sessionEpoch ?? read(workItem, 'sessionEpoch');
      if (leaseId === undefined || expiresAt === undefined || epoch === undefined) {
        throw refusal('offline progress needs a current Execution Lease and Session Epoch', 'INVALID_STATE_TRANSITION', 'not_active');
      }
      const assignment = {
        agentId, groupId: read(workItem, 'groupId'), workItemId: read(workItem, 'workItemId', 'id'),
        conversationId: read(workItem, 'conversationId') ?? null, sessionEpoch: epoch,
        ownershipEpoch: read(workItem, 'ownershipEpoch') ?? 0, executionLeaseId: leaseId,
        executionLeaseExpiresAt: toMillis(expiresAt, 'workItem.executionLeaseExpiresAt'),
      };
      const handle = new raw.OfflinePolicy(jsonArgs({
        assignment, disconnectedAt: toMillis(disconnectedAt, 'disconnectedAt'),
        limits: { maxDisconnectGraceMs: limits.maxDisconnectGraceMs, maxActions: limits.maxActions, maxUsage: { ...limits.maxUsage } },
      }));
      try {
        open(handle.status());
      } catch (error) {
        handle.free?.();
        throw error;
      }
      native.set(this, handle);
      this.#store = store;
      this.#signer = signer;
      this.#clock = clock;
      this.limits = limits;
      Object.freeze(this);
    }

    #state() { return open(native.get(this, 'OfflineExecutionPolicy').state()); }

    /** The end of the window: `min(disconnectedAt + maxDisconnectGraceMs, lease expiry)`. */
    get graceDeadline() { return new Date(this.#state().graceDeadline); }

    /** The buffered signed wire Commands, in buffer order (deep-frozen). */
    get bufferedActions() { return deepFreeze(this.#state().bufferedActions); }

    get cumulativeUsage() { return new ResourceUsage(this.#state().cumulativeUsage); }

    /**
     * Checks `command`, attaches the critical binding, re-signs it with the Agent's key and
     * enqueues it; the same Command again returns the same signed Command (deep-frozen wire form).
     */
    buffer(command, { usage, now } = {}) {
      const at = toMillis(now ?? this.#clock(), now === undefined ? 'clock()' : 'now');
      const usageJson = argumentJson(usage instanceof ResourceUsage ? { ...usage } : usage ?? null, 'usage');
      const args = `[${commandText(command)},${usageJson},${at}]`;
      const store = this.#store;
      let failure;
      // The core calls back to enqueue; the store's own exception is kept and rethrown unchanged.
      const outbox = {
        enqueue(agentId, actionId, payload) {
          try {
            store.enqueueAction(agentId, actionId, JSON.parse(payload));
            return true;
          } catch (error) {
            failure = error;
            return false;
          }
        },
      };
      const handle = native.get(this, 'OfflineExecutionPolicy');
      const envelope = handle.buffer(outbox, this.#signer.keyId, this.#signer.seed, args);
      if (failure !== undefined) throw failure;
      return deepFreeze(open(envelope));
    }
  }
  disposable(native, [InMemoryOutbox, OfflineExecutionPolicy]);

  /**
   * The buffered Command rebased onto the current session (`issuedAt`, Session and Membership
   * Epochs, and for a checkpoint `executionLeaseId`) and re-signed, as a wire Command object; the
   * binding is kept unchanged.
   */
  function offlineCommandToWire(command, identity, { sessionEpoch, membershipEpoch, issuedAt, executionLeaseId, keyId } = {}) {
    needsNode('offlineCommandToWire');
    const signer = signerOf(identity, keyId);
    const rebase = {
      sessionEpoch, membershipEpoch, issuedAt: toMillis(issuedAt ?? Date.now(), 'issuedAt'),
      executionLeaseId: executionLeaseId ?? null,
    };
    return open(raw.offlineRebase(signer.keyId, signer.seed, `[${commandText(command)},${argumentJson(rebase, 'rebase')}]`));
  }

  /** `offlineCommandToWire`, deep-frozen (this package has no Command model: the wire form is the Command). */
  function rebaseOfflineCommand(command, identity, options = {}) {
    const { keyId, ...rest } = options ?? {};
    if (keyId !== undefined) throw new ArgumentError('rebaseOfflineCommand takes no keyId (the signing key names it)', { fields: { argument: 'keyId' } });
    return deepFreeze(offlineCommandToWire(command, identity, rest));
  }

  return {
    OFFLINE_EXECUTION_EXTENSION: constants.extension,
    OFFLINE_EXECUTION_EXTENSION_VERSION: constants.version,
    OFFLINE_REVERSIBLE_KINDS: Object.freeze([...constants.reversibleKinds]),
    OfflineLimits,
    OfflineProgressBinding,
    OfflineExecutionPolicy,
    InMemoryOutbox,
    offlineCommandToWire,
    rebaseOfflineCommand,
  };
}
