// An Agent client over the Rust sans-IO client session (`missionweaveprotocol-gateway::client::
// Session`, bindings/node/src/client_session.rs; napi only): the camelCase twin of the Python
// `missionweaveprotocol.client.AgentClient`. `AgentClient` connects over `wss://` (Node's TLS
// through the `ws` package, TLS 1.3 only; `ca` trusts a custom CA such as a `--dev` server's
// certificate) or `ws://` (loopback tests), authenticates with a `SigningKey` (HELLO, §6.3),
// subscribes with the Cursors of a `SqliteAgentStore` (§16), sends signed Commands and resolves
// to their Event or rejects with a typed `CommandRefused` (its §19 wire code), hands verified
// Events in Group order through `events(groupId)` (an async iterator per Group), acknowledges
// (`acknowledge`: the store's Cursor first, then `ACK`), and reconnects with exponential backoff,
// resubscribing from the Cursors.
//
// Every protocol decision is the Rust session's: frame building, the HELLO signature over the
// challenge transcript, verification of every Event (six stages against the Organization
// Registry, signed by the Group Authority), deduplication by Event ID, ordering per Group (an
// Event is handed on only when it is the next of its Group: `inOrder`), refusing an `ACK` past
// the contiguous Cursor, and Command outcomes. This module moves bytes and time.
//
// A Command is signed with a Session Epoch; after a reconnect the epoch is new, so a Command
// awaiting its outcome when the connection dropped rejects with `ConnectionLost` and the caller
// re-signs it (§15.1: resending the same Action ID after it was applied returns the original Event).
//
// In a browser (the WebAssembly entry: no `ws` package) the socket is the page's `WebSocket`,
// the session the wasm `ClientSession` (the same Rust session, bindings/wasm/src/client.rs), and
// the durable Cursors an `IndexedDbCursorStore` (asynchronous: the client awaits the store).

import { ArgumentError, AuthenticationError, MwpError, open } from './errors.mjs';
import { checkString, toBytes, toMillis } from './convert.mjs';
import { deepFreeze, encoder } from './values.mjs';

// Events remembered to answer a Command whose Event arrived before its acceptance.
const RECENT_EVENTS = 1024;
// The largest frame the client reads: the gateway's 4 MiB document limit plus the frame envelope.
const CLIENT_MAX_PAYLOAD = (4 << 20) + 4096;

/** A call the Rust session refuses (`kind`: not_authenticated, ack_beyond_cursor, unknown_group, not_a_command, …). */
export class ClientSessionError extends MwpError {
  constructor(message, kind, options = {}) {
    super(message, { code: 'PROTOCOL_VIOLATION', reason: kind, ...options });
    this.kind = kind;
  }
}

/**
 * The gateway answered a Command with an `ERROR` (nothing was applied): `code` is the §19 wire
 * code, `retryable` whether an unchanged retry may succeed (§19), `error` the wire object.
 */
export class CommandRefused extends MwpError {
  constructor(error) {
    super(`${error.code}: ${error.message}`, { code: error.code, retryable: error.retryable === true, reason: 'command_refused' });
    this.error = deepFreeze({ ...error });
  }
}

/** No outcome within the command timeout (resending the same bytes is safe, §15.1). */
export class CommandTimedOut extends MwpError {
  constructor(actionId) {
    super(`no outcome for ${actionId} within the command timeout`, { code: 'INTERNAL_ERROR', reason: 'command_timed_out', retryable: true });
    this.actionId = actionId;
  }
}

/** The connection dropped while the Command awaited its outcome: re-sign and resend. */
export class ConnectionLost extends MwpError {
  constructor(message, cause) {
    super(message, { code: 'INTERNAL_ERROR', reason: 'connection_lost', retryable: true, cause: cause ?? undefined });
  }
}

/**
 * A verified Event: its Group, sequence, ID, the signed bytes as received (`text`, `bytes`), the
 * document, and whether it came in Group order (only those move a Cursor, §16).
 */
export class DeliveredEvent {
  #document;

  constructor(raw) {
    this.groupId = raw.groupId;
    this.sequence = raw.sequence;
    this.eventId = raw.eventId;
    this.text = raw.body;
    this.inOrder = raw.inOrder;
    Object.freeze(this);
  }

  /** The signed Event's exact bytes (a fresh copy). */
  get bytes() { return encoder.encode(this.text); }

  /** The verified Event document, parsed once and frozen. */
  get document() {
    this.#document ??= deepFreeze(JSON.parse(this.text));
    return this.#document;
  }

