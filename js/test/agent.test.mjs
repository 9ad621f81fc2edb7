// The Agent runtime through the napi addon (§6.3, §11.3, §12; reference `agent.py`): one active
// session, strictly increasing Session Epochs, Group-scoped context and credentials installed by
// revision, and execution contexts holding only the dispatched work's Group — the Group is the
// Scheduler's own record, so a relabelled dispatch is refused. The runtime and AgentReplay share
// the caller's Scheduler (no copy). Each refusal is the shared error model's class with the core's
// §19 code; the WebAssembly build throws ArgumentError.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';

import { DIST } from './support.mjs';

const api = await import(join(DIST, 'node.mjs'));
const wasm = await import(join(DIST, 'node-wasm.mjs'));
const NOW = Date.UTC(2026, 6, 15, 9, 30);
const AGENT = 'urn:missionweaveprotocol:agent:worker';
const FINANCE = 'urn:missionweaveprotocol:group:finance';
const LEGAL = 'urn:missionweaveprotocol:group:legal';

function makeRuntime() {
  const scheduler = new api.Scheduler({ capacitySlots: 2 });
  for (const [workId, groupId] of [['urn:w:f', FINANCE], ['urn:w:l', LEGAL]]) {
    assert.ok(scheduler.admit({ workId, groupId }, NOW).accepted);
  }
  const dispatches = Object.fromEntries(scheduler.schedule(NOW).map((d) => [d.groupId, d]));
  return { runtime: new api.AgentRuntime(AGENT, scheduler), scheduler, dispatches };
}

function installBoth(session) {
  session.installGroupContext(FINANCE, { ledger: '2026-07' }, { revision: 1 });
  session.installGroupCredentials(FINANCE, { erp: 'finance-token' }, { revision: 1 });
  session.installGroupContext(LEGAL, { case: 'c-9' }, { revision: 1 });
  session.installGroupCredentials(LEGAL, { dms: 'legal-token' }, { revision: 1 });
}

function throwsClass(fn, Class, code, reason) {
  assert.throws(fn, (error) => {
    assert.ok(error instanceof Class, `${error?.name}: ${error?.message}`);
    assert.equal(error.name, Class.name);
    if (code) assert.equal(error.code, code);
    if (reason) assert.equal(error.reason, reason);
    return true;
  });
}

test('one session at a time; Session Epochs strictly increase', () => {
  const { runtime } = makeRuntime();
  assert.equal(runtime.activeSession, null);
  const session = runtime.startSession(1);
  assert.ok(session instanceof api.AgentRuntimeSession);
  assert.ok(session.descriptor instanceof api.SessionDescriptor);
  assert.deepEqual({ ...runtime.activeSession }, { agentId: AGENT, sessionId: `${AGENT}#session-1`, sessionEpoch: 1 });
  assert.deepEqual({ ...session.descriptor }, { ...runtime.activeSession });
  // Negative: a second session while one is active.
  assert.throws(() => runtime.startSession(2), (error) => {
    assert.ok(error instanceof api.ActiveSessionError);
    assert.equal(error.code, 'INVALID_STATE_TRANSITION');
    assert.equal(error.reason, 'active_session');
    assert.equal(error.activeEpoch, 1);
    assert.equal(error.retryable, false);
    return true;
  });
  session.close();
  session.close(); // idempotent
  assert.equal(runtime.activeSession, null);
  // Negative: an epoch not above the last one.
  assert.throws(() => runtime.startSession(1), (error) => {
    assert.ok(error instanceof api.StaleSessionEpochError);
    assert.equal(error.code, 'AUTH_STALE_SESSION');
    assert.deepEqual([error.reason, error.offered, error.last], ['stale_session_epoch', 1, 1]);
    return true;
  });
  throwsClass(() => runtime.startSession(0), api.AgentError, 'INVALID_COMMAND', 'invalid_argument');
  throwsClass(() => runtime.startSession(-3), api.AgentError, 'INVALID_COMMAND', 'invalid_argument');
  throwsClass(() => runtime.startSession(true), api.ArgumentError);
  throwsClass(() => runtime.startSession(1.5), api.ArgumentError);
  // Positive: a higher epoch, with a chosen session ID.
  const named = runtime.startSession(7, { sessionId: 'urn:session:seven' });
  assert.equal(named.descriptor.sessionId, 'urn:session:seven');
  assert.equal(named.descriptor.sessionEpoch, 7);
  throwsClass(() => new api.AgentRuntime(' ', new api.Scheduler()), api.AgentError, 'INVALID_COMMAND', 'invalid_argument');
  throwsClass(() => new api.AgentRuntime(AGENT, {}), api.ArgumentError);
});

