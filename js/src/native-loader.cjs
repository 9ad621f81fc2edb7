'use strict';
// Which napi-rs addon the Node entry loads (issue 28). The prebuilds ship as one optional npm
// package per platform, the napi-rs convention: `missionweaveprotocol-<triple>`, each with
// `os`/`cpu`/`libc` fields so npm installs only the running platform's, holding
// `missionweaveprotocol.<triple>.node`. The Node entry tries that package, then an addon built
// in place (dist/, scripts/build.mjs), and falls back to the WebAssembly build when neither
// loads (node.cjs). Pure functions, so the choice is tested without the platforms themselves
// (test/native-loader.test.mjs).

const PACKAGE = 'missionweaveprotocol';

/** The platforms a prebuild is published for (scripts/release-npm.sh builds each one). */
const PREBUILDS = {
  'linux-x64-gnu': { os: 'linux', cpu: 'x64', libc: 'glibc', rust: 'x86_64-unknown-linux-gnu' },
  'linux-arm64-gnu': { os: 'linux', cpu: 'arm64', libc: 'glibc', rust: 'aarch64-unknown-linux-gnu' },
  'linux-x64-musl': { os: 'linux', cpu: 'x64', libc: 'musl', rust: 'x86_64-unknown-linux-musl' },
  'linux-arm64-musl': { os: 'linux', cpu: 'arm64', libc: 'musl', rust: 'aarch64-unknown-linux-musl' },
};

/**
 * Whether this Node runs on musl (Alpine) rather than glibc: the addon must match the libc of
 * the running process, not whatever the system's `ldd` names. `maps` is /proc/self/maps (the
 * files this process has mapped, its C library among them) or null when unreadable; `report`
 * a thunk for process.report.getReport() (slower: asked only when the maps name neither
 * loader), whose header names the glibc version of a glibc build of Node and nothing on musl.
 */
function isMusl(maps, report) {
  if (typeof maps === 'string') {
    if (/\/(?:ld-musl-[^/\s]*|libc\.musl-[^/\s]*)$/m.test(maps)) return true;
    if (/\/(?:libc\.so\.6|ld-linux[^/\s]*)$/m.test(maps)) return false;
  }
  const header = report()?.header;
  return header !== undefined && !header.glibcVersionRuntime;
}

/** The napi-rs triple: `linux-x64-gnu`, `linux-arm64-musl`, …; `<platform>-<arch>` elsewhere. */
function platformTriple(platform, arch, musl) {
  return platform === 'linux' ? `${platform}-${arch}-${musl ? 'musl' : 'gnu'}` : `${platform}-${arch}`;
}

/** What to try, in order: the platform package, then the addon built in place. */
function candidates(triple) {
  return [`${PACKAGE}-${triple}`, `./${PACKAGE}.${triple}.node`];
}

/**
 * Loads the first candidate that loads. `load` is the entry's `require`. Resolves to
 * `{ raw, from }`, or `{ raw: null, tried }` with why each candidate failed.
 */
function loadNative(triple, load) {
  const tried = [];
  for (const id of candidates(triple)) {
    try {
      return { raw: load(id), from: id };
    } catch (error) {
      tried.push(`${id}: ${error.code ?? error.message}`);
    }
  }
  return { raw: null, tried };
}

/** This process's triple (reads /proc/self/maps on Linux). */
function hostTriple() {
  if (process.platform !== 'linux') return platformTriple(process.platform, process.arch, false);
  let maps = null;
  try {
    maps = require('node:fs').readFileSync('/proc/self/maps', 'utf8');
  } catch {
    // No /proc (a restricted sandbox): the process report answers.
  }
  const report = () => {
    if (!process.report) return undefined;
    process.report.excludeNetwork = true;
    return process.report.getReport();
  };
  return platformTriple(process.platform, process.arch, isMusl(maps, report));
}

module.exports = { PACKAGE, PREBUILDS, isMusl, platformTriple, candidates, loadNative, hostTriple };
