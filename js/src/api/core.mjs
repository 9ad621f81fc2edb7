// The authoritative Core (reference `core`): `Core` performs signed Commands, answers queries and
// replays a Group's Events, each call a Promise (the napi addon runs it on the libuv thread pool;
// the WebAssembly build answers synchronously and the Promise is made here). Every set-up rule
// (`CoreConfig`) and every refusal (a MissionWeaveProtocolError of the core's ErrorCode family)
// is the core's.

import { ArgumentError, MwpError, open } from './errors.mjs';
import { argumentJson, checkString, isArrayBuffer, principalOf, toBytes, toMillis } from './convert.mjs';
import { NativeTable, disposable, settle } from './native.mjs';
import { SignedDocument } from './signed_documents.mjs';
import { deepFreeze, encoder } from './values.mjs';

/** What `Core.query` can read (the reference's `QueryKind`). */
export const QueryKind = Object.freeze({
  COMMAND: 'command', AGENT_CARD: 'agent_card', SESSION_EPOCH: 'session_epoch', MISSION: 'mission', GROUP: 'group',
  MEMBERSHIP: 'membership', CONVERSATION: 'conversation', MESSAGE: 'message', MESSAGE_AMENDMENT: 'message_amendment',
  WORK_PROPOSAL: 'work_proposal', WORK_ITEM: 'work_item', MISSION_WORK_ITEMS: 'mission_work_items', ARTIFACT: 'artifact',
  APPROVAL: 'approval', EXECUTION_APPROVAL: 'execution_approval', COOPERATION_OVERRIDE_GRANT: 'cooperation_override_grant',
  POLICY_LOG: 'policy_log', GROUP_SNAPSHOT: 'group_snapshot', DELEGATION_GRANT: 'delegation_grant',
  EXECUTION_LEASE: 'execution_lease', BUDGET_REMAINING: 'budget_remaining',
});

/** One signed Group Event as the Core stored it: `text` and `bytes` are its exact RFC 8785 form. */
export class Event {
  #document;
  #bytes;

  constructor(raw, groupId) {
    this.eventId = raw.eventId;
    this.groupId = groupId;
    this.sequence = raw.sequence;
    this.text = raw.body;
    Object.freeze(this);
  }

  /** The canonical signed bytes (a fresh copy): what a subscriber receives and verifies. */
  get bytes() {
    this.#bytes ??= encoder.encode(this.text);
    return this.#bytes.slice();
  }

  /** The Event document (`event.schema.json`), parsed once and frozen. */
  get document() {
    this.#document ??= deepFreeze(JSON.parse(this.text));
    return this.#document;
  }

  /** The Event kind (`mission.created`, `work.offer.accepted`, …). */
  get kind() { return this.document.kind; }

  get payload() { return this.document.payload; }

  get actionId() { return this.document.actionId; }

  get aggregateRevision() { return this.document.aggregateRevision; }

  /** The document, so `JSON.stringify(event)` gives the Event itself. */
  toJSON() { return this.document; }
}

/** What `Core.perform` resolves to: the Command's Events, in Group order. */
export class PerformResult {
  constructor(raw) {
    this.groupId = raw.groupId;
    /** True when the same signed Command was applied before: `events` holds its original first Event (§15.1). */
    this.duplicate = raw.duplicate;
    this.events = Object.freeze(raw.events.map((e) => new Event(e, raw.groupId)));
    Object.freeze(this);
  }

  /** The first Event (the Command's own; later ones are its consequences, e.g. §10.2 row 18). */
  get event() { return this.events[0]; }
}

/** One page of `Core.replay`: `continuation` is the `after` of the next page, null at the head (§16). */
export class ReplayPage {
  constructor(raw, groupId) {
    this.groupId = groupId;
    this.events = Object.freeze(raw.events.map((e) => new Event(e, groupId)));
    this.continuation = raw.continuation;
    this.lastSequence = raw.lastSequence;
    Object.freeze(this);
  }
}

