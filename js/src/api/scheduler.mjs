// The Worker-local Scheduler (§10.3, §11.1–§11.4; reference `scheduler`): its vocabularies, its
// decisions and actions, its snapshot, and `Scheduler` (one core Scheduler each, `core/ffi`
// `SchedulerHandle`). Every admission rule, fairness and preemption decision is the core's. The
// Agent runtime and Agent replay work on the user's own Scheduler through `NATIVE_OF`.

import { ArgumentError, internal, open } from './errors.mjs';
import { argumentJson, jsonArgs, snapshotText, toMillis } from './convert.mjs';
import { NATIVE_OF, NativeTable, OK_NULL, adopt, disposable, invoke } from './native.mjs';
import { deepFreeze } from './values.mjs';

/** Scheduler-local state of a non-terminal item. */
export const WorkState = Object.freeze({ READY: 'ready', RUNNING: 'running', PREEMPTING: 'preempting', BLOCKED: 'blocked' });

/** Fine admission reasons (§10.3). */
export const AdmissionReason = Object.freeze({
  ACCEPTED: 'accepted', DUPLICATE: 'duplicate', IDENTIFIER_COLLISION: 'identifier_collision',
  ALREADY_TERMINAL: 'already_terminal', WORKER_FULL: 'worker_full', GROUP_FULL: 'group_full',
  GROUP_NOT_ALLOWED: 'group_not_allowed', GROUP_QUOTA_DISABLED: 'group_quota_disabled',
  UNSUPPORTED_CAPABILITY: 'unsupported_capability', EXCEEDS_CAPACITY: 'exceeds_capacity',
  DEADLINE_EXPIRED: 'deadline_expired', NOT_AUTHORIZED: 'not_authorized',
  DEPENDENCY_UNSATISFIED: 'dependency_unsatisfied', BUDGET_UNAVAILABLE: 'budget_unavailable',
});

/** Worker reports about a running item (`Scheduler.apply`). */
export const TransitionKind = Object.freeze({
  CHECKPOINT_SAVED: 'checkpoint_saved', PREEMPTION_DECLINED: 'preemption_declined', BLOCKED: 'blocked',
  RELEASED: 'released', COMPLETED: 'completed', FAILED: 'failed',
});

/** The result of `Scheduler.admit`: `declineReason` is the coarse §10.3 category (null when accepted). */
export class AdmissionDecision {
  constructor(raw) { Object.assign(this, raw); Object.freeze(this); }
}

/** Start `workId` in `slots` slots (run `runId` = `workId:generation`), resuming from `resumeFrom` if set. */
export class Dispatch {
  constructor(raw) {
    this.workId = raw.workId;
    this.groupId = raw.groupId;
    this.runId = raw.runId;
    this.generation = raw.generation;
    this.slots = raw.slots;
    this.resumeFrom = raw.resumeFrom ? Object.freeze(raw.resumeFrom) : null;
    Object.freeze(this);
  }
}

/** Ask the run `runId` to reach a durable, safe checkpoint and yield (§11.3). */
export class Preempt {
  constructor(raw) {
    this.workId = raw.workId;
    this.groupId = raw.groupId;
    this.runId = raw.runId;
    this.generation = raw.generation;
    Object.freeze(this);
  }
}

/** A §11.2 disclosure (times in ms; null while blocked without a retry time). */
export class ScheduleDisclosure {
  constructor(raw) { Object.assign(this, raw); Object.freeze(this); }
}


/** The Scheduler's persisted state (JSON form of the core's snapshot; `JSON.stringify` it to store). */
export class SchedulerSnapshot {
  constructor(document) {
    const doc = typeof document === 'string' ? JSON.parse(document) : document;
    if (!doc || typeof doc !== 'object') throw new ArgumentError('SchedulerSnapshot: expected an object or JSON text');
    Object.assign(this, structuredClone(doc));
    deepFreeze(this);
  }
}


