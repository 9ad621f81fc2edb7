// The Agent runtime (reference `agent`, §6.3, §11.3, §12; napi only): one session at a time,
// Group-isolated execution contexts. Every rule (one active session, strictly increasing Session
// Epochs, install by revision, the Group of a prepared run read from the Scheduler's own record)
// and every refusal is the core's `agent` module; this converts arguments. The WebAssembly build
// throws ArgumentError.

import { ArgumentError, open } from './errors.mjs';
import { checkString, jsonArgs } from './convert.mjs';
import { DISPOSE, NATIVE_OF, NativeTable, adopt, disposable } from './native.mjs';
import { deepFreeze } from './values.mjs';

export function agentApi({ raw, Scheduler }) {
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

    // One operation of the owner's native sessions (`op(handle, argumentsJson)`).
    #call(op, args) { return open(op(native.get(this.#owner, 'AgentRuntime'), jsonArgs(args))); }

    /** Installs Group `groupId`'s context values at `revision` (an older or equal one is StaleContextError). */
    installGroupContext(groupId, values, { revision } = {}) {
      this.#call((h, a) => h.installContext(a), { session: sessionArg(this.descriptor), groupId, values, revision });
    }

    /** Installs Group `groupId`'s credentials at `revision` (§12: never offered to another Group's work). */
    installGroupCredentials(groupId, credentials, { revision } = {}) {
      this.#call((h, a) => h.installCredentials(a), { session: sessionArg(this.descriptor), groupId, values: credentials, revision });
    }

    /** The ExecutionContext of `dispatch`: only the Group the Scheduler admitted that WorkItem under. */
    prepare(dispatch) {
      const handle = native.get(this.#owner, 'AgentRuntime');
      const args = jsonArgs({ session: sessionArg(this.descriptor), dispatch: dispatchArg(dispatch) });
      return new ExecutionContext(open(handle.prepare(args, schedulerNative(this.#owner.scheduler))));
    }

    /** Closes the session (idempotent); its contexts and credentials are dropped. */
    close() { this.#call((h, a) => h.closeSession(a), { session: sessionArg(this.descriptor) }); }

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
      adopt(native, this, handle);
      this.agentId = agentId;
      this.#scheduler = scheduler;
      Object.freeze(this);
    }

    get scheduler() { return this.#scheduler; }

    /** The active session, or null. */
    get activeSession() {
      const state = open(native.get(this, 'AgentRuntime').state());
      return state.activeSession && new SessionDescriptor(state.activeSession);
    }

    /** Starts session `sessionEpoch` (above every earlier one; only when none is active); `sessionId` defaults to `<agentId>#session-<epoch>`. */
    startSession(sessionEpoch, { sessionId } = {}) {
      const started = open(native.get(this, 'AgentRuntime').startSession(jsonArgs({ sessionEpoch, sessionId: sessionId ?? null })));
      return new AgentRuntimeSession(this, new SessionDescriptor(started));
    }
  }
  disposable(native, [AgentRuntime]);

  return { AgentRuntime, AgentRuntimeSession, SessionDescriptor, ExecutionContext };
}
