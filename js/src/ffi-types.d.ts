// Generated from core/ffi/src/shapes (Rust, ts-rs): do not edit. Regenerate with
//   MWP_WRITE_FFI_TYPES=1 cargo test -p missionweaveprotocol-ffi shapes::typescript
// The call shapes are what the core reads (unknown members refused, `null` only where a member
// is optional); the answer shapes are what it returns. Times: a Date (converted by the wrapper)
// or integer milliseconds since the Unix epoch in, integer milliseconds out.
import type {
  AdmissionReasonName, DeclineReasonName, DelegationViolationKindName, Dimension, LeaseStateName,
  Millis, RetryReasonName, TimeInput, WireCode, WorkStateName,
} from './api.js';

/**
 * A `ResourceUsage` amount (§14): six optional dimensions (absent = 0), financial in
 * micro-units. The member names are the snapshot form's (`snapshot_json::dimension_member`).
 */
export type ResourceInput = { financialMicrounits?: number, modelTokens?: number, toolCalls?: number, computeSeconds?: number, wallClockSeconds?: number, externalActions?: number, };

/**
 * A `ResourceUsage` amount as the core reports it: all six dimensions.
 */
export type ResourceAmounts = { financialMicrounits: number, modelTokens: number, toolCalls: number, computeSeconds: number, wallClockSeconds: number, externalActions: number, };

/**
 * `{id, version}`: a capability and a semantic version.
 */
export type Capability = { id: string, version: string, };

/**
 * An execution lease: one WorkItem under one Ownership Epoch.
 */
export type WorkLeaseFields = { leaseId: string, missionId: string, groupId: string, holderAgentId: string, sessionEpoch: number, issuedAt: TimeInput, startsAt: TimeInput, expiresAt: TimeInput, workItemId: string, ownershipEpoch: number, };

/**
 * Queued ownership that must start by `startBy`.
 */
export type OwnershipLeaseFields = { leaseId: string, missionId: string, groupId: string, holderAgentId: string, sessionEpoch: number, issuedAt: TimeInput, startsAt: TimeInput, expiresAt: TimeInput, workItemId: string, ownershipEpoch: number, startBy: TimeInput, };

/**
 * Ownership retained while blocked, optionally bounded by `graceExpiresAt`.
 */
export type BlockedLeaseFields = { leaseId: string, missionId: string, groupId: string, holderAgentId: string, sessionEpoch: number, issuedAt: TimeInput, startsAt: TimeInput, expiresAt: TimeInput, workItemId: string, ownershipEpoch: number, graceExpiresAt?: TimeInput | null, };

/**
 * The Coordinator's lease (no WorkItem).
 */
export type CoordinatorLeaseFields = { leaseId: string, missionId: string, groupId: string, holderAgentId: string, sessionEpoch: number, issuedAt: TimeInput, startsAt: TimeInput, expiresAt: TimeInput, coordinatorEpoch: number, };

/**
 * The fencing tokens a holder presents (§11.3).
 */
export type LeaseClaim = { agentId: string, leaseId: string, sessionEpoch: number, ownershipEpoch?: number | null, coordinatorEpoch?: number | null, };

/**
 * A lease's full state; times in Unix milliseconds.
 */
export type LeaseStateAnswer = { leaseId: string, leaseType: 'coordinator' | 'ownership' | 'execution' | 'blocked', missionId: string, groupId: string, holderAgentId: string, sessionEpoch: number, workItemId: string | null, ownershipEpoch: number | null, coordinatorEpoch: number | null, issuedAt: Millis, startsAt: Millis, expiresAt: Millis, startBy: Millis | null, graceExpiresAt: Millis | null, state: LeaseStateName, renewalCount: number, lastRenewedAt: Millis | null, closedAt: Millis | null, closureReason: string | null, };

/**
 * The answer of `close`: whether the state changed, and the lease after the call.
 */
export type LeaseCloseAnswer = { changed: boolean, lease: LeaseStateAnswer, };

/**
 * A Delegation Grant's budget: the currency and the six ceilings (absent = 0).
 */
export type DelegationBudgetInput = { currency: string, financialMicrounits?: number, modelTokens?: number, toolCalls?: number, computeSeconds?: number, wallClockSeconds?: number, externalActions?: number, };

