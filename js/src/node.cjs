'use strict';
// Node entry (CommonJS): the napi-rs addon built for this platform.
const api = require('./api.cjs');

const addon = `./missionweaveprotocol.${process.platform}-${process.arch}.node`;
let raw;
try {
  raw = require(addon);
} catch (error) {
  throw new Error(`missionweaveprotocol: no native addon for ${process.platform}-${process.arch} ` +
    `(${addon}); import 'missionweaveprotocol/wasm' to use the WebAssembly build`, { cause: error });
}

const { createApi, ...shared } = api;
// `ws` is loaded when a GroupGateway or AgentClient is first made (Node only).
module.exports = { ...shared, ...createApi(raw, 'napi', { loadWs: () => require('ws') }) };
