// The JavaScript face of MissionWeaveProtocol, shared by both backends (the napi addon and the
// WebAssembly build): the one public entry of the package's API. A backend ("raw") has one
// function or method per core operation (core/ffi) answering envelope strings — {"ok":…} or
// {"error":…} — and the modules of ./api/ (named after the Python package's modules) turn them
// into typed objects and Error subclasses. `createApi(backend, name)` binds them to one backend.
//
// scripts/build.mjs bundles this entry and the modules it imports into dist/api.mjs and its
// CommonJS twin dist/api.cjs: keep every export of this file an `export { … } from './api/…'`
// list or the `createApi` function.

import { adoptRetryableCodes, open, toError } from './api/errors.mjs';
import { toBytes } from './api/convert.mjs';
import { guarded } from './api/native.mjs';
import { encoder } from './api/values.mjs';
import { typesApi } from './api/types.mjs';
import { cryptoApi } from './api/crypto.mjs';
import { registryApi } from './api/registry.mjs';
import { canonicalApi } from './api/canonical.mjs';
import { signedDocumentsApi } from './api/signed_documents.mjs';
import { admissionApi } from './api/admission.mjs';
import { bundleApi } from './api/bundle.mjs';
import { conformanceApi } from './api/conformance.mjs';
import { wireApi } from './api/wire.mjs';
import { artifactsApi } from './api/artifacts.mjs';
import { leaseApi } from './api/lease.mjs';
import { budgetApi } from './api/budget.mjs';
import { delegationApi } from './api/delegation.mjs';
import { executionApi } from './api/execution.mjs';
import { schedulerApi } from './api/scheduler.mjs';
import { storeApi } from './api/store.mjs';
import { coreApi } from './api/core.mjs';
import { localStoreApi } from './api/local_store.mjs';
import { replayApi } from './api/replay.mjs';
import { agentApi } from './api/agent.mjs';
import { offlineApi } from './api/offline.mjs';
import { contextApi } from './api/context.mjs';
import { controlApi } from './api/control.mjs';
import { authApi } from './api/auth.mjs';
import { policyApi } from './api/policy.mjs';
import { gatewayApi } from './api/gateway.mjs';
import { clientApi } from './api/client.mjs';

export { PROTOCOL_VERSION, DOCUMENT_KINDS, STAGES, WIRE_MESSAGE } from './api/types.mjs';
export {
  MwpError, ArgumentError, ParseError, CanonicalizationError, SchemaValidationError, TimestampError, VerificationError,
  AdmissionError, SigningError, RegistryError, FrameError, BundleError, LeaseError, BudgetLedgerError, BudgetExceededError,
  DelegationViolation, DelegationViolationError, RetryError, PolicyError, RetryExhausted, SchedulerError, SchedulerStateError,
  SnapshotError, ArtifactError, AuthenticationError, LocalStoreError, ReplayError, ContextPackageError, ReplayGroupError,
  ReplaySequenceError, ReplayProjectionError, AgentError, ActiveSessionError, StaleSessionEpochError, ClosedSessionError,
  StaleContextError, OfflinePolicyError, ErrorCode, MissionWeaveProtocolError, InvalidCommand, NotFound, AlreadyExists,
  AuthorizationDenied, ActionIdCollision, StaleSessionEpoch, StaleMembershipEpoch, StaleCoordinatorEpoch, StaleOwnershipEpoch,
  LeaseExpired, InvalidTransition, RevisionConflict, DependencyError, PolicyViolation, BudgetExceeded, StoreError,
} from './api/errors.mjs';
export { RESOURCE_DIMENSIONS, ResourceUsage, BudgetLedgerSnapshot } from './api/budget.mjs';
export { LeaseState } from './api/lease.mjs';
export { DelegationViolationKind, DelegationBudget, DelegationGrant } from './api/delegation.mjs';
export {
  WorkState, AdmissionReason, TransitionKind, AdmissionDecision, Dispatch, Preempt, ScheduleDisclosure, SchedulerSnapshot,
} from './api/scheduler.mjs';
export { QueryKind, Event, PerformResult, ReplayPage } from './api/core.mjs';
export { Attempt, RetrySchedule } from './api/execution.mjs';
export { VerifiedDocument, SignedDocument } from './api/signed_documents.mjs';
export { AdmittedDocument } from './api/admission.mjs';
export { Frame, ReceivedCommandFrame } from './api/wire.mjs';
export { ClientSessionError, CommandRefused, CommandTimedOut, ConnectionLost, DeliveredEvent } from './api/client.mjs';
export { IndexedDbCursorStore } from './api/cursor_store.mjs';

