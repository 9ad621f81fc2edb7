// Cheap lint: `node --check` (syntax) on every JavaScript file of the package, tests, page,
// benchmark and scripts, the examples (examples/js), and on the built entries when dist/ exists.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const js = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const files = [];
for (const dir of ['src', 'src/api', 'test', 'scripts', 'bench', 'page', 'dist', '../examples/js']) {
  if (!existsSync(join(js, dir))) continue;
  for (const name of readdirSync(join(js, dir))) {
    if (/\.(mjs|cjs|js)$/.test(name)) files.push(join(js, dir, name));
  }
}
let failed = 0;
for (const file of files) {
  const result = spawnSync(process.execPath, ['--check', file], { encoding: 'utf8' });
  if (result.status !== 0) {
    failed += 1;
    process.stderr.write(result.stderr);
  }
}
console.log(`node --check: ${files.length - failed}/${files.length} files OK`);
process.exit(failed ? 1 : 0);