/**
 * A Delegation Grant (§13).
 */
export type DelegationGrantFields = { grantId: string, granteeAgentId: string, missionId: string, groupId: string, targetWorkItemId: string, allowedCapabilities: Array<Capability>, budget: DelegationBudgetInput, maxDescendantDepth: number, granteeMembershipEpoch: number, coordinatorEpoch: number, grantedBy: string, grantedAt: TimeInput, expiresAt: TimeInput, };

/**
 * The currency and all six ceilings.
 */
export type DelegationBudgetAnswer = { currency: string, financialMicrounits: number, modelTokens: number, toolCalls: number, computeSeconds: number, wallClockSeconds: number, externalActions: number, };

/**
 * A Delegation Grant as the authority holds it; the budget has all six ceilings.
 */
export type DelegationGrantAnswer = { grantId: string, granteeAgentId: string, missionId: string, groupId: string, targetWorkItemId: string, allowedCapabilities: Array<Capability>, budget: DelegationBudgetAnswer, maxDescendantDepth: number, granteeMembershipEpoch: number, coordinatorEpoch: number, grantedBy: string, grantedAt: Millis, expiresAt: Millis, };

/**
 * The actor's membership in the Mission group (absent or `null`: not a member).
 */
export type MembershipInput = { groupId: string, active?: boolean | null, workDelegate?: boolean | null, epoch: number, };

/**
 * What the caller knows when it uses a Grant.
 */
export type DelegationContextInput = { actorAgentId: string, membership?: MembershipInput | null, missionId: string, groupId: string, coordinatorEpoch: number, coordinatorAgentId: string, 
/**
 * The Organization cooperation policy's maximum delegation depth (default 3).
 */
organizationMaxDepth?: number | null, now: TimeInput, };

/**
 * One node of the caller's WorkItem graph.
 */
export type WorkItemNodeInput = { missionId: string, parentWorkItemId?: string | null, closed?: boolean | null, };

/**
 * The work a Grant is used for.
 */
export type DelegatedWorkInput = { requiredCapabilities?: Array<Capability> | null, budget?: ResourceInput | null, currency?: string | null, };

/**
 * Why a Grant refused or ended.
 */
export type DelegationViolationAnswer = { kind: DelegationViolationKindName, code: WireCode, message: string, dimension: Dimension | null, };

/**
 * `retryPolicy.backoff` (`work-contract.schema.json`).
 */
export type BackoffName = "none" | "fixed" | "exponential";

/**
 * A WorkItem's retry policy; `maxDelayMs` or the contract's `maxDelay` duration, not both.
 */
export type RetryPolicyInput = { maxAttempts: number, backoff?: BackoffName, 
/**
 * Default min(1000, maxDelayMs).
 */
initialDelayMs?: number, maxDelayMs?: number, maxDelay?: string, retryableFailures?: Array<string>, };

/**
 * A RetryController's construction.
 */
export type RetryOptions = { policy: RetryPolicyInput, deadline?: TimeInput | null, costBudget?: ResourceInput | null, missionId: string, workItemId: string, ownershipEpoch: number, };

/**
 * How an attempt ended: `{success: true}` or a failure with its code.
 */
export type AttemptOutcomeInput = { success: boolean, code?: string | null, retryable?: boolean | null, };

/**
 * The controller's progress.
 */
export type RetryStateAnswer = { attempts: number, usage: ResourceAmounts, finished: RetryReasonName | null, };

/**
 * One started attempt.
 */
export type AttemptAnswer = { attemptNumber: number, idempotencyKey: string, attemptKey: string, startedAt: Millis, };

/**
 * Whether and when to retry.
 */
export type RetryScheduleAnswer = { retry: boolean, retryAt: Millis | null, reason: RetryReasonName, };

/**
 * One group's share: weight 1..=1 000 000 (default 1), optional slot quota.
 */
export type GroupPolicyInput = { weight?: number | null, slotQuota?: number | null, };

/**
 * The Scheduler's policy; every member is optional (the core's defaults).
 */
