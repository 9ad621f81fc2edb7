// The JavaScript face of MissionWeaveProtocol, shared by both backends (the napi addon and the
// WebAssembly build). A backend ("raw") returns envelope strings — {"ok":…} or {"error":…} —
// and this module turns them into typed objects and Error subclasses.
//
// This file is the ESM source; scripts/build.mjs derives dist/api.cjs from it. Keep every
// export a top-level `export class|function|const` and import nothing.

export const PROTOCOL_VERSION = '0.1';

/** The nine signature-required document kinds (§6.4 profile IDs). */
export const DOCUMENT_KINDS = Object.freeze([
  'agent-card', 'approval', 'artifact', 'command', 'context-package',
  'event', 'evidence', 'extension-profile', 'group-snapshot',
]);

/** The six semantic verification stages, in order. */
export const STAGES = Object.freeze([
  'parse', 'schema', 'signature-envelope', 'key-resolution', 'canonicalization', 'signature',
]);

/** The fixed wire message of every rejected signed document (§6.4). */
export const WIRE_MESSAGE = 'signed document rejected';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function hidden(target, values) {
  for (const [name, value] of Object.entries(values)) {
    Object.defineProperty(target, name, { value, enumerable: false, writable: false, configurable: true });
  }
}

// `using` and `[Symbol.dispose]` (issue 9, item 10): Node 20 and current browsers define
// `Symbol.dispose` (Node's is `Symbol.for('nodejs.dispose')`, the fallback on older engines).
const DISPOSE = Symbol.dispose ?? Symbol.for('nodejs.dispose');

/**
 * The native objects behind this package's classes (a Registry, a log, a Scheduler, …), by
 * JavaScript object. `free(self)` drops the native state at once — the garbage collector would
 * only get to it after the event loop turns, so a synchronous loop would keep every one alive —
 * and any later use is an ArgumentError (`invalid-argument`), never a crash.
 */
class NativeTable {
  #live = new WeakMap();
  #freed = new WeakSet();
  #freedError;

