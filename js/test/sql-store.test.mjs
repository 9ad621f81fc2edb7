// SQLStore, SQLiteStore and PostgreSQLStore (issue 11, Node; the Python package's
// test_core_sql_store.py mirrored): a Core over a SQLite file works as over InMemoryStore; a new
// Core over a new store on the same file replays the same Events and continues; URL forms and
// refusals; the life cycle (initialize, close, errors outside it); initialize off the event loop.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { backends } from './support.mjs';
import { CONVERSATION, GROUP, MISSION, OWNER, SELECTION_BASIS, W1, contract, createPayload, organization, worker } from './core-support.mjs';

let apis;
let dir;
before(async () => {
  apis = await backends();
  dir = mkdtempSync(join(tmpdir(), 'mwp-sql-store-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

const eventIds = (tag) => `urn:missionweaveprotocol:event:${tag}-`;

/** create, membership, authorize, offer, accept: five Commands of GROUP (signed once, reusable). */
function firstCommands(org) {
  return [
    org.command('mission.create', OWNER, createPayload()),
    org.command('membership.change', OWNER, { member: { type: 'agent', id: worker(1) }, role: 'worker', scopes: ['work:execute'] }),
    org.byCoordinator('work.authorize', { workItemId: W1, conversationId: CONVERSATION, contract: contract() }),
    org.byCoordinator('work.offer', {
      workItemId: W1,
      candidates: [{ offerId: 'urn:missionweaveprotocol:offer:r1-0', agentId: worker(1), agentCardVersion: 1 }],
      selectionBasis: SELECTION_BASIS,
    }),
    org.command('work.accept_offer', worker(1), { workItemId: W1, capabilityPins: [{ id: 'text.summarise', version: '1.2.0' }] }),
  ];
}

/** Expects `call` to throw (or reject with) ArgumentError with `reason`; returns the error. */
async function argumentError(api, call, reason) {
  const error = await (async () => call())().then(() => assert.fail(`accepted; expected ${reason}`), (e) => e);
  assert.ok(error instanceof api.ArgumentError, `${error?.name}: ${error?.message}`);
  assert.equal(error.code, 'PROTOCOL_VIOLATION');
  assert.equal(error.reason, reason, error.message);
  return error;
}

/** Holds SQLite locks from another process (SQLite's POSIX locks do not separate two SQLite
 * libraries of one process); resolves once locked, `release()` rolls back and exits. */
function holdLock(path, ...statements) {
  const script = [
    'import sqlite3, sys',
    'c = sqlite3.connect(sys.argv[1], isolation_level=None)',
    'for s in sys.argv[2:]: c.execute(s)',
    'print("locked", flush=True)',
    'sys.stdin.readline()',
    'c.execute("ROLLBACK")',
  ].join('\n');
  const child = spawn(process.env.PYTHON ?? 'python3', ['-c', script, path, ...statements], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`lock holder exited with ${code}`))));
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.stdout.once('data', (data) => {
      assert.equal(String(data).trim(), 'locked');
      resolve({ release: () => { child.stdin.end('\n'); return exited; } });
    });
  });
}

