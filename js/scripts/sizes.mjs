// Sizes of the two WebAssembly modules in dist/, raw and gzipped (level 9, what a static
// server's precompressed .gz would hold). The verify-only module's budget is 300 KB gzipped.
//
//   node js/scripts/sizes.mjs          prints one JSON line per module
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';

const dist = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), 'dist');

export const VERIFY_BUDGET_GZIP = 300 * 1024;

export const MODULES = {
  full: join(dist, 'wasm-web', 'missionweaveprotocol_wasm_bg.wasm'),
  verify: join(dist, 'wasm-verify', 'missionweaveprotocol_wasm_verify_bg.wasm'),
};

/** `{name, bytes, gzipBytes}` of each module. */
export function moduleSizes() {
  return Object.entries(MODULES).map(([name, path]) => {
    const bytes = readFileSync(path);
    return { name, bytes: bytes.length, gzipBytes: gzipSync(bytes, { level: 9 }).length };
  });
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const size of moduleSizes()) {
    console.log(JSON.stringify({ ...size, gzipKiB: Math.round(size.gzipBytes / 102.4) / 10 }));
  }
}
