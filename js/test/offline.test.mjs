// Bounded offline execution through the napi addon (§11.5; reference `offline.py`): reversible
// progress is bound by the critical extension, re-signed and queued within the grace window and
// the bounds; everything else is refused atomically with OfflinePolicyError and the core's §19
// code and reason; rebasing keeps the binding and re-signs for the current session. The
// WebAssembly build throws ArgumentError.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';

import { DIST } from './support.mjs';

const api = await import(join(DIST, 'node.mjs'));
const wasm = await import(join(DIST, 'node-wasm.mjs'));

const T0 = Date.UTC(2026, 6, 15, 9, 30);
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const AGENT = 'urn:missionweaveprotocol:agent:worker';
const GROUP = 'urn:missionweaveprotocol:group:finance';
const ITEM = 'urn:missionweaveprotocol:work:ledger';
const LEASE = 'urn:missionweaveprotocol:lease:exec-1';
const CONVERSATION = 'urn:missionweaveprotocol:conversation:ledger';
const KEY = api.SigningKey.fromSeed('urn:missionweaveprotocol:key:worker', Uint8Array.from({ length: 32 }, (_, i) => i));
const IDENTITY = Object.freeze({ agentId: AGENT, signingKey: KEY });
const REGISTRY = new api.Registry(new api.RegistryBuilder('urn:example:org')
  .addKey(KEY.keyId, { type: 'agent', id: AGENT }, KEY, '2026-01-01T00:00:00Z').build());

const WORK_ITEM = Object.freeze({
  id: ITEM, groupId: GROUP, conversationId: CONVERSATION, status: 'active', assigneeId: AGENT,
  ownershipEpoch: 2, executionLeaseId: LEASE, executionLeaseExpiresAt: new Date(T0 + 10 * MINUTE), sessionEpoch: 3,
});
const LIMITS = new api.OfflineLimits({ maxDisconnectGraceMs: 5 * MINUTE, maxActions: 2, maxUsage: { modelTokens: 4, computeSeconds: 2 } });

function command(n, kind, payload, extra = {}) {
  return {
    protocolVersion: '0.1', actionId: `urn:uuid:00000000-0000-4000-8000-00000000000${n}`,
    actor: { type: 'agent', id: AGENT }, sessionEpoch: 3, membershipEpoch: 1, groupId: GROUP, workItemId: ITEM,
    kind, correlationId: 'urn:missionweaveprotocol:correlation:1', issuedAt: '2026-07-15T09:30:00Z', payload, ...extra,
  };
}

const checkpoint = (n = 1) => command(n, 'work.checkpoint', {
  ownershipEpoch: 2, leaseId: LEASE,
  checkpoint: { currentPhase: 'draft', completedMilestones: [], nextCheckpoint: 'review', blockers: [], updatedCompletionEstimate: '2026-07-15T11:00:00Z', evidenceIds: [] },
});
const message = (n, content = 'draft ready') => command(n, 'message.post', { messageId: `urn:missionweaveprotocol:message:${n}`, content }, { conversationId: CONVERSATION });

/** A plain-object outbox with the local store's three methods. */
class MapStore {
  rows = new Map();
  sent = new Set();
  enqueueAction(agentId, actionId, payload) {
    if (this.rows.has(actionId) && JSON.stringify(this.rows.get(actionId)) !== JSON.stringify(payload)) throw new Error('collision');
    this.rows.set(actionId, payload);
  }
  pendingActions() { return [...this.rows].filter(([id]) => !this.sent.has(id)).map(([, p]) => p); }
  markActionSent(agentId, actionId) { this.sent.add(actionId); }
}

const policy = (store = new api.InMemoryOutbox(), options = {}) =>
  new api.OfflineExecutionPolicy(store, IDENTITY, WORK_ITEM, { disconnectedAt: T0, limits: LIMITS, ...options });

function refused(fn, code, reason) {
  assert.throws(fn, (error) => {
    assert.ok(error instanceof api.OfflinePolicyError, `${error?.name}: ${error?.message}`);
    assert.equal(error.code, code);
    if (reason) assert.equal(error.reason, reason);
    return true;
  });
}

const verify = (document) => api.verifySignedDocument('command', JSON.stringify(document), REGISTRY);

