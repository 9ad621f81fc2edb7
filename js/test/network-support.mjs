// Shared set-up of the network tests (gateway host, client, Rust server): one Organization (the
// MissionOwner, a Coordinator and a Worker Agent, the Group Authority, the registrar that signs
// Agent Cards), two Groups seeded in a Core (the Coordinator a member of both, the Worker of
// both), Commands signed now through the public API, the Node gateway on a loopback `http` server,
// and the Rust server binary started as a real process (`--dev`: a throwaway TLS certificate the
// client trusts with `ca`). Timeouts are generous (a loaded 2-core machine); nothing asserts on
// timing.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

import { TARGET } from './support.mjs';

export const ORG = 'urn:missionweaveprotocol:organization:acme';
export const OWNER = 'urn:missionweaveprotocol:human:alice';
export const COORDINATOR = 'urn:missionweaveprotocol:agent:planner';
export const WORKER = 'urn:missionweaveprotocol:agent:reviewer';
export const OUTSIDER = 'urn:missionweaveprotocol:agent:stranger';
export const AUTHORITY = 'urn:missionweaveprotocol:service:group-authority';
export const REGISTRAR = 'urn:missionweaveprotocol:service:registrar';
export const GROUP = 'urn:missionweaveprotocol:group:finance';
export const OTHER_GROUP = 'urn:missionweaveprotocol:group:payroll';
export const ABSENT_GROUP = 'urn:missionweaveprotocol:group:nowhere';
/** Each Group's Mission and main Conversation. */
export const MAINS = {
  [GROUP]: ['urn:missionweaveprotocol:mission:close-books', 'urn:missionweaveprotocol:conversation:finance-main'],
  [OTHER_GROUP]: ['urn:missionweaveprotocol:mission:run-payroll', 'urn:missionweaveprotocol:conversation:payroll-main'],
};
const HASH_A = `sha256:${'a'.repeat(64)}`;
const HASH_B = `sha256:${'b'.repeat(64)}`;
/** Generous: the machine may be loaded. */
export const WAIT_MS = 60_000;

let nextAction = 1;
let nextMessage = 1;

/**
 * The Organization for the napi `api`: keys, Registry, signed Commands, Agent Cards.
 * `publicKeys`: `{principalId: public key bytes}` for keys held elsewhere (a browser page's
 * WebCrypto-generated key): registered and carded, never used to sign here.
 */
