// Every enum object this package exports is spelled exactly as the Rust core spells it: one
// spelling list per vocabulary, in Rust (`missionweaveprotocol_engine::vocabularies`).
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { backends } from './support.mjs';

let apis;
before(async () => { apis = await backends(); });

const sameSet = (actual, expected, what) => {
  assert.equal(actual.length, expected.length, what);
  assert.deepEqual([...actual].sort(), [...expected].sort(), what);
};

for (const name of ['napi (ESM)', 'wasm (ESM)', 'wasm (CommonJS)']) {
  describe(name, () => {
    test('enum objects are the core\'s vocabularies', () => {
      const api = apis[name];
      const v = api.vocabularies();
      assert.ok(Object.isFrozen(v));
      sameSet(Object.values(api.LeaseState), v.lease_state, 'LeaseState');
      sameSet(Object.values(api.DelegationViolationKind), v.delegation_violation_kind, 'DelegationViolationKind');
      sameSet(Object.values(api.WorkState), v.work_state, 'WorkState');
      sameSet(Object.values(api.AdmissionReason), v.scheduler_admission_reason, 'AdmissionReason');
      assert.deepEqual([...api.DOCUMENT_KINDS], v.signed_document_kind);
      // The six §6.4 stages, then `admission`.
      assert.deepEqual([...api.STAGES], v.stage.slice(0, 6));
      // Resource dimensions: the reference's field names, camelCase in JavaScript objects.
      const camel = (s) => s.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
      assert.deepEqual([...api.RESOURCE_DIMENSIONS], v.dimension.map(camel));
    });

    test('every error class the core names exists, and every wire code is known', () => {
      const api = apis[name];
      const v = api.vocabularies();
      assert.equal(v.wire_code.length, 27);
      assert.ok(!v.wire_code.includes('INVALID_ARGUMENT'));
      for (const code of v.wire_code) assert.match(code, /^[A-Z_]+$/);
      assert.deepEqual(Object.keys(v.js_error_class).sort(), [...v.error_class].sort());
      for (const [kind, className] of Object.entries(v.js_error_class)) {
        assert.equal(typeof api[className], 'function', `${kind}: ${className} is exported`);
        assert.ok(api[className].prototype instanceof api.MwpError, className);
      }
    });
  });
}
