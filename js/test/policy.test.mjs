// The policy layer (§8, §12, §20) through the backends' raw envelopes (the napi addon and the
// WebAssembly build: one core/ffi module, the same answers): membership tokens and capability
// grants (forged, expired, replayed, cross-Group refusals with their §19 codes), execution
// authorization over queried documents, the budget meter and the local guard, and the typed
// entry points refusing a malformed call shape with the ArgumentError naming its path. The
// public API over these envelopes is tested in policy-api.test.mjs.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { ADDON, DIST } from './support.mjs';

const require = createRequire(import.meta.url);
const RAWS = {
  napi: require(ADDON),
  wasm: require(join(DIST, 'wasm-node', 'missionweaveprotocol_wasm.js')),
};

const SECRET = new TextEncoder().encode('0123456789abcdef0123456789abcdef');
const AGENT = 'urn:missionweaveprotocol:agent:worker';
const GROUP = 'urn:missionweaveprotocol:group:finance';
const ITEM = 'urn:missionweaveprotocol:work:ledger';
const MISSION = 'urn:missionweaveprotocol:mission:close-books';
const T0 = Date.UTC(2026, 6, 15, 9, 30);
const MINUTE = 60_000;

function ok(envelope) {
  const parsed = JSON.parse(envelope);
  assert.ok('ok' in parsed, envelope);
  return parsed.ok;
}

function refused(envelope, code, reason) {
  const parsed = JSON.parse(envelope);
  assert.ok('error' in parsed, envelope);
  assert.equal(parsed.error.code, code, envelope);
  assert.equal(parsed.error.reason, reason, envelope);
  // ErrorClass::Policy: the reference's PolicyError in Python, `RetryError` in JavaScript.
  assert.equal(parsed.error.class, 'RetryError');
  return parsed.error;
}

// A call shape is exactly its members: issuing takes `ttlMs` (and `tokenId`), verifying does not.
const membership = (extra = {}) => JSON.stringify({
  principalId: AGENT, groupId: GROUP, roles: ['worker'], membershipEpoch: 2, sessionEpoch: 3,
  ttlMs: MINUTE, nowMs: T0, ...extra,
});
const bound = (extra = {}) => JSON.stringify({
  principalId: AGENT, groupId: GROUP, roles: ['worker'], membershipEpoch: 2, sessionEpoch: 3, nowMs: T0, ...extra,
});
const options = (maximumTtlMs) => JSON.stringify(maximumTtlMs === undefined ? {} : { maximumTtlMs });

function misuse(envelope, argument) {
  const { error } = JSON.parse(envelope);
  assert.equal(error?.class, 'ArgumentError', envelope);
  assert.equal(error.code, 'PROTOCOL_VIOLATION');
  assert.equal(error.reason, 'invalid-argument');
  assert.equal(error.fields.argument, argument, envelope);
  return error;
}

