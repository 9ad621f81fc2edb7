// Packs the main package as it is published (issue 28): js/package.json plus the four
// per-platform napi packages in optionalDependencies, at the package's own version — what
// `napi prepublish` does in the napi-rs convention. They are added here, not kept in
// js/package.json, because npm ci cannot lock packages that are not yet in the registry. The
// package is staged (package.json, README, LICENSE, dist/, page/) and `npm pack`ed from there.
//
//   node js/scripts/pack.mjs OUT_DIR      prints the tarball's path
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const js = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { PACKAGE, PREBUILDS } = createRequire(import.meta.url)(join(js, 'src', 'native-loader.cjs'));

/** js/package.json as published: the platform packages as optional dependencies. */
export function publishedManifest() {
  const main = JSON.parse(readFileSync(join(js, 'package.json'), 'utf8'));
  if (main.optionalDependencies) throw new Error('pack.mjs: js/package.json must not list optionalDependencies (added here)');
  main.optionalDependencies = Object.fromEntries(Object.keys(PREBUILDS).map((triple) => [`${PACKAGE}-${triple}`, main.version]));
  return main;
}

/** `npm pack`s the main package into `outDir`; returns the tarball's path. */
export function packMain(outDir) {
  const manifest = publishedManifest();
  const stage = mkdtempSync(join(tmpdir(), 'mwp-npm-stage-'));
  try {
    writeFileSync(join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    for (const entry of ['README.md', 'LICENSE', 'dist', 'page']) cpSync(join(js, entry), join(stage, entry), { recursive: true });
    execFileSync('npm', ['pack', '--silent', '--pack-destination', resolve(outDir)], { cwd: stage, stdio: ['ignore', 'pipe', 'inherit'] });
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
  return join(resolve(outDir), `${manifest.name}-${manifest.version}.tgz`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.length !== 3) {
    console.error('usage: node js/scripts/pack.mjs OUT_DIR');
    process.exit(2);
  }
  console.log(packMain(process.argv[2]));
}
