// Checks every golden vector of tests/vectors/ (written by the Rust core's testkit,
// `mwp-write-vectors`) through one backend's public JavaScript API. No Node built-ins: the same
// module runs under Node (napi, wasm) and in Chromium (wasm), see vectors.test.mjs.
//
// Each area counts the vectors it compared; the caller asserts the counts equal the manifest's,
// so nothing is skipped silently. Every vector of every area is expressible through the
// JavaScript API: the scenario steps of authority.jsonl name methods of that very API.

const decoder = new TextDecoder();

/** RFC 4648 §5 base64url without padding. */
export function base64url(bytes) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    const chars = Math.min(4, Math.ceil(((bytes.length - i) * 8) / 6));
    for (let c = 0; c < chars; c += 1) out += alphabet[(n >> (18 - 6 * c)) & 63];
  }
  return out;
}

/** JSON with sorted members: a structural comparison key (undefined reads as null). */
export function stable(value) {
  if (value === undefined || value === null) return 'null';
  if (Array.isArray(value)) return `[${value.map(stable).join(',')}]`;
  if (typeof value === 'object') {
    return `{${Object.keys(value).sort().filter((k) => value[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${stable(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** A plain copy of an API object (class instances, frozen objects) through JSON. */
const plain = (value) => (value === undefined ? null : JSON.parse(JSON.stringify(value)));

function lines(text) {
  return text.split('\n').filter((line) => line.length > 0).map((line) => JSON.parse(line));
}

class Checker {
  constructor(api) {
    this.api = api;
    this.counts = {};
    this.problems = [];
  }

  /** Compares `actual` with `expected` for one vector of `area`; counts it. */
  expect(area, id, actual, expected, what = 'result') {
    this.counts[area] = (this.counts[area] ?? 0) + 1;
    if (stable(actual) !== stable(expected)) {
      this.problems.push(`${area}/${id}: ${what}: got ${stable(actual)}, expected ${stable(expected)}`);
    }
  }

  note(area, id, message) {
    this.problems.push(`${area}/${id}: ${message}`);
  }
}

/** The typed members a vector's error records, read from the thrown error. */
function errorView(error, expected) {
  if (!(error instanceof Error) || typeof error.code !== 'string') return { thrown: String(error) };
  const view = {};
  for (const name of Object.keys(expected)) view[name] = error[name] ?? null;
  return view;
}

// ---- evaluations.jsonl ------------------------------------------------------------------------

async function structural(c, record, read) {
  const { api } = c;
  let got;
  try {
    api.validateSchema(record.inputs.schema.slice('schemas/'.length), await read(record.inputs.instance));
    got = { verdict: 'valid', stage: null, code: null, reason: null };
  } catch (error) {
    got = { verdict: 'invalid', stage: error.stage ?? null, code: error.code ?? String(error), reason: error.keyword ?? null };
    if (record.instancePath !== undefined) got.instancePath = error.instancePath;
  }
  const want = { verdict: record.verdict, stage: record.stage, code: record.code, reason: record.reason };
  if (record.instancePath !== undefined) want.instancePath = record.instancePath;
  c.expect('structural', record.id, got, want);
}

async function cryptography(c, record, read) {
  const { api } = c;
  if (record.kind === 'canonicalization') {
    const input = await read(record.inputs.input);
    c.expect('cryptography', record.id, { canonical: api.canonicalize(input), hash: api.canonicalHash(input) },
      { canonical: record.canonical, hash: record.hash });
    return;
  }
  const registry = await read(record.inputs.registry);
  let got;
  try {
    const v = api.verifySignedDocument(record.profileId, await read(record.inputs.document), registry);
    got = {
      verdict: 'complete', stage: 'complete', code: null, reason: null,
      signingBytes: base64url(v.signingBytes), signingHash: v.signingHash, signedDocumentHash: v.signedDocumentHash,
      keyId: v.keyId, principal: { ...v.principal }, protectedTime: v.protectedTime, signature: v.signature,
    };
    if (record.inputs.signingKey) {
      const key = JSON.parse(decoder.decode(await read(record.inputs.signingKey)));
      const seed = Uint8Array.from(atob(key.seed.replace(/-/g, '+').replace(/_/g, '/')), (ch) => ch.charCodeAt(0));
      const signed = api.signDocument(record.profileId, v.signingBytes, { keyId: key.keyId, seed, registry });
      got.resignedSignature = signed.signature;
      got.resignedDocumentHash = signed.documentHash;
    }
  } catch (error) {
    got = { verdict: 'rejected', stage: error.stage ?? null, code: error.code ?? String(error), reason: error.reason ?? null };
  }
  const want = { ...record };
  for (const name of ['area', 'id', 'kind', 'profileId', 'inputs']) delete want[name];
  c.expect('cryptography', record.id, got, want);
}

async function admission(c, record, read, fixtures) {
  const { api } = c;
  const evaluation = fixtures.get(record.id);
  if (!evaluation) {
    c.note('admission', record.id, 'not in admission/manifest.json');
    return;
  }
  const calls = [];
  const reply = async (outcome) => (outcome.record === undefined ? { status: outcome.status } : {
    status: outcome.status, record: await read(outcome.record), authenticatedService: outcome.authenticatedService,
  });
  const lookup = await reply(evaluation.lookup);
  const append = evaluation.append ? await reply(evaluation.append) : { status: 'indeterminate' };
  const log = {
    lookup() { calls.push('lookup'); return lookup; },
    append() { calls.push('append'); return append; },
  };
  const context = () => { calls.push('context'); return evaluation.trustedContext; };
  const args = [record.profileId, await read(record.inputs.document), await read(record.inputs.registry), log];
  let got;
  try {
    const admitted = record.mode === 'historical-replay' ? api.replayHistorical(...args) : api.admitFirst(...args, context);
    got = {
      verdict: 'complete', stage: 'complete', code: null, reason: null,
      record: api.canonicalize(JSON.stringify(admitted.record)),
      recordBytes: base64url(admitted.recordBytes),
      existing: admitted.existing,
    };
  } catch (error) {
    got = { verdict: 'rejected', stage: error.stage ?? null, code: error.code ?? String(error), reason: error.reason ?? null };
  }
  got.calls = calls;
  const want = { ...record };
  for (const name of ['area', 'id', 'mode', 'profileId', 'inputs']) delete want[name];
  c.expect('admission', record.id, got, want);
}

// ---- canonical.jsonl --------------------------------------------------------------------------

function canonical(c, record) {
  const { api } = c;
  let got;
  try {
    got = { canonical: api.canonicalize(record.input), hash: api.canonicalHash(record.input) };
  } catch (error) {
    got = { error: { code: error.code ?? String(error), stage: error.stage ?? null } };
  }
  const want = record.error ? { error: record.error } : { canonical: record.canonical, hash: record.hash };
  c.expect('canonical', record.id, got, want);
}

// ---- authority.jsonl: scenario steps through the API --------------------------------------------

const accountOf = (args) => [args[0], args[1]];
const usage = (u) => ({ ...u });

/** Runs one step on `subject`; returns `[newSubject, observed ok value]`. Throws the API's error. */
function runStep(api, kind, subject, step) {
  const a = step.args;
  if (step.call === 'new') {
    switch (kind) {
      case 'ExecutionLease': {
        const lease = step.mode === 'execution' ? new api.ExecutionLease(a[0])
          : step.mode === 'document' ? api.ExecutionLease.fromJSON(a[0])
            : api.ExecutionLease[step.mode](a[0]);
        return [lease, leaseView(lease, step.ok)];
      }
      case 'BudgetLedger':
        return [step.mode === 'rebuild' ? api.BudgetLedger.rebuild(a[0]) : new api.BudgetLedger(), null];
      case 'DelegationAuthority':
        return [new api.DelegationAuthority(a[0]), null];
      case 'RetryController':
        return [new api.RetryController(a[0]), null];
      default:
        return [step.mode === 'restore' ? api.Scheduler.restore(a[0], a[1] ?? undefined)
          : step.mode === 'rebuild' ? api.Scheduler.rebuild(a[0], a[1] ?? undefined, a[2]) : new api.Scheduler(a[0]), null];
    }
  }
  const s = subject;
  switch (`${kind}.${step.call}`) {
    // Leases: getters mirror the state object; close returns whether it changed.
    case 'ExecutionLease.state': return [s, leaseView(s, step.ok)];
    case 'ExecutionLease.renew': return [s, leaseView(s.renew(a[0], a[1]), step.ok)];
    case 'ExecutionLease.close': {
      const changed = s.close(a[0], a[1], a[2]);
      return [s, { changed, lease: leaseView(s, step.ok?.lease) }];
    }
    case 'ExecutionLease.toJSON': return [s, s.toCanonicalJSON()];
    case 'ExecutionLease.stateAt': return [s, s.stateAt(a[0])];
    case 'ExecutionLease.isLive': return [s, s.isLive(a[0])];
    case 'ExecutionLease.checkClaim': return [s, s.checkClaim(a[0], a[1])];
    case 'ExecutionLease.checkStartBy': return [s, s.checkStartBy(a[0])];
    // The budget ledger: options objects for the optional arguments, accounts as pairs.
    case 'BudgetLedger.registerMission':
      return [s, s.registerMission(a[0], a[1], { currency: a[2], parentWorkItemId: a[3] })];
    case 'BudgetLedger.registerWorkItem':
      return [s, s.registerWorkItem(a[0], a[1], a[2], { parentWorkItemId: a[3] })];
    case 'BudgetLedger.consume': return [s, usage(s.consume(a[0], a[1]))];
    case 'BudgetLedger.remaining': return [s, usage(s.remaining(accountOf(a)))];
    case 'BudgetLedger.usage': return [s, usage(s.usage(accountOf(a)))];
    case 'BudgetLedger.limit': return [s, usage(s.limit(accountOf(a)))];
    case 'BudgetLedger.reserved': return [s, usage(s.reserved(accountOf(a)))];
    case 'BudgetLedger.currency': return [s, s.currency(accountOf(a))];
    case 'BudgetLedger.depth': return [s, s.depth(accountOf(a))];
    case 'BudgetLedger.size': return [s, s.size];
    case 'BudgetLedger.snapshot': return [s, plain(s.snapshot())];
    // Delegation: state is exposed as getters.
    case 'DelegationAuthority.grant': return [s, plain(s.grant)];
    case 'DelegationAuthority.charged': return [s, usage(s.charged)];
    case 'DelegationAuthority.remaining': return [s, usage(s.remaining)];
    case 'DelegationAuthority.invalidated': return [s, plain(s.invalidated)];
    case 'DelegationAuthority.checkUse': return [s, s.checkUse(a[0], a[1])];
    case 'DelegationAuthority.authorizeExisting': return [s, s.authorizeExisting(a[0], a[1], a[2], a[3])];
    case 'DelegationAuthority.authorizeDescendant': return [s, s.authorizeDescendant(a[0], a[1], a[2], a[3], a[4])];
    case 'DelegationAuthority.restoreAttribution': return [s, s.restoreAttribution(a[0], a[1])];
    // Retries: Attempt and RetrySchedule instances, state as getters.
    case 'RetryController.idempotencyKey': return [s, s.idempotencyKey(a[0])];
    case 'RetryController.begin': return [s, plain(s.begin(a[0], a[1]))];
    case 'RetryController.finish': return [s, plain(s.finish(a[0], a[1]))];
    case 'RetryController.consume': return [s, usage(s.consume(a[0]))];
    case 'RetryController.state': return [s, { attempts: s.attempts, usage: usage(s.usage), finished: s.finished }];
    // The Scheduler: actions are Dispatch/Preempt instances, stats are getters.
    case 'Scheduler.admit': return [s, plain(s.admit(a[0], a[1]))];
    case 'Scheduler.schedule':
      return [s, s.schedule(a[0]).map((x) => ({ type: x instanceof api.Dispatch ? 'dispatch' : 'preempt', ...plain(x) }))];
    case 'Scheduler.apply': return [s, s.apply(a[0], a[1], a[2])];
    case 'Scheduler.unblock': return [s, s.unblock(a[0], a[1])];
    case 'Scheduler.cancel': return [s, s.cancel(a[0])];
    case 'Scheduler.state': return [s, s.state(a[0])];
    case 'Scheduler.generation': return [s, s.generation(a[0])];
    case 'Scheduler.isTerminal': return [s, s.isTerminal(a[0])];
    case 'Scheduler.forget': return [s, s.forget(a[0])];
    case 'Scheduler.disclose': return [s, plain(s.disclose(a[0], a[1]))];
    case 'Scheduler.stats':
      return [s, { size: s.size, usedSlots: s.usedSlots, capacitySlots: s.capacitySlots, horizonMs: s.horizonMs }];
    case 'Scheduler.snapshot': return [s, plain(s.snapshot())];
    default: throw new Error(`vectors-check: no JavaScript mapping for ${kind}.${step.call}`);
  }
}

/** The lease's getters named by the expected state object. */
function leaseView(lease, expected) {
  if (!expected || typeof expected !== 'object') return null;
  return Object.fromEntries(Object.keys(expected).map((name) => [name, lease[name] ?? null]));
}

function scenario(c, record) {
  let subject = null;
  record.steps.forEach((step, index) => {
    const id = `${record.scenario}#${index}:${step.call}`;
    let got;
    try {
      const [next, value] = runStep(c.api, record.subject, subject, step);
      subject = next;
      got = { ok: value ?? null };
    } catch (error) {
      got = step.error ? { error: errorView(error, step.error) } : { thrown: `${error?.name}: ${error?.message}` };
    }
    c.expect(record.area, id, got, step.error ? { error: step.error } : { ok: step.ok });
  });
}

