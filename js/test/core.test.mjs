// The authoritative Core through both backends (napi on the libuv pool, wasm synchronous in a
// Promise): a full Mission from signed wire Commands, every Event verified by our own
// six-stage verifier and event.schema.json; error codes and families; duplicates and Action ID
// collisions; replay continuation; forged and stale Commands refused with nothing applied.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { backends } from './support.mjs';
import {
  AUTHORITY, CONVERSATION, COORDINATOR, GROUP, MISSION, NOW, OWNER, SELECTION_BASIS, SERVICE, W1, contract, createPayload,
  missionFlow, organization, worker,
} from './core-support.mjs';

let apis;
before(async (t) => { apis = await backends(); });

/** Every Event passes the six stages (Event profile) and event.schema.json, accepted by the authority. */
function checkEvent(api, org, event) {
  const verified = api.verifySignedDocument('event', event.bytes, org.registry);
  assert.deepEqual({ ...verified.principal }, { type: 'service', id: AUTHORITY });
  api.validateSchema('event', event.text);
  assert.equal(event.document.eventId, event.eventId);
  assert.equal(event.document.sequence, event.sequence);
  assert.equal(event.document.groupId, event.groupId);
  assert.deepEqual(event.document.acceptedBy, { type: 'service', id: AUTHORITY });
  assert.equal(api.canonicalize(event.text), event.text, 'Events cross as their exact RFC 8785 text');
}

/** The whole Group log, checked contiguous from 1. */
async function wholeLog(core) {
  const page = await core.replay(GROUP, { after: 0, limit: 10_000 });
  page.events.forEach((event, i) => assert.equal(event.sequence, i + 1));
  assert.equal(page.continuation, null);
  return page.events;
}

/** Expects `promise` to reject with `Class`, wire `code` and `family`; returns the error. */
async function refused(api, promise, Class, code, family) {
  const error = await promise.then(() => assert.fail(`applied; expected ${code}`), (e) => e);
  assert.ok(error instanceof api.MissionWeaveProtocolError, `${error?.name}: ${error?.message}`);
  assert.ok(error instanceof api.MwpError);
  assert.ok(error instanceof Class, `${error.name} (${error.code}/${error.reason}) is not ${Class.name}`);
  assert.equal(error.code, code, `${error.code}/${error.reason}: ${error.message}`);
  assert.equal(error.family, family);
  assert.deepEqual(error.asDict(), { code: family, message: error.message, details: { ...error.fields } });
  return error;
}

