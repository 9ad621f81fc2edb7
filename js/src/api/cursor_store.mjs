// The browser's durable Cursors for `AgentClient` (§16): one IndexedDB object store keyed by
// [agentId, groupId], holding the acknowledged sequence. The same contract as the Cursors of a
// `SqliteAgentStore` (core/store-sqlite `acknowledge`: monotonic, an older sequence leaves the
// Cursor unchanged; an unknown Group is 0), asynchronous because IndexedDB is. The client awaits
// `cursor` before each SUBSCRIBE and `acknowledge` before each ACK, so a reload of the page
// resumes after the last acknowledged Event.

import { ArgumentError, LocalStoreError } from './errors.mjs';
import { checkString } from './convert.mjs';

const CURSOR_OBJECTS = 'cursors';

function idbRequest(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(new LocalStoreError(`IndexedDB: ${req.error?.message ?? 'request failed'}`));
  });
}

function checkCursorSequence(sequence) {
  if (!Number.isSafeInteger(sequence) || sequence < 0) throw new ArgumentError('sequence must be a non-negative safe integer');
  return sequence;
}

/**
 * `await IndexedDbCursorStore.open(name)`: the Cursors in the IndexedDB database `name` (of this
 * origin). `cursor(agentId, groupId)` and `acknowledge(agentId, groupId, sequence)` resolve once
 * the transaction is durable; `close()` releases the database.
 */
export class IndexedDbCursorStore {
  #db;

  constructor(db) {
    if (typeof IDBDatabase === 'undefined' || !(db instanceof IDBDatabase)) {
      throw new ArgumentError('use await IndexedDbCursorStore.open(name)');
    }
    this.#db = db;
    this.name = db.name;
  }

  /** Opens (creating if needed) the database `name`. */
  static async open(name = 'missionweaveprotocol-cursors') {
    checkString(name, 'name');
    if (typeof indexedDB === 'undefined') throw new ArgumentError('IndexedDbCursorStore needs IndexedDB (a browser or worker)');
    const req = indexedDB.open(name, 1);
    req.onupgradeneeded = () => { req.result.createObjectStore(CURSOR_OBJECTS); };
    return new IndexedDbCursorStore(await idbRequest(req));
  }

  /** The acknowledged sequence of `groupId` for `agentId` (0 when none). */
  async cursor(agentId, groupId) {
    const key = [checkString(agentId, 'agentId'), checkString(groupId, 'groupId')];
    const value = await idbRequest(this.#db.transaction(CURSOR_OBJECTS, 'readonly').objectStore(CURSOR_OBJECTS).get(key));
    return value === undefined ? 0 : value;
  }

  /** Moves the Cursor forward to `sequence` (an older one leaves it unchanged). */
  async acknowledge(agentId, groupId, sequence) {
    const key = [checkString(agentId, 'agentId'), checkString(groupId, 'groupId')];
    checkCursorSequence(sequence);
    const tx = this.#db.transaction(CURSOR_OBJECTS, 'readwrite', { durability: 'strict' });
    const store = tx.objectStore(CURSOR_OBJECTS);
    const done = new Promise((resolve, reject) => {
      tx.oncomplete = () => resolve();
      tx.onabort = () => reject(new LocalStoreError(`IndexedDB: ${tx.error?.message ?? 'transaction aborted'}`));
    });
    const current = store.get(key);
    current.onsuccess = () => {
      if (current.result === undefined || current.result < sequence) store.put(sequence, key);
    };
    await done;
  }

  close() { this.#db.close(); }
}
