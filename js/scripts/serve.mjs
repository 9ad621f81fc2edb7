// A static server for the verifier page: js/ at /, the protocol bundle at /bundle/, the golden
// vectors (tests/vectors/) at /vectors/. Loopback only, no directory listings, nothing outside
// the three roots.
//
//   node js/scripts/serve.mjs [--port N]     then open http://127.0.0.1:N/page/
//   MWP_PROTOCOL_ROOT=/path/to/protocol node js/scripts/serve.mjs
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const JS = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const TYPES = {
  '.html': 'text/html; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json', '.wasm': 'application/wasm', '.bin': 'application/octet-stream',
  '.jcs': 'application/json', '.md': 'text/plain; charset=utf-8', '.png': 'image/png',
  '.jsonl': 'application/jsonl; charset=utf-8',
};

function inside(root, path) {
  const full = resolve(root, `.${sep}${path}`);
  return full === root || full.startsWith(root + sep) ? full : null;
}

/**
 * Starts the server; resolves to `{ url, close() }`. `root` is what `/` serves (js/ by default;
 * browser-bundlers.test.mjs serves a scratch consumer project, its node_modules included).
 */
export function startServer({
  port = 0,
  root: siteRoot = JS,
  bundle = process.env.MWP_PROTOCOL_ROOT ?? join(JS, '..', '..', 'shared', 'protocol'),
  vectors = process.env.MWP_VECTORS_DIR ?? join(JS, '..', 'tests', 'vectors'),
} = {}) {
  const siteDir = resolve(siteRoot);
  const bundleRoot = resolve(bundle);
  const vectorsRoot = resolve(vectors);
  const server = createServer((request, response) => {
    let path;
    try {
      path = decodeURIComponent(new URL(request.url, 'http://localhost').pathname);
    } catch {
      response.writeHead(400).end();
      return;
    }
    if (path === '/') {
      response.writeHead(302, { location: '/page/' }).end();
      return;
    }
    const [root, rest] = path.startsWith('/bundle/') ? [bundleRoot, path.slice('/bundle/'.length)]
      : path.startsWith('/vectors/') ? [vectorsRoot, path.slice('/vectors/'.length)] : [siteDir, path.slice(1)];
    let file = inside(root, rest);
    if (file && path.endsWith('/')) file = join(file, 'index.html');
    let stat;
    try { stat = file && statSync(file); } catch { stat = null; }
    if (!stat?.isFile() || (root === JS && /(^|\/)(node_modules|\.)/.test(rest))) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    response.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
    createReadStream(file).pipe(response);
  });
  return new Promise((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const url = `http://127.0.0.1:${server.address().port}`;
      resolvePromise({ url, close: () => new Promise((done) => server.close(done)) });
    });
  });
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const flag = process.argv.indexOf('--port');
  const { url } = await startServer({ port: flag >= 0 ? Number(process.argv[flag + 1]) : 8080 });
  console.log(`verifier page: ${url}/page/  (bundle at ${url}/bundle/)`);
}
