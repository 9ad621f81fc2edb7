//! Agent authentication (§6.3) for the package's `AgentKeyRegistry`, `SessionAuthority` and
//! `defaultAgentKeyId`: the classes of `missionweaveprotocol_ffi::auth`, which checks every
//! argument and holds every rule. The host's randomness is the operating system's
//! (`OsRandom`). `free()` drops the native state at once (an authority's secret with it); an
//! authority keeps the registry it was built on.

use missionweaveprotocol_ffi::Held;
use missionweaveprotocol_ffi::auth::{self as ffi, Authority, KeyRegistry};
use missionweaveprotocol_host::OsRandom;
use napi::bindgen_prelude::{Buffer, Either};
use napi_derive::napi;

/// `defaultAgentKeyId(agentId)`: `urn:missionweaveprotocol:key:<last path or colon segment>`.
#[napi(catch_unwind)]
pub fn auth_default_agent_key_id(agent_id: String) -> String {
    ffi::default_key_id(&agent_id)
}

/// The Organization's Agent keys.
#[napi]
#[derive(Debug)]
pub struct AuthKeyRegistry(Held<KeyRegistry>);

impl Default for AuthKeyRegistry {
    fn default() -> Self {
        Self(Held::of(KeyRegistry::new()))
    }
}

#[napi]
impl AuthKeyRegistry {
    #[napi(constructor)]
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers 32 public-key bytes for the Agent (default key ID when `keyId` is absent).
    #[napi(catch_unwind)]
    pub fn register(
        &self,
        agent_id: String,
        public_key: &[u8],
        key_id: Option<String>,
        valid_from: Option<f64>,
        valid_until: Option<f64>,
        revoked_at: Option<f64>,
    ) -> String {
        self.0.with(|r| {
            r.register(
                &agent_id,
                public_key,
                key_id.as_deref(),
                valid_from,
                valid_until,
                revoked_at,
            )
        })
    }

    /// The 32 public-key bytes of the Agent's key valid at `at`, or the error envelope.
    #[napi(catch_unwind)]
    pub fn resolve(
        &self,
        agent_id: String,
        key_id: Option<String>,
        at: f64,
    ) -> Either<Buffer, String> {
        match self
            .0
            .get()
            .and_then(|r| r.resolve(&agent_id, key_id.as_deref(), at))
        {
            Ok(bytes) => Either::A(bytes.into()),
            Err(envelope) => Either::B(envelope),
        }
    }

    /// Whether the bytes are the key's registered material (constant-time comparison).
    #[napi(catch_unwind)]
    pub fn matches_registered_public_key(
        &self,
        agent_id: String,
        key_id: String,
        public_key_bytes: &[u8],
    ) -> String {
        self.0
            .with(|r| r.matches_registered_public_key(&agent_id, &key_id, public_key_bytes))
    }

    /// Revokes the key from `revokedAt`; the earliest revocation is kept.
    #[napi(catch_unwind)]
    pub fn revoke(&self, agent_id: String, key_id: String, revoked_at: f64) -> String {
        self.0.with(|r| r.revoke(&agent_id, &key_id, revoked_at))
    }

    /// Drops this handle on the keys now (idempotent); authorities built on them keep theirs.
    #[napi(catch_unwind)]
    pub fn free(&mut self) {
        self.0.free("AgentKeyRegistry");
    }
}

/// Challenges, session tokens and per-Agent Session Epochs. The constructor never throws:
/// `status()` is the envelope of the construction (a refused configuration, a freed registry).
#[napi]
#[derive(Debug)]
pub struct AuthSessionAuthority(Held<Authority>);

impl AuthSessionAuthority {
    /// The authority, or the envelope of why there is none (refused, freed).
    pub(crate) fn held(&self) -> Result<&Authority, String> {
        self.0.get()
    }
}

#[napi]
impl AuthSessionAuthority {
    /// `secret`: at least 32 bytes (32 random bytes when absent); lifetimes in milliseconds
    /// (the core's defaults when absent).
    #[napi(constructor, catch_unwind)]
    pub fn new(
        registry: &AuthKeyRegistry,
        secret: Option<&[u8]>,
        challenge_ttl_ms: Option<f64>,
        session_ttl_ms: Option<f64>,
    ) -> Self {
        Self(match registry.0.get() {
            Ok(registry) => Held::made(Authority::new(
                registry,
                secret,
                challenge_ttl_ms,
                session_ttl_ms,
                Box::new(OsRandom),
            )),
            Err(envelope) => Held::refused(envelope),
        })
    }

    /// `{"ok":null}`, or why the construction was refused.
    #[napi(catch_unwind)]
    pub fn status(&self) -> String {
        self.0.status()
    }

    /// A fresh one-use challenge for the Agent's registered, currently valid key.
    #[napi(catch_unwind)]
    pub fn issue_challenge(
        &self,
        agent_id: String,
        key_id: Option<String>,
        client_nonce: Option<String>,
        protocol_version: String,
        now: f64,
    ) -> String {
        self.0.with(|a| {
            a.issue_challenge(
                &agent_id,
                key_id.as_deref(),
                client_nonce.as_deref(),
                &protocol_version,
                now,
            )
        })
    }

    /// Spends the challenge; a valid signature (base64url) opens a session at the next epoch.
    #[napi(catch_unwind)]
    pub fn open_session(&self, challenge_id: String, signature: String, now: f64) -> String {
        self.0
            .with(|a| a.open_session(&challenge_id, &signature, now))
    }

    /// The session `token` proves: MAC, expiry, current epoch, key still valid.
    #[napi(catch_unwind)]
    pub fn verify_session(&self, token: String, now: f64) -> String {
        self.0.with(|a| a.verify_session(&token, now))
    }

    /// Adopts the authoritative Core's epoch (never lowers it).
    #[napi(catch_unwind)]
    pub fn synchronize_epoch(
        &self,
        agent_id: String,
        authoritative_epoch: f64,
        key_id: Option<String>,
    ) -> String {
        self.0
            .with(|a| a.synchronize_epoch(&agent_id, authoritative_epoch, key_id.as_deref()))
    }

    /// The Agent's current Session Epoch (0 before its first session).
    #[napi(catch_unwind)]
    pub fn current_epoch(&self, agent_id: String) -> String {
        self.0.with(|a| a.current_epoch(&agent_id))
    }

    /// Drops the authority (its secret, challenges and epochs) now (idempotent).
    #[napi(catch_unwind)]
    pub fn free(&mut self) {
        self.0.free("SessionAuthority");
    }
}