test('the reference names', () => {
  assert.equal(api.OFFLINE_EXECUTION_EXTENSION, 'urn:missionweaveprotocol:extension:bounded-offline-execution');
  assert.equal(api.OFFLINE_EXECUTION_EXTENSION_VERSION, '0.1.0');
  assert.deepEqual([...api.OFFLINE_REVERSIBLE_KINDS].sort(), ['message.post', 'work.checkpoint']);
  assert.ok(Object.isFrozen(api.OFFLINE_REVERSIBLE_KINDS));
  assert.equal(api.defaultAgentKeyId(AGENT), 'urn:missionweaveprotocol:key:worker');
});

test('reversible progress is bound, signed and queued (SqliteAgentStore and a plain store)', () => {
  for (const store of [new api.SqliteAgentStore(':memory:'), new MapStore()]) {
    const p = policy(store);
    assert.deepEqual(p.graceDeadline, new Date(T0 + 5 * MINUTE));
    const signed = p.buffer(checkpoint(), { usage: { modelTokens: 2, computeSeconds: 1 }, now: T0 + 30 * SECOND });
    assert.ok(Object.isFrozen(signed) && Object.isFrozen(signed.extensions));
    verify(signed);
    const envelope = signed.extensions[api.OFFLINE_EXECUTION_EXTENSION];
    assert.deepEqual([envelope.critical, envelope.version], [true, '0.1.0']);
    const binding = api.OfflineProgressBinding.fromCommand(signed);
    assert.ok(binding instanceof api.OfflineProgressBinding);
    assert.deepEqual([binding.agentId, binding.executionLeaseId, binding.sessionEpoch, binding.ownershipEpoch], [AGENT, LEASE, 3, 2]);
    assert.equal(Date.parse(binding.bufferedAt), T0 + 30 * SECOND);
    assert.deepEqual({ ...binding.resourceUsageDelta }, { ...new api.ResourceUsage({ modelTokens: 2, computeSeconds: 1 }) });
    const second = p.buffer(message(2), { now: T0 + 40 * SECOND });
    verify(second);
    assert.deepEqual(store.pendingActions(AGENT).map((c) => c.actionId), [signed.actionId, second.actionId]);
    assert.equal(p.bufferedActions.length, 2);
    assert.equal(p.cumulativeUsage.modelTokens, 2);
  }
});

test('buffering is idempotent; other content under a buffered Action ID is a collision', () => {
  const p = policy(new api.InMemoryOutbox(), { clock: () => T0 + 5 * SECOND });
  const first = p.buffer(checkpoint(), { usage: { modelTokens: 1 } });
  assert.deepEqual(p.buffer(checkpoint(), { usage: { modelTokens: 1 } }), first);
  assert.equal(p.cumulativeUsage.modelTokens, 1);
  refused(() => p.buffer({ ...checkpoint(), issuedAt: '2026-07-15T09:31:00Z' }), 'ACTION_ID_COLLISION', 'action_id_collision');
  // The in-memory outbox refuses other content too.
  const outbox = new api.InMemoryOutbox();
  outbox.enqueueAction(AGENT, 'a', { v: 1 });
  outbox.enqueueAction(AGENT, 'a', { v: 1 });
  refused(() => outbox.enqueueAction(AGENT, 'a', { v: 2 }), 'ACTION_ID_COLLISION', 'action_id_collision');
  outbox.markActionSent(AGENT, 'a');
  assert.deepEqual(outbox.pendingActions(AGENT), []);
});

test('the grace window is checked on every buffer', () => {
  const p = policy();
  p.buffer(checkpoint(), { now: T0 + 5 * MINUTE });
  refused(() => p.buffer(message(2), { now: T0 + 5 * MINUTE + SECOND }), 'WORK_LEASE_EXPIRED', 'outside_grace');
  refused(() => policy().buffer(message(2), { now: T0 - 1 }), 'WORK_LEASE_EXPIRED', 'outside_grace');
});

test('the action and usage bounds are atomic: a refusal queues and counts nothing', () => {
  const store = new api.InMemoryOutbox();
  const p = policy(store);
  refused(() => p.buffer(checkpoint(), { usage: { modelTokens: 5 }, now: T0 }), 'BUDGET_EXCEEDED', 'usage_exceeded');
  assert.deepEqual(store.pendingActions(AGENT), []);
  assert.equal(p.cumulativeUsage.modelTokens, 0);
  p.buffer(checkpoint(), { usage: new api.ResourceUsage({ modelTokens: 4 }), now: T0 });
  p.buffer(message(2), { now: T0 });
  refused(() => p.buffer(message(3), { now: T0 }), 'RATE_LIMITED', 'too_many_actions');
  assert.equal(store.pendingActions(AGENT).length, 2);
});

