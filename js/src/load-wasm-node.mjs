// How the Node entries (node-wasm.mjs, node-verify.mjs) instantiate their WebAssembly module:
// Node's fetch() cannot read file: URLs, so the bytes come from disk. Node-only: the browser
// entries load through load-wasm-browser.mjs and never import this module (issue 28).
import { readFile } from 'node:fs/promises';

export async function loadWasm(init, url) {
  await init({ module_or_path: await readFile(url) });
}
