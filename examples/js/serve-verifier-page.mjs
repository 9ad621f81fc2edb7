// The verifier page in a browser: it ships in the package (page/) and loads the verify-only
// WebAssembly build (dist/verify.mjs). This serves the installed package on 127.0.0.1; open the
// printed URL, paste a signed document and a Registry snapshot (e.g. from own-keys.mjs).
// In your own page: `import { verifySignedDocument, Registry } from '<package>/dist/verify.mjs'`
// (or `missionweaveprotocol/verify` with a bundler); .wasm must be served as application/wasm.
//
//   npm install missionweaveprotocol && node serve-verifier-page.mjs [--port 8080] [--check]
//   --check: fetch the page and the module once, print what was served, and exit.
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(fileURLToPath(import.meta.resolve('missionweaveprotocol/package.json')));
const types = { '.html': 'text/html', '.mjs': 'text/javascript', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm' };
const port = process.argv.includes('--port') ? Number(process.argv[process.argv.indexOf('--port') + 1]) : 0;

const server = createServer((request, response) => {
  const path = decodeURIComponent(new URL(request.url, 'http://localhost').pathname);
  let file = resolve(root, `.${sep}${path}`);
  if (path.endsWith('/')) file = join(file, 'index.html');
  const allowed = file.startsWith(join(root, 'page') + sep) || file.startsWith(join(root, 'dist') + sep);
  let found = false;
  try { found = allowed && statSync(file).isFile(); } catch { /* missing */ }
  if (!found) {
    response.writeHead(404).end('not found');
    return;
  }
  response.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream' });
  createReadStream(file).pipe(response);
});
await new Promise((done) => server.listen(port, '127.0.0.1', done));
const url = `http://127.0.0.1:${server.address().port}`;
console.log(`verifier page: ${url}/page/`);

if (process.argv.includes('--check')) {
  for (const path of ['/page/', '/page/verifier.mjs', '/dist/verify.mjs', '/dist/wasm-verify/missionweaveprotocol_wasm_verify_bg.wasm']) {
    const response = await fetch(url + path);
    const body = new Uint8Array(await response.arrayBuffer());
    console.log(`${path}: ${response.status} ${response.headers.get('content-type')}${body.length > 0 ? '' : ' (empty)'}`);
  }
  server.close();
}