test('a closed session can do nothing; a new session starts empty', () => {
  const { runtime, dispatches } = makeRuntime();
  // `using` (Node >= 24) calls the same [Symbol.dispose]().
  const session = runtime.startSession(1);
  try {
    installBoth(session);
    assert.equal(session.scheduler, runtime.scheduler);
  } finally {
    session[Symbol.dispose ?? Symbol.for('nodejs.dispose')]();
  }
  assert.equal(runtime.activeSession, null);
  for (const call of [
    () => session.prepare(dispatches[FINANCE]),
    () => session.installGroupContext(FINANCE, {}, { revision: 2 }),
    () => session.installGroupCredentials(FINANCE, {}, { revision: 2 }),
  ]) {
    throwsClass(call, api.ClosedSessionError, 'AUTH_REQUIRED', 'closed_session');
  }
  const fresh = runtime.startSession(2);
  const context = fresh.prepare(dispatches[FINANCE]);
  assert.deepEqual([context.contextRevision, context.credentialRevision], [null, null]);
  assert.deepEqual([{ ...context.values }, { ...context.credentials }], [{}, {}]);
  // The old session's handle stays closed even though a new one is active.
  throwsClass(() => session.prepare(dispatches[FINANCE]), api.ClosedSessionError, 'AUTH_REQUIRED');
});

test('revisions must increase per Group and per kind', () => {
  const { runtime } = makeRuntime();
  const session = runtime.startSession(1);
  session.installGroupContext(FINANCE, { v: 3 }, { revision: 3 });
  for (const older of [3, 2]) {
    assert.throws(() => session.installGroupContext(FINANCE, { v: 0 }, { revision: older }), (error) => {
      assert.ok(error instanceof api.StaleContextError);
      assert.equal(error.code, 'REVISION_CONFLICT');
      assert.deepEqual([error.groupId, error.offered, error.current], [FINANCE, older, 3]);
      return true;
    });
  }
  session.installGroupContext(FINANCE, { v: 4 }, { revision: 4 });
  session.installGroupContext(LEGAL, {}, { revision: 1 });
  session.installGroupCredentials(FINANCE, {}, { revision: 1 });
  throwsClass(() => session.installGroupCredentials(FINANCE, {}, { revision: 1 }), api.StaleContextError, 'REVISION_CONFLICT');
  throwsClass(() => session.installGroupContext(FINANCE, [1], { revision: 9 }), api.AgentError, 'INVALID_COMMAND', 'invalid_argument');
  throwsClass(() => session.installGroupContext('', {}, { revision: 9 }), api.AgentError, 'INVALID_COMMAND', 'invalid_argument');
});

test('each run sees only its own Group; contexts are deep-frozen copies', () => {
  const { runtime, dispatches } = makeRuntime();
  const session = runtime.startSession(1);
  installBoth(session);
  const finance = session.prepare(dispatches[FINANCE]);
  const legal = session.prepare(dispatches[LEGAL]);
  assert.ok(finance instanceof api.ExecutionContext);
  assert.deepEqual([finance.groupId, { ...finance.values }, { ...finance.credentials }], [FINANCE, { ledger: '2026-07' }, { erp: 'finance-token' }]);
  assert.deepEqual([legal.groupId, { ...legal.values }, { ...legal.credentials }], [LEGAL, { case: 'c-9' }, { dms: 'legal-token' }]);
  assert.ok(!JSON.stringify(finance).includes('legal-token') && !JSON.stringify(legal).includes('finance-token'));
  assert.ok(!JSON.stringify(finance).includes('c-9') && !JSON.stringify(legal).includes('2026-07'));
  assert.deepEqual([finance.contextRevision, finance.credentialRevision, finance.sessionEpoch], [1, 1, 1]);
  assert.throws(() => { 'use strict'; finance.values.ledger = 'x'; }, TypeError);
  assert.throws(() => { 'use strict'; finance.credentials.erp = 'x'; }, TypeError);
  // A later install does not change a prepared context.
  session.installGroupContext(FINANCE, { ledger: '2026-08' }, { revision: 2 });
  assert.equal(finance.values.ledger, '2026-07');
  assert.equal(session.prepare(dispatches[FINANCE]).values.ledger, '2026-08');
  // A plain object with a runId works like the Dispatch.
  const d = dispatches[LEGAL];
  assert.equal(session.prepare({ workId: d.workId, groupId: d.groupId, runId: d.runId }).groupId, LEGAL);
});

