//! Keys, Registry evidence for one's own Agents, and the failure-reason table
//! (`missionweaveprotocol_ffi::keys`, `missionweaveprotocol_ffi::reasons`).

use missionweaveprotocol_ffi::{keys, reasons};
use napi_derive::napi;

use crate::freed;

/// `{keyId, algorithm, publicKey}` of the key made from a host-drawn 32-byte seed.
#[napi(catch_unwind)]
pub fn key_info(key_id: String, seed: &[u8]) -> String {
    keys::key_info(&key_id, seed)
}

#[napi(catch_unwind, js_name = "base64urlEncode")]
pub fn base64url_encode(bytes: &[u8]) -> String {
    keys::encode(bytes)
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
pub struct RegistryBuilder(Option<keys::RegistryBuilderHandle>);

#[napi]
impl RegistryBuilder {
    #[napi(constructor)]
    pub fn new(organization_id: String) -> Self {
        Self(Some(keys::RegistryBuilderHandle::new(&organization_id)))
    }

    #[napi(catch_unwind)]
    pub fn add_key(
        &mut self,
        key_id: String,
        principal_type: String,
        principal_id: String,
        public_key: &[u8],
        valid_from: String,
        history: String,
    ) -> String {
        let Some(builder) = self.0.as_mut() else {
            return freed("RegistryBuilder");
        };
        builder.add_key(
            &key_id,
            &principal_type,
            &principal_id,
            public_key,
            &valid_from,
            &history,
        )
    }

    #[napi(catch_unwind)]
    pub fn build(&self) -> String {
        self.0.as_ref().map_or_else(
            || freed("RegistryBuilder"),
            keys::RegistryBuilderHandle::build,
        )
    }

    /// Drops the keys added so far now (idempotent).
    #[napi(catch_unwind)]
    pub fn free(&mut self) {
        self.0 = None;
    }
}
