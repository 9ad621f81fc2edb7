// The budget (§12, §14; reference `budget`): the six resource dimensions, `ResourceUsage`
// amounts, and the hierarchical `BudgetLedger` (one core ledger each, `core/ffi` `LedgerHandle`)
// with its snapshot. Every limit, reservation and rebuild check is the core's; amounts are safe
// non-negative integers, financial ones in micro-units of the currency.

import { ArgumentError } from './errors.mjs';
import { jsonArgs, snapshotText } from './convert.mjs';
import { NativeTable, adopt, disposable, invoke } from './native.mjs';
import { deepFreeze } from './values.mjs';

/** The six budget dimensions as `ResourceUsage` members (financial in micro-units). */
export const RESOURCE_DIMENSIONS = Object.freeze([
  'financialMicrounits', 'modelTokens', 'toolCalls', 'computeSeconds', 'wallClockSeconds', 'externalActions',
]);

/** Six non-negative safe integers (financial in micro-units); missing members are 0. */
export class ResourceUsage {
  constructor(values = {}) {
    if (!values || typeof values !== 'object') throw new ArgumentError('ResourceUsage: expected an object');
    for (const name of Object.keys(values)) {
      if (!RESOURCE_DIMENSIONS.includes(name)) throw new ArgumentError(`ResourceUsage: unknown member ${JSON.stringify(name)}`);
    }
    for (const name of RESOURCE_DIMENSIONS) {
      const v = values[name] ?? 0;
      if (!Number.isSafeInteger(v) || v < 0) throw new ArgumentError(`ResourceUsage.${name}: expected a safe non-negative integer`);
      this[name] = v;
    }
    if (new.target === ResourceUsage) Object.freeze(this);
  }
}

/** The budget ledger's persisted state (JSON form of the core's snapshot). */
export class BudgetLedgerSnapshot {
  constructor(document) {
    const doc = typeof document === 'string' ? JSON.parse(document) : document;
    if (!doc || typeof doc !== 'object') throw new ArgumentError('BudgetLedgerSnapshot: expected an object or JSON text');
    Object.assign(this, structuredClone(doc));
    deepFreeze(this);
  }
}

export function freezeUsage(raw) { return new ResourceUsage(raw); }

function accountArgs(account) {
  if (Array.isArray(account) && account.length === 2) return account;
  if (account && typeof account === 'object' && 'kind' in account) return [account.kind, account.id];
  throw new ArgumentError("account must be ['mission'|'work_item', id] or {kind, id}");
}

export function budgetApi({ raw }) {
  const handles = new NativeTable(raw);
  const call = (self, op, args) => invoke(handles, self, op, args);

  /** The hierarchical six-dimensional budget ledger (§12, §14); amounts are ResourceUsage objects. */
  class BudgetLedger {
    constructor() { adopt(handles, this, new raw.Ledger()); }

    /** Rebuilds from a snapshot (object or JSON text), checking every invariant. */
    static rebuild(snapshot) {
      const text = snapshotText(snapshot, 'snapshot');
      return adopt(handles, Object.create(BudgetLedger.prototype), raw.ledgerRebuild(jsonArgs([text])));
    }

    /** A root Mission, or with `parentWorkItemId` a child Mission reserved against that WorkItem. */
    registerMission(missionId, limit, { currency = null, parentWorkItemId = null } = {}) {
      call(this, (h, a) => h.registerMission(a), { missionId, limit, currency, parentWorkItemId });
    }

    /** A WorkItem under its Mission or a parent WorkItem; its limit is reserved against the parent. */
    registerWorkItem(workItemId, missionId, limit, { parentWorkItemId = null } = {}) {
      call(this, (h, a) => h.registerWorkItem(a), { workItemId, missionId, limit, parentWorkItemId });
    }

    /** Charges a nonzero delta to the WorkItem and all its ancestors, all or nothing; returns its usage. */
    consume(workItemId, delta) { return freezeUsage(call(this, (h, a) => h.consume(a), { workItemId, delta })); }

    /** What can still be consumed through the account (minimum over its ancestry). */
    remaining(account) { return freezeUsage(call(this, (h, a) => h.remaining(a), accountArgs(account))); }

    usage(account) { return freezeUsage(call(this, (h, a) => h.usage(a), accountArgs(account))); }

    limit(account) { return freezeUsage(call(this, (h, a) => h.limit(a), accountArgs(account))); }

    reserved(account) { return freezeUsage(call(this, (h, a) => h.reserved(a), accountArgs(account))); }

    currency(account) { return call(this, (h, a) => h.currency(a), accountArgs(account)); }

    depth(account) { return call(this, (h, a) => h.depth(a), accountArgs(account)); }

    get size() { return call(this, (h) => h.size()); }

    snapshot() { return new BudgetLedgerSnapshot(call(this, (h) => h.snapshot())); }
  }
  disposable(handles, [BudgetLedger]);

  return { BudgetLedger };
}