export function schedulerApi({ raw }) {
  const handles = new NativeTable(raw);
  const call = (self, op, args) => invoke(handles, self, op, args);

  function actionOf(action) { return action.type === 'dispatch' ? new Dispatch(action) : new Preempt(action); }

  /** The Worker-local weighted-fair Scheduler (§10.3, §11.1–§11.4); time is always an argument. */
  class Scheduler {
    constructor(policy = {}) { adopt(handles, this, new raw.Scheduler(jsonArgs({ policy }))); }

    /** Exact restore: the same inputs give the same decisions. */
    static restore(snapshot, policy = {}) {
      const args = jsonArgs({ snapshot: snapshotText(snapshot, 'snapshot'), policy });
      return adopt(handles, Object.create(Scheduler.prototype), raw.schedulerRestore(args));
    }

    /**
     * Rebuild after a restart at `now`: from a snapshot, running work resumes from a durable safe
     * checkpoint or blocks (`runtime_session_lost`); from an array of offers, they are admitted in
     * order, and a declined one refuses the rebuild (SchedulerError `offer_declined`). No offers
     * (`[]`, the core's `NoOffers`) and anything else are an ArgumentError naming `source`.
     */
    static rebuild(source, policy = {}, now) {
      const at = toMillis(now, 'now');
      if (Array.isArray(source)) {
        // The core admits them in order and refuses a declined one (`offer_declined`).
        const args = jsonArgs({ source, policy, now: at });
        return adopt(handles, Object.create(Scheduler.prototype), raw.schedulerFromOffers(args));
      }
      const args = jsonArgs({ snapshot: snapshotText(source, 'source'), policy, now: at });
      return adopt(handles, Object.create(Scheduler.prototype), raw.schedulerRebuild(args));
    }

    admit(offer, now) { return new AdmissionDecision(call(this, (h, a) => h.admit(a), { offer, now: toMillis(now, 'now') })); }

    /** Admits offers in order in one crossing; a malformed offer rejects the whole batch. */
    admitMany(offers, now) {
      if (!Array.isArray(offers)) throw new ArgumentError('offers must be an array');
      return call(this, (h, a) => h.admitMany(a), { offers, now: toMillis(now, 'now') }).map((d) => new AdmissionDecision(d));
    }

    /** Every decision due at `now`: Dispatch actions, then at most one Preempt. */
    schedule(now) {
      const at = toMillis(now, 'now');
      const handle = handles.get(this);
      let envelope;
      try { envelope = handle.schedule(at); } catch (error) { throw internal(error); }
      return open(envelope).map(actionOf);
    }

    /** A Worker report about the current run: `{kind, generation, checkpoint?, retryAt?, reason?}`. */
    apply(workId, transition, now) {
      if (typeof workId !== 'string') throw new ArgumentError('workId must be a string');
      const text = argumentJson(transition, 'transition');
      const at = toMillis(now, 'now');
      const handle = handles.get(this);
      let envelope;
      try { envelope = handle.apply(workId, text, at); } catch (error) { throw internal(error); }
      if (envelope !== OK_NULL) open(envelope);
    }

    unblock(workId, now) { call(this, (h, a) => h.unblock(a), [workId, toMillis(now, 'now')]); }

    cancel(workId) { call(this, (h, a) => h.cancel(a), [workId]); }

    reprioritize(workId, priority) { call(this, (h, a) => h.reprioritize(a), { workId, priority }); }

    setCapacity(capacitySlots) { call(this, (h, a) => h.setCapacity(a), { capacitySlots }); }

    setGroupPolicy(groupId, policy) { call(this, (h, a) => h.setGroupPolicy(a), { groupId, policy }); }

    /** The WorkState of a non-terminal item, else null. */
    state(workId) { return call(this, (h, a) => h.state(a), [workId]); }

    generation(workId) { return call(this, (h, a) => h.generation(a), [workId]); }

    isTerminal(workId) { return call(this, (h, a) => h.isTerminal(a), [workId]); }

    forget(workId) { return call(this, (h, a) => h.forget(a), [workId]); }

    /** The §11.2 disclosure at `now` (own Group and Worker aggregates only), or null. */
    disclose(workId, now) {
      const out = call(this, (h, a) => h.disclose(a), [workId, toMillis(now, 'now')]);
      return out && new ScheduleDisclosure(out);
    }

    get size() { return call(this, (h) => h.stats()).size; }

    get usedSlots() { return call(this, (h) => h.stats()).usedSlots; }

    get capacitySlots() { return call(this, (h) => h.stats()).capacitySlots; }

    /** H: the largest head start priority or deadline can give an item (starvation bound). */
    get horizonMs() { return call(this, (h) => h.stats()).horizonMs; }

    snapshot() { return new SchedulerSnapshot(call(this, (h) => h.snapshot())); }
  }
  disposable(handles, [Scheduler]);

  // The native Scheduler of a package Scheduler, for the objects that share the user's own
  // (AgentRuntime, AgentReplay): never a copy.
  function schedulerNative(scheduler) {
    if (!(scheduler instanceof Scheduler)) throw new ArgumentError('scheduler must be a Scheduler', { fields: { argument: 'scheduler' } });
    return handles.get(scheduler, 'Scheduler');
  }
  Object.defineProperty(Scheduler, NATIVE_OF, { value: schedulerNative });

  return { Scheduler };
}
