//! The host's randomness in a browser or worker: `crypto.getRandomValues` (the Web Crypto API,
//! also in Node.js ≥ 19), passed to every core object that draws random bytes (Event IDs,
//! HELLO challenge nonces, token and grant IDs, a secret when none is given).

use missionweaveprotocol_ffi::authority_core::{RandomSource, RandomUnavailable};
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = crypto, js_name = getRandomValues, catch)]
    fn get_random_values(buffer: &mut [u8]) -> Result<JsValue, JsValue>;
}

/// `crypto.getRandomValues` (at most 65,536 bytes a call); a throwing or missing source is
/// [`RandomUnavailable`], which refuses the operation.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct WebRandom;

impl RandomSource for WebRandom {
    fn fill(&mut self, out: &mut [u8]) -> Result<(), RandomUnavailable> {
        for chunk in out.chunks_mut(65_536) {
            get_random_values(chunk).map_err(|_| RandomUnavailable)?;
        }
        Ok(())
    }
}
