// Fenced leases (§11.3; reference `lease`): the lease states and `ExecutionLease`, one core
// lease each (`core/ffi` `LeaseHandle`). Every check (windows, renewals, closures, the fencing
// claim, start-by) is the core's; times are a Date or integer milliseconds.

import { jsonArgs, snapshotText, toMillis } from './convert.mjs';
import { NativeTable, adopt, disposable, invoke } from './native.mjs';

/** `state` of a lease (§11.3); non-active states are terminal. */
export const LeaseState = Object.freeze({ ACTIVE: 'active', EXPIRED: 'expired', REVOKED: 'revoked', RELEASED: 'released' });

const LEASE_FIELDS = ['leaseId', 'leaseType', 'missionId', 'groupId', 'holderAgentId', 'sessionEpoch', 'workItemId',
  'ownershipEpoch', 'coordinatorEpoch', 'issuedAt', 'startsAt', 'expiresAt', 'startBy', 'graceExpiresAt', 'state',
  'renewalCount', 'lastRenewedAt', 'closedAt', 'closureReason'];

export function leaseApi({ raw }) {
  const handles = new NativeTable(raw);
  const leaseState = new WeakMap();
  const call = (self, op, args) => invoke(handles, self, op, args);
  const updateLease = (self, state) => { leaseState.set(self, state); return self; };

  /**
   * A fenced lease (§11.3): execution by default; `ExecutionLease.ownership`, `.blocked` and
   * `.coordinator` make the other types. Mutations happen in place and are checked by the core.
   */
  class ExecutionLease {
    constructor(fields) { ExecutionLease.#init(this, (text) => new raw.Lease(text), { fields }); }

    // `make(argumentsJson)` makes the native lease; its state is kept for the property getters.
    static #init(self, make, args) {
      adopt(handles, self, make(jsonArgs(args)));
      leaseState.set(self, call(self, (h) => h.state()));
      return self;
    }

    /** Queued ownership with a start-by deadline (`startBy`). */
    static ownership(fields) { return ExecutionLease.#init(Object.create(ExecutionLease.prototype), raw.leaseOwnership, { fields }); }

    /** Ownership retained while blocked, optionally bounded by `graceExpiresAt`. */
    static blocked(fields) { return ExecutionLease.#init(Object.create(ExecutionLease.prototype), raw.leaseBlocked, { fields }); }

    /** The Coordinator's lease (`coordinatorEpoch`, no WorkItem). */
    static coordinator(fields) { return ExecutionLease.#init(Object.create(ExecutionLease.prototype), raw.leaseCoordinator, { fields }); }

    /** Reads a lease back from its `lease.schema.json` document (text or object, as `toJSON()` gives). */
    static fromJSON(document) {
      const text = snapshotText(document, 'document');
      return ExecutionLease.#init(Object.create(ExecutionLease.prototype), raw.leaseFromDocument, [text]);
    }

    /** The observed state at `now` (an active lease past its expiry is `expired`). */
    stateAt(now) { return call(this, (h, a) => h.stateAt(a), [toMillis(now, 'now')]); }

    isLive(now) { return call(this, (h, a) => h.isLive(a), [toMillis(now, 'now')]); }

    /** Renews at `at` to `expiresAt`: before expiry, strictly after the last renewal, strictly extending. */
    renew(at, expiresAt) {
      return updateLease(this, call(this, (h, a) => h.renew(a), { at: toMillis(at, 'at'), expiresAt: toMillis(expiresAt, 'expiresAt') }));
    }

    /** Closes with `state` (released, revoked, expired). False when the identical closure was already recorded. */
    close(state, at, reason) {
      const out = call(this, (h, a) => h.close(a), { state, at: toMillis(at, 'at'), reason });
      updateLease(this, out.lease);
      return out.changed;
    }

    release(at, reason) { return this.close('released', at, reason); }

    revoke(at, reason) { return this.close('revoked', at, reason); }

    expire(at, reason) { return this.close('expired', at, reason); }

    /** Fencing check for a lease-bound Command: `{agentId, leaseId, sessionEpoch, ownershipEpoch?, coordinatorEpoch?}`. Throws LeaseError. */
    checkClaim(claim, now) { call(this, (h, a) => h.checkClaim(a), { claim, now: toMillis(now, 'now') }); }

    /** For ownership leases: may work start at `now`? Throws LeaseError. */
    checkStartBy(now) { call(this, (h, a) => h.checkStartBy(a), [toMillis(now, 'now')]); }

    /** The schema-shaped document (`lease.schema.json`: camelCase, RFC 3339 UTC timestamps). */
    toJSON() { return JSON.parse(this.toCanonicalJSON()); }

    /** The same document in RFC 8785 canonical form. */
    toCanonicalJSON() { return call(this, (h) => h.toJson()); }
  }
  for (const name of LEASE_FIELDS) {
    Object.defineProperty(ExecutionLease.prototype, name, {
      get() { handles.get(this); return leaseState.get(this)?.[name]; }, enumerable: false, configurable: true,
    });
  }
  disposable(handles, [ExecutionLease]);

  return { ExecutionLease };
}