// ---- scheduling.jsonl -------------------------------------------------------------------------

const T0 = 1_700_000_000_000;

/** The mixed scenario of core/testkit/src/vectors/scheduling.rs, step for step. */
export function mixedScenario(api) {
  const policy = { capacitySlots: 3, groups: { 'g-heavy': { weight: 2 }, 'g-quota': { slotQuota: 1 } } };
  let s = new api.Scheduler(policy);
  const trace = [];
  const known = [];
  const admit = (offer, t) => {
    // Alternately a number and a Date: both are accepted as instants.
    const d = s.admit(offer, t % 2 === 0 ? T0 + t : new Date(T0 + t));
    trace.push(`t=${t} admit ${offer.workId} ${d.reason}`);
    if (!known.includes(offer.workId)) known.push(offer.workId);
  };
  const first = [];
  for (let i = 0; i < 6; i += 1) first.push({ workId: `h${i}`, groupId: 'g-heavy' });
  for (let i = 0; i < 4; i += 1) first.push({ workId: `l${i}`, groupId: 'g-light', priority: -20 });
  for (let i = 0; i < 3; i += 1) first.push({ workId: `q${i}`, groupId: 'g-quota', priority: 30 });
  first.push({ workId: 'blk0', groupId: 'g-light', priority: 10 });
  first.push({ workId: 'rel0', groupId: 'g-heavy' });
  first.push({ workId: 'fail0', groupId: 'g-light' });
  for (const o of first) admit(o, 0);
  const duration = (id) => ({ h: 3, l: 10, r: 1, f: 1 })[id[0]] ?? 2;
  const ckpt = (id, generation) => ({ checkpointId: `ck-${id}-${generation}`, durable: true, safe: true });
  let running = new Map();
  let preempted = [];
  for (let t = 0; t <= 60; t += 1) {
    const now = T0 + t;
    if (t === 5) {
      admit({ workId: 'big', groupId: 'g-urgent', priority: 100, slots: 2 }, t);
      admit({ workId: 'late', groupId: 'g-light', deadline: new Date(T0 + 3) }, t);
      admit({ workId: 'h0', groupId: 'g-heavy' }, t);
    }
    if (t === 12) {
      // Through JSON text, as a store would keep it.
      s = api.Scheduler.restore(JSON.stringify(s.snapshot()), policy);
      trace.push(`t=${t} restored size=${s.size}`);
    }
    if (t === 18) {
      s = api.Scheduler.rebuild(s.snapshot(), policy, now);
      running = new Map();
      preempted = [];
      for (const id of known) {
        const state = s.state(id);
        if (state !== null) trace.push(`t=${t} rebuilt ${id} ${state}`);
      }
    }
    if (t === 19) {
      for (const id of known) {
        if (s.state(id) === 'blocked') {
          let ok = true;
          try { s.unblock(id, now); } catch { ok = false; }
          trace.push(`t=${t} unblock ${id} ${ok}`);
        }
      }
    }
    for (const [id, generation] of preempted) {
      let ok = true;
      try { s.apply(id, { kind: 'checkpoint_saved', generation, checkpoint: ckpt(id, generation) }, now); } catch { ok = false; }
      running.delete(id);
      trace.push(`t=${t} apply ${id} checkpoint_saved ${ok}`);
    }
    preempted = [];
    const due = [...running].filter(([, [, end]]) => end === t).map(([id, [g]]) => [id, g])
      .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
    for (const [id, generation] of due) {
      running.delete(id);
      let transition;
      if (id === 'blk0' && generation === 1) {
        transition = { kind: 'blocked', generation, checkpoint: ckpt(id, generation), retryAt: new Date(T0 + t + 4), reason: 'waiting' };
      } else if (id === 'rel0' && generation === 1) {
        transition = { kind: 'released', generation };
      } else if (id === 'fail0') {
        transition = { kind: 'failed', generation };
      } else {
        transition = { kind: 'completed', generation };
      }
      let ok = true;
      try { s.apply(id, transition, now); } catch { ok = false; }
      trace.push(`t=${t} apply ${id} ${transition.kind} ${ok}`);
    }
    for (const action of s.schedule(now)) {
      if (action instanceof api.Dispatch) {
        trace.push(`t=${t} dispatch ${action.workId} ${action.groupId} gen=${action.generation} slots=${action.slots} resume=${action.resumeFrom?.checkpointId ?? '-'}`);
        if (action.runId !== `${action.workId}:${action.generation}`) trace.push(`bad runId ${action.runId}`);
        running.set(action.workId, [action.generation, t + duration(action.workId)]);
      } else {
        trace.push(`t=${t} preempt ${action.workId} gen=${action.generation}`);
        preempted.push([action.workId, action.generation]);
      }
    }
  }
  return { trace, snapshot: api.canonicalize(JSON.stringify(s.snapshot())) };
}