describe('SQL stores: napi (ESM)', () => {
  const name = 'napi (ESM)';

  test('a flow on a SQLite file; a new Core over a new store replays the same Events and continues', async () => {
    const api = apis[name];
    const org = organization(api);
    const path = join(dir, 'flow.db');
    const commands = firstCommands(org);

    const store = new api.SQLiteStore(path);
    assert.equal(store.dialectName, 'sqlite');
    assert.equal(store.url, `sqlite:///${path}`);
    await store.initialize();
    const core = await org.ready({ store, eventIdPrefix: eventIds('first') });
    const results = [];
    for (const command of commands) results.push(await core.perform(command));
    assert.deepEqual(results.map((r) => r.event.sequence), [1, 2, 3, 4, 5]);
    assert.ok(results.every((r) => !r.duplicate && r.groupId === GROUP));
    // Commands of several Groups and of one Group at once: one contiguous log each.
    const others = Array.from({ length: 6 }, (_, i) => {
      const unsigned = org.unsigned('mission.create', OWNER, createPayload(`${MISSION}-${i}`));
      unsigned.groupId = `${GROUP}-${i}`;
      return api.signDocument('command', JSON.stringify(unsigned), { key: org.keys.get(OWNER).key });
    });
    await Promise.all(others.map((c) => core.perform(c)));
    await store.close();
    core.free();
    store.free();
    assert.ok(existsSync(path));

    const again = new api.SQLStore(`sqlite:///${path}`);
    await again.initialize();
    // The Agents' sessions are on disk: no session_open again.
    const next = org.core({ store: again, eventIdPrefix: eventIds('second') });
    const page = await next.replay(GROUP, { after: 0, limit: 100 });
    assert.deepEqual(page.events.map((e) => e.text), results.map((r) => r.event.text));
    for (let i = 0; i < 6; i++) assert.equal((await next.replay(`${GROUP}-${i}`)).lastSequence, 1);
    // The same signed Command answers its first result again (§15.1).
    const duplicate = await next.perform(commands[0]);
    assert.equal(duplicate.duplicate, true);
    assert.equal(duplicate.event.text, results[0].event.text);
    // The log continues where it stopped, and the state is the one the first Core left.
    const { ownershipEpoch, ownershipLeaseId } = results[4].event.payload;
    const started = await next.perform(org.command('work.start', worker(1), { workItemId: W1, ownershipEpoch, leaseId: ownershipLeaseId }));
    assert.equal(started.event.kind, 'work.started');
    assert.equal(started.event.sequence, 6);
    // The same Commands on an InMemoryStore lead to the same states.
    const memory = await org.ready({ eventIdPrefix: eventIds('memory') });
    for (const command of commands) await memory.perform(command);
    await memory.perform(org.command('work.start', worker(1), { workItemId: W1, ownershipEpoch, leaseId: ownershipLeaseId }));
    for (const [kind, entityId] of [['work_item', W1], ['mission', MISSION]]) {
      const durable = await next.query({ kind, entityId });
      const reference = await memory.query({ kind, entityId });
      assert.equal(durable.state, reference.state, kind);
      assert.equal(durable.revision, reference.revision, kind);
    }
    assert.deepEqual((await next.replay(GROUP)).events.map((e) => e.sequence), [1, 2, 3, 4, 5, 6]);
    await again.close();
    next.free();
    memory.free();
  });

  test('an in-memory SQLite store is private to its object', async () => {
    const api = apis[name];
    const org = organization(api);
    const store = new api.SQLiteStore();
    assert.equal(store.url, 'sqlite:///:memory:');
    await store.initialize();
    const core = await org.ready({ store });
    assert.equal((await core.perform(org.command('mission.create', OWNER, createPayload()))).event.sequence, 1);
    const other = new api.SQLStore('sqlite:///:memory:');
    await other.initialize();
    const otherCore = org.core({ store: other });
    await assert.rejects(otherCore.replay(GROUP), api.NotFound);
    for (const s of [store, other]) await s.close();
    core.free();
    otherCore.free();
  });

  test('URL forms, dialects and masking', () => {
    const api = apis[name];
    assert.equal(new api.SQLStore('sqlite:///relative.db').dialectName, 'sqlite');
    assert.equal(new api.SQLStore('sqlite:////abs/path.db').url, 'sqlite:////abs/path.db');
    assert.equal(new api.SQLStore('sqlite+aiosqlite:///./missionweaveprotocol.db').dialectName, 'sqlite');
    const pg = new api.SQLStore('postgresql+asyncpg://app:secret@db.internal:5432/mwp');
    assert.equal(pg.dialectName, 'postgresql');
    assert.equal(pg.url, 'postgresql+asyncpg://app:***@db.internal:5432/mwp');
    assert.equal(new api.SQLStore('postgres://db/mwp').dialectName, 'postgresql');
    assert.equal(new api.PostgreSQLStore('postgresql://app:pw@db/mwp').url, 'postgresql://app:***@db/mwp');
    assert.ok(new api.PostgreSQLStore('postgres://db/mwp') instanceof api.SQLStore);
    assert.ok(new api.SQLiteStore() instanceof api.SQLStore);
    assert.equal(new api.SQLiteStore(':memory:', { echo: true }).echo, true);
    assert.equal(new api.SQLiteStore().echo, false);
  });

  test('other URLs are ArgumentErrors that never repeat the URL', async () => {
    const api = apis[name];
    for (const [url, reason] of [
      ['', 'malformed-store-url'], ['relative.db', 'malformed-store-url'], ['sqlite://host/x.db', 'malformed-store-url'],
      ['mysql://u:secret@h/db', 'unsupported-store-dialect'], ['sqlite3:///x.db', 'unsupported-store-dialect'],
      ['sqlite+asyncpg:///x.db', 'unsupported-store-driver'], ['sqlite:///', 'missing-store-database'],
      ['sqlite:///x.db?mode=ro', 'unsupported-store-url-option'],
    ]) {
      const error = await argumentError(api, () => new api.SQLStore(url), reason);
      assert.ok(!error.message.includes('secret'));
      assert.equal(error.argument, 'url');
    }
    await argumentError(api, () => new api.PostgreSQLStore('sqlite:///x.db'), 'not-a-postgresql-url');
    await argumentError(api, () => new api.PostgreSQLStore('mysql://h/db'), 'unsupported-store-dialect');
    await argumentError(api, () => new api.SQLiteStore(''), 'missing-store-database');
    assert.throws(() => new api.SQLStore(42), api.ArgumentError);
    assert.throws(() => new api.SQLiteStore('x.db', { echo: 'yes' }), api.ArgumentError);
  });

  test('PostgreSQL is not linked into this build: initialize rejects, the store stays unopened', async () => {
    const api = apis[name];
    const store = new api.PostgreSQLStore('postgresql://localhost/mwp');
    const error = await store.initialize().then(() => assert.fail('opened'), (e) => e);
    assert.ok(error instanceof api.MwpError);
    assert.equal(error.code, 'INTERNAL_ERROR');
    assert.match(error.message, /PostgreSQL backend not linked/);
    await argumentError(api, () => organization(api).core({ store }), 'store-not-initialized');
  });

  test('use before initialize and after close; close is idempotent and final', async () => {
    const api = apis[name];
    const org = organization(api);
    const path = join(dir, 'life.db');
    const store = new api.SQLiteStore(path);
    await argumentError(api, () => org.core({ store }), 'store-not-initialized');
    assert.ok(!existsSync(path), 'nothing was opened');
    await store.initialize();
    await store.initialize(); // idempotent while open
    const core = await org.ready({ store });
    await core.perform(org.command('mission.create', OWNER, createPayload()));
    await store.close();
    await store.close(); // idempotent
    await argumentError(api, () => store.initialize(), 'store-closed');
    await argumentError(api, () => org.core({ store }), 'store-closed');
    // The Core built before close no longer reaches the database: a typed refusal.
    const refused = await core.perform(org.byCoordinator('mission.renew_coordinator', {})).then(() => assert.fail('applied'), (e) => e);
    assert.ok(refused instanceof api.MissionWeaveProtocolError, refused.message);
    assert.equal(refused.code, 'INTERNAL_ERROR');
    assert.equal(refused.reason, 'backend_failure');
    core.free();
    // Nothing lost: a new store on the file has the one Event.
    const again = new api.SQLiteStore(path);
    await again.initialize();
    const reader = org.core({ store: again });
    assert.equal((await reader.replay(GROUP)).lastSequence, 1);
    await again.close();
    reader.free();
    store.free();
    assert.throws(() => store.url, (e) => e instanceof api.ArgumentError && /freed/.test(e.message));
  });

  test('initialize runs off the event loop: timers fire while it waits for a lock', async () => {
    const api = apis[name];
    const path = join(dir, 'locked.db');
    const holder = await holdLock(path, 'BEGIN EXCLUSIVE', 'CREATE TABLE pending (x)');
    const store = new api.SQLiteStore(path);
    let done = false;
    const opening = store.initialize().then(() => { done = true; });
    let ticks = 0;
    for (let i = 0; i < 20; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      ticks += 1;
    }
    assert.equal(ticks, 20);
    assert.equal(done, false, 'initialize waits for the lock');
    await holder.release(); // rolls the table back: the file holds no foreign schema
    await opening;
    assert.equal(done, true);
    await store.close();
  });

  test('a Core takes only stores', () => {
    const api = apis[name];
    assert.throws(() => organization(api).core({ store: 'sqlite:///x.db' }),
      (e) => e instanceof api.ArgumentError && /InMemoryStore or an SQLStore/.test(e.message));
  });
});

for (const name of ['wasm (ESM)', 'wasm (CommonJS)']) {
  test(`SQL stores: ${name} refuses them (no database in the WebAssembly build)`, () => {
    const api = apis[name];
    for (const make of [() => new api.SQLiteStore(), () => new api.SQLStore('sqlite:///x.db'), () => new api.PostgreSQLStore('postgresql://h/db')]) {
      assert.throws(make, (e) => e instanceof api.ArgumentError && /Node \(napi\) entry/.test(e.message));
    }
  });
}
