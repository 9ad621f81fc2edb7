// Issue 24: the Node gateway on PostgreSQL listens for the other processes' head moves. Two
// Node processes on one database, each with its own GroupGateway (the native HeadFanout: the
// Rust server's LISTEN/NOTIFY mwp_group_head threads). The Worker subscribes through this
// process's gateway, whose head poll is set to an hour, so only a notification can deliver in
// the test's bound; the child process's Coordinator posts through the child's gateway. The
// Worker must receive that Event. The negative: over SQLite there is no fan-out (`fanout` null).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { JS, backends } from './support.mjs';
import { GROUP, WAIT_MS, WORKER, nodeGateway, organization, within } from './network-support.mjs';
import { freshDatabase } from './pg-support.mjs';

let api;
let org;
let database;

before(async () => {
  api = (await backends())['napi (ESM)'];
  org = organization(api);
  database = freshDatabase();
});

after(() => { database?.drop(); });

test('PostgreSQL: an Event committed through another process\'s gateway reaches this gateway\'s subscriber by NOTIFY', { timeout: 4 * WAIT_MS }, async () => {
  const store = new api.PostgreSQLStore(database.url());
  await store.initialize();
  const host = await nodeGateway(org, { store, pollIntervalMs: 3_600_000 });
  const worker = org.client(host.url, WORKER);
  let child;
  try {
    assert.ok(host.gateway.fanout?.active(), 'the fan-out runs over PostgreSQL');
    // LISTEN is up before the other process commits (a NOTIFY before it would be missed).
    await within((async () => { while (!host.gateway.fanout.listening()) await new Promise((r) => setTimeout(r, 20)); })(), 'LISTEN');
    await within(worker.connect(), 'HELLO');
    await worker.subscribe([GROUP]);
    const head = (await host.core.replay(GROUP, { after: 0, limit: 10_000 })).lastSequence;
    for (let i = 0; i < head; i += 1) await within(worker.nextEvent(GROUP), 'replay');
    child = spawn(process.execPath, [join(JS, 'test', 'pg-fanout-child.mjs'), database.url(), 'from the other process'],
      { stdio: ['pipe', 'pipe', 'inherit'] });
    const line = await within(new Promise((resolve, reject) => {
      createInterface({ input: child.stdout }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`the child exited (${code})`)));
    }), 'the other process');
    const sent = JSON.parse(line);
    assert.equal(sent.notifying, true);
    // In Group order up to it (the child's HELLO may append Events of its own before).
    let event;
    do {
      event = await within(worker.nextEvent(GROUP), 'the other process\'s Event (only NOTIFY can bring it: the head poll is an hour)');
      assert.ok(event.sequence > head && event.sequence <= sent.sequence);
    } while (event.eventId !== sent.eventId);
    assert.equal(event.sequence, sent.sequence);
  } finally {
    child?.stdin.end();
    if (child && child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
    await worker.close();
    await host.close();
    await store.close();
  }
});

test('SQLite: no fan-out threads (one process: its own wake-ups suffice)', async () => {
  const store = new api.SQLiteStore(':memory:');
  await store.initialize();
  const host = await nodeGateway(org, { store });
  try {
    assert.equal(host.gateway.fanout, null);
  } finally {
    await host.close();
    await store.close();
  }
});
