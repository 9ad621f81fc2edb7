// Every error this package throws: one class per error class the Rust core names
// (`ErrorClass::js_name`), the reference's ErrorCode families of the authoritative Core, and the
// one construction from the core's self-description (`toError`). There is no table of codes or
// messages here: each error the core reports carries its class, code, reason, stage, fields and
// `retryable` (docs/errors.md). Even the `retryable` of an error made here without one is the
// core's: its `retryable_wire_code` vocabulary (§19), adopted from the backend when one is bound
// (`adoptRetryableCodes`, called by `createApi`).

import { hidden } from './values.mjs';

// The §19 codes an unchanged retry can succeed on, as the core spells them (`WireCode::retryable`);
// empty until a backend is bound.
const retryableCodes = new Set();

/** Adopts the core's `retryable_wire_code` vocabulary (every backend gives the same list). */
export function adoptRetryableCodes(codes) {
  for (const code of codes) retryableCodes.add(code);
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
    this.retryable = retryable ?? retryableCodes.has(code);
  }
}


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
// `code` is the §19 wire code; `family` is the reference runtime's ErrorCode (one of 15, or
// `store_failure`), which the Rust core derives from the wire code and reason (one table, in
// Rust); the class is the family's (`InvalidCommand`, `NotFound`, …, `StoreError`), so
// `catch (e) { if (e instanceof RevisionConflict) … }` reads as in the Python package.

/** The reference runtime's error families and `store_failure` (`ErrorCode`, snake_case values). */
export const ErrorCode = Object.freeze({
  INVALID_COMMAND: 'invalid_command', NOT_FOUND: 'not_found', ALREADY_EXISTS: 'already_exists',
  AUTHORIZATION_DENIED: 'authorization_denied', ACTION_ID_COLLISION: 'action_id_collision',
  STALE_SESSION_EPOCH: 'stale_session_epoch', STALE_MEMBERSHIP_EPOCH: 'stale_membership_epoch',
  STALE_COORDINATOR_EPOCH: 'stale_coordinator_epoch', STALE_OWNERSHIP_EPOCH: 'stale_ownership_epoch',
  LEASE_EXPIRED: 'lease_expired', INVALID_TRANSITION: 'invalid_transition', REVISION_CONFLICT: 'revision_conflict',
  DEPENDENCY_ERROR: 'dependency_error', POLICY_VIOLATION: 'policy_violation', BUDGET_EXCEEDED: 'budget_exceeded',
  STORE_FAILURE: 'store_failure',
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
/**
 * The authoritative store failed (`store_failure`, INTERNAL_ERROR): nothing was applied, and it
 * is no conflict. `reason`: store_corrupt, corrupt_aggregate, backend_failure, store_closed,
 * store_not_initialized; `retryable` only where an unchanged retry can succeed (a failing
 * backend, never damaged data or a closed store); `stored` and `locator` name the damaged row
 * when the store names one (also in `fields`).
 */
export class StoreError extends MissionWeaveProtocolError {}

/** The class of each ErrorCode family. */
const FAMILY_CLASSES = {
  invalid_command: InvalidCommand, not_found: NotFound, already_exists: AlreadyExists,
  authorization_denied: AuthorizationDenied, action_id_collision: ActionIdCollision,
  stale_session_epoch: StaleSessionEpoch, stale_membership_epoch: StaleMembershipEpoch,
  stale_coordinator_epoch: StaleCoordinatorEpoch, stale_ownership_epoch: StaleOwnershipEpoch,
  lease_expired: LeaseExpired, invalid_transition: InvalidTransition, revision_conflict: RevisionConflict,
  dependency_error: DependencyError, policy_violation: PolicyViolation, budget_exceeded: BudgetExceeded,
  store_failure: StoreError,
};
const FAMILY_OF_CLASS = new Map(Object.entries(FAMILY_CLASSES).map(([family, Class]) => [Class, family]));

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
export function toError(raw, cause) {
  const Class = typeof raw.family === 'string'
    ? FAMILY_CLASSES[raw.family] ?? MissionWeaveProtocolError
    : ERROR_CLASSES[raw.class] ?? MwpError;
  return new Class(raw.message ?? raw.detail ?? 'internal error', {
    code: raw.code ?? 'INTERNAL_ERROR', stage: raw.stage ?? null, reason: raw.reason ?? null,
    detail: raw.detail, retryable: raw.retryable, fields: raw.fields ?? {}, cause, family: raw.family,
  });
}

export function open(envelope) {
  const parsed = JSON.parse(envelope);
  if ('error' in parsed) throw toError(parsed.error);
  return parsed.ok;
}


/** A backend failure that is not an answer (a panic in the core, a trap): INTERNAL_ERROR. */
export function internal(cause) {
  return new MwpError(`internal error in the ${cause?.name ?? 'backend'}: ${cause?.message ?? cause}`, { code: 'INTERNAL_ERROR', cause });
}
