// RetryController state survives a Worker restart (§11.4; issue 12): `snapshot()` is the core's
// versioned document with its `integrity` checksum and `RetryController.restore` rebuilds exactly
// that state — attempts, usage, backoff and the attempt in flight — on every backend. A tampered,
// malformed or unreachable snapshot is the core's SnapshotError (`INTERNAL_ERROR`).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { backends } from './support.mjs';

const T0 = Date.UTC(2026, 6, 15, 9, 30);
const OPTIONS = {
  policy: { maxAttempts: 3, backoff: 'fixed', initialDelayMs: 100, maxDelayMs: 100, retryableFailures: ['TIMEOUT'] },
  costBudget: { toolCalls: 5 }, missionId: 'urn:mission:1', workItemId: 'urn:work:1', ownershipEpoch: 1,
};

for (const [name, api] of Object.entries(await backends())) {
  test(`${name}: a restored controller continues where the snapshot left off`, () => {
    const r = new api.RetryController(OPTIONS);
    assert.equal(r.currentAttempt, null);
    const first = r.begin('charge', T0);
    r.consume({ toolCalls: 2 });
    const schedule = r.finish({ success: false, code: 'TIMEOUT' }, T0 + 10);
    assert.equal(schedule.retry, true);
    r.begin('charge', T0 + 200);
    const snapshot = r.snapshot();
    assert.ok(Object.isFrozen(snapshot));
    assert.match(snapshot.integrity, /^sha256:/);
    for (const input of [snapshot, JSON.stringify(snapshot)]) {
      const restored = api.RetryController.restore(input);
      assert.ok(restored instanceof api.RetryController);
      assert.equal(restored.attempts, 2);
      assert.equal(restored.usage.toolCalls, 2);
      assert.deepEqual({ ...restored.currentAttempt }, { logicalOperationId: 'charge', startedAt: T0 + 200 });
      assert.deepEqual(restored.snapshot(), snapshot);
      // The in-flight attempt keeps its key (§11.4: presented again, never a new one).
      assert.equal(restored.idempotencyKey('charge'), first.idempotencyKey);
      // The bound holds across the restart: one attempt left.
      assert.equal(restored.finish({ success: false, code: 'TIMEOUT' }, T0 + 210).retry, true);
      restored.begin('charge', T0 + 400);
      const last = restored.finish({ success: false, code: 'TIMEOUT' }, T0 + 410);
      assert.deepEqual([last.retry, last.reason], [false, 'attempts_exhausted']);
      restored.free();
    }
  });

  test(`${name}: a tampered, malformed or unreachable snapshot is refused`, () => {
    const r = new api.RetryController(OPTIONS);
    r.begin('charge', T0);
    const snapshot = r.snapshot();
    const refused = (input, reason) => assert.throws(() => api.RetryController.restore(input), (error) => {
      assert.ok(error instanceof api.SnapshotError, `${error?.name}: ${error?.message}`);
      assert.equal(error.code, 'INTERNAL_ERROR');
      if (reason) assert.equal(error.reason, reason);
      return true;
    });
    // An edit that forgets the checksum.
    refused({ ...snapshot, attempts: 0 }, 'integrity_mismatch');
    refused({ ...snapshot, version: 99 });
    refused({});
    // Text that is not JSON is the strict parser's ParseError, as for every snapshot.
    assert.throws(() => api.RetryController.restore('not json'), api.ParseError);
    assert.throws(() => api.RetryController.restore(42), api.ArgumentError);
    assert.throws(() => api.RetryController.restore(undefined), api.ArgumentError);
  });
}