export function coreApi(ctx) {
  const { raw, withRegistry, SigningKey, seedOf, documentBytes, storeNative, isStore } = ctx;
  const cores = new NativeTable(raw);
  // The store each Core was built over (the Node gateway's PostgreSQL fan-out reads its URL).
  const coreStores = new WeakMap();

  function commandBytes(command) {
    // A SignedDocument, also one made by the other backend's module (its own class object).
    if (command instanceof SignedDocument || (command?.kind === 'command' && typeof command.text === 'string' && command.bytes instanceof Uint8Array)) {
      return documentBytes(command.text, 'command');
    }
    if (command !== null && typeof command === 'object' && !ArrayBuffer.isView(command) && !isArrayBuffer(command)) {
      return encoder.encode(argumentJson(command, 'command'));
    }
    return documentBytes(command, 'command');
  }

  // An answer with Events: the header envelope, then each Event's canonical text on its own
  // line (RFC 8785 text holds no raw line feed), so the bytes cross unescaped.
  function withEvents(envelope) {
    const split = envelope.indexOf('\n');
    if (split < 0) return open(envelope);
    const head = open(envelope.slice(0, split));
    const bodies = envelope.slice(split + 1).split('\n');
    if (bodies.length !== head.events.length) throw new MwpError('the core answered with a malformed Event list', { code: 'INTERNAL_ERROR' });
    head.events.forEach((event, i) => { event.body = bodies[i]; });
    return head;
  }

  /**
   * The authoritative Core of one Organization's Groups (reference `core.Core`): `perform` a
   * signed wire Command, `query` a projection, `replay` a Group's Events. Commands are verified
   * by all six stages against `registry`, checked for freshness, then decided by the Rust
   * engine; Events are signed with the Group Authority's key.
   */
  /** The §20 limits the core reads (the reference's `CooperationLimits` members in camelCase;
   * an absent member keeps the default, `null` means no limit); other members are ignored. */
  class Core {
    #clock;

    constructor({ registry, authority, authorityKey, store, clock, eventIdPrefix, maxFutureSkewMs, maxAgeMs, maxAttempts, bootstrapServices, policyServices, cooperationLimits, offlineLimits, snapshotAuthorityKeyId, snapshotAuthorityPublicKey } = {}) {
      const principal = principalOf(authority, 'authority');
      if (!(authorityKey instanceof SigningKey)) throw new ArgumentError('authorityKey must be a SigningKey');
      if (clock !== undefined && typeof clock !== 'function') throw new ArgumentError('clock must be a function returning a Date or milliseconds');
      if (store !== undefined && !isStore(store)) {
        throw new ArgumentError('store must be an InMemoryStore or an SQLStore');
      }
      // Every set-up rule (ranges, defaults, the authority key bound in the Registry, random
      // Event IDs when no prefix is given) is the core's CoreConfig: this only converts.
      const config = argumentJson({
        authority: { type: principal.type, id: principal.id },
        eventIdPrefix: eventIdPrefix === undefined ? null : checkString(eventIdPrefix, 'eventIdPrefix'),
        maxFutureSkewMs: maxFutureSkewMs ?? null,
        maxAgeMs: maxAgeMs ?? null,
        maxAttempts: maxAttempts ?? null,
        bootstrapServices: bootstrapServices ?? null,
        policyServices: policyServices ?? null,
        cooperationLimits: cooperationLimits ?? null,
        offlineLimits: offlineLimits ?? null,
        // §7.4: the core checks that the pair (both or neither) names the Group Authority's key.
        snapshotAuthorityKeyId: snapshotAuthorityKeyId ?? null,
        snapshotAuthorityPublicKey: snapshotAuthorityPublicKey === undefined || snapshotAuthorityPublicKey === null
          ? null
          : (typeof snapshotAuthorityPublicKey === 'string' ? snapshotAuthorityPublicKey : open(raw.base64urlEncode(toBytes(snapshotAuthorityPublicKey, 'snapshotAuthorityPublicKey')))),
      }, 'options');
      // The native core always takes a store: a new one unless the caller shares theirs (the
      // core keeps its own reference, so this one is freed at once).
      const own = store === undefined ? new raw.InMemoryStore() : undefined;
      const seed = seedOf(authorityKey);
      let handle;
      try {
        const native = own ?? storeNative(store);
        handle = withRegistry(registry, (r) => new raw.Core(config, r, seed, authorityKey.keyId, native));
      } finally {
        own?.free?.();
      }
      try {
        open(handle.status());
      } catch (error) {
        handle.free?.();
        throw error;
      }
      cores.set(this, handle);
      if (store !== undefined) coreStores.set(this, store);
      this.#clock = clock ?? Date.now;
    }

    #now() { return toMillis(this.#clock(), 'clock()'); }

    /**
     * Verifies and applies one signed Command (its exact bytes, text, a SignedDocument, or the
     * parsed object) at the clock's `now`. Resolves to its Events; rejects with a
     * MissionWeaveProtocolError subclass (`code`, `family`, `reason`) and nothing applied.
     */
    async perform(command) {
      const handle = cores.get(this, 'Core');
      const bytes = commandBytes(command);
      const now = this.#now();
      return new PerformResult(await settle(() => handle.perform(bytes, now), withEvents));
    }

    /** A projection (`{kind, entityId, groupId?, actorType?}`, kind a QueryKind). */
    async query(query) {
      if (!query || typeof query !== 'object') throw new ArgumentError('query must be {kind, entityId, groupId?, actorType?}');
      const { kind, entityId, groupId = null, actorType = null } = query;
      const handle = cores.get(this, 'Core');
      const text = argumentJson({ kind, entityId, groupId, actorType }, 'query');
      const now = this.#now();
      return deepFreeze(await settle(() => handle.query(text, now)));
    }

    /** Up to `limit` (1–10,000) Events of the Group after sequence `after`, with the continuation (§16). */
    async replay(groupId, { after = 0, limit = 1000 } = {}) {
      checkString(groupId, 'groupId');
      // The core checks the ranges (one rule for every binding); only the types are JavaScript's.
      if (typeof after !== 'number') throw new ArgumentError('after must be a number', { fields: { argument: 'after' } });
      if (typeof limit !== 'number') throw new ArgumentError('limit must be a number', { fields: { argument: 'limit' } });
      const handle = cores.get(this, 'Core');
      const page = await settle(() => handle.replay(groupId, after, limit), withEvents);
      return new ReplayPage(page, groupId);
    }
  }
  disposable(cores, [Core]);
  /** The native core of a `Core` (the gateway host serves it). */
  ctx.coreNative = (core) => cores.get(core, 'Core');
  ctx.coreStore = (core) => coreStores.get(core);

  return { Core };
}
