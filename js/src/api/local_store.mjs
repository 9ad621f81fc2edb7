// The Agent-local store (reference `local_store`, §16; napi only: a browser has no SQLite file):
// `SqliteAgentStore`, the core's `SqliteAgentStore` (cursor, inbox, outbox, Group context,
// checkpoints, the Scheduler snapshot). Every rule and refusal (`LocalStoreError`) is the core's;
// this converts arguments (bindings/node/src/local_store.rs). Agent replay reads a store's native
// object through `agentStoreNative`.

import { ArgumentError, open } from './errors.mjs';
import { argumentJson, checkString, snapshotText } from './convert.mjs';
import { SchedulerSnapshot } from './scheduler.mjs';

/** A sequence or revision: a number (the core checks its range). */
export function sequenceOf(value, what) {
  if (typeof value !== 'number') throw new ArgumentError(`${what} must be a number`);
  return value;
}

/** Refuses `what` where the backend has no SQLite (the WebAssembly build). */
export function needsSqlite(raw, what) {
  if (typeof raw.AgentStore !== 'function') {
    throw new ArgumentError(`${what} needs a SQLite file: use the Node (napi) entry, not the WebAssembly build`);
  }
}

export function localStoreApi(ctx) {
  const { raw } = ctx;
  const natives = new WeakMap();
  const id = (value, what) => checkString(value, what);
  const seq = sequenceOf;

  /** The Agent-local store (reference `SQLiteAgentStore`): `':memory:'` for a private in-memory database. */
  class SqliteAgentStore {
    #native;

    constructor(path) {
      needsSqlite(raw, 'SqliteAgentStore');
      this.path = checkString(path, 'path');
      const native = new raw.AgentStore(this.path);
      open(native.status());
      this.#native = native;
      natives.set(this, native);
      Object.freeze(this);
    }

    acknowledge(agentId, groupId, sequence) {
      open(this.#native.acknowledge(id(agentId, 'agentId'), id(groupId, 'groupId'), seq(sequence, 'sequence')));
    }

    cursor(agentId, groupId) { return open(this.#native.cursor(id(agentId, 'agentId'), id(groupId, 'groupId'))); }

    rememberEvent(agentId, eventId, groupId, sequence) {
      return open(this.#native.rememberEvent(id(agentId, 'agentId'), id(eventId, 'eventId'),
        groupId == null ? undefined : id(groupId, 'groupId'), sequence == null ? undefined : seq(sequence, 'sequence')));
    }

    hasEvent(agentId, eventId) { return open(this.#native.hasEvent(id(agentId, 'agentId'), id(eventId, 'eventId'))); }

    /** `{groupId, sequence}` where the Event was processed, or null. */
    eventPosition(agentId, eventId) {
      const found = open(this.#native.eventPosition(id(agentId, 'agentId'), id(eventId, 'eventId')));
      return found && Object.freeze(found);
    }

    enqueueAction(agentId, actionId, payload) {
      return open(this.#native.enqueueAction(id(agentId, 'agentId'), id(actionId, 'actionId'), argumentJson(payload, 'payload')));
    }

    pendingActions(agentId) { return open(this.#native.pendingActions(id(agentId, 'agentId'))); }

    markActionSent(agentId, actionId) { return open(this.#native.markActionSent(id(agentId, 'agentId'), id(actionId, 'actionId'))); }

    saveGroupContext(agentId, groupId, revision, values) {
      open(this.#native.saveGroupContext(id(agentId, 'agentId'), id(groupId, 'groupId'), seq(revision, 'revision'), argumentJson(values, 'values')));
    }

    /** `{revision, values}` or null. */
    groupContext(agentId, groupId) { return open(this.#native.groupContext(id(agentId, 'agentId'), id(groupId, 'groupId'))); }

    saveCheckpoint(agentId, groupId, workId, checkpointId, content) {
      open(this.#native.saveCheckpoint(id(agentId, 'agentId'), id(groupId, 'groupId'), id(workId, 'workId'),
        id(checkpointId, 'checkpointId'), argumentJson(content, 'content')));
    }

    loadCheckpoint(agentId, groupId, workId, checkpointId) {
      return open(this.#native.loadCheckpoint(id(agentId, 'agentId'), id(groupId, 'groupId'), id(workId, 'workId'), id(checkpointId, 'checkpointId')));
    }

    deleteCheckpoint(agentId, groupId, workId, checkpointId) {
      return open(this.#native.deleteCheckpoint(id(agentId, 'agentId'), id(groupId, 'groupId'), id(workId, 'workId'), id(checkpointId, 'checkpointId')));
    }

    saveScheduler(agentId, snapshot) {
      open(this.#native.saveScheduler(id(agentId, 'agentId'), snapshotText(snapshot, 'snapshot')));
    }

    /** The stored `SchedulerSnapshot`, or null. */
    loadScheduler(agentId) {
      const found = open(this.#native.loadScheduler(id(agentId, 'agentId')));
      return found && new SchedulerSnapshot(found);
    }

    /** Closes the database (idempotent; an `AgentReplay` not yet freed keeps it open until it is); later calls throw. */
    close() { open(this.#native.close()); }
  }

  /** The native store of a `SqliteAgentStore` (for `AgentReplay`). */
  ctx.agentStoreNative = (store) => natives.get(store);
  ctx.SqliteAgentStore = SqliteAgentStore;

  return { SqliteAgentStore };
}
