// The authenticated, multiplexed WebSocket gateway (reference `gateway`, §17) as a host that
// attaches to an existing Node `http`/`https` server through the `ws` package (napi only): the
// WebSocket route `/ws`. Every frame decision is the Rust sans-IO gateway's
// (`missionweaveprotocol-gateway::server::Connection`, bindings/node/src/gateway.rs): HELLO,
// SUBSCRIBE, COMMAND, ACK, PING, every ERROR and close code, backpressure. This module only moves
// a received message's bytes (and the time) into the connection's machine, writes the frames it
// returns, closes with the code it names, wakes the other subscribers of a Group whose head a
// Command moved (the machine reads their Events from the Core), and runs the timers (`onTick`
// every second: handshake timeout, head polls, resumes; a liveness `PING` every 20 s). Each
// machine call runs on the libuv thread pool (it may wait on the store), never on the event loop.
// A drain is bounded (8 frames / 512 KiB): the host waits until the socket took them, then polls
// for more, so a slow reader holds a catch-up in the store, not in memory here.
//
// As the Python `GroupGateway` (docs/network.md): an error does not end the connection unless
// §17.1 makes it fatal, `retryable` follows §19, a Group the Agent may not see is answered like an
// absent one, the Session Epoch is opened through the Core, delivery Cursors live in the Core's
// store. With a `cursors` store (the reference's `GroupGateway(cursors=…)`) the machine also
// reports every ACK that moves a Cursor forward, written here into the store, and holds each
// SUBSCRIBE until the store's Cursors are read here and handed back (replay after
// `max(afterSequence, stored)`; the decisions are the machine's, server/host_cursors.rs). The `ws` server's message limit is the machine's `maxFrameBytes`: `ws` refuses a larger
// message from its header and closes with 1009 at once, so the machine's `ERROR` for it is built
// synchronously (`onTooBigNow`) and written first, as the Rust server does. `ws` skips its own
// UTF-8 check, so the machine answers invalid text (`ERROR`, then close 1007).
//
// Several processes on one PostgreSQL database (the Core's store a `PostgreSQLStore`): the
// native `HeadFanout` runs the Rust server's `LISTEN`/`NOTIFY mwp_group_head` threads — a head
// another process moved wakes this process's subscribers of the Group at once, and every head
// this process's Commands move is announced to the others — as the Rust server does.

import { ArgumentError, open } from './errors.mjs';
import { argumentJson, toMillis } from './convert.mjs';

// Socket messages read ahead of the machine, per connection (the reader pauses beyond).
const MAX_UNREAD = 8;

