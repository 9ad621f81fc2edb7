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
import { GROUP, OWNER, createPayload, organization } from './core-support.mjs';
import { firstCommands, firstFlow, secondFlow } from './durable-flow.mjs';

let apis;
let dir;
before(async () => {
  apis = await backends();
  dir = mkdtempSync(join(tmpdir(), 'mwp-sql-store-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

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
    const results = await firstFlow(api, org, store, commands);
    assert.ok(existsSync(path));
    await secondFlow(api, org, new api.SQLStore(`sqlite:///${path}`), commands, results);
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
