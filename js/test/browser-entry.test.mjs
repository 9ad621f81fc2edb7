// The browser and default entries import nothing from Node (issue 28): a bundler externalizes a
// `node:` import with a warning and the page then fails where it is reached. The module graph
// of each browser-facing entry is scanned (test/module-graph.mjs); the Node twins are scanned
// too, as the check's positive control (they do read the module from disk).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { DIST, JS } from './support.mjs';
import { moduleGraph, nodeOnlyImports } from './module-graph.mjs';

const pkg = JSON.parse(readFileSync(join(JS, 'package.json'), 'utf8'));
const browserEntries = [
  pkg.exports['.'].browser.default, pkg.exports['.'].default.import.default,
  pkg.exports['./wasm'].browser.default, pkg.exports['./wasm'].import.default,
  pkg.exports['./verify'].browser, pkg.exports['./verify'].default,
];

test('every browser and default ES module entry of package.json is free of Node imports', () => {
  assert.deepEqual([...new Set(browserEntries)].sort(), ['./dist/verify.mjs', './dist/wasm.mjs']);
  for (const entry of new Set(browserEntries)) {
    const graph = moduleGraph(join(JS, entry));
    // The graph reaches the wasm-bindgen glue and the API bundle, so the scan saw the real code.
    assert.ok(graph.size >= 4, `${entry}: ${[...graph.keys()].join(', ')}`);
    assert.deepEqual(nodeOnlyImports(join(JS, entry)), [], entry);
  }
});

test('the pages import only browser entries', () => {
  for (const page of ['page/verifier.mjs', 'page/approve.mjs']) assert.deepEqual(nodeOnlyImports(join(JS, page)), [], page);
});

test('the Node twins do import node:fs/promises (the scan finds it through the loader module)', () => {
  for (const entry of ['node-wasm.mjs', 'node-verify.mjs']) {
    assert.deepEqual(nodeOnlyImports(join(DIST, entry)),
      [{ module: 'load-wasm-node.mjs', specifier: 'node:fs/promises', why: 'node: scheme' }], entry);
  }
});

test('each browser entry is its Node twin with the browser loader, nothing else', () => {
  for (const name of ['wasm.mjs', 'verify.mjs']) {
    const browser = readFileSync(join(DIST, name), 'utf8').split('\n');
    const node = readFileSync(join(DIST, `node-${name}`), 'utf8').split('\n');
    assert.equal(browser.length, node.length);
    const differ = browser.map((line, i) => [line, node[i]]).filter(([a, b]) => a !== b);
    assert.deepEqual(differ.map(([a]) => a.replace(/^\/\/.*/, '//')).filter((l) => l !== '//'),
      ["import { loadWasm } from './load-wasm-browser.mjs';"], name);
  }
});

test('the scan flags node: imports, bare built-ins, dynamic imports, require and other bare specifiers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mwp-graph-'));
  try {
    writeFileSync(join(dir, 'entry.mjs'), "import { a } from './a.mjs';\nexport * from './b.mjs';\nexport { a };\n");
    writeFileSync(join(dir, 'a.mjs'), "export const a = 1;\nconst fs = await import('node:fs/promises');\n");
    writeFileSync(join(dir, 'b.mjs'), "import path from 'path';\nimport 'ws';\nexport const b = require(\"fs\");\n");
    writeFileSync(join(dir, 'clean.mjs'), "import { a } from './ok.mjs';\nexport const url = new URL('./x.wasm', import.meta.url);\n");
    writeFileSync(join(dir, 'ok.mjs'), "// import fs from 'node:fs' (a comment)\n/* import('node:os') */\nexport const a = 1;\n");
    assert.deepEqual(nodeOnlyImports(join(dir, 'entry.mjs')), [
      { module: 'a.mjs', specifier: 'node:fs/promises', why: 'node: scheme' },
      { module: 'b.mjs', specifier: 'path', why: 'Node built-in' },
      { module: 'b.mjs', specifier: 'ws', why: 'bare specifier' },
      { module: 'b.mjs', specifier: 'fs', why: 'Node built-in' },
    ]);
    assert.deepEqual(nodeOnlyImports(join(dir, 'clean.mjs')), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
