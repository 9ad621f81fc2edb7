// All 58 + 62 + 30 evaluations through the napi addon and the WebAssembly build (ES module and
// CommonJS), each checked against the bundle manifests' own expectations. The byte-exact
// comparison with the Rust core (every record, hash, Principal, Admission Log call) is
// vectors.test.mjs against tests/vectors/evaluations.jsonl.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { backends, runEvaluations, vectorLines } from './support.mjs';

const COUNTS = { structural: 58, cryptography: 62, admission: 30 };
let apis;

before(async () => {
  apis = await backends();
});

test('the golden vectors cover the same 58 + 62 + 30 evaluations as the bundles', () => {
  const vectors = vectorLines('evaluations.jsonl');
  const { records } = runEvaluations(apis['napi (ESM)']);
  assert.deepEqual(vectors.map((v) => `${v.area}/${v.id}`), records.map((r) => `${r.bundle}/${r.id}`));
  for (const [bundle, count] of Object.entries(COUNTS)) {
    assert.equal(vectors.filter((r) => r.area === bundle).length, count, bundle);
  }
});

for (const name of ['napi (ESM)', 'wasm (ESM)', 'wasm (CommonJS)']) {
  describe(name, () => {
    test('every evaluation meets its manifest expectation', () => {
      const api = apis[name];
      const { records, problems } = runEvaluations(api);
      assert.deepEqual(problems, []);
      for (const [bundle, count] of Object.entries(COUNTS)) {
        assert.equal(records.filter((r) => r.bundle === bundle).length, count, `${bundle} evaluations`);
      }
      const seen = new Set();
      for (const record of records) {
        const key = `${record.bundle}/${record.id}`;
        assert.ok(!seen.has(key), `${key} twice`);
        seen.add(key);
      }
      assert.equal(seen.size, 150);
      const verdicts = records.reduce((n, r) => ({ ...n, [r.verdict]: (n[r.verdict] ?? 0) + 1 }), {});
      assert.deepEqual(verdicts, { valid: 27, invalid: 31, complete: 12 + 12, rejected: 50 + 18 });
    });

    test('the embedded conformance runner passes every bundle', () => {
      const report = apis[name].runConformance();
      assert.equal(report.ok, true);
      assert.deepEqual(report.bundles.map((b) => [b.bundle, b.passed, b.total, b.ok]),
        [['structural', 58, 58, true], ['cryptography', 62, 62, true], ['admission', 30, 30, true]]);
      const ids = report.bundles.flatMap((b) => b.outcomes.map((o) => o.id));
      assert.equal(ids.length, 150);
      assert.ok(report.bundles.every((b) => b.outcomes.every((o) => o.passed)));
      assert.deepEqual(apis[name].runConformance(['admission']).bundles.map((b) => b.summary),
        ['30/30 admission evaluations passed']);
    });

    test('bundle verification summaries', () => {
      const crypto = apis[name].verifyCryptographyBundle();
      assert.equal(crypto.evaluationCount, 62);
      assert.equal(crypto.artifactDigest, 'sha256:5eade516e4bc5dcf04477727ebcccd11f33348b2d9135fb6fe0365c6e6cc2ea3');
      const admission = apis[name].verifyAdmissionBundle();
      assert.equal(admission.evaluationCount, 30);
      assert.equal(admission.cryptographyArtifactDigest, crypto.artifactDigest);
      assert.equal(admission.sourceCommit, apis[name].sourceCommit);
    });
  });
}
