// Context Packages, knowledge publications and Group Snapshots (reference `context`, §13.3,
// §7.4). The rules and the argument shape are the core's (`missionweaveprotocol_agent::context`,
// one backend function per operation); this converts.

import { ArgumentError, open } from './errors.mjs';
import { argumentJson, checkString, toMillis } from './convert.mjs';
import { deepFreeze } from './values.mjs';

export function contextApi({ raw, SigningKey, seedOf, inputBytes }) {
  // One operation of the core's `context` module: `op` names its backend function in code; a
  // signing operation (`signing`) takes the key as `keyId` and seed.
  function call(method, op, args, key, signing = false) {
    if (typeof raw.contextVerify !== 'function') {
      throw new ArgumentError(`the context module (${method}) needs the full core, not the verify-only build`);
    }
    const text = argumentJson(args, 'context arguments');
    if (!signing) return open(op(text));
    const keyId = key ? key.keyId : '';
    const seed = key ? seedOf(key) : new Uint8Array(0);
    return open(op(text, keyId, seed));
  }

  function keyOf(signingKey, what) {
    if (!(signingKey instanceof SigningKey)) throw new ArgumentError(`${what} must be a SigningKey`, { fields: { argument: what } });
    return signingKey;
  }

  function principalOf(value, what) {
    if (!value || typeof value !== 'object') throw new ArgumentError(`${what} must be a {type, id} Principal`, { fields: { argument: what } });
    return { type: checkString(value.type, `${what}.type`), id: checkString(value.id, `${what}.id`) };
  }

  function ownKey(principal, signingKey) {
    return { key: { principal, keyId: signingKey.keyId, publicKey: signingKey.publicKeyBase64url } };
  }

  // An Event of `core.replay` (its `eventId`, `groupId`, `sequence`) or an Event document.
  function eventsOf(events) {
    if (!events || typeof events[Symbol.iterator] !== 'function') throw new ArgumentError('events must be an iterable of Events', { fields: { argument: 'events' } });
    return [...events].map((event) => {
      const doc = event?.document ?? event;
      return { eventId: doc?.eventId, groupId: doc?.groupId, sequence: doc?.sequence };
    });
  }

  const at = (value, what) => (value === undefined || value === null ? Date.now() : toMillis(value, what));
  const documentOf = (value, what) => {
    if (!value || typeof value !== 'object') throw new ArgumentError(`${what} must be a signed document object`, { fields: { argument: what } });
    return value;
  };
  const resolverOf = (registry) => ({ registry: typeof registry === 'string' ? registry : new TextDecoder().decode(inputBytes(registry, 'registry')) });

  /** The Context Packages of one generating Agent (reference `ContextPackageService`). */
  class ContextPackageService {
    #agentId;
    #key;
    constructor({ agentId, signingKey } = {}) {
      this.#agentId = checkString(agentId, 'agentId');
      this.#key = keyOf(signingKey, 'signingKey');
      Object.freeze(this);
    }

    get agentId() { return this.#agentId; }

    /** A signed package of `events` (one contiguous range of `groupId`'s log), deep-frozen. */
    publish({ missionId, groupId, version, events, summary, artifactHashes = [], decisions = [], constraints = [],
      unresolvedQuestions = [], workItemId = null, previousContextPackageId = null, generatedAt, contextPackageId } = {}) {
      const draft = {
        contextPackageId: contextPackageId ?? `urn:missionweaveprotocol:context-package:${globalThis.crypto.randomUUID()}`,
        version, previousContextPackageId, missionId, groupId, workItemId,
        events: eventsOf(events), artifactHashes: [...artifactHashes], summary,
        decisions: [...decisions].map((d) => ({ description: d?.description, sourceEventIds: [...(d?.sourceEventIds ?? [])] })),
        constraints: [...constraints], unresolvedQuestions: [...unresolvedQuestions],
        generatedBy: this.#agentId, generatedAtMs: at(generatedAt, 'generatedAt'),
      };
      return deepFreeze(call('publish', raw.contextPublish, { draft }, this.#key, true).document);
    }

    /** Verifies a package (six stages against this service's key, or `{registry}` bytes), its generator and rules. */
    verify(contextPackage, { registry } = {}) {
      this.#verified(contextPackage, registry);
    }

    #verified(contextPackage, registry) {
      const resolver = registry === undefined || registry === null ? ownKey({ type: 'agent', id: this.#agentId }, this.#key) : resolverOf(registry);
      const text = argumentJson(documentOf(contextPackage, 'contextPackage'), 'contextPackage');
      return call('verify', raw.contextVerify, { text, resolver, generator: this.#agentId }).document;
    }

    /** Verifies and installs the package into its Group of `session` (revision = version). */
    install(contextPackage, session, { expectedMissionId } = {}) {
      const document = this.#verified(contextPackage);
      const out = call('install', raw.contextInstall, { document, expectedMissionId: checkString(expectedMissionId, 'expectedMissionId') });
      session.installGroupContext(out.groupId, out.values, { revision: out.revision });
    }
  }

  /** Classified knowledge publications from Context Packages (reference `KnowledgePublisher`). */
  class KnowledgePublisher {
    #publisher;
    #key;
    constructor({ publisher, signingKey } = {}) {
      this.#publisher = principalOf(publisher, 'publisher');
      this.#key = keyOf(signingKey, 'signingKey');
      Object.freeze(this);
    }

    publish({ context, artifactHash, targetScope, classification, summary, publishedAt, publicationId } = {}) {
      const draft = {
        publicationId: publicationId ?? `urn:missionweaveprotocol:knowledge:${globalThis.crypto.randomUUID()}`,
        targetScope, artifactHash, classification, summary,
        publishedBy: this.#publisher, publishedAtMs: at(publishedAt, 'publishedAt'),
      };
      return deepFreeze(call('knowledgePublish', raw.contextKnowledgePublish, { source: documentOf(context, 'context'), draft }, this.#key, true));
    }

    verify(publication, { context } = {}) {
      call('knowledgeVerify', raw.contextKnowledgeVerify, {
        publication: documentOf(publication, 'publication'),
        publicKey: this.#key.publicKeyBase64url,
        source: context === undefined || context === null ? null : documentOf(context, 'context'),
      });
    }
  }

  /** The archival service's signed Group Snapshots, kept by ID (reference `SnapshotArchive`). */
  class SnapshotArchive {
    #authority;
    #key;
    #snapshots = new Map();
    constructor({ authority, signingKey } = {}) {
      this.#authority = principalOf(authority, 'authority');
      this.#key = keyOf(signingKey, 'signingKey');
    }

    archive({ groupId, events, state = null, policyLog, createdAt, snapshotId } = {}) {
      const request = {
        snapshotId: snapshotId ?? `urn:missionweaveprotocol:snapshot:${globalThis.crypto.randomUUID()}`,
        groupId, events: eventsOf(events), state, policyLog: policyLog ? [...policyLog] : policyLog,
        createdAtMs: at(createdAt, 'createdAt'),
      };
      const snapshot = deepFreeze(call('snapshotArchive', raw.contextSnapshotArchive, { request, authority: this.#authority }, this.#key, true).document);
      this.#snapshots.set(snapshot.snapshotId, snapshot);
      return snapshot;
    }

    /** The snapshot archived under `snapshotId`; throws ArgumentError for an unknown one. */
    get(snapshotId) {
      const found = this.#snapshots.get(checkString(snapshotId, 'snapshotId'));
      if (!found) throw new ArgumentError(`no snapshot ${snapshotId}`, { fields: { argument: 'snapshotId' } });
      return found;
    }

    verify(snapshot) {
      const text = argumentJson(documentOf(snapshot, 'snapshot'), 'snapshot');
      call('snapshotVerify', raw.contextSnapshotVerify, { text, resolver: ownKey(this.#authority, this.#key), authority: this.#authority });
    }
  }

  return { ContextPackageService, KnowledgePublisher, SnapshotArchive };
}
