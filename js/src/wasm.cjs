'use strict';
// WebAssembly entry (CommonJS, Node): wasm-bindgen's nodejs output loads the module synchronously.
const api = require('./api.cjs');
const raw = require('./wasm-node/missionweaveprotocol_wasm.js');

const { createApi, ...shared } = api;
module.exports = { ...shared, ...createApi(raw, 'wasm') };