export type SchedulerPolicyInput = { capacitySlots?: number | null, groups?: { [key in string]: GroupPolicyInput } | null, defaultGroup?: GroupPolicyInput | null, 
/**
 * `null`: every capability is supported.
 */
supportedCapabilities?: Array<Capability> | null, 
/**
 * `null`: every group is allowed.
 */
allowedGroups?: Array<string> | null, maxWorkItems?: number | null, maxWorkItemsPerGroup?: number | null, declineInfeasibleDeadlines?: boolean | null, priorityStepMs?: number | null, deadlineHorizonMs?: number | null, fairnessLagSlots?: number | null, preemptionMargin?: number | null, defaultEstimateMs?: number | null, };

/**
 * The offer's admission gates (each default `true`).
 */
export type EligibilityInput = { authorized?: boolean | null, dependenciesReady?: boolean | null, budgetAvailable?: boolean | null, };

/**
 * One unit of work offered to the Scheduler.
 */
export type WorkOfferInput = { workId: string, groupId: string, 
/**
 * Organization priority class, -100..100 (default 0; the core checks the range).
 */
priority?: number | null, deadline?: TimeInput | null, estimatedDurationMs?: number | null, slots?: number | null, requiredCapabilities?: Array<Capability> | null, preemptible?: boolean | null, eligibility?: EligibilityInput | null, };

/**
 * A checkpoint the Worker saved (`durable` and `safe` default `true`).
 */
export type CheckpointInput = { checkpointId: string, durable?: boolean | null, safe?: boolean | null, };

/**
 * The six kinds of Worker report, in the core's snake_case.
 */
export type TransitionKindName = "checkpoint_saved" | "preemption_declined" | "blocked" | "released" | "completed" | "failed";

/**
 * A Worker report about the current run. `checkpoint` is required by `checkpoint_saved` and
 * `blocked`, `reason` by `blocked`; `retryAt` belongs to `blocked` only.
 */
export type TransitionInput = { kind: TransitionKindName, generation: number, checkpoint?: CheckpointInput | null, retryAt?: TimeInput | null, reason?: string | null, };

/**
 * The admission decision for one offer.
 */
export type AdmissionDecisionAnswer = { workId: string, accepted: boolean, reason: AdmissionReasonName, declineReason: DeclineReasonName | null, };

/**
 * A checkpoint as the Scheduler holds it.
 */
export type CheckpointAnswer = { checkpointId: string, durable: boolean, safe: boolean, };

/**
 * One decision of `schedule`: `dispatch` (with `slots`, `resumeFrom`) or `preempt`.
 */
export type ScheduleActionAnswer = { type: 'dispatch' | 'preempt', workId: string, groupId: string, generation: number, 
/**
 * `workId:generation`.
 */
runId: string, 
/**
 * Dispatch only.
 */
slots?: number, 
/**
 * Dispatch only: the checkpoint to resume from, or `null`.
 */
resumeFrom?: CheckpointAnswer | null, };

/**
 * What the Scheduler discloses about one WorkItem (§11.4); times in Unix milliseconds.
 */
export type ScheduleDisclosureAnswer = { state: WorkStateName, earliestStart: Millis | null, latestStart: Millis | null, estimatedCompletion: Millis | null, confidence: 'high' | 'medium' | 'low', capacityStatus: 'available' | 'constrained' | 'saturated', calculatedAt: Millis, };

/**
 * Occupancy figures.
 */
export type SchedulerStatsAnswer = { size: number, usedSlots: number, capacitySlots: number, horizonMs: number, };

/**
 * The options of a token or grant service: absent `maximumTtlMs` is the core's maximum
 * (15 minutes: `MAXIMUM_TTL_MS`, `MAXIMUM_GRANT_TTL_MS`).
 */
export type TokenServiceOptions = { maximumTtlMs?: number | null, };

/**
 * `MembershipTokenService.issue`.
 */
export type MembershipIssueInput = { principalId: string, groupId: string, roles?: Array<string> | null, membershipEpoch: number, sessionEpoch: number, ttlMs: number, nowMs: Millis, 
/**
 * Absent: a random `urn:uuid:` from the host's source.
 */
tokenId?: string | null, };

/**
 * `MembershipTokenService.verify`.
 */
export type MembershipVerifyInput = { principalId: string, groupId: string, roles?: Array<string> | null, membershipEpoch: number, sessionEpoch: number, nowMs: Millis, };

