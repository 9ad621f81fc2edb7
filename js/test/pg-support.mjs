// The PostgreSQL server the store tests run against, and a fresh database per test. The server is
// MWP_POSTGRES_URL (scripts/test-js.sh starts a private cluster and exports it); when unset, the
// private cluster is started here with scripts/pg-cluster.sh start (which installs PostgreSQL from
// Debian's packages when missing). The tests never skip. Databases are created and dropped with
// psql (installed with the server).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

let server;
/** The server's URL (`postgresql://user@host:port/database`). */
export function serverUrl() {
  if (server) return server;
  if (process.env.MWP_POSTGRES_URL) return (server = process.env.MWP_POSTGRES_URL);
  const started = spawnSync('bash', [join(root, 'scripts/pg-cluster.sh'), 'start'], { encoding: 'utf8' });
  assert.equal(started.status, 0, `scripts/pg-cluster.sh start failed:\n${started.stderr}`);
  return (server = started.stdout.trim().split('\n').at(-1));
}

/** psql on PATH, or the newest in Debian's versioned server directories. */
function psql() {
  const onPath = spawnSync('sh', ['-c', 'command -v psql'], { encoding: 'utf8' });
  if (onPath.status === 0 && onPath.stdout.trim()) return onPath.stdout.trim();
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base) ? readdirSync(base).filter((v) => existsSync(join(base, v, 'bin/psql'))) : [];
  versions.sort((a, b) => Number(a) - Number(b));
  assert.ok(versions.length, 'psql not found (scripts/pg-cluster.sh installs it with the server)');
  return join(base, versions.at(-1), 'bin/psql');
}

function runSql(statement) {
  execFileSync(psql(), [serverUrl(), '-v', 'ON_ERROR_STOP=1', '-qc', statement], { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** `url` naming `database` instead of its own (the query, if any, kept). */
export function withDatabase(url, database) {
  const [base, query] = url.split(/\?(.*)/s);
  const [scheme, rest] = base.split('://');
  const authority = rest.split('/')[0];
  return `${scheme}://${authority}/${database}${query !== undefined ? `?${query}` : ''}`;
}

/** A fresh database on the test server: `url(scheme)` names it; `drop()` drops it (with any
 * connection still open). */
export function freshDatabase() {
  const name = `mwp_js_${process.pid}_${randomBytes(6).toString('hex')}`;
  runSql(`CREATE DATABASE "${name}"`);
  return {
    name,
    url(scheme = 'postgresql') {
      return `${scheme}://${withDatabase(serverUrl(), name).split('://')[1]}`;
    },
    drop() { runSql(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`); },
  };
}