test('irreversible kinds and new work are refused', () => {
  for (const kind of ['work.submit', 'work.start', 'work.accept_offer', 'artifact.publish']) {
    refused(() => policy().buffer(command(1, kind, {}), { now: T0 }), 'INVALID_COMMAND', 'not_reversible');
  }
});

test('external usage and secrets in the payload are refused', () => {
  const p = policy();
  refused(() => p.buffer(checkpoint(), { usage: { externalActions: 1 }, now: T0 }), 'INVALID_COMMAND', 'external_effect');
  const secret = message(2);
  secret.payload.attachments = [{ accessToken: 't' }];
  assert.throws(() => p.buffer(secret, { now: T0 }), (error) => {
    assert.ok(error instanceof api.OfflinePolicyError);
    assert.equal(error.reason, 'external_effect');
    assert.ok(!error.message.includes('"t"'));
    return true;
  });
  // A caller's own binding is never taken over.
  const bound = { ...message(3), extensions: { [api.OFFLINE_EXECUTION_EXTENSION]: { version: '0.1.0', critical: true, data: {} } } };
  refused(() => p.buffer(bound, { now: T0 }), 'INVALID_COMMAND', 'invalid_binding');
});

test('Commands outside the assignment are refused', () => {
  for (const [member, value] of [['workItemId', 'urn:missionweaveprotocol:work:other'], ['groupId', 'urn:missionweaveprotocol:group:other'],
    ['conversationId', 'urn:missionweaveprotocol:conversation:other'], ['sessionEpoch', 4],
    ['actor', { type: 'agent', id: 'urn:missionweaveprotocol:agent:other' }]]) {
    refused(() => policy().buffer({ ...message(1), [member]: value }, { now: T0 }), 'INVALID_COMMAND', 'outside_assignment');
  }
  const otherLease = checkpoint();
  otherLease.payload.leaseId = 'urn:missionweaveprotocol:lease:other';
  refused(() => policy().buffer(otherLease, { now: T0 }), 'INVALID_COMMAND', 'outside_assignment');
});

test('the WorkItem must be active, owned and leased; the lease must outlive the disconnect', () => {
  for (const [change, code, reason] of [
    [{ status: 'queued' }, 'INVALID_STATE_TRANSITION', 'not_active'],
    [{ assigneeId: 'urn:missionweaveprotocol:agent:other' }, 'WORK_STALE_OWNERSHIP', 'stale_ownership'],
    [{ executionLeaseId: null }, 'INVALID_STATE_TRANSITION', 'not_active'],
    [{ ownershipEpoch: 0 }, 'INVALID_STATE_TRANSITION', 'not_active'],
  ]) {
    refused(() => new api.OfflineExecutionPolicy(new api.InMemoryOutbox(), IDENTITY, { ...WORK_ITEM, ...change }, { disconnectedAt: T0, limits: LIMITS }), code, reason);
  }
  refused(() => policy(undefined, { disconnectedAt: T0 + 10 * MINUTE }), 'WORK_LEASE_EXPIRED', 'lease_closed');
  // The grace deadline is the lease expiry when that comes first.
  assert.deepEqual(policy(undefined, { disconnectedAt: T0 + 8 * MINUTE }).graceDeadline, new Date(T0 + 10 * MINUTE));
  assert.throws(() => policy({}), api.ArgumentError);
  assert.throws(() => new api.OfflineExecutionPolicy(new api.InMemoryOutbox(), { agentId: AGENT }, WORK_ITEM, { disconnectedAt: T0, limits: LIMITS }), api.ArgumentError);
  assert.throws(() => policy(undefined, { limits: { maxActions: 1 } }), api.ArgumentError);
});

test('an exception of the store propagates unchanged and nothing is recorded', () => {
  const boom = new Error('disk full');
  const store = { enqueueAction() { throw boom; }, pendingActions: () => [], markActionSent() {} };
  const p = policy(store);
  assert.throws(() => p.buffer(checkpoint(), { now: T0 }), (error) => error === boom);
  assert.equal(p.bufferedActions.length, 0);
});

