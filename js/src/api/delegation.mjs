// Delegation Grants (§9.1, §13; reference `delegation`): the violation kinds, the Grant and its
// budget, and `DelegationAuthority` (one core authority each, `core/ffi` `AuthorityHandle`),
// which checks and charges the Grant's uses. Every check (identity, membership, scope,
// capabilities, budget, depth, epochs, expiry) and every latched invalidation is the core's.

import { ArgumentError } from './errors.mjs';
import { jsonArgs } from './convert.mjs';
import { NativeTable, adopt, disposable, invoke } from './native.mjs';
import { ResourceUsage, freezeUsage } from './budget.mjs';
import { deepFreeze } from './values.mjs';

/** Why a Delegation Grant use was refused (§9.1). */
export const DelegationViolationKind = Object.freeze({
  IDENTITY: 'identity', MEMBERSHIP: 'membership', MEMBERSHIP_EPOCH: 'membership_epoch', SCOPE: 'scope',
  CAPABILITY: 'capability', BUDGET: 'budget', DEPTH: 'depth', COORDINATOR_EPOCH: 'coordinator_epoch',
  ISSUER: 'issuer', EXPIRED: 'expired', NOT_YET_VALID: 'not_yet_valid', TARGET_MISSING: 'target_missing',
  TARGET_CLOSED: 'target_closed', MALFORMED: 'malformed',
});


/** A Delegation Grant's explicit ceilings for all six dimensions, with the currency of the financial one. */
export class DelegationBudget extends ResourceUsage {
  constructor({ currency, ...values } = {}) {
    if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency)) throw new ArgumentError('DelegationBudget.currency: three upper-case letters');
    super(values);
    this.currency = currency;
    Object.freeze(this);
  }
}

/** The persisted Grant (`membership.delegationGrants[]`); validated by `new DelegationAuthority(grant)`. */
export class DelegationGrant {
  constructor(fields) {
    if (!fields || typeof fields !== 'object') throw new ArgumentError('DelegationGrant: expected an object');
    Object.assign(this, fields);
    if (!(this.budget instanceof DelegationBudget)) this.budget = new DelegationBudget(this.budget);
    deepFreeze(this);
  }
}

export function delegationApi({ raw }) {
  const handles = new NativeTable(raw);
  const call = (self, op, args) => invoke(handles, self, op, args);

  /** Checks and accounts the uses of one Delegation Grant (§9.1); invalidating conditions latch. */
  class DelegationAuthority {
    constructor(grant) { adopt(handles, this, new raw.Delegation(jsonArgs({ grant }))); }

    get grant() { return new DelegationGrant(call(this, (h) => h.grant())); }

    get charged() { return freezeUsage(call(this, (h) => h.charged())); }

    get remaining() { return freezeUsage(call(this, (h) => h.remaining())); }

    /** The latched invalidation `{kind, code, message, dimension}`, or null. */
    get invalidated() { return deepFreeze(call(this, (h) => h.invalidated())); }

    /** Every use-time check independent of the WorkItem. `workItems`: `{id: {missionId, parentWorkItemId, closed}}` or a Map. */
    checkUse(context, workItems) { call(this, (h, a) => h.checkUse(a), { context, workItems }); }

    /** `work.offer` of the target or an existing descendant; charges its budget once. Returns its depth. */
    authorizeExisting(context, workItems, workItemId, work) {
      return call(this, (h, a) => h.authorizeExisting(a), { context, workItems, workItemId, work });
    }

    /** `work.authorize` of a new WorkItem under `parentWorkItemId`. Returns the new item's depth. */
    authorizeDescendant(context, workItems, newWorkItemId, parentWorkItemId, work) {
      return call(this, (h, a) => h.authorizeDescendant(a), { context, workItems, newWorkItemId, parentWorkItemId, work });
    }

    /** Re-attributes a WorkItem when rebuilding from the log. */
    restoreAttribution(workItemId, budget) { call(this, (h, a) => h.restoreAttribution(a), { workItemId, budget }); }
  }
  disposable(handles, [DelegationAuthority]);

  return { DelegationAuthority };
}