export function organization(api, { publicKeys = {}, extraAgents = [] } = {}) {
  const principals = [
    ['human', OWNER, 21], ['agent', COORDINATOR, 23], ['agent', WORKER, 24], ['agent', OUTSIDER, 26],
    ['service', AUTHORITY, 30], ['service', REGISTRAR, 40],
    // More Agents for a test that needs them: [id, key seed byte].
    ...extraAgents.map(([id, n]) => ['agent', id, n]),
  ];
  const keys = new Map();
  const builder = new api.RegistryBuilder(ORG);
  for (const [type, id, n] of principals) {
    const keyId = `urn:missionweaveprotocol:key:${n}`;
    const held = publicKeys[id];
    const key = held === undefined ? api.SigningKey.fromSeed(keyId, new Uint8Array(32).fill(n))
      : { keyId, publicKey: Uint8Array.from(held), publicKeyBase64url: Buffer.from(held).toString('base64url') };
    builder.addKey(key.keyId, { type, id }, key.publicKey, '2020-01-01T00:00:00Z');
    keys.set(id, { principal: { type, id }, key });
  }
  const registryBytes = builder.build();
  builder.free();
  const registry = new api.Registry(registryBytes);
  const key = (id) => keys.get(id).key;
  const authority = { type: 'service', id: AUTHORITY };

  /** A signed Command by `actor` issued now (Agents: `sessionEpoch`, Membership Epoch 1). */
  function command(group, kind, actor, sessionEpoch, payload, { actionId } = {}) {
    const { principal } = keys.get(actor);
    const epochs = principal.type === 'agent' ? { sessionEpoch, membershipEpoch: 1 }
      : kind === 'mission.create' ? {} : { membershipEpoch: 1 };
    const document = {
      protocolVersion: '0.1',
      actionId: actionId ?? `urn:missionweaveprotocol:action:js-${process.pid}-${Date.now()}-${nextAction++}`,
      actor: principal,
      ...epochs,
      groupId: group,
      kind,
      correlationId: 'urn:missionweaveprotocol:correlation:1',
      issuedAt: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      payload,
    };
    return api.signDocument('command', JSON.stringify(document), { key: key(actor) });
  }

  /** `message.post` in the Group's main Conversation. */
  function post(group, actor, sessionEpoch, text = 'hello') {
    return command(group, 'message.post', actor, sessionEpoch, {
      messageId: `urn:missionweaveprotocol:message:js-${process.pid}-${nextMessage++}`,
      conversationId: MAINS[group]?.[1] ?? 'urn:missionweaveprotocol:conversation:nowhere',
      content: [{ type: 'text', text }],
    });
  }

  function createPayload(group) {
    const [mission, main] = MAINS[group];
    return {
      missionId: mission,
      objective: 'Close the books',
      definitionOfDone: [{ criterionId: 'ledger-balanced', description: 'The ledger balances', evidenceRequired: ['deterministic_test', 'human_review'] }],
      budget: { modelTokenLimit: 100000, toolCallLimit: 1000, currency: 'EUR', financialLimit: 50 },
      deadline: '2099-08-01T00:00:00Z',
      approvalPolicy: { finalHumanApproval: true, highRiskExecutionApproval: true },
      coordinator: { agentId: COORDINATOR, agentCardVersion: 1, leaseId: `urn:missionweaveprotocol:lease:${mission}` },
      mainConversationId: main,
    };
  }

  /** Seeds both Groups into `core`: each Mission created by the owner, the Worker a member. */
  async function seed(core) {
    for (const group of [GROUP, OTHER_GROUP]) {
      await core.perform(command(group, 'mission.create', OWNER, 0, createPayload(group)));
      await core.perform(command(group, 'membership.change', OWNER, 0, {
        member: { type: 'agent', id: WORKER }, role: 'worker', scopes: ['work:execute'], visibilityStartSequence: 0,
      }));
    }
  }

  /** A Core of this Organization over `store` (the Group Authority signs its Events). */
  function core(store) {
    return new api.Core({ registry, authority, authorityKey: key(AUTHORITY), ...(store ? { store } : {}) });
  }

  /** `agent`'s Agent Card, signed by the registrar (the server's `--registry`). */
  function card(agent) {
    const k = key(agent);
    const unsigned = {
      agentId: agent, organizationId: ORG, cardVersion: 1, displayName: 'agent 1',
      owner: { type: 'human', id: OWNER }, status: 'active', protocolVersions: ['0.1'],
      endpoints: [{ transport: 'wss', uri: 'wss://agents.acme.example/a' }],
      publicKeys: [{ keyId: k.keyId, algorithm: 'Ed25519', publicKey: k.publicKeyBase64url, validFrom: '2020-01-01T00:00:00Z' }],
      capabilities: [{ id: 'text.summarise', version: '1.2.0', inputSchema: 'https://schemas.acme.example/in.json',
        inputSchemaHash: HASH_A, outputSchema: 'https://schemas.acme.example/out.json', outputSchemaHash: HASH_B,
        constraints: {}, verifiedEvidence: ['urn:missionweaveprotocol:evidence:summarise-2026'] }],
      maxConcurrency: 2, issuedAt: '2026-01-01T00:00:00Z',
    };
    return JSON.parse(api.signDocument('agent-card', JSON.stringify(unsigned), { key: key(REGISTRAR) }).text);
  }

  /** An AgentClient of `agent` for `url`. */
  function client(url, agent, options = {}) {
    return new api.AgentClient(url, { agentId: agent, signingKey: key(agent), registry, authorityId: AUTHORITY, ...options });
  }

  return { api, keys, key, registry, registryBytes, authority, command, post, seed, core, card, client };
}

