// Durable Agent-side replay through the napi addon (§16, reference `AgentReplay`): the JavaScript
// driver awaits the source and the projector, the core checks and commits. Events in order are
// projected and admitted; duplicates are skipped; a gap, a missing sequence or an Event ID at a
// new position is a ReplaySequenceError, another Group's Event a ReplayGroupError, a colliding
// offer a ReplayProjectionError — each with the core's §19 code — and the Events before the
// failure stay committed with their cursor, inbox rows and Scheduler snapshot together; a
// reopened store continues from its cursor.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { DIST } from './support.mjs';

const api = await import(join(DIST, 'node.mjs'));
const A = 'urn:agent:worker-1';
const NOW = 1_700_000_000_000;
const clock = () => NOW;

const event = (groupId, sequence, id = `${groupId}-e${sequence}`) => ({ eventId: id, groupId, sequence });
const events = (groupId, n) => Array.from({ length: n }, (_, i) => event(groupId, i + 1));

/** A source over `log` that honours `after`, `pageSize` Events per page, and records its calls. */
function source(log, pageSize = Infinity) {
  const calls = [];
  const fn = async (groupId, { after }) => {
    calls.push([groupId, after]);
    return (log[groupId] ?? []).filter((e) => e.sequence > after).slice(0, pageSize);
  };
  fn.calls = calls;
  return fn;
}

/** One offer per Event: WorkItem `w-<eventId>`. */
const projector = async (e) => ({ workOffers: [{ workId: `w-${e.eventId}`, groupId: e.groupId }] });

