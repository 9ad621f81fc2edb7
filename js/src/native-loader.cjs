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
 * Whether this Linux runs on musl (Alpine) rather than glibc. `lddText` is /usr/bin/ldd's text
 * (a shell script naming glibc, or a link to musl's loader) or null when unreadable; `report` a
 * thunk for process.report.getReport() (slower: asked only when ldd says nothing), whose header
 * names the glibc version and whose shared objects name musl's loader.
 */
function isMusl(lddText, report) {
  if (typeof lddText === 'string') {
    if (lddText.includes('musl')) return true;
    if (/GNU C Library|GLIBC|glibc/.test(lddText)) return false;
  }
  const r = report();
  if (r?.header?.glibcVersionRuntime) return false;
  return Array.isArray(r?.sharedObjects) && r.sharedObjects.some((so) => /(?:^|\/)(?:ld-musl-|libc\.musl-)/.test(so));
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

/** This process's triple (reads /usr/bin/ldd on Linux). */
function hostTriple() {
  if (process.platform !== 'linux') return platformTriple(process.platform, process.arch, false);
  let ldd = null;
  try {
    ldd = require('node:fs').readFileSync('/usr/bin/ldd', 'utf8');
  } catch {
    // No ldd (a distroless image): the process report answers.
  }
  const report = () => {
    if (!process.report) return null;
    process.report.excludeNetwork = true;
    return process.report.getReport();
  };
  return platformTriple(process.platform, process.arch, isMusl(ldd, report));
}

module.exports = { PACKAGE, PREBUILDS, isMusl, platformTriple, candidates, loadNative, hostTriple };
