// Retries (§11.4; reference `execution`): `RetryController` (one core controller each,
// `core/ffi` `RetryHandle`) with its attempts and schedules, and the idempotency keys. Every
// bound (attempts, backoff, deadline, cost budget) and the snapshot's integrity are the core's.

import { jsonArgs, snapshotText, toMillis } from './convert.mjs';
import { open } from './errors.mjs';
import { NativeTable, adopt, disposable, invoke } from './native.mjs';
import { freezeUsage } from './budget.mjs';
import { deepFreeze } from './values.mjs';

/** One started attempt: the stable idempotency key of the logical operation and a per-attempt key. */
export class Attempt {
  constructor(raw) { Object.assign(this, raw); Object.freeze(this); }
}

/** The decision after an attempt (`reason`: completed, permanent_failure, attempts_exhausted, …). */
export class RetrySchedule {
  constructor(raw) { Object.assign(this, raw); Object.freeze(this); }
}


export function executionApi({ raw }) {
  const handles = new NativeTable(raw);
  const call = (self, op, args) => invoke(handles, self, op, args);

  /** Enforces one WorkItem's retry budgets under one Ownership Epoch (§11.4). */
  class RetryController {
    constructor(options) { adopt(handles, this, new raw.Retry(jsonArgs({ options }))); }

    get attempts() { return call(this, (h) => h.state()).attempts; }

    get usage() { return freezeUsage(call(this, (h) => h.state()).usage); }

    /** The final reason once the loop ended, else null. */
    get finished() { return call(this, (h) => h.state()).finished; }

    idempotencyKey(logicalOperationId) { return call(this, (h, a) => h.idempotencyKey(a), [logicalOperationId]); }

    begin(logicalOperationId, now) { return new Attempt(call(this, (h, a) => h.begin(a), { logicalOperationId, now: toMillis(now, 'now') })); }

    /** Ends the running attempt: `{success: true}` or `{success: false, code?, retryable?}`. */
    finish(outcome, now) { return new RetrySchedule(call(this, (h, a) => h.finish(a), { outcome, now: toMillis(now, 'now') })); }

    consume(delta) { return freezeUsage(call(this, (h, a) => h.consume(a), { delta })); }

    /**
     * The whole state as a versioned JSON object (policy, deadline, cost budget, attempts, usage,
     * backoff, final reason, the attempt in flight, `integrity`): persist it to keep the retry
     * bounds across a Worker restart (§11.4). An extension: the reference has no snapshot.
     */
    snapshot() { return deepFreeze(call(this, (h) => h.snapshot())); }

    /**
     * A controller in exactly the state of `snapshot()`'s object (or its JSON text). A malformed,
     * other-version, tampered (`integrity`) or unreachable state is the core's SnapshotError
     * (`INTERNAL_ERROR`).
     */
    static restore(snapshot) {
      const text = snapshotText(snapshot, 'snapshot');
      return adopt(handles, Object.create(RetryController.prototype), raw.retryRestore(jsonArgs([text])));
    }

    /** The attempt in flight as `{logicalOperationId, startedAt}` (ms), else null. */
    get currentAttempt() {
      const current = call(this, (h) => h.currentAttempt());
      return current && Object.freeze(current);
    }
  }
  disposable(handles, [RetryController]);

  /** `sha256:` of the RFC 8785 form of `{missionId, workItemId, ownershipEpoch, logicalOperationId}` (§11.4). */
  function idempotencyKey(missionId, workItemId, ownershipEpoch, logicalOperationId) {
    return open(raw.idempotencyKey(jsonArgs({ missionId, workItemId, ownershipEpoch, logicalOperationId })));
  }

  /** The deterministic per-attempt key: `sha256:` of `{attempt, idempotencyKey}`. */
  function derivedAttemptKey(key, attempt) { return open(raw.derivedAttemptKey(jsonArgs({ key, attempt }))); }

  /** A schema `duration` (`P[nD][T[nH][nM][n[.f]S]]`) in milliseconds, rounded up. */
  function parseDurationMs(duration) { return open(raw.parseDurationMs(jsonArgs([duration]))); }

  return { RetryController, idempotencyKey, derivedAttemptKey, parseDurationMs };
}
