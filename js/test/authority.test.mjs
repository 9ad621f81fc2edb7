// Bounded authority on every backend: fenced leases, the budget ledger, Delegation Grants and
// retries with idempotency keys. Positive and negative cases per rule, typed errors with wire
// codes, snapshot round trips, and agreement with the Rust core (golden vectors,
// tests/vectors/scheduling.jsonl) and with an independent computation of the idempotency key
// (node:crypto over RFC 8785 text built here).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { before, describe, test } from 'node:test';

import { backends, schedulingVectors } from './support.mjs';

const T0 = 1_700_000_000_000;
let apis;
let reference;
before(async () => {
  apis = await backends();
  reference = schedulingVectors();
});

function caught(fn) {
  try {
    fn();
  } catch (error) {
    return error;
  }
  assert.fail('expected an error');
}

function expectError(fn, Class, code, extra = {}) {
  const error = caught(fn);
  assert.ok(error instanceof Class, `expected ${Class.name}, got ${error}`);
  assert.equal(error.code, code, error.message);
  for (const [k, v] of Object.entries(extra)) assert.deepEqual(error[k], v, k);
  return error;
}

// RFC 8785 for what the key covers (strings and safe integers): members sorted by UTF-16 code
// units, JSON.stringify string escaping (which RFC 8785 shares for these), integers as decimals.
function canonicalJson(object) {
  const keys = Object.keys(object).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${typeof object[k] === 'number' ? String(object[k]) : JSON.stringify(object[k])}`).join(',')}}`;
}

