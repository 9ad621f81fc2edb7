// Assembles js/dist from js/src, the napi addon and the two wasm-bindgen outputs.
//
//   node js/scripts/build.mjs [--target-dir DIR]
//
// Expects (built by scripts/test-js.sh):
//   DIR/release/libmissionweaveprotocol_node.so     cargo build --release -p missionweaveprotocol-node
//   DIR/wasm-bindgen/web/ and DIR/wasm-bindgen/node/ wasm-bindgen --target web|nodejs
//   DIR/wasm-bindgen/verify-web/                     the verify-only build (bindings/wasm-verify)
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const js = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const flag = args.indexOf('--target-dir');
const targetDir = resolve(flag >= 0 ? args[flag + 1] : process.env.CARGO_TARGET_DIR ?? join(js, '..', 'target'));
const src = join(js, 'src');
const dist = join(js, 'dist');

function need(path, hint) {
  if (!existsSync(path)) {
    console.error(`build.mjs: ${path} is missing (${hint})`);
    process.exit(1);
  }
  return path;
}

const addonExt = { darwin: 'dylib', win32: 'dll' }[process.platform] ?? 'so';
const addonPrefix = process.platform === 'win32' ? '' : 'lib';
const addon = need(join(targetDir, 'release', `${addonPrefix}missionweaveprotocol_node.${addonExt}`),
  'cargo build --release -p missionweaveprotocol-node');
const wasmWeb = need(join(targetDir, 'wasm-bindgen', 'web'), 'wasm-bindgen --target web');
const wasmNode = need(join(targetDir, 'wasm-bindgen', 'node'), 'wasm-bindgen --target nodejs');
const wasmVerify = need(join(targetDir, 'wasm-bindgen', 'verify-web'), 'wasm-bindgen --target web (missionweaveprotocol_wasm_verify)');

// The verify-only entry: what a page that only checks signatures needs. Everything else
// (admission, bundles, leases, budget, scheduler) is not compiled into its module.
const VERIFY_FACTORY = ['backend', 'sourceCommit', 'Registry', 'RegistryBuilder', 'SigningKey', 'failureReasons',
  'explainFailure', 'parseLimits', 'canonicalize', 'canonicalBytes', 'canonicalHash', 'checkStrictJson', 'validateSchema', 'schemaNames',
  'detectKinds', 'signDocument', 'verifySignedDocument', 'verifySignedDocuments', 'signingPreview', 'parseFrame',
  'parseReceivedFrame', 'encodeFrame', 'errorFrame'];
const VERIFY_SHARED = ['PROTOCOL_VERSION', 'DOCUMENT_KINDS', 'STAGES', 'WIRE_MESSAGE', 'MwpError', 'ArgumentError',
  'ParseError', 'CanonicalizationError', 'SchemaValidationError', 'VerificationError', 'SigningError', 'RegistryError',
  'FrameError', 'VerifiedDocument', 'SignedDocument', 'Frame', 'ReceivedCommandFrame'];
const VERIFY_TYPES = ['Bytes', 'NativeResource', 'DocumentKind', 'Stage', 'WireCode', 'Principal', 'WireError', 'RegistryInput',
  'FailureReason', 'ValidityRecordInput', 'ParseLimits', 'ParseOptions'];

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
// The licence the tarball ships is the repository's (one file; npm pack leaves symlinks out, so
// it is copied here, and js/LICENSE is not tracked).
copyFileSync(join(js, '..', 'LICENSE'), join(js, 'LICENSE'));

// 1. The API: src/api.mjs (the one public entry) and the modules it imports (src/api/*.mjs),
// bundled into one ES module, dist/api.mjs, and its CommonJS twin, dist/api.cjs (one file each,
// so each entry has one instance of every class). The public names are the entry's
// `export { … } from` lists and `createApi`.
const { code, names } = bundle(join(src, 'api.mjs'));
writeFileSync(join(dist, 'api.mjs'), `${code}\nexport { ${names.join(', ')} };\n`);
writeFileSync(join(dist, 'api.cjs'), `'use strict';\n${code}\nmodule.exports = { ${names.join(', ')} };\n`);