for (const [name, raw] of Object.entries(RAWS)) describe(name, () => {
describe('membership tokens', () => {
  const tokens = new raw.PolicyMembershipTokens(SECRET, options(15 * MINUTE));

  test('issue and verify; every fence refuses with its code', () => {
    ok(tokens.status());
    const { claims, token } = ok(tokens.issue(membership({ roles: ['worker', 'reviewer'] })));
    assert.deepEqual(claims.roles, ['reviewer', 'worker']);
    assert.equal(claims.expiresAt, T0 + MINUTE);
    assert.equal(ok(tokens.verify(token, bound({ roles: ['worker', 'reviewer'], nowMs: T0 + 1 }))).tokenId, claims.tokenId);
    const single = ok(tokens.issue(membership())).token;
    refused(tokens.verify(single, bound({ groupId: 'urn:missionweaveprotocol:group:other' })), 'MEMBERSHIP_REQUIRED', 'token_group_mismatch');
    refused(tokens.verify(single, bound({ sessionEpoch: 4 })), 'AUTH_STALE_SESSION', 'token_session_stale');
    refused(tokens.verify(single, bound({ membershipEpoch: 3 })), 'MEMBERSHIP_STALE', 'token_membership_stale');
    refused(tokens.verify(single, bound({ roles: ['reviewer'] })), 'MEMBERSHIP_STALE', 'token_roles_stale');
    refused(tokens.verify(single, bound({ nowMs: T0 + MINUTE })), 'AUTH_INVALID_SIGNATURE', 'token_expired');
    refused(tokens.issue(membership({ ttlMs: 16 * MINUTE })), 'INVALID_COMMAND', 'invalid_argument');
  });

  test('forged, tampered and malformed tokens', () => {
    const token = ok(tokens.issue(membership())).token;
    const forger = new raw.PolicyMembershipTokens(new TextEncoder().encode('f'.repeat(32)), options(15 * MINUTE));
    refused(tokens.verify(ok(forger.issue(membership())).token, bound()), 'AUTH_INVALID_SIGNATURE', 'token_forged');
    const [body, mac] = token.split('.');
    refused(tokens.verify(`${body}.${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`, bound()), 'AUTH_INVALID_SIGNATURE', 'token_forged');
    for (const bad of ['', 'x', 'a.b.c', 'x'.repeat(20_000)]) {
      refused(tokens.verify(bad, bound()), 'AUTH_INVALID_SIGNATURE', 'token_malformed');
    }
    // A random secret (empty bytes) verifies only its own tokens.
    refused(new raw.PolicyMembershipTokens(new Uint8Array(0), options()).verify(token, bound()), 'AUTH_INVALID_SIGNATURE', 'token_forged');
    refused(new raw.PolicyMembershipTokens(new Uint8Array(5), options()).status(), 'INVALID_COMMAND', 'invalid_argument');
  });
});

const lease = (extra = {}) => ({
  leaseId: 'urn:missionweaveprotocol:lease:exec-1', leaseType: 'execution', missionId: MISSION,
  groupId: GROUP, workItemId: ITEM, holderAgentId: AGENT, sessionEpoch: 3, ownershipEpoch: 1,
  issuedAt: '2026-07-15T09:30:00Z', startsAt: '2026-07-15T09:30:00Z', expiresAt: '2026-07-15T09:35:00Z',
  state: 'active', renewalCount: 0, ...extra,
});

const grant = (extra = {}) => JSON.stringify({
  workerId: AGENT, sessionEpoch: 3, workItemId: ITEM, ownershipEpoch: 1, executionLease: lease(),
  ttlMs: 10 * MINUTE, nowMs: T0, ...extra,
});

const proof = (extra = {}) => JSON.stringify({
  workerId: AGENT, sessionEpoch: 3, workItemId: ITEM, ownershipEpoch: 1, executionLease: lease(), nowMs: T0, ...extra,
});

describe('capability grants', () => {
  const grants = new raw.PolicyAuthorization(SECRET, options());

  test('bound to the lease and never outliving it', () => {
    const { claims, token } = ok(grants.issue(grant({ allowedOperations: ['ledger.read'], budget: { toolCalls: 3 } })));
    assert.equal(claims.expiresAt, T0 + 5 * MINUTE);
    assert.equal(claims.budget.tool_calls, 3);
    ok(grants.verify(token, proof({ operation: 'ledger.read', nowMs: T0 + MINUTE })));
    refused(grants.verify(token, proof({ operation: 'ledger.write' })), 'AUTH_FORBIDDEN', 'operation_not_granted');
    refused(grants.verify(token, proof({ sessionEpoch: 4 })), 'AUTH_STALE_SESSION', 'token_session_stale');
    refused(grants.verify(token, proof({ ownershipEpoch: 2 })), 'WORK_STALE_OWNERSHIP', 'token_ownership_stale');
    refused(grants.verify(token, proof({ executionLease: lease({ leaseId: 'urn:missionweaveprotocol:lease:exec-2' }) })), 'WORK_LEASE_EXPIRED', 'token_lease_mismatch');
    const revoked = lease({ state: 'revoked', closedAt: '2026-07-15T09:31:00Z', closureReason: 'session replaced' });
    refused(grants.verify(token, proof({ executionLease: revoked, nowMs: T0 + 2 * MINUTE })), 'WORK_LEASE_EXPIRED', 'lease_not_live');
  });

  test('direct high-risk issue is refused', () => {
    refused(grants.issue(grant({ highRisk: true })), 'APPROVAL_REQUIRED', 'direct_high_risk_refused');
    refused(grants.issue(grant({ approvalId: 'approval:any' })), 'APPROVAL_REQUIRED', 'direct_high_risk_refused');
    refused(grants.issue(grant({ allowedOperations: ['payment.send'] })), 'APPROVAL_REQUIRED', 'high_risk_operation');
  });

  test('execution authorization over queried documents', () => {
    const workItem = {
      workItemId: ITEM, missionId: MISSION, groupId: GROUP, state: 'active',
      owner: { agentId: AGENT, ownershipEpoch: 1 },
      contract: { allowedResources: [{ resource: 'repo:app', operations: ['repo.read', 'production.deploy'] }], executionApproval: 'not_required' },
    };
    const live = (extra = {}) => JSON.stringify({
      workerId: AGENT, sessionEpoch: 3, workItemId: ITEM, ownershipEpoch: 1, ttlMs: MINUTE, nowMs: T0,
      currentSessionEpoch: 3, workItem, executionLease: lease(), mission: { missionId: MISSION, state: 'active' },
      remaining: [{ toolCalls: 10 }], ...extra,
    });
    const { claims } = ok(grants.authorizeExecution(live({ allowedResources: ['repo:app'], allowedOperations: ['repo.read'] })));
    assert.equal(claims.budget.tool_calls, 10);
    refused(grants.authorizeExecution(live({ currentSessionEpoch: 4 })), 'AUTH_STALE_SESSION', 'session_stale');
    refused(grants.authorizeExecution(live({ budget: { toolCalls: 11 } })), 'BUDGET_EXCEEDED', 'budget_exceeded');
    refused(grants.authorizeExecution(live({ allowedOperations: ['repo.write'] })), 'AUTH_FORBIDDEN', 'operation_not_in_contract');
    refused(grants.authorizeExecution(live({ allowedOperations: ['production.deploy'] })), 'APPROVAL_REQUIRED', 'approval_missing');
    refused(grants.authorizeExecution(live({ mission: { missionId: MISSION, state: 'cancelled' } })), 'INVALID_STATE_TRANSITION', 'mission_not_active');
    refused(grants.authorizeExecution(live({ workItem: null })), 'GROUP_NOT_FOUND', 'not_found');
  });
});

describe('budget meter and guard', () => {
  test('the meter refuses overruns whole', () => {
    const meter = new raw.PolicyBudgetMeter(JSON.stringify({ toolCalls: 3 }));
    assert.equal(ok(meter.consume(JSON.stringify({ toolCalls: 2 }))).toolCalls, 2);
    const error = refused(meter.consume(JSON.stringify({ toolCalls: 2 })), 'BUDGET_EXCEEDED', 'budget_exceeded');
    assert.equal(error.fields.dimension, 'tool_calls');
    refused(meter.consume(JSON.stringify({ modelTokens: 1 })), 'BUDGET_EXCEEDED', 'budget_exceeded');
  });

  test('thresholds, rates with retryAfterMs and the bounded tracker', () => {
    const guard = new raw.PolicyGuard(JSON.stringify({ maximumMessageRatePerMinute: 2, maximumTrackedKeys: 1 }));
    ok(guard.checkDelegationDepth(3));
    refused(guard.checkDelegationDepth(4), 'RATE_LIMITED', 'threshold_reached');
    refused(guard.checkQueue(101, 0), 'RATE_LIMITED', 'threshold_reached');
    refused(guard.checkUnresolvedClarifications(6), 'RATE_LIMITED', 'threshold_reached');
    ok(guard.checkMessageRate('a', 'g', T0));
    ok(guard.checkMessageRate('a', 'g', T0 + 10_000));
    const error = refused(guard.checkMessageRate('a', 'g', T0 + 20_000), 'RATE_LIMITED', 'rate_limited');
    assert.equal(error.fields.retryAfterMs, 40_000);
    assert.equal(error.retryable, true);
    refused(guard.checkMessageRate('b', 'g', T0 + 20_000), 'RATE_LIMITED', 'rate_tracker_full');
    ok(guard.checkMessageRate('b', 'g', T0 + 2 * MINUTE));
    assert.equal(ok(guard.trackedKeys()), 1);
    assert.equal(raw.policyClassifyAction('destructive.drop'), 'human_approval_required');
    assert.equal(raw.policyClassifyAction('repo.read'), 'automatic');
  });
});

describe('typed entry points refuse a malformed call shape by name', () => {
  test('unknown, missing and mistyped members, and bad options', () => {
    const tokens = new raw.PolicyMembershipTokens(SECRET, options());
    misuse(tokens.verify('a.b', membership()), 'arguments.ttlMs');
    misuse(tokens.issue(membership({ colour: 'red' })), 'arguments.colour');
    misuse(tokens.issue(JSON.stringify({ groupId: GROUP })), 'arguments.principalId');
    misuse(tokens.issue(membership({ sessionEpoch: -1 })), 'arguments.sessionEpoch');
    misuse(tokens.issue(membership({ nowMs: 1.5 })), 'arguments.nowMs');
    misuse(new raw.PolicyMembershipTokens(SECRET, options(-1)).status(), 'options.maximumTtlMs');
    misuse(new raw.PolicyMembershipTokens(SECRET, '{"maximumTtl":1}').status(), 'options.maximumTtl');
    const grants = new raw.PolicyAuthorization(SECRET, options());
    misuse(grants.issue(grant({ budget: { toolCalls: -1 } })), 'arguments.budget.toolCalls');
    misuse(grants.authorizeExecution(grant({ remaining: null })), 'arguments.remaining');
    misuse(new raw.PolicyBudgetMeter('{"toolCalls":"3"}').status(), 'limit.toolCalls');
    misuse(new raw.PolicyGuard('{"maximumDelegationDepth":-1}').status(), 'limits.maximumDelegationDepth');
    const guard = new raw.PolicyGuard('{}');
    misuse(guard.checkQueue(-1, 0), 'queued');
    misuse(guard.checkDelegationDepth(2 ** 32), 'depth');
  });

  test('an absent maximum lifetime is the core\'s, the same as policyDefaults()', () => {
    const defaults = ok(raw.policyDefaults());
    assert.deepEqual(defaults, {
      membershipTokenMaximumTtlMs: 15 * MINUTE, capabilityGrantMaximumTtlMs: 15 * MINUTE, sessionTtlMs: 15 * MINUTE, challengeTtlMs: 30_000,
    });
    const tokens = new raw.PolicyMembershipTokens(SECRET, options());
    ok(tokens.issue(membership({ ttlMs: defaults.membershipTokenMaximumTtlMs })));
    refused(tokens.issue(membership({ ttlMs: defaults.membershipTokenMaximumTtlMs + 1 })), 'INVALID_COMMAND', 'invalid_argument');
    // Random token IDs come from the host (the OS for napi, crypto.getRandomValues for wasm).
    const a = ok(tokens.issue(membership())).claims.tokenId;
    const b = ok(tokens.issue(membership())).claims.tokenId;
    assert.match(a, /^urn:uuid:[0-9a-f-]{36}$/);
    assert.notEqual(a, b);
  });
});
});
