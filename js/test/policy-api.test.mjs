// The policy layer (§8, §12, §20) through the package's public API (Node entry): the reference's
// `policy` module in camelCase. Each rule has a positive and a negative case with its §19 code and
// the core's reason; refusals are the core's `policy` error class (`PolicyError`, the same class
// as `RetryError`). The WebAssembly build serves the same module (core/ffi, sans-IO).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { DIST } from './support.mjs';

const api = await import(join(DIST, 'node.mjs'));
const {
  MembershipTokenService, AuthorizationService, BudgetMeter, PolicyGuard, cooperationLimits, classifyAction,
  PolicyError, RetryError, ArgumentError,
} = api;

const SECRET = new TextEncoder().encode('0123456789abcdef0123456789abcdef');
const AGENT = 'urn:missionweaveprotocol:agent:worker';
const GROUP = 'urn:missionweaveprotocol:group:finance';
const OTHER_GROUP = 'urn:missionweaveprotocol:group:other';
const ITEM = 'urn:missionweaveprotocol:work:ledger';
const MISSION = 'urn:missionweaveprotocol:mission:close-books';
const T0 = Date.UTC(2026, 6, 15, 9, 30);
const MINUTE = 60_000;

function refuses(fn, code, reason) {
  let caught;
  assert.throws(fn, (error) => {
    caught = error;
    return error instanceof PolicyError && error.code === code && error.reason === reason;
  }, `${code}/${reason}`);
  return caught;
}

const binding = (extra = {}) => ({
  principal: AGENT, groupId: GROUP, roles: ['worker'], membershipEpoch: 2, sessionEpoch: 3, now: T0, ...extra,
});

test('PolicyError is the core policy class (RetryError in the npm package)', () => {
  assert.equal(PolicyError, RetryError);
});

describe('MembershipTokenService', () => {
  const tokens = new MembershipTokenService({ secret: SECRET });

  test('issue and verify bound to principal, Group, roles and epochs', () => {
    const { claims, token } = tokens.issue({ ...binding({ roles: ['worker', 'reviewer'] }), ttlMs: MINUTE });
    assert.deepEqual(claims.roles, ['reviewer', 'worker']);
    assert.equal(claims.principal.id, AGENT);
    assert.equal(claims.expiresAt, T0 + MINUTE);
    assert.ok(Object.isFrozen(claims));
    const verified = tokens.verify(token, binding({ roles: ['reviewer', 'worker'], now: new Date(T0 + 1) }));
    assert.equal(verified.tokenId, claims.tokenId);
    assert.match(String(tokens), /redacted/);
  });

  test('forged, expired and cross-Group tokens are refused with their codes', () => {
    const { token } = tokens.issue({ ...binding(), ttlMs: MINUTE });
    const forger = new MembershipTokenService({ secret: new TextEncoder().encode('f'.repeat(32)) });
    refuses(() => tokens.verify(forger.issue({ ...binding(), ttlMs: MINUTE }).token, binding()), 'AUTH_INVALID_SIGNATURE', 'token_forged');
    // A random secret (none given) verifies only its own tokens.
    refuses(() => new MembershipTokenService().verify(token, binding()), 'AUTH_INVALID_SIGNATURE', 'token_forged');
    refuses(() => tokens.verify(token, binding({ now: T0 + MINUTE })), 'AUTH_INVALID_SIGNATURE', 'token_expired');
    refuses(() => tokens.verify(token, binding({ groupId: OTHER_GROUP })), 'MEMBERSHIP_REQUIRED', 'token_group_mismatch');
    refuses(() => tokens.verify(token, binding({ sessionEpoch: 4 })), 'AUTH_STALE_SESSION', 'token_session_stale');
    refuses(() => tokens.verify(token, binding({ membershipEpoch: 3 })), 'MEMBERSHIP_STALE', 'token_membership_stale');
    refuses(() => tokens.verify(token, binding({ roles: ['reviewer'] })), 'MEMBERSHIP_STALE', 'token_roles_stale');
    refuses(() => tokens.verify('a.b.c', binding()), 'AUTH_INVALID_SIGNATURE', 'token_malformed');
  });

  test('lifetimes and secrets are bounded', () => {
    refuses(() => tokens.issue({ ...binding(), ttlMs: 16 * MINUTE }), 'INVALID_COMMAND', 'invalid_argument');
    const short = new MembershipTokenService({ secret: SECRET, maximumTtlMs: MINUTE });
    assert.equal(short.issue({ ...binding(), ttlMs: MINUTE }).claims.expiresAt, T0 + MINUTE);
    refuses(() => short.issue({ ...binding(), ttlMs: MINUTE + 1 }), 'INVALID_COMMAND', 'invalid_argument');
    refuses(() => new MembershipTokenService({ secret: new Uint8Array(5) }), 'INVALID_COMMAND', 'invalid_argument');
    assert.throws(() => new MembershipTokenService({ maximumTtlMs: -1 }), ArgumentError);
    assert.throws(() => tokens.verify(42, binding()), ArgumentError);
  });
});