function benchOffers(n) {
  return Array.from({ length: n }, (_, i) => ({
    workId: `urn:uuid:00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`,
    groupId: `urn:uuid:6a1f0000-0000-4000-8000-${(i % 8).toString(16).padStart(12, '0')}`,
    priority: ((i * 37) % 201) - 100,
  }));
}

/** The benchmark workload (core/testkit/src/scheduling_workload.rs): admit all, then tick and complete. */
export function benchOrder(api, n) {
  const B0 = 1_767_225_600_000;
  const s = new api.Scheduler({ capacitySlots: 8, maxWorkItems: n, maxWorkItemsPerGroup: n });
  const decisions = s.admitMany(benchOffers(n), B0);
  if (!decisions.every((d) => d.accepted)) throw new Error('benchmark offers declined');
  const order = [];
  let t = B0;
  while (order.length < n) {
    t += 1;
    const actions = s.schedule(t);
    if (actions.length === 0) throw new Error('benchmark stalled');
    for (const d of actions) {
      s.apply(d.workId, { kind: 'completed', generation: d.generation }, t);
      order.push(d.workId);
    }
  }
  return order;
}

async function sha256(text) {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
  return `sha256:${[...digest].map((b) => b.toString(16).padStart(2, '0')).join('')}`;
}

async function scheduling(c, record) {
  const { api } = c;
  switch (record.scenario) {
    case 'mixed':
      c.expect('scheduling', 'mixed', mixedScenario(api), { trace: record.trace, snapshot: record.snapshot });
      return;
    case 'bench': {
      const order = benchOrder(api, record.count);
      c.expect('scheduling', 'bench', { count: order.length, first: order.slice(0, 8), digest: await sha256(order.join('\n')) },
        { count: record.count, first: record.first, digest: record.digest });
      return;
    }
    case 'idempotency':
      c.expect('scheduling', 'idempotency',
        record.cases.map((k) => api.idempotencyKey(k.missionId, k.workItemId, k.ownershipEpoch, k.logicalOperationId)),
        record.cases.map((k) => k.key));
      return;
    case 'lease': {
      const lease = new api.ExecutionLease({
        leaseId: 'urn:lease:1', missionId: 'urn:mission:1', groupId: 'urn:group:1', workItemId: 'urn:work:1',
        holderAgentId: 'urn:agent:1', sessionEpoch: 3, ownershipEpoch: 7, issuedAt: T0, startsAt: T0 + 1_000, expiresAt: T0 + 60_000,
      });
      lease.renew(T0 + 30_000, T0 + 90_000);
      lease.release(T0 + 45_000, 'checkpoint');
      c.expect('scheduling', 'lease', lease.toCanonicalJSON(), record.document);
      return;
    }
    default:
      c.note('scheduling', record.scenario, 'unknown scenario');
  }
}