function independentKey(missionId, workItemId, ownershipEpoch, logicalOperationId) {
  const text = canonicalJson({ missionId, workItemId, ownershipEpoch, logicalOperationId });
  return `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
}

const KEY_CASES = [
  ['urn:mission:1', 'urn:work:1', 1, 'charge-card'],
  ['m', 'w', 9_007_199_254_740_991, 'op/é "quoted"'],
  ['urn:mission:ü', 'urn:work:2', 42, ''],
];

const leaseFields = (extra = {}) => ({
  leaseId: 'urn:lease:1', missionId: 'urn:mission:1', groupId: 'urn:group:1', workItemId: 'urn:work:1',
  holderAgentId: 'urn:agent:1', sessionEpoch: 3, ownershipEpoch: 7,
  issuedAt: T0, startsAt: new Date(T0 + 1_000), expiresAt: T0 + 60_000, ...extra,
});

const grantFields = (extra = {}) => ({
  grantId: 'grant-1', granteeAgentId: 'agent-d', missionId: 'm', groupId: 'g', targetWorkItemId: 'root',
  allowedCapabilities: [{ id: 'tool.search', version: '2.0.0' }],
  budget: { currency: 'USD', financialMicrounits: 10_000_000, modelTokens: 1000, toolCalls: 10, computeSeconds: 100, wallClockSeconds: 100, externalActions: 2 },
  maxDescendantDepth: 2, granteeMembershipEpoch: 4, coordinatorEpoch: 9, grantedBy: 'coord',
  grantedAt: new Date(T0), expiresAt: T0 + 3_600_000, ...extra,
});

const context = (extra = {}) => ({
  actorAgentId: 'agent-d', membership: { groupId: 'g', active: true, workDelegate: true, epoch: 4 },
  missionId: 'm', groupId: 'g', coordinatorEpoch: 9, coordinatorAgentId: 'coord', organizationMaxDepth: 3, now: T0 + 1000, ...extra,
});

const tree = () => ({
  root: { missionId: 'm' },
  child: { missionId: 'm', parentWorkItemId: 'root' },
  grandchild: { missionId: 'm', parentWorkItemId: 'child' },
  outside: { missionId: 'm' },
});

const work = (extra = {}) => ({
  requiredCapabilities: [{ id: 'tool.search', version: '2.1.0' }],
  budget: { financialMicrounits: 2_000_000, toolCalls: 3 }, currency: 'USD', ...extra,
});

for (const name of ['napi (ESM)', 'wasm (ESM)', 'wasm (CommonJS)']) {
  describe(`${name}: leases`, () => {
    test('execution lease: renew, release, idempotent closure, schema document equal to native', () => {
      const api = apis[name];
      const lease = new api.ExecutionLease(leaseFields());
      assert.equal(lease.leaseType, 'execution');
      assert.equal(lease.startsAt, T0 + 1_000);
      assert.equal(lease.state, api.LeaseState.ACTIVE);
      assert.equal(lease.isLive(T0 + 500), false);
      assert.equal(lease.isLive(T0 + 1_000), true);
      assert.equal(lease.stateAt(T0 + 60_000), 'expired');
      assert.equal(lease.renew(T0 + 30_000, new Date(T0 + 90_000)), lease);
      assert.equal(lease.expiresAt, T0 + 90_000);
      assert.equal(lease.renewalCount, 1);
      assert.equal(lease.release(T0 + 45_000, 'checkpoint'), true);
      assert.equal(lease.release(T0 + 45_000, 'checkpoint'), false, 'identical closure is a no-op');
      assert.equal(lease.state, 'released');
      assert.equal(lease.closedAt, T0 + 45_000);
      assert.equal(lease.toCanonicalJSON(), reference.get('lease').document);
      assert.equal(lease.toJSON().closedAt, new Date(T0 + 45_000).toISOString());
      assert.equal(api.canonicalize(JSON.stringify(lease)), reference.get('lease').document);
      api.validateSchema('lease', JSON.stringify(lease));
      // The document reads back to the same lease, as text or as an object.
      const back = api.ExecutionLease.fromJSON(lease.toJSON());
      assert.equal(back.toCanonicalJSON(), lease.toCanonicalJSON());
      assert.equal(back.state, 'released');
      assert.equal(back.renewalCount, 1);
      assert.equal(api.ExecutionLease.fromJSON(lease.toCanonicalJSON()).closedAt, T0 + 45_000);
      assert.throws(() => api.ExecutionLease.fromJSON('{'), (e) => e instanceof api.ParseError && e.code === 'PROTOCOL_VIOLATION');
      assert.throws(() => api.ExecutionLease.fromJSON({ ...lease.toJSON(), state: 'paused' }),
        (e) => e instanceof api.SchemaValidationError && e.code === 'SCHEMA_VALIDATION_FAILED');
      assert.throws(() => api.ExecutionLease.fromJSON({ ...lease.toJSON(), state: 'expired' }),
        (e) => e instanceof api.LeaseError && e.code === 'INVALID_COMMAND');
    });

    test('lease rules, each refused with its wire code', () => {
      const api = apis[name];
      const L = api.LeaseError;
      expectError(() => new api.ExecutionLease(leaseFields({ expiresAt: T0 })), L, 'INVALID_COMMAND', { reason: 'invalid_window' });
      expectError(() => new api.ExecutionLease(leaseFields({ sessionEpoch: 0 })), L, 'INVALID_COMMAND', { reason: 'invalid_field', field: 'sessionEpoch' });
      expectError(() => new api.ExecutionLease(leaseFields({ leaseId: 'has space' })), L, 'INVALID_COMMAND', { field: 'leaseId' });
      const lease = new api.ExecutionLease(leaseFields());
      expectError(() => lease.renew(T0 + 60_000, T0 + 90_000), L, 'WORK_LEASE_EXPIRED', { reason: 'expired' });
      expectError(() => lease.renew(T0 + 2_000, T0 + 50_000), L, 'INVALID_COMMAND', { reason: 'not_extending' });
      lease.renew(T0 + 2_000, T0 + 70_000);
      expectError(() => lease.renew(T0 + 2_000, T0 + 80_000), L, 'INVALID_COMMAND', { reason: 'non_monotonic_renewal' });
      const claim = { agentId: 'urn:agent:1', leaseId: 'urn:lease:1', sessionEpoch: 3, ownershipEpoch: 7 };
      lease.checkClaim(claim, T0 + 3_000);
      expectError(() => lease.checkClaim({ ...claim, agentId: 'urn:agent:2' }, T0 + 3_000), L, 'AUTH_FORBIDDEN', { reason: 'wrong_holder' });
      expectError(() => lease.checkClaim({ ...claim, sessionEpoch: 2 }, T0 + 3_000), L, 'AUTH_STALE_SESSION');
      expectError(() => lease.checkClaim({ ...claim, ownershipEpoch: 6 }, T0 + 3_000), L, 'WORK_STALE_OWNERSHIP', { reason: 'stale_ownership' });
      expectError(() => lease.checkClaim({ ...claim, leaseId: 'urn:lease:0' }, T0 + 3_000), L, 'WORK_LEASE_EXPIRED', { reason: 'stale_lease' });
      expectError(() => lease.checkClaim(claim, T0 + 70_000), L, 'WORK_LEASE_EXPIRED', { reason: 'expired' });
      expectError(() => lease.expire(T0 + 10_000, 'timeout'), L, 'INVALID_COMMAND', { reason: 'invalid_window' });
      assert.equal(lease.revoke(T0 + 10_000, 'reassigned'), true);
      expectError(() => lease.release(T0 + 10_000, 'checkpoint'), L, 'INVALID_STATE_TRANSITION', { reason: 'closure_conflict' });
      expectError(() => lease.checkClaim(claim, T0 + 11_000), L, 'WORK_LEASE_EXPIRED', { reason: 'closed', state: 'revoked' });
      expectError(() => lease.renew(T0 + 11_000, T0 + 99_000), L, 'WORK_LEASE_EXPIRED', { reason: 'closed' });
      // Closing a lapsed lease: only `expired` at or after expiry.
      const lapsed = new api.ExecutionLease(leaseFields());
      expectError(() => lapsed.release(T0 + 60_000, 'late'), L, 'WORK_LEASE_EXPIRED');
      assert.equal(lapsed.expire(T0 + 60_000, 'timeout'), true);
      expectError(() => lapsed.close('active', T0 + 61_000, 'x'), L, 'INVALID_COMMAND', { reason: 'invalid_field', field: 'state' });
      assert.ok(caught(() => lapsed.close('paused', T0 + 61_000, 'x')) instanceof api.ArgumentError);
      assert.ok(caught(() => lapsed.renew('soon', T0)) instanceof api.ArgumentError);
      assert.ok(caught(() => new api.ExecutionLease({ leaseId: 'x' })) instanceof api.ArgumentError);
    });

    test('ownership, blocked and coordinator leases', () => {
      const api = apis[name];
      const own = api.ExecutionLease.ownership(leaseFields({ startBy: T0 + 5_000 }));
      assert.equal(own.leaseType, 'ownership');
      own.checkStartBy(T0 + 5_000);
      expectError(() => own.checkStartBy(T0 + 5_001), api.LeaseError, 'WORK_LEASE_EXPIRED');
      expectError(() => api.ExecutionLease.ownership(leaseFields({ startBy: T0 + 61_000 })), api.LeaseError, 'INVALID_COMMAND', { reason: 'invalid_window' });
      const blocked = api.ExecutionLease.blocked(leaseFields({ graceExpiresAt: T0 + 100_000 }));
      blocked.renew(T0 + 2_000, T0 + 100_000);
      expectError(() => blocked.renew(T0 + 3_000, T0 + 100_001), api.LeaseError, 'INVALID_COMMAND', { reason: 'not_extending' });
      const coord = api.ExecutionLease.coordinator({ ...leaseFields(), workItemId: undefined, ownershipEpoch: undefined, coordinatorEpoch: 5 });
      assert.equal(coord.workItemId, null);
      expectError(() => coord.checkClaim({ agentId: 'urn:agent:1', leaseId: 'urn:lease:1', sessionEpoch: 3, coordinatorEpoch: 4 }, T0 + 2_000),
        api.LeaseError, 'AUTH_STALE_COORDINATOR');
      api.validateSchema('lease', JSON.stringify(coord));
    });
  });

  describe(`${name}: budget ledger`, () => {
    function ledger(api) {
      const l = new api.BudgetLedger();
      l.registerMission('m', { financialMicrounits: 100_000_000, toolCalls: 100, modelTokens: 1000 }, { currency: 'USD' });
      l.registerWorkItem('w1', 'm', { financialMicrounits: 60_000_000, toolCalls: 60, modelTokens: 600 });
      l.registerMission('c', { financialMicrounits: 40_000_000, toolCalls: 40 }, { parentWorkItemId: 'w1' });
      l.registerWorkItem('w2', 'c', { financialMicrounits: 30_000_000, toolCalls: 30 });
      l.registerWorkItem('w3', 'c', { financialMicrounits: 20_000_000, toolCalls: 20 }, { parentWorkItemId: 'w2' });
      return l;
    }

    test('consumption rolls up the whole ancestry; remaining is the minimum over it', () => {
      const api = apis[name];
      const l = ledger(api);
      assert.equal(l.size, 5);
      assert.equal(l.depth(['work_item', 'w3']), 4);
      assert.equal(l.currency({ kind: 'work_item', id: 'w3' }), 'USD', 'a child Mission inherits the currency');
      const used = l.consume('w3', new api.ResourceUsage({ financialMicrounits: 1_500_000, toolCalls: 2 }));
      assert.ok(used instanceof api.ResourceUsage);
      assert.equal(used.financialMicrounits, 1_500_000);
      assert.equal(l.usage(['mission', 'm']).toolCalls, 2);
      assert.equal(l.usage(['work_item', 'w2']).toolCalls, 2);
      assert.equal(l.remaining(['work_item', 'w3']).toolCalls, 18);
      assert.equal(l.remaining(['work_item', 'w3']).modelTokens, 0, 'a missing limit is a zero allowance');
      assert.equal(l.reserved(['mission', 'c']).toolCalls, 30);
      assert.equal(l.limit(['mission', 'c']).financialMicrounits, 40_000_000);
    });

    test('BUDGET_EXCEEDED names the dimension and the account; nothing is charged', () => {
      const api = apis[name];
      const l = ledger(api);
      l.consume('w3', { toolCalls: 20 });
      const e = expectError(() => l.consume('w3', { financialMicrounits: 1, toolCalls: 1 }), api.BudgetExceededError, 'BUDGET_EXCEEDED',
        { dimension: 'tool_calls', account: { kind: 'work_item', id: 'w3' }, reason: 'exceeded' });
      assert.ok(e instanceof api.BudgetLedgerError && e instanceof api.MwpError);
      assert.match(e.message, /tool_calls/);
      assert.equal(l.usage(['work_item', 'w3']).financialMicrounits, 0, 'all or nothing');
      expectError(() => l.consume('w2', { modelTokens: 1 }), api.BudgetExceededError, 'BUDGET_EXCEEDED', { dimension: 'model_tokens' });
      expectError(() => l.registerWorkItem('w4', 'm', { toolCalls: 41 }), api.BudgetExceededError, 'BUDGET_EXCEEDED',
        { reason: 'allocation_exceeded', account: { kind: 'mission', id: 'm' }, dimension: 'tool_calls' });
      expectError(() => l.consume('nope', { toolCalls: 1 }), api.BudgetLedgerError, 'INVALID_COMMAND', { reason: 'unknown_account' });
      expectError(() => l.consume('w1', {}), api.BudgetLedgerError, 'INVALID_COMMAND', { reason: 'zero_delta' });
      expectError(() => l.registerWorkItem('w1', 'm', {}), api.BudgetLedgerError, 'INVALID_COMMAND', { reason: 'duplicate' });
      expectError(() => l.registerMission('x', { financialMicrounits: 1 }), api.BudgetLedgerError, 'INVALID_COMMAND', { reason: 'currency' });
      expectError(() => l.registerMission('y', {}, { parentWorkItemId: 'w1', currency: 'EUR' }), api.BudgetLedgerError, 'INVALID_COMMAND', { reason: 'currency' });
      expectError(() => l.registerWorkItem('w5', 'c', {}, { parentWorkItemId: 'w1' }), api.BudgetLedgerError, 'INVALID_COMMAND', { reason: 'cross_mission_parent' });
      assert.ok(caught(() => l.consume('w1', { toolCalls: -1 })) instanceof api.ArgumentError);
      assert.ok(caught(() => l.consume('w1', { toolCalls: 1.5 })) instanceof api.ArgumentError);
      assert.ok(caught(() => l.consume('w1', { dollars: 1 })) instanceof api.ArgumentError);
      assert.ok(caught(() => l.remaining('w1')) instanceof api.ArgumentError);
      assert.ok(caught(() => new api.ResourceUsage({ toolCalls: 2 ** 53 })) instanceof api.ArgumentError);
    });

    test('snapshot round trip and rebuild checks', () => {
      const api = apis[name];
      const l = ledger(api);
      l.consume('w3', { financialMicrounits: 7, toolCalls: 3 });
      l.consume('w1', { toolCalls: 1 });
      const snap = l.snapshot();
      assert.ok(snap instanceof api.BudgetLedgerSnapshot);
      const text = JSON.stringify(snap);
      const back = api.BudgetLedger.rebuild(text);
      assert.equal(api.canonicalize(JSON.stringify(back.snapshot())), api.canonicalize(text));
      assert.deepEqual({ ...back.remaining(['work_item', 'w3']) }, { ...l.remaining(['work_item', 'w3']) });
      // Rebuilt ledgers keep enforcing.
      expectError(() => back.consume('w3', { toolCalls: 18 }), api.BudgetExceededError, 'BUDGET_EXCEEDED');
      const corrupt = JSON.parse(text);
      corrupt.missions.find((m) => m.missionId === 'm').usage.toolCalls += 1;
      expectError(() => api.BudgetLedger.rebuild(corrupt), api.BudgetLedgerError, 'INTERNAL_ERROR', { reason: 'corrupt_totals' });
      const malformed = JSON.parse(text);
      delete malformed.workItems[0].limit;
      expectError(() => api.BudgetLedger.rebuild(malformed), api.SnapshotError, 'INTERNAL_ERROR', { path: '/workItems/0/limit' });
    });
  });

  describe(`${name}: delegation`, () => {
    test('authorized uses charge cumulative ceilings and return the depth', () => {
      const api = apis[name];
      const grant = new api.DelegationGrant(grantFields());
      assert.ok(grant.budget instanceof api.DelegationBudget);
      const auth = new api.DelegationAuthority(grant);
      assert.equal(auth.grant.grantId, 'grant-1');
      assert.equal(auth.grant.grantedAt, T0);
      auth.checkUse(context(), tree());
      assert.equal(auth.authorizeExisting(context(), tree(), 'child', work()), 1);
      assert.equal(auth.authorizeExisting(context(), new Map(Object.entries(tree())), 'child', work()), 1, 're-offer charges once');
      assert.equal(auth.charged.toolCalls, 3);
      assert.equal(auth.authorizeDescendant(context(), tree(), 'new-1', 'child', work()), 2);
      assert.equal(auth.remaining.toolCalls, 4);
      assert.equal(auth.remaining.financialMicrounits, 6_000_000);
      assert.equal(auth.invalidated, null);
    });

    test('violations: kind, wire code, dimension; invalidating ones latch', () => {
      const api = apis[name];
      const V = api.DelegationViolation;
      assert.equal(api.DelegationViolationError, V);
      const auth = new api.DelegationAuthority(grantFields());
      const cases = [
        [() => auth.checkUse(context({ actorAgentId: 'other' }), tree()), 'identity', 'AUTH_FORBIDDEN'],
        [() => auth.checkUse(context({ groupId: 'g2' }), tree()), 'scope', 'AUTH_FORBIDDEN'],
        [() => auth.checkUse(context({ now: T0 - 1 }), tree()), 'not_yet_valid', 'AUTH_FORBIDDEN'],
        [() => auth.authorizeExisting(context(), tree(), 'outside', work()), 'scope', 'AUTH_FORBIDDEN'],
        [() => auth.authorizeDescendant(context(), tree(), 'deep', 'grandchild', work()), 'depth', 'AUTH_FORBIDDEN'],
        [() => auth.authorizeDescendant(context({ organizationMaxDepth: 1 }), tree(), 'd2', 'child', work()), 'depth', 'AUTH_FORBIDDEN'],
        [() => auth.authorizeExisting(context(), tree(), 'child', work({ requiredCapabilities: [{ id: 'tool.search', version: '1.9.0' }] })), 'capability', 'AUTH_FORBIDDEN'],
        [() => auth.authorizeExisting(context(), tree(), 'child', work({ requiredCapabilities: [{ id: 'tool.write', version: '2.0.0' }] })), 'capability', 'AUTH_FORBIDDEN'],
        [() => auth.authorizeExisting(context(), tree(), 'child', work({ budget: { toolCalls: 11 } })), 'budget', 'BUDGET_EXCEEDED'],
        [() => auth.authorizeExisting(context(), tree(), 'child', work({ currency: 'EUR' })), 'budget', 'BUDGET_EXCEEDED'],
        [() => auth.authorizeDescendant(context(), tree(), 'child', 'root', work()), 'scope', 'AUTH_FORBIDDEN'],
      ];
      for (const [fn, kind, code] of cases) {
        const e = expectError(fn, V, code, { kind });
        assert.equal(e.invalidates, false, kind);
      }
      const over = caught(() => auth.authorizeExisting(context(), tree(), 'child', work({ budget: { toolCalls: 11 } })));
      assert.equal(over.dimension, 'tool_calls');
      assert.equal(auth.invalidated, null, 'non-invalidating violations do not latch');
      // Invalidating conditions, each on a fresh authority, then latched.
      for (const [ctx, items, kind, code] of [
        [context({ membership: { groupId: 'g', epoch: 5 } }), tree(), 'membership_epoch', 'MEMBERSHIP_STALE'],
        [context({ membership: null }), tree(), 'membership', 'MEMBERSHIP_REQUIRED'],
        [context({ membership: { groupId: 'g', epoch: 4, workDelegate: false } }), tree(), 'membership', 'MEMBERSHIP_REQUIRED'],
        [context({ coordinatorEpoch: 10 }), tree(), 'coordinator_epoch', 'AUTH_STALE_COORDINATOR'],
        [context({ coordinatorAgentId: 'coord2' }), tree(), 'issuer', 'AUTH_STALE_COORDINATOR'],
        [context({ now: T0 + 3_600_000 }), tree(), 'expired', 'AUTH_FORBIDDEN'],
        [context(), { child: { missionId: 'm' } }, 'target_missing', 'AUTH_FORBIDDEN'],
        [context(), { ...tree(), root: { missionId: 'm', closed: true } }, 'target_closed', 'AUTH_FORBIDDEN'],
      ]) {
        const a = new api.DelegationAuthority(grantFields());
        expectError(() => a.checkUse(ctx, items), V, code, { kind, invalidates: true });
        expectError(() => a.checkUse(context(), tree()), V, code, { kind });
        assert.equal(a.invalidated.kind, kind);
      }
      expectError(() => new api.DelegationAuthority(grantFields({ expiresAt: T0 })), V, 'INVALID_COMMAND', { kind: 'malformed' });
      expectError(() => new api.DelegationAuthority(grantFields({ allowedCapabilities: [] })), V, 'INVALID_COMMAND', { kind: 'malformed' });
      assert.ok(caught(() => new api.DelegationGrant(grantFields({ budget: { toolCalls: 1 } }))) instanceof api.ArgumentError);
      assert.ok(caught(() => auth.checkUse({ actorAgentId: 'agent-d' }, tree())) instanceof api.ArgumentError);
    });

    test('restored attributions count against the ceilings', () => {
      const api = apis[name];
      const auth = new api.DelegationAuthority(grantFields());
      auth.restoreAttribution('child', { toolCalls: 9 });
      auth.restoreAttribution('child', { toolCalls: 9 });
      assert.equal(auth.charged.toolCalls, 9);
      expectError(() => auth.authorizeDescendant(context(), tree(), 'n', 'root', work({ budget: { toolCalls: 2 } })), api.DelegationViolation, 'BUDGET_EXCEEDED', { kind: 'budget' });
    });
  });

  describe(`${name}: retries and idempotency keys`, () => {
    test('idempotency keys equal the native core and an independent node:crypto computation', () => {
      const api = apis[name];
      const keys = KEY_CASES.map((args) => api.idempotencyKey(...args));
      assert.deepEqual(keys, reference.get('idempotency').cases.map((c) => c.key));
      assert.deepEqual(reference.get('idempotency').cases.map((c) => [c.missionId, c.workItemId, c.ownershipEpoch, c.logicalOperationId]), KEY_CASES);
      assert.deepEqual(keys, KEY_CASES.map((args) => independentKey(...args)));
      assert.equal(api.canonicalHash(JSON.stringify({ missionId: 'm', workItemId: 'w', ownershipEpoch: 1, logicalOperationId: 'op' })),
        api.idempotencyKey('m', 'w', 1, 'op'));
      assert.ok(caught(() => api.idempotencyKey('m', 'w', 0, 'op')) instanceof api.ArgumentError);
      assert.ok(caught(() => api.idempotencyKey('m', 'w', 2 ** 53, 'op')) instanceof api.ArgumentError);
      assert.equal(api.parseDurationMs('PT1.0001S'), 1001);
      assert.equal(api.parseDurationMs('P1DT2H'), 93_600_000);
      assert.ok(caught(() => api.parseDurationMs('1 day')) instanceof api.ArgumentError);
    });

    test('bounded retries: backoff, stable keys, budgets, exhaustion', () => {
      const api = apis[name];
      const r = new api.RetryController({
        policy: { maxAttempts: 3, backoff: 'exponential', initialDelayMs: 100, maxDelay: 'PT0.15S', retryableFailures: ['TIMEOUT'] },
        deadline: new Date(T0 + 10_000), costBudget: { toolCalls: 5 }, missionId: 'urn:mission:1', workItemId: 'urn:work:1', ownershipEpoch: 1,
      });
      const a1 = r.begin('charge-card', T0);
      assert.ok(a1 instanceof api.Attempt);
      assert.equal(a1.attemptNumber, 1);
      assert.equal(a1.idempotencyKey, independentKey('urn:mission:1', 'urn:work:1', 1, 'charge-card'));
      assert.equal(a1.attemptKey, api.derivedAttemptKey(a1.idempotencyKey, 1));
      expectError(() => r.begin('charge-card', T0), api.RetryError, 'INVALID_STATE_TRANSITION', { reason: 'attempt_in_flight' });
      assert.equal(r.consume({ toolCalls: 2 }).toolCalls, 2);
      expectError(() => r.consume({ toolCalls: 4 }), api.RetryError, 'BUDGET_EXCEEDED', { reason: 'budget_exceeded', dimension: 'tool_calls' });
      const s1 = r.finish({ success: false, code: 'TIMEOUT' }, T0 + 10);
      assert.ok(s1 instanceof api.RetrySchedule);
      assert.deepEqual({ ...s1 }, { retry: true, retryAt: T0 + 110, reason: 'retryable_failure' });
      expectError(() => r.begin('charge-card', T0 + 109), api.RetryError, 'INVALID_COMMAND', { reason: 'backoff_pending', retryAt: T0 + 110 });
      const a2 = r.begin('charge-card', T0 + 110);
      assert.equal(a2.idempotencyKey, a1.idempotencyKey, 'the same logical operation keeps its key');
      assert.notEqual(a2.attemptKey, a1.attemptKey);
      assert.equal(r.finish({ success: false, code: 'TIMEOUT' }, T0 + 120).retryAt, T0 + 270, 'capped at maxDelay');
      r.begin('charge-card', T0 + 270);
      assert.deepEqual({ ...r.finish({ success: false, code: 'TIMEOUT' }, T0 + 280) }, { retry: false, retryAt: null, reason: 'attempts_exhausted' });
      assert.equal(r.finished, 'attempts_exhausted');
      assert.equal(r.attempts, 3);
      expectError(() => r.begin('charge-card', T0 + 300), api.RetryExhausted, 'INVALID_STATE_TRANSITION', { finishedReason: 'attempts_exhausted' });
      expectError(() => r.finish({ success: true }, T0 + 300), api.RetryError, 'INVALID_STATE_TRANSITION', { reason: 'no_attempt_in_flight' });

      const permanent = new api.RetryController({ policy: { maxAttempts: 5, retryableFailures: ['TIMEOUT'] }, missionId: 'm', workItemId: 'w', ownershipEpoch: 2 });
      permanent.begin('op', T0);
      assert.equal(permanent.finish({ success: false, code: 'DENIED' }, T0).reason, 'permanent_failure');
      const ok = new api.RetryController({ policy: { maxAttempts: 2 }, missionId: 'm', workItemId: 'w', ownershipEpoch: 2 });
      ok.begin('op', T0);
      assert.equal(ok.finish({ success: true }, T0).reason, 'completed');
      const late = new api.RetryController({ policy: { maxAttempts: 2 }, deadline: T0, missionId: 'm', workItemId: 'w', ownershipEpoch: 2 });
      expectError(() => late.begin('op', T0), api.RetryExhausted, 'INVALID_STATE_TRANSITION', { reason: 'deadline_exhausted' });
      expectError(() => new api.RetryController({ policy: { maxAttempts: 0 }, missionId: 'm', workItemId: 'w', ownershipEpoch: 1 }),
        api.RetryError, 'INVALID_COMMAND', { reason: 'invalid_argument', field: 'maxAttempts' });
      assert.ok(caught(() => new api.RetryController({ policy: { maxAttempts: 1, backoff: 'random' }, missionId: 'm', workItemId: 'w', ownershipEpoch: 1 })) instanceof api.ArgumentError);
    });
  });
}
