// First Admission and historical replay (reference `admission`, §6.4): the six stages, then the
// Admission Log, with the core's in-memory log or the caller's (synchronous, or awaited step by
// step through the core's `AdmissionFlow`, bounded by an AbortSignal or a timeout). Every rule
// and every refusal (`AdmissionError`) is the core's; a log call that throws or answers the wrong
// shape fails closed.

import { ArgumentError, MwpError, toError } from './errors.mjs';
import { checkString, principalOf, toBytes } from './convert.mjs';
import { NativeTable, disposable } from './native.mjs';
import { checkKind } from './types.mjs';
import { encoder, hidden } from './values.mjs';

/** A verified document anchored by a validated First-Admission Record. */
export class AdmittedDocument {
  constructor(raw) {
    this.record = Object.freeze(raw.record);
    this.recordBytes = encoder.encode(raw.recordBytes);
    this.existing = raw.existing;
    Object.freeze(this);
  }
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


export function admissionApi(ctx) {
  const { raw, documentBytes, withRegistry } = ctx;
  const rawLogs = new NativeTable(raw);

  /** The core's in-memory Admission Log; writes are attributed to `service`. */
  class InMemoryAdmissionLog {
    constructor(service) {
      const principal = principalOf(service, 'service');
      rawLogs.set(this, new raw.InMemoryAdmissionLog(principal.type, principal.id));
      hidden(this, { service: Object.freeze({ type: principal.type, id: principal.id }) });
    }

    get size() { return rawLogs.get(this, 'InMemoryAdmissionLog').size(); }
  }
  disposable(rawLogs, [InMemoryAdmissionLog]);

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

  return { InMemoryAdmissionLog, admitFirst, replayHistorical, admitFirstAsync, replayHistoricalAsync };
}
