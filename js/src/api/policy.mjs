// Tokens, execution authorization and local guardrails (reference `policy`, §8, §12, §20). Every
// rule (token MACs and bindings, grant expiry within the lease, lifetimes and their defaults,
// budgets, limits, the action classification) and every refusal (the core's class, code and
// reason; `PolicyError`) is the core's `policy` module (`core/ffi/src/policy.rs`); this converts
// arguments and supplies the clock. The verify-only build has no `policy` module: there each
// name is an ArgumentError that says so.

import { ArgumentError, open } from './errors.mjs';
import { argumentJson, checkString, snapshotText, toMillis } from './convert.mjs';
import { NativeTable, adopt, disposable } from './native.mjs';
import { deepFreeze } from './values.mjs';

export function policyApi({ raw, inputBytes }) {
  const native = new NativeTable(raw);

  // Both full backends have the `policy` module (sans-IO; napi draws randomness from the OS, the
  // WebAssembly build from `crypto.getRandomValues`); the verify-only build does not.
  function needsPolicy(what) {
    if (typeof raw.PolicyGuard !== 'function') {
      throw new ArgumentError(`${what} needs the full core (the Node or WebAssembly entry), not the verify-only build`);
    }
  }

  const now = (value) => (value === undefined ? Date.now() : toMillis(value, 'now'));
  const argsOf = (value, what) => snapshotText(value ?? {}, what);
  const agentIdOf = (principal) => (principal && typeof principal === 'object' ? principal.id : principal);
  const issued = (value) => Object.freeze({ claims: deepFreeze(value.claims), token: value.token });
  // `{maximumTtlMs}`: absent is the core's maximum (15 minutes, `policy::MAXIMUM_TTL_MS`), and
  // the core checks the range.
  const serviceOptions = (maximumTtlMs) => argumentJson({ maximumTtlMs }, 'options');
  // A count crosses as a number; the core checks that it is an integer in range.
  const count = (value, what) => {
    if (typeof value !== 'number') throw new ArgumentError(`${what} must be an integer in 0..2^32-1`, { fields: { argument: what } });
    return value;
  };
  const secretOf = (secret) => (secret === undefined || secret === null ? new Uint8Array(0) : inputBytes(secret, 'secret'));

  /**
   * Group membership tokens (§8): HMAC-SHA256 over the principal, Group, roles and epochs.
   * `secret` (at least 32 bytes) defaults to 32 random bytes; `maximumTtlMs` to the core's
   * maximum (15 minutes).
   */
  class MembershipTokenService {
    constructor({ secret, maximumTtlMs } = {}) {
      needsPolicy('MembershipTokenService');
      adopt(native, this, new raw.PolicyMembershipTokens(secretOf(secret), serviceOptions(maximumTtlMs)));
    }

    toString() { return 'MembershipTokenService(<secret redacted>)'; }

    /** `{principal|principalId, groupId, roles, membershipEpoch, sessionEpoch, ttlMs, now?, tokenId?}` → `{claims, token}`. */
    issue({ principal, principalId = agentIdOf(principal), now: at, ...rest } = {}) {
      return issued(open(native.get(this).issue(argsOf({ ...rest, principalId, nowMs: now(at) }, 'arguments'))));
    }

    /** For an active Agent Membership document: `(membership, {sessionEpoch, ttlMs, now?, tokenId?})`. */
    issueForMembership(membership, { now: at, ...rest } = {}) {
      return issued(open(native.get(this).issueForMembership(argsOf({ ...rest, membership, nowMs: now(at) }, 'arguments'))));
    }

    /** The claims of a token bound to exactly this principal, Group, roles and epochs, unexpired at `now`. */
    verify(token, { principal, principalId = agentIdOf(principal), now: at, ...rest } = {}) {
      return deepFreeze(open(native.get(this).verify(checkString(token, 'token'),
        argsOf({ ...rest, principalId, nowMs: now(at) }, 'arguments'))));
    }

    /** `verify` against a membership document: `(token, membership, {sessionEpoch, now?})`. */
    verifyMembership(token, membership, { now: at, ...rest } = {}) {
      return deepFreeze(open(native.get(this).verifyMembership(checkString(token, 'token'),
        argsOf({ ...rest, membership, nowMs: now(at) }, 'arguments'))));
    }
  }

  /**
   * Capability grants (§12) bound to a worker session, a WorkItem ownership epoch and its
   * Execution Lease; a grant never outlives the lease. Same options as MembershipTokenService.
   */
  class AuthorizationService {
    constructor({ secret, maximumTtlMs } = {}) {
      needsPolicy('AuthorizationService');
      adopt(native, this, new raw.PolicyAuthorization(secretOf(secret), serviceOptions(maximumTtlMs)));
    }

    toString() { return 'AuthorizationService(<secret redacted>)'; }

    /**
     * `{workerId, sessionEpoch, workItemId, ownershipEpoch, executionLease, ttlMs, allowedTools?,
     * allowedResources?, allowedOperations?, budget?, highRisk?, approvalId?, grantId?, now?}` →
     * `{claims, token}`; high-risk requests are `APPROVAL_REQUIRED`.
     */
    issue({ now: at, ...rest } = {}) {
      return issued(open(native.get(this).issue(argsOf({ ...rest, nowMs: now(at) }, 'arguments'))));
    }

    /** The grant a token proves for this binding (and `operation`, if given) at `now`. */
    verify(token, { now: at, ...rest } = {}) {
      return deepFreeze(open(native.get(this).verify(checkString(token, 'token'), argsOf({ ...rest, nowMs: now(at) }, 'arguments'))));
    }

    /**
     * A grant after the live checks over queried documents: the `issue` members (no
     * `executionLease`/`highRisk`) plus `currentSessionEpoch`, `workItem`, `executionLease`,
     * `mission` (documents or null), `remaining` (budgets) and `missionPermissions?`.
     */
    authorizeExecution({ now: at, ...rest } = {}) {
      return issued(open(native.get(this).authorizeExecution(argsOf({ ...rest, nowMs: now(at) }, 'arguments'))));
    }
  }

  /** A hard local budget (§12): `consume(delta)` returns the cumulative usage or refuses the whole delta (`BUDGET_EXCEEDED`). */
  class BudgetMeter {
    constructor(limit) {
      needsPolicy('BudgetMeter');
      adopt(native, this, new raw.PolicyBudgetMeter(argsOf(limit, 'limit')));
    }

    consume(delta) { return deepFreeze(open(native.get(this).consume(argsOf(delta, 'delta')))); }

    get usage() { return deepFreeze(open(native.get(this).usage())); }

    get limit() { return deepFreeze(open(native.get(this).limit())); }
  }

  /** The §20 limits with the reference's defaults (the core's), camelCase. */
  function cooperationLimits(overrides = {}) {
    needsPolicy('cooperationLimits');
    return Object.freeze({ ...open(raw.policyCooperationLimitsDefaults()), ...overrides });
  }

  /** Local delegation-depth, queue, clarification and rate limits (§20). `limits`: any subset of `cooperationLimits()`. */
  class PolicyGuard {
    constructor(limits = {}) {
      needsPolicy('PolicyGuard');
      adopt(native, this, new raw.PolicyGuard(argsOf(limits, 'limits')));
    }

    get limits() { return Object.freeze(open(native.get(this).limits())); }

    checkDelegationDepth(depth) { open(native.get(this).checkDelegationDepth(count(depth, 'depth'))); }

    checkQueue(queued, active) { open(native.get(this).checkQueue(count(queued, 'queued'), count(active, 'active'))); }

    checkUnresolvedClarifications(unresolved) {
      open(native.get(this).checkUnresolvedClarifications(count(unresolved, 'unresolved')));
    }

    /** `RATE_LIMITED` (retryable, `retryAfterMs`) past the per-minute limit of (principal, Group). */
    checkMessageRate(principalId, groupId, at) {
      open(this.#rate(principalId, groupId).checkMessageRate(agentIdOf(principalId), groupId, now(at)));
    }

    checkProposalRate(principalId, groupId, at) {
      open(this.#rate(principalId, groupId).checkProposalRate(agentIdOf(principalId), groupId, now(at)));
    }

    checkClarificationRate(principalId, groupId, at) {
      open(this.#rate(principalId, groupId).checkClarificationRate(agentIdOf(principalId), groupId, now(at)));
    }

    // The native guard, once the rate arguments are strings.
    #rate(principalId, groupId) {
      const guard = native.get(this);
      checkString(agentIdOf(principalId), 'principalId');
      checkString(groupId, 'groupId');
      return guard;
    }

    /** How many (principal, Group) rate windows are held. */
    trackedKeys() { return open(native.get(this).trackedKeys()); }

    /** `automatic` or `human_approval_required` (the core's high-risk table). */
    static classifyAction(operation) {
      needsPolicy('PolicyGuard.classifyAction');
      return raw.policyClassifyAction(checkString(operation, 'operation'));
    }
  }

  disposable(native, [MembershipTokenService, AuthorizationService, BudgetMeter, PolicyGuard]);
  /** `automatic` or `human_approval_required` for an operation name (`PolicyGuard.classifyAction`). */
  function classifyAction(operation) { return PolicyGuard.classifyAction(operation); }

  return { MembershipTokenService, AuthorizationService, BudgetMeter, PolicyGuard, cooperationLimits, classifyAction };
}
