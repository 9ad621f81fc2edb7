//! Agent authentication (§6.3): the classes of `missionweaveprotocol_ffi::auth` (sans-IO: every
//! rule is the core's), with the browser's randomness (`crypto.getRandomValues`) for
//! challenge nonces and a secret when none is given. The same names and envelopes as the napi
//! addon.

use missionweaveprotocol_ffi::Held;
use missionweaveprotocol_ffi::auth::{self as ffi, Authority, KeyRegistry};
use wasm_bindgen::prelude::*;

use crate::random::WebRandom;

#[wasm_bindgen(js_name = authDefaultAgentKeyId)]
pub fn auth_default_agent_key_id(agent_id: &str) -> String {
    ffi::default_key_id(agent_id)
}

#[wasm_bindgen]
#[derive(Debug)]
pub struct AuthKeyRegistry(Held<KeyRegistry>);

impl Default for AuthKeyRegistry {
    fn default() -> Self {
        Self(Held::of(KeyRegistry::new()))
    }
}

#[wasm_bindgen]
impl AuthKeyRegistry {
    #[wasm_bindgen(constructor)]
    pub fn new() -> Self {
        Self::default()
    }

    pub fn register(
        &self,
        agent_id: &str,
        public_key: &[u8],
        key_id: Option<String>,
        valid_from: Option<f64>,
        valid_until: Option<f64>,
        revoked_at: Option<f64>,
    ) -> String {
        self.0.with(|r| {
            r.register(
                agent_id,
                public_key,
                key_id.as_deref(),
                valid_from,
                valid_until,
                revoked_at,
            )
        })
    }

    /// The 32 public-key bytes (a `Uint8Array`), or the error envelope (a string).
    pub fn resolve(&self, agent_id: &str, key_id: Option<String>, at: f64) -> JsValue {
        match self
            .0
            .get()
            .and_then(|r| r.resolve(agent_id, key_id.as_deref(), at))
        {
            Ok(bytes) => JsValue::from(bytes),
            Err(envelope) => JsValue::from_str(&envelope),
        }
    }

    #[wasm_bindgen(js_name = matchesRegisteredPublicKey)]
    pub fn matches_registered_public_key(
        &self,
        agent_id: &str,
        key_id: &str,
        public_key_bytes: &[u8],
    ) -> String {
        self.0
            .with(|r| r.matches_registered_public_key(agent_id, key_id, public_key_bytes))
    }

    pub fn revoke(&self, agent_id: &str, key_id: &str, revoked_at: f64) -> String {
        self.0.with(|r| r.revoke(agent_id, key_id, revoked_at))
    }
}

#[wasm_bindgen]
#[derive(Debug)]
pub struct AuthSessionAuthority(Held<Authority>);

#[wasm_bindgen]
impl AuthSessionAuthority {
    #[wasm_bindgen(constructor)]
    pub fn new(
        registry: &AuthKeyRegistry,
        secret: Option<Vec<u8>>,
        challenge_ttl_ms: Option<f64>,
        session_ttl_ms: Option<f64>,
    ) -> Self {
        Self(match registry.0.get() {
            Ok(registry) => Held::made(Authority::new(
                registry,
                secret.as_deref(),
                challenge_ttl_ms,
                session_ttl_ms,
                Box::new(WebRandom),
            )),
            Err(envelope) => Held::refused(envelope),
        })
    }

    pub fn status(&self) -> String {
        self.0.status()
    }

    #[wasm_bindgen(js_name = issueChallenge)]
    pub fn issue_challenge(
        &self,
        agent_id: &str,
        key_id: Option<String>,
        client_nonce: Option<String>,
        protocol_version: &str,
        now: f64,
    ) -> String {
        self.0.with(|a| {
            a.issue_challenge(
                agent_id,
                key_id.as_deref(),
                client_nonce.as_deref(),
                protocol_version,
                now,
            )
        })
    }

    #[wasm_bindgen(js_name = openSession)]
    pub fn open_session(&self, challenge_id: &str, signature: &str, now: f64) -> String {
        self.0
            .with(|a| a.open_session(challenge_id, signature, now))
    }

    #[wasm_bindgen(js_name = verifySession)]
    pub fn verify_session(&self, token: &str, now: f64) -> String {
        self.0.with(|a| a.verify_session(token, now))
    }

    #[wasm_bindgen(js_name = synchronizeEpoch)]
    pub fn synchronize_epoch(
        &self,
        agent_id: &str,
        authoritative_epoch: f64,
        key_id: Option<String>,
    ) -> String {
        self.0
            .with(|a| a.synchronize_epoch(agent_id, authoritative_epoch, key_id.as_deref()))
    }

    #[wasm_bindgen(js_name = currentEpoch)]
    pub fn current_epoch(&self, agent_id: &str) -> String {
        self.0.with(|a| a.current_epoch(agent_id))
    }
}
