//! The authoritative Core (`missionweaveprotocol_ffi::authority_core`), synchronous: a page or
//! worker runs one Group simulation on its own thread, and the JavaScript wrapper wraps each
//! answer in a Promise so the API is the napi addon's. Answers are envelope strings. The store
//! is always given: the wrapper makes (and frees) one when the caller shares none.

use missionweaveprotocol_ffi::authority_core::{CoreHandle, StoreHandle};
use wasm_bindgen::prelude::*;

use crate::Registry;
use crate::random::WebRandom;

/// The in-memory authoritative store, shareable between cores.
#[wasm_bindgen]
#[derive(Debug, Default)]
pub struct InMemoryStore(StoreHandle);

#[wasm_bindgen]
impl InMemoryStore {
    #[wasm_bindgen(constructor)]
    pub fn new() -> Self {
        Self::default()
    }
}

/// The authoritative core; construction never throws for bad options: `status()` reports them.
#[wasm_bindgen]
#[derive(Debug)]
pub struct Core(Result<CoreHandle, String>);

#[wasm_bindgen]
impl Core {
    #[wasm_bindgen(constructor)]
    pub fn new(
        options: &str,
        registry: &Registry,
        seed: &[u8],
        key_id: &str,
        store: &InMemoryStore,
    ) -> Self {
        Self(CoreHandle::new(
            options,
            &registry.0,
            seed,
            key_id,
            &store.0,
            Box::new(WebRandom),
        ))
    }

    pub fn status(&self) -> String {
        match &self.0 {
            Ok(_) => r#"{"ok":null}"#.to_owned(),
            Err(envelope) => envelope.clone(),
        }
    }

    pub fn perform(&self, bytes: &[u8], now: f64) -> String {
        self.0
            .as_ref()
            .map_or_else(Clone::clone, |core| core.perform(bytes, now))
    }

    pub fn query(&self, query: &str, now: f64) -> String {
        self.0
            .as_ref()
            .map_or_else(Clone::clone, |core| core.query(query, now))
    }

    pub fn replay(&self, group_id: &str, after: f64, limit: f64) -> String {
        self.0
            .as_ref()
            .map_or_else(Clone::clone, |core| core.replay(group_id, after, limit))
    }
}
