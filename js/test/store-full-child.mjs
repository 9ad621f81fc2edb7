// A child of sql-store.test.mjs ("a database that cannot grow"), run under a file-size limit
// (RLIMIT_FSIZE, set by the parent before exec; Node ignores SIGXFSZ): opens the SQLite store at
// argv[2], performs the signed Command in the file argv[3] and prints the refusal as JSON.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { DIST } from './support.mjs';
import { GROUP, organization } from './core-support.mjs';

const api = await import(join(DIST, 'node.mjs'));
const [path, commandFile] = process.argv.slice(2);
const store = new api.SQLiteStore(path);
await store.initialize();
// Sessions were opened by the parent: a plain Core, not `ready()` (which would open new ones).
const core = organization(api).core({ store });
let answer;
try {
  await core.perform(readFileSync(commandFile));
  answer = { applied: true };
} catch (e) {
  answer = {
    name: e.name, family: e.family, code: e.code, reason: e.reason, retryable: e.retryable,
    fields: { ...e.fields }, message: e.message, revisionConflict: e instanceof api.RevisionConflict,
  };
}
answer.lastSequence = (await core.replay(GROUP)).lastSequence;
await store.close();
core.free();
console.log(JSON.stringify(answer));
