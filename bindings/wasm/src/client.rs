//! The sans-IO client session (`missionweaveprotocol_ffi::client`, over
//! `missionweaveprotocol-gateway::client::Session`) for the browser `AgentClient`
//! (`js/src/api/client.mjs` with the page's `WebSocket`): bytes in, frames and `{kind, …}`
//! events out, every Event verified here in wasm (six stages, Group Authority signer). The same
//! names and envelopes as the napi addon's `ClientSession`; `crypto.getRandomValues` is the
//! randomness (frame IDs, the HELLO nonce).

use missionweaveprotocol_ffi::client::ClientSessionHandle;
use wasm_bindgen::prelude::*;

use crate::Registry;
use crate::random::WebRandom;

/// One connection's client session; the constructor never throws: `status()` reports it.
#[wasm_bindgen]
#[derive(Debug)]
pub struct ClientSession(ClientSessionHandle);

#[wasm_bindgen]
impl ClientSession {
    #[wasm_bindgen(constructor)]
    pub fn new(
        agent_id: &str,
        registry: &Registry,
        authority_id: &str,
        key_id: &str,
        seed: &[u8],
        command_timeout_ms: Option<f64>,
    ) -> Self {
        Self(ClientSessionHandle::new(
            agent_id,
            &registry.0,
            authority_id,
            key_id,
            seed,
            command_timeout_ms,
            Box::new(WebRandom),
        ))
    }

    pub fn status(&self) -> String {
        self.0.status()
    }

    pub fn start(&mut self, now: f64) -> String {
        self.0.start(now)
    }

    pub fn subscribe(&mut self, groups: &str, now: f64) -> String {
        self.0.subscribe(groups, now)
    }

    #[wasm_bindgen(js_name = sendCommand)]
    pub fn send_command(&mut self, command: &[u8], now: f64) -> String {
        self.0.send_command(command, now)
    }

    pub fn acknowledge(&mut self, group_id: &str, sequence: f64, now: f64) -> String {
        self.0.acknowledge(group_id, sequence, now)
    }

    pub fn ping(&mut self, presence: Option<String>, now: f64) -> String {
        self.0.ping(presence.as_deref(), now)
    }

    #[wasm_bindgen(js_name = onTick)]
    pub fn on_tick(&mut self, now: f64) {
        self.0.on_tick(now);
    }

    #[wasm_bindgen(js_name = onText)]
    pub fn on_text(&mut self, data: &[u8], now: f64) -> String {
        self.0.on_text(data, now)
    }

    /// The frames to send, in order (texts).
    #[wasm_bindgen(js_name = pollOutput)]
    pub fn poll_output(&mut self) -> Vec<String> {
        self.0.poll_output()
    }

    #[wasm_bindgen(js_name = pollEvents)]
    pub fn poll_events(&mut self) -> String {
        self.0.poll_events()
    }

    #[wasm_bindgen(js_name = setVisibilityStart)]
    pub fn set_visibility_start(&mut self, group_id: &str, start: f64) -> String {
        self.0.set_visibility_start(group_id, start)
    }

    pub fn cursors(&mut self) -> String {
        self.0.cursors()
    }

    pub fn buffered(&self, group_id: &str) -> u32 {
        self.0.buffered(group_id)
    }

    #[wasm_bindgen(js_name = isAuthenticated)]
    pub fn is_authenticated(&self) -> bool {
        self.0.is_authenticated()
    }

    #[wasm_bindgen(js_name = sessionEpoch)]
    pub fn session_epoch(&self) -> Option<f64> {
        self.0.session_epoch()
    }

    #[wasm_bindgen(js_name = pendingCommands)]
    pub fn pending_commands(&self) -> u32 {
        self.0.pending_commands()
    }
}
