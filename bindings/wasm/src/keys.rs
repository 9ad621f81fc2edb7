//! Keys, Registry evidence for one's own Agents, and the failure-reason table
//! (`missionweaveprotocol_ffi::keys`, `missionweaveprotocol_ffi::reasons`).

use missionweaveprotocol_ffi::{keys, reasons};
use wasm_bindgen::prelude::*;

/// `{keyId, algorithm, publicKey}` of the key made from a host-drawn 32-byte seed.
#[wasm_bindgen(js_name = keyInfo)]
pub fn key_info(key_id: &str, seed: &[u8]) -> String {
    keys::key_info(key_id, seed)
}

#[wasm_bindgen(js_name = base64urlEncode)]
pub fn base64url_encode(bytes: &[u8]) -> String {
    keys::encode(bytes)
}

#[wasm_bindgen(js_name = base64urlDecode)]
pub fn base64url_decode(text: &str, length: u32, what: &str) -> String {
    keys::decode(text, length, what)
}

#[wasm_bindgen(js_name = failureReasons)]
pub fn failure_reasons() -> String {
    reasons::failure_reasons()
}

#[wasm_bindgen(js_name = explainFailure)]
pub fn explain_failure(stage: &str, reason: &str) -> String {
    reasons::explain_failure(stage, reason)
}

/// Registry evidence under construction (`RegistryBuilder` of the core).
#[wasm_bindgen]
#[derive(Debug)]
pub struct RegistryBuilder(keys::RegistryBuilderHandle);

#[wasm_bindgen]
impl RegistryBuilder {
    #[wasm_bindgen(constructor)]
    pub fn new(organization_id: &str) -> Self {
        Self(keys::RegistryBuilderHandle::new(organization_id))
    }

    #[wasm_bindgen(js_name = addKey)]
    pub fn add_key(
        &mut self,
        key_id: &str,
        principal_type: &str,
        principal_id: &str,
        public_key: &[u8],
        valid_from: &str,
        history: &str,
    ) -> String {
        self.0.add_key(
            key_id,
            principal_type,
            principal_id,
            public_key,
            valid_from,
            history,
        )
    }

    pub fn build(&self) -> String {
        self.0.build()
    }
}
