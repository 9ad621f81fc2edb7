// Writes the per-platform npm packages of the napi addon (issue 28; the napi-rs convention):
// one directory per triple, `missionweaveprotocol-<triple>` with `os`/`cpu`/`libc` so npm
// installs only the running platform's, `main` the addon, the licence and a README. The
// version is the main package's, which lists each one in its optionalDependencies as published
// (scripts/pack.mjs).
//
//   node js/scripts/platform-packages.mjs OUT_DIR TRIPLE=ADDON.so [TRIPLE=ADDON.so …]
//
// Prints each package directory; `npm pack` them (scripts/release-npm.sh, test/package.test.mjs).
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const js = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { PACKAGE, PREBUILDS } = createRequire(import.meta.url)(join(js, 'src', 'native-loader.cjs'));

/** The package.json of one platform package. */
export function platformManifest(main, triple) {
  const platform = PREBUILDS[triple];
  if (!platform) throw new Error(`platform-packages: no prebuild is defined for ${triple} (native-loader.cjs PREBUILDS)`);
  const name = `${PACKAGE}-${triple}`;
  return {
    name,
    version: main.version,
    description: `${main.name}'s napi-rs addon for ${triple} (installed by ${main.name}, not on its own)`,
    license: main.license,
    os: [platform.os],
    cpu: [platform.cpu],
    libc: [platform.libc],
    main: `${PACKAGE}.${triple}.node`,
    files: [`${PACKAGE}.${triple}.node`],
    engines: main.engines,
  };
}

/** Writes OUT_DIR/<triple>/ for each `[triple, addonPath]`; returns the directories. */
export function writePlatformPackages(outDir, addons) {
  const main = JSON.parse(readFileSync(join(js, 'package.json'), 'utf8'));
  const dirs = [];
  for (const [triple, addon] of addons) {
    const manifest = platformManifest(main, triple);
    const dir = join(resolve(outDir), triple);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    copyFileSync(addon, join(dir, manifest.main));
    copyFileSync(join(js, 'LICENSE'), join(dir, 'LICENSE'));
    writeFileSync(join(dir, 'README.md'), `# ${manifest.name}\n\nThe ${triple} build (Rust target ` +
      `\`${PREBUILDS[triple].rust}\`) of the native addon of [${main.name}](https://www.npmjs.com/package/${main.name}). ` +
      `Install \`${main.name}\`: it lists this package as an optional dependency and loads it when it matches the platform.\n`);
    dirs.push(dir);
  }
  return dirs;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [outDir, ...pairs] = process.argv.slice(2);
  if (!outDir || pairs.length === 0 || pairs.some((p) => !p.includes('='))) {
    console.error('usage: node js/scripts/platform-packages.mjs OUT_DIR TRIPLE=ADDON.so [TRIPLE=ADDON.so …]');
    process.exit(2);
  }
  for (const dir of writePlatformPackages(outDir, pairs.map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)]))) {
    console.log(dir);
  }
}