/**
 * Binds the API to one backend. `backendModule` is the napi addon or the wasm-bindgen module
 * (full or verify-only); `backend` is its name (`napi`, `wasm`); `host` what only the Node entry
 * has (`loadWs()`: the `ws` package, for `GroupGateway` and `AgentClient`). Each module's factory takes the
 * backend and what the earlier ones provide (`ctx`: the bytes conversions, keys, Registry
 * arguments, the Scheduler), and returns its part of the API.
 */
export function createApi(backendModule, backend, host = {}) {
  const raw = guarded(backendModule);

  // §19: which codes an unchanged retry can succeed on is the core's vocabulary, for every error
  // (every build of this package has it; a stand-in backend without it adds nothing).
  if (typeof raw.retryableWireCodes === 'function') adoptRetryableCodes(open(raw.retryableWireCodes()));

  // The core's own stage-5 error for an unpaired surrogate (CanonicalizationError,
  // `unpaired-surrogate`), asked of the core with the escaped code unit `"\ud800"`, whose
  // exact units it keeps and refuses at canonicalization (§6.4): one source for the error.
  const UNPAIRED_SURROGATE = encoder.encode('"\\ud800"');
  function unpairedSurrogate() {
    const envelope = JSON.parse(raw.canonicalize(UNPAIRED_SURROGATE, ''));
    return toError(envelope.error ?? { detail: 'the core accepted an unpaired surrogate' });
  }
  // A document to verify: the core's stage-5 VerificationError (`outside-i-json`, with the same
  // detail), as its verification of such a document reports it.
  const UNPAIRED_SURROGATE_DOCUMENT = encoder.encode('{"s":"\\ud800"}');
  function unpairedSurrogateDocument() {
    const envelope = JSON.parse(raw.signingPreview(UNPAIRED_SURROGATE_DOCUMENT));
    return toError(envelope.error ?? { detail: 'the core accepted an unpaired surrogate' });
  }

  const ctx = {
    raw,
    backendModule,
    // What only the Node entry has (`loadWs`: the `ws` package), for the gateway host and client.
    host,
    inputBytes: (input, what) => toBytes(input, what, unpairedSurrogate),
    documentBytes: (input, what) => toBytes(input, what, unpairedSurrogateDocument),
  };
  // In dependency order: each factory may read what the ones before it put on `ctx`.
  const keys = cryptoApi(ctx);
  const registry = registryApi(ctx);
  const canonical = canonicalApi(ctx);
  const signed = signedDocumentsApi(ctx);
  const scheduler = schedulerApi(ctx);
  ctx.Scheduler = scheduler.Scheduler;
  const stores = storeApi(ctx);
  const localStore = localStoreApi(ctx);
  const auth = authApi(ctx);
  const core = coreApi(ctx);

  return {
    ...leaseApi(ctx),
    ...budgetApi(ctx),
    ...delegationApi(ctx),
    ...executionApi(ctx),
    ...scheduler,
    ...typesApi(ctx),
    ...localStore,
    ...replayApi(ctx),
    ...agentApi(ctx),
    ...offlineApi(ctx),
    ...contextApi(ctx),
    ...artifactsApi(ctx),
    ...auth,
    ...gatewayApi(ctx),
    ...clientApi(ctx),
    ...policyApi(ctx),
    ...stores,
    ...core,
    ...controlApi(ctx),
    backend,
    sourceCommit: raw.sourceCommit(),
    ...registry,
    ...keys,
    ...admissionApi(ctx),
    ...signed,
    ...canonical,
    ...bundleApi(ctx),
    ...conformanceApi(ctx),
    ...wireApi(ctx),
  };
}
