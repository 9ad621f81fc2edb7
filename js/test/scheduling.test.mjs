// The Scheduler on every backend: admission reasons, weighted fairness, quotas, reservations and
// cooperative preemption, blocking and retries, snapshot round trips, rebuild after a restart,
// typed errors, and agreement with the Rust core through the golden vectors
// (tests/vectors/scheduling.jsonl): the mixed scenario's full trace and final snapshot, and the
// 10,000-item benchmark's dispatch order.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { before, describe, test } from 'node:test';

import { backends, schedulingVectors } from './support.mjs';
import { benchOrder, mixedScenario } from './vectors-check.mjs';

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

/** Runs one slot to completion repeatedly from `now`; returns the dispatch order. */
function drain(api, s, now) {
  const order = [];
  for (;;) {
    const actions = s.schedule(now);
    const dispatched = actions.filter((a) => a instanceof api.Dispatch);
    if (dispatched.length === 0) return order;
    for (const d of dispatched) {
      s.apply(d.workId, { kind: 'completed', generation: d.generation }, now);
      order.push(d.workId);
    }
    now += 1;
  }
}

for (const name of ['napi (ESM)', 'wasm (ESM)', 'wasm (CommonJS)']) {
  describe(`${name}: Scheduler`, () => {
    test('mixed scenario: trace and final snapshot equal the Rust core (vectors)', () => {
      const native = reference.get('mixed');
      const { trace, snapshot } = mixedScenario(apis[name]);
      assert.deepEqual(trace, native.trace);
      assert.equal(snapshot, native.snapshot);
      // The scenario really exercises what it claims.
      for (const needle of [' preempt ', 'checkpoint_saved true', 'resume=ck-h2-1', 'resume=ck-blk0-1', 'late deadline_expired',
        'h0 already_terminal', 'released true', 'failed true', 'rebuilt l0 blocked', 'unblock l0 true']) {
        assert.ok(trace.some((line) => line.includes(needle)), needle);
      }
    });

    test('benchmark workload: 10,000 dispatches in the Rust core\'s order (digest)', () => {
      const order = benchOrder(apis[name], 10_000);
      const native = reference.get('bench');
      assert.equal(order.length, native.count);
      assert.deepEqual(order.slice(0, 8), native.first);
      assert.equal(`sha256:${createHash('sha256').update(order.join('\n')).digest('hex')}`, native.digest);
    });

    test('admission reasons, decline categories and idempotent re-offers', () => {
      const api = apis[name];
      const s = new api.Scheduler({
        capacitySlots: 2, maxWorkItems: 4, maxWorkItemsPerGroup: 2, allowedGroups: ['g', 'h', 'z'],
        groups: { z: { slotQuota: 0 } }, supportedCapabilities: [{ id: 'tool.search', version: '2.1.0' }],
      });
      const cases = [
        [{ workId: 'a', groupId: 'g' }, 'accepted', null],
        [{ workId: 'a', groupId: 'g' }, 'duplicate', null],
        [{ workId: 'a', groupId: 'g', priority: 5 }, 'identifier_collision', 'other'],
        [{ workId: 'b', groupId: 'nope' }, 'group_not_allowed', 'authorization'],
        [{ workId: 'c', groupId: 'z' }, 'group_quota_disabled', 'capacity'],
        [{ workId: 'd', groupId: 'g', slots: 3 }, 'exceeds_capacity', 'capacity'],
        [{ workId: 'e', groupId: 'g', requiredCapabilities: [{ id: 'tool.search', version: '2.2.0' }] }, 'unsupported_capability', 'capability'],
        [{ workId: 'e2', groupId: 'g', requiredCapabilities: [{ id: 'tool.search', version: '2.0.0' }] }, 'accepted', null],
        [{ workId: 'f', groupId: 'g', deadline: T0 }, 'deadline_expired', 'deadline'],
        [{ workId: 'g1', groupId: 'h', eligibility: { authorized: false } }, 'not_authorized', 'authorization'],
        [{ workId: 'g2', groupId: 'h', eligibility: { dependenciesReady: false } }, 'dependency_unsatisfied', 'dependency'],
        [{ workId: 'g3', groupId: 'h', eligibility: { budgetAvailable: false } }, 'budget_unavailable', 'budget'],
        [{ workId: 'g4', groupId: 'g' }, 'group_full', 'capacity'],
        [{ workId: 'h1', groupId: 'h' }, 'accepted', null],
        [{ workId: 'h2', groupId: 'h' }, 'accepted', null],
        [{ workId: 'h3', groupId: 'h' }, 'worker_full', 'capacity'],
      ];
      for (const [offer, reason, category] of cases) {
        const d = s.admit(offer, T0);
        assert.ok(d instanceof api.AdmissionDecision);
        assert.equal(d.reason, reason, offer.workId);
        assert.equal(d.accepted, reason === 'accepted' || reason === 'duplicate', offer.workId);
        assert.equal(d.declineReason, category, offer.workId);
        assert.equal(d.workId, offer.workId);
      }
      assert.equal(s.size, 4);
      // admitMany gives the same decisions in order, in one crossing.
      const t = new api.Scheduler({ capacitySlots: 1 });
      assert.deepEqual(t.admitMany([{ workId: 'x', groupId: 'g' }, { workId: 'x', groupId: 'g' }, { workId: 'y', groupId: 'g', slots: 2 }], T0)
        .map((d) => d.reason), ['accepted', 'duplicate', 'exceeds_capacity']);
      // Out-of-range input is refused before anything is admitted, by the core's own rule.
      const outOfRange = caught(() => t.admitMany([{ workId: 'z', groupId: 'g', priority: 101 }], T0));
      assert.ok(outOfRange instanceof api.SchedulerError && outOfRange.reason === 'invalid_argument', String(outOfRange));
      assert.equal(t.state('z'), null);
    });

    test('weighted fair share across Groups, priority within a Group', () => {
      const api = apis[name];
      const s = new api.Scheduler({ capacitySlots: 1, fairnessLagSlots: 0, groups: { heavy: { weight: 3 } } });
      s.admitMany(Array.from({ length: 40 }, (_, i) => [{ workId: `h${i}`, groupId: 'heavy' }, { workId: `l${i}`, groupId: 'light' }]).flat(), T0);
      const order = drain(api, s, T0 + 1);
      assert.equal(order.slice(0, 40).filter((id) => id.startsWith('h')).length, 30);
      const p = new api.Scheduler();
      for (const [id, priority] of [['low', -50], ['mid', 0], ['high', 80]]) p.admit({ workId: id, groupId: 'g', priority }, T0);
      p.reprioritize('low', 100);
      assert.deepEqual(drain(api, p, T0 + 1), ['low', 'high', 'mid']);
    });

    test('aging: nothing ready more than H later overtakes an old item', () => {
      const api = apis[name];
      const s = new api.Scheduler();
      const H = s.horizonMs;
      assert.equal(H, 600_000);
      s.admit({ workId: 'blocker', groupId: 'g' }, T0);
      assert.deepEqual(s.schedule(T0).map((a) => a.workId), ['blocker']);
      s.admit({ workId: 'old-low', groupId: 'g', priority: -100 }, T0 + 1);
      for (const [i, t] of [[0, 10], [1, H / 2], [2, H + 2], [3, H + 100]]) {
        s.admit({ workId: `hot${i}`, groupId: 'g', priority: 100 }, T0 + t);
      }
      s.apply('blocker', { kind: 'completed', generation: 1 }, T0 + H + 200);
      assert.deepEqual(drain(api, s, T0 + H + 200), ['hot0', 'hot1', 'old-low', 'hot2', 'hot3']);
    });

    test('blocking with a retry time, unblock, cancel, disclosure', () => {
      const api = apis[name];
      const s = new api.Scheduler({ capacitySlots: 1, defaultEstimateMs: 1000 });
      s.admitMany([{ workId: 'a', groupId: 'g' }, { workId: 'b', groupId: 'g' }, { workId: 'c', groupId: 'g' }], T0);
      const [d] = s.schedule(T0);
      assert.equal(d.workId, 'a');
      assert.equal(s.usedSlots, 1);
      const disclosure = s.disclose('b', T0);
      assert.ok(disclosure instanceof api.ScheduleDisclosure);
      assert.equal(disclosure.state, 'ready');
      assert.equal(disclosure.capacityStatus, 'saturated');
      assert.equal(disclosure.calculatedAt, T0);
      assert.ok(disclosure.latestStart >= disclosure.earliestStart);
      assert.equal(s.disclose('a', T0).confidence, 'high');
      assert.equal(s.disclose('nope', T0), null);
      s.apply('a', { kind: 'blocked', generation: 1, checkpoint: { checkpointId: 'k1' }, retryAt: new Date(T0 + 500), reason: 'needs input' }, T0 + 10);
      assert.equal(s.state('a'), 'blocked');
      assert.equal(s.usedSlots, 0);
      assert.deepEqual(s.schedule(T0 + 10).map((x) => x.workId), ['b']);
      s.apply('b', { kind: 'completed', generation: 1 }, T0 + 600);
      // The retry time passed: 'a' is ready again (ready at T0+500, before 'c' re-ordering by age).
      const resumed = s.schedule(T0 + 600);
      assert.equal(resumed.length, 1);
      assert.equal(resumed[0].workId, 'c');
      s.cancel('a');
      assert.equal(s.state('a'), null);
      assert.equal(s.isTerminal('a'), true);
      assert.equal(s.forget('a'), true);
      assert.equal(s.isTerminal('a'), false);
      // Unblock: an item blocked without a retry time waits for it.
      s.apply('c', { kind: 'blocked', generation: 1, checkpoint: { checkpointId: 'k2' }, reason: 'approval' }, T0 + 700);
      assert.deepEqual(s.schedule(T0 + 800), []);
      assert.equal(s.disclose('c', T0 + 800).earliestStart, null);
      s.unblock('c', T0 + 900);
      const [again] = s.schedule(T0 + 900);
      assert.deepEqual({ ...again.resumeFrom }, { checkpointId: 'k2', durable: true, safe: true });
      assert.equal(again.generation, 2);
    });

    test('typed errors: stale runs, wrong states, unsafe checkpoints, bad input', () => {
      const api = apis[name];
      const s = new api.Scheduler({ capacitySlots: 1 });
      s.admit({ workId: 'a', groupId: 'g' }, T0);
      s.admit({ workId: 'b', groupId: 'g' }, T0);
      s.schedule(T0);
      let e = caught(() => s.apply('a', { kind: 'completed', generation: 9 }, T0));
      assert.ok(e instanceof api.SchedulerStateError && e instanceof api.MwpError);
      assert.equal(e.code, 'WORK_LEASE_EXPIRED');
      assert.equal(e.reason, 'stale_run');
      assert.equal(e.currentGeneration, 1);
      assert.equal(e.reportedGeneration, 9);
      e = caught(() => s.apply('b', { kind: 'completed', generation: 0 }, T0));
      assert.equal(e.code, 'INVALID_STATE_TRANSITION');
      assert.equal(e.state, 'ready');
      e = caught(() => s.apply('a', { kind: 'preemption_declined', generation: 1 }, T0));
      assert.equal(e.code, 'INVALID_STATE_TRANSITION');
      e = caught(() => s.apply('a', { kind: 'checkpoint_saved', generation: 1, checkpoint: { checkpointId: 'x', durable: false } }, T0));
      assert.equal(e.reason, 'unsafe_checkpoint');
      assert.equal(e.code, 'INVALID_COMMAND');
      e = caught(() => s.unblock('a', T0));
      assert.equal(e.code, 'INVALID_STATE_TRANSITION');
      e = caught(() => s.cancel('zzz'));
      assert.equal(e.reason, 'unknown_work');
      assert.equal(e.workId, 'zzz');
      e = caught(() => new api.Scheduler({ groups: { g: { weight: 0 } } }));
      assert.ok(e instanceof api.ArgumentError || e instanceof api.SchedulerError);
      assert.equal(caught(() => new api.Scheduler({ capacitySlots: 0 })).code, 'INVALID_COMMAND');
      // Bad input never crashes the backend: typed ArgumentErrors naming the member.
      for (const [fn, pattern] of [
        [() => s.admit({ workId: 'z' }, T0), /groupId: required/],
        [() => s.admit({ workId: 'z', groupId: 'g', priority: 'high' }, T0), /priority/],
        [() => s.admit({ workId: 'z', groupId: 'g', slots: -1 }, T0), /slots/],
        [() => s.admit({ workId: 'z', groupId: 'g', colour: 'red' }, T0), /unknown member "colour"/],
        [() => s.admit({ workId: 'z', groupId: 'g', requiredCapabilities: [{ id: 'x', version: '1.0' }] }, T0), /semantic version/],
        [() => s.admit({ workId: 'z', groupId: 'g' }, 'yesterday'), /Date or integer milliseconds/],
        [() => s.admit({ workId: 'z', groupId: 'g' }, new Date(NaN)), /now/],
        [() => s.admit({ workId: 'z', groupId: 'g', deadline: 10n }, T0), /serialized/],
        [() => s.schedule(Number.MAX_SAFE_INTEGER + 2), /now/],
        [() => s.apply('a', { kind: 'exploded', generation: 1 }, T0), /transition.kind/],
        [() => s.apply(7, { kind: 'completed', generation: 1 }, T0), /workId/],
        [() => s.admitMany('nope', T0), /offers must be an array/],
        [() => s.admitMany([{ workId: 'ok', groupId: 'g' }, { groupId: 'g' }], T0), /offers\[1\]\.workId/],
        [() => new api.Scheduler({ capacitySlotz: 1 }), /unknown member "capacitySlotz"/],
      ]) {
        const error = caught(fn);
        assert.ok(error instanceof api.ArgumentError, `${pattern}: ${error}`);
        assert.equal(error.code, 'PROTOCOL_VIOLATION');
        assert.match(error.message, pattern);
      }
      // A malformed batch admitted nothing.
      assert.equal(s.state('ok'), null);
    });

    test('snapshot round trips: exact restore decides identically; malformed snapshots are SnapshotErrors', () => {
      const api = apis[name];
      const policy = { capacitySlots: 2, groups: { a: { weight: 2 } } };
      const s = new api.Scheduler(policy);
      s.admitMany(Array.from({ length: 30 }, (_, i) => ({ workId: `w${i}`, groupId: ['a', 'b', 'c'][i % 3], priority: (i * 17) % 50 - 25 })), T0);
      const started = s.schedule(T0 + 1);
      assert.equal(started.length, 2);
      const snap = s.snapshot();
      assert.ok(snap instanceof api.SchedulerSnapshot);
      assert.ok(Object.isFrozen(snap.records));
      const copy = api.Scheduler.restore(JSON.stringify(snap), policy);
      assert.equal(api.canonicalize(JSON.stringify(copy.snapshot())), api.canonicalize(JSON.stringify(snap)));
      const copy2 = api.Scheduler.restore(new api.SchedulerSnapshot(JSON.stringify(snap)), policy);
      const run = (sched) => {
        const out = [];
        for (const a of started) sched.apply(a.workId, { kind: 'completed', generation: a.generation }, T0 + 2);
        for (let t = 2; t < 40; t += 1) {
          for (const a of sched.schedule(T0 + t)) {
            sched.apply(a.workId, { kind: 'completed', generation: a.generation }, T0 + t);
            out.push(a.workId);
          }
        }
        return out;
      };
      const fromObject = run(api.Scheduler.restore(snap, policy));
      assert.equal(fromObject.length, 28);
      assert.deepEqual(run(copy), fromObject);
      assert.deepEqual(run(copy2), fromObject);
      assert.deepEqual(run(s), fromObject);
      // Malformed documents: SnapshotError (INTERNAL_ERROR) with a JSON Pointer path.
      const doc = JSON.parse(JSON.stringify(snap));
      doc.records[0].ticket = -1;
      let e = caught(() => api.Scheduler.restore(doc, policy));
      assert.ok(e instanceof api.SnapshotError);
      assert.equal(e.code, 'INTERNAL_ERROR');
      assert.equal(e.path, '/records/0/ticket');
      const dup = JSON.parse(JSON.stringify(snap));
      dup.records.push(dup.records[0]);
      e = caught(() => api.Scheduler.restore(dup, policy));
      assert.ok(e instanceof api.SnapshotError);
      assert.equal(e.reason, 'corrupt_snapshot');
      assert.ok(caught(() => api.Scheduler.restore('{"version":1', policy)) instanceof api.ParseError);
      assert.ok(caught(() => api.Scheduler.restore(42, policy)) instanceof api.ArgumentError);
    });

    test('rebuild from offers admits them; rebuild after restart resumes or blocks running work', () => {
      const api = apis[name];
      const s = api.Scheduler.rebuild([{ workId: 'a', groupId: 'g' }, { workId: 'b', groupId: 'g' }], { capacitySlots: 2 }, T0);
      assert.equal(s.size, 2);
      s.schedule(T0);
      s.apply('a', { kind: 'checkpoint_saved', generation: 1, checkpoint: { checkpointId: 'ka' } }, T0 + 1);
      const r = api.Scheduler.rebuild(s.snapshot(), { capacitySlots: 2 }, T0 + 5);
      assert.equal(r.state('a'), 'ready');
      assert.equal(r.state('b'), 'blocked');
      assert.equal(r.usedSlots, 0);
      const [d] = r.schedule(T0 + 5);
      assert.equal(d.resumeFrom.checkpointId, 'ka');
    });

    test('rebuild refuses what is neither a snapshot nor offers: null, a number, no offers', () => {
      // Issue 22, item 8: `rebuild([])` gave an empty Scheduler; each is API misuse, refused by
      // the core (`Scheduler::from_offers`, the conversion) with the typed argument error.
      const api = apis[name];
      for (const source of [null, undefined, 5, true, []]) {
        const e = caught(() => api.Scheduler.rebuild(source, {}, T0));
        assert.ok(e instanceof api.ArgumentError, `${JSON.stringify(source)}: ${e}`);
        assert.equal(e.code, 'PROTOCOL_VIOLATION');
        assert.equal(e.reason, 'invalid-argument');
        assert.equal(e.argument, 'source', `${JSON.stringify(source)}: ${e.message}`);
      }
      // One offer is a rebuild (the boundary of the empty one); a declined one refuses it.
      assert.equal(api.Scheduler.rebuild([{ workId: 'a', groupId: 'g' }], {}, T0).size, 1);
      const declined = caught(() => api.Scheduler.rebuild([{ workId: 'a', groupId: 'g' }, { workId: 'a', groupId: 'h' }], {}, T0));
      assert.ok(declined instanceof api.SchedulerError && declined.reason === 'offer_declined', String(declined));
    });
  });
}
