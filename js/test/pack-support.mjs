// `npm pack` of the package as a user installs it: the main tarball as published
// (scripts/pack.mjs) and this platform's napi package (scripts/platform-packages.mjs with the
// addon built in place), as the release ships them (scripts/release-npm.sh). Used by package.test.mjs and examples.test.mjs.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { packMain } from '../scripts/pack.mjs';
import { writePlatformPackages } from '../scripts/platform-packages.mjs';
import { DIST, JS } from './support.mjs';

const { hostTriple } = createRequire(import.meta.url)(join(JS, 'src', 'native-loader.cjs'));
export const TRIPLE = hostTriple();
export const VERSION = JSON.parse(readFileSync(join(JS, 'package.json'), 'utf8')).version;

const pack = (cwd, dest) => execFileSync('npm', ['pack', '--pack-destination', dest, '--silent'], { cwd, stdio: ['ignore', 'pipe', 'inherit'] });

/** Packs both into `work`; returns `{ main, platform }`, the two tarballs' paths. */
export function packPackages(work) {
  const main = packMain(work);
  const [platformDir] = writePlatformPackages(join(work, 'platforms'), [[TRIPLE, join(DIST, `missionweaveprotocol.${TRIPLE}.node`)]]);
  pack(platformDir, work);
  return { main, platform: join(work, `missionweaveprotocol-${TRIPLE}-${VERSION}.tgz`) };
}

/** A fresh project in `dir` with `tarballs` installed (offline: `ws` comes from npm's cache). */
export function installInto(dir, tarballs, manifest = {}) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, ...manifest }));
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--silent', ...tarballs], { cwd: dir, stdio: 'inherit' });
}
