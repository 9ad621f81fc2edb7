// The signed human control interface (reference `control`, §1.6). Every Command is built by the
// core (`missionweaveprotocol_engine::control`, on both backends) from the arguments and the
// projections queried here, with the core's defaults for absent arguments; this queries, signs
// with the human's key and performs. The interface's own refusals (nothing submitted, a missing
// budget, a bad argument) are the core's, as ArgumentError.

import { ArgumentError, NotFound, open } from './errors.mjs';
import { argumentJson, checkString, jsonArgs, toMillis } from './convert.mjs';
import { SignedDocument } from './signed_documents.mjs';
import { deepFreeze, hidden } from './values.mjs';

export function controlApi({ raw, SigningKey, signDocument }) {
  const keys = new WeakMap();

  /** A human's signing identity (reference `HumanIdentity`); the private key is never enumerable. */
  class HumanIdentity {
    constructor(humanId, privateKey, publicKey, keyId) {
      this.humanId = checkString(humanId, 'humanId');
      this.publicKey = checkString(publicKey, 'publicKey');
      this.keyId = checkString(keyId, 'keyId');
      const key = SigningKey.fromSeedBase64url(this.keyId, checkString(privateKey, 'privateKey'));
      hidden(this, { privateKey });
      keys.set(this, key);
      Object.freeze(this);
    }

    /** A fresh key (`crypto.getRandomValues`); the key ID defaults to the core's (the reference's `<humanId>:signing-key`). */
    static generate(humanId, { keyId } = {}) {
      const id = keyId ?? open(raw.controlDefaultKeyId(checkString(humanId, 'humanId')));
      const key = SigningKey.generate(id);
      return new HumanIdentity(humanId, key.toSeedBase64url(), key.publicKeyBase64url, id);
    }

    get principal() { return { type: 'human', id: this.humanId }; }

    /** The SigningKey (bind its public key to the human in the Registry). */
    get signingKey() { return keys.get(this); }

    /** The Command (object or JSON text) signed with this key: a SignedDocument (§6.4). */
    sign(command) {
      const text = typeof command === 'string' ? command : argumentJson(command, 'command');
      return signDocument('command', text, { key: keys.get(this) });
    }

    /** Whether the Command (SignedDocument, object or text) carries a valid signature by this key. */
    verify(command) {
      const document = command instanceof SignedDocument ? JSON.parse(command.text)
        : typeof command === 'string' ? JSON.parse(command) : command;
      return open(raw.controlVerify(jsonArgs([document, this.keyId, this.publicKey])));
    }

    toJSON() { return { humanId: this.humanId, publicKey: this.publicKey, keyId: this.keyId }; }
  }

  /** A performed control operation: the signed Command and its first Event. */
  class ControlReceipt {
    constructor(command, event) {
      this.command = command;
      this.event = event;
      Object.freeze(this);
    }
  }

  const clean = (args) => Object.fromEntries(Object.entries(args).map(([k, v]) => [k, v ?? null]));
  const issuedText = (value) => new Date(toMillis(value, 'clock()')).toISOString().replace('.000Z', 'Z');

  /** The MissionOwner's operations on a Core (reference `HumanControl`), each signed by `identity`. */
  class HumanControl {
    #accepted = new Map();
    #clock;
    #actionIds;

    constructor(core, identity, { clock, actionIdFactory } = {}) {
      if (!(identity instanceof HumanIdentity)) throw new ArgumentError('identity must be a HumanIdentity');
      if (!core || typeof core.perform !== 'function') throw new ArgumentError('core must be a Core');
      this.core = core;
      this.identity = identity;
      this.#clock = clock ?? Date.now;
      this.#actionIds = actionIdFactory ?? (() => `human-action:${globalThis.crypto.randomUUID()}`);
      Object.freeze(this);
    }

    async #optional(query) {
      try { return await this.core.query(query); } catch (e) { if (e instanceof NotFound) return null; throw e; }
    }

    async #events(groupId) {
      const events = [];
      for (let after = 0; ;) {
        const page = await this.core.replay(groupId, { after, limit: 1000 });
        events.push(...page.events);
        if (page.continuation === null || page.continuation === undefined) return events;
        after = page.continuation;
      }
    }

    async #request(operation, args, missionId, { events = false, coordinator } = {}) {
      const request = {
        operation, humanId: this.identity.humanId, actionId: this.#actionIds(),
        issuedAt: issuedText(this.#clock()), args: clean(args),
      };
      if (missionId !== undefined) {
        const mission = await this.core.query({ kind: 'mission', entityId: missionId });
        request.mission = mission;
        request.group = await this.core.query({ kind: 'group', entityId: mission.groupId });
        request.membership = await this.#optional({ kind: 'membership', entityId: this.identity.humanId, groupId: mission.groupId, actorType: 'human' });
        if (events) request.events = (await this.#events(mission.groupId)).map((e) => e.document);
      }
      if (coordinator !== undefined) request.coordinatorCard = await this.#optional({ kind: 'agent_card', entityId: coordinator });
      return request;
    }

    async #perform(request) {
      const command = this.identity.sign(open(raw.controlCommand(jsonArgs([request]))));
      const { event } = await this.core.perform(command);
      this.#accepted.set(event.eventId, command);
      return new ControlReceipt(command, event);
    }

    // Absent arguments take the core's defaults (`control::build`: no permissions, a 300 s
    // Coordinator lease, no mentions, no extra resources, acceptance policy 1.0.0).
    async create({ missionId, groupId, coordinatorId, title, objective, definitionOfDone, deadline, budget,
      permissions, coordinatorLeaseSeconds, mainConversationId, approvalPolicy, coordinatorLeaseId } = {}) {
      const args = {
        missionId, groupId, coordinatorId, title, objective, definitionOfDone,
        deadline: deadline instanceof Date ? issuedText(deadline) : deadline,
        budget, permissions, coordinatorLeaseSeconds, mainConversationId, approvalPolicy, coordinatorLeaseId,
      };
      return this.#perform(await this.#request('create', args, undefined, { coordinator: coordinatorId }));
    }

    /** `{mission, group, workItems, events}` of the Mission (NotFound for an unknown one). */
    async inspect(missionId) {
      const mission = await this.core.query({ kind: 'mission', entityId: missionId });
      const group = await this.core.query({ kind: 'group', entityId: mission.groupId });
      const workItems = await this.core.query({ kind: 'mission_work_items', entityId: missionId });
      const events = await this.#events(mission.groupId);
      return Object.freeze({ mission, group, workItems, events: Object.freeze(events) });
    }

    async direct(missionId, content, { conversationId, messageId, mentions } = {}) {
      return this.#perform(await this.#request('direct', { content, conversationId, messageId, mentions }, missionId));
    }

    async requestChanges(missionId, feedback, { missionRevision } = {}) {
      const request = await this.#request('request_changes', { feedback, missionRevision }, missionId,
        { events: missionRevision === undefined || missionRevision === null });
      return this.#perform(request);
    }

    /** Resolves to `[receipt, approval]`: the signed Approval Decision document (approval.schema.json). */
    async approve(missionId, { approvalId, missionRevision, artifactHashes, acceptancePolicyVersion, comments } = {}) {
      const args = { approvalId, missionRevision, artifactHashes, acceptancePolicyVersion, comments };
      const request = await this.#request('approve', args, missionId,
        { events: missionRevision === undefined || missionRevision === null || !artifactHashes });
      const receipt = await this.#perform(request);
      const unsigned = open(raw.controlApproval(jsonArgs([{
        command: JSON.parse(receipt.command.text), event: receipt.event.document, mission: request.mission,
      }])));
      const approval = signDocument('approval', JSON.stringify(unsigned), { key: this.identity.signingKey });
      return [receipt, deepFreeze(JSON.parse(approval.text))];
    }

    /** Resolves to `[receipt, executionApproval]`: the Execution Approval the Core stored (§12). */
    async approveExecution(missionId, { workItemId, ownershipEpoch, operations, resources, budget,
      expiresInSeconds, approvalId, comments } = {}) {
      const args = { workItemId, ownershipEpoch, operations, resources, budget, expiresInSeconds, approvalId, comments };
      const receipt = await this.#perform(await this.#request('approve_execution', args, missionId));
      const id = JSON.parse(receipt.command.text).payload.approvalId;
      return [receipt, await this.core.query({ kind: 'execution_approval', entityId: id })];
    }

    async cancel(missionId, reason) {
      return this.#perform(await this.#request('cancel', { reason }, missionId));
    }

    async replaceCoordinator(missionId, coordinatorId, { leaseSeconds, agentCardVersion, leaseId } = {}) {
      const request = await this.#request('replace_coordinator',
        { coordinatorId, leaseSeconds, agentCardVersion, leaseId }, missionId, { coordinator: coordinatorId });
      return this.#perform(request);
    }

    /** The signed Command this object performed whose Event is `eventId` (NotFound otherwise):
     * the Core does not store Commands. */
    async acceptedCommand(eventId) {
      const command = this.#accepted.get(eventId);
      if (command === undefined) {
        throw new NotFound(`no Command of this HumanControl produced Event ${eventId}`,
          { code: 'GROUP_NOT_FOUND', reason: 'not_found', retryable: false, fields: { eventId } });
      }
      return command;
    }
  }

  /** `{mission, membership}` of the human from a Group's Event documents alone (core `control::view`). */
  function controlView(humanId, events) {
    if (!Array.isArray(events)) throw new ArgumentError('events must be a list of Event documents');
    return deepFreeze(open(raw.controlView(jsonArgs([checkString(humanId, 'humanId'), events]))));
  }

  /** The unsigned wire Command of a control request (core `control::build`). */
  function controlCommand(request) {
    if (request === null || typeof request !== 'object') throw new ArgumentError('request must be an object');
    return open(raw.controlCommand(jsonArgs([request])));
  }

  return { HumanIdentity, HumanControl, ControlReceipt, controlView, controlCommand };
}
