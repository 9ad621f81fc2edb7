//! Keys, Registry evidence for one's own Agents, and the failure-reason table
//! (`missionweaveprotocol_ffi::keys`, `missionweaveprotocol_ffi::reasons`).

use missionweaveprotocol_ffi::{keys, reasons};
use napi::bindgen_prelude::Uint8Array;
use napi_derive::napi;

/// `{keyId, algorithm, publicKey}` of the key made from a host-drawn 32-byte seed.
#[napi(catch_unwind)]
pub fn key_info(key_id: String, seed: Uint8Array) -> String {
    keys::key_info(&key_id, &seed)
}

#[napi(catch_unwind, js_name = "base64urlEncode")]
pub fn base64url_encode(bytes: Uint8Array) -> String {
    keys::encode(&bytes)
}

#[napi(catch_unwind, js_name = "base64urlDecode")]
pub fn base64url_decode(text: String, length: u32, what: String) -> String {
    keys::decode(&text, length, &what)
}

#[napi(catch_unwind)]
pub fn failure_reasons() -> String {
    reasons::failure_reasons()
}

#[napi(catch_unwind)]
pub fn explain_failure(stage: String, reason: String) -> String {
    reasons::explain_failure(&stage, &reason)
}

/// Registry evidence under construction (`RegistryBuilder` of the core).
#[napi]
#[derive(Debug)]
pub struct RegistryBuilder(keys::RegistryBuilderHandle);

#[napi]
impl RegistryBuilder {
    #[napi(constructor)]
    pub fn new(organization_id: String) -> Self {
        Self(keys::RegistryBuilderHandle::new(&organization_id))
    }

    #[napi(catch_unwind)]
    pub fn add_key(
        &mut self,
        key_id: String,
        principal_type: String,
        principal_id: String,
        public_key: Uint8Array,
        valid_from: String,
        history: String,
    ) -> String {
        self.0.add_key(
            &key_id,
            &principal_type,
            &principal_id,
            &public_key,
            &valid_from,
            &history,
        )
    }

    #[napi(catch_unwind)]
    pub fn build(&self) -> String {
        self.0.build()
    }
}
