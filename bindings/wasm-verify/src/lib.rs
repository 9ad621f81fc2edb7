//! The verify-only WebAssembly build (package entry `missionweaveprotocol/verify`) for pages that
//! only check signatures: strict JSON, RFC 8785, schemas, the six stages of §6.4, Registry
//! evidence and one's own keys, frames, the failure-reason table. The embedded conformance
//! bundles, admission and the bounded-authority objects are not compiled in (the `full` feature
//! of `missionweaveprotocol-wasm` is off), which keeps the module small.

pub use missionweaveprotocol_wasm::*;