// 2. Backends. The addon built in place is named like the per-platform packages' file
// (native-loader.cjs: `missionweaveprotocol.<triple>.node`); the published tarball leaves it out
// (package.json "files") because the platform packages carry it (scripts/release-npm.sh).
const { hostTriple } = createRequire(import.meta.url)(join(src, 'native-loader.cjs'));
copyFileSync(addon, join(dist, `missionweaveprotocol.${hostTriple()}.node`));
for (const [from, to] of [[wasmWeb, 'wasm-web'], [wasmNode, 'wasm-node']]) {
  mkdirSync(join(dist, to));
  cpSync(join(from, 'missionweaveprotocol_wasm.js'), join(dist, to, 'missionweaveprotocol_wasm.js'));
}
// One module for both glues: wasm-bindgen's `web` and `nodejs` targets emit the same .wasm
// bytes (3.8 MB, 1.2 MB of the tarball twice), so the nodejs glue reads wasm-web's copy. Checked
// here: if the two ever differ, each glue keeps its own.
const WASM_FILE = 'missionweaveprotocol_wasm_bg.wasm';
cpSync(join(wasmWeb, WASM_FILE), join(dist, 'wasm-web', WASM_FILE));
if (readFileSync(join(wasmWeb, WASM_FILE)).equals(readFileSync(join(wasmNode, WASM_FILE)))) {
  const glue = join(dist, 'wasm-node', 'missionweaveprotocol_wasm.js');
  const own = `\`\${__dirname}/${WASM_FILE}\``;
  const text = readFileSync(glue, 'utf8');
  if (text.split(own).length !== 2) {
    console.error(`build.mjs: ${glue} does not read ${own} exactly once (wasm-bindgen changed its nodejs glue)`);
    process.exit(1);
  }
  writeFileSync(glue, text.replace(own, `\`\${__dirname}/../wasm-web/${WASM_FILE}\``));
} else {
  cpSync(join(wasmNode, WASM_FILE), join(dist, 'wasm-node', WASM_FILE));
}
mkdirSync(join(dist, 'wasm-verify'));
for (const file of ['missionweaveprotocol_wasm_verify.js', 'missionweaveprotocol_wasm_verify_bg.wasm']) {
  cpSync(join(wasmVerify, file), join(dist, 'wasm-verify', file));
}
// wasm-bindgen's nodejs output is CommonJS; in a "type": "module" package it needs a marker.
writeFileSync(join(dist, 'wasm-node', 'package.json'), '{ "type": "commonjs" }\n');

// 3. CommonJS entries, then ES module entries that export exactly what they export.
for (const file of ['node.cjs', 'wasm.cjs', 'native-loader.cjs', 'load-wasm-browser.mjs', 'load-wasm-node.mjs']) {
  copyFileSync(join(src, file), join(dist, file));
}
const require = createRequire(join(dist, 'x.cjs'));
const shared = names.filter((n) => n !== 'createApi');
const exportsOf = (entry) => Object.keys(require(entry)).sort();
const nodeNames = exportsOf('./node.cjs');
// The Node entry falls back to WebAssembly when no addon loads; here the one just built must.
if (require('./node.cjs').backend !== 'napi') throw new Error('build.mjs: dist/node.cjs did not load the addon built in place');
const wasmNames = exportsOf('./wasm.cjs');
writeFileSync(join(dist, 'node.mjs'),
  `// Node entry (ES module): the napi-rs addon, through the CommonJS entry (one instance).\n` +
  `import api from './node.cjs';\n\nexport const { ${nodeNames.join(', ')} } = api;\n`);
// Each ES module entry twice: the browser/default one (wasm.mjs, verify.mjs) imports nothing
// from Node and fetches its module; the Node one (node-wasm.mjs, node-verify.mjs, picked by the
// package's `node` condition) reads it from disk (issue 28).
const ROLES = [
  ['', 'load-wasm-browser.mjs', 'browsers and the default condition (no Node built-ins: the module is fetched)'],
  ['node-', 'load-wasm-node.mjs', 'Node (the module is read from disk)'],
];
const entry = (template, role, loader, names, sharedNames) => readFileSync(join(src, template), 'utf8')
  .replace('@ROLE@', role).replace('@LOADER@', loader)
  .replace('@NAMES@', names.join(', ')).replace('@SHARED@', sharedNames.join(', '));
const factoryNames = wasmNames.filter((n) => !shared.includes(n));
for (const [prefix, loader, role] of ROLES) {
  writeFileSync(join(dist, `${prefix}wasm.mjs`), entry('wasm.mjs.in', role, loader, factoryNames, shared));
}

for (const name of VERIFY_FACTORY) {
  if (!wasmNames.includes(name) || shared.includes(name)) throw new Error(`verify entry: ${name} is not a backend export`);
}
for (const name of VERIFY_SHARED) {
  if (!shared.includes(name)) throw new Error(`verify entry: ${name} is not exported by api.mjs`);
}
for (const [prefix, loader, role] of ROLES) {
  writeFileSync(join(dist, `${prefix}verify.mjs`), entry('verify.mjs.in', role, loader, VERIFY_FACTORY, VERIFY_SHARED));
}

