// PostgreSQLStore and SQLStore('postgresql://…') against a real server (issue 11, Node; the Python
// package's test_core_postgresql_store.py mirrored; the server of MWP_POSTGRES_URL or a private
// cluster, pg-support.mjs; never skipped): a Core over PostgreSQL works as over SQLite and
// InMemoryStore; a new Core over a new store on the same database replays the same Events and
// continues; every URL spelling reaches the server; an unreachable server rejects initialize and
// the store stays unopened; initialize waits for the server off the event loop.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';

import { backends } from './support.mjs';
import { GROUP, OWNER, createPayload, organization } from './core-support.mjs';
import { firstCommands, firstFlow, secondFlow } from './durable-flow.mjs';
import { freshDatabase, serverUrl } from './pg-support.mjs';

let apis;
const databases = [];
before(async () => {
  apis = await backends();
  serverUrl();
});
after(() => { for (const database of databases) database.drop(); });

function database() {
  const made = freshDatabase();
  databases.push(made);
  return made;
}

/** A loopback port nothing listens on (a listener opened and closed). */
async function closedPort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('PostgreSQL stores: napi (ESM)', () => {
  const name = 'napi (ESM)';

  test('a flow on PostgreSQL; a new Core over a new store replays the same Events and continues', async () => {
    const api = apis[name];
    const org = organization(api);
    const db = database();
    const commands = firstCommands(org);
    const store = new api.PostgreSQLStore(db.url('postgresql+asyncpg'));
    assert.equal(store.dialectName, 'postgresql');
    const results = await firstFlow(api, org, store, commands);
    // A new store (its own connections, as a later process) through the generic class.
    await secondFlow(api, org, new api.SQLStore(db.url('postgresql')), commands, results);
  });

  test('every PostgreSQL URL spelling reaches the server', async () => {
    const api = apis[name];
    const org = organization(api);
    const db = database();
    let first = true;
    for (const scheme of ['postgresql', 'postgres', 'postgresql+asyncpg', 'postgresql+psycopg', 'postgresql+psycopg2']) {
      const store = new api.PostgreSQLStore(db.url(scheme));
      assert.equal(store.url, db.url(scheme)); // no password to mask
      await store.initialize();
      const core = org.core({ store }); // mission.create needs no Agent session
      if (first) {
        assert.equal((await core.perform(org.command('mission.create', OWNER, createPayload()))).event.sequence, 1);
        first = false;
      }
      // Every spelling reaches the one database the first one wrote.
      assert.equal((await core.replay(GROUP)).lastSequence, 1, scheme);
      await store.close();
      core.free();
      store.free();
    }
  });

  test('a password is masked and options reach libpq', async () => {
    const api = apis[name];
    const db = database();
    const [scheme, rest] = db.url('postgresql+asyncpg').split('://');
    const [user, host] = rest.split('@');
    const store = new api.SQLStore(`${scheme}://${user}:s%40cret@${host}?application_name=mwp-js&connect_timeout=5`);
    assert.equal(store.url, `${scheme}://${user}:***@${host}?application_name=mwp-js&connect_timeout=5`);
    await store.initialize();
    const org = organization(api);
    const core = org.core({ store });
    assert.equal((await core.perform(org.command('mission.create', OWNER, createPayload()))).event.sequence, 1);
    await store.close();
    core.free();
    store.free();
  });

  test('an unreachable server rejects initialize with a typed error; the store stays unopened', async () => {
    const api = apis[name];
    const store = new api.PostgreSQLStore(`postgresql+asyncpg://mwp:secret@127.0.0.1:${await closedPort()}/mwp`);
    const error = await store.initialize().then(() => assert.fail('opened'), (e) => e);
    assert.ok(error instanceof api.MwpError, `${error?.name}: ${error?.message}`);
    assert.equal(error.code, 'INTERNAL_ERROR');
    assert.equal(error.reason, 'backend_failure');
    assert.doesNotMatch(error.message, /secret/);
    const refused = await (async () => organization(api).core({ store }))().then(() => assert.fail('built'), (e) => e);
    assert.ok(refused instanceof api.ArgumentError);
    assert.equal(refused.reason, 'store-not-initialized');
    await store.close(); // allowed, and final
    const closed = await store.initialize().then(() => assert.fail('opened'), (e) => e);
    assert.equal(closed.reason, 'store-closed');
    store.free();
  });

  test('a missing database rejects initialize', async () => {
    const api = apis[name];
    const db = database();
    const store = new api.PostgreSQLStore(`${db.url()}_missing`);
    const error = await store.initialize().then(() => assert.fail('opened'), (e) => e);
    assert.equal(error.code, 'INTERNAL_ERROR');
    assert.match(error.message, /_missing/);
    store.free();
  });

  test('initialize waits for the server off the event loop: timers fire meanwhile', async () => {
    const api = apis[name];
    // A server that accepts and says nothing for a second, then hangs up.
    const sockets = [];
    const server = createServer((socket) => {
      sockets.push(socket);
      setTimeout(() => socket.destroy(), 1000);
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const store = new api.PostgreSQLStore(`postgresql://mwp@127.0.0.1:${server.address().port}/mwp`);
      let settled = false;
      const opening = store.initialize().then(() => assert.fail('opened'), (e) => e).finally(() => { settled = true; });
      let ticks = 0;
      const started = Date.now();
      while (!settled) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        ticks += 1;
      }
      assert.ok(Date.now() - started >= 900, `${Date.now() - started} ms`);
      assert.ok(ticks >= 50, `${ticks} ticks`);
      const error = await opening;
      assert.equal(error.code, 'INTERNAL_ERROR');
      store.free();
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
