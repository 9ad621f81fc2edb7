// The backends' typed entry points (core/ffi: one Rust function per operation, one napi and one
// wasm-bindgen export each): both backends expose the same operations under the same names and
// no method-name dispatch (`call`, `callFunction`, `contextCall`); a malformed call shape is the
// same ArgumentError on both, naming its path; and the rules the package used to spell in
// JavaScript (the retryable codes, the human key ID, the 15-minute lifetimes) are read from the
// core.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';

import { ADDON, DIST, JS, backends } from './support.mjs';

const require = createRequire(import.meta.url);
const RAWS = {
  napi: require(ADDON),
  wasm: require(join(DIST, 'wasm-node', 'missionweaveprotocol_wasm.js')),
};
const T0 = Date.UTC(2026, 6, 15, 9, 30);

// The classes whose operations both backends serve from the same core/ffi object.
const CLASSES = ['Lease', 'Ledger', 'Delegation', 'Retry', 'Scheduler', 'PolicyMembershipTokens', 'PolicyAuthorization',
  'PolicyBudgetMeter', 'PolicyGuard', 'AuthKeyRegistry', 'AuthSessionAuthority', 'Registry', 'RegistryBuilder', 'Core'];
// The functions of the full builds that replaced `callFunction(name)` and `contextCall(name)`.
const FUNCTIONS = ['idempotencyKey', 'derivedAttemptKey', 'parseDurationMs', 'vocabularies', 'offlineConstants', 'retryableWireCodes',
  'controlCommand', 'controlApproval', 'controlVerify', 'controlDefaultKeyId', 'contextPublish', 'contextVerify', 'contextInstall',
  'contextKnowledgePublish', 'contextKnowledgeVerify', 'contextSnapshotArchive', 'contextSnapshotVerify', 'leaseOwnership',
  'leaseBlocked', 'leaseCoordinator', 'leaseFromDocument', 'ledgerRebuild', 'retryRestore', 'schedulerRestore', 'schedulerRebuild',
  'policyDefaults', 'policyClassifyAction', 'policyCooperationLimitsDefaults', 'authDefaultAgentKeyId'];

// The operations of a class: its prototype's methods, without the bindings' own plumbing.
function operations(Class) {
  return Object.getOwnPropertyNames(Class.prototype)
    .filter((name) => name !== 'constructor' && name !== 'free' && !name.startsWith('__') && typeof Class.prototype[name] === 'function')
    .sort();
}

function misuse(envelope, argument) {
  const { error } = JSON.parse(envelope);
  assert.equal(error?.class, 'ArgumentError', envelope);
  assert.equal(error.code, 'PROTOCOL_VIOLATION');
  assert.equal(error.reason, 'invalid-argument');
  assert.equal(error.fields.argument, argument, envelope);
  return error.message;
}

describe('typed entry points', () => {
  test('napi and wasm expose the same operations, and no dispatch by name', () => {
    for (const name of CLASSES) {
      assert.equal(typeof RAWS.napi[name], 'function', `napi ${name}`);
      assert.equal(typeof RAWS.wasm[name], 'function', `wasm ${name}`);
      assert.deepEqual(operations(RAWS.wasm[name]), operations(RAWS.napi[name]), name);
      assert.ok(!operations(RAWS.napi[name]).includes('call'), `${name}.call`);
    }
    for (const name of FUNCTIONS) {
      for (const [backend, raw] of Object.entries(RAWS)) assert.equal(typeof raw[name], 'function', `${backend} ${name}`);
    }
    for (const raw of Object.values(RAWS)) {
      for (const gone of ['Handle', 'callFunction', 'contextCall']) assert.equal(raw[gone], undefined, gone);
    }
  });

  for (const [backend, raw] of Object.entries(RAWS)) {
    test(`${backend}: a malformed call shape is the ArgumentError naming its path`, () => {
      const scheduler = new raw.Scheduler('[{"capacitySlots":1}]');
      assert.equal(scheduler.status(), '{"ok":null}');
      assert.match(misuse(scheduler.admit('[{"workId":"w"},0]'), 'offer.groupId'), /required/);
      misuse(scheduler.admitMany('[[{"workId":"w","groupId":"g","slots":-1}],0]'), 'offers[0].slots');
      misuse(scheduler.unblock('[7,0]'), 'workId');
      misuse(scheduler.state('not json'), 'arguments');
      misuse(new raw.Scheduler('[{"colour":1}]').status(), 'policy.colour');
      misuse(new raw.Lease('[{"leaseId":"urn:l"}]').status(), 'lease.missionId');
      misuse(raw.ledgerRebuild('[42]').status(), 'snapshot');
      misuse(new raw.Retry('[{"policy":{}}]').status(), 'options.policy.maxAttempts');
      misuse(raw.idempotencyKey('["urn:m","urn:w",-1,"op"]'), 'ownershipEpoch');
      misuse(raw.parseDurationMs('[1]'), 'duration');
      misuse(raw.controlVerify('[{},7,"x"]'), 'keyId');
      const ledger = new raw.Ledger();
      misuse(ledger.consume('["urn:w",{"toolCalls":1.5}]'), 'delta.toolCalls');
    });
  }
});

