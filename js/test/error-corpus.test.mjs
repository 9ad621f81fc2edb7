// The cross-language corpus of failing calls (tests/errors/failing-calls.json): on every backend
// each call fails with the same error class, wire code, reason and structured fields as the Rust
// core (core/testkit/tests/error_corpus.rs) and the Python package.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';

import { REPO, backends, bundleBytes } from './support.mjs';
import { organization } from './core-support.mjs';

const CORPUS = JSON.parse(readFileSync(join(REPO, 'tests', 'errors', 'failing-calls.json'), 'utf8'));
const T0 = 1_767_225_600_000;

// The core's class names (`ErrorClass::as_str`) → this package's Error subclasses.
const CLASSES = {
  admission: 'AdmissionError',
  argument: 'ArgumentError', parse: 'ParseError', canonicalization: 'CanonicalizationError',
  verification: 'VerificationError', frame: 'FrameError', budget: 'BudgetLedgerError',
  'budget-exceeded': 'BudgetExceededError', snapshot: 'SnapshotError', scheduler: 'SchedulerError',
  'scheduler-state': 'SchedulerStateError',
  authentication: 'AuthenticationError', 'local-store': 'LocalStoreError', 'replay-sequence': 'ReplaySequenceError',
  offline: 'OfflinePolicyError',
};

// A refusal of the authoritative Core (`family` in the case): its class is the family's.
const FAMILY_CLASSES = { store_failure: 'StoreError' };

const camel = (name) => name.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
const usage = (values) => Object.fromEntries(Object.entries(values).map(([k, v]) => [camel(k), v]));
const jsValue = (value) => (Array.isArray(value) && value.length === 2 ? { kind: value[0], id: value[1] } : value);

const OPS = {
  canonicalize: (api, a) => api.canonicalize(a.text),
  verify: (api, a) => api.verifySignedDocument(a.kind, a.text, new api.Registry(bundleBytes(a.registry))),
  parse_frame: (api, a) => api.parseFrame(a.text),
  budget_consume: (api, a) => {
    const ledger = new api.BudgetLedger();
    ledger.registerMission('m', usage(a.limit), { currency: 'USD' });
    ledger.registerWorkItem('w', 'm', usage(a.limit));
    ledger.consume(a.work_item, usage(a.delta));
  },
  budget_rebuild: (api, a) => api.BudgetLedger.rebuild(a.text),
  scheduler_reprioritize: (api, a) => {
    const s = new api.Scheduler({});
    assert.ok(s.admit({ workId: 'a', groupId: 'g' }, T0).accepted);
    s.reprioritize(a.work_id, a.priority);
  },
  replay_found_without_record: (api, a) => {
    const log = { lookup: () => ({ status: 'found' }), append: () => assert.fail('replay never appends') };
    api.replayHistorical(a.kind, bundleBytes(a.document), new api.Registry(bundleBytes(a.registry)), log);
  },
  // The Agent side: napi only (`napi_only` cases; the WebAssembly build refuses the call).
  session_verify: (api, a) => new api.SessionAuthority(new api.AgentKeyRegistry(), { secret: new Uint8Array(32).fill(7) }).verifySession(a.token),
  local_store_remember_event: (api, a) => {
    const store = new api.SqliteAgentStore(':memory:');
    for (const [groupId, sequence] of [a.first, a.second]) store.rememberEvent('agent', a.event_id, groupId, sequence);
  },
  replay_sequence: (api, a) => {
    const replay = new api.AgentReplay('agent', new api.SqliteAgentStore(':memory:'),
      async () => [{ eventId: a.event_id, groupId: 'g', sequence: a.sequence }],
      async () => assert.fail('a refused Event is never projected'));
    return replay.reconcile('g');
  },
  core_config: (api, a) => {
    const keyId = 'urn:missionweaveprotocol:key:authority';
    const authority = { type: 'service', id: 'urn:missionweaveprotocol:service:group-authority' };
    const seed = (n) => new Uint8Array(32).fill(n);
    const builder = new api.RegistryBuilder('urn:missionweaveprotocol:organization:acme');
    builder.addKey(keyId, authority, api.SigningKey.fromSeed(keyId, seed(30)).publicKey, '2026-01-01T00:00:00Z');
    const registry = new api.Registry(builder.build());
    const publicSeed = a.snapshot_authority_public_key_seed;
    const offline = a.offline_limits;
    return new api.Core({
      registry,
      authority,
      authorityKey: api.SigningKey.fromSeed(keyId, seed(a.key_seed)),
      snapshotAuthorityKeyId: a.snapshot_authority_key_id ?? undefined,
      snapshotAuthorityPublicKey: publicSeed === null ? undefined : api.SigningKey.fromSeed(keyId, seed(publicSeed)).publicKey,
      offlineLimits: offline === null ? undefined : { maxDisconnectGraceMs: offline.max_disconnect_grace_ms, maxActions: offline.max_actions },
    });
  },
  scheduler_rebuild: (api, a) => {
    const source = Array.isArray(a.source) ? a.source.map((o) => ({ workId: o.work_id, groupId: o.group_id })) : a.source;
    api.Scheduler.rebuild(source, {}, T0);
  },
  budget_rebuild_value: (api, a) => api.BudgetLedger.rebuild(a.value),
  retry_restore_value: (api, a) => api.RetryController.restore(a.value),
  // A Core over a SQLite store (in memory) closed after the Core was built: its replay fails on
  // the store (napi only: no database in the WebAssembly build).
  core_closed_store: async (api, a) => {
    const store = new api.SQLiteStore();
    await store.initialize();
    const core = organization(api).core({ store });
    await store.close();
    try {
      await core.replay(a.group_id);
    } finally {
      core.free();
      store.free();
    }
  },
  scheduler_cancel: (api, a) => {
    const s = new api.Scheduler({});
    assert.ok(s.admit({ workId: 'a', groupId: 'g' }, T0).accepted);
    s.cancel(a.work_id);
  },
};

