// Issue 9, items 7 and 11 on every backend: cyclic snapshot objects, detached buffers and
// Proxies posing as a Uint8Array are ArgumentErrors (PROTOCOL_VIOLATION, invalid-argument), never
// a TypeError or an INTERNAL_ERROR; tampered Scheduler snapshots are refused with a SnapshotError
// naming the path; an offer with an empty ID is an argument error, not an identifier collision.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { backends } from './support.mjs';

const T0 = 1_700_000_000_000;
let apis;
before(async () => {
  apis = await backends();
});

function caught(fn) {
  try {
    fn();
  } catch (error) {
    return error;
  }
  assert.fail('expected an error');
}

function argumentError(api, fn, argument) {
  const e = caught(fn);
  assert.ok(e instanceof api.ArgumentError, `${e?.name}: ${e?.message}`);
  assert.equal(e.code, 'PROTOCOL_VIOLATION');
  assert.equal(e.reason, 'invalid-argument');
  if (argument !== undefined) assert.equal(e.fields.argument, argument);
  return e;
}

function cyclic() {
  const o = { version: 1 };
  o.self = o;
  return o;
}

function detachedBuffer(bytes) {
  const buffer = new Uint8Array(bytes).buffer;
  structuredClone(buffer, { transfer: [buffer] });
  return buffer;
}

function runningSnapshot(api) {
  const s = new api.Scheduler({ capacitySlots: 1 });
  assert.ok(s.admit({ workId: 'a', groupId: 'g' }, T0).accepted);
  assert.ok(s.admit({ workId: 'b', groupId: 'g' }, T0).accepted);
  s.schedule(T0);
  const snap = JSON.parse(JSON.stringify(s.snapshot()));
  assert.equal(snap.records.filter((r) => r.state === 'running').length, 1);
  return snap;
}

function refused(api, snap, capacitySlots = 1) {
  const exact = caught(() => api.Scheduler.restore(snap, { capacitySlots }));
  const later = caught(() => api.Scheduler.rebuild(snap, { capacitySlots }, T0 + 1000));
  for (const e of [exact, later]) {
    assert.ok(e instanceof api.SnapshotError, `${e?.name}: ${e?.message}`);
    assert.equal(e.code, 'INTERNAL_ERROR');
    assert.equal(e.reason, 'corrupt_snapshot');
  }
  assert.equal(exact.fields.path, later.fields.path);
  return exact;
}

for (const name of ['napi (ESM)', 'wasm (ESM)', 'wasm (CommonJS)']) {
  describe(name, () => {
    test('cyclic snapshot objects are argument errors', () => {
      const api = apis[name];
      argumentError(api, () => api.Scheduler.restore(cyclic()), 'snapshot');
      // Scheduler.rebuild's first argument is `source` (a snapshot or offers), as in the reference.
      argumentError(api, () => api.Scheduler.rebuild(cyclic(), {}, T0), 'source');
      argumentError(api, () => api.BudgetLedger.rebuild(cyclic()), 'snapshot');
      argumentError(api, () => api.ExecutionLease.fromJSON(cyclic()), 'document');
      argumentError(api, () => api.BudgetLedger.rebuild({ n: 1n }), 'snapshot');
      argumentError(api, () => api.Scheduler.restore({ toJSON() { throw new RangeError('no'); } }), 'snapshot');
      // The plain forms still restore.
      const s = api.Scheduler.restore(new api.Scheduler().snapshot());
      assert.equal(s.usedSlots, 0);
    });

    test('detached buffers and Proxies around a Uint8Array are argument errors', () => {
      const api = apis[name];
      const text = new TextEncoder().encode('{"b":2,"a":1}');
      const expected = api.canonicalHash(text);
      assert.equal(api.canonicalHash(text.buffer), expected);
      assert.equal(api.canonicalHash(new DataView(text.buffer)), expected);
      argumentError(api, () => api.canonicalHash(detachedBuffer(text)), 'input');
      const view = new Uint8Array(text);
      structuredClone(view.buffer, { transfer: [view.buffer] });
      argumentError(api, () => api.canonicalHash(view), 'input');
      const dataView = new DataView(new Uint8Array(text).buffer);
      structuredClone(dataView.buffer, { transfer: [dataView.buffer] });
      argumentError(api, () => api.canonicalHash(dataView), 'input');
      const proxy = new Proxy(new Uint8Array(text), {});
      assert.ok(proxy instanceof Uint8Array);
      const e = argumentError(api, () => api.canonicalHash(proxy), 'input');
      assert.match(e.message, /Proxy/);
      // A Uint8Array subclass (Node's Buffer is one) is read exactly.
      class Bytes extends Uint8Array {}
      assert.equal(api.canonicalHash(Bytes.from(text)), expected);
    });

    test('more running slots than capacity are refused, naming the path', () => {
      const api = apis[name];
      const snap = runningSnapshot(api);
      assert.equal(api.Scheduler.restore(snap, { capacitySlots: 1 }).usedSlots, 1);
      const ready = snap.records.findIndex((r) => r.state === 'ready');
      snap.records[ready].state = 'running';
      assert.equal(refused(api, snap).fields.path, `/records/${ready}/offer/slots`);
      assert.equal(api.Scheduler.restore(snap, { capacitySlots: 2 }).usedSlots, 2);
    });

    test('a start time outside the timestamp range is refused', () => {
      const api = apis[name];
      const snap = runningSnapshot(api);
      const running = snap.records.findIndex((r) => r.state === 'running');
      // -2^62 ms is not a safe JSON integer: the snapshot reader refuses it as malformed (it
      // would not round-trip), naming the path.
      const text = JSON.stringify(snap).replace(`"since":${snap.records[running].since}`, '"since":-4611686018427387904');
      assert.notEqual(text, JSON.stringify(snap));
      const unsafe = caught(() => api.Scheduler.restore(text, { capacitySlots: 1 }));
      assert.ok(unsafe instanceof api.SnapshotError, `${unsafe?.name}: ${unsafe?.message}`);
      assert.deepEqual([unsafe.code, unsafe.reason], ['INTERNAL_ERROR', 'malformed_snapshot']);
      assert.match(unsafe.fields.path ?? unsafe.message, /records\/\d+\/since|since/);
      // -2^52 ms is a safe integer but before year 0001: an invariant of the restored state.
      snap.records[running].since = -4_503_599_627_370_496;
      assert.equal(refused(api, snap).fields.path, `/records/${running}/since`);
      snap.records[running].since = 253_402_300_800_000; // 10000-01-01
      assert.equal(refused(api, snap).fields.path, `/records/${running}/since`);
      snap.records[running].since = -62_135_596_800_000; // 0001-01-01, the first valid instant
      const s = api.Scheduler.restore(snap, { capacitySlots: 1 });
      assert.equal(s.state('a'), 'running');
      assert.notEqual(s.disclose('a', T0), null);
    });

    test('an offer with an empty ID is an argument error, not a collision', () => {
      const api = apis[name];
      const s = new api.Scheduler();
      argumentError(api, () => s.admit({ workId: '', groupId: '' }, T0), 'work_id');
      argumentError(api, () => s.admit({ workId: 'w', groupId: '' }, T0), 'group_id');
      argumentError(api, () => s.admitMany([{ workId: 'w', groupId: 'g' }, { workId: '', groupId: 'g' }], T0), 'work_id');
      assert.equal(s.admit({ workId: 'w', groupId: 'g' }, T0).accepted, true);
    });
  });
}