describe('rules read from the core', () => {
  let apis;
  before(async () => { apis = await backends(); });

  test('retryable codes: the core\'s retryable_wire_code vocabulary, on every entry', async () => {
    const verify = await import(join(DIST, 'node-verify.mjs'));
    for (const [name, raw] of Object.entries(RAWS)) {
      assert.deepEqual(JSON.parse(raw.retryableWireCodes()).ok, apis['napi (ESM)'].vocabularies().retryable_wire_code, name);
    }
    for (const api of [...Object.values(apis), verify]) {
      const v = apis['napi (ESM)'].vocabularies();
      for (const code of v.wire_code) {
        assert.equal(new api.MwpError('x', { code }).retryable, v.retryable_wire_code.includes(code), code);
      }
      assert.equal(new api.MwpError('x', { code: 'RATE_LIMITED', retryable: false }).retryable, false);
    }
  });

  test('a human key\'s default ID is the core\'s (control::default_key_id)', () => {
    for (const [name, api] of Object.entries(apis)) {
      const human = 'urn:missionweaveprotocol:human:alice';
      assert.equal(api.HumanIdentity.generate(human).keyId, JSON.parse(RAWS.napi.controlDefaultKeyId(human)).ok, name);
      assert.equal(api.HumanIdentity.generate(human, { keyId: 'urn:missionweaveprotocol:key:k' }).keyId, 'urn:missionweaveprotocol:key:k');
    }
  });

  test('the 15-minute lifetimes are the core\'s (policyDefaults: MAXIMUM_TTL_MS, MAXIMUM_GRANT_TTL_MS, SessionConfig)', () => {
    for (const raw of Object.values(RAWS)) {
      const defaults = JSON.parse(raw.policyDefaults()).ok;
      assert.deepEqual(Object.keys(defaults).sort(), ['capabilityGrantMaximumTtlMs', 'challengeTtlMs', 'membershipTokenMaximumTtlMs', 'sessionTtlMs']);
      const api = apis[raw === RAWS.napi ? 'napi (ESM)' : 'wasm (ESM)'];
      const secret = new Uint8Array(32).fill(9);
      const binding = { principal: 'urn:a', groupId: 'urn:g', roles: ['r'], membershipEpoch: 1, sessionEpoch: 1, now: T0 };
      const tokens = new api.MembershipTokenService({ secret });
      assert.equal(tokens.issue({ ...binding, ttlMs: defaults.membershipTokenMaximumTtlMs }).claims.expiresAt, T0 + defaults.membershipTokenMaximumTtlMs);
      assert.throws(() => tokens.issue({ ...binding, ttlMs: defaults.membershipTokenMaximumTtlMs + 1 }), api.PolicyError);
    }
  });

  test('js/src spells none of these rules (comments may name them)', () => {
    const files = [join(JS, 'src', 'api.mjs'), ...readdirSync(join(JS, 'src', 'api')).map((f) => join(JS, 'src', 'api', f))];
    for (const file of files) {
      const code = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
      for (const rule of [/15 \* 60/, /signing-key/, /RETRYABLE_CODES/, /'RATE_LIMITED', 'BACKPRESSURE'/]) {
        assert.ok(!rule.test(code), `${file}: ${rule}`);
      }
    }
  });
});
