'use strict';
// Node entry (CommonJS): the napi-rs addon for this platform (the optional per-platform package,
// or one built in place: native-loader.cjs), else the WebAssembly build, which runs anywhere
// (issue 28). `backend` says which one answered.
const api = require('./api.cjs');
const { hostTriple, loadNative } = require('./native-loader.cjs');

const native = loadNative(hostTriple(), require);
if (native.raw === null) {
  // Why no addon loaded: NODE_DEBUG=missionweaveprotocol prints each candidate's failure.
  require('node:util').debuglog('missionweaveprotocol')(`no napi addon (${native.tried.join('; ')}): WebAssembly`);
}
const { createApi, ...shared } = api;
// `ws` is loaded when a GroupGateway or AgentClient is first made (Node only).
const host = { loadWs: () => require('ws') };
module.exports = native.raw !== null
  ? { ...shared, ...createApi(native.raw, 'napi', host) }
  : { ...shared, ...createApi(require('./wasm-node/missionweaveprotocol_wasm.js'), 'wasm', host) };
