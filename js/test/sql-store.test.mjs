// SQLStore, SQLiteStore and PostgreSQLStore (issue 11, Node; the Python package's
// test_core_sql_store.py mirrored): a Core over a SQLite file works as over InMemoryStore; a new
// Core over a new store on the same file replays the same Events and continues; URL forms and
// refusals; the life cycle (initialize, close, errors outside it); initialize off the event loop;
// the store's own failures (a closed store, rows or pages damaged behind its back, a file that
// cannot grow) are StoreError, never RevisionConflict, and a genuine revision conflict stays one
// (issue 22, item 8).
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { backends } from './support.mjs';
import { COORDINATOR, GROUP, MISSION, OWNER, createPayload, organization } from './core-support.mjs';
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

const PYTHON = process.env.PYTHON ?? 'python3';

/** Runs `statement` with `params` on the SQLite file at `path` behind the store's back (Python's
 * sqlite3, as `holdLock`); returns the number of rows changed. */
function tamper(path, statement, ...params) {
  const script = 'import sqlite3, sys\nwith sqlite3.connect(sys.argv[1]) as c: print(c.execute(sys.argv[2], sys.argv[3:]).rowcount)';
  return Number(execFileSync(PYTHON, ['-c', script, path, statement, ...params], { encoding: 'utf8' }).trim());
}

/** A SQLite file with a Mission (sequence 1, the Agents' sessions opened) closed again. */
async function written(api, org, path) {
  const store = new api.SQLiteStore(path);
  await store.initialize();
  const core = await org.ready({ store });
  await core.perform(org.command('mission.create', OWNER, createPayload()));
  await store.close();
  core.free();
}

/** Expects `promise` to reject with a StoreError of `reason`; returns it. */
async function storeError(api, promise, reason) {
  const error = await promise.then(() => assert.fail(`applied; expected ${reason}`), (e) => e);
  assert.ok(error instanceof api.StoreError, `${error?.name}: ${error?.message}`);
  assert.ok(error instanceof api.MissionWeaveProtocolError);
  assert.ok(!(error instanceof api.RevisionConflict), 'a store failure is no conflict to retry on');
  assert.equal(error.family, 'store_failure');
  assert.equal(error.code, 'INTERNAL_ERROR');
  assert.equal(error.reason, reason, error.message);
  return error;
}