const lease = (extra = {}) => ({
  leaseId: 'urn:missionweaveprotocol:lease:exec-1', leaseType: 'execution', missionId: MISSION,
  groupId: GROUP, workItemId: ITEM, holderAgentId: AGENT, sessionEpoch: 3, ownershipEpoch: 1,
  issuedAt: '2026-07-15T09:30:00Z', startsAt: '2026-07-15T09:30:00Z', expiresAt: '2026-07-15T09:35:00Z',
  state: 'active', renewalCount: 0, ...extra,
});

const grantBinding = (extra = {}) => ({
  workerId: AGENT, sessionEpoch: 3, workItemId: ITEM, ownershipEpoch: 1, executionLease: lease(), now: T0, ...extra,
});

describe('AuthorizationService', () => {
  const grants = new AuthorizationService({ secret: SECRET });

  test('a grant within the lease is bound to it', () => {
    const { claims, token } = grants.issue({ ...grantBinding(), ttlMs: 2 * MINUTE, allowedOperations: ['ledger.read'], budget: { toolCalls: 3 } });
    assert.equal(claims.expiresAt, T0 + 2 * MINUTE);
    assert.equal(claims.budget.tool_calls, 3);
    assert.equal(grants.verify(token, grantBinding({ operation: 'ledger.read', now: T0 + MINUTE })).grantId, claims.grantId);
    refuses(() => grants.verify(token, grantBinding({ operation: 'ledger.write' })), 'AUTH_FORBIDDEN', 'operation_not_granted');
    refuses(() => grants.verify(token, grantBinding({ ownershipEpoch: 2 })), 'WORK_STALE_OWNERSHIP', 'token_ownership_stale');
    refuses(() => grants.verify(token, grantBinding({ executionLease: lease({ leaseId: 'urn:missionweaveprotocol:lease:exec-2' }) })),
      'WORK_LEASE_EXPIRED', 'token_lease_mismatch');
  });

  test('grant expiry never passes the lease expiry', () => {
    // The lease ends at T0 + 5 min; a 10-minute request is cut to it, and expires with it.
    const { claims, token } = grants.issue({ ...grantBinding(), ttlMs: 10 * MINUTE });
    assert.equal(claims.expiresAt, T0 + 5 * MINUTE);
    assert.equal(claims.executionLeaseExpiresAt, T0 + 5 * MINUTE);
    grants.verify(token, grantBinding({ now: T0 + 5 * MINUTE - 1 }));
    assert.throws(() => grants.verify(token, grantBinding({ now: T0 + 5 * MINUTE })), PolicyError);
  });

  test('forged tokens and direct high-risk grants are refused', () => {
    const forger = new AuthorizationService({ secret: new TextEncoder().encode('f'.repeat(32)) });
    const forged = forger.issue({ ...grantBinding(), ttlMs: MINUTE }).token;
    refuses(() => grants.verify(forged, grantBinding()), 'AUTH_INVALID_SIGNATURE', 'token_forged');
    refuses(() => grants.issue({ ...grantBinding(), ttlMs: MINUTE, highRisk: true }), 'APPROVAL_REQUIRED', 'direct_high_risk_refused');
    refuses(() => grants.issue({ ...grantBinding(), ttlMs: MINUTE, allowedOperations: ['payment.send'] }), 'APPROVAL_REQUIRED', 'high_risk_operation');
  });

  test('execution authorization over queried documents', () => {
    const workItem = {
      workItemId: ITEM, missionId: MISSION, groupId: GROUP, state: 'active',
      owner: { agentId: AGENT, ownershipEpoch: 1 },
      contract: { allowedResources: [{ resource: 'repo:app', operations: ['repo.read'] }], executionApproval: 'not_required' },
    };
    const live = (extra = {}) => ({
      workerId: AGENT, sessionEpoch: 3, workItemId: ITEM, ownershipEpoch: 1, ttlMs: MINUTE, now: T0,
      currentSessionEpoch: 3, workItem, executionLease: lease(), mission: { missionId: MISSION, state: 'active' },
      remaining: [{ toolCalls: 10 }], ...extra,
    });
    assert.equal(grants.authorizeExecution(live({ allowedResources: ['repo:app'], allowedOperations: ['repo.read'] })).claims.budget.tool_calls, 10);
    refuses(() => grants.authorizeExecution(live({ currentSessionEpoch: 4 })), 'AUTH_STALE_SESSION', 'session_stale');
    refuses(() => grants.authorizeExecution(live({ budget: { toolCalls: 11 } })), 'BUDGET_EXCEEDED', 'budget_exceeded');
  });
});