  get kind() { return this.document.kind; }
}

function deferred() {
  let resolve;
  let reject;
  const promise = new Promise((res, rej) => { resolve = res; reject = rej; });
  promise.catch(() => {});
  return { promise, resolve, reject, settled: false };
}

/** An unbounded async queue of one Group's Events (filled by the session, drained by the app). */
class EventQueue {
  #items = [];
  #waiters = [];

  put(item) {
    const waiter = this.#waiters.shift();
    if (waiter) waiter(item);
    else this.#items.push(item);
  }

  get() {
    if (this.#items.length > 0) return Promise.resolve(this.#items.shift());
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  get size() { return this.#items.length; }
}

/**
 * The page's `WebSocket` behind the subset of the `ws` API the client uses (`on`, `send` with a
 * callback, `close`, `terminate`, `readyState`). A browser cannot abort a socket: `terminate`
 * closes it with 4000 (an application close code) and the client treats it as a dropped link.
 * Text frames reach the session as their UTF-8 bytes (the browser has checked the UTF-8).
 */
class BrowserSocket {
  #socket;

  constructor(url) {
    this.#socket = new globalThis.WebSocket(url);
    this.#socket.binaryType = 'arraybuffer';
  }

  get readyState() { return this.#socket.readyState; }

  on(type, listener) {
    const socket = this.#socket;
    if (type === 'message') {
      socket.addEventListener('message', (event) => {
        if (typeof event.data === 'string') listener(encoder.encode(event.data), false);
        else listener(new Uint8Array(event.data), true);
      });
    } else if (type === 'error') {
      socket.addEventListener('error', () => listener(new ConnectionLost('the WebSocket failed')));
    } else {
      socket.addEventListener(type, (event) => listener(event.code));
    }
  }

  send(text, done) {
    this.#socket.send(text);
    done?.();
  }

  close(code) { this.#socket.close(code); }

  terminate() { this.#socket.close(4000); }
}

export function clientApi(ctx) {
  const { raw, host, withRegistry, SigningKey, seedOf, documentBytes } = ctx;
  // Node: the `ws` package (napi entry); elsewhere the runtime's own WebSocket.
  const loadWs = typeof host?.loadWs === 'function' ? host.loadWs
    : typeof globalThis.WebSocket === 'function' ? () => ({ WebSocket: BrowserSocket, browser: true }) : null;

  function needsNode(what) {
    if (typeof raw.ClientSession !== 'function' || loadWs === null) {
      throw new ArgumentError(`${what} needs a WebSocket: the Node entry (the ws package) or a runtime with WebSocket`);
    }
  }

  // A session envelope: its answer, or the session's refusal as a ClientSessionError.
  function answer(envelope) {
    const parsed = JSON.parse(envelope);
    if ('error' in parsed) {
      const error = parsed.error;
      if (error.class === 'ClientSessionError') throw new ClientSessionError(error.message, error.reason);
      return open(envelope);
    }
    return parsed.ok;
  }

  function commandBytes(command) {
    if (command?.kind === 'command' && typeof command.text === 'string') return documentBytes(command.text, 'command');
    return toBytes(command, 'command');
  }

  /**
   * `new AgentClient(url, {agentId, signingKey, registry, authorityId, store, ca, clock,
   * reconnect, initialBackoffMs, maxBackoffMs, commandTimeoutMs})`: `await connect()` (or
   * `await using`), `close()`. `registry`: the Organization Registry (a `Registry` or its bytes)
   * every Event is verified against; `authorityId`: the Group Authority service that signs every
   * Event; `store`: a `SqliteAgentStore` (or any `{cursor(agentId, groupId), acknowledge(agentId,
   * groupId, sequence)}`) holding the durable Cursors; `ca`: PEM text or bytes trusted for
   * `wss://` (instead of Node's default roots).
   */
  class AgentClient {
    #url;
    #ca;
    #key;
    #registry;
    #authorityId;
    #store;
    #clock;
    #reconnect;
    #initialBackoffMs;
    #maxBackoffMs;
    #timeoutMs;
    #groups = new Map();
    #session = null;
    #socket = null;
    #pending = new Map();
    #accepted = new Map();
    #recent = new Map();
    #authenticated = null;
    #runner = null;
    #closed = false;
    #finished = false;
    #sleep = null;

    constructor(url, { agentId, signingKey, registry, authorityId, store = null, ca, clock, reconnect = true,
      initialBackoffMs = 100, maxBackoffMs = 5000, commandTimeoutMs = 30_000 } = {}) {
      needsNode('AgentClient');
      checkString(url, 'url');
      if (url.startsWith('ws://')) {
        if (ca !== undefined) throw new ArgumentError('a ca needs a wss:// URL');
      } else if (!url.startsWith('wss://')) {
        throw new ArgumentError('url must be ws:// or wss://');
      }
      if (!(signingKey instanceof SigningKey)) throw new ArgumentError('signingKey must be a SigningKey');
      if (store !== null && (typeof store.cursor !== 'function' || typeof store.acknowledge !== 'function')) {
        throw new ArgumentError('store must be a SqliteAgentStore or an IndexedDbCursorStore (cursor and acknowledge)');
      }
      if (clock !== undefined && typeof clock !== 'function') throw new ArgumentError('clock must be a function returning a Date or milliseconds');
      for (const [name, value] of [['initialBackoffMs', initialBackoffMs], ['maxBackoffMs', maxBackoffMs], ['commandTimeoutMs', commandTimeoutMs]]) {
        if (!Number.isInteger(value) || value < 1) throw new ArgumentError(`${name} must be a positive integer`);
      }
      this.#url = url;
      if (ca !== undefined && typeof host?.loadWs !== 'function') throw new ArgumentError('a ca needs the Node entry (a browser trusts its own roots)');
      this.#ca = ca === undefined ? undefined : (typeof ca === 'string' ? ca : Buffer.from(toBytes(ca, 'ca')));
      this.agentId = checkString(agentId, 'agentId');
      this.#key = signingKey;
      this.#registry = registry;
      this.#authorityId = checkString(authorityId, 'authorityId');
      this.#store = store;
      this.#clock = clock ?? Date.now;
      this.#reconnect = reconnect === true;
      this.#initialBackoffMs = initialBackoffMs;
      this.#maxBackoffMs = maxBackoffMs;
      this.#timeoutMs = commandTimeoutMs;
      /** Connections opened so far. */
      this.connections = 0;
      /** `ERROR` frames not tied to a Command (a Group refused at subscription, `BACKPRESSURE`, …), wire objects. */
      this.errors = [];
      /** Events the session refused (`{eventId, reason}`: not verifying, not the Group Authority's, …), the latest 1024. */
      this.rejected = [];
      // Fails here, not on the first connection, when the registry or key is unusable.
      this.#newSession().free();
    }

    get url() { return this.#url; }

    #now() { return toMillis(this.#clock(), 'clock()'); }

    // ---- lifecycle ------------------------------------------------------------------------

    /** Connects and authenticates; the Session Epoch. A refused HELLO rejects with AuthenticationError (wire code) and does not reconnect. */
    async connect() {
      if (this.#runner === null) this.#runner = this.#run();
      return this.authenticated();
    }

    /** Waits for the current (or next) connection's `server_accept`: its Session Epoch. */
    async authenticated() {
      for (;;) {
        const current = this.#authenticated;
        if (current !== null) {
          try {
            return await current.promise;
          } catch (error) {
            if (!(error instanceof ConnectionLost) || this.#closed || this.#finished) throw error;
            if (this.#authenticated === current) await new Promise((resolve) => setTimeout(resolve, 10));
            continue;
          }
        }
        if (this.#closed || this.#finished) throw new ConnectionLost('the client is closed');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }

    /** The current session's epoch (null while not authenticated). */
    get sessionEpoch() { return this.#session?.sessionEpoch() ?? null; }

    /** Closes the connection and stops reconnecting. */
    async close() {
      this.#closed = true;
      this.#sleep?.();
      this.#socket?.close(1000);
      if (this.#runner !== null) await this.#runner;
      this.#failPending(new ConnectionLost('the client closed'));
    }

    /** Drops the current socket only (reconnects as after a network failure); resolves once the client is reconnecting. */
    async drop() {
      const current = this.#authenticated;
      this.#socket?.terminate();
      while (this.#authenticated === current && !this.#closed && !this.#finished) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }

    // ---- calls ----------------------------------------------------------------------------

    /**
     * Subscribes `groups` (IDs, or `{groupId: attention filter or null}`) from their durable
     * Cursors (the store's; 0 without a store); kept across reconnects.
     */
    async subscribe(groups) {
      const items = Array.isArray(groups) ? groups.map((g) => [g, null]) : Object.entries(groups ?? {});
      const entries = [];
      for (const [groupId, attention] of items) {
        checkString(groupId, 'groupId');
        const current = this.#groups.get(groupId);
        let after = await this.#durableCursor(groupId);
        if (current) after = Math.max(after, current.after);
        const filter = attention === null || attention === undefined ? null : { ...attention };
        this.#groups.set(groupId, { after, attention: filter, queue: current?.queue ?? new EventQueue() });
        entries.push({ groupId, afterSequence: after, attention: filter });
      }
      const session = this.#session;
      if (session !== null && session.isAuthenticated() && entries.length > 0) {
        answer(session.subscribe(JSON.stringify(entries), this.#now()));
        await this.#flush();
      }
    }

    /**
     * Sends the signed Command's exact bytes (a SignedDocument, bytes or text): its first Event,
     * or a rejection with `CommandRefused` (`CommandTimedOut`, `ConnectionLost`).
     */
    async send(command) {
      const bytes = commandBytes(command);
      await this.authenticated();
      const session = this.#session;
      if (session === null) throw new ConnectionLost('the connection dropped');
      const { frameId } = answer(session.sendCommand(bytes, this.#now()));
      const waiter = deferred();
      this.#pending.set(frameId, waiter);
      await this.#flush();
      return waiter.promise;
    }

    /**
     * Durable progress (§16): the store's Cursor first, then `ACK`. Only an in-order Event of a
     * subscribed Group (the session refuses an `ACK` past its Cursor).
     */
    async acknowledge(event) {
      if (!(event instanceof DeliveredEvent) || !event.inOrder || event.groupId === null) {
        throw new ClientSessionError('only an Event delivered in Group order is acknowledged', 'not_in_order');
      }
      await this.#store?.acknowledge(this.agentId, event.groupId, event.sequence);
      const session = this.#session;
      if (session !== null && session.isAuthenticated()) {
        answer(session.acknowledge(event.groupId, event.sequence, this.#now()));
        await this.#flush();
      }
    }

    /** The verified Events of a subscribed Group, in Group order, across reconnects. */
    async *events(groupId) {
      const subscription = this.#subscription(groupId);
      for (;;) yield await subscription.queue.get();
    }

    /** The next verified Event of `groupId` in Group order. */
    nextEvent(groupId) { return this.#subscription(groupId).queue.get(); }

    /** The Group's position as handed on (in order) by this client. */
    cursor(groupId) { return this.#groups.get(groupId)?.after ?? 0; }

    #subscription(groupId) {
      const subscription = this.#groups.get(groupId);
      if (!subscription) throw new ClientSessionError(`${groupId} is not subscribed`, 'unknown_group');
      return subscription;
    }

    // ---- the loop -------------------------------------------------------------------------

    // The store's Cursor (a SqliteAgentStore answers at once, an IndexedDbCursorStore a Promise).
    async #durableCursor(groupId) {
      return this.#store === null ? 0 : this.#store.cursor(this.agentId, groupId);
    }

    #newSession() {
      const session = withRegistry(this.#registry, (r) => new raw.ClientSession(this.agentId, r, this.#authorityId,
        this.#key.keyId, seedOf(this.#key), this.#timeoutMs));
      try {
        answer(session.status());
      } catch (error) {
        session.free();
        throw error;
      }
      return session;
    }

    async #run() {
      let backoff = this.#initialBackoffMs;
      try {
        while (!this.#closed) {
          const current = deferred();
          this.#authenticated = current;
          let cause = null;
          try {
            if (await this.#connection(current)) backoff = this.#initialBackoffMs;
          } catch (error) {
            if (error instanceof AuthenticationError) {
              current.settled = true;
              current.reject(error);
              return;
            }
            cause = error;
          } finally {
            this.#socket = null;
            this.#session?.free();
            this.#session = null;
            this.#failPending(new ConnectionLost('the connection dropped'));
            if (!current.settled) {
              current.settled = true;
              current.reject(new ConnectionLost(`the connection dropped${cause ? `: ${cause.message}` : ''}`, cause));
            }
          }
          if (!this.#reconnect || this.#closed) return;
          await new Promise((resolve) => {
            const timer = setTimeout(resolve, backoff);
            this.#sleep = () => { clearTimeout(timer); resolve(); };
          });
          this.#sleep = null;
          backoff = Math.min(backoff * 2, this.#maxBackoffMs);
        }
      } finally {
        this.#finished = true;
      }
    }

    // One connection: resolves when the socket closes (true when it was authenticated).
    async #connection(authenticated) {
      const { WebSocket } = loadWs();
      const session = this.#newSession();
      const options = { maxPayload: CLIENT_MAX_PAYLOAD, perMessageDeflate: false, handshakeTimeout: 30_000 };
      if (this.#url.startsWith('wss://')) {
        options.minVersion = 'TLSv1.3';
        if (this.#ca !== undefined) options.ca = this.#ca;
      }
      const socket = new WebSocket(this.#url, options);
      this.#socket = socket;
      this.#session = session;
      return new Promise((resolve, reject) => {
        let ticker = null;
        let failure = null;
        const fail = (error) => {
          failure ??= error;
          socket.terminate();
        };
        socket.on('open', () => {
          this.connections += 1;
          try {
            answer(session.start(this.#now()));
            const entries = [...this.#groups].map(([groupId, s]) => ({ groupId, afterSequence: s.after, attention: s.attention }));
            if (entries.length > 0) answer(session.subscribe(JSON.stringify(entries), this.#now()));
            this.#flush();
          } catch (error) {
            fail(error);
          }
          ticker = setInterval(() => {
            session.onTick(this.#now());
            try { this.#dispatch(session, authenticated); } catch (error) { fail(error); }
          }, 1000);
          ticker.unref?.();
        });
        socket.on('message', (data, isBinary) => {
          if (failure !== null || this.#session !== session) return;
          try {
            if (isBinary) throw new ClientSessionError('the server sent a binary message', 'protocol');
            answer(session.onText(data, this.#now()));
            this.#dispatch(session, authenticated);
            this.#flush();
          } catch (error) {
            fail(error);
          }
        });
        socket.on('error', (error) => { failure ??= error; });
        socket.on('close', () => {
          clearInterval(ticker);
          if (failure !== null) reject(failure);
          else resolve(session.isAuthenticated());
        });
      });
    }

    #flush() {
      const session = this.#session;
      const socket = this.#socket;
      if (session === null || socket === null || socket.readyState !== 1) return Promise.resolve();
      const sends = session.pollOutput().map((frame) => new Promise((resolve) => { socket.send(frame, () => resolve()); }));
      return Promise.all(sends).then(() => {});
    }

    #dispatch(session, authenticated) {
      for (const item of answer(session.pollEvents())) {
        switch (item.kind) {
          case 'authenticated':
            if (!authenticated.settled) {
              authenticated.settled = true;
              authenticated.resolve(item.sessionEpoch);
            }
            break;
          case 'handshake_failed':
            throw new AuthenticationError(String(item.error.message), { code: item.error.code, reason: 'handshake', retryable: item.error.retryable });
          case 'event': {
            const event = new DeliveredEvent(item);
            this.#remember(event);
            const waiter = this.#accepted.get(event.eventId);
            if (waiter) {
              this.#accepted.delete(event.eventId);
              waiter.resolve(event);
            }
            const subscription = event.groupId === null ? undefined : this.#groups.get(event.groupId);
            if (subscription && event.inOrder) {
              subscription.after = Math.max(subscription.after, event.sequence);
              subscription.queue.put(event);
            }
            break;
          }
          case 'command_accepted': {
            const waiter = this.#pending.get(item.frameId);
            if (waiter) {
              this.#pending.delete(item.frameId);
              const seen = this.#recent.get(item.eventId);
              if (seen) waiter.resolve(seen);
              else this.#accepted.set(item.eventId, waiter);
            }
            break;
          }
          case 'command_refused': {
            const waiter = this.#pending.get(item.frameId);
            if (waiter) {
              this.#pending.delete(item.frameId);
              waiter.reject(new CommandRefused(item.error));
            }
            break;
          }
          case 'command_timed_out': {
            const waiter = this.#pending.get(item.frameId);
            if (waiter) {
              this.#pending.delete(item.frameId);
              waiter.reject(new CommandTimedOut(item.actionId));
            }
            break;
          }
          case 'error':
            this.errors.push(deepFreeze({ ...item.error }));
            break;
          case 'rejected':
            this.rejected.push(deepFreeze({ eventId: item.eventId ?? null, reason: item.reason }));
            if (this.rejected.length > RECENT_EVENTS) this.rejected.shift();
            break;
          default:
            break;
        }
      }
    }

    #remember(event) {
      this.#recent.set(event.eventId, event);
      while (this.#recent.size > RECENT_EVENTS) this.#recent.delete(this.#recent.keys().next().value);
    }

    #failPending(error) {
      for (const map of [this.#pending, this.#accepted]) {
        for (const waiter of map.values()) waiter.reject(error);
        map.clear();
      }
    }
  }

  return { AgentClient };
}