/**
 * Checks every vector through `api`. `readVector(name)` gives a vector file's text,
 * `readBundle(path)` a bundle file's bytes (both may be async). Returns
 * `{ counts, expected, problems }`: vectors compared per area, the manifest's counts, mismatches.
 */
export async function checkVectors(api, { readVector, readBundle }) {
  const c = new Checker(api);
  const manifest = JSON.parse(await readVector('manifest.json'));
  const cache = new Map();
  const read = async (path) => {
    if (!cache.has(path)) cache.set(path, await readBundle(path));
    return cache.get(path);
  };
  const fixtures = new Map();
  for (const testCase of JSON.parse(decoder.decode(await read('admission/manifest.json'))).cases) {
    for (const evaluation of testCase.evaluations) fixtures.set(evaluation.id, evaluation);
  }
  for (const record of lines(await readVector('evaluations.jsonl'))) {
    if (record.area === 'structural') await structural(c, record, read);
    else if (record.area === 'cryptography') await cryptography(c, record, read);
    else await admission(c, record, read, fixtures);
  }
  for (const record of lines(await readVector('canonical.jsonl'))) canonical(c, record);
  for (const record of lines(await readVector('authority.jsonl'))) scenario(c, record);
  for (const record of lines(await readVector('scheduling.jsonl'))) await scheduling(c, record);
  return { counts: c.counts, expected: manifest.areas, problems: c.problems };
}