test('a relabelled, stale, unknown or finished dispatch is refused (no path to another Group)', () => {
  const { runtime, scheduler, dispatches } = makeRuntime();
  const session = runtime.startSession(1);
  installBoth(session);
  const finance = dispatches[FINANCE];
  const forged = [
    { workId: finance.workId, groupId: LEGAL, generation: finance.generation },
    { workId: finance.workId, groupId: FINANCE, generation: finance.generation + 1 },
    { workId: 'urn:w:unknown', groupId: FINANCE, generation: 1 },
  ];
  for (const dispatch of forged) {
    assert.throws(() => session.prepare(dispatch), (error) => {
      assert.ok(error instanceof api.AgentError, `${error?.name}: ${error?.message}`);
      assert.equal(error.code, 'INVALID_STATE_TRANSITION');
      assert.equal(error.reason, 'not_dispatched');
      assert.ok(!JSON.stringify(error).includes('legal-token') && !error.message.includes('legal-token'));
      return true;
    });
  }
  // A malformed dispatch (no generation) is an ArgumentError naming it.
  throwsClass(() => session.prepare({ workId: finance.workId, groupId: FINANCE, runId: 'no-generation' }), api.ArgumentError);
  scheduler.apply(finance.workId, { kind: 'completed', generation: finance.generation }, NOW);
  throwsClass(() => session.prepare(finance), api.AgentError, 'INVALID_STATE_TRANSITION', 'not_dispatched');
  // The other Group's run is unaffected.
  assert.equal(session.prepare(dispatches[LEGAL]).credentials.dms, 'legal-token');
});

test('the runtime shares the caller\'s Scheduler: work admitted after construction can be prepared', () => {
  const scheduler = new api.Scheduler({ capacitySlots: 1 });
  const runtime = new api.AgentRuntime(AGENT, scheduler);
  assert.equal(runtime.scheduler, scheduler);
  const session = runtime.startSession(1);
  session.installGroupCredentials(FINANCE, { erp: 't' }, { revision: 1 });
  scheduler.admit({ workId: 'urn:w:late', groupId: FINANCE }, NOW);
  const [dispatch] = scheduler.schedule(NOW);
  assert.equal(session.prepare(dispatch).credentials.erp, 't');
  // A freed Scheduler cannot be read.
  scheduler.free();
  throwsClass(() => session.prepare(dispatch), api.ArgumentError);
  runtime.free();
  throwsClass(() => runtime.activeSession, api.ArgumentError);
});

test('AgentReplay admits into the caller\'s Scheduler: an offer admitted by replay is visible there', async () => {
  const store = new api.SqliteAgentStore(':memory:');
  const scheduler = new api.Scheduler({ capacitySlots: 1 });
  const source = async (groupId, { after }) => [{ eventId: 'e1', groupId, sequence: 1 }].filter((e) => e.sequence > after);
  const projector = async (e) => ({ workOffers: [{ workId: `w-${e.eventId}`, groupId: e.groupId }] });
  const replay = new api.AgentReplay('urn:agent:a', store, source, projector, { scheduler, clock: () => NOW });
  assert.equal(replay.scheduler, scheduler);
  assert.equal(scheduler.state('w-e1'), null);
  const { [FINANCE]: result } = await replay.reconcile([FINANCE]);
  assert.equal(result.appliedEvents, 1);
  assert.equal(scheduler.state('w-e1'), 'ready');
  assert.equal(scheduler.size, 1);
  // The runtime prepares the replayed work on the same Scheduler.
  const runtime = new api.AgentRuntime('urn:agent:a', scheduler);
  const session = runtime.startSession(1);
  session.installGroupContext(FINANCE, { from: 'replay' }, { revision: 1 });
  const [dispatch] = scheduler.schedule(NOW);
  assert.equal(session.prepare(dispatch).values.from, 'replay');
  // The committed snapshot is this Scheduler's.
  assert.equal(api.Scheduler.restore(store.loadScheduler('urn:agent:a')).state('w-e1'), 'ready');
  // Negative: scheduler and schedulerPolicy together, or something that is not a Scheduler.
  throwsClass(() => new api.AgentReplay('urn:agent:a', store, source, projector, { scheduler, schedulerPolicy: {} }), api.ArgumentError);
  throwsClass(() => new api.AgentReplay('urn:agent:a', store, source, projector, { scheduler: {} }), api.ArgumentError);
});

test('the WebAssembly build has no Agent runtime: ArgumentError', () => {
  assert.throws(() => new wasm.AgentRuntime(AGENT, new wasm.Scheduler()), (error) => error instanceof wasm.ArgumentError && /napi/.test(error.message));
});
