//! Leases, budget ledger, Delegation Grants, retries and the Scheduler behind one handle.

use wasm_bindgen::prelude::*;

/// A stateful core object: a lease, the budget ledger, a Delegation Grant's authority, a retry
/// controller or a Scheduler (see `missionweaveprotocol_ffi::Handle`). Arguments are JSON
/// arrays; results are envelopes.
#[wasm_bindgen]
#[derive(Debug)]
pub struct Handle(missionweaveprotocol_ffi::Handle);

#[wasm_bindgen]
impl Handle {
    #[wasm_bindgen(constructor)]
    pub fn new(class: &str, mode: &str, args: &str) -> Self {
        Self(missionweaveprotocol_ffi::Handle::new(class, mode, args))
    }

    pub fn status(&self) -> String {
        self.0.status()
    }

    pub fn call(&mut self, method: &str, args: &str) -> String {
        self.0.call(method, args)
    }

    pub fn schedule(&mut self, now: f64) -> String {
        self.0.schedule(now)
    }

    pub fn apply(&mut self, work_id: &str, transition: &str, now: f64) -> String {
        self.0.apply(work_id, transition, now)
    }
}

#[wasm_bindgen(js_name = callFunction)]
pub fn call_function(method: &str, args: &str) -> String {
    missionweaveprotocol_ffi::call_function(method, args)
}

/// The `context` module (`missionweaveprotocol_ffi::context::call`); `seed` empty: no key.
#[wasm_bindgen(js_name = contextCall)]
pub fn context_call(method: &str, args: &str, key_id: &str, seed: &[u8]) -> String {
    let key = (!seed.is_empty()).then_some((key_id, seed));
    missionweaveprotocol_ffi::context::call(method, args, key)
}
