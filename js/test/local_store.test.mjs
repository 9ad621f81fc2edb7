// The Agent-local SQLite store through the napi addon (reference `SQLiteAgentStore`, camelCase):
// cursor, inbox positions, outbox, Group context, checkpoints and the Scheduler snapshot, each
// rule with its refusal (LocalStoreError with the core's §19 code and reason); a reopened file
// keeps everything; the WebAssembly build refuses the store with an ArgumentError.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { DIST } from './support.mjs';

const api = await import(join(DIST, 'node.mjs'));
const A = 'urn:agent:worker-1';

function scratch(t) {
  const dir = mkdtempSync(join(tmpdir(), 'mwp-agent-store-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'agent.sqlite');
}

const refused = (reason, code) => (e) => e instanceof api.LocalStoreError && e.reason === reason && e.code === code;

test('cursor: monotonic acknowledge, 0 before any Event; a bad sequence is refused', () => {
  const store = new api.SqliteAgentStore(':memory:');
  assert.equal(store.cursor(A, 'g'), 0);
  store.acknowledge(A, 'g', 5);
  store.acknowledge(A, 'g', 3);
  assert.equal(store.cursor(A, 'g'), 5);
  assert.equal(store.cursor(A, 'other'), 0);
  assert.throws(() => store.acknowledge(A, 'g', -1), refused('invalid_argument', 'INVALID_COMMAND'));
  assert.throws(() => store.acknowledge(A, 'g', 1.5), refused('invalid_argument', 'INVALID_COMMAND'));
  assert.throws(() => store.acknowledge(A, 'g', '7'), api.ArgumentError);
  assert.throws(() => store.cursor(A, 42), api.ArgumentError);
});

test('inbox: an Event keeps its position; another position is event_position_collision', () => {
  const store = new api.SqliteAgentStore(':memory:');
  assert.equal(store.hasEvent(A, 'e1'), false);
  assert.equal(store.eventPosition(A, 'e1'), null);
  assert.equal(store.rememberEvent(A, 'e1', 'g', 1), true);
  assert.equal(store.rememberEvent(A, 'e1', 'g', 1), false);
  assert.equal(store.hasEvent(A, 'e1'), true);
  assert.deepEqual({ ...store.eventPosition(A, 'e1') }, { groupId: 'g', sequence: 1 });
  assert.throws(() => store.rememberEvent(A, 'e1', 'g', 2), refused('event_position_collision', 'PROTOCOL_VIOLATION'));
  assert.throws(() => store.rememberEvent(A, 'e2', 'g', 1), refused('event_position_collision', 'PROTOCOL_VIOLATION'));
  assert.throws(() => store.rememberEvent(A, 'e3', 'g'), refused('invalid_argument', 'INVALID_COMMAND'));
  assert.equal(store.rememberEvent(A, 'loose'), true);
  assert.equal(store.eventPosition(A, 'loose'), null);
});

test('outbox: pending in enqueue order until sent; a reused Action ID with other content is refused', () => {
  const store = new api.SqliteAgentStore(':memory:');
  assert.equal(store.enqueueAction(A, 'act-1', { kind: 'report', n: 1 }), true);
  assert.equal(store.enqueueAction(A, 'act-2', { kind: 'report', n: 2 }), true);
  assert.equal(store.enqueueAction(A, 'act-1', { kind: 'report', n: 1 }), false);
  assert.throws(() => store.enqueueAction(A, 'act-1', { kind: 'report', n: 9 }), refused('action_collision', 'ACTION_ID_COLLISION'));
  assert.deepEqual(store.pendingActions(A), [{ kind: 'report', n: 1 }, { kind: 'report', n: 2 }]);
  assert.equal(store.markActionSent(A, 'act-1'), true);
  assert.equal(store.markActionSent(A, 'act-1'), false);
  assert.deepEqual(store.pendingActions(A), [{ kind: 'report', n: 2 }]);
  const cyclic = {};
  cyclic.self = cyclic;
  assert.throws(() => store.enqueueAction(A, 'act-3', cyclic), api.ArgumentError);
});

test('Group context: newer revisions replace, an older one is stale_revision', () => {
  const store = new api.SqliteAgentStore(':memory:');
  assert.equal(store.groupContext(A, 'g'), null);
  store.saveGroupContext(A, 'g', 2, { budget: 10 });
  assert.deepEqual(store.groupContext(A, 'g'), { revision: 2, values: { budget: 10 } });
  assert.throws(() => store.saveGroupContext(A, 'g', 1, { budget: 1 }), refused('stale_revision', 'REVISION_CONFLICT'));
  store.saveGroupContext(A, 'g', 3, { budget: 7 });
  assert.deepEqual(store.groupContext(A, 'g'), { revision: 3, values: { budget: 7 } });
});

test('checkpoints are immutable: same content is fine, other content is checkpoint_collision', () => {
  const store = new api.SqliteAgentStore(':memory:');
  store.saveCheckpoint(A, 'g', 'w1', 'c1', { step: 1 });
  store.saveCheckpoint(A, 'g', 'w1', 'c1', { step: 1 });
  assert.throws(() => store.saveCheckpoint(A, 'g', 'w1', 'c1', { step: 2 }), refused('checkpoint_collision', 'ACTION_ID_COLLISION'));
  assert.deepEqual(store.loadCheckpoint(A, 'g', 'w1', 'c1'), { step: 1 });
  assert.equal(store.deleteCheckpoint(A, 'g', 'w1', 'c1'), true);
  assert.equal(store.deleteCheckpoint(A, 'g', 'w1', 'c1'), false);
  assert.equal(store.loadCheckpoint(A, 'g', 'w1', 'c1'), null);
});

test('Scheduler snapshot round trip; a malformed snapshot is refused', () => {
  const store = new api.SqliteAgentStore(':memory:');
  assert.equal(store.loadScheduler(A), null);
  const scheduler = new api.Scheduler();
  scheduler.admit({ workId: 'w1', groupId: 'g' }, 1_000);
  store.saveScheduler(A, scheduler.snapshot());
  const loaded = store.loadScheduler(A);
  assert.ok(loaded instanceof api.SchedulerSnapshot);
  assert.deepEqual(JSON.parse(JSON.stringify(loaded)), JSON.parse(JSON.stringify(scheduler.snapshot())));
  assert.equal(api.Scheduler.restore(loaded).state('w1'), scheduler.state('w1'));
  assert.throws(() => store.saveScheduler(A, { not: 'a snapshot' }), api.MwpError);
  assert.deepEqual(JSON.parse(JSON.stringify(store.loadScheduler(A))), JSON.parse(JSON.stringify(loaded)));
});

test('a reopened file keeps every table; a closed store refuses calls', (t) => {
  const path = scratch(t);
  const first = new api.SqliteAgentStore(path);
  first.acknowledge(A, 'g', 4);
  first.rememberEvent(A, 'e4', 'g', 4);
  first.enqueueAction(A, 'act-1', { n: 1 });
  first.saveGroupContext(A, 'g', 1, { k: 'v' });
  first.close();
  first.close();
  assert.throws(() => first.cursor(A, 'g'), api.MwpError);
  const second = new api.SqliteAgentStore(path);
  assert.equal(second.cursor(A, 'g'), 4);
  assert.deepEqual({ ...second.eventPosition(A, 'e4') }, { groupId: 'g', sequence: 4 });
  assert.deepEqual(second.pendingActions(A), [{ n: 1 }]);
  assert.deepEqual(second.groupContext(A, 'g'), { revision: 1, values: { k: 'v' } });
  second.close();
});

test('an unopenable path is a LocalStoreError; the WebAssembly build refuses the store', async () => {
  assert.throws(() => new api.SqliteAgentStore('/nonexistent-dir/x/agent.sqlite'), refused('backend', 'INTERNAL_ERROR'));
  assert.throws(() => new api.SqliteAgentStore(7), api.ArgumentError);
  const wasm = await import(join(DIST, 'node-wasm.mjs'));
  assert.throws(() => new wasm.SqliteAgentStore(':memory:'), wasm.ArgumentError);
});
