// Durable Agent-side replay (reference `replay`, §16; napi only): `AgentReplay` awaits the
// JavaScript replay source and projector and hands each Event and its projection to the core's
// per-Group steps (`replay::GroupReplay`): routing by Group, `sequence == cursor + 1`, duplicates
// skipped, admission with rollback, the atomic batch commit of inbox rows, cursor and Scheduler
// snapshot (bindings/node/src/replay.rs). It admits into the user's own Scheduler.

import { ArgumentError, open } from './errors.mjs';
import { argumentJson, checkString, toMillis } from './convert.mjs';
import { NATIVE_OF } from './native.mjs';
import { AdmissionDecision } from './scheduler.mjs';
import { needsSqlite, sequenceOf } from './local_store.mjs';

export function replayApi({ raw, Scheduler, SqliteAgentStore, agentStoreNative }) {
  const schedulerNative = Scheduler[NATIVE_OF];
  const seq = sequenceOf;

  /** What reconciling one Group committed (reference `GroupReplayResult`). */
  class GroupReplayResult {
    constructor(rawResult) {
      this.groupId = rawResult.groupId;
      this.startCursor = rawResult.startCursor;
      this.endCursor = rawResult.endCursor;
      this.appliedEvents = rawResult.appliedEvents;
      this.duplicateEvents = rawResult.duplicateEvents;
      this.admissions = Object.freeze(rawResult.admissions.map((d) => new AdmissionDecision(d)));
      Object.freeze(this);
    }
  }

  function eventFields(event) {
    if (!event || typeof event !== 'object') throw new ArgumentError('replaySource: every Event must be an object');
    const eventId = checkString(event.eventId, 'event.eventId');
    const groupId = event.groupId ?? '';
    const sequence = event.sequence ?? 0;
    return { eventId, groupId: checkString(groupId, 'event.groupId'), sequence: seq(sequence, 'event.sequence') };
  }

  /**
   * Reconciles Groups for `agentId` into `store` and the Worker's Scheduler (reference
   * `AgentReplay`): `replaySource(groupId, {after})` resolves to the Events after `after`,
   * `projector(event)` to `{workOffers}` or null. Batches of Events commit their inbox rows,
   * cursor and Scheduler snapshot in one transaction; when an Event fails, the Events before it
   * stay committed.
   */
  class AgentReplay {
    #native;
    #source;
    #projector;
    #clock;
    #scheduler;
    #running = false;

    constructor(agentId, store, replaySource, projector, options = {}) {
      needsSqlite(raw, 'AgentReplay');
      if (!(store instanceof SqliteAgentStore)) throw new ArgumentError('store must be a SqliteAgentStore');
      if (typeof replaySource !== 'function') throw new ArgumentError('replaySource must be a function');
      if (typeof projector !== 'function') throw new ArgumentError('projector must be a function');
      const { scheduler, schedulerPolicy, clock = Date.now } = options ?? {};
      if (typeof clock !== 'function') throw new ArgumentError('clock must be a function');
      if (scheduler !== undefined && schedulerPolicy !== undefined) {
        throw new ArgumentError('give scheduler or schedulerPolicy, not both', { fields: { argument: 'scheduler' } });
      }
      this.agentId = checkString(agentId, 'agentId');
      if (scheduler !== undefined) {
        schedulerNative(scheduler);
        this.#scheduler = scheduler;
      } else {
        // As the reference: rebuilt from the store's snapshot (running work resumes from a safe
        // checkpoint or waits blocked), or new under the policy.
        const snapshot = store.loadScheduler(this.agentId);
        this.#scheduler = snapshot
          ? Scheduler.rebuild(snapshot, schedulerPolicy ?? {}, toMillis(clock(), 'clock()'))
          : new Scheduler(schedulerPolicy ?? {});
      }
      const native = new raw.AgentReplay(agentStoreNative(store), this.agentId);
      open(native.status());
      this.#native = native;
      this.#source = replaySource;
      this.#projector = projector;
      this.#clock = clock;
      Object.freeze(this);
    }

    /** Drops the native state now: this replay's hold on the store's database (idempotent); the Scheduler stays the caller's. */
    free() { this.#native.free(); }

    /** The Worker's Scheduler: the one given in the options, or the one built at construction; replay admits into it. */
    get scheduler() { return this.#scheduler; }

    /** Reconciles each Group (a repeated ID once, in order): `{[groupId]: GroupReplayResult}`. */
    async reconcile(groups) {
      const names = typeof groups === 'string' ? [groups] : [...(groups ?? [])];
      if (this.#running) throw new ArgumentError('AgentReplay: a reconcile is already running');
      this.#running = true;
      try {
        const results = {};
        for (const groupId of new Set(names)) results[groupId] = await this.#group(checkString(groupId, 'groupId'));
        return results;
      } finally {
        this.#running = false;
      }
    }

    async #group(groupId) {
      const native = this.#native;
      open(native.begin(groupId));
      for (;;) {
        let fresh = 0;
        try {
          const events = await this.#source(groupId, { after: open(native.cursor()) });
          if (events && typeof events === 'object' && typeof events[Symbol.iterator] !== 'function'
              && 'throughSequence' in events) {
            // §16 CURSOR_TOO_OLD: the source answered a verified snapshot; restore it and ask
            // again after its `throughSequence`.
            const offers = argumentJson([...(events.projection?.workOffers ?? [])], 'snapshot.projection.workOffers');
            open(native.installSnapshot(schedulerNative(this.#scheduler), checkString(events.artifactHash, 'snapshot.artifactHash'),
              seq(events.throughSequence, 'snapshot.throughSequence'), offers, toMillis(this.#clock(), 'clock()')));
            continue;
          }
          if (!events || typeof events[Symbol.iterator] !== 'function') {
            throw new ArgumentError('replaySource must resolve to an array of Events or a ReplaySnapshot');
          }
          for (const event of events) {
            const { eventId, groupId: group, sequence } = eventFields(event);
            if (!open(native.check(eventId, group, sequence))) continue;
            const projection = await this.#projector(event);
            const offers = projection == null ? undefined : argumentJson([...(projection.workOffers ?? [])], 'workOffers');
            open(native.apply(schedulerNative(this.#scheduler), eventId, sequence, offers, toMillis(this.#clock(), 'clock()')));
            fresh += 1;
          }
        } catch (error) {
          // Keep the progress before the failing Event, then report the failure.
          try { open(native.commit(schedulerNative(this.#scheduler))); } catch { /* the first failure is the one reported */ }
          throw error;
        }
        if (fresh === 0) {
          open(native.commit(schedulerNative(this.#scheduler)));
          return new GroupReplayResult(open(native.result()));
        }
      }
    }
  }

  return { AgentReplay, GroupReplayResult };
}