function scratch(t) {
  const dir = mkdtempSync(join(tmpdir(), 'mwp-replay-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'agent.sqlite');
}

const snapshotIds = (store) => {
  const restored = api.Scheduler.restore(store.loadScheduler(A));
  return (id) => restored.state(id);
};

test('Events in order are projected, admitted and committed with cursor, inbox and Scheduler snapshot', async () => {
  const store = new api.SqliteAgentStore(':memory:');
  const src = source({ g: events('g', 5) }, 2);
  const replay = new api.AgentReplay(A, store, src, projector, { clock });
  const results = await replay.reconcile(['g', 'g']);
  assert.deepEqual(Object.keys(results), ['g']);
  const r = results.g;
  assert.ok(r instanceof api.GroupReplayResult);
  assert.deepEqual([r.startCursor, r.endCursor, r.appliedEvents, r.duplicateEvents], [0, 5, 5, 0]);
  assert.deepEqual(r.admissions.map((d) => [d.workId, d.accepted]), events('g', 5).map((e) => [`w-${e.eventId}`, true]));
  assert.ok(r.admissions.every((d) => d instanceof api.AdmissionDecision));
  // Paged source: asked after each page that brought new Events, until an empty page.
  assert.deepEqual(src.calls, [['g', 0], ['g', 2], ['g', 4], ['g', 5]]);
  assert.equal(store.cursor(A, 'g'), 5);
  assert.deepEqual({ ...store.eventPosition(A, 'g-e3') }, { groupId: 'g', sequence: 3 });
  const state = snapshotIds(store);
  for (const e of events('g', 5)) assert.notEqual(state(`w-${e.eventId}`), null);
  assert.equal(replay.scheduler.size, 5);
});

test('duplicate Events are skipped: a source that ignores `after` projects nothing twice', async () => {
  const store = new api.SqliteAgentStore(':memory:');
  const log = { g: events('g', 3) };
  const seen = [];
  const counting = async (e) => { seen.push(e.eventId); return projector(e); };
  const everything = async (groupId) => log[groupId];
  const replay = new api.AgentReplay(A, store, everything, counting, { clock });
  await replay.reconcile('g');
  log.g = [...events('g', 4), event('g', 2)];
  const r = (await replay.reconcile('g')).g;
  assert.deepEqual([r.startCursor, r.endCursor, r.appliedEvents], [3, 4, 1]);
  assert.ok(r.duplicateEvents >= 4);
  assert.deepEqual(seen, ['g-e1', 'g-e2', 'g-e3', 'g-e4']);
  assert.deepEqual(r.admissions.map((d) => d.workId), ['w-g-e4']);
});

test('a gap is a ReplaySequenceError; the Events before it stay committed, Scheduler included', async () => {
  const store = new api.SqliteAgentStore(':memory:');
  const log = { g: [event('g', 1), event('g', 2), event('g', 4)] };
  const replay = new api.AgentReplay(A, store, source(log), projector, { clock });
  await assert.rejects(replay.reconcile('g'), (e) => e instanceof api.ReplaySequenceError && e instanceof api.ReplayError
    && e.reason === 'sequence_gap' && e.code === 'PROTOCOL_VIOLATION' && e.retryable === false
    // The core's structured fields, through the shared envelope.
    && e.fields.groupId === 'g' && e.fields.cursor === 2 && e.fields.sequence === 4
    && !(e instanceof api.ReplayGroupError));
  assert.equal(store.cursor(A, 'g'), 2);
  assert.equal(store.hasEvent(A, 'g-e2'), true);
  assert.equal(store.hasEvent(A, 'g-e4'), false);
  const state = snapshotIds(store);
  assert.notEqual(state('w-g-e2'), null);
  assert.equal(state('w-g-e4'), null);
  // Once the missing Event arrives, the replay continues from the cursor.
  log.g.splice(2, 0, event('g', 3));
  const r = (await replay.reconcile('g')).g;
  assert.deepEqual([r.startCursor, r.endCursor, r.appliedEvents], [2, 4, 2]);
});

test('an Event ID at a new position is refused (event_moved); a missing sequence too', async () => {
  const store = new api.SqliteAgentStore(':memory:');
  const log = { g: [event('g', 1, 'shared')], h: [event('h', 1, 'shared')], m: [{ eventId: 'm1', groupId: 'm', sequence: null }] };
  // The ID is checked when the batch commits, after projection: a projector without offers.
  const replay = new api.AgentReplay(A, store, source(log), async () => null, { clock });
  await replay.reconcile('g');
  await assert.rejects(replay.reconcile('h'), (e) => e instanceof api.ReplaySequenceError
    && e.reason === 'event_moved' && e.code === 'PROTOCOL_VIOLATION');
  assert.equal(store.cursor(A, 'h'), 0);
  assert.deepEqual({ ...store.eventPosition(A, 'shared') }, { groupId: 'g', sequence: 1 });
  const unordered = new api.AgentReplay(A, store, async () => log.m, projector, { clock });
  await assert.rejects(unordered.reconcile('m'), (e) => e instanceof api.ReplaySequenceError
    && e.reason === 'missing_sequence' && e.code === 'PROTOCOL_VIOLATION');
  assert.equal(store.cursor(A, 'm'), 0);
});

test('another Group\'s Event and an empty Group ID are ReplayGroupErrors', async () => {
  const store = new api.SqliteAgentStore(':memory:');
  const replay = new api.AgentReplay(A, store, source({ g: [event('other', 1)] }), projector, { clock });
  await assert.rejects(replay.reconcile('g'), (e) => e instanceof api.ReplayGroupError
    && e.reason === 'wrong_group' && e.code === 'PROTOCOL_VIOLATION');
  await assert.rejects(replay.reconcile(''), (e) => e instanceof api.ReplayGroupError && e.reason === 'invalid_argument');
  assert.throws(() => new api.AgentReplay('', store, source({}), projector), (e) => e instanceof api.ReplayGroupError);
  assert.equal(store.cursor(A, 'g'), 0);
});

test('a colliding offer is a ReplayProjectionError; cursor, inbox and snapshot keep exactly the prefix', async () => {
  const store = new api.SqliteAgentStore(':memory:');
  const colliding = async (e) => (e.sequence === 3
    ? { workOffers: [{ workId: 'w-g-e1', groupId: 'g', priority: 9 }] }
    : projector(e));
  const replay = new api.AgentReplay(A, store, source({ g: events('g', 4) }), colliding, { clock });
  await assert.rejects(replay.reconcile('g'), (e) => e instanceof api.ReplayProjectionError
    && e.reason === 'projection_collision' && e.code === 'INVALID_STATE_TRANSITION');
  assert.equal(store.cursor(A, 'g'), 2);
  assert.deepEqual([store.hasEvent(A, 'g-e2'), store.hasEvent(A, 'g-e3')], [true, false]);
  const restored = api.Scheduler.restore(store.loadScheduler(A));
  assert.equal(restored.size, 2);
  assert.equal(replay.scheduler.size, 2);
});

test('a projector or source that throws: its error is reported, the prefix is committed', async () => {
  const store = new api.SqliteAgentStore(':memory:');
  const boom = new Error('projector down');
  const failing = async (e) => { if (e.sequence === 2) throw boom; return projector(e); };
  const replay = new api.AgentReplay(A, store, source({ g: events('g', 3) }), failing, { clock });
  await assert.rejects(replay.reconcile('g'), (e) => e === boom);
  assert.equal(store.cursor(A, 'g'), 1);
  const badSource = new api.AgentReplay(A, store, async () => 42, projector, { clock });
  await assert.rejects(badSource.reconcile('g'), api.ArgumentError);
  assert.throws(() => new api.AgentReplay(A, {}, source({}), projector), api.ArgumentError);
  assert.throws(() => new api.AgentReplay(A, store, 'not a function', projector), api.ArgumentError);
});

test('a reopened store continues from its cursor with the Scheduler rebuilt from its snapshot', async (t) => {
  const path = scratch(t);
  const log = { g: events('g', 3), h: events('h', 2) };
  const first = new api.SqliteAgentStore(path);
  const earlier = new api.AgentReplay(A, first, source(log), projector, { clock });
  await earlier.reconcile(['g', 'h']);
  earlier.free();
  earlier.free();
  await assert.rejects(earlier.reconcile('g'), api.MwpError);
  first.close();
  log.g.push(event('g', 4));
  const second = new api.SqliteAgentStore(path);
  const src = source(log);
  const replay = new api.AgentReplay(A, second, src, projector, { clock });
  assert.equal(replay.scheduler.size, 5);
  const results = await replay.reconcile(['g', 'h']);
  assert.deepEqual(src.calls, [['g', 3], ['g', 4], ['h', 2]]);
  assert.deepEqual([results.g.startCursor, results.g.endCursor, results.g.appliedEvents], [3, 4, 1]);
  assert.deepEqual([results.h.startCursor, results.h.endCursor, results.h.appliedEvents], [2, 2, 0]);
  assert.equal(replay.scheduler.size, 6);
  second.close();
});

test('the WebAssembly build refuses AgentReplay', async () => {
  const wasm = await import(join(DIST, 'node-wasm.mjs'));
  assert.throws(() => new wasm.AgentReplay(A, {}, async () => [], async () => null), wasm.ArgumentError);
});

test('batches of 4,096 Events commit across source pages; a failing source keeps the committed prefix', async () => {
  const store = new api.SqliteAgentStore(':memory:');
  const log = { g: events('g', 6_000) };
  let failAfter = 5_000;
  const src = async (groupId, { after }) => {
    if (after >= failAfter) throw new Error('source down');
    return log[groupId].filter((e) => e.sequence > after).slice(0, 2_500);
  };
  const durable = [];
  const sparse = async (e) => {
    if (e.sequence === 2_501 || e.sequence === 4_097) durable.push(store.cursor(A, 'g'));
    return e.sequence % 100 === 0 ? projector(e) : null;
  };
  const replay = new api.AgentReplay(A, store, src, sparse, { clock });
  await assert.rejects(replay.reconcile('g'), /source down/);
  // Nothing durable after the first page (the batch spans pages), the first batch at 4,096.
  assert.deepEqual(durable, [0, 4_096]);
  assert.equal(store.cursor(A, 'g'), 5_000);
  failAfter = Infinity;
  const r = (await replay.reconcile('g')).g;
  assert.deepEqual([r.startCursor, r.endCursor, r.appliedEvents, r.admissions.length], [5_000, 6_000, 1_000, 10]);
  assert.equal(store.cursor(A, 'g'), 6_000);
  assert.equal(api.Scheduler.restore(store.loadScheduler(A)).size, 60);
});

/** A source whose online log starts after `onlineFrom`: an older cursor gets `snapshot` (§16 CURSOR_TOO_OLD). */
function tooOld(log, onlineFrom, snapshot) {
  const calls = [];
  const fn = async (groupId, { after }) => {
    calls.push(after);
    return after < onlineFrom ? snapshot : log.filter((e) => e.sequence > after);
  };
  fn.calls = calls;
  return fn;
}

test('CURSOR_TOO_OLD: the snapshot is restored in one commit, then only the tail is replayed', async () => {
  const store = new api.SqliteAgentStore(':memory:');
  const snapshot = { artifactHash: `sha256:${'a'.repeat(64)}`, throughSequence: 6, projection: { workOffers: [{ workId: 'w-snap', groupId: 'g' }] } };
  const src = tooOld(events('g', 9), 6, snapshot);
  const seen = [];
  const replay = new api.AgentReplay(A, store, src, async (e) => { seen.push(e.eventId); return null; }, { clock });
  const r = (await replay.reconcile('g')).g;
  assert.deepEqual(src.calls.slice(0, 2), [0, 6]);
  assert.deepEqual(seen, ['g-e7', 'g-e8', 'g-e9']);
  assert.deepEqual([r.startCursor, r.endCursor, r.appliedEvents], [0, 9, 3]);
  assert.deepEqual(r.admissions.map((d) => d.workId), ['w-snap']);
  assert.equal(store.cursor(A, 'g'), 9);
  assert.equal(snapshotIds(store)('w-snap'), 'ready');
  replay.free();
});

test('CURSOR_TOO_OLD: a snapshot not after the cursor is a ReplaySequenceError and keeps the progress', async () => {
  const store = new api.SqliteAgentStore(':memory:');
  const first = new api.AgentReplay(A, store, source({ g: events('g', 4) }), async () => null, { clock });
  await first.reconcile('g');
  first.free();
  const stale = { artifactHash: `sha256:${'b'.repeat(64)}`, throughSequence: 3 };
  const replay = new api.AgentReplay(A, store, tooOld(events('g', 4), 10, stale), async () => null, { clock });
  await assert.rejects(replay.reconcile('g'), (e) => e instanceof api.ReplaySequenceError && e.code === 'PROTOCOL_VIOLATION');
  assert.equal(store.cursor(A, 'g'), 4);
  replay.free();
});
