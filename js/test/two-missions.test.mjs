// The two-Missions scenario (issue 13) from Node: the golden vector tests/vectors/two-missions.jsonl
// — written once by the Rust core's testkit (core/testkit/src/vectors/two_missions) — performed on
// the Core of both backends (napi, WebAssembly). Two concurrent Missions in two Groups run
// requirements → implementation → testing → code-review → integration as a WorkItem dependency
// chain, then submit_for_approval and the human approve; Mission A promotes `testing` to a child
// Mission, gates `integration` on a human Execution Approval, and has its Group archived. Each
// Command is performed at the vector's instant (the Core's clock) with the vector's Registry,
// Group Authority key and Event ID prefix: every Event's bytes, every refusal's typed error and
// wire code, each Group's replay and the whole log's digest must equal the vector's — the same
// bytes core/testkit/tests/two_missions.rs and python/tests/test_two_missions.py check.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { before, describe, test } from 'node:test';

import { backends, vectorLines } from './support.mjs';

const RECORDS = vectorLines('two-missions.jsonl');
const SETUP = RECORDS[0];
const STEPS = RECORDS.filter((r) => r.record === 'step');
const LOGS = RECORDS.filter((r) => r.record === 'log');
const [DIGEST] = RECORDS.filter((r) => r.record === 'digest');

/** The typed error and reason slug of each refusal (the Rust core's family table). */
const REFUSALS = {
  'b: work.start implementation before requirements is verified': ['DependencyError', 'dependency_not_ready'],
  'a: work.start integration without an Execution Approval': ['PolicyViolation', 'execution_approval_required'],
};

const encoder = new TextEncoder();
const sha256 = (texts) => `sha256:${createHash('sha256').update(texts.map((t) => `${t}\n`).join('')).digest('hex')}`;

let apis;
before(async () => { apis = await backends(); });

/** The vector's core on `api`, over `store` (default: in memory); `clock.now` is read per call. */
function makeCore(api, clock, store) {
  const seed = Uint8Array.from(Buffer.from(SETUP.authorityKeySeed, 'hex'));
  return new api.Core({
    registry: new api.Registry(encoder.encode(SETUP.registry)),
    authority: SETUP.authority,
    authorityKey: api.SigningKey.fromSeed(SETUP.authorityKeyId, seed),
    clock: () => clock.now,
    eventIdPrefix: SETUP.eventIdPrefix,
    bootstrapServices: SETUP.bootstrapServices,
    policyServices: SETUP.policyServices,
    ...(store ? { store } : {}),
  });
}

/** Performs every step (at its `now` + `skewMs`); what differs from the vector. */
async function performAll(api, core, clock, skewMs = 0) {
  const problems = [];
  const log = [];
  for (const step of STEPS) {
    clock.now = step.now + skewMs;
    let result;
    try {
      result = await core.perform(encoder.encode(step.command));
    } catch (error) {
      if (!(error instanceof api.MissionWeaveProtocolError)) throw error;
      if (step.refused === undefined) problems.push(`${step.label}: refused ${error.code}`);
      else {
        const [type, reason] = REFUSALS[step.label];
        if (error.code !== step.refused || error.constructor !== api[type] || error.reason !== reason) {
          problems.push(`${step.label}: ${error.constructor.name} ${error.code} ${error.reason}, expected ${type} ${step.refused} ${reason}`);
        }
      }
      continue;
    }
    if (step.refused !== undefined) {
      problems.push(`${step.label}: applied, expected ${step.refused}`);
      continue;
    }
    const got = result.events.map((e) => e.text);
    if (JSON.stringify(got) !== JSON.stringify(step.events.map((e) => e.body))) problems.push(`${step.label}: Events differ`);
    if (result.events.some((e) => Buffer.compare(Buffer.from(e.bytes), Buffer.from(e.text, 'utf8')) !== 0)) {
      problems.push(`${step.label}: bytes differ from text`);
    }
    log.push(...got);
  }
  for (const group of LOGS) {
    const page = await core.replay(group.groupId, { after: group.after, limit: 10_000 });
    if (sha256(page.events.map((e) => e.text)) !== group.sha256) problems.push(`replay of ${group.groupId} differs`);
    if (JSON.stringify(page.events.map((e) => e.eventId)) !== JSON.stringify(group.replay.map((e) => e.eventId))) {
      problems.push(`replay of ${group.groupId}: other Event IDs`);
    }
  }
  if (sha256(log) !== DIGEST.sha256) problems.push('the log digest differs');
  return problems;
}

test('the vector is the scenario', () => {
  assert.deepEqual(SETUP.stages, ['requirements', 'implementation', 'testing', 'code-review', 'integration']);
  assert.equal(STEPS.length, DIGEST.steps);
  assert.deepEqual(Object.fromEntries(STEPS.filter((s) => s.refused).map((s) => [s.label, s.refused])), {
    'b: work.start implementation before requirements is verified': 'INVALID_COMMAND',
    'a: work.start integration without an Execution Approval': 'APPROVAL_REQUIRED',
  });
  const kinds = STEPS.flatMap((s) => (s.events ?? []).map((e) => e.kind));
  for (const kind of ['mission.child.created', 'approval.execution.granted', 'group.archived']) assert.ok(kinds.includes(kind), kind);
  assert.equal(kinds.filter((k) => k === 'mission.approved').length, 3);
});

for (const name of ['napi (ESM)', 'wasm (ESM)']) {
  describe(`two Missions: ${name}`, () => {
    test('the Core reproduces the log byte for byte', async (t) => {
      const api = apis[name];
      const clock = { now: 0 };
      const core = makeCore(api, clock);
      t.after(() => core.free());
      assert.deepEqual(await performAll(api, core, clock), []);
    });

    test('another clock gives another log (the comparison can fail)', async (t) => {
      const api = apis[name];
      const clock = { now: 0 };
      const core = makeCore(api, clock);
      t.after(() => core.free());
      const problems = await performAll(api, core, clock, 1);
      assert.ok(problems.includes('the log digest differs'), problems.join('\n'));
      assert.ok(problems.some((p) => p.endsWith('Events differ')));
    });
  });
}

test('napi (ESM): the Core over SQLite reproduces the log byte for byte', async (t) => {
  const api = apis['napi (ESM)'];
  const store = new api.SQLiteStore();
  await store.initialize();
  const clock = { now: 0 };
  const core = makeCore(api, clock, store);
  t.after(async () => { core.free(); await store.close(); });
  assert.deepEqual(await performAll(api, core, clock), []);
});