export function gatewayApi(ctx) {
  const { raw, host, coreNative, sessionAuthorityNative } = ctx;
  // `wakeList` leaves out one connection; none has this ID.
  const NO_CONNECTION = Number.MAX_SAFE_INTEGER;

  function needsNode(what) {
    if (typeof raw.GatewayHost !== 'function' || typeof host?.loadWs !== 'function') {
      throw new ArgumentError(`${what} needs Node's sockets: use the Node (napi) entry, not the WebAssembly build`);
    }
  }

  // A napi answer: the envelope string of a refusal, or a Promise of the drain.
  async function drained(answer) {
    if (typeof answer === 'string') open(answer);
    return answer;
  }

  /** One WebSocket, its machine and its input queue (one input at a time, in order). */
  class Link {
    constructor(gateway, socket, connection) {
      this.gateway = gateway;
      this.socket = socket;
      this.connection = connection;
      this.id = connection.id;
      this.inputs = [];
      this.unread = 0;
      this.running = false;
      this.closed = false;
      this.wantsInput = true;
      this.paused = false;
    }

    push(input) {
      if (this.closed) return;
      if (input.kind === 'tick' || input.kind === 'ping' || input.kind === 'poll') {
        // One of each waiting is enough (a slow socket must not pile timer inputs up).
        if (this.inputs.some((i) => i.kind === input.kind)) return;
      } else if (input.kind === 'moved') {
        // Coalesced per Group: the machine reads after its own cursor, the last head is enough.
        const queued = this.inputs.find((i) => i.kind === 'moved' && i.group === input.group);
        if (queued) {
          queued.sequence = input.sequence === null || queued.sequence === null ? null : Math.max(queued.sequence, input.sequence);
          return;
        }
      }
      this.inputs.push(input);
      if (input.kind === 'text' || input.kind === 'binary') {
        this.unread += 1;
        this.flow();
      }
      if (!this.running) this.run();
    }

    /** Reads the socket only while the machine wants input and few messages wait. */
    flow() {
      const stop = !this.wantsInput || this.unread >= MAX_UNREAD;
      if (stop && !this.paused) {
        this.paused = true;
        this.socket.pause();
      } else if (!stop && this.paused) {
        this.paused = false;
        this.socket.resume();
      }
    }

    async run() {
      this.running = true;
      try {
        while (this.inputs.length > 0 && !this.closed) {
          const input = this.inputs.shift();
          const now = this.gateway.now();
          const c = this.connection;
          let answer;
          switch (input.kind) {
            case 'text': this.unread -= 1; answer = c.onText(input.data, now); break;
            case 'binary': this.unread -= 1; answer = c.onBinary(now); break;
            case 'moved': answer = c.onGroupMoved(input.group, input.sequence ?? undefined, now); break;
            case 'tick': answer = c.onTick(now); break;
            case 'ping': answer = c.ping(now); break;
            case 'poll': answer = c.poll(now); break;
            case 'stored': answer = c.onStoredCursors(input.cursors ?? undefined, now); break;
            case 'storeFailed': answer = c.onCursorStoreFailed(input.group, input.frameId, now); break;
            default: this.finish(); return;
          }
          const drain = await drained(answer);
          this.wantsInput = drain.wantsInput;
          await this.deliver(drain);
          if (this.closed) break;
          await this.keepCursors(drain);
          // A bounded drain: the socket took these frames, now the rest (reads resume with it).
          if (drain.more) this.inputs.unshift({ kind: 'poll' });
          this.flow();
        }
      } catch (error) {
        this.gateway.emitError(error);
        this.socket.terminate();
        this.finish();
      } finally {
        this.running = false;
      }
    }

    async deliver(drain) {
      for (const { groupId, sequence } of drain.moved) {
        this.gateway.fanout?.notify(groupId, sequence);
        for (const other of this.gateway.native.wakeList(groupId, this.id)) {
          this.gateway.links.get(other)?.push({ kind: 'moved', group: groupId, sequence });
        }
      }
      for (const frame of drain.frames) {
        if (this.socket.readyState !== 1) break;
        // Frames are RFC 8785 text built by the machine: sent as text, byte for byte.
        await new Promise((resolve) => { this.socket.send(frame, { binary: false }, () => resolve()); });
      }
      if (drain.closeCode !== undefined && drain.closeCode !== null) {
        this.socket.close(drain.closeCode, drain.closeReason ?? '');
        this.finish();
      }
    }

    /** Writes the reported Cursors into the store and reads the ones a held SUBSCRIBE waits
     * for; the answers go first in the queue (before any later frame). A store that throws is
     * handed to the machine as failed (it answers on the wire). */
    async keepCursors(drain) {
      const store = this.gateway.cursors;
      if (store === undefined) return;
      const answers = [];
      for (const { agentId, groupId, sequence, frameId } of drain.acknowledged) {
        try {
          await store.acknowledge(agentId, groupId, sequence);
        } catch (error) {
          this.gateway.emitError(error);
          answers.push({ kind: 'storeFailed', group: groupId, frameId });
        }
      }
      if (drain.wanted) {
        const { agentId, groupIds } = drain.wanted;
        let cursors = [];
        try {
          for (const groupId of groupIds) cursors.push(await store.cursor(agentId, groupId));
        } catch (error) {
          this.gateway.emitError(error);
          cursors = null;
        }
        // Not a number: the machine counts it as a failed store.
        answers.push({ kind: 'stored', cursors: cursors?.map((c) => (typeof c === 'number' ? c : -1)) ?? null });
      }
      this.inputs.unshift(...answers);
    }

    /** Leaves the hub and the per-Agent count; the machine is dropped. */
    finish() {
      if (this.closed) return;
      this.closed = true;
      this.inputs.length = 0;
      clearInterval(this.ticker);
      clearInterval(this.pinger);
      this.gateway.links.delete(this.id);
      if (!this.running) this.connection.onClosed();
      else queueMicrotask(() => this.release());
    }

    release() {
      if (this.running) { setImmediate(() => this.release()); return; }
      this.connection.onClosed();
    }
  }

  /**
   * The WebSocket gateway (reference `GroupGateway(core, sessions, *, cursors=None, app=None,
   * clock=None)`): `new GroupGateway(core, sessions, {limits, clock, path, tickMs, pingMs, cursors})`, then
   * `attach(server)` on an `http.Server` or `https.Server` (TLS is the server's): WebSocket
   * upgrades of `path` (default `/ws`) are served, others are left to the server's other
   * `upgrade` listeners. `limits`: the limits a host may set (`maxFrameBytes`,
   * `handshakeTimeoutMs`, `maxHelloAttempts`, `maxConnectionsPerAgent`, `maxGroupsPerSubscribe`,
   * `maxSubscriptions`, `maxQueueFrames`, `groupShareFrames`, `pollIntervalMs`). `cursors`: a
   * CursorStore (`cursor(agentId, groupId)`, `acknowledge(agentId, groupId, sequence)`, plain or
   * async, e.g. a `SqliteAgentStore`) consulted as the reference does; absent: replay after
   * `afterSequence`.
   */
  class GroupGateway {
    #clock;
    #wss;
    #servers = [];
    #listeners = new EventTarget();

    constructor(core, sessions, { limits, clock, path = '/ws', tickMs = 1000, pingMs = 20_000, cursors } = {}) {
      needsNode('GroupGateway');
      if (cursors !== undefined && (typeof cursors?.cursor !== 'function' || typeof cursors?.acknowledge !== 'function')) {
        throw new ArgumentError('cursors must have cursor(agentId, groupId) and acknowledge(agentId, groupId, sequence)');
      }
      if (clock !== undefined && typeof clock !== 'function') throw new ArgumentError('clock must be a function returning a Date or milliseconds');
      if (typeof path !== 'string' || !path.startsWith('/')) throw new ArgumentError('path must start with /');
      for (const [name, value] of [['tickMs', tickMs], ['pingMs', pingMs]]) {
        if (!Number.isInteger(value) || value < 1) throw new ArgumentError(`${name} must be a positive integer`);
      }
      const native = new raw.GatewayHost(coreNative(core), sessionAuthorityNative(sessions),
        limits === undefined ? undefined : argumentJson(limits, 'limits'), cursors !== undefined);
      try {
        open(native.status());
      } catch (error) {
        native.free();
        throw error;
      }
      this.core = core;
      this.sessions = sessions;
      this.path = path;
      this.tickMs = tickMs;
      this.pingMs = pingMs;
      this.cursors = cursors;
      this.native = native;
      this.links = new Map();
      this.#clock = clock ?? Date.now;
      const { WebSocketServer } = host.loadWs();
      this.#wss = new WebSocketServer({
        noServer: true,
        maxPayload: native.maxFrameBytes(),
        skipUTF8Validation: true,
        perMessageDeflate: false,
      });
      this.#wss.on('connection', (socket) => this.#serve(socket));
      this.fanout = this.#startFanout(core);
    }

    /** Over a PostgreSQL store: the LISTEN/NOTIFY threads (else null). */
    #startFanout(core) {
      const store = ctx.coreStore?.(core);
      const native = store === undefined ? null : ctx.sqlStoreNative?.(store);
      if (!native || typeof raw.HeadFanout !== 'function') return null;
      const fanout = new raw.HeadFanout(native, (groupId, sequence) => this.wake(groupId, sequence));
      if (fanout.active()) return fanout;
      fanout.close();
      return null;
    }

    /** A head moved in another process: wakes this process's subscribers of the Group. */
    wake(groupId, sequence) {
      for (const id of this.native.wakeList(groupId, NO_CONNECTION)) {
        this.links.get(id)?.push({ kind: 'moved', group: groupId, sequence });
      }
    }

    /** The clock's now, in Unix milliseconds. */
    now() { return toMillis(this.#clock(), 'clock()'); }

    /** Open WebSocket connections (authenticated or not). */
    get connectionCount() { return this.native.connectionCount(); }

    /** Authenticated connections of `agentId`. */
    agentConnections(agentId) { return this.native.agentConnections(agentId); }

    /** Serves WebSocket upgrades of `path` on `server` (an `http.Server` or `https.Server`). */
    attach(server) {
      if (typeof server?.on !== 'function') throw new ArgumentError('server must be an http.Server or https.Server');
      const onUpgrade = (request, socket, head) => {
        if (!this.handleUpgrade(request, socket, head) && server.listenerCount('upgrade') === 1) {
          socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
        }
      };
      server.on('upgrade', onUpgrade);
      this.#servers.push([server, onUpgrade]);
      return this;
    }

    /** An `upgrade` for `path`: served (true); another path: left alone (false). */
    handleUpgrade(request, socket, head) {
      const { pathname } = new URL(request.url ?? '/', 'http://localhost');
      if (pathname !== this.path) return false;
      this.#wss.handleUpgrade(request, socket, head, (ws) => this.#wss.emit('connection', ws, request));
      return true;
    }

    /** Errors of the host (a failing machine call: a bug), as `error` events. */
    addEventListener(type, listener) { this.#listeners.addEventListener(type, listener); }

    removeEventListener(type, listener) { this.#listeners.removeEventListener(type, listener); }

    emitError(error) {
      // The DOM Event: the bundle's own `Event` (a protocol Event) shadows the global name.
      const event = new globalThis.Event('error');
      event.error = error;
      this.#listeners.dispatchEvent(event);
    }

    /** Detaches from the servers and closes every connection with 1001 (going away); the gateway cannot serve again. */
    async close() {
      this.fanout?.close();
      this.fanout = null;
      for (const [server, listener] of this.#servers) server.off('upgrade', listener);
      this.#servers = [];
      for (const link of [...this.links.values()]) {
        link.socket.close(1001, 'server shutting down');
        link.finish();
      }
      await new Promise((resolve) => { this.#wss.close(() => resolve()); });
      // The shared state (hub, twin authority, the Core seam) goes with the last connection.
      this.native.free();
    }

    #serve(socket) {
      const answer = this.native.connect(this.now());
      if (typeof answer === 'string') {
        socket.terminate();
        try { open(answer); } catch (error) { this.emitError(error); }
        return;
      }
      const link = new Link(this, socket, answer);
      this.links.set(link.id, link);
      socket.on('message', (data, isBinary) => {
        link.push(isBinary ? { kind: 'binary' } : { kind: 'text', data });
      });
      // `ws` reports a message over `maxPayload` on its receiver and then closes with 1009 in
      // the same turn: this listener runs first and writes the machine's fatal `ERROR`.
      const tooBig = (error) => {
        if (error?.code !== 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' || link.closed) return;
        const answer = link.connection.onTooBigNow(this.now());
        if (typeof answer === 'string') return;
        for (const frame of answer.frames) if (socket.readyState === 1) socket.send(frame, { binary: false });
        link.finish();
      };
      if (typeof socket._receiver?.prependListener === 'function') socket._receiver.prependListener('error', tooBig);
      socket.on('error', () => {});
      socket.on('close', () => link.finish());
      link.ticker = setInterval(() => link.push({ kind: 'tick' }), this.tickMs);
      link.pinger = setInterval(() => link.push({ kind: 'ping' }), this.pingMs);
      link.ticker.unref?.();
      link.pinger.unref?.();
    }
  }

  return { GroupGateway };
}
