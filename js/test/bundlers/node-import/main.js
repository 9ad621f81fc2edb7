// The check's negative control: the Node-only WebAssembly entry (by path, past the package's
// exports) reads the module with node:fs/promises, so Vite must warn that it externalized it.
import * as full from '../node_modules/missionweaveprotocol/dist/node-wasm.mjs';

window.__mwp = full;