describe('BudgetMeter and PolicyGuard', () => {
  test('the meter refuses an overrun whole', () => {
    const meter = new BudgetMeter({ toolCalls: 3 });
    assert.equal(meter.consume({ toolCalls: 2 }).toolCalls, 2);
    const error = refuses(() => meter.consume({ toolCalls: 2 }), 'BUDGET_EXCEEDED', 'budget_exceeded');
    assert.equal(error.dimension, 'tool_calls');
    assert.equal(meter.usage.toolCalls, 2);
    assert.equal(meter.limit.toolCalls, 3);
    refuses(() => meter.consume({ modelTokens: 1 }), 'BUDGET_EXCEEDED', 'budget_exceeded');
    assert.throws(() => new BudgetMeter({ toolCalls: -1 }), ArgumentError);
  });

  test('cooperation limits are the core defaults', () => {
    const defaults = cooperationLimits();
    assert.equal(defaults.maximumDelegationDepth, 3);
    assert.equal(defaults.maximumMessageRatePerMinute, 120);
    assert.equal(cooperationLimits({ maximumDelegationDepth: 1 }).maximumDelegationDepth, 1);
    assert.deepEqual(new PolicyGuard().limits, defaults);
  });

  test('thresholds', () => {
    const guard = new PolicyGuard({ maximumDelegationDepth: 2 });
    guard.checkDelegationDepth(2);
    refuses(() => guard.checkDelegationDepth(3), 'RATE_LIMITED', 'threshold_reached');
    guard.checkQueue(100, 4);
    refuses(() => guard.checkQueue(101, 0), 'RATE_LIMITED', 'threshold_reached');
    guard.checkUnresolvedClarifications(5);
    refuses(() => guard.checkUnresolvedClarifications(6), 'RATE_LIMITED', 'threshold_reached');
    assert.throws(() => guard.checkQueue(-1, 0), ArgumentError);
  });

  test('rate limits: RATE_LIMITED with retryAfterMs, per principal and Group', () => {
    const guard = new PolicyGuard({ maximumMessageRatePerMinute: 2 });
    guard.checkMessageRate(AGENT, GROUP, T0);
    guard.checkMessageRate(AGENT, GROUP, T0 + 10_000);
    const error = refuses(() => guard.checkMessageRate(AGENT, GROUP, T0 + 20_000), 'RATE_LIMITED', 'rate_limited');
    assert.equal(error.retryAfterMs, 40_000);
    assert.equal(error.retryable, true);
    guard.checkMessageRate(AGENT, OTHER_GROUP, T0 + 20_000);
    guard.checkMessageRate(AGENT, GROUP, T0 + MINUTE + 1);
    guard.checkProposalRate(AGENT, GROUP, T0);
    guard.checkClarificationRate(AGENT, GROUP, T0);
    // One window per (kind, principal, Group): messages in two Groups, one proposal, one clarification.
    assert.equal(guard.trackedKeys(), 4);
  });

  test('the tracker is bounded', () => {
    const guard = new PolicyGuard({ maximumTrackedKeys: 1 });
    guard.checkMessageRate('a', GROUP, T0);
    refuses(() => guard.checkMessageRate('b', GROUP, T0), 'RATE_LIMITED', 'rate_tracker_full');
  });

  test('classifyAction', () => {
    assert.equal(classifyAction('destructive.drop'), 'human_approval_required');
    assert.equal(classifyAction('payment.send'), 'human_approval_required');
    assert.equal(classifyAction('repo.read'), 'automatic');
    assert.equal(PolicyGuard.classifyAction('repo.read'), 'automatic');
    assert.throws(() => classifyAction(7), ArgumentError);
  });

  test('disposed objects refuse further calls', () => {
    const meter = new BudgetMeter({ toolCalls: 1 });
    meter.free();
    assert.throws(() => meter.consume({ toolCalls: 1 }));
  });
});

