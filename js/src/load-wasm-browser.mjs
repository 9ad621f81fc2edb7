// How the browser and default entries (wasm.mjs, verify.mjs) instantiate their WebAssembly
// module: wasm-bindgen's `web` glue fetches the URL and compiles it with
// WebAssembly.instantiateStreaming (served as application/wasm; it falls back to an ArrayBuffer
// otherwise). No Node built-in is imported here or anywhere below the browser entries (issue 28):
// a bundler (Vite, webpack) would externalize it and warn. Node reaches node-wasm.mjs and
// node-verify.mjs instead, through the package's `node` export condition.
export async function loadWasm(init, url) {
  try {
    await init({ module_or_path: url });
  } catch (error) {
    if (url.protocol !== 'file:') throw error;
    throw new Error(`missionweaveprotocol: ${url.href} cannot be fetched by this runtime; under Node import ` +
      `'missionweaveprotocol/wasm' (the package's node condition reads the module from disk)`, { cause: error });
  }
}