const cancel = (org, expectedRevision) =>
  org.command('mission.cancel', OWNER, { reason: 'no' }, { extra: { expectedRevision } });

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
    // The Core built before close no longer reaches the database: a store failure (not a
    // conflict to retry on), and not retryable: the same call fails the same way.
    const refused = await core.perform(org.byCoordinator('mission.renew_coordinator', {})).then(() => assert.fail('applied'), (e) => e);
    assert.ok(refused instanceof api.StoreError, refused.message);
    assert.ok(refused instanceof api.MissionWeaveProtocolError && refused instanceof Error);
    assert.ok(!(refused instanceof api.RevisionConflict));
    assert.equal(refused.name, 'StoreError');
    assert.equal(refused.family, 'store_failure');
    assert.equal(refused.code, 'INTERNAL_ERROR');
    assert.equal(refused.reason, 'store_closed');
    assert.equal(refused.retryable, false);
    assert.deepEqual({ ...refused.fields }, {});
    assert.deepEqual(refused.asDict().code, 'store_failure');
    const replayed = await core.replay(GROUP).then(() => assert.fail('served'), (e) => e);
    assert.ok(replayed instanceof api.StoreError && replayed.reason === 'store_closed', replayed.message);
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

  test('an Event or aggregate row changed behind the store\'s back is a StoreError naming it', async () => {
    const api = apis[name];
    const org = organization(api);
    const path = join(dir, 'tampered.db');
    await written(api, org, path);
    const first = new api.SQLiteStore(path);
    await first.initialize();
    const writer = org.core({ store: first });
    await writer.perform(cancel(org, 1)); // sequence 2
    await first.close();
    writer.free();
    assert.equal(tamper(path, 'UPDATE events SET body = CAST(? AS BLOB) WHERE group_id = ? AND sequence = 2', '{"forged":true}', GROUP), 1);
    assert.equal(tamper(path, "UPDATE aggregates SET value = CAST(replace(CAST(value AS TEXT), ?, ?) AS BLOB) WHERE kind = 'mission' AND id = ?",
      '"financialLimit":50,', '"financialLimit":5000,', MISSION), 1);
    const store = new api.SQLiteStore(path);
    await store.initialize();
    const core = org.core({ store });
    try {
      const replayed = await storeError(api, core.replay(GROUP), 'store_corrupt');
      assert.equal(replayed.retryable, false, 'damaged data stays damaged');
      assert.deepEqual({ ...replayed.fields }, { stored: 'event', locator: `${GROUP} #2` });
      assert.equal(replayed.locator, `${GROUP} #2`);
      assert.equal((await core.replay(GROUP, { limit: 1 })).events.length, 1, 'the intact Event is served');
      // The next Command on the Mission reads the edited aggregate: refused, every time.
      for (let i = 0; i < 2; i++) {
        const performed = await storeError(api, core.perform(org.byCoordinator('mission.renew_coordinator', {})), 'store_corrupt');
        assert.equal(performed.retryable, false);
        assert.equal(performed.stored, 'aggregate');
        assert.equal(performed.locator, `mission ${MISSION}`);
        assert.deepEqual(performed.asDict().code, 'store_failure');
      }
    } finally {
      await store.close();
      core.free();
    }
  });

  test('a damaged database page is a StoreError of the file (SQLite\'s own verdict)', async () => {
    const api = apis[name];
    const org = organization(api);
    const path = join(dir, 'page.db');
    await written(api, org, path);
    const script = [
      'import sqlite3, sys',
      'c = sqlite3.connect(sys.argv[1])',
      'page = c.execute("PRAGMA page_size").fetchone()[0]',
      'root = c.execute("SELECT rootpage FROM sqlite_master WHERE name = \'events\'").fetchone()[0]',
      'c.close()',
      'f = open(sys.argv[1], "r+b"); f.seek((root - 1) * page); f.write(b"\\xff" * 16); f.close()',
    ].join('\n');
    execFileSync(PYTHON, ['-c', script, path]);
    const store = new api.SQLiteStore(path);
    await store.initialize();
    const core = org.core({ store });
    try {
      const error = await storeError(api, core.replay(GROUP), 'store_corrupt');
      assert.equal(error.retryable, false);
      assert.deepEqual({ ...error.fields }, { stored: 'database', locator: 'file' });
      assert.match(error.message, /malformed/);
    } finally {
      await store.close();
      core.free();
    }
  });

  test('a database that cannot grow (disk full) is a retryable StoreError; the retry applies once', async () => {
    // The kernel's file-size limit (RLIMIT_FSIZE, no root needed) on a child process, just above
    // the database's files: SQLite's write of a 1 MB Event fails (EFBIG; SQLite reports a disk
    // I/O error, as it reports SQLITE_FULL for ENOSPC: both are the store's backend_failure).
    const api = apis[name];
    const org = organization(api);
    const path = join(dir, 'full.db');
    await written(api, org, path);
    const text = { type: 'text', text: 'x'.repeat(100_000) };
    const command = org.command('message.post', COORDINATOR, {
      messageId: 'urn:missionweaveprotocol:message:full-1',
      conversationId: 'urn:missionweaveprotocol:conversation:finance-main',
      content: Array.from({ length: 10 }, () => text),
    });
    const commandFile = join(dir, 'full-command.json');
    writeFileSync(commandFile, command.text);
    const sizes = [path, `${path}-wal`].filter((p) => existsSync(p)).map((p) => statSync(p).size);
    const limit = Math.max(...sizes) + 64 * 1024;
    assert.ok(limit < command.text.length / 2, 'the Event cannot fit under the limit');
    const limited = 'import os, resource, sys\nresource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), resource.getrlimit(resource.RLIMIT_FSIZE)[1]))\nos.execvp(sys.argv[2], sys.argv[2:])';
    const child = execFileSync(PYTHON, ['-c', limited, String(limit), process.execPath,
      fileURLToPath(new URL('store-full-child.mjs', import.meta.url)), path, commandFile], { encoding: 'utf8' });
    const refused = JSON.parse(child.trim().split('\n').pop());
    assert.equal(refused.applied, undefined, 'applied over the limit');
    assert.equal(refused.name, 'StoreError', refused.message);
    assert.equal(refused.revisionConflict, false);
    assert.equal(refused.family, 'store_failure');
    assert.equal(refused.code, 'INTERNAL_ERROR');
    assert.equal(refused.reason, 'backend_failure');
    assert.equal(refused.retryable, true, 'space can come back: an unchanged retry may succeed');
    assert.deepEqual(refused.fields, {}, 'no stored row is damaged: no locator');
    assert.equal(refused.lastSequence, 1, 'nothing half-applied');
    // Without the limit the same signed Command applies, once.
    const store = new api.SQLiteStore(path);
    await store.initialize();
    const core = org.core({ store });
    try {
      const posted = await core.perform(command);
      assert.equal(posted.event.sequence, 2);
      const again = await core.perform(command);
      assert.ok(again.duplicate);
      assert.equal((await core.replay(GROUP)).lastSequence, 2);
    } finally {
      await store.close();
      core.free();
    }
  });

  test('a genuine revision conflict on a file is still a RevisionConflict (older and newer)', async () => {
    const api = apis[name];
    const org = organization(api);
    const store = new api.SQLiteStore(join(dir, 'conflict.db'));
    await store.initialize();
    const core = await org.ready({ store });
    try {
      await core.perform(org.command('mission.create', OWNER, createPayload()));
      for (const stale of [0, 2]) {
        const error = await core.perform(cancel(org, stale)).then(() => assert.fail('applied'), (e) => e);
        assert.ok(error instanceof api.RevisionConflict && !(error instanceof api.StoreError), `${error.name}: ${error.message}`);
        assert.equal(error.code, 'REVISION_CONFLICT');
        assert.equal(error.expectedRevision, stale);
        assert.equal(error.currentRevision, 1);
      }
      assert.equal((await core.perform(cancel(org, 1))).event.sequence, 2);
    } finally {
      await store.close();
      core.free();
    }
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