  /** `raw`: the backend, whose core supplies the freed-object error (one text, in Rust). */
  constructor(raw) { this.#freedError = (what) => toError(JSON.parse(raw.freedError(what)).error); }

  set(self, handle) { this.#live.set(self, handle); }

  get(self, what = self?.constructor?.name ?? 'object') {
    const handle = this.#live.get(self);
    if (handle !== undefined) return handle;
    if (this.#freed.has(self)) {
      throw this.#freedError(what);
    }
    throw new ArgumentError(`not a ${what} of this backend`, { fields: { argument: what } });
  }

  free(self) {
    const handle = this.#live.get(self);
    if (handle === undefined) return;
    this.#live.delete(self);
    this.#freed.add(self);
    handle.free?.();
  }
}

// Adds `free()` and `[Symbol.dispose]()` (= free) to the prototypes of `classes`, as
// non-enumerable methods like the ones a class body defines.
function disposable(table, classes) {
  for (const Class of classes) {
    Object.defineProperty(Class.prototype, 'free', {
      value: function free() { table.free(this); }, enumerable: false, writable: true, configurable: true,
    });
    Object.defineProperty(Class.prototype, DISPOSE, {
      value: function dispose() { table.free(this); }, enumerable: false, writable: true, configurable: true,
    });
  }
}

/**
 * Base class of every error this package throws. Every error the Rust core reports describes
 * itself, and this package shows that description unchanged: `code` (a §19 wire code),
 * `reason` (a stable slug to match on), `stage` (where it applies), `retryable`, the protected
 * `detail` (audit only: never send it to a peer) and the structured fields (`dimension`,
 * `account`, `path`, …, camelCase) as properties, also listed in `fields`. Only `code`,
 * `retryable` and, for rejected documents, `wireMessage` are enumerable, so serializing an error
 * by accident yields its wire view. The same error has the same code, reason and fields in the
 * Python package.
 */
export class MwpError extends Error {
  constructor(message, { code = 'INTERNAL_ERROR', stage = null, reason = null, detail = message, retryable, fields = {}, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    hidden(this, { name: new.target.name, stage, reason, detail, fields: Object.freeze({ ...fields }) });
    for (const [name, value] of Object.entries(fields)) {
      if (name === 'wireMessage') this.wireMessage = value;
      else hidden(this, { [name]: value && typeof value === 'object' ? Object.freeze(Array.isArray(value) ? [...value] : { ...value }) : value });
    }
    this.code = code;
    this.retryable = retryable ?? RETRYABLE_CODES.has(code);
  }
}

/** The §19 codes an unchanged retry can succeed on. */
const RETRYABLE_CODES = new Set(['RATE_LIMITED', 'BACKPRESSURE', 'INTERNAL_ERROR']);

/**
 * API misuse: wrong argument type, unknown kind or schema, bad seed. `PROTOCOL_VIOLATION` with
 * reason `invalid-argument`, as in every binding (§19 has no code for local API misuse).
 */
export class ArgumentError extends MwpError {
  constructor(detail, options = {}) {
    super(detail, { code: 'PROTOCOL_VIOLATION', reason: 'invalid-argument', ...options });
  }
}

/** Strict JSON parsing failed (§6.4 stage 1): PROTOCOL_VIOLATION; `offset` is the byte offset. */
export class ParseError extends MwpError {}

/** The value is outside the I-JSON data model (RFC 8785 fails): PROTOCOL_VIOLATION. */
export class CanonicalizationError extends MwpError {}

/** Schema validation failed: SCHEMA_VALIDATION_FAILED (`instancePath`, `schemaLocation`, `keyword`). */
export class SchemaValidationError extends MwpError {}

/** A timestamp outside the protocol's RFC 3339 profile: SCHEMA_VALIDATION_FAILED. */
export class TimestampError extends MwpError {}

function wireView(error) {
  return { code: error.code, message: error.wireMessage, retryable: false };
}

/**
 * A signed document was rejected. The message and the enumerable members are the wire view
 * (`code`, `wireMessage`, `retryable`); `stage`, `stageNumber`, `reason` and `detail` are the
 * protected diagnostic and must not be sent to the peer.
 */
export class VerificationError extends MwpError {
  /** What a server sends: `{code, message, retryable}`. */
  toWire() { return wireView(this); }

  /** The protected diagnostic: `stage/reason: detail`. */
  protectedDiagnostic() { return `${this.stage}/${this.reason}: ${this.detail}`; }
}

/**
 * First Admission or historical replay failed (stage `admission`): AUTH_INVALID_SIGNATURE. Same
 * wire surface as {@link VerificationError}: `String(e)`, `toWire()`, `protectedDiagnostic()`.
 */
export class AdmissionError extends MwpError {
  /** What a server sends: `{code, message, retryable}`. */
  toWire() { return wireView(this); }

  /** The protected diagnostic: `admission/reason: detail`. */
  protectedDiagnostic() { return `${this.stage}/${this.reason}: ${this.detail}`; }
}

/** The document cannot be signed: it would fail at `stage`. */
export class SigningError extends MwpError {}

/** The Registry snapshot is not usable evidence (fails stage 4 when verifying). */
export class RegistryError extends MwpError {}

/** A frame failed strict parsing (PROTOCOL_VIOLATION) or the frame schema (SCHEMA_VALIDATION_FAILED). */
export class FrameError extends MwpError {}

/** The embedded protocol bundle failed its integrity checks (`problems`). */
export class BundleError extends MwpError {}

// ---- bounded authority and scheduling: shared data, enums and errors ------------------------
//
// Time: every time argument is a Date or a number of integer milliseconds since the Unix epoch
// (UTC); every time returned is such a number. Money: integer micro-units of the currency
// (10^-6), as in the core; every budget amount is a safe non-negative integer.

/** The six budget dimensions as `ResourceUsage` members (financial in micro-units). */
export const RESOURCE_DIMENSIONS = Object.freeze([
  'financialMicrounits', 'modelTokens', 'toolCalls', 'computeSeconds', 'wallClockSeconds', 'externalActions',
]);

/** `state` of a lease (§11.3); non-active states are terminal. */
export const LeaseState = Object.freeze({ ACTIVE: 'active', EXPIRED: 'expired', REVOKED: 'revoked', RELEASED: 'released' });

/** Why a Delegation Grant use was refused (§9.1). */
export const DelegationViolationKind = Object.freeze({
  IDENTITY: 'identity', MEMBERSHIP: 'membership', MEMBERSHIP_EPOCH: 'membership_epoch', SCOPE: 'scope',
  CAPABILITY: 'capability', BUDGET: 'budget', DEPTH: 'depth', COORDINATOR_EPOCH: 'coordinator_epoch',
  ISSUER: 'issuer', EXPIRED: 'expired', NOT_YET_VALID: 'not_yet_valid', TARGET_MISSING: 'target_missing',
  TARGET_CLOSED: 'target_closed', MALFORMED: 'malformed',
});

/** Scheduler-local state of a non-terminal item. */
export const WorkState = Object.freeze({ READY: 'ready', RUNNING: 'running', PREEMPTING: 'preempting', BLOCKED: 'blocked' });

/** Fine admission reasons (§10.3). */
export const AdmissionReason = Object.freeze({
  ACCEPTED: 'accepted', DUPLICATE: 'duplicate', IDENTIFIER_COLLISION: 'identifier_collision',
  ALREADY_TERMINAL: 'already_terminal', WORKER_FULL: 'worker_full', GROUP_FULL: 'group_full',
  GROUP_NOT_ALLOWED: 'group_not_allowed', GROUP_QUOTA_DISABLED: 'group_quota_disabled',
  UNSUPPORTED_CAPABILITY: 'unsupported_capability', EXCEEDS_CAPACITY: 'exceeds_capacity',
  DEADLINE_EXPIRED: 'deadline_expired', NOT_AUTHORIZED: 'not_authorized',
  DEPENDENCY_UNSATISFIED: 'dependency_unsatisfied', BUDGET_UNAVAILABLE: 'budget_unavailable',
});

/** Worker reports about a running item (`Scheduler.apply`). */
export const TransitionKind = Object.freeze({
  CHECKPOINT_SAVED: 'checkpoint_saved', PREEMPTION_DECLINED: 'preemption_declined', BLOCKED: 'blocked',
  RELEASED: 'released', COMPLETED: 'completed', FAILED: 'failed',
});

/** A lease operation or lease-bound claim was refused; `reason` says why (e.g. `expired`, `stale_ownership`). */
export class LeaseError extends MwpError {}

/** A budget ledger operation was refused; `account` is `{kind: 'mission'|'work_item', id}` when known. */
export class BudgetLedgerError extends MwpError {}

/** BUDGET_EXCEEDED: charging or reserving would pass a limit in `dimension` (e.g. `tool_calls`); nothing was charged. */
export class BudgetExceededError extends BudgetLedgerError {}

/** A Delegation Grant use was refused; `kind` is a DelegationViolationKind, `code` its wire code. */
export class DelegationViolation extends MwpError {}

/** The same class under its Error-suffixed name. */
export const DelegationViolationError = DelegationViolation;

/** A retry-controller call was refused (`reason`: attempt_in_flight, backoff_pending, …). */
export class RetryError extends MwpError {}

/**
 * The core's `policy` error class (§8, §12, §20 refusals and retry-controller misuse): the
 * reference's `PolicyError`, the same class as `RetryError` (the core's `ErrorClass::js_name`).
 */
export const PolicyError = RetryError;

/** The retry loop is over (`finishedReason`) or the deadline passed: no further attempt. */
export class RetryExhausted extends RetryError {}

/** A Scheduler argument, checkpoint or snapshot was refused (`reason`: invalid_argument, unsafe_checkpoint, …; `field`). */
export class SchedulerError extends MwpError {}

/** A Scheduler call does not fit the item's state (`reason`: unknown_work, stale_run, invalid_transition; `workId`, `state`, …). */
export class SchedulerStateError extends MwpError {}

/** A persisted snapshot is malformed or inconsistent: INTERNAL_ERROR (`path` says where). */
export class SnapshotError extends MwpError {}

/** Content-addressed Artifact bytes or their manifest were refused (§13.1; `reason`: hash_mismatch, size_mismatch, content_missing, stored_bytes_conflict, …). */
export class ArtifactError extends MwpError {}

/** An Agent authentication step was refused (§6.3; `reason`: unknown_challenge, invalid_signature, stale_session, invalid_token, key_revoked, …). */
export class AuthenticationError extends MwpError {}
// ---- Agent-local store and replay errors (§16, §19) ------------------------------------------
/** The Agent-local store refused or failed (`reason`: event_position_collision, action_collision, stale_revision, checkpoint_collision, cursor_conflict, invalid_argument, corrupt, backend). */
export class LocalStoreError extends MwpError {}

/** A replay stopped; the Events before the failing one are committed. */
export class ReplayError extends MwpError {}

/** A Context Package was refused (§13.3; `reason`: source_events_empty, event_outside_group, source_range_gap, duplicate_source_event, decision_outside_range, version_chain, source_range_mismatch, generator_mismatch, scope_mismatch, invalid_argument). */
export class ContextPackageError extends MwpError {}

/** An empty Agent or Group ID, or an Event of another Group (`PROTOCOL_VIOLATION`, `INVALID_COMMAND`). */
export class ReplayGroupError extends ReplayError {}

/** A gap (`sequence > cursor + 1`), a missing sequence, or an Event ID seen at another position (`PROTOCOL_VIOLATION`). */
export class ReplaySequenceError extends ReplayError {}

/** A projected offer collides with an admitted one (same WorkItem ID, other content: `INVALID_STATE_TRANSITION`). */
export class ReplayProjectionError extends ReplayError {}

// ---- Agent runtime and offline errors (§6.3, §11.3, §11.5): the core's `ErrorClass` names ----
/** An Agent runtime argument, or a dispatch the Scheduler does not have running (`reason`: invalid_argument, not_dispatched). */
export class AgentError extends MwpError {}

/** A second Agent Session while one is active (`INVALID_STATE_TRANSITION`, `active_session`). */
export class ActiveSessionError extends MwpError {}

/** A Session Epoch not above every earlier one (`AUTH_STALE_SESSION`, `stale_session_epoch`). */
export class StaleSessionEpochError extends MwpError {}

/** A closed or replaced session (`AUTH_REQUIRED`, `closed_session`). */
export class ClosedSessionError extends MwpError {}

/** A Group context or credential revision not above the installed one (`REVISION_CONFLICT`, `stale_context`). */
export class StaleContextError extends MwpError {}

/** Offline buffering, rebasing or a binding was refused (§11.5; `reason`: not_reversible, outside_grace, too_many_actions, …). */
export class OfflinePolicyError extends MwpError {}

// ---- the authoritative Core: vocabularies and the error families -----------------------------
//
// `Core.perform`, `query` and `replay` reject with a MissionWeaveProtocolError subclass. Its
// `code` is the §19 wire code; `family` is the reference runtime's ErrorCode (one of 15), which
// the Rust core derives from the wire code and reason (one table, in Rust); the class is the
// family's (`InvalidCommand`, `NotFound`, …), so `catch (e) { if (e instanceof RevisionConflict) … }`
// reads as in the Python package.

/** The reference runtime's error families (`ErrorCode`, snake_case values). */
export const ErrorCode = Object.freeze({
  INVALID_COMMAND: 'invalid_command', NOT_FOUND: 'not_found', ALREADY_EXISTS: 'already_exists',
  AUTHORIZATION_DENIED: 'authorization_denied', ACTION_ID_COLLISION: 'action_id_collision',
  STALE_SESSION_EPOCH: 'stale_session_epoch', STALE_MEMBERSHIP_EPOCH: 'stale_membership_epoch',
  STALE_COORDINATOR_EPOCH: 'stale_coordinator_epoch', STALE_OWNERSHIP_EPOCH: 'stale_ownership_epoch',
  LEASE_EXPIRED: 'lease_expired', INVALID_TRANSITION: 'invalid_transition', REVISION_CONFLICT: 'revision_conflict',
  DEPENDENCY_ERROR: 'dependency_error', POLICY_VIOLATION: 'policy_violation', BUDGET_EXCEEDED: 'budget_exceeded',
});

/** What `Core.query` can read (the reference's `QueryKind`). */
export const QueryKind = Object.freeze({
  COMMAND: 'command', AGENT_CARD: 'agent_card', SESSION_EPOCH: 'session_epoch', MISSION: 'mission', GROUP: 'group',
  MEMBERSHIP: 'membership', CONVERSATION: 'conversation', MESSAGE: 'message', MESSAGE_AMENDMENT: 'message_amendment',
  WORK_PROPOSAL: 'work_proposal', WORK_ITEM: 'work_item', MISSION_WORK_ITEMS: 'mission_work_items', ARTIFACT: 'artifact',
  APPROVAL: 'approval', EXECUTION_APPROVAL: 'execution_approval', COOPERATION_OVERRIDE_GRANT: 'cooperation_override_grant',
  POLICY_LOG: 'policy_log', GROUP_SNAPSHOT: 'group_snapshot', DELEGATION_GRANT: 'delegation_grant',
  EXECUTION_LEASE: 'execution_lease', BUDGET_REMAINING: 'budget_remaining',
});

/**
 * A Command was refused, or a query or replay could not be answered, by the authoritative Core.
 * `code`: the §19 wire code a peer gets; `family`: the reference's ErrorCode; `reason`: the
 * core's stable slug; the structured fields (`expectedRevision`, `currentRevision`, …) are
 * properties and `fields`. Nothing was applied (§15.1).
 */
export class MissionWeaveProtocolError extends MwpError {
  constructor(message, options = {}) {
    super(message, options);
    hidden(this, { family: options.family ?? FAMILY_OF_CLASS.get(new.target) ?? null });
  }

  /**
   * The reference's `as_dict()`, as the Python package gives it: `{code, message, details}`, where
   * `code` is the ErrorCode family (the wire code is `this.code`).
   */
  asDict() {
    return { code: this.family, message: this.message, details: { ...this.fields } };
  }
}

/** The Command is malformed or names something it may not (INVALID_COMMAND, SCHEMA_VALIDATION_FAILED, …). */
export class InvalidCommand extends MissionWeaveProtocolError {}
/** The Group, Mission, WorkItem or other entity does not exist (GROUP_NOT_FOUND, …). */
export class NotFound extends MissionWeaveProtocolError {}
/** The entity already exists. */
export class AlreadyExists extends MissionWeaveProtocolError {}
/** The signer may not do this, or the signature did not verify (AUTH_FORBIDDEN, AUTH_INVALID_SIGNATURE, …). */
export class AuthorizationDenied extends MissionWeaveProtocolError {}
/** The Action ID was used before for another signed Command (ACTION_ID_COLLISION). */
export class ActionIdCollision extends MissionWeaveProtocolError {}
/** The Session Epoch is not the current one (AUTH_STALE_SESSION). */
export class StaleSessionEpoch extends MissionWeaveProtocolError {}
/** The Membership Epoch is stale or the Membership ended (MEMBERSHIP_STALE). */
export class StaleMembershipEpoch extends MissionWeaveProtocolError {}
/** The Coordinator Epoch is not the current one (AUTH_STALE_COORDINATOR). */
export class StaleCoordinatorEpoch extends MissionWeaveProtocolError {}
/** The Ownership Epoch is not the current one (WORK_STALE_OWNERSHIP). */
export class StaleOwnershipEpoch extends MissionWeaveProtocolError {}
/** The lease or offer the Command relies on is no longer valid (WORK_LEASE_EXPIRED, WORK_OFFER_EXPIRED). */
export class LeaseExpired extends MissionWeaveProtocolError {}
/** The aggregate's state does not allow this transition (INVALID_STATE_TRANSITION, WORK_ALREADY_OWNED). */
export class InvalidTransition extends MissionWeaveProtocolError {}
/** `expectedRevision` is not the current revision (REVISION_CONFLICT). */
export class RevisionConflict extends MissionWeaveProtocolError {}
/** A dependency is missing, not ready, or would close a cycle. */
export class DependencyError extends MissionWeaveProtocolError {}
/** Policy refuses the Command (UNKNOWN_CRITICAL_EXTENSION, APPROVAL_REQUIRED, RATE_LIMITED, …). */
export class PolicyViolation extends MissionWeaveProtocolError {}
/** Charging the Command would pass a budget limit (BUDGET_EXCEEDED). */
export class BudgetExceeded extends MissionWeaveProtocolError {}

/** The class of each ErrorCode family. */
const FAMILY_CLASSES = {
  invalid_command: InvalidCommand, not_found: NotFound, already_exists: AlreadyExists,
  authorization_denied: AuthorizationDenied, action_id_collision: ActionIdCollision,
  stale_session_epoch: StaleSessionEpoch, stale_membership_epoch: StaleMembershipEpoch,
  stale_coordinator_epoch: StaleCoordinatorEpoch, stale_ownership_epoch: StaleOwnershipEpoch,
  lease_expired: LeaseExpired, invalid_transition: InvalidTransition, revision_conflict: RevisionConflict,
  dependency_error: DependencyError, policy_violation: PolicyViolation, budget_exceeded: BudgetExceeded,
};
const FAMILY_OF_CLASS = new Map(Object.entries(FAMILY_CLASSES).map(([family, Class]) => [Class, family]));

function deepFreeze(value) {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/** Six non-negative safe integers (financial in micro-units); missing members are 0. */
export class ResourceUsage {
  constructor(values = {}) {
    if (!values || typeof values !== 'object') throw new ArgumentError('ResourceUsage: expected an object');
    for (const name of Object.keys(values)) {
      if (!RESOURCE_DIMENSIONS.includes(name)) throw new ArgumentError(`ResourceUsage: unknown member ${JSON.stringify(name)}`);
    }
    for (const name of RESOURCE_DIMENSIONS) {
      const v = values[name] ?? 0;
      if (!Number.isSafeInteger(v) || v < 0) throw new ArgumentError(`ResourceUsage.${name}: expected a safe non-negative integer`);
      this[name] = v;
    }
    if (new.target === ResourceUsage) Object.freeze(this);
  }
}

/** A Delegation Grant's explicit ceilings for all six dimensions, with the currency of the financial one. */
export class DelegationBudget extends ResourceUsage {
  constructor({ currency, ...values } = {}) {
    if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency)) throw new ArgumentError('DelegationBudget.currency: three upper-case letters');
    super(values);
    this.currency = currency;
    Object.freeze(this);
  }
}

/** The persisted Grant (`membership.delegationGrants[]`); validated by `new DelegationAuthority(grant)`. */
export class DelegationGrant {
  constructor(fields) {
    if (!fields || typeof fields !== 'object') throw new ArgumentError('DelegationGrant: expected an object');
    Object.assign(this, fields);
    if (!(this.budget instanceof DelegationBudget)) this.budget = new DelegationBudget(this.budget);
    deepFreeze(this);
  }
}

/** The result of `Scheduler.admit`: `declineReason` is the coarse §10.3 category (null when accepted). */
export class AdmissionDecision {
  constructor(raw) { Object.assign(this, raw); Object.freeze(this); }
}

/** Start `workId` in `slots` slots (run `runId` = `workId:generation`), resuming from `resumeFrom` if set. */
export class Dispatch {
  constructor(raw) {
    this.workId = raw.workId;
    this.groupId = raw.groupId;
    this.runId = raw.runId;
    this.generation = raw.generation;
    this.slots = raw.slots;
    this.resumeFrom = raw.resumeFrom ? Object.freeze(raw.resumeFrom) : null;
    Object.freeze(this);
  }
}

/** Ask the run `runId` to reach a durable, safe checkpoint and yield (§11.3). */
export class Preempt {
  constructor(raw) {
    this.workId = raw.workId;
    this.groupId = raw.groupId;
    this.runId = raw.runId;
    this.generation = raw.generation;
    Object.freeze(this);
  }
}

/** A §11.2 disclosure (times in ms; null while blocked without a retry time). */
export class ScheduleDisclosure {
  constructor(raw) { Object.assign(this, raw); Object.freeze(this); }
}

/** One started attempt: the stable idempotency key of the logical operation and a per-attempt key. */
export class Attempt {
  constructor(raw) { Object.assign(this, raw); Object.freeze(this); }
}

/** The decision after an attempt (`reason`: completed, permanent_failure, attempts_exhausted, …). */
export class RetrySchedule {
  constructor(raw) { Object.assign(this, raw); Object.freeze(this); }
}

/** The Scheduler's persisted state (JSON form of the core's snapshot; `JSON.stringify` it to store). */
export class SchedulerSnapshot {
  constructor(document) {
    const doc = typeof document === 'string' ? JSON.parse(document) : document;
    if (!doc || typeof doc !== 'object') throw new ArgumentError('SchedulerSnapshot: expected an object or JSON text');
    Object.assign(this, structuredClone(doc));
    deepFreeze(this);
  }
}

/** The budget ledger's persisted state (JSON form of the core's snapshot). */
export class BudgetLedgerSnapshot {
  constructor(document) {
    const doc = typeof document === 'string' ? JSON.parse(document) : document;
    if (!doc || typeof doc !== 'object') throw new ArgumentError('BudgetLedgerSnapshot: expected an object or JSON text');
    Object.assign(this, structuredClone(doc));
    deepFreeze(this);
  }
}

// A class's accessor of its native object, for the other objects of the same backend (not enumerable, not exported).
const NATIVE_OF = Symbol('native');

// The class the core names for each error (`ErrorClass::js_name`): one generic construction.
const ERROR_CLASSES = {
  ArgumentError, ParseError, CanonicalizationError, SchemaValidationError, TimestampError,
  VerificationError, AdmissionError, SigningError, RegistryError, FrameError, BundleError,
  LeaseError, BudgetLedgerError, BudgetExceededError, DelegationViolation, RetryError,
  RetryExhausted, SchedulerError, SchedulerStateError, SnapshotError, ArtifactError,
  AuthenticationError,
  LocalStoreError, ReplayError, ReplayGroupError, ReplaySequenceError, ReplayProjectionError,
  AgentError, ActiveSessionError, StaleSessionEpochError, ClosedSessionError, StaleContextError,
  OfflinePolicyError, ContextPackageError,
};

// An error of the authoritative Core also names its ErrorCode `family` (the core's table): its
// class is the family's, whatever layer (ingress, engine, store) refused.
function toError(raw, cause) {
  const Class = typeof raw.family === 'string'
    ? FAMILY_CLASSES[raw.family] ?? MissionWeaveProtocolError
    : ERROR_CLASSES[raw.class] ?? MwpError;
  return new Class(raw.message ?? raw.detail ?? 'internal error', {
    code: raw.code ?? 'INTERNAL_ERROR', stage: raw.stage ?? null, reason: raw.reason ?? null,
    detail: raw.detail, retryable: raw.retryable, fields: raw.fields ?? {}, cause, family: raw.family,
  });
}

function open(envelope) {
  const parsed = JSON.parse(envelope);
  if ('error' in parsed) throw toError(parsed.error);
  return parsed.ok;
}

// Whether a string has a UTF-8 form: no unpaired UTF-16 surrogate (`isWellFormed`, Node >= 20;
// the regular expression elsewhere: with the `u` flag a surrogate range matches lone ones only).
function isWellFormed(text) {
  return typeof text.isWellFormed === 'function' ? text.isWellFormed() : !/[\uD800-\uDFFF]/u.test(text);
}

function illFormedArgument(what) {
  return new ArgumentError(`${what} holds an unpaired UTF-16 surrogate`);
}

// The intrinsic getters read internal slots: unlike `instanceof` and `input.buffer` they cannot
// be fooled by a Proxy around a Uint8Array, which the native side would refuse as an
// INTERNAL_ERROR (issue 9, item 7).
const TYPED_ARRAY_PROTOTYPE = Object.getPrototypeOf(Uint8Array.prototype);
const typedArrayBuffer = Object.getOwnPropertyDescriptor(TYPED_ARRAY_PROTOTYPE, 'buffer').get;
const dataViewBuffer = Object.getOwnPropertyDescriptor(DataView.prototype, 'buffer').get;
const typedArrayOffset = Object.getOwnPropertyDescriptor(TYPED_ARRAY_PROTOTYPE, 'byteOffset').get;
const typedArrayLength = Object.getOwnPropertyDescriptor(TYPED_ARRAY_PROTOTYPE, 'byteLength').get;
const dataViewOffset = Object.getOwnPropertyDescriptor(DataView.prototype, 'byteOffset').get;
const dataViewLength = Object.getOwnPropertyDescriptor(DataView.prototype, 'byteLength').get;
const arrayBufferByteLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength').get;

function isArrayBuffer(value) {
  try {
    arrayBufferByteLength.call(value);
    return true;
  } catch {
    return false;
  }
}

function isTypedArray(value) {
  try {
    typedArrayLength.call(value);
    return true;
  } catch {
    return false;
  }
}

// A detached buffer reads as empty; refusing it keeps a transferred buffer from being verified
// as zero bytes. `ArrayBuffer.prototype.detached` is recent (Node 22); older engines refuse to
// view a detached buffer.
function isDetached(buffer) {
  if (typeof buffer.detached === 'boolean') return buffer.detached;
  try {
    new Uint8Array(buffer, 0, 0);
    return false;
  } catch {
    return true;
  }
}

// A string crosses as UTF-8. One holding an unpaired surrogate has no UTF-8 form: TextEncoder
// would repair it to U+FFFD, silently turning it into another text (issue 9), so it is refused
// here with `refuseIllFormed(what)` (the API passes the core's stage-5 error).
function toBytes(input, what = 'input', refuseIllFormed = illFormedArgument) {
  if (typeof input === 'string') {
    if (!isWellFormed(input)) throw refuseIllFormed(what);
    return encoder.encode(input);
  }
  if (ArrayBuffer.isView(input)) {
    const isDataView = !isTypedArray(input);
    const buffer = (isDataView ? dataViewBuffer : typedArrayBuffer).call(input);
    if (!isArrayBuffer(buffer) || isDetached(buffer)) {
      throw new ArgumentError(`${what}: its ArrayBuffer is detached`, { fields: { argument: what } });
    }
    if (Object.getPrototypeOf(input) === Uint8Array.prototype) return input;
    const offset = (isDataView ? dataViewOffset : typedArrayOffset).call(input);
    const length = (isDataView ? dataViewLength : typedArrayLength).call(input);
    return new Uint8Array(buffer, offset, length);
  }
  if (isArrayBuffer(input)) {
    if (isDetached(input)) throw new ArgumentError(`${what}: the ArrayBuffer is detached`, { fields: { argument: what } });
    return new Uint8Array(input);
  }
  const kind = input === null ? 'null' : (input instanceof Uint8Array ? 'a Proxy or an object posing as a Uint8Array' : typeof input);
  throw new ArgumentError(`${what} must be a string, Uint8Array or ArrayBuffer, not ${kind}`, { fields: { argument: what } });
}

function checkKind(kind) {
  if (typeof kind !== 'string' || !DOCUMENT_KINDS.includes(kind)) {
    throw new ArgumentError(`unknown signed document kind ${JSON.stringify(kind)} (expected one of ${DOCUMENT_KINDS.join(', ')})`);
  }
  return kind;
}

function checkString(value, what) {
  if (typeof value !== 'string') throw new ArgumentError(`${what} must be a string`);
  return value;
}

/** A document that passed all six stages: cryptographically verified, not admitted, not authorized. */
export class VerifiedDocument {
  #text;
  #bytes;
  #hash;
  #hashDocument;

  // `hashDocument` computes the whole-document hash on first use (one RFC 8785 pass).
  constructor(raw, hashDocument) {
    this.#text = raw.signingBytes;
    this.#hashDocument = hashDocument;
    this.kind = raw.kind;
    this.signingHash = raw.signingHash;
    this.organizationId = raw.organizationId;
    this.keyId = raw.keyId;
    this.publicKey = raw.publicKey;
    this.principal = Object.freeze({ type: raw.principal.type, id: raw.principal.id });
    this.protectedTime = raw.protectedTime;
    this.signature = raw.signature;
    this.validFrom = raw.validFrom;
    this.validUntil = raw.validUntil;
    this.revokedAt = raw.revokedAt;
    Object.freeze(this);
  }

  /** RFC 8785 bytes of the document without its top-level `signature` (stage 5); a fresh copy. */
  get signingBytes() {
    this.#bytes ??= encoder.encode(this.#text);
    return this.#bytes.slice();
  }

  /** The canonical signing bytes as text (RFC 8785 output is UTF-8). */
  get signingText() { return this.#text; }

  /** `sha256:` of the RFC 8785 form of the whole document, `signature` included. */
  get signedDocumentHash() {
    this.#hash ??= this.#hashDocument();
    return this.#hash;
  }
}

/** A freshly signed document; `bytes` are the RFC 8785 bytes to send. */
export class SignedDocument {
  constructor(raw) {
    this.kind = raw.kind;
    this.text = raw.document;
    this.bytes = encoder.encode(raw.document);
    this.documentHash = raw.documentHash;
    this.signingBytes = encoder.encode(raw.signingBytes);
    this.signingHash = raw.signingHash;
    this.protectedTime = raw.protectedTime;
    this.signature = raw.signature;
    Object.freeze(this);
  }
}

/** A verified document anchored by a validated First-Admission Record. */
export class AdmittedDocument {
  constructor(raw) {
    this.record = Object.freeze(raw.record);
    this.recordBytes = encoder.encode(raw.recordBytes);
    this.existing = raw.existing;
    Object.freeze(this);
  }
}

/** A schema-valid frame; `json` is its RFC 8785 text. */
export class Frame {
  constructor(raw) {
    this.frameType = raw.frameType;
    this.frameId = raw.frameId;
    this.phase = raw.phase;
    this.json = raw.json;
    Object.freeze(this);
  }

  /** The frame as a JavaScript value (numbers become IEEE doubles). */
  get value() { return JSON.parse(this.json); }
}

/** A received COMMAND frame: envelope checked, the Command's exact bytes kept for verification. */
export class ReceivedCommandFrame {
  constructor(raw) {
    this.frameType = 'COMMAND';
    this.frameId = raw.frameId;
    this.protocolVersion = raw.protocolVersion;
    this.commandBytes = encoder.encode(raw.commandBytes);
    Object.freeze(this);
  }
}

const PRINCIPAL_TYPES = ['agent', 'human', 'service'];

function principalOf(value, what) {
  if (!value || typeof value !== 'object' || !PRINCIPAL_TYPES.includes(value.type) || typeof value.id !== 'string') {
    throw new ArgumentError(`${what} must be a Principal {type: 'agent'|'human'|'service', id: string}`);
  }
  return value;
}

// Turns a JavaScript Admission Log reply into the host reply shape; anything else fails closed.
function hostReply(reply, state, method) {
  if (reply && typeof reply.then === 'function') {
    state.failure ??= new ArgumentError(`AdmissionLog.${method} must return synchronously, not a Promise`);
    return { status: 'indeterminate' };
  }
  if (!reply || typeof reply.status !== 'string') {
    state.failure ??= new ArgumentError(`AdmissionLog.${method} must return an object with a string status`);
    return { status: 'indeterminate' };
  }
  const out = { status: reply.status };
  if (reply.record !== undefined && reply.record !== null) {
    try {
      out.record = Uint8Array.from(toBytes(reply.record, `AdmissionLog.${method}().record`));
    } catch (error) {
      state.failure ??= error;
      return { status: 'indeterminate' };
    }
  }
  const service = reply.authenticatedService;
  if (service && typeof service.type === 'string' && typeof service.id === 'string') {
    out.serviceType = service.type;
    out.serviceId = service.id;
  }
  return out;
}

function makeHost(log, context, state) {
  return {
    lookup(organizationId, signingHash) {
      state.calls.lookup += 1;
      try {
        return hostReply(log.lookup(organizationId, signingHash), state, 'lookup');
      } catch (error) {
        state.failure ??= error;
        return { status: 'indeterminate' };
      }
    },
    append(candidateJson, candidateBytes) {
      state.calls.append += 1;
      try {
        return hostReply(log.append(JSON.parse(candidateJson), Uint8Array.from(candidateBytes)), state, 'append');
      } catch (error) {
        state.failure ??= error;
        return { status: 'indeterminate' };
      }
    },
    context() {
      state.calls.context += 1;
      try {
        return contextReply(typeof context === 'function' ? context() : context);
      } catch (error) {
        state.failure ??= error;
        // Never an empty reply: the core rejects this context before anything is appended.
        return { admissionRecordId: '', trustedAcceptedAt: '', acceptedByType: '', acceptedById: '' };
      }
    },
  };
}

function contextReply(value) {
  if (!value || typeof value !== 'object') throw new ArgumentError('the trusted acceptance context is missing');
  const acceptedBy = principalOf(value.acceptedBy, 'trustedContext.acceptedBy');
  return {
    admissionRecordId: checkString(value.admissionRecordId, 'trustedContext.admissionRecordId'),
    trustedAcceptedAt: checkString(value.trustedAcceptedAt, 'trustedContext.trustedAcceptedAt'),
    acceptedByType: acceptedBy.type,
    acceptedById: acceptedBy.id,
  };
}

/** Awaits one asynchronous log or context call; a throw or rejection is recorded and fails closed. */
async function awaited(call, state, convert) {
  try {
    return convert(await call());
  } catch (error) {
    state.failure ??= error;
    return undefined;
  }
}

const STOPPED = Symbol('stopped');

// The bound on an asynchronous admission's log calls: an AbortSignal and/or a timeout over the
// whole admission. `promise` settles with STOPPED once either fires; `reason` is then the abort
// reason or a TimeoutError, which becomes the AdmissionError's `cause`.
function logBound({ signal, timeoutMs } = {}) {
  if (signal !== undefined && (signal === null || typeof signal.aborted !== 'boolean' || typeof signal.addEventListener !== 'function')) {
    throw new ArgumentError('options.signal must be an AbortSignal');
  }
  if (timeoutMs !== undefined && (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs < 0)) {
    throw new ArgumentError('options.timeoutMs: expected a finite non-negative number of milliseconds');
  }
  const bound = { stopped: false, reason: undefined, promise: undefined, dispose() {} };
  const stop = (reason) => { if (!bound.stopped) { bound.stopped = true; bound.reason = reason; } };
  if (signal?.aborted) {
    stop(signal.reason);
    return bound;
  }
  if (signal === undefined && timeoutMs === undefined) return bound;
  let timer;
  let onAbort;
  bound.promise = new Promise((resolve) => {
    onAbort = () => { stop(signal.reason); resolve(STOPPED); };
    signal?.addEventListener('abort', onAbort, { once: true });
    if (timeoutMs !== undefined) {
      timer = setTimeout(() => {
        stop(new DOMException(`the Admission Log did not answer within ${timeoutMs} ms`, 'TimeoutError'));
        resolve(STOPPED);
      }, timeoutMs);
    }
  });
  bound.dispose = () => { clearTimeout(timer); signal?.removeEventListener('abort', onAbort); };
  return bound;
}

// ---- Agent authentication (§6.3; napi only) -------------------------------------------------
// Every rule (key validity, one-use challenges, the transcript, token MACs, Session Epochs) and
// every refusal (`AuthenticationError`, the core's code and reason) is the core's `auth` module;
// this converts arguments and supplies the clock. The WebAssembly build has no `auth` module: there
// each name is an ArgumentError that says so.
function authApi(raw, { inputBytes, publicKeyOf }) {
  const native = new NativeTable(raw);

  function needsNode(what) {
    if (typeof raw.AuthKeyRegistry !== 'function') {
      throw new ArgumentError(`${what} needs the Node (napi) entry, not the WebAssembly build`);
    }
  }

  const now = (value, what) => (value === undefined ? Date.now() : toMillis(value, what));
  const optMillis = (value, what) => (value === undefined || value === null ? undefined : toMillis(value, what));
  const optString = (value, what) => (value === undefined || value === null ? undefined : checkString(value, what));
  const optCount = (value, what) => (value === undefined ? undefined : checkFinite(value, what));

  /** `urn:missionweaveprotocol:key:<last path or colon segment of agentId>`. */
  function defaultAgentKeyId(agentId) {
    needsNode('defaultAgentKeyId');
    return open(raw.authDefaultAgentKeyId(checkString(agentId, 'agentId')));
  }

  /** The Organization's Agent keys; a `SessionAuthority` built on them sees later changes. */
  class AgentKeyRegistry {
    constructor() {
      needsNode('AgentKeyRegistry');
      native.set(this, new raw.AuthKeyRegistry());
    }

    /** Registers a public key (32 bytes, base64url text or a SigningKey; `keyId` defaults to `defaultAgentKeyId(agentId)`). */
    register(agentId, publicKey, { keyId, validFrom, validUntil, revokedAt } = {}) {
      open(native.get(this).register(checkString(agentId, 'agentId'), publicKeyOf(publicKey),
        optString(keyId, 'keyId'), optMillis(validFrom, 'validFrom'), optMillis(validUntil, 'validUntil'),
        optMillis(revokedAt, 'revokedAt')));
    }

    /** The 32 public-key bytes of the Agent's key valid at `at` (default: now). */
    resolve(agentId, keyId, at) {
      const result = native.get(this).resolve(checkString(agentId, 'agentId'), optString(keyId, 'keyId'), now(at, 'at'));
      if (typeof result === 'string') open(result);
      return new Uint8Array(result);
    }

    /** Whether the bytes are the key's registered material (constant-time comparison). */
    matchesRegisteredPublicKey(agentId, keyId, publicKeyBytes) {
      return open(native.get(this).matchesRegisteredPublicKey(checkString(agentId, 'agentId'),
        checkString(keyId, 'keyId'), inputBytes(publicKeyBytes, 'publicKeyBytes')));
    }

    /** Revokes the key from `revokedAt` (default: now); the earliest revocation is kept. */
    revoke(agentId, keyId, revokedAt) {
      open(native.get(this).revoke(checkString(agentId, 'agentId'), checkString(keyId, 'keyId'), now(revokedAt, 'revokedAt')));
    }
  }

  const challengeOf = (value) => Object.freeze({ ...value, signingBytes: encoder.encode(value.signingBytes) });

  /**
   * One-use HELLO challenges, HMAC-SHA256 session tokens and per-Agent Session Epochs. `secret`
   * (at least 32 bytes) defaults to 32 random bytes; lifetimes are milliseconds (30 s, 15 min).
   */
  class SessionAuthority {
    constructor(registry, { secret, challengeTtlMs, sessionTtlMs } = {}) {
      needsNode('SessionAuthority');
      if (!(registry instanceof AgentKeyRegistry)) throw new ArgumentError('registry must be an AgentKeyRegistry', { fields: { argument: 'registry' } });
      const authority = new raw.AuthSessionAuthority(native.get(registry),
        secret === undefined ? undefined : inputBytes(secret, 'secret'),
        optCount(challengeTtlMs, 'challengeTtlMs'), optCount(sessionTtlMs, 'sessionTtlMs'));
      try {
        open(authority.status());
      } catch (error) {
        authority.free?.();
        throw error;
      }
      native.set(this, authority);
    }

    /** `toString`/`inspect` never show the secret. */
    toString() { return 'SessionAuthority(<secret redacted>)'; }

    /** A fresh one-use challenge (`signingBytes`: the canonical transcript the Agent signs). */
    issueChallenge(agentId, { keyId, clientNonce, protocolVersion = PROTOCOL_VERSION, now: at } = {}) {
      return challengeOf(open(native.get(this).issueChallenge(checkString(agentId, 'agentId'), optString(keyId, 'keyId'),
        optString(clientNonce, 'clientNonce'), checkString(protocolVersion, 'protocolVersion'), now(at, 'now'))));
    }

    /** Spends the challenge; a valid signature (base64url) opens a session at the next epoch. */
    openSession(challengeId, signature, at) {
      return Object.freeze(open(native.get(this).openSession(checkString(challengeId, 'challengeId'),
        checkString(signature, 'signature'), now(at, 'now'))));
    }

    /** The session `token` proves at `at` (default: now): MAC, expiry, current epoch, key still valid. */
    verifySession(token, at) {
      return Object.freeze(open(native.get(this).verifySession(checkString(token, 'token'), now(at, 'now'))));
    }

    /** Adopts the authoritative Core's epoch (never lowers it); with `keyId`, that key must be registered. */
    synchronizeEpoch(agentId, authoritativeEpoch, keyId) {
      open(native.get(this).synchronizeEpoch(checkString(agentId, 'agentId'),
        checkFinite(authoritativeEpoch, 'authoritativeEpoch'), optString(keyId, 'keyId')));
    }

    /** The Agent's current Session Epoch (0 before its first session). */
    currentEpoch(agentId) { return open(native.get(this).currentEpoch(checkString(agentId, 'agentId'))); }
  }

  disposable(native, [AgentKeyRegistry, SessionAuthority]);
  return { AgentKeyRegistry, SessionAuthority, defaultAgentKeyId };
}

// ---- Tokens, execution authorization and local guardrails (§8, §12, §20; napi only) ----------
// Every rule (token MACs and bindings, grant expiry within the lease, budgets, limits, the action
// classification) and every refusal (the core's class, code and reason; `PolicyError` below) is
// the core's `policy` module; this converts arguments and supplies the clock. The WebAssembly
// build has no `policy` module: there each name is an ArgumentError that says so.
function policyApi(raw, { inputBytes }) {
  const native = new NativeTable(raw);
  const FIFTEEN_MINUTES = 15 * 60_000;

  function needsNode(what) {
    if (typeof raw.PolicyGuard !== 'function') {
      throw new ArgumentError(`${what} needs the Node (napi) entry, not the WebAssembly build`);
    }
  }

  const now = (value) => (value === undefined ? Date.now() : toMillis(value, 'now'));
  const argsOf = (value, what) => snapshotText(value ?? {}, what);
  const agentIdOf = (principal) => (principal && typeof principal === 'object' ? principal.id : principal);
  const issued = (value) => Object.freeze({ claims: deepFreeze(value.claims), token: value.token });
  // A construction error is the envelope every call of the raw object returns.
  const checked = (made, probe = 'status') => {
    try {
      open(made[probe]());
    } catch (error) {
      made.free?.();
      throw error;
    }
    return made;
  };
  const u32 = (value, what) => {
    if (!Number.isInteger(value) || value < 0 || value > 0xffff_ffff) throw new ArgumentError(`${what} must be an integer in 0..2^32-1`, { fields: { argument: what } });
    return value;
  };
  const ttlBound = (value) => {
    const ms = value === undefined ? FIFTEEN_MINUTES : checkFinite(value, 'maximumTtlMs');
    if (!Number.isInteger(ms) || ms < 0 || ms > 0xffff_ffff) throw new ArgumentError('maximumTtlMs must be an integer in 0..2^32-1', { fields: { argument: 'maximumTtlMs' } });
    return ms;
  };
  const secretOf = (secret) => (secret === undefined || secret === null ? new Uint8Array(0) : inputBytes(secret, 'secret'));

  /**
   * Group membership tokens (§8): HMAC-SHA256 over the principal, Group, roles and epochs.
   * `secret` (at least 32 bytes) defaults to 32 random bytes; `maximumTtlMs` to 15 minutes.
   */
  class MembershipTokenService {
    constructor({ secret, maximumTtlMs } = {}) {
      needsNode('MembershipTokenService');
      native.set(this, checked(new raw.PolicyMembershipTokens(secretOf(secret), ttlBound(maximumTtlMs))));
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
      needsNode('AuthorizationService');
      native.set(this, checked(new raw.PolicyAuthorization(secretOf(secret), ttlBound(maximumTtlMs))));
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
      needsNode('BudgetMeter');
      native.set(this, checked(new raw.PolicyBudgetMeter(argsOf(limit, 'limit')), 'usage'));
    }

    consume(delta) { return deepFreeze(open(native.get(this).consume(argsOf(delta, 'delta')))); }

    get usage() { return deepFreeze(open(native.get(this).usage())); }

    get limit() { return deepFreeze(open(native.get(this).limit())); }
  }

  /** The §20 limits with the reference's defaults (the core's), camelCase. */
  function cooperationLimits(overrides = {}) {
    needsNode('cooperationLimits');
    return Object.freeze({ ...open(raw.policyCooperationLimitsDefaults()), ...overrides });
  }

  /** Local delegation-depth, queue, clarification and rate limits (§20). `limits`: any subset of `cooperationLimits()`. */
  class PolicyGuard {
    constructor(limits = {}) {
      needsNode('PolicyGuard');
      native.set(this, checked(new raw.PolicyGuard(argsOf(limits, 'limits')), 'limits'));
    }

    get limits() { return Object.freeze(open(native.get(this).limits())); }

    checkDelegationDepth(depth) { open(native.get(this).checkDelegationDepth(u32(depth, 'depth'))); }

    checkQueue(queued, active) { open(native.get(this).checkQueue(u32(queued, 'queued'), u32(active, 'active'))); }

    checkUnresolvedClarifications(unresolved) {
      open(native.get(this).checkUnresolvedClarifications(u32(unresolved, 'unresolved')));
    }

    /** `RATE_LIMITED` (retryable, `retryAfterMs`) past the per-minute limit of (principal, Group). */
    checkMessageRate(principalId, groupId, at) { this.#rate('message', principalId, groupId, at); }

    checkProposalRate(principalId, groupId, at) { this.#rate('proposal', principalId, groupId, at); }

    checkClarificationRate(principalId, groupId, at) { this.#rate('clarification', principalId, groupId, at); }

    #rate(kind, principalId, groupId, at) {
      open(native.get(this).checkRate(kind, checkString(agentIdOf(principalId), 'principalId'), checkString(groupId, 'groupId'), now(at)));
    }

    /** How many (principal, Group) rate windows are held. */
    trackedKeys() { return open(native.get(this).trackedKeys()); }

    /** `automatic` or `human_approval_required` (the core's high-risk table). */
    static classifyAction(operation) {
      needsNode('PolicyGuard.classifyAction');
      return raw.policyClassifyAction(checkString(operation, 'operation'));
    }
  }

  disposable(native, [MembershipTokenService, AuthorizationService, BudgetMeter, PolicyGuard]);
  /** `automatic` or `human_approval_required` for an operation name (`PolicyGuard.classifyAction`). */
  function classifyAction(operation) { return PolicyGuard.classifyAction(operation); }

  return { MembershipTokenService, AuthorizationService, BudgetMeter, PolicyGuard, cooperationLimits, classifyAction };
}

/**
 * One bounded log call: once the bound fires (or if it already has), the call is not made or no
 * longer awaited and the core reads `unavailable` (fails closed with `log-unavailable`).
 */
async function boundedLogCall(call, state, convert, bound) {
  const result = bound.stopped ? STOPPED
    : await (bound.promise === undefined ? awaited(call, state, convert) : Promise.race([awaited(call, state, convert), bound.promise]));
  if (result !== STOPPED && !bound.stopped) return result;
  state.failure = bound.reason;
  return { status: 'unavailable' };
}

/** A backend failure that is not an answer (a panic in the core, a trap): INTERNAL_ERROR. */
function internal(cause) {
  return new MwpError(`internal error in the ${cause?.name ?? 'backend'}: ${cause?.message ?? cause}`, { code: 'INTERNAL_ERROR', cause });
}

// The backend's functions and classes, with anything thrown turned into INTERNAL_ERROR. Answers,
// including every protocol failure, come back as envelopes and never throw.
function guarded(backendModule) {
  const out = {};
  for (const [name, value] of Object.entries(backendModule)) {
    if (typeof value !== 'function') continue;
    if (/^[A-Z]/.test(name)) {
      out[name] = function Guarded(...args) {
        try { return new value(...args); } catch (error) { throw internal(error); }
      };
    } else {
      out[name] = (...args) => {
        try { return value(...args); } catch (error) { throw internal(error); }
      };
    }
  }
  return out;
}

// The instants a Date argument may denote: RFC 3339's years 0001–9999 (the core writes every
// timestamp it keeps in that form, §3). Wider than any real deadline, narrower than JavaScript's
// ±8.64e15 ms, and an invalid Date (NaN) is outside it.
const MIN_DATE_MS = -62_135_596_800_000;
const MAX_DATE_MS = 253_402_300_799_999;

function checkDate(date, path) {
  const ms = date.getTime();
  if (!(ms >= MIN_DATE_MS && ms <= MAX_DATE_MS)) {
    throw new ArgumentError(`${path}: expected a valid Date between 0001-01-01 and 9999-12-31 (UTC), not ${Number.isNaN(ms) ? 'an invalid Date' : date.toISOString()}`, { fields: { argument: path } });
  }
  return ms;
}

function checkFinite(value, path) {
  if (!Number.isFinite(value)) throw new ArgumentError(`${path}: expected a finite number, not ${value}`, { fields: { argument: path } });
  return value;
}

function pathSegment(key, parent) {
  if (Array.isArray(parent)) return `[${key}]`;
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

/**
 * The one serializer of call arguments. JSON has no NaN, ±Infinity or invalid Date: `JSON.stringify`
 * writes `null`, which the core reads as an absent member (a default), so every such value is
 * refused here with an ArgumentError naming its path. Dates become integer milliseconds, a Map an
 * object; anything JSON cannot carry (a cycle, a BigInt) is an ArgumentError too (the core checks
 * types and ranges). `names`: the argument names when `value` is the argument list, or the name of
 * `value` itself.
 */
function argumentJson(value, names) {
  const parents = new WeakMap();
  let top;
  const pathOf = (holder, key) => {
    const segments = [];
    for (let parent = holder, member = key; parent !== top; [parent, member] = parents.get(parent)) {
      segments.unshift([parent, member]);
    }
    if (typeof names === 'string' || segments.length === 0) {
      return `${names ?? 'arguments'}${segments.map(([parent, member]) => pathSegment(member, parent)).join('')}`;
    }
    const [[, first], ...rest] = segments;
    return `${names?.[first] ?? `arguments[${first}]`}${rest.map(([parent, member]) => pathSegment(member, parent)).join('')}`;
  };
  function replacer(key, raw) {
    const original = this[key];
    let out = raw;
    if (top === undefined) top = this;
    if (original instanceof Date) return checkDate(original, pathOf(this, key));
    if (original instanceof Map) out = Object.fromEntries(original);
    if (typeof out === 'number' || out instanceof Number) checkFinite(Number(out), pathOf(this, key));
    else if (out !== null && typeof out === 'object') parents.set(out, [this, key]);
    return out;
  }
  try {
    return JSON.stringify(value, replacer);
  } catch (error) {
    if (error instanceof MwpError) throw error;
    // A cycle, a BigInt or a throwing `toJSON`: no JSON form (issue 9, item 7).
    const what = typeof names === 'string' ? names : 'arguments';
    throw new ArgumentError(`${what} cannot be serialized as JSON: ${error?.message ?? String(error)}`, { cause: error, fields: { argument: what } });
  }
}

// Call arguments as a named object ({limit, delta}) or a list: the names make error paths.
function jsonArgs(args) {
  return Array.isArray(args) ? argumentJson(args) : argumentJson(Object.values(args), Object.keys(args));
}

const OK_NULL = '{"ok":null}';

function toMillis(value, what) {
  if (value instanceof Date) return checkDate(value, what);
  if (typeof value === 'number') return checkFinite(value, what);
  throw new ArgumentError(`${what} must be a Date or integer milliseconds since the epoch`);
}

// A cyclic object, a BigInt or a throwing `toJSON` make `JSON.stringify` throw a TypeError (or
// the caller's own error): the argument has no JSON form, an ArgumentError (issue 9, item 7).
function snapshotText(snapshot, what) {
  if (typeof snapshot === 'string') return snapshot;
  if (snapshot && typeof snapshot === 'object') {
    try {
      return argumentJson(snapshot, what);
    } catch (error) {
      if (error instanceof MwpError) throw error;
      throw new ArgumentError(`${what} has no JSON form: ${error?.message ?? String(error)}`, { cause: error, fields: { argument: what } });
    }
  }
  throw new ArgumentError(`${what} must be a snapshot object or its JSON text`, { fields: { argument: what } });
}

function accountArgs(account) {
  if (Array.isArray(account) && account.length === 2) return account;
  if (account && typeof account === 'object' && 'kind' in account) return [account.kind, account.id];
  throw new ArgumentError("account must be ['mission'|'work_item', id] or {kind, id}");
}

function freezeUsage(raw) { return new ResourceUsage(raw); }

// The leases, ledger, grants, retries and Scheduler of one backend. Each object holds one core
// object through a backend `Handle`; calls pass a JSON argument array and get an envelope back.
function authorityApi(raw, backendModule) {
  const handles = new NativeTable(raw);

  function handleOf(self) {
    return handles.get(self);
  }

  function make(self, kind, mode, args) {
    const text = jsonArgs(args);
    const handle = new raw.Handle(kind, mode, text);
    try {
      open(handle.status());
    } catch (error) {
      handle.free?.();
      throw error;
    }
    handles.set(self, handle);
    return self;
  }

  function call(self, method, args = []) {
    const text = jsonArgs(args);
    const handle = handleOf(self);
    let envelope;
    try {
      envelope = handle.call(method, text);
    } catch (error) {
      throw internal(error);
    }
    return open(envelope);
  }

  const leaseState = new WeakMap();
  const updateLease = (self, state) => { leaseState.set(self, state); return self; };

  /**
   * A fenced lease (§11.3): execution by default; `ExecutionLease.ownership`, `.blocked` and
   * `.coordinator` make the other types. Mutations happen in place and are checked by the core.
   */
  class ExecutionLease {
    constructor(fields) { ExecutionLease.#init(this, 'execution', fields); }

    static #init(self, type, fields) {
      make(self, 'lease', type, { fields });
      leaseState.set(self, call(self, 'state'));
      return self;
    }

    /** Queued ownership with a start-by deadline (`startBy`). */
    static ownership(fields) { return ExecutionLease.#init(Object.create(ExecutionLease.prototype), 'ownership', fields); }

    /** Ownership retained while blocked, optionally bounded by `graceExpiresAt`. */
    static blocked(fields) { return ExecutionLease.#init(Object.create(ExecutionLease.prototype), 'blocked', fields); }

    /** The Coordinator's lease (`coordinatorEpoch`, no WorkItem). */
    static coordinator(fields) { return ExecutionLease.#init(Object.create(ExecutionLease.prototype), 'coordinator', fields); }

    /** Reads a lease back from its `lease.schema.json` document (text or object, as `toJSON()` gives). */
    static fromJSON(document) {
      const text = snapshotText(document, 'document');
      return ExecutionLease.#init(Object.create(ExecutionLease.prototype), 'document', text);
    }

    /** The observed state at `now` (an active lease past its expiry is `expired`). */
    stateAt(now) { return call(this, 'stateAt', [toMillis(now, 'now')]); }

    isLive(now) { return call(this, 'isLive', [toMillis(now, 'now')]); }

    /** Renews at `at` to `expiresAt`: before expiry, strictly after the last renewal, strictly extending. */
    renew(at, expiresAt) { return updateLease(this, call(this, 'renew', { at: toMillis(at, 'at'), expiresAt: toMillis(expiresAt, 'expiresAt') })); }

    /** Closes with `state` (released, revoked, expired). False when the identical closure was already recorded. */
    close(state, at, reason) {
      const out = call(this, 'close', { state, at: toMillis(at, 'at'), reason });
      updateLease(this, out.lease);
      return out.changed;
    }

    release(at, reason) { return this.close('released', at, reason); }

    revoke(at, reason) { return this.close('revoked', at, reason); }

    expire(at, reason) { return this.close('expired', at, reason); }

    /** Fencing check for a lease-bound Command: `{agentId, leaseId, sessionEpoch, ownershipEpoch?, coordinatorEpoch?}`. Throws LeaseError. */
    checkClaim(claim, now) { call(this, 'checkClaim', { claim, now: toMillis(now, 'now') }); }

    /** For ownership leases: may work start at `now`? Throws LeaseError. */
    checkStartBy(now) { call(this, 'checkStartBy', [toMillis(now, 'now')]); }

    /** The schema-shaped document (`lease.schema.json`: camelCase, RFC 3339 UTC timestamps). */
    toJSON() { return JSON.parse(this.toCanonicalJSON()); }

    /** The same document in RFC 8785 canonical form. */
    toCanonicalJSON() { return call(this, 'toJSON'); }
  }
  for (const name of ['leaseId', 'leaseType', 'missionId', 'groupId', 'holderAgentId', 'sessionEpoch', 'workItemId',
    'ownershipEpoch', 'coordinatorEpoch', 'issuedAt', 'startsAt', 'expiresAt', 'startBy', 'graceExpiresAt', 'state',
    'renewalCount', 'lastRenewedAt', 'closedAt', 'closureReason']) {
    Object.defineProperty(ExecutionLease.prototype, name, {
      get() { handleOf(this); return leaseState.get(this)?.[name]; }, enumerable: false, configurable: true,
    });
  }

  /** The hierarchical six-dimensional budget ledger (§12, §14); amounts are ResourceUsage objects. */
  class BudgetLedger {
    constructor() { make(this, 'ledger', 'new', []); }

    /** Rebuilds from a snapshot (object or JSON text), checking every invariant. */
    static rebuild(snapshot) {
      return make(Object.create(BudgetLedger.prototype), 'ledger', 'rebuild', [snapshotText(snapshot, 'snapshot')]);
    }

    /** A root Mission, or with `parentWorkItemId` a child Mission reserved against that WorkItem. */
    registerMission(missionId, limit, { currency = null, parentWorkItemId = null } = {}) {
      call(this, 'registerMission', { missionId, limit, currency, parentWorkItemId });
    }

    /** A WorkItem under its Mission or a parent WorkItem; its limit is reserved against the parent. */
    registerWorkItem(workItemId, missionId, limit, { parentWorkItemId = null } = {}) {
      call(this, 'registerWorkItem', { workItemId, missionId, limit, parentWorkItemId });
    }

    /** Charges a nonzero delta to the WorkItem and all its ancestors, all or nothing; returns its usage. */
    consume(workItemId, delta) { return freezeUsage(call(this, 'consume', { workItemId, delta })); }

    /** What can still be consumed through the account (minimum over its ancestry). */
    remaining(account) { return freezeUsage(call(this, 'remaining', accountArgs(account))); }

    usage(account) { return freezeUsage(call(this, 'usage', accountArgs(account))); }

    limit(account) { return freezeUsage(call(this, 'limit', accountArgs(account))); }

    reserved(account) { return freezeUsage(call(this, 'reserved', accountArgs(account))); }

    currency(account) { return call(this, 'currency', accountArgs(account)); }

    depth(account) { return call(this, 'depth', accountArgs(account)); }

    get size() { return call(this, 'size'); }

    snapshot() { return new BudgetLedgerSnapshot(call(this, 'snapshot')); }
  }

  /** Checks and accounts the uses of one Delegation Grant (§9.1); invalidating conditions latch. */
  class DelegationAuthority {
    constructor(grant) { make(this, 'delegation', 'new', { grant }); }

    get grant() { return new DelegationGrant(call(this, 'grant')); }

    get charged() { return freezeUsage(call(this, 'charged')); }

    get remaining() { return freezeUsage(call(this, 'remaining')); }

    /** The latched invalidation `{kind, code, message, dimension}`, or null. */
    get invalidated() { return deepFreeze(call(this, 'invalidated')); }

    /** Every use-time check independent of the WorkItem. `workItems`: `{id: {missionId, parentWorkItemId, closed}}` or a Map. */
    checkUse(context, workItems) { call(this, 'checkUse', { context, workItems }); }

    /** `work.offer` of the target or an existing descendant; charges its budget once. Returns its depth. */
    authorizeExisting(context, workItems, workItemId, work) {
      return call(this, 'authorizeExisting', { context, workItems, workItemId, work });
    }

    /** `work.authorize` of a new WorkItem under `parentWorkItemId`. Returns the new item's depth. */
    authorizeDescendant(context, workItems, newWorkItemId, parentWorkItemId, work) {
      return call(this, 'authorizeDescendant', { context, workItems, newWorkItemId, parentWorkItemId, work });
    }

    /** Re-attributes a WorkItem when rebuilding from the log. */
    restoreAttribution(workItemId, budget) { call(this, 'restoreAttribution', { workItemId, budget }); }
  }

  /** Enforces one WorkItem's retry budgets under one Ownership Epoch (§11.4). */
  class RetryController {
    constructor(options) { make(this, 'retry', 'new', { options }); }

    get attempts() { return call(this, 'state').attempts; }

    get usage() { return freezeUsage(call(this, 'state').usage); }

    /** The final reason once the loop ended, else null. */
    get finished() { return call(this, 'state').finished; }

    idempotencyKey(logicalOperationId) { return call(this, 'idempotencyKey', [logicalOperationId]); }

    begin(logicalOperationId, now) { return new Attempt(call(this, 'begin', { logicalOperationId, now: toMillis(now, 'now') })); }

    /** Ends the running attempt: `{success: true}` or `{success: false, code?, retryable?}`. */
    finish(outcome, now) { return new RetrySchedule(call(this, 'finish', { outcome, now: toMillis(now, 'now') })); }

    consume(delta) { return freezeUsage(call(this, 'consume', { delta })); }

    /**
     * The whole state as a versioned JSON object (policy, deadline, cost budget, attempts, usage,
     * backoff, final reason, the attempt in flight, `integrity`): persist it to keep the retry
     * bounds across a Worker restart (§11.4). An extension: the reference has no snapshot.
     */
    snapshot() { return deepFreeze(call(this, 'snapshot')); }

    /**
     * A controller in exactly the state of `snapshot()`'s object (or its JSON text). A malformed,
     * other-version, tampered (`integrity`) or unreachable state is the core's SnapshotError
     * (`INTERNAL_ERROR`).
     */
    static restore(snapshot) {
      return make(Object.create(RetryController.prototype), 'retry', 'restore', [snapshotText(snapshot, 'snapshot')]);
    }

    /** The attempt in flight as `{logicalOperationId, startedAt}` (ms), else null. */
    get currentAttempt() {
      const current = call(this, 'currentAttempt');
      return current && Object.freeze(current);
    }
  }

  function actionOf(action) { return action.type === 'dispatch' ? new Dispatch(action) : new Preempt(action); }

  /** The Worker-local weighted-fair Scheduler (§10.3, §11.1–§11.4); time is always an argument. */
  class Scheduler {
    constructor(policy = {}) { make(this, 'scheduler', 'new', { policy }); }

    /** Exact restore: the same inputs give the same decisions. */
    static restore(snapshot, policy = {}) {
      return make(Object.create(Scheduler.prototype), 'scheduler', 'restore', { snapshot: snapshotText(snapshot, 'snapshot'), policy });
    }

    /**
     * Rebuild after a restart at `now`: from a snapshot, running work resumes from a durable safe
     * checkpoint or blocks (`runtime_session_lost`); from an array of offers, they are admitted.
     */
    static rebuild(source, policy = {}, now) {
      const at = toMillis(now, 'now');
      if (Array.isArray(source)) {
        const scheduler = new Scheduler(policy);
        scheduler.admitMany(source, at);
        return scheduler;
      }
      return make(Object.create(Scheduler.prototype), 'scheduler', 'rebuild', { snapshot: snapshotText(source, 'snapshot'), policy, now: at });
    }

    admit(offer, now) { return new AdmissionDecision(call(this, 'admit', { offer, now: toMillis(now, 'now') })); }

    /** Admits offers in order in one crossing; a malformed offer rejects the whole batch. */
    admitMany(offers, now) {
      if (!Array.isArray(offers)) throw new ArgumentError('offers must be an array');
      return call(this, 'admitMany', { offers, now: toMillis(now, 'now') }).map((d) => new AdmissionDecision(d));
    }

    /** Every decision due at `now`: Dispatch actions, then at most one Preempt. */
    schedule(now) {
      const at = toMillis(now, 'now');
      const handle = handleOf(this);
      let envelope;
      try { envelope = handle.schedule(at); } catch (error) { throw internal(error); }
      return open(envelope).map(actionOf);
    }

    /** A Worker report about the current run: `{kind, generation, checkpoint?, retryAt?, reason?}`. */
    apply(workId, transition, now) {
      if (typeof workId !== 'string') throw new ArgumentError('workId must be a string');
      const text = argumentJson(transition, 'transition');
      const at = toMillis(now, 'now');
      const handle = handleOf(this);
      let envelope;
      try { envelope = handle.apply(workId, text, at); } catch (error) { throw internal(error); }
      if (envelope !== OK_NULL) open(envelope);
    }

    unblock(workId, now) { call(this, 'unblock', [workId, toMillis(now, 'now')]); }

    cancel(workId) { call(this, 'cancel', [workId]); }

    reprioritize(workId, priority) { call(this, 'reprioritize', { workId, priority }); }

    setCapacity(capacitySlots) { call(this, 'setCapacity', { capacitySlots }); }

    setGroupPolicy(groupId, policy) { call(this, 'setGroupPolicy', { groupId, policy }); }

    /** The WorkState of a non-terminal item, else null. */
    state(workId) { return call(this, 'state', [workId]); }

    generation(workId) { return call(this, 'generation', [workId]); }

    isTerminal(workId) { return call(this, 'isTerminal', [workId]); }

    forget(workId) { return call(this, 'forget', [workId]); }

    /** The §11.2 disclosure at `now` (own Group and Worker aggregates only), or null. */
    disclose(workId, now) {
      const out = call(this, 'disclose', [workId, toMillis(now, 'now')]);
      return out && new ScheduleDisclosure(out);
    }

    get size() { return call(this, 'stats').size; }

    get usedSlots() { return call(this, 'stats').usedSlots; }

    get capacitySlots() { return call(this, 'stats').capacitySlots; }

    /** H: the largest head start priority or deadline can give an item (starvation bound). */
    get horizonMs() { return call(this, 'stats').horizonMs; }

    snapshot() { return new SchedulerSnapshot(call(this, 'snapshot')); }
  }

  disposable(handles, [ExecutionLease, BudgetLedger, DelegationAuthority, RetryController, Scheduler]);

  function callFunction(method, args) {
    const text = jsonArgs(args);
    let envelope;
    try { envelope = raw.callFunction(method, text); } catch (error) { throw internal(error); }
    return open(envelope);
  }

  /** `sha256:` of the RFC 8785 form of `{missionId, workItemId, ownershipEpoch, logicalOperationId}` (§11.4). */
  function idempotencyKey(missionId, workItemId, ownershipEpoch, logicalOperationId) {
    return callFunction('idempotencyKey', { missionId, workItemId, ownershipEpoch, logicalOperationId });
  }

  /** The deterministic per-attempt key: `sha256:` of `{attempt, idempotencyKey}`. */
  function derivedAttemptKey(key, attempt) { return callFunction('derivedAttemptKey', { key, attempt }); }

  /** A schema `duration` (`P[nD][T[nH][nM][n[.f]S]]`) in milliseconds, rounded up. */
  function parseDurationMs(duration) { return callFunction('parseDurationMs', [duration]); }

  /** The core's spelling list of every wire vocabulary, by name (what this package's enum objects spell). */
  function vocabularies() { return deepFreeze(callFunction('vocabularies', [])); }

  // The native Scheduler of a package Scheduler, for the objects that share the user's own
  // (AgentRuntime, AgentReplay): never a copy.
  function schedulerNative(scheduler) {
    if (!(scheduler instanceof Scheduler)) throw new ArgumentError('scheduler must be a Scheduler', { fields: { argument: 'scheduler' } });
    return handles.get(scheduler, 'Scheduler');
  }
  Object.defineProperty(Scheduler, NATIVE_OF, { value: schedulerNative });

  return {
    ExecutionLease,
    BudgetLedger,
    DelegationAuthority,
    RetryController,
    Scheduler,
    idempotencyKey,
    derivedAttemptKey,
    parseDurationMs,
    vocabularies,
  };
}

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

// The authoritative Core of one backend. The napi addon runs each call on the libuv thread pool
// and answers with a Promise of the envelope; the WebAssembly build answers synchronously and
// the Promise is made here. Either way every method returns a Promise and never blocks on I/O.
function coreApi(raw, { withRegistry, SigningKey, seedOf, documentBytes }) {
  const stores = new NativeTable(raw);
  const cores = new NativeTable(raw);

  /**
   * The in-memory authoritative store (per-aggregate records, the Group logs, receipts). Give
   * one to several `Core`s to share it (as several Group Authority threads would).
   */
  class InMemoryStore {
    constructor() { stores.set(this, new raw.InMemoryStore()); }
  }
  disposable(stores, [InMemoryStore]);

  // Durable stores by URL (napi only: a database on this machine's disk or network). The URL
  // rules and the open/close life cycle are the core's (`missionweaveprotocol-store-open`), shared
  // with the Python package; this converts arguments. `SQLiteStore` and `PostgreSQLStore` pass
  // their argument to the `SQLStore` constructor wrapped in a module-private `StoreTarget`.
  const sqlStores = new NativeTable(raw);
  class StoreTarget {
    constructor(form, text) { this.form = form; this.text = text; }
  }

  function checkEcho(options) {
    if (options === null || typeof options !== 'object') throw new ArgumentError('options must be an object');
    const { echo = false } = options;
    if (typeof echo !== 'boolean') throw new ArgumentError('echo must be a boolean', { fields: { argument: 'echo' } });
    return echo;
  }

  /**
   * A durable authoritative store named by a `sqlite://` or `postgresql://` URL (the reference's
   * `store.SQLStore`): `await initialize()` opens the database and migrates its schema on the
   * libuv thread pool, `await close()` releases it. A `Core` takes it once initialized.
   */
  class SQLStore {
    #echo;

    constructor(url, options = {}) {
      if (typeof raw.SqlStore !== 'function') {
        throw new ArgumentError(`${new.target?.name ?? 'SQLStore'} needs a database: use the Node (napi) entry, not the WebAssembly build`);
      }
      const target = url instanceof StoreTarget ? url : new StoreTarget('url', checkString(url, 'url'));
      this.#echo = checkEcho(options);
      const handle = new raw.SqlStore(target.form, target.text);
      try {
        open(handle.status());
      } catch (error) {
        handle.free?.();
        throw error;
      }
      sqlStores.set(this, handle);
    }

    /** `'sqlite'` or `'postgresql'`. */
    get dialectName() { return open(sqlStores.get(this, 'SQLStore').info()).dialectName; }

    /** The URL with its password replaced by `***`. */
    get url() { return open(sqlStores.get(this, 'SQLStore').info()).url; }

    /** The `echo` option (kept for the reference's signature: no SQL is issued from JavaScript). */
    get echo() { return this.#echo; }

    /** Opens (creating if needed) the database and migrates its schema; idempotent while open. */
    async initialize() {
      const handle = sqlStores.get(this, 'SQLStore');
      await answer(() => handle.initialize());
    }

    /** Releases the connection (idempotent); Cores built over the store then refuse every call. */
    async close() {
      const handle = sqlStores.get(this, 'SQLStore');
      await answer(() => handle.close());
    }
  }
  disposable(sqlStores, [SQLStore]);

  /** The embedded durable store: one SQLite file (`':memory:'`: a private in-memory database). */
  class SQLiteStore extends SQLStore {
    constructor(path = ':memory:', options = {}) {
      super(new StoreTarget('sqlite', checkString(path, 'path')), options);
    }
  }

  /** A PostgreSQL server (`postgresql://` or `postgres://` URL only). */
  class PostgreSQLStore extends SQLStore {
    constructor(url, options = {}) {
      super(new StoreTarget('postgresql', checkString(url, 'url')), options);
    }
  }

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

  // A backend answer: an envelope string, or (napi) a Promise of one.
  async function answer(call, read = open) {
    let envelope;
    try { envelope = await call(); } catch (error) { throw internal(error); }
    return read(envelope);
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
      if (store !== undefined && !(store instanceof InMemoryStore) && !(store instanceof SQLStore)) {
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
        const native = own ?? (store instanceof SQLStore ? sqlStores.get(store, 'SQLStore') : stores.get(store, 'InMemoryStore'));
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
      return new PerformResult(await answer(() => handle.perform(bytes, now), withEvents));
    }

    /** A projection (`{kind, entityId, groupId?, actorType?}`, kind a QueryKind). */
    async query(query) {
      if (!query || typeof query !== 'object') throw new ArgumentError('query must be {kind, entityId, groupId?, actorType?}');
      const { kind, entityId, groupId = null, actorType = null } = query;
      const handle = cores.get(this, 'Core');
      const text = argumentJson({ kind, entityId, groupId, actorType }, 'query');
      const now = this.#now();
      return deepFreeze(await answer(() => handle.query(text, now)));
    }

    /** Up to `limit` (1–10,000) Events of the Group after sequence `after`, with the continuation (§16). */
    async replay(groupId, { after = 0, limit = 1000 } = {}) {
      checkString(groupId, 'groupId');
      // The core checks the ranges (one rule for every binding); only the types are JavaScript's.
      if (typeof after !== 'number') throw new ArgumentError('after must be a number', { fields: { argument: 'after' } });
      if (typeof limit !== 'number') throw new ArgumentError('limit must be a number', { fields: { argument: 'limit' } });
      const handle = cores.get(this, 'Core');
      const page = await answer(() => handle.replay(groupId, after, limit), withEvents);
      return new ReplayPage(page, groupId);
    }
  }
  disposable(cores, [Core]);

  return { Core, InMemoryStore, SQLStore, SQLiteStore, PostgreSQLStore };
}

// ---- Agent-local SQLite store and durable replay (napi only: a browser has no SQLite file) ----
// Every rule (cursor, inbox, outbox, Group context, checkpoints, replay ordering, duplicates,
// admission rollback, the atomic batch commit) is the core's (`replay::GroupReplay`,
// `store-sqlite`'s `SqliteAgentStore`); this converts arguments and awaits the JavaScript
// source and projector between the core's steps (bindings/node/src/{local_store,replay}.rs).
function agentLocalApi(raw, Scheduler) {
  const schedulerNative = Scheduler[NATIVE_OF];
  function needsSqlite(what) {
    if (typeof raw.AgentStore !== 'function') {
      throw new ArgumentError(`${what} needs a SQLite file: use the Node (napi) entry, not the WebAssembly build`);
    }
  }
  const natives = new WeakMap();
  const id = (value, what) => checkString(value, what);
  const seq = (value, what) => {
    if (typeof value !== 'number') throw new ArgumentError(`${what} must be a number`);
    return value;
  };

  /** The Agent-local store (reference `SQLiteAgentStore`): `':memory:'` for a private in-memory database. */
  class SqliteAgentStore {
    #native;

    constructor(path) {
      needsSqlite('SqliteAgentStore');
      this.path = checkString(path, 'path');
      const native = new raw.AgentStore(this.path);
      open(native.status());
      this.#native = native;
      natives.set(this, native);
      Object.freeze(this);
    }

    acknowledge(agentId, groupId, sequence) {
      open(this.#native.acknowledge(id(agentId, 'agentId'), id(groupId, 'groupId'), seq(sequence, 'sequence')));
    }

    cursor(agentId, groupId) { return open(this.#native.cursor(id(agentId, 'agentId'), id(groupId, 'groupId'))); }

    rememberEvent(agentId, eventId, groupId, sequence) {
      return open(this.#native.rememberEvent(id(agentId, 'agentId'), id(eventId, 'eventId'),
        groupId == null ? undefined : id(groupId, 'groupId'), sequence == null ? undefined : seq(sequence, 'sequence')));
    }

    hasEvent(agentId, eventId) { return open(this.#native.hasEvent(id(agentId, 'agentId'), id(eventId, 'eventId'))); }

    /** `{groupId, sequence}` where the Event was processed, or null. */
    eventPosition(agentId, eventId) {
      const found = open(this.#native.eventPosition(id(agentId, 'agentId'), id(eventId, 'eventId')));
      return found && Object.freeze(found);
    }

    enqueueAction(agentId, actionId, payload) {
      return open(this.#native.enqueueAction(id(agentId, 'agentId'), id(actionId, 'actionId'), argumentJson(payload, 'payload')));
    }

    pendingActions(agentId) { return open(this.#native.pendingActions(id(agentId, 'agentId'))); }

    markActionSent(agentId, actionId) { return open(this.#native.markActionSent(id(agentId, 'agentId'), id(actionId, 'actionId'))); }

    saveGroupContext(agentId, groupId, revision, values) {
      open(this.#native.saveGroupContext(id(agentId, 'agentId'), id(groupId, 'groupId'), seq(revision, 'revision'), argumentJson(values, 'values')));
    }

    /** `{revision, values}` or null. */
    groupContext(agentId, groupId) { return open(this.#native.groupContext(id(agentId, 'agentId'), id(groupId, 'groupId'))); }

    saveCheckpoint(agentId, groupId, workId, checkpointId, content) {
      open(this.#native.saveCheckpoint(id(agentId, 'agentId'), id(groupId, 'groupId'), id(workId, 'workId'),
        id(checkpointId, 'checkpointId'), argumentJson(content, 'content')));
    }

    loadCheckpoint(agentId, groupId, workId, checkpointId) {
      return open(this.#native.loadCheckpoint(id(agentId, 'agentId'), id(groupId, 'groupId'), id(workId, 'workId'), id(checkpointId, 'checkpointId')));
    }

    deleteCheckpoint(agentId, groupId, workId, checkpointId) {
      return open(this.#native.deleteCheckpoint(id(agentId, 'agentId'), id(groupId, 'groupId'), id(workId, 'workId'), id(checkpointId, 'checkpointId')));
    }

    saveScheduler(agentId, snapshot) {
      open(this.#native.saveScheduler(id(agentId, 'agentId'), snapshotText(snapshot, 'snapshot')));
    }

    /** The stored `SchedulerSnapshot`, or null. */
    loadScheduler(agentId) {
      const found = open(this.#native.loadScheduler(id(agentId, 'agentId')));
      return found && new SchedulerSnapshot(found);
    }

    /** Closes the database (idempotent; an `AgentReplay` not yet freed keeps it open until it is); later calls throw. */
    close() { open(this.#native.close()); }
  }

  /** What reconciling one Group committed (reference `GroupReplayResult`). */
  class GroupReplayResult {
    constructor(rawResult) {
      this.groupId = rawResult.groupId;
      this.startCursor = rawResult.startCursor;
      this.endCursor = rawResult.endCursor;
      this.appliedEvents = rawResult.appliedEvents;
      this.duplicateEvents = rawResult.duplicateEvents;
      this.admissions = Object.freeze(rawResult.admissions.map((d) => new AdmissionDecision(d)));
      Object.freeze(this);
    }
  }

  function eventFields(event) {
    if (!event || typeof event !== 'object') throw new ArgumentError('replaySource: every Event must be an object');
    const eventId = checkString(event.eventId, 'event.eventId');
    const groupId = event.groupId ?? '';
    const sequence = event.sequence ?? 0;
    return { eventId, groupId: checkString(groupId, 'event.groupId'), sequence: seq(sequence, 'event.sequence') };
  }

  /**
   * Reconciles Groups for `agentId` into `store` and the Worker's Scheduler (reference
   * `AgentReplay`): `replaySource(groupId, {after})` resolves to the Events after `after`,
   * `projector(event)` to `{workOffers}` or null. Batches of Events commit their inbox rows,
   * cursor and Scheduler snapshot in one transaction; when an Event fails, the Events before it
   * stay committed.
   */
  class AgentReplay {
    #native;
    #source;
    #projector;
    #clock;
    #scheduler;
    #running = false;

    constructor(agentId, store, replaySource, projector, options = {}) {
      needsSqlite('AgentReplay');
      if (!(store instanceof SqliteAgentStore)) throw new ArgumentError('store must be a SqliteAgentStore');
      if (typeof replaySource !== 'function') throw new ArgumentError('replaySource must be a function');
      if (typeof projector !== 'function') throw new ArgumentError('projector must be a function');
      const { scheduler, schedulerPolicy, clock = Date.now } = options ?? {};
      if (typeof clock !== 'function') throw new ArgumentError('clock must be a function');
      if (scheduler !== undefined && schedulerPolicy !== undefined) {
        throw new ArgumentError('give scheduler or schedulerPolicy, not both', { fields: { argument: 'scheduler' } });
      }
      this.agentId = checkString(agentId, 'agentId');
      if (scheduler !== undefined) {
        schedulerNative(scheduler);
        this.#scheduler = scheduler;
      } else {
        // As the reference: rebuilt from the store's snapshot (running work resumes from a safe
        // checkpoint or waits blocked), or new under the policy.
        const snapshot = store.loadScheduler(this.agentId);
        this.#scheduler = snapshot
          ? Scheduler.rebuild(snapshot, schedulerPolicy ?? {}, toMillis(clock(), 'clock()'))
          : new Scheduler(schedulerPolicy ?? {});
      }
      const native = new raw.AgentReplay(natives.get(store), this.agentId);
      open(native.status());
      this.#native = native;
      this.#source = replaySource;
      this.#projector = projector;
      this.#clock = clock;
      Object.freeze(this);
    }

    /** Drops the native state now: this replay's hold on the store's database (idempotent); the Scheduler stays the caller's. */
    free() { this.#native.free(); }

    /** The Worker's Scheduler: the one given in the options, or the one built at construction; replay admits into it. */
    get scheduler() { return this.#scheduler; }

    /** Reconciles each Group (a repeated ID once, in order): `{[groupId]: GroupReplayResult}`. */
    async reconcile(groups) {
      const names = typeof groups === 'string' ? [groups] : [...(groups ?? [])];
      if (this.#running) throw new ArgumentError('AgentReplay: a reconcile is already running');
      this.#running = true;
      try {
        const results = {};
        for (const groupId of new Set(names)) results[groupId] = await this.#group(checkString(groupId, 'groupId'));
        return results;
      } finally {
        this.#running = false;
      }
    }

    async #group(groupId) {
      const native = this.#native;
      open(native.begin(groupId));
      for (;;) {
        let fresh = 0;
        try {
          const events = await this.#source(groupId, { after: open(native.cursor()) });
          if (events && typeof events === 'object' && typeof events[Symbol.iterator] !== 'function'
              && 'throughSequence' in events) {
            // §16 CURSOR_TOO_OLD: the source answered a verified snapshot; restore it and ask
            // again after its `throughSequence`.
            const offers = argumentJson([...(events.projection?.workOffers ?? [])], 'snapshot.projection.workOffers');
            open(native.installSnapshot(schedulerNative(this.#scheduler), checkString(events.artifactHash, 'snapshot.artifactHash'),
              seq(events.throughSequence, 'snapshot.throughSequence'), offers, toMillis(this.#clock(), 'clock()')));
            continue;
          }
          if (!events || typeof events[Symbol.iterator] !== 'function') {
            throw new ArgumentError('replaySource must resolve to an array of Events or a ReplaySnapshot');
          }
          for (const event of events) {
            const { eventId, groupId: group, sequence } = eventFields(event);
            if (!open(native.check(eventId, group, sequence))) continue;
            const projection = await this.#projector(event);
            const offers = projection == null ? undefined : argumentJson([...(projection.workOffers ?? [])], 'workOffers');
            open(native.apply(schedulerNative(this.#scheduler), eventId, sequence, offers, toMillis(this.#clock(), 'clock()')));
            fresh += 1;
          }
        } catch (error) {
          // Keep the progress before the failing Event, then report the failure.
          try { open(native.commit(schedulerNative(this.#scheduler))); } catch { /* the first failure is the one reported */ }
          throw error;
        }
        if (fresh === 0) {
          open(native.commit(schedulerNative(this.#scheduler)));
          return new GroupReplayResult(open(native.result()));
        }
      }
    }
  }

  return { SqliteAgentStore, AgentReplay, GroupReplayResult };
}


// ---- The Agent runtime: one session, Group-isolated execution contexts (§6.3, §11.3, §12; napi only) ----
// Every rule (one active session, strictly increasing Session Epochs, install by revision, the
// Group of a prepared run read from the Scheduler's own record) and every refusal is the core's
// `agent` module; this converts arguments. The WebAssembly build throws ArgumentError.
function agentApi(raw, Scheduler) {
  const schedulerNative = Scheduler[NATIVE_OF];
  const native = new NativeTable(raw);

  function needsNode(what) {
    if (typeof raw.AgentSessions !== 'function') {
      throw new ArgumentError(`${what} needs the Node (napi) entry, not the WebAssembly build`);
    }
  }

  /** One Agent Session (reference `SessionDescriptor`). */
  class SessionDescriptor {
    constructor({ agentId, sessionId, sessionEpoch }) {
      this.agentId = agentId;
      this.sessionId = sessionId;
      this.sessionEpoch = sessionEpoch;
      Object.freeze(this);
    }
  }

  /** What one dispatched run may read: its own Group's context and credentials (deep-frozen), nothing of any other Group. */
  class ExecutionContext {
    constructor(rawContext) {
      this.agentId = rawContext.agentId;
      this.sessionId = rawContext.sessionId;
      this.sessionEpoch = rawContext.sessionEpoch;
      this.workId = rawContext.workId;
      this.groupId = rawContext.groupId;
      this.contextRevision = rawContext.contextRevision;
      this.values = deepFreeze(rawContext.values);
      this.credentialRevision = rawContext.credentialRevision;
      this.credentials = deepFreeze(rawContext.credentials);
      Object.freeze(this);
    }
  }

  const sessionArg = (d) => ({ agentId: d.agentId, sessionId: d.sessionId, sessionEpoch: d.sessionEpoch });

  // A Dispatch (or any object with workId, groupId and generation, or a runId `workId:generation`).
  function dispatchArg(dispatch) {
    if (!dispatch || typeof dispatch !== 'object') throw new ArgumentError('dispatch must be a Dispatch', { fields: { argument: 'dispatch' } });
    let { generation } = dispatch;
    if (generation === undefined || generation === null) {
      const runId = String(dispatch.runId ?? '');
      const at = runId.lastIndexOf(':');
      generation = at >= 0 ? Number(runId.slice(at + 1)) : -1;
    }
    return { workId: checkString(dispatch.workId, 'dispatch.workId'), groupId: checkString(dispatch.groupId, 'dispatch.groupId'), generation };
  }

  /** The active session of an AgentRuntime; `close()` (or `using`) ends it. */
  class AgentRuntimeSession {
    #owner;

    constructor(owner, descriptor) {
      this.#owner = owner;
      this.descriptor = descriptor;
      Object.freeze(this);
    }

    get scheduler() { return this.#owner.scheduler; }

    #call(method, args) { return open(native.get(this.#owner, 'AgentRuntime').call(method, jsonArgs(args))); }

    /** Installs Group `groupId`'s context values at `revision` (an older or equal one is StaleContextError). */
    installGroupContext(groupId, values, { revision } = {}) {
      this.#call('installContext', { session: sessionArg(this.descriptor), groupId, values, revision });
    }

    /** Installs Group `groupId`'s credentials at `revision` (§12: never offered to another Group's work). */
    installGroupCredentials(groupId, credentials, { revision } = {}) {
      this.#call('installCredentials', { session: sessionArg(this.descriptor), groupId, values: credentials, revision });
    }

    /** The ExecutionContext of `dispatch`: only the Group the Scheduler admitted that WorkItem under. */
    prepare(dispatch) {
      const handle = native.get(this.#owner, 'AgentRuntime');
      const args = jsonArgs({ session: sessionArg(this.descriptor), dispatch: dispatchArg(dispatch) });
      return new ExecutionContext(open(handle.prepare(args, schedulerNative(this.#owner.scheduler))));
    }

    /** Closes the session (idempotent); its contexts and credentials are dropped. */
    close() { this.#call('closeSession', { session: sessionArg(this.descriptor) }); }

    [DISPOSE]() { this.close(); }

    toString() { return `AgentRuntimeSession(${this.descriptor.sessionId})`; }
  }

  /** One Agent's runtime (reference `AgentRuntime`): its Scheduler (the caller's, shared) and at most one active session. */
  class AgentRuntime {
    #scheduler;

    constructor(agentId, scheduler) {
      needsNode('AgentRuntime');
      schedulerNative(scheduler);
      const handle = new raw.AgentSessions(checkString(agentId, 'agentId'));
      try {
        open(handle.status());
      } catch (error) {
        handle.free?.();
        throw error;
      }
      native.set(this, handle);
      this.agentId = agentId;
      this.#scheduler = scheduler;
      Object.freeze(this);
    }

    get scheduler() { return this.#scheduler; }

    /** The active session, or null. */
    get activeSession() {
      const state = open(native.get(this, 'AgentRuntime').call('state', '[]'));
      return state.activeSession && new SessionDescriptor(state.activeSession);
    }

    /** Starts session `sessionEpoch` (above every earlier one; only when none is active); `sessionId` defaults to `<agentId>#session-<epoch>`. */
    startSession(sessionEpoch, { sessionId } = {}) {
      const started = open(native.get(this, 'AgentRuntime').call('startSession', jsonArgs({ sessionEpoch, sessionId: sessionId ?? null })));
      return new AgentRuntimeSession(this, new SessionDescriptor(started));
    }
  }
  disposable(native, [AgentRuntime]);

  return { AgentRuntime, AgentRuntimeSession, SessionDescriptor, ExecutionContext };
}

// ---- Bounded offline execution (§11.5; napi only) ----------------------------------------------
// ---- the signed human control interface (reference control.py, §1.6) ----------------------
//
// Every Command is built by the core (`missionweaveprotocol_engine::control`, through
// `callFunction` on both backends) from the arguments and the projections queried here; this
// queries, signs with the human's key and performs. The interface's own refusals (nothing
// submitted, a missing budget, a bad argument) are the core's, as ArgumentError.
function controlApi({ SigningKey, signDocument, callFunction }) {
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

    /** A fresh key (`crypto.getRandomValues`); the key ID defaults to `<humanId>:signing-key`. */
    static generate(humanId, { keyId } = {}) {
      const id = keyId ?? `${checkString(humanId, 'humanId')}:signing-key`;
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
      return callFunction('controlVerify', [document, this.keyId, this.publicKey]);
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
      const command = this.identity.sign(callFunction('controlCommand', [request]));
      const { event } = await this.core.perform(command);
      this.#accepted.set(event.eventId, command);
      return new ControlReceipt(command, event);
    }

    async create({ missionId, groupId, coordinatorId, title, objective, definitionOfDone, deadline, budget,
      permissions = [], coordinatorLeaseSeconds = 300, mainConversationId, approvalPolicy, coordinatorLeaseId } = {}) {
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

    async direct(missionId, content, { conversationId, messageId, mentions = [] } = {}) {
      return this.#perform(await this.#request('direct', { content, conversationId, messageId, mentions }, missionId));
    }

    async requestChanges(missionId, feedback, { missionRevision } = {}) {
      const request = await this.#request('request_changes', { feedback, missionRevision }, missionId,
        { events: missionRevision === undefined || missionRevision === null });
      return this.#perform(request);
    }

    /** Resolves to `[receipt, approval]`: the signed Approval Decision document (approval.schema.json). */
    async approve(missionId, { approvalId, missionRevision, artifactHashes, acceptancePolicyVersion = '1.0.0', comments } = {}) {
      const args = { approvalId, missionRevision, artifactHashes, acceptancePolicyVersion, comments };
      const request = await this.#request('approve', args, missionId,
        { events: missionRevision === undefined || missionRevision === null || !artifactHashes });
      const receipt = await this.#perform(request);
      const unsigned = callFunction('controlApproval', [{
        command: JSON.parse(receipt.command.text), event: receipt.event.document, mission: request.mission,
      }]);
      const approval = signDocument('approval', JSON.stringify(unsigned), { key: this.identity.signingKey });
      return [receipt, deepFreeze(JSON.parse(approval.text))];
    }

    /** Resolves to `[receipt, executionApproval]`: the Execution Approval the Core stored (§12). */
    async approveExecution(missionId, { workItemId, ownershipEpoch, operations, resources = [], budget,
      expiresInSeconds = 300, approvalId, comments } = {}) {
      const args = { workItemId, ownershipEpoch, operations, resources, budget, expiresInSeconds, approvalId, comments };
      const receipt = await this.#perform(await this.#request('approve_execution', args, missionId));
      const id = JSON.parse(receipt.command.text).payload.approvalId;
      return [receipt, await this.core.query({ kind: 'execution_approval', entityId: id })];
    }

    async cancel(missionId, reason) {
      return this.#perform(await this.#request('cancel', { reason }, missionId));
    }

    async replaceCoordinator(missionId, coordinatorId, { leaseSeconds = 300, agentCardVersion, leaseId } = {}) {
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

  return { HumanIdentity, HumanControl, ControlReceipt };
}

// Every rule (the grace window, the bounds, reversible kinds only, the assignment, secrets, the
// critical binding, signing, rebasing) and every refusal (OfflinePolicyError, the core's code and
// reason) is the core's `offline` module. The wrapper reads the WorkItem as Python's does and
// supplies the clock; the outbox is the caller's store, called back from the core.
function offlineApi(raw, { SigningKey, seedOf, callFunction }) {
  const native = new NativeTable(raw);
  // The core's names; a backend without the authority calls (the verify-only build) has none.
  let constants = { extension: undefined, version: undefined, reversibleKinds: [] };
  if (typeof raw.callFunction === 'function') {
    try { constants = callFunction('offlineConstants', []); } catch { /* a failing backend: its calls report it */ }
  }

  function needsNode(what) {
    if (typeof raw.OfflinePolicy !== 'function') {
      throw new ArgumentError(`${what} needs the Node (napi) entry, not the WebAssembly build`);
    }
  }

  const instantText = (value, what) => {
    if (value instanceof Date) {
      checkDate(value, what);
      return value.toISOString().replace('.000Z', 'Z');
    }
    return checkString(value, what);
  };

  // A wire Command as JSON text: an object, its JSON text, or a SignedDocument (its exact text).
  function commandText(command) {
    if (typeof command === 'string') return command;
    if (command instanceof SignedDocument) return command.text;
    if (command && typeof command === 'object') return argumentJson(command, 'command');
    throw new ArgumentError('command must be a wire Command object, its JSON text or a SignedDocument', { fields: { argument: 'command' } });
  }

  // `{agentId, signingKey}`: the Agent and its SigningKey.
  function signerOf(identity, keyId) {
    const key = identity?.signingKey;
    if (!(key instanceof SigningKey)) throw new ArgumentError('identity.signingKey must be a SigningKey', { fields: { argument: 'identity' } });
    return { keyId: keyId === undefined || keyId === null ? key.keyId : checkString(keyId, 'keyId'), seed: seedOf(key) };
  }

  /** The offline bounds: `maxDisconnectGraceMs` > 0, `maxActions` ≥ 1, `maxUsage`. */
  class OfflineLimits {
    constructor({ maxDisconnectGraceMs, maxActions, maxUsage = {} } = {}) {
      needsNode('OfflineLimits');
      const usage = maxUsage instanceof ResourceUsage ? { ...maxUsage } : maxUsage;
      open(raw.offlineValidateLimits(jsonArgs([{ maxDisconnectGraceMs, maxActions, maxUsage: usage }])));
      this.maxDisconnectGraceMs = maxDisconnectGraceMs;
      this.maxActions = maxActions;
      this.maxUsage = new ResourceUsage(usage);
      Object.freeze(this);
    }
  }

  /** The data of the critical offline extension; instants are §2 timestamps (a Date is accepted). */
  class OfflineProgressBinding {
    constructor(fields) {
      needsNode('OfflineProgressBinding');
      if (!fields || typeof fields !== 'object') throw new ArgumentError('OfflineProgressBinding needs an object', { fields: { argument: 'binding' } });
      const data = { ...fields };
      for (const name of ['disconnectedAt', 'bufferedAt', 'graceDeadline', 'executionLeaseExpiresAt']) {
        if (data[name] instanceof Date) data[name] = instantText(data[name], name);
      }
      // Absent: no usage (the reference's default); every dimension is written, as the core requires.
      data.resourceUsageDelta = { ...(data.resourceUsageDelta instanceof ResourceUsage ? data.resourceUsageDelta : new ResourceUsage(data.resourceUsageDelta ?? {})) };
      const normalized = open(raw.offlineValidateBinding(jsonArgs([data])));
      Object.assign(this, normalized);
      this.resourceUsageDelta = new ResourceUsage(normalized.resourceUsageDelta);
      Object.freeze(this);
    }

    /** The extension's `data` (camelCase, §2 timestamps). */
    toWire() { return { ...this, resourceUsageDelta: { ...this.resourceUsageDelta } }; }

    toJSON() { return this.toWire(); }

    /** The binding a Command carries (object, JSON text or SignedDocument), or null. */
    static fromCommand(command) {
      needsNode('OfflineProgressBinding.fromCommand');
      const data = open(raw.offlineBindingOf(`[${commandText(command)}]`));
      return data && new OfflineProgressBinding(data);
    }
  }

  /** The core's in-memory outbox (`enqueueAction`, `pendingActions`, `markActionSent`). */
  class InMemoryOutbox {
    constructor() {
      needsNode('InMemoryOutbox');
      native.set(this, new raw.OfflineOutboxMemory());
    }

    enqueueAction(agentId, actionId, payload) {
      open(native.get(this).call('enqueueAction', jsonArgs({ agentId, actionId, payload })));
    }

    pendingActions(agentId) { return open(native.get(this).call('pendingActions', jsonArgs({ agentId }))); }

    markActionSent(agentId, actionId) { open(native.get(this).call('markActionSent', jsonArgs({ agentId, actionId }))); }
  }

  const read = (obj, ...names) => {
    for (const name of names) if (obj?.[name] !== undefined && obj?.[name] !== null) return obj[name];
    return undefined;
  };
  const refusal = (message, code, reason) => new OfflinePolicyError(message, { code, reason });

  /**
   * Bounded, reversible, signed buffering for one active, owned, leased WorkItem (reference
   * `OfflineExecutionPolicy`). `store` provides `enqueueAction`, `pendingActions` and
   * `markActionSent` (a SqliteAgentStore or an InMemoryOutbox); `identity` is `{agentId, signingKey}`.
   */
  class OfflineExecutionPolicy {
    #store;
    #signer;
    #clock;

    constructor(store, identity, workItem, { disconnectedAt, limits, clock = Date.now, sessionEpoch } = {}) {
      needsNode('OfflineExecutionPolicy');
      for (const method of ['enqueueAction', 'pendingActions', 'markActionSent']) {
        if (typeof store?.[method] !== 'function') throw new ArgumentError(`store must provide ${method}()`, { fields: { argument: 'store' } });
      }
      if (!(limits instanceof OfflineLimits)) throw new ArgumentError('limits must be OfflineLimits', { fields: { argument: 'limits' } });
      if (typeof clock !== 'function') throw new ArgumentError('clock must be a function', { fields: { argument: 'clock' } });
      const agentId = checkString(identity?.agentId, 'identity.agentId');
      const signer = signerOf(identity);
      const status = read(workItem, 'status', 'state');
      if (status !== undefined && String(status) !== 'active') {
        throw refusal('offline progress needs an active WorkItem', 'INVALID_STATE_TRANSITION', 'not_active');
      }
      const assignee = read(workItem, 'assigneeId', 'ownerAgentId');
      if (assignee !== undefined && assignee !== agentId) {
        throw refusal('the WorkItem is owned by another Agent', 'WORK_STALE_OWNERSHIP', 'stale_ownership');
      }
      const leaseId = read(workItem, 'executionLeaseId');
      const expiresAt = read(workItem, 'executionLeaseExpiresAt');
      const epoch = sessionEpoch ?? read(workItem, 'sessionEpoch');
      if (leaseId === undefined || expiresAt === undefined || epoch === undefined) {
        throw refusal('offline progress needs a current Execution Lease and Session Epoch', 'INVALID_STATE_TRANSITION', 'not_active');
      }
      const assignment = {
        agentId, groupId: read(workItem, 'groupId'), workItemId: read(workItem, 'workItemId', 'id'),
        conversationId: read(workItem, 'conversationId') ?? null, sessionEpoch: epoch,
        ownershipEpoch: read(workItem, 'ownershipEpoch') ?? 0, executionLeaseId: leaseId,
        executionLeaseExpiresAt: toMillis(expiresAt, 'workItem.executionLeaseExpiresAt'),
      };
      const handle = new raw.OfflinePolicy(jsonArgs({
        assignment, disconnectedAt: toMillis(disconnectedAt, 'disconnectedAt'),
        limits: { maxDisconnectGraceMs: limits.maxDisconnectGraceMs, maxActions: limits.maxActions, maxUsage: { ...limits.maxUsage } },
      }));
      try {
        open(handle.status());
      } catch (error) {
        handle.free?.();
        throw error;
      }
      native.set(this, handle);
      this.#store = store;
      this.#signer = signer;
      this.#clock = clock;
      this.limits = limits;
      Object.freeze(this);
    }

    #state() { return open(native.get(this, 'OfflineExecutionPolicy').call('state', '[]')); }

    /** The end of the window: `min(disconnectedAt + maxDisconnectGraceMs, lease expiry)`. */
    get graceDeadline() { return new Date(this.#state().graceDeadline); }

    /** The buffered signed wire Commands, in buffer order (deep-frozen). */
    get bufferedActions() { return deepFreeze(this.#state().bufferedActions); }

    get cumulativeUsage() { return new ResourceUsage(this.#state().cumulativeUsage); }

    /**
     * Checks `command`, attaches the critical binding, re-signs it with the Agent's key and
     * enqueues it; the same Command again returns the same signed Command (deep-frozen wire form).
     */
    buffer(command, { usage, now } = {}) {
      const at = toMillis(now ?? this.#clock(), now === undefined ? 'clock()' : 'now');
      const usageJson = argumentJson(usage instanceof ResourceUsage ? { ...usage } : usage ?? null, 'usage');
      const args = `[${commandText(command)},${usageJson},${at}]`;
      const store = this.#store;
      let failure;
      // The core calls back to enqueue; the store's own exception is kept and rethrown unchanged.
      const outbox = {
        enqueue(agentId, actionId, payload) {
          try {
            store.enqueueAction(agentId, actionId, JSON.parse(payload));
            return true;
          } catch (error) {
            failure = error;
            return false;
          }
        },
      };
      const handle = native.get(this, 'OfflineExecutionPolicy');
      const envelope = handle.buffer(outbox, this.#signer.keyId, this.#signer.seed, args);
      if (failure !== undefined) throw failure;
      return deepFreeze(open(envelope));
    }
  }
  disposable(native, [InMemoryOutbox, OfflineExecutionPolicy]);

  /**
   * The buffered Command rebased onto the current session (`issuedAt`, Session and Membership
   * Epochs, and for a checkpoint `executionLeaseId`) and re-signed, as a wire Command object; the
   * binding is kept unchanged.
   */
  function offlineCommandToWire(command, identity, { sessionEpoch, membershipEpoch, issuedAt, executionLeaseId, keyId } = {}) {
    needsNode('offlineCommandToWire');
    const signer = signerOf(identity, keyId);
    const rebase = {
      sessionEpoch, membershipEpoch, issuedAt: toMillis(issuedAt ?? Date.now(), 'issuedAt'),
      executionLeaseId: executionLeaseId ?? null,
    };
    return open(raw.offlineRebase(signer.keyId, signer.seed, `[${commandText(command)},${argumentJson(rebase, 'rebase')}]`));
  }

  /** `offlineCommandToWire`, deep-frozen (this package has no Command model: the wire form is the Command). */
  function rebaseOfflineCommand(command, identity, options = {}) {
    const { keyId, ...rest } = options ?? {};
    if (keyId !== undefined) throw new ArgumentError('rebaseOfflineCommand takes no keyId (the signing key names it)', { fields: { argument: 'keyId' } });
    return deepFreeze(offlineCommandToWire(command, identity, rest));
  }

  return {
    OFFLINE_EXECUTION_EXTENSION: constants.extension,
    OFFLINE_EXECUTION_EXTENSION_VERSION: constants.version,
    OFFLINE_REVERSIBLE_KINDS: Object.freeze([...constants.reversibleKinds]),
    OfflineLimits,
    OfflineProgressBinding,
    OfflineExecutionPolicy,
    InMemoryOutbox,
    offlineCommandToWire,
    rebaseOfflineCommand,
  };
}

/**
 * Binds the API to one backend. `raw` is the napi addon or the wasm-bindgen module; both expose
 * the same functions and the classes `Registry` and `InMemoryAdmissionLog`.
 */
// ---- context (§13.3, §7.4): Context Packages, knowledge publications, Group Snapshots -------
// The rules and the argument shape are the core's (`authority::context::call`); this converts.
function contextApi(raw, { SigningKey, seedOf, inputBytes }) {
  function call(method, args, key) {
    if (typeof raw.contextCall !== 'function') {
      throw new ArgumentError(`the context module (${method}) needs the full core, not the verify-only build`);
    }
    const keyId = key ? key.keyId : '';
    const seed = key ? seedOf(key) : new Uint8Array(0);
    return open(raw.contextCall(method, argumentJson(args, 'context arguments'), keyId, seed));
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
      return deepFreeze(call('publish', { draft }, this.#key).document);
    }

    /** Verifies a package (six stages against this service's key, or `{registry}` bytes), its generator and rules. */
    verify(contextPackage, { registry } = {}) {
      this.#verified(contextPackage, registry);
    }

    #verified(contextPackage, registry) {
      const resolver = registry === undefined || registry === null ? ownKey({ type: 'agent', id: this.#agentId }, this.#key) : resolverOf(registry);
      const text = argumentJson(documentOf(contextPackage, 'contextPackage'), 'contextPackage');
      return call('verify', { text, resolver, generator: this.#agentId }).document;
    }

    /** Verifies and installs the package into its Group of `session` (revision = version). */
    install(contextPackage, session, { expectedMissionId } = {}) {
      const document = this.#verified(contextPackage);
      const out = call('install', { document, expectedMissionId: checkString(expectedMissionId, 'expectedMissionId') });
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
      return deepFreeze(call('knowledgePublish', { source: documentOf(context, 'context'), draft }, this.#key));
    }

    verify(publication, { context } = {}) {
      call('knowledgeVerify', {
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
      const snapshot = deepFreeze(call('snapshotArchive', { request, authority: this.#authority }, this.#key).document);
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
      call('snapshotVerify', { text, resolver: ownKey(this.#authority, this.#key), authority: this.#authority });
    }
  }

  return { ContextPackageService, KnowledgePublisher, SnapshotArchive };
}

export function createApi(backendModule, backend) {
  const raw = guarded(backendModule);

  // The core's own stage-5 error for an unpaired surrogate (CanonicalizationError,
  // `unpaired-surrogate`), asked of the core with the escaped code unit `"\ud800"`, whose
  // exact units it keeps and refuses at canonicalization (§6.4): one source for the error.
  const UNPAIRED_SURROGATE = encoder.encode('"\\ud800"');
  function unpairedSurrogate() {
    const envelope = JSON.parse(raw.canonicalize(UNPAIRED_SURROGATE, ''));
    return toError(envelope.error ?? { detail: 'the core accepted an unpaired surrogate' });
  }
  const inputBytes = (input, what) => toBytes(input, what, unpairedSurrogate);
  // A document to verify: the core's stage-5 VerificationError (`outside-i-json`, with the same
  // detail), as its verification of such a document reports it.
  const UNPAIRED_SURROGATE_DOCUMENT = encoder.encode('{"s":"\\ud800"}');
  function unpairedSurrogateDocument() {
    const envelope = JSON.parse(raw.signingPreview(UNPAIRED_SURROGATE_DOCUMENT));
    return toError(envelope.error ?? { detail: 'the core accepted an unpaired surrogate' });
  }
  const documentBytes = (input, what) => toBytes(input, what, unpairedSurrogateDocument);
  const rawRegistries = new NativeTable(raw);
  const rawLogs = new NativeTable(raw);
  // The napi addon takes a Registry's bytes in place of a Registry object (validated on the Rust
  // stack for that one call): a call with bytes then creates no JavaScript object at all.
  const registryBytesArgument = backendModule.REGISTRY_BYTES_ARGUMENT === true;

  /** A Registry snapshot (`registry-fixture` form), validated once and reused for many verifications. */
  class Registry {
    /** Throws RegistryError if the snapshot is not usable evidence. */
    constructor(snapshot) {
      const handle = new raw.Registry(inputBytes(snapshot, 'Registry snapshot'));
      let info;
      try {
        info = open(handle.info());
      } catch (error) {
        handle.free?.();
        throw error;
      }
      rawRegistries.set(this, handle);
      this.organizationId = info.organizationId;
      this.digest = info.digest;
      this.size = info.size;
      Object.freeze(this);
    }

    /** The binding of a key ID, or null (display only; verification applies the stage 4 rules). */
    binding(keyId) {
      const binding = open(rawRegistries.get(this, 'Registry').binding(checkString(keyId, 'keyId')));
      return binding && Object.freeze({ ...binding, principal: Object.freeze(binding.principal) });
    }
  }

  /** The core's in-memory Admission Log; writes are attributed to `service`. */
  class InMemoryAdmissionLog {
    constructor(service) {
      const principal = principalOf(service, 'service');
      rawLogs.set(this, new raw.InMemoryAdmissionLog(principal.type, principal.id));
      hidden(this, { service: Object.freeze({ type: principal.type, id: principal.id }) });
    }

    get size() { return rawLogs.get(this, 'InMemoryAdmissionLog').size(); }
  }
  disposable(rawRegistries, [Registry]);
  disposable(rawLogs, [InMemoryAdmissionLog]);

  // A Registry object, or snapshot bytes (validated per call; problems fail stage 4). Bytes
  // leave nothing behind when the call returns: the napi addon takes them as they are; a
  // WebAssembly Registry made for the call is freed at once.
  function withRegistry(registry, use) {
    if (registry instanceof Registry) return use(rawRegistries.get(registry, 'Registry'));
    const bytes = inputBytes(registry, 'registry');
    if (registryBytesArgument) return use(bytes);
    const handle = new raw.Registry(bytes);
    try {
      return use(handle);
    } finally {
      handle.free?.();
    }
  }

  // ---- one's own keys and Registry evidence (own keys → Registry → sign → verify) --------

  const seeds = new WeakMap();

  function decodeBase64url(text, length, what) {
    return Uint8Array.from(open(raw.base64urlDecode(checkString(text, what), length, what)));
  }

  /**
   * An Ed25519 signing key with its key ID. The core holds no randomness: `generate` draws the
   * 32-byte seed from `crypto.getRandomValues`. The seed never appears in `toJSON()`.
   */
  class SigningKey {
    constructor(keyId, seed) {
      const seedBytes = Uint8Array.from(inputBytes(seed, 'seed'));
      const info = open(raw.keyInfo(checkString(keyId, 'keyId'), seedBytes));
      seeds.set(this, seedBytes);
      this.keyId = info.keyId;
      this.algorithm = info.algorithm;
      this.publicKeyBase64url = info.publicKey;
      hidden(this, { publicKeyBytes: decodeBase64url(info.publicKey, 32, 'publicKey') });
      Object.freeze(this);
    }

    /** A new key from 32 random bytes (`crypto.getRandomValues`). */
    static generate(keyId) {
      const random = globalThis.crypto?.getRandomValues;
      if (typeof random !== 'function') throw new ArgumentError('crypto.getRandomValues is not available in this runtime');
      return new SigningKey(keyId, globalThis.crypto.getRandomValues(new Uint8Array(32)));
    }

    /** The key of a 32-byte seed. */
    static fromSeed(keyId, seed) { return new SigningKey(keyId, seed); }

    /** The key of a seed in canonical unpadded base64url (§2). */
    static fromSeedBase64url(keyId, text) { return new SigningKey(keyId, decodeBase64url(text, 32, 'seed')); }

    /** The 32-byte public key (a fresh copy). */
    get publicKey() { return this.publicKeyBytes.slice(); }

    /** The 32-byte seed (a fresh copy): keep it secret. */
    seedBytes() { return seeds.get(this).slice(); }

    /** The seed in canonical unpadded base64url: keep it secret. */
    toSeedBase64url() { return open(raw.base64urlEncode(seeds.get(this))); }

    /** Signs an unsigned document (see `signDocument`). */
    sign(kind, unsigned, { registry } = {}) { return signDocument(kind, unsigned, { key: this, registry }); }

    /** The public view: `{keyId, algorithm, publicKey}` (base64url); never the seed. */
    toJSON() { return { keyId: this.keyId, algorithm: this.algorithm, publicKey: this.publicKeyBase64url }; }
  }

  function timeText(value, what) {
    if (value instanceof Date) {
      checkDate(value, what);
      return value.toISOString();
    }
    return checkString(value, what);
  }

  function publicKeyOf(value) {
    if (value instanceof SigningKey) return value.publicKey;
    if (typeof value === 'string') return decodeBase64url(value, 32, 'publicKey');
    return inputBytes(value, 'publicKey');
  }

  /**
   * Registry evidence for one's own Agents (the core's `registry::RegistryBuilder`): bind key IDs
   * to Principals and public keys, then `build()` the snapshot bytes, validated by the same
   * stage-4 rules a verifier applies (§6.4).
   */
  const rawBuilders = new NativeTable(raw);

  class RegistryBuilder {
    constructor(organizationId) {
      rawBuilders.set(this, new raw.RegistryBuilder(checkString(organizationId, 'organizationId')));
      this.organizationId = organizationId;
    }

    /** Binds `keyId` to `principal` and a public key; returns the builder. */
    addKey(keyId, principal, publicKey, validFrom, { history = [] } = {}) {
      const { type, id } = principalOf(principal, 'principal');
      if (!Array.isArray(history)) throw new ArgumentError('history must be an array');
      const records = history.map((record, i) => {
        if (!record || typeof record !== 'object') throw new ArgumentError(`history[${i}] must be an object`);
        const out = {};
        for (const [name, value] of Object.entries(record)) {
          out[name] = value === undefined || value === null ? value : timeText(value, `history[${i}].${name}`);
        }
        return out;
      });
      open(rawBuilders.get(this, 'RegistryBuilder').addKey(checkString(keyId, 'keyId'), type, id, publicKeyOf(publicKey),
        timeText(validFrom, 'validFrom'), JSON.stringify(records)));
      return this;
    }

    /** The RFC 8785 evidence bytes for `new Registry(bytes)`; throws RegistryError on a broken rule. */
    build() { return encoder.encode(open(rawBuilders.get(this, 'RegistryBuilder').build()).evidence); }
  }
  disposable(rawBuilders, [RegistryBuilder]);

  /** Every §6.4 failure reason, explained in one sentence with its spec section. */
  function failureReasons() {
    return deepFreeze(open(raw.failureReasons()));
  }

  /** The explanation of a VerificationError (or of `stage` and `reason`), or null. */
  function explainFailure(stageOrError, reason) {
    const [stage, slug] = stageOrError instanceof MwpError
      ? [stageOrError.stage, stageOrError.reason]
      : [stageOrError, reason];
    if (typeof stage !== 'string' || typeof slug !== 'string') return null;
    return deepFreeze(open(raw.explainFailure(stage, slug)));
  }

  // Parse limits (docs/limits.md) cross as JSON text, '' for the call's default profile; the
  // core reads and checks them (positive safe integers, no unknown member).
  function limitsArg(limits) {
    if (limits === undefined) return '';
    if (limits === null || typeof limits !== 'object' || Array.isArray(limits)) {
      throw new ArgumentError('limits must be a ParseLimits object ({maxDocumentBytes, maxContainerEntries, maxStringBytes, maxNumberChars})');
    }
    return argumentJson(limits, 'limits');
  }

  let limitProfiles;
  /** The core's two parse-limit profiles: `DOCUMENT` (received documents and frames) and `STATE`. */
  function parseLimits() {
    if (limitProfiles === undefined) {
      const { document, state } = open(raw.parseLimitProfiles());
      limitProfiles = deepFreeze({ DOCUMENT: document, STATE: state });
    }
    return limitProfiles;
  }

  function canonicalize(json, { limits } = {}) { return open(raw.canonicalize(inputBytes(json), limitsArg(limits))); }

  function canonicalBytes(json, options) { return encoder.encode(canonicalize(json, options)); }

  function canonicalHash(json, { limits } = {}) { return open(raw.canonicalHash(inputBytes(json), limitsArg(limits))); }

  function checkStrictJson(json) { return open(raw.checkJson(inputBytes(json))); }

  function validateSchema(name, json) {
    open(raw.validateSchema(checkString(name, 'schema name'), inputBytes(json)));
  }

  function schemaNames() { return open(raw.schemaNames()); }

  function detectKinds(document) {
    return open(raw.detectKinds(inputBytes(document)));
  }

  function signDocument(kind, unsigned, { key, keyId, seed, registry } = {}) {
    checkKind(kind);
    if (key !== undefined) {
      if (!(key instanceof SigningKey)) throw new ArgumentError('key must be a SigningKey');
      if (keyId !== undefined || seed !== undefined) throw new ArgumentError('give either key or keyId and seed');
      ({ keyId } = key);
      seed = seeds.get(key);
    }
    checkString(keyId, 'keyId');
    const bytes = inputBytes(unsigned, 'unsigned document');
    const seedBytes = inputBytes(seed, 'seed');
    const envelope = registry === undefined
      ? raw.sign(kind, bytes, keyId, seedBytes)
      : withRegistry(registry, (handle) => raw.signAndVerify(kind, bytes, keyId, seedBytes, handle));
    return new SignedDocument(open(envelope));
  }

  // The document's bytes are copied so that later changes by the caller cannot alter the hash.
  function documentHasher(bytes) {
    const copy = new Uint8Array(bytes);
    return () => open(raw.canonicalHash(copy, ''));
  }

  // A verification envelope: `{"ok":{…}}` + line feed + signing bytes, or `{"error":{…}}`
  // (thrown, or returned for batch items).
  function verifiedFrom(envelope, bytes, throwError) {
    const split = envelope.indexOf('\n');
    if (split < 0) {
      const error = toError(JSON.parse(envelope).error);
      if (throwError) throw error;
      return error;
    }
    const fields = JSON.parse(envelope.slice(0, split)).ok;
    fields.signingBytes = envelope.slice(split + 1);
    return new VerifiedDocument(fields, documentHasher(bytes));
  }

  function verifySignedDocument(kind, document, registry, { limits } = {}) {
    checkKind(kind);
    const bytes = documentBytes(document, 'document');
    const limitsText = limitsArg(limits);
    return verifiedFrom(withRegistry(registry, (handle) => raw.verify(kind, bytes, handle, limitsText)), bytes, true);
  }

  function verifySignedDocuments(items, registry, { threads = 1, limits } = {}) {
    const limitsText = limitsArg(limits);
    if (!Array.isArray(items)) throw new ArgumentError('items must be an array of {kind, document}');
    // A document that cannot be encoded is that item's error, as any other rejection in a batch.
    const parts = items.map((item) => {
      const kind = checkKind(item?.kind);
      try {
        return { kind, bytes: documentBytes(item?.document, 'document') };
      } catch (error) {
        if (!(error instanceof VerificationError)) throw error;
        return { kind, bytes: new Uint8Array(0), error };
      }
    });
    const lengths = Uint32Array.from(parts, (p) => p.bytes.length);
    const data = new Uint8Array(lengths.reduce((a, b) => a + b, 0));
    let offset = 0;
    for (const part of parts) { data.set(part.bytes, offset); offset += part.bytes.length; }
    const kinds = parts.map((p) => p.kind).join(',');
    const [head, ...records] = withRegistry(registry, (handle) => raw.verifyMany(kinds, lengths, data, handle, threads >>> 0, limitsText))
      .split('\u001e');
    if (open(head) !== records.length) throw new MwpError('batch result count mismatch', { code: 'INTERNAL_ERROR' });
    return records.map((record, i) => parts[i].error ?? verifiedFrom(record, parts[i].bytes, false));
  }

  function signingPreview(document) {
    const preview = open(raw.signingPreview(documentBytes(document, 'document')));
    return Object.freeze({ signingBytes: encoder.encode(preview.signingBytes), signingHash: preview.signingHash });
  }

  function admit(replay, kind, document, registry, log, trustedContext) {
    checkKind(kind);
    const bytes = documentBytes(document, 'document');
    const state = { failure: undefined, calls: { lookup: 0, context: 0, append: 0 } };
    let envelope;
    if (log instanceof InMemoryAdmissionLog) {
      const host = trustedContext === undefined ? undefined : makeHost({}, trustedContext, state);
      const rawLog = rawLogs.get(log, 'InMemoryAdmissionLog');
      envelope = withRegistry(registry, (handle) => raw.admitWithMemoryLog(replay, kind, bytes, handle, rawLog, host));
    } else if (log && typeof log.lookup === 'function' && (replay || typeof log.append === 'function')) {
      const host = makeHost(log, trustedContext, state);
      envelope = withRegistry(registry, (handle) => raw.admitWithHost(replay, kind, bytes, handle, host));
    } else {
      throw new ArgumentError('log must be an InMemoryAdmissionLog or an object with lookup() and append()');
    }
    return admitted(envelope, state);
  }

  function admitted(envelope, state) {
    const parsed = JSON.parse(envelope);
    if ('error' in parsed) {
      const error = toError(parsed.error, parsed.error.class === 'AdmissionError' ? state.failure : undefined);
      if (error instanceof ArgumentError && state.failure !== undefined) {
        throw state.failure instanceof MwpError ? state.failure : new ArgumentError(error.message, { cause: state.failure });
      }
      throw error;
    }
    return new AdmittedDocument(parsed.ok);
  }

  // The core's step-wise admission flow, awaiting each log call: for logs backed by a database
  // or a network service. Same rules and results as the synchronous path.
  async function admitStepwise(replay, kind, document, registry, log, trustedContext, options) {
    checkKind(kind);
    const bytes = documentBytes(document, 'document');
    if (!log || typeof log.lookup !== 'function' || (!replay && typeof log.append !== 'function')) {
      throw new ArgumentError('log must be an object with lookup() and append()');
    }
    if (options !== undefined && (options === null || typeof options !== 'object')) {
      throw new ArgumentError('options must be an object {signal?, timeoutMs?}');
    }
    const state = { failure: undefined, calls: { lookup: 0, context: 0, append: 0 } };
    const bound = logBound(options);
    let session;
    try {
      session = withRegistry(registry, (handle) => new raw.AdmissionSession(replay, kind, bytes, handle));
    } catch (error) {
      bound.dispose();
      throw error;
    }
    const reply = (method) => (value) => hostReply(value, state, method);
    try {
      for (;;) {
        const step = JSON.parse(session.step());
        if (step.step === 'lookup') {
          state.calls.lookup += 1;
          session.onLookup(await boundedLogCall(() => log.lookup(step.organizationId, step.signingHash), state, reply('lookup'), bound));
        } else if (step.step === 'trustedContext') {
          state.calls.context += 1;
          session.onContext(await awaited(() => (typeof trustedContext === 'function' ? trustedContext() : trustedContext), state, contextReply));
        } else if (step.step === 'append') {
          state.calls.append += 1;
          const candidate = JSON.parse(step.candidate);
          session.onAppend(await boundedLogCall(() => log.append(candidate, encoder.encode(step.candidateBytes)), state, reply('append'), bound));
        } else {
          return admitted(session.result(), state);
        }
      }
    } finally {
      bound.dispose();
      session.free?.();
    }
  }

  /** First Admission of a newly presented document (six stages, then the Admission Log). */
  function admitFirst(kind, document, registry, log, trustedContext) {
    return admit(false, kind, document, registry, log, trustedContext);
  }

  /** Historical replay: a First-Admission Record must already exist; nothing is appended. */
  function replayHistorical(kind, document, registry, log) {
    return admit(true, kind, document, registry, log, undefined);
  }

  /** `admitFirst` for an Admission Log (and trusted context) whose calls may return Promises. */
  // `options`: {signal, timeoutMs} bound the log calls; see api.d.ts.
  function admitFirstAsync(kind, document, registry, log, trustedContext, options) {
    return admitStepwise(false, kind, document, registry, log, trustedContext, options);
  }

  /** `replayHistorical` for an Admission Log whose `lookup` may return a Promise. */
  function replayHistoricalAsync(kind, document, registry, log, options) {
    return admitStepwise(true, kind, document, registry, log, undefined, options);
  }

  function bundleFile(path) {
    const bytes = raw.bundleFile(checkString(path, 'path'));
    return bytes == null ? undefined : Uint8Array.from(bytes);
  }

  function bundlePaths() { return open(raw.bundlePaths()); }

  function verifyCryptographyBundle() { return Object.freeze(open(raw.verifyCryptographyBundle())); }

  function verifyAdmissionBundle() { return Object.freeze(open(raw.verifyAdmissionBundle())); }

  function runConformance(bundles = []) {
    if (!Array.isArray(bundles) || bundles.some((b) => typeof b !== 'string' || b.includes(','))) {
      throw new ArgumentError('bundles must be an array of bundle names');
    }
    return open(raw.runConformance(bundles.join(',')));
  }

  function parseFrame(bytes) { return new Frame(open(raw.parseFrame(inputBytes(bytes, 'frame')))); }

  function parseReceivedFrame(bytes) {
    const frame = open(raw.parseReceivedFrame(inputBytes(bytes, 'frame')));
    return 'commandBytes' in frame ? new ReceivedCommandFrame(frame) : new Frame(frame);
  }

  function encodeFrame(frame) {
    const input = typeof frame === 'object' && frame !== null && !ArrayBuffer.isView(frame) && !(frame instanceof ArrayBuffer)
      ? JSON.stringify(frame)
      : frame;
    return open(raw.encodeFrame(inputBytes(input, 'frame')));
  }

  function errorFrame({ frameId, code, message, occurredAt, relatedFrameId } = {}) {
    return open(raw.errorFrame(
      checkString(frameId, 'frameId'), checkString(code, 'code'), checkString(message, 'message'),
      checkString(occurredAt, 'occurredAt'),
      relatedFrameId === undefined ? undefined : checkString(relatedFrameId, 'relatedFrameId'),
    ));
  }

  // ---- content-addressed Artifact bytes (napi only: a filesystem store) -----------------------
  // Every rule (hash, layout, size check, manifest building, signing, verification) is the
  // core's `artifact::LocalArtifactStore`; this converts arguments (docs/engine.md "Artifact bytes").
  function needsFilesystem(what) {
    if (typeof raw.ArtifactStore !== 'function') {
      throw new ArgumentError(`${what} needs a filesystem: use the Node (napi) entry, not the WebAssembly build`);
    }
  }

  function timestampText(value, what) {
    if (value === undefined) return new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
    if (value instanceof Date) {
      checkDate(value, what);
      return value.toISOString().replace('.000Z', 'Z');
    }
    return checkString(value, what);
  }

  /** Artifact bytes under `root`, keyed by SHA-256: `<root>/<hex[:2]>/<hex[2:]>`. */
  class LocalArtifactStore {
    #native;

    constructor(root) {
      needsFilesystem('LocalArtifactStore');
      this.root = checkString(root, 'root');
      this.#native = new raw.ArtifactStore(this.root);
      Object.freeze(this);
    }

    /** Signs the protocol's Artifact manifest of `content` with the producer's key and stores the bytes. */
    put(content, options = {}) {
      const {
        key, producer, agentCardVersion, capability, capabilityVersion, missionId, groupId, workItemId,
        mediaType, classification, schemaUri, sourceArtifactHashes = [], toolVersions = [], modelVersions = [],
        createdAt, uri, artifactId, extensions,
      } = options;
      if (!(key instanceof SigningKey)) throw new ArgumentError('key must be a SigningKey');
      const tools = Array.isArray(toolVersions)
        ? toolVersions
        : Object.entries(toolVersions ?? {}).map(([name, version]) => ({ name, version }));
      const metadata = {
        mediaType, schemaUri,
        producer: { agentId: producer, agentCardVersion, capabilities: [{ id: capability, version: capabilityVersion }] },
        missionId, groupId, workItemId, sourceArtifactHashes, toolVersions: tools, modelVersions, classification,
        createdAt: timestampText(createdAt, 'createdAt'), uri, artifactId, extensions,
      };
      const bytes = encoder.encode(JSON.stringify(metadata));
      const envelope = this.#native.put(inputBytes(content, 'content'), bytes, key.keyId, seeds.get(key));
      return new SignedDocument(open(envelope));
    }

    /** The bytes a manifest names, re-hashed and size-checked (`ArtifactError` otherwise). */
    get(manifest) {
      const bytes = documentBytes(typeof manifest === 'object' && !(manifest instanceof Uint8Array)
        && !(manifest instanceof ArrayBuffer) ? JSON.stringify(manifest) : manifest, 'manifest');
      const result = this.#native.get(bytes);
      if (typeof result === 'string') open(result);
      return new Uint8Array(result);
    }
  }

  /** Six-stage verification of an Artifact manifest (Artifact profile); a rejection is an `ArtifactError`. */
  function verifyArtifactManifest(manifest, registry) {
    needsFilesystem('verifyArtifactManifest');
    const bytes = documentBytes(manifest, 'manifest');
    return verifiedFrom(withRegistry(registry, (handle) => raw.verifyArtifactManifest(bytes, handle)), bytes, true);
  }

  /** `sha256:<hex>` of Artifact bytes. */
  function artifactContentHash(content) {
    needsFilesystem('artifactContentHash');
    return open(raw.artifactContentHash(inputBytes(content, 'content')));
  }

  const authority = authorityApi(raw, backendModule);
  return {
    ...authority,
    ...agentLocalApi(raw, authority.Scheduler),
    ...agentApi(raw, authority.Scheduler),
    ...offlineApi(raw, { SigningKey, seedOf: (key) => seeds.get(key), callFunction: (method, args) => open(raw.callFunction(method, jsonArgs(args))) }),
    ...contextApi(raw, { SigningKey, seedOf: (key) => seeds.get(key), inputBytes }),
    LocalArtifactStore,
    verifyArtifactManifest,
    artifactContentHash,
    ...authApi(raw, { inputBytes, publicKeyOf }),
    ...policyApi(raw, { inputBytes }),
    ...coreApi(raw, { withRegistry, SigningKey, seedOf: (key) => seeds.get(key), documentBytes }),
    ...controlApi({ SigningKey, signDocument, callFunction: (method, args) => open(raw.callFunction(method, jsonArgs(args))) }),
    backend,
    sourceCommit: raw.sourceCommit(),
    Registry,
    RegistryBuilder,
    SigningKey,
    InMemoryAdmissionLog,
    failureReasons,
    explainFailure,
    parseLimits,
    canonicalize,
    canonicalBytes,
    canonicalHash,
    checkStrictJson,
    validateSchema,
    schemaNames,
    detectKinds,
    signDocument,
    verifySignedDocument,
    verifySignedDocuments,
    signingPreview,
    admitFirst,
    replayHistorical,
    admitFirstAsync,
    replayHistoricalAsync,
    bundleFile,
    bundlePaths,
    verifyCryptographyBundle,
    verifyAdmissionBundle,
    runConformance,
    parseFrame,
    parseReceivedFrame,
    encodeFrame,
    errorFrame,
  };
}
