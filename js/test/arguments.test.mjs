// Non-finite numbers and out-of-range Dates never cross the language boundary (issue 9, item 5).
// Arguments cross as JSON, where NaN and ±Infinity become null and the core would read an absent
// member (a default): a limit of 0, one slot, no deadline, a zero delta. The wrapper's one
// serializer refuses them with an ArgumentError naming the path; on every backend.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { backends } from './support.mjs';

const T0 = 1_700_000_000_000;
let apis;
before(async () => { apis = await backends(); });

/** Asserts `fn` throws the invalid-argument error for `path`, with the path first in the message. */
function refused(api, fn, path, what = /expected a finite number/) {
  let error;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  assert.ok(error instanceof api.ArgumentError, `${path}: expected an ArgumentError, got ${error}`);
  assert.equal(error.code, 'PROTOCOL_VIOLATION');
  assert.equal(error.reason, 'invalid-argument');
  assert.equal(error.argument, path);
  assert.ok(error.message.startsWith(`${path}: `), error.message);
  assert.match(error.message, what);
}

const INVALID_DATE = /expected a valid Date/;

for (const name of ['napi (ESM)', 'wasm (ESM)', 'wasm (CommonJS)']) {
  describe(name, () => {
    test('BudgetLedger: an infinite limit or a NaN delta is refused, nothing is recorded', () => {
      const api = apis[name];
      const ledger = new api.BudgetLedger();
      refused(api, () => ledger.registerMission('m', { toolCalls: Infinity }), 'limit.toolCalls');
      refused(api, () => ledger.registerMission('m', { toolCalls: 5, modelTokens: -Infinity }), 'limit.modelTokens');
      assert.equal(ledger.size, 0);
      ledger.registerMission('m', { toolCalls: 5 });
      assert.equal(ledger.limit(['mission', 'm']).toolCalls, 5);
      refused(api, () => ledger.registerWorkItem('w', 'm', { toolCalls: NaN }), 'limit.toolCalls');
      ledger.registerWorkItem('w', 'm', { toolCalls: 3 });
      refused(api, () => ledger.consume('w', { toolCalls: NaN }), 'delta.toolCalls');
      refused(api, () => ledger.consume('w', { toolCalls: 1, modelTokens: Infinity }), 'delta.modelTokens');
      assert.equal(ledger.usage(['work_item', 'w']).toolCalls, 0);
      assert.equal(ledger.consume('w', { toolCalls: 2 }).toolCalls, 2);
    });

    test('Scheduler: infinite capacity, NaN priority, estimate, weight and deadline are refused', () => {
      const api = apis[name];
      refused(api, () => new api.Scheduler({ capacitySlots: Infinity }), 'policy.capacitySlots');
      assert.equal(new api.Scheduler({ capacitySlots: 3 }).capacitySlots, 3);
      refused(api, () => new api.Scheduler({ groups: { g: { weight: NaN } } }), 'policy.groups.g.weight');
      refused(api, () => new api.Scheduler({ groups: { 'my group': { weight: Infinity } } }), 'policy.groups["my group"].weight');
      refused(api, () => new api.Scheduler({ groups: new Map([['g', { slotQuota: -Infinity }]]) }), 'policy.groups.g.slotQuota');
      const s = new api.Scheduler({ capacitySlots: 2 });
      refused(api, () => s.setCapacity(Infinity), 'capacitySlots');
      assert.equal(s.capacitySlots, 2);
      refused(api, () => s.setGroupPolicy('g', { weight: NaN }), 'policy.weight');
      refused(api, () => s.admit({ workId: 'a', groupId: 'g', deadline: NaN }, T0), 'offer.deadline');
      refused(api, () => s.admit({ workId: 'a', groupId: 'g', deadline: new Date(NaN) }, T0), 'offer.deadline', INVALID_DATE);
      refused(api, () => s.admit({ workId: 'a', groupId: 'g', deadline: new Date(8.64e15) }, T0), 'offer.deadline', INVALID_DATE);
      refused(api, () => s.admit({ workId: 'a', groupId: 'g', priority: NaN }, T0), 'offer.priority');
      refused(api, () => s.admit({ workId: 'a', groupId: 'g', estimatedDurationMs: NaN }, T0), 'offer.estimatedDurationMs');
      refused(api, () => s.admit({ workId: 'a', groupId: 'g' }, NaN), 'now');
      refused(api, () => s.admit({ workId: 'a', groupId: 'g' }, new Date(NaN)), 'now', INVALID_DATE);
      // Nested: the index of the offer in the batch, and nothing of the batch is admitted.
      refused(api, () => s.admitMany([{ workId: 'a', groupId: 'g' }, { workId: 'b', groupId: 'g', priority: -Infinity }], T0), 'offers[1].priority');
      refused(api, () => s.admitMany([{ workId: 'a', groupId: 'g', eligibility: { x: [1, { y: NaN }] } }], T0), 'offers[0].eligibility.x[1].y');
      assert.equal(s.size, 0);
      assert.equal(s.state('a'), null);
      refused(api, () => s.schedule(Infinity), 'now');
      // The finite forms are accepted, with a Date deadline kept exactly.
      const deadline = new Date(T0 + 60_000);
      assert.equal(s.admit({ workId: 'a', groupId: 'g', priority: 10, estimatedDurationMs: 500, deadline }, T0).accepted, true);
      assert.equal(s.schedule(T0).length, 1);
      refused(api, () => s.reprioritize('a', NaN), 'priority');
      refused(api, () => s.apply('a', { kind: 'blocked', generation: 1, reason: 'r', retryAt: new Date(NaN) }, T0), 'transition.retryAt', INVALID_DATE);
      refused(api, () => s.apply('a', { kind: 'blocked', generation: 1, reason: 'r', retryAt: Infinity }, T0), 'transition.retryAt');
      refused(api, () => s.apply('a', { kind: 'completed', generation: 1 }, NaN), 'now');
      assert.equal(s.state('a'), 'running');
    });

    test('leases, retries and functions refuse non-finite numbers and out-of-range Dates', () => {
      const api = apis[name];
      const fields = {
        leaseId: 'lease-1', missionId: 'm', groupId: 'g', holderAgentId: 'urn:missionweaveprotocol:agent:a', sessionEpoch: 1,
        workItemId: 'w', ownershipEpoch: 1, issuedAt: T0, startsAt: T0, expiresAt: T0 + 60_000,
      };
      refused(api, () => new api.ExecutionLease({ ...fields, sessionEpoch: NaN }), 'fields.sessionEpoch');
      refused(api, () => new api.ExecutionLease({ ...fields, expiresAt: new Date(NaN) }), 'fields.expiresAt', INVALID_DATE);
      refused(api, () => new api.ExecutionLease({ ...fields, issuedAt: new Date(-8.64e15) }), 'fields.issuedAt', INVALID_DATE);
      refused(api, () => api.ExecutionLease.fromJSON({ leaseId: 'x', sessionEpoch: Infinity }), 'document.sessionEpoch');
      refused(api, () => api.idempotencyKey('m', 'w', NaN, 'op'), 'ownershipEpoch');
      refused(api, () => api.derivedAttemptKey('sha256:00', Infinity), 'attempt');
      refused(api, () => api.Scheduler.restore({ version: 1, items: [{ priority: NaN }] }), 'snapshot.items[0].priority');
      refused(api, () => api.BudgetLedger.rebuild({ accounts: { m: { limit: { toolCalls: -Infinity } } } }), 'snapshot.accounts.m.limit.toolCalls');
      // The limits of the valid range are accepted as Dates (0001-01-01 and 9999-12-31 UTC).
      assert.deepEqual(new api.Scheduler().schedule(new Date('0001-01-01T00:00:00.000Z')), []);
      assert.deepEqual(new api.Scheduler().schedule(new Date('9999-12-31T23:59:59.999Z')), []);
      refused(api, () => new api.Scheduler().schedule(new Date('0000-12-31T23:59:59.999Z')), 'now', INVALID_DATE);
      refused(api, () => new api.Scheduler().schedule(new Date('+010000-01-01T00:00:00.000Z')), 'now', INVALID_DATE);
    });

    test('JSON cannot carry: cycles and BigInts stay argument errors', () => {
      const api = apis[name];
      const cyclic = { workId: 'a', groupId: 'g' };
      cyclic.self = cyclic;
      const s = new api.Scheduler();
      assert.throws(() => s.admit(cyclic, T0), (e) => e instanceof api.ArgumentError && e.reason === 'invalid-argument');
      assert.throws(() => s.admit({ workId: 'a', groupId: 'g', priority: 1n }, T0), (e) => e instanceof api.ArgumentError);
      assert.throws(() => new api.Scheduler({ capacitySlots: new Number(NaN) }), (e) => e instanceof api.ArgumentError && e.argument === 'policy.capacitySlots');
    });
  });
}