// Ops the corpus marks `napi_only` that the WebAssembly build serves since `auth` and `policy`
// moved into core/ffi (sans-IO; crypto.getRandomValues is the host's randomness): there the
// error is napi's.
const WASM_SERVES = new Set(['session_verify']);

let apis;
before(async () => { apis = await backends(); });

test('the corpus covers every op', () => {
  assert.deepEqual(new Set(CORPUS.cases.map((c) => c.op)), new Set(Object.keys(OPS)));
});

for (const name of ['napi (ESM)', 'wasm (ESM)', 'wasm (CommonJS)']) {
  describe(name, () => {
    for (const c of CORPUS.cases) {
      test(c.name, async () => {
        const api = apis[name];
        let error;
        try {
          await OPS[c.op](api, c.args);
        } catch (e) {
          error = e;
        }
        assert.ok(error, 'the call must fail');
        if (c.napi_only && !name.startsWith('napi') && !WASM_SERVES.has(c.op)) {
          // Not in the WebAssembly build: the call is refused as such, before the core.
          assert.ok(error instanceof api.ArgumentError, String(error));
          return;
        }
        const { expect } = c;
        const className = expect.family ? FAMILY_CLASSES[expect.family] : CLASSES[expect.class];
        assert.equal(error.constructor.name, className, String(error));
        assert.ok(error instanceof api[className]);
        assert.ok(error instanceof api.MwpError);
        if (expect.family) {
          assert.ok(error instanceof api.MissionWeaveProtocolError);
          assert.equal(error.family, expect.family);
        }
        if (expect.retryable !== undefined) assert.equal(error.retryable, expect.retryable);
        assert.equal(error.code, expect.code);
        assert.equal(error.reason, expect.reason);
        assert.equal(error.stage, expect.stage);
        if (expect.fields !== null) {
          const want = Object.fromEntries(Object.entries(expect.fields).map(([k, v]) => [camel(k), jsValue(v)]));
          assert.deepEqual({ ...error.fields }, want);
          for (const [k, v] of Object.entries(want)) assert.deepEqual(error[k], v, k);
        }
        if (expect.message !== null) assert.equal(error.message, expect.message);
        assert.ok(!error.message.includes('{ '), error.message);
      });
    }
  });
}