for (const name of ['napi (ESM)', 'wasm (ESM)']) {
  describe(`Core: ${name}`, () => {
    test('a Mission from creation to approval, from signed wire Commands', async (t) => {
      const api = apis[name];
      const org = organization(api);
      const core = await org.ready();
      t.after(() => core.free());
      const results = await missionFlow(org, core, (step, result, kind) => {
        assert.equal(result.duplicate, false, step);
        assert.equal(result.groupId, GROUP, step);
        assert.equal(result.event.kind, kind, step);
        for (const event of result.events) checkEvent(api, org, event);
      });
      const log = await wholeLog(core);
      assert.equal(log.length, 11);
      const performed = Object.values(results).flatMap((r) => r.events);
      assert.deepEqual(log.map((e) => e.text), performed.map((e) => e.text), 'replay returns the performed Events byte for byte');
      const mission = await core.query({ kind: api.QueryKind.MISSION, entityId: MISSION });
      assert.equal(mission.state, 'approved');
      const item = await core.query({ kind: 'work_item', entityId: W1 });
      assert.equal(item.state, 'verified');
      assert.ok(Object.isFrozen(mission));
      const items = await core.query({ kind: api.QueryKind.MISSION_WORK_ITEMS, entityId: MISSION });
      assert.deepEqual(items.map((i) => i.workItemId), [W1]);
      const membership = await core.query({ kind: 'membership', entityId: worker(1), groupId: GROUP, actorType: 'agent' });
      assert.equal(membership.state, 'active');
      assert.equal(membership.role, 'worker');
      api.validateSchema('membership', JSON.stringify(membership));
      await refused(api, core.query({ kind: 'membership', entityId: worker(1) }), api.InvalidCommand, 'INVALID_COMMAND', 'invalid_command');
      await refused(api, core.query({ kind: 'approval', entityId: MISSION }), api.InvalidCommand, 'INVALID_COMMAND', 'invalid_command');
    });

    test('refusals carry the §19 code, the reference family and its class; nothing is applied', async (t) => {
      const api = apis[name];
      const org = organization(api);
      const core = await org.ready();
      t.after(() => core.free());
      await refused(api, core.replay(GROUP), api.NotFound, 'GROUP_NOT_FOUND', 'not_found');
      await core.perform(org.command('mission.create', OWNER, createPayload()));
      const before = (await wholeLog(core)).length;
      // A stale Coordinator Epoch (§7.2).
      await refused(api, core.perform(org.command('mission.renew_coordinator', COORDINATOR, {}, { extra: { coordinatorEpoch: 2 } })),
        api.StaleCoordinatorEpoch, 'AUTH_STALE_COORDINATOR', 'stale_coordinator_epoch');
      // Approval of a Mission that was never submitted.
      await refused(api, core.perform(org.command('mission.approve', OWNER, {
        approvalId: 'urn:missionweaveprotocol:approval:1', missionRevision: 1, artifactHashes: [`sha256:${'a'.repeat(64)}`],
      })), api.InvalidTransition, 'INVALID_STATE_TRANSITION', 'invalid_transition');
      // expectedRevision (§15.3): the structured fields come along, camelCase.
      const conflict = await refused(api, core.perform(org.command('mission.cancel', OWNER, { reason: 'no' }, { extra: { expectedRevision: 7 } })),
        api.RevisionConflict, 'REVISION_CONFLICT', 'revision_conflict');
      assert.equal(conflict.expectedRevision, 7);
      assert.equal(conflict.currentRevision, 1);
      // Only the MissionOwner approves; the Coordinator may not cancel.
      await refused(api, core.perform(org.command('mission.cancel', COORDINATOR, { reason: 'no' }, { extra: { coordinatorEpoch: 1 } })),
        api.AuthorizationDenied, 'AUTH_FORBIDDEN', 'authorization_denied');
      // A critical extension the engine does not implement (§18).
      await refused(api, core.perform(org.command('mission.cancel', OWNER, { reason: 'no' }, {
        extra: { extensions: { 'urn:example:extension:unknown': { version: '1.0.0', critical: true, data: {} } } },
      })), api.InvalidCommand, 'UNKNOWN_CRITICAL_EXTENSION', 'invalid_command');
      // A Command issued ten minutes ago: stale (§6.4 freshness), like a bad signature on the wire.
      const stale = await refused(api, core.perform(org.command('mission.cancel', OWNER, { reason: 'no' }, { issuedAt: '2026-07-15T09:20:00Z' })),
        api.AuthorizationDenied, 'AUTH_INVALID_SIGNATURE', 'authorization_denied');
      assert.equal(stale.retryable, false);
      // An unknown query kind and an absent entity.
      await refused(api, core.query({ kind: 'nonsense', entityId: MISSION }), api.InvalidCommand, 'INVALID_COMMAND', 'invalid_command');
      await refused(api, core.query({ kind: 'mission', entityId: 'urn:missionweaveprotocol:mission:none' }), api.NotFound, 'GROUP_NOT_FOUND', 'not_found');
      assert.equal((await wholeLog(core)).length, before, 'refused Commands append nothing');
      assert.equal((await core.query({ kind: 'mission', entityId: MISSION })).state, 'active');
    });

    test('a stale Ownership Epoch is refused (WORK_STALE_OWNERSHIP, stale_ownership_epoch)', async (t) => {
      const api = apis[name];
      const org = organization(api);
      const core = await org.ready();
      t.after(() => core.free());
      await core.perform(org.command('mission.create', OWNER, createPayload()));
      await core.perform(org.byCoordinator('work.authorize', { workItemId: W1, conversationId: CONVERSATION, contract: contract() }));
      await core.perform(org.byCoordinator('work.offer', {
        workItemId: W1, candidates: [{ offerId: 'urn:missionweaveprotocol:offer:r1-0', agentId: worker(1), agentCardVersion: 1 }],
        selectionBasis: SELECTION_BASIS,
      }));
      const accepted = await core.perform(org.command('work.accept_offer', worker(1),
        { workItemId: W1, capabilityPins: [{ id: 'text.summarise', version: '1.2.0' }] }));
      const { ownershipEpoch, ownershipLeaseId } = accepted.event.payload;
      const started = await core.perform(org.command('work.start', worker(1), { workItemId: W1, ownershipEpoch, leaseId: ownershipLeaseId }));
      const { executionLeaseId } = started.event.payload;
      const checkpoint = { currentPhase: 'x', completedMilestones: [], nextCheckpoint: 'y', blockers: [], updatedCompletionEstimate: '2026-07-15T11:00:00Z', evidenceIds: [] };
      await refused(api, core.perform(org.command('work.checkpoint', worker(1), {
        workItemId: W1, ownershipEpoch: ownershipEpoch + 1, leaseId: executionLeaseId, checkpoint,
      })), api.StaleOwnershipEpoch, 'WORK_STALE_OWNERSHIP', 'stale_ownership_epoch');
      // The current epoch with an old lease ID: the lease the Command cites is no longer valid (§11.3).
      await refused(api, core.perform(org.command('work.checkpoint', worker(1), {
        workItemId: W1, ownershipEpoch, leaseId: ownershipLeaseId, checkpoint,
      })), api.LeaseExpired, 'WORK_LEASE_EXPIRED', 'lease_expired');
      const lease = await core.query({ kind: api.QueryKind.EXECUTION_LEASE, entityId: W1 });
      assert.equal(lease.leaseId, executionLeaseId);
      assert.equal(lease.state, 'active');
      assert.equal((await core.perform(org.command('work.checkpoint', worker(1), {
        workItemId: W1, ownershipEpoch, leaseId: executionLeaseId, checkpoint,
      }))).event.kind, 'work.checkpointed');
    });

    test('the same signed Command again returns its original Event; another one under its Action ID collides', async (t) => {
      const api = apis[name];
      const org = organization(api);
      const core = await org.ready();
      t.after(() => core.free());
      const create = org.command('mission.create', OWNER, createPayload(), { actionId: 'urn:missionweaveprotocol:action:create' });
      const first = await core.perform(create);
      const again = await core.perform(create.bytes);
      assert.equal(again.duplicate, true);
      assert.equal(again.event.text, first.event.text, 'the original Event, byte for byte');
      // The parsed object of the same signed Command is the same Command (the signature covers its RFC 8785 form).
      const asObject = await core.perform(JSON.parse(create.text));
      assert.equal(asObject.duplicate, true);
      const other = org.command('mission.create', OWNER, { ...createPayload(), objective: 'Another objective' }, { actionId: 'urn:missionweaveprotocol:action:create' });
      const collision = await refused(api, core.perform(other), api.ActionIdCollision, 'ACTION_ID_COLLISION', 'action_id_collision');
      assert.equal(collision.reason.length > 0, true);
      assert.equal((await wholeLog(core)).length, 1, 'nothing appended by the duplicate or the collision');
    });

    test('replay pages with a continuation to the head; bounds are the core\'s', async (t) => {
      const api = apis[name];
      const org = organization(api);
      const core = await org.ready();
      t.after(() => core.free());
      await missionFlow(org, core);
      const seen = [];
      let after = 0;
      let pages = 0;
      for (;;) {
        const page = await core.replay(GROUP, { after, limit: 3 });
        pages += 1;
        assert.equal(page.lastSequence, 11);
        seen.push(...page.events.map((e) => e.sequence));
        if (page.continuation === null) break;
        assert.equal(page.continuation, page.events.at(-1).sequence);
        after = page.continuation;
      }
      assert.equal(pages, 4);
      assert.deepEqual(seen, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
      const empty = await core.replay(GROUP, { after: 11 });
      assert.deepEqual([...empty.events], []);
      assert.equal(empty.continuation, null);
      await refused(api, core.replay(GROUP, { limit: 0 }), api.InvalidCommand, 'INVALID_COMMAND', 'invalid_command');
      await refused(api, core.replay(GROUP, { limit: 10_001 }), api.InvalidCommand, 'INVALID_COMMAND', 'invalid_command');
      await refused(api, core.replay(GROUP, { after: -1 }), api.InvalidCommand, 'INVALID_COMMAND', 'invalid_command');
      await assert.rejects(core.replay(GROUP, { after: 1.5 }), api.ArgumentError);
      await assert.rejects(core.replay(GROUP, { limit: '3' }), api.ArgumentError);
    });

    test('a forged or foreign signature is refused and nothing is applied', async (t) => {
      const api = apis[name];
      const org = organization(api);
      const core = await org.ready();
      t.after(() => core.free());
      const signed = org.command('mission.create', OWNER, createPayload());
      const forged = signed.text.replace('Close the July books', 'Close the June books');
      assert.notEqual(forged, signed.text);
      const error = await refused(api, core.perform(forged), api.AuthorizationDenied, 'AUTH_INVALID_SIGNATURE', 'authorization_denied');
      assert.equal(error.stage, 'signature');
      // Signed by a key the Registry does not hold.
      const stranger = api.SigningKey.fromSeed('urn:missionweaveprotocol:key:stranger', new Uint8Array(32).fill(99));
      const foreign = api.signDocument('command', JSON.stringify(org.unsigned('mission.create', OWNER, createPayload())), { key: stranger });
      await refused(api, core.perform(foreign), api.AuthorizationDenied, 'AUTH_INVALID_SIGNATURE', 'authorization_denied');
      // Not JSON at all: the stage-1 refusal.
      await refused(api, core.perform('{"a":1,"a":2}'), api.InvalidCommand, 'PROTOCOL_VIOLATION', 'invalid_command');
      await refused(api, core.replay(GROUP), api.NotFound, 'GROUP_NOT_FOUND', 'not_found');
      // The genuine bytes still apply.
      assert.equal((await core.perform(signed)).event.kind, 'mission.created');
    });

    test('concurrent work.accept_offer Promises on one offer: exactly one winner, nothing half-applied', async (t) => {
      const api = apis[name];
      const N = 8;
      const org = organization(api, { workers: N });
      const core = await org.ready();
      t.after(() => core.free());
      await core.perform(org.command('mission.create', OWNER, createPayload()));
      await core.perform(org.byCoordinator('work.authorize', {
        workItemId: W1, conversationId: CONVERSATION, contract: contract(),
      }));
      await core.perform(org.byCoordinator('work.offer', {
        workItemId: W1,
        candidates: Array.from({ length: N }, (_, i) => ({ offerId: `urn:missionweaveprotocol:offer:r1-${i}`, agentId: worker(i + 1), agentCardVersion: 1 })),
        selectionBasis: SELECTION_BASIS,
      }));
      const accepts = Array.from({ length: N }, (_, i) => org.command('work.accept_offer', worker(i + 1),
        { workItemId: W1, capabilityPins: [{ id: 'text.summarise', version: '1.2.0' }] }));
      const outcomes = await Promise.allSettled(accepts.map((signed) => core.perform(signed)));
      const winners = outcomes.filter((o) => o.status === 'fulfilled');
      assert.equal(winners.length, 1, outcomes.map((o) => o.reason?.code ?? 'ok').join(','));
      for (const loser of outcomes.filter((o) => o.status === 'rejected')) {
        assert.ok(loser.reason instanceof api.MissionWeaveProtocolError, String(loser.reason));
        assert.ok(['WORK_ALREADY_OWNED', 'INVALID_STATE_TRANSITION', 'INTERNAL_ERROR'].includes(loser.reason.code), loser.reason.code);
      }
      const winner = winners[0].value.event;
      assert.equal(winner.kind, 'work.offer.accepted');
      assert.equal(winner.payload.ownershipEpoch, 1);
      const log = await wholeLog(core);
      assert.equal(log.filter((e) => e.kind === 'work.offer.accepted').length, 1);
      assert.equal(log.length, 4);
      const item = await core.query({ kind: 'work_item', entityId: W1 });
      assert.equal(item.state, 'queued');
    });

    test('argument errors, free() and Symbol.dispose', async (t) => {
      const api = apis[name];
      const org = organization(api);
      assert.throws(() => new api.Core({ registry: org.registry, authority: { type: 'service', id: AUTHORITY }, authorityKey: org.keys.get(OWNER).key }),
        (e) => e instanceof api.ArgumentError && /not bound/.test(e.message));
      assert.throws(() => new api.Core({ registry: org.registry }), api.ArgumentError);
      assert.throws(() => org.core({ authorityKey: 'seed' }), api.ArgumentError);
      assert.throws(() => org.core({ maxAgeMs: -1 }), (e) => e instanceof api.ArgumentError && e.argument === 'options.maxAgeMs');
      assert.throws(() => org.core({ maxAttempts: 1.5 }), api.ArgumentError);
      assert.throws(() => org.core({ clock: 5 }), api.ArgumentError);
      const core = await org.ready();
      await assert.rejects(core.perform(42), api.ArgumentError);
      await assert.rejects(core.query({ kind: 'mission' }), api.ArgumentError);
      core.free();
      core.free();
      await assert.rejects(core.perform(org.command('mission.create', OWNER, createPayload())),
        (e) => e instanceof api.ArgumentError && /freed/.test(e.message));
      const disposed = org.core();
      disposed[Symbol.dispose]();
      await assert.rejects(disposed.replay(GROUP), api.ArgumentError);
      // A shared store: a second core over it reads what the first applied.
      const store = new api.InMemoryStore();
      const a = org.core({ store });
      await a.perform(org.command('mission.create', OWNER, createPayload()));
      const b = org.core({ store, eventIdPrefix: 'urn:missionweaveprotocol:event:b-' });
      assert.equal((await b.query({ kind: 'mission', entityId: MISSION })).state, 'active');
      store.free();
      assert.equal((await b.replay(GROUP)).events.length, 1, 'the cores keep the store alive');
      assert.throws(() => org.core({ store }), (e) => e instanceof api.ArgumentError && /freed/.test(e.message));
      a.free();
      b.free();
    });
  });
}

test('the enum objects are the core\'s vocabularies', () => {
  for (const api of Object.values(apis)) {
    const v = api.vocabularies();
    assert.deepEqual(Object.values(api.ErrorCode), v.error_family);
    assert.deepEqual(Object.values(api.QueryKind), v.query_kind);
    for (const className of v.error_family_class) {
      assert.equal(typeof api[className], 'function', className);
      assert.ok(api[className].prototype instanceof api.MissionWeaveProtocolError, className);
    }
    // Every §19 wire code has a family (the Core's one table), and every family a class named
    // after it, also the families the engine cannot produce yet (sessions, budget, §20 controls).
    assert.deepEqual(Object.keys(v.wire_code_family).sort(), [...v.wire_code].sort());
    const camel = (s) => s.split('_').map((w) => w[0].toUpperCase() + w.slice(1)).join('');
    for (const [code, family] of Object.entries(v.wire_code_family)) {
      assert.ok(v.error_family.includes(family), `${code} → ${family}`);
      const error = new api[camel(family)]('text', { code });
      assert.equal(error.family, family);
      assert.equal(error.code, code);
    }
    assert.equal(v.wire_code_family.AUTH_STALE_SESSION, 'stale_session_epoch');
    assert.equal(v.wire_code_family.BUDGET_EXCEEDED, 'budget_exceeded');
    assert.equal(v.wire_code_family.RATE_LIMITED, 'policy_violation');
  }
});

test('a SignedDocument from the other backend is the same Command; noncritical extensions are relayed', async (t) => {
  const napi = organization(apis['napi (ESM)']);
  const wasm = organization(apis['wasm (ESM)']);
  const core = await wasm.ready();
  t.after(() => core.free());
  const extensions = { 'urn:acme:extension:y': { version: '1.0.0', critical: false, data: { k: [1, 2], s: 'é' } } };
  const signed = napi.command('mission.create', OWNER, createPayload(), { extra: { extensions } });
  const { event } = await core.perform(signed);
  assert.equal(event.kind, 'mission.created');
  assert.deepEqual(event.document.extensions, extensions, 'relayed unchanged into the Event (§18)');
});

test('napi and wasm emit byte-identical Events for the same Commands, clock and Event IDs', async (t) => {
  const logs = [];
  for (const name of ['napi (ESM)', 'wasm (ESM)', 'wasm (CommonJS)']) {
    const org = organization(apis[name]);
    const core = await org.ready();
    t.after(() => core.free());
    await missionFlow(org, core);
    logs.push((await wholeLog(core)).map((e) => e.text));
  }
  assert.equal(logs[0].length, 11);
  assert.deepEqual(logs[1], logs[0]);
  assert.deepEqual(logs[2], logs[0]);
});

test('the Core\'s clock is read per call and passed to the engine (freshness at that instant)', async (t) => {
  const api = apis['napi (ESM)'];
  const org = organization(api);
  let now = NOW + 301_000;
  const core = org.core({ clock: () => now });
  t.after(() => core.free());
  const create = org.command('mission.create', OWNER, createPayload());
  await refused(api, core.perform(create), api.AuthorizationDenied, 'AUTH_INVALID_SIGNATURE', 'authorization_denied');
  now = new Date(NOW + 1_000);
  assert.equal((await core.perform(create)).event.kind, 'mission.created');
});

test('§20 cooperation limits and the bootstrap services are the core\'s', async (t) => {
  const api = apis['napi (ESM)'];
  const org = organization(api);
  const core = await org.ready({ cooperationLimits: { maximumQueuedWorkItems: 1, maximumActiveWorkItems: null } });
  t.after(() => core.free());
  await core.perform(org.command('mission.create', OWNER, createPayload()));
  await core.perform(org.byCoordinator('work.authorize', { workItemId: W1, conversationId: CONVERSATION, contract: contract() }));
  const second = org.byCoordinator('work.authorize', { workItemId: 'urn:missionweaveprotocol:work:second', conversationId: CONVERSATION, contract: contract() });
  const limited = await refused(api, core.perform(second), api.PolicyViolation, 'RATE_LIMITED', 'policy_violation');
  assert.equal(limited.reason, 'queued_work_items');
  assert.equal(limited.limit, 1);
  // Without the limit the same Command applies.
  const free = await org.ready({ cooperationLimits: { maximumQueuedWorkItems: null } });
  t.after(() => free.free());
  await free.perform(org.command('mission.create', OWNER, createPayload()));
  await free.perform(org.byCoordinator('work.authorize', { workItemId: W1, conversationId: CONVERSATION, contract: contract() }));
  assert.equal((await free.perform(second)).event.kind, 'work.authorized');
  // Session opening is a bootstrap service's: the control-plane service is not one by default.
  const session = await core.query({ kind: 'session_epoch', entityId: COORDINATOR });
  assert.deepEqual({ ...session }, { agentId: COORDINATOR, sessionEpoch: 1 });
  await assert.rejects(core.perform(org.command('mission.cancel', SERVICE, { reason: 'policy' })), api.AuthorizationDenied);
});

test('§11.5 Core-side offline limits: checked by the core at construction', async () => {
  const api = apis['napi (ESM)'];
  const org = organization(api);
  const core = org.core({ offlineLimits: { maxDisconnectGraceMs: 60_000, maxActions: 2, maxUsage: { toolCalls: 5 } } });
  core.free();
  for (const bad of [{ maxDisconnectGraceMs: 0, maxActions: 1 }, { maxDisconnectGraceMs: 1_000, maxActions: 0 }]) {
    assert.throws(() => org.core({ offlineLimits: bad }), (e) => e instanceof api.OfflinePolicyError && e.code === 'INVALID_COMMAND');
  }
  assert.throws(() => org.core({ offlineLimits: { maxDisconnectGraceMs: 1_000, maxActions: 1, maxCalls: 3 } }), api.ArgumentError);
});