/** A Core with both Groups, a GroupGateway over it on a loopback `http` server: `{url, gateway, core, close}`. */
export async function nodeGateway(org, { limits, store, cursors, seed = true, pollIntervalMs } = {}) {
  const { api } = org;
  const core = org.core(store);
  if (seed) await org.seed(core);
  if (pollIntervalMs !== undefined) limits = { ...limits, pollIntervalMs };
  const sessions = new api.SessionAuthority(new api.AgentKeyRegistry(), { secret: new Uint8Array(32).fill(7) });
  const gateway = new api.GroupGateway(core, sessions, { limits, cursors });
  const server = createServer((_, response) => { response.writeHead(404).end(); });
  gateway.attach(server);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `ws://127.0.0.1:${server.address().port}/ws`;
  return {
    url, gateway, core, server,
    async close() {
      await gateway.close();
      server.closeAllConnections?.();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The server binary built by scripts/test-js.sh (`MWP_SERVER_BIN` overrides). */
export function serverBinary() {
  const candidates = [process.env.MWP_SERVER_BIN, join(TARGET, 'release', 'missionweaveprotocol-server')].filter(Boolean);
  const found = candidates.find((path) => existsSync(path));
  if (!found) {
    throw new Error(`the server binary is missing (${candidates.join(', ')}): ` +
      'cargo build --release -p missionweaveprotocol-server --bin missionweaveprotocol-server (scripts/test-js.sh builds it)');
  }
  return found;
}

/**
 * The Rust server as a real process over a SQLite file seeded by a JavaScript Core (the way an
 * Organization's tools would, before the server opens it), in `--dev` mode (a throwaway TLS 1.3
 * certificate for 127.0.0.1, trusted by the client through `ca`): `{url, ca, stop, stderr}`.
 * `insecure`: plain `ws://` on loopback (`--allow-insecure`) instead, for the browser test
 * (`ca` is then null). `seed(core)`: what to write before the server opens the file (default:
 * `org.seed`).
 */
export async function rustServer(org, { extra = [], insecure = false, seed, members = [] } = {}) {
  const { api } = org;
  const dir = mkdtempSync(join(tmpdir(), 'mwp-js-server-'));
  const db = join(dir, 'authority.db');
  const store = new api.SQLiteStore(db);
  await store.initialize();
  const core = org.core(store);
  await (seed ?? org.seed)(core);
  // `members`: more Agents made Workers of both Groups (with Agent Cards), like the Worker.
  for (const member of members) {
    for (const group of [GROUP, OTHER_GROUP]) {
      await core.perform(org.command(group, 'membership.change', OWNER, 0, {
        member: { type: 'agent', id: member }, role: 'worker', scopes: ['work:execute'], visibilityStartSequence: 0,
      }));
    }
  }
  core.free();
  await store.close();
  store.free();
  writeFileSync(join(dir, 'registry.json'), org.registryBytes);
  writeFileSync(join(dir, 'cards.json'), JSON.stringify([COORDINATOR, WORKER, ...members].map((agent) => org.card(agent))));
  const certificate = join(dir, 'dev-cert.pem');
  const args = [
    '--registry', join(dir, 'cards.json'),
    '--agent-registry-snapshot', join(dir, 'registry.json'),
    '--database-url', `sqlite:///${db}`,
    '--authority-key-id', org.key(AUTHORITY).keyId,
    '--authority-private-key', org.key(AUTHORITY).toSeedBase64url(),
    '--organization-public-key', org.key(REGISTRAR).publicKeyBase64url,
    '--host', '127.0.0.1', '--port', '0',
    ...(insecure ? ['--allow-insecure'] : ['--dev', '--dev-cert', certificate]),
    ...extra,
  ];
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('MISSIONWEAVEPROTOCOL_') && name !== 'RUST_LOG'));
  const child = spawn(serverBinary(), args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  let stderr = '';
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not listen in time:\n${stderr}`)), 180_000);
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      const at = line.indexOf('listening on ');
      if (at >= 0) {
        clearTimeout(timer);
        resolve(line.slice(at + 'listening on '.length).trim());
      }
    });
    exited.then(({ code, signal }) => { clearTimeout(timer); reject(new Error(`the server exited (${code ?? signal}):\n${stderr}`)); });
  });
  const base = url.replace(/\/+$/, '');
  return {
    url: base.endsWith('/ws') ? base : `${base}/ws`,
    /** The Organization Registry the server was given (for participants in other processes). */
    registryPath: join(dir, 'registry.json'),
    ca: insecure ? null : readFileSync(certificate, 'utf8'),
    get stderr() { return stderr; },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Resolves `promise`, or rejects after `ms` with `what` (a hang would otherwise stall the suite). */
export function within(promise, what, ms = WAIT_MS) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms); }),
  ]);
}