test('limits are validated by the core', () => {
  refused(() => new api.OfflineLimits({ maxDisconnectGraceMs: 0, maxActions: 1 }), 'INVALID_COMMAND', 'invalid_argument');
  refused(() => new api.OfflineLimits({ maxDisconnectGraceMs: 1000, maxActions: 0 }), 'INVALID_COMMAND', 'invalid_argument');
  assert.throws(() => new api.OfflineLimits({ maxDisconnectGraceMs: 1000, maxActions: 1.5 }), api.ArgumentError);
  const limits = new api.OfflineLimits({ maxDisconnectGraceMs: 1000, maxActions: 1 });
  assert.equal(limits.maxUsage.modelTokens, 0);
});

test('the binding enforces the ordered window and no external actions', () => {
  const good = {
    agentId: AGENT, groupId: GROUP, workItemId: ITEM, sessionEpoch: 3, ownershipEpoch: 2, executionLeaseId: LEASE,
    disconnectedAt: new Date(T0), bufferedAt: new Date(T0 + SECOND), graceDeadline: new Date(T0 + 2 * SECOND),
    executionLeaseExpiresAt: '2026-07-15T09:30:03Z',
  };
  const binding = new api.OfflineProgressBinding(good);
  assert.equal(binding.toWire().resourceUsageDelta.toolCalls, 0);
  assert.deepEqual(new api.OfflineProgressBinding(binding.toWire()), binding);
  refused(() => new api.OfflineProgressBinding({ ...good, bufferedAt: new Date(T0 - SECOND) }), 'INVALID_COMMAND');
  refused(() => new api.OfflineProgressBinding({ ...good, resourceUsageDelta: { externalActions: 1 } }), 'INVALID_COMMAND');
  assert.equal(api.OfflineProgressBinding.fromCommand(checkpoint()), null);
});

test('rebasing keeps the binding and re-signs for the current session', () => {
  const p = policy();
  const buffered = p.buffer(checkpoint(), { usage: { modelTokens: 1 }, now: T0 + 30 * SECOND });
  const later = new Date(T0 + 15 * MINUTE);
  const options = { sessionEpoch: 4, membershipEpoch: 2, issuedAt: later, executionLeaseId: 'urn:missionweaveprotocol:lease:exec-2' };
  const rebased = api.rebaseOfflineCommand(buffered, IDENTITY, options);
  assert.ok(Object.isFrozen(rebased));
  const wire = api.offlineCommandToWire(JSON.stringify(buffered), IDENTITY, { ...options, keyId: KEY.keyId });
  assert.deepEqual(wire, rebased);
  verify(wire);
  assert.deepEqual([wire.sessionEpoch, wire.membershipEpoch, Date.parse(wire.issuedAt)], [4, 2, later.getTime()]);
  assert.equal(wire.payload.leaseId, 'urn:missionweaveprotocol:lease:exec-2');
  assert.deepEqual(api.OfflineProgressBinding.fromCommand(wire), api.OfflineProgressBinding.fromCommand(buffered));
  // Negative: no binding, a kind that is not reversible, an older session, another key ID.
  refused(() => api.rebaseOfflineCommand(checkpoint(2), IDENTITY, options), 'INVALID_COMMAND', 'invalid_binding');
  refused(() => api.rebaseOfflineCommand({ ...buffered, kind: 'work.submit' }, IDENTITY, options), 'INVALID_COMMAND', 'not_reversible');
  assert.throws(() => api.rebaseOfflineCommand(buffered, IDENTITY, { ...options, sessionEpoch: 2 }), api.OfflinePolicyError);
  const otherKey = api.offlineCommandToWire(buffered, IDENTITY, { ...options, keyId: 'urn:missionweaveprotocol:key:other' });
  assert.throws(() => verify(otherKey), api.VerificationError);
  assert.throws(() => api.rebaseOfflineCommand(buffered, { agentId: AGENT, signingKey: 'k' }, options), api.ArgumentError);
});

test('the WebAssembly build has no offline policy: ArgumentError', () => {
  assert.equal(wasm.OFFLINE_EXECUTION_EXTENSION, api.OFFLINE_EXECUTION_EXTENSION);
  for (const fn of [
    () => new wasm.OfflineLimits({ maxDisconnectGraceMs: 1, maxActions: 1 }),
    () => new wasm.InMemoryOutbox(),
    () => wasm.offlineCommandToWire({}, IDENTITY, { sessionEpoch: 1, membershipEpoch: 1 }),
  ]) {
    assert.throws(fn, (error) => error instanceof wasm.ArgumentError && /napi/.test(error.message));
  }
});