test('the WebAssembly build serves the same policy module (sans-IO, crypto.getRandomValues)', async () => {
  const wasm = await import(join(DIST, 'node-wasm.mjs'));
  assert.equal(wasm.PolicyError, wasm.RetryError);
  const tokens = new wasm.MembershipTokenService({ secret: SECRET });
  const { claims, token } = tokens.issue({ ...binding(), ttlMs: MINUTE });
  // The same secret, the same core: a token issued by one backend verifies on the other.
  assert.equal(new MembershipTokenService({ secret: SECRET }).verify(token, binding()).tokenId, claims.tokenId);
  assert.throws(() => new wasm.MembershipTokenService().verify(token, binding()), (e) => e instanceof wasm.PolicyError && e.reason === 'token_forged');
  assert.equal(new wasm.BudgetMeter({ toolCalls: 3 }).consume({ toolCalls: 2 }).toolCalls, 2);
  assert.deepEqual(new wasm.PolicyGuard().limits, cooperationLimits());
  assert.equal(wasm.classifyAction('payment.send'), 'human_approval_required');
  assert.throws(() => new wasm.AuthorizationService({ maximumTtlMs: -1 }), wasm.ArgumentError);
});

test('call shapes are exact: an unknown member is an ArgumentError naming it (as Python keyword arguments)', () => {
  const tokens = new MembershipTokenService({ secret: SECRET });
  assert.throws(() => tokens.issue({ ...binding(), ttlMs: MINUTE, colour: 'red' }),
    (e) => e instanceof ArgumentError && e.argument === 'arguments.colour');
  assert.throws(() => tokens.verify('a.b', { ...binding(), ttlMs: MINUTE }),
    (e) => e instanceof ArgumentError && e.argument === 'arguments.ttlMs');
  assert.throws(() => new PolicyGuard({ maximumDelegationDepth: 1.5 }),
    (e) => e instanceof ArgumentError && e.argument === 'limits.maximumDelegationDepth');
});

test('the default maximum lifetime is the core\'s (15 minutes), not a constant of the package', () => {
  // No maximumTtlMs: the core's MAXIMUM_TTL_MS bounds a token's lifetime.
  const tokens = new MembershipTokenService({ secret: SECRET });
  assert.equal(tokens.issue({ ...binding(), ttlMs: 15 * MINUTE }).claims.expiresAt, T0 + 15 * MINUTE);
  refuses(() => tokens.issue({ ...binding(), ttlMs: 15 * MINUTE + 1 }), 'INVALID_COMMAND', 'invalid_argument');
  const grants = new AuthorizationService({ secret: SECRET });
  refuses(() => grants.issue({ ...grantBinding(), ttlMs: 15 * MINUTE + 1 }), 'INVALID_COMMAND', 'invalid_argument');
  // Above the core's maximum: the core's refusal (as Python), whatever the JavaScript number.
  refuses(() => new MembershipTokenService({ secret: SECRET, maximumTtlMs: 2 ** 40 }), 'INVALID_COMMAND', 'invalid_argument');
});
