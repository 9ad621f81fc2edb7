//! Agent authentication and Session Epoch fencing (§6.3, digest §2.10), sans-IO.
//!
//! | item | what |
//! | --- | --- |
//! | [`AgentKeyRegistry`] | Organization-registered Agent keys; validity and earliest revocation (digest §2.18) |
//! | [`Challenge`] | one-use HELLO challenge and its canonical signing transcript |
//! | [`SessionAuthority`] | challenges, HMAC-SHA256 session tokens, per-Agent Session Epochs |
//! | [`Handshake`] | one connection's `HELLO` phases (`client_init` … `server_accept`) |
//! | [`AuthError`] | the refusals, each with its §19 wire code |
//!
//! Challenge signatures are checked with the strict Ed25519 rules of §6.4 (the verification
//! crate's `crypto`), never a permissive verifier. MACs and key material are compared in
//! constant time. No secret, token or MAC appears in an error or a `Debug` rendering.

mod challenge;
mod error;
mod handshake;
mod registry;
mod session;
mod token;

pub use challenge::Challenge;
pub use error::AuthError;
pub use handshake::{ClientInit, ClientResponse, Handshake, HelloPhase};
pub use registry::{AgentKeyRegistry, KeyValidity, RegisteredKey, default_agent_key_id};
pub use session::{MAX_SESSION_EPOCH, SessionAuthority, SessionConfig, SessionGrant};
pub use token::{MAX_TOKEN_CHARS, MIN_SECRET_BYTES};
