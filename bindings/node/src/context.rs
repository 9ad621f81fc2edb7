//! The `context` module (Context Packages, knowledge publications, Group Snapshots) for Node:
//! one call with the JSON arguments `missionweaveprotocol_agent::context::call` reads.

use napi_derive::napi;

/// The `context` module (`missionweaveprotocol_ffi::context::call`); an empty `seed`: no key.
#[napi(catch_unwind)]
pub fn context_call(method: String, args: String, key_id: String, seed: &[u8]) -> String {
    let key = (!seed.is_empty()).then_some((key_id.as_str(), seed));
    missionweaveprotocol_ffi::context::call(&method, &args, key)
}