/**
 * `MembershipTokenService.issueForMembership`: an active Agent Membership document.
 */
export type MembershipDocumentIssueInput = { membership: Record<string, unknown>, sessionEpoch: number, ttlMs: number, nowMs: Millis, tokenId?: string | null, };

/**
 * `MembershipTokenService.verifyMembership`.
 */
export type MembershipDocumentVerifyInput = { membership: Record<string, unknown>, sessionEpoch: number, nowMs: Millis, };

/**
 * `AuthorizationService.issue` (a high-risk request is the core's `APPROVAL_REQUIRED`).
 */
export type GrantIssueInput = { workerId: string, sessionEpoch: number, workItemId: string, ownershipEpoch: number, allowedTools?: Array<string> | null, allowedResources?: Array<string> | null, allowedOperations?: Array<string> | null, budget?: ResourceInput | null, 
/**
 * The `lease.schema.json` document of the Execution Lease.
 */
executionLease: Record<string, unknown>, ttlMs: number, nowMs: Millis, highRisk?: boolean | null, approvalId?: string | null, 
/**
 * Absent: a random `urn:uuid:` from the host's source.
 */
grantId?: string | null, };

/**
 * `AuthorizationService.verify`.
 */
export type GrantVerifyInput = { workerId: string, sessionEpoch: number, workItemId: string, ownershipEpoch: number, executionLease: Record<string, unknown>, nowMs: Millis, operation?: string | null, };

/**
 * `AuthorizationService.authorizeExecution`: the request and the queried documents (`null`:
 * not found). `executionApproval` is the `execution_approval` document `approvalId` names.
 */
export type AuthorizeExecutionInput = { workerId: string, sessionEpoch: number, workItemId: string, ownershipEpoch: number, allowedTools?: Array<string> | null, allowedResources?: Array<string> | null, allowedOperations?: Array<string> | null, budget?: ResourceInput | null, ttlMs: number, nowMs: Millis, approvalId?: string | null, grantId?: string | null, currentSessionEpoch?: number | null, workItem?: Record<string, unknown> | null, executionLease?: Record<string, unknown> | null, mission?: Record<string, unknown> | null, 
/**
 * The remaining budgets of the WorkItem and its ancestry.
 */
remaining: Array<ResourceInput>, missionPermissions?: Array<string> | null, executionApproval?: Record<string, unknown> | null, };

/**
 * The §20 limits of a local guard: an absent or `null` member keeps the reference's default
 * (the core's one merge rule, `CooperationLimitsConfig`, as Python's keyword arguments).
 */
export type GuardLimitsInput = { maximumDelegationDepth?: number | null, maximumQueuedWorkItems?: number | null, maximumActiveWorkItems?: number | null, maximumUnresolvedClarifications?: number | null, maximumMessageRatePerMinute?: number | null, maximumProposalRatePerMinute?: number | null, maximumClarificationRatePerMinute?: number | null, maximumTrackedKeys?: number | null, };

/**
 * The core's policy constants a binding shows as defaults (§8, §12, §6.3).
 */
export type PolicyDefaultsAnswer = { 
/**
 * The longest (and default) lifetime of a membership token service (15 minutes).
 */
membershipTokenMaximumTtlMs: number, 
/**
 * The longest (and default) lifetime of a capability grant service (15 minutes).
 */
capabilityGrantMaximumTtlMs: number, 
/**
 * A session token's default lifetime (15 minutes).
 */
sessionTtlMs: number, 
/**
 * A HELLO challenge's default lifetime (30 seconds).
 */
challengeTtlMs: number, };

/**
 * A one-use challenge; `signingBytes` is the canonical transcript (RFC 8785 text) the Agent
 * signs.
 */
export type ChallengeAnswer = { protocolVersion: string, challengeId: string, agentId: string, keyId: string, clientNonce: string, serverNonce: string, expiresAt: Millis, signingBytes: string, };

/**
 * An open session: the Agent, its key, the Session Epoch and the token's window.
 */
export type SessionGrantAnswer = { agentId: string, keyId: string, protocolVersion: string, sessionEpoch: number, issuedAt: Millis, expiresAt: Millis, token: string, };