// 4. Declarations: one .d.mts and one .d.cts per entry. The call and answer shapes generated
// from core/ffi (ffi-types.d.ts, checked against the Rust types by a cargo test) replace the
// <ffi-types> block that imports them, so every entry's declarations are one self-contained file.
const ffiTypes = readFileSync(join(src, 'ffi-types.d.ts'), 'utf8')
  .replace(/^import type \{[^}]*\} from '\.\/api\.js';\n/m, '');
const api = readFileSync(join(src, 'api.d.ts'), 'utf8');
const block = /^\/\/ <ffi-types>[^\n]*\n(?:.*\n)*?\/\/ <\/ffi-types>\n/m;
if (!block.test(api)) throw new Error('build.mjs: api.d.ts has no <ffi-types> block to inline');
if (ffiTypes.includes("from './api.js'")) throw new Error('build.mjs: ffi-types.d.ts imports from api.d.ts in an unexpected form');
const declarations = api.replace(block, () => ffiTypes);
for (const ext of ['d.mts', 'd.cts']) {
  writeFileSync(join(dist, `node.${ext}`), declarations);
  writeFileSync(join(dist, `wasm.${ext}`), declarations);
}
// The verify entry declares a subset of the same declarations (one source, TSDoc included).
writeFileSync(join(dist, 'verify.d.mts'),
  `// missionweaveprotocol/verify: the verify-only WebAssembly build (see wasm.d.mts for the docs).\n` +
  `export { ${[...VERIFY_FACTORY, ...VERIFY_SHARED].join(', ')} } from './wasm.mjs';\n` +
  `export type { ${VERIFY_TYPES.join(', ')} } from './wasm.mjs';\n`);
console.log(`dist: node exports ${nodeNames.length}, wasm exports ${wasmNames.length}`);

// A bundler for the package's own modules: `entry` and every module it imports (relative
// `import { … } from './…'` only), in dependency order, with the imports and `export` keywords
// removed (the modules share one scope, so top-level names must be unique: checked). Returns
// the code and the entry's public names.
function bundle(entry) {
  const importRe = /^import\s*\{([^}]*)\}\s*from\s*'(\.[^']+)';\n/gm;
  const reexportRe = /^export\s*\{([^}]*)\}\s*from\s*'(\.[^']+)';\n/gm;
  const declRe = /^(?:export )?(?:async )?(?:function|class|const|let) ([A-Za-z_$][\w$]*)/gm;
  const list = (text) => text.split(',').map((n) => n.trim()).filter(Boolean);
  const order = [];
  const sources = new Map();
  const visiting = new Set();
  const visit = (file) => {
    if (sources.has(file)) return;
    if (visiting.has(file)) throw new Error(`build.mjs: import cycle through ${file}`);
    visiting.add(file);
    const text = readFileSync(file, 'utf8');
    for (const re of [importRe, reexportRe]) {
      for (const [, , from] of text.matchAll(re)) visit(resolve(dirname(file), from));
    }
    visiting.delete(file);
    sources.set(file, text);
    order.push(file);
  };
  visit(entry);
  const exported = (file) => new Set([...sources.get(file).matchAll(/^export (?:async )?(?:function|class|const|let) ([A-Za-z_$][\w$]*)/gm)].map((m) => m[1]));
  const names = [];
  const declared = new Map();
  const parts = [];
  for (const file of order) {
    let text = sources.get(file);
    for (const re of [importRe, reexportRe]) {
      for (const [, imported, from] of text.matchAll(re)) {
        const target = resolve(dirname(file), from);
        for (const name of list(imported)) {
          if (!exported(target).has(name)) throw new Error(`build.mjs: ${file} imports ${name}, which ${target} does not export`);
          if (re === reexportRe && file === entry) names.push(name);
        }
      }
    }
    text = text.replace(importRe, '').replace(reexportRe, '').replace(/^export (async function|function|class|const|let) /gm, '$1 ');
    if (/^(?:export|import)\b/m.test(text)) throw new Error(`build.mjs: ${file} has an import or export form the bundler does not translate`);
    for (const [, name] of text.matchAll(declRe)) {
      if (declared.has(name)) throw new Error(`build.mjs: ${name} is declared in ${declared.get(name)} and ${file}`);
      declared.set(name, file);
    }
    parts.push(`// ---- ${file.slice(src.length + 1)} ${'-'.repeat(Math.max(0, 90 - file.length + src.length))}\n${text}`);
  }
  if (!/^export function createApi\b/m.test(sources.get(entry))) throw new Error('build.mjs: src/api.mjs must export createApi');
  names.push('createApi');
  return { code: parts.join('\n'), names };
}
