//! Agent authentication (§6.3): the core's `auth` module as napi classes with the reference's
//! API in camelCase — `AgentKeyRegistry`, `SessionAuthority`, `defaultAgentKeyId`.
//!
//! Unlike the envelope calls of this addon, these return plain objects and throw: a refusal is
//! an `Error` whose `code` is the §19 wire code and whose message starts with the core's
//! reason slug (`"stale_session: the Session Epoch is fenced"`). No message names a secret,
//! token, MAC or signature. Instants are Unix milliseconds (`Date.now()`); an omitted `now` is
//! the system clock. The registry is shared: a `SessionAuthority` sees later registrations and
//! revocations.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use missionweaveprotocol_authority::auth::{
    AgentKeyRegistry as CoreRegistry, AuthError, Challenge as CoreChallenge, KeyValidity,
    MAX_SESSION_EPOCH, OsNonces, SessionAuthority as CoreAuthority, SessionConfig,
    SessionGrant as CoreGrant, default_agent_key_id,
};
use missionweaveprotocol_authority::unix_millis::UnixMillis;
use napi::bindgen_prelude::Buffer;
use napi_derive::napi;

fn refusal(error: &AuthError) -> napi::Error<String> {
    napi::Error::new(
        error.code().as_str().to_owned(),
        format!("{}: {error}", error.reason()),
    )
}

/// API misuse (`PROTOCOL_VIOLATION`, reason `invalid_argument`), as the core reports it.
fn misuse(what: &str) -> napi::Error<String> {
    let code = AuthError::InvalidArgument("").code();
    napi::Error::new(
        code.as_str().to_owned(),
        format!("invalid_argument: {what}"),
    )
}

fn locked<T>(mutex: &Mutex<T>) -> napi::Result<MutexGuard<'_, T>, String> {
    mutex
        .lock()
        .map_err(|_| misuse("the authentication state is unusable after a panic"))
}

/// An instant argument: an integral number of milliseconds, or the system clock when absent.
fn instant(value: Option<f64>, what: &str) -> napi::Result<UnixMillis, String> {
    match value {
        None => Ok(UnixMillis(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
                .unwrap_or(0),
        )),
        Some(ms) if ms.is_finite() && ms.fract() == 0.0 && ms.abs() <= 9.007_199_254_740_991e15 => {
            Ok(UnixMillis(ms as i64))
        }
        Some(_) => Err(misuse(&format!(
            "{what} must be an integral number of milliseconds"
        ))),
    }
}

fn opt_instant(value: Option<f64>, what: &str) -> napi::Result<Option<UnixMillis>, String> {
    value.map(|v| instant(Some(v), what)).transpose()
}

/// `defaultAgentKeyId(agentId)`: `urn:missionweaveprotocol:key:<last path or colon segment>`.
#[napi(catch_unwind, js_name = "defaultAgentKeyId")]
pub fn default_agent_key_id_of(agent_id: String) -> napi::Result<String, String> {
    default_agent_key_id(&agent_id).map_err(|e| refusal(&e))
}

/// Validity bounds of a registration (Unix milliseconds).
#[napi(object)]
#[derive(Debug, Default)]
pub struct KeyRegistration {
    pub key_id: Option<String>,
    pub valid_from: Option<f64>,
    pub valid_until: Option<f64>,
    pub revoked_at: Option<f64>,
}

/// A one-use HELLO challenge, with the canonical transcript to sign (`signingBytes`).
#[napi(object)]
pub struct Challenge {
    pub protocol_version: String,
    pub challenge_id: String,
    pub agent_id: String,
    pub key_id: String,
    pub client_nonce: String,
    pub server_nonce: String,
    pub expires_at: f64,
    pub signing_bytes: Buffer,
}

impl core::fmt::Debug for Challenge {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Challenge")
            .field("challenge_id", &self.challenge_id)
            .field("agent_id", &self.agent_id)
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

fn challenge_object(challenge: &CoreChallenge) -> napi::Result<Challenge, String> {
    Ok(Challenge {
        signing_bytes: challenge.signing_bytes().map_err(|e| refusal(&e))?.into(),
        protocol_version: challenge.protocol_version.clone(),
        challenge_id: challenge.challenge_id.clone(),
        agent_id: challenge.agent_id.clone(),
        key_id: challenge.key_id.clone(),
        client_nonce: challenge.client_nonce.clone(),
        server_nonce: challenge.server_nonce.clone(),
        expires_at: challenge.expires_at.0 as f64,
    })
}

/// An opened session. `token` is a bearer credential: never log it.
#[napi(object)]
#[derive(Debug)]
pub struct SessionGrant {
    pub agent_id: String,
    pub key_id: String,
    pub protocol_version: String,
    pub session_epoch: f64,
    pub issued_at: f64,
    pub expires_at: f64,
    pub token: String,
}

fn grant_object(grant: CoreGrant) -> SessionGrant {
    SessionGrant {
        agent_id: grant.agent_id,
        key_id: grant.key_id,
        protocol_version: grant.protocol_version,
        session_epoch: grant.session_epoch as f64,
        issued_at: grant.issued_at.0 as f64,
        expires_at: grant.expires_at.0 as f64,
        token: grant.token,
    }
}

/// The Organization's Agent keys.
#[napi(js_name = "AgentKeyRegistry")]
#[derive(Debug, Default)]
pub struct AuthKeyRegistry {
    inner: Arc<Mutex<CoreRegistry>>,
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
        options: Option<KeyRegistration>,
    ) -> napi::Result<(), String> {
        let options = options.unwrap_or_default();
        let validity = KeyValidity {
            valid_from: opt_instant(options.valid_from, "validFrom")?,
            valid_until: opt_instant(options.valid_until, "validUntil")?,
            revoked_at: opt_instant(options.revoked_at, "revokedAt")?,
        };
        locked(&self.inner)?
            .register(&agent_id, public_key, options.key_id.as_deref(), validity)
            .map_err(|e| refusal(&e))
    }

    /// The 32 public-key bytes of the Agent's key valid at `at` (default: now).
    #[napi(catch_unwind)]
    pub fn resolve(
        &self,
        agent_id: String,
        key_id: Option<String>,
        at: Option<f64>,
    ) -> napi::Result<Buffer, String> {
        let at = instant(at, "at")?;
        let registry = locked(&self.inner)?;
        let key = registry
            .resolve(&agent_id, key_id.as_deref(), at)
            .map_err(|e| refusal(&e))?;
        Ok(key.public_key.as_bytes().to_vec().into())
    }

    /// Whether the bytes are the key's registered material (constant-time comparison).
    #[napi(catch_unwind)]
    pub fn matches_registered_public_key(
        &self,
        agent_id: String,
        key_id: String,
        public_key_bytes: &[u8],
    ) -> napi::Result<bool, String> {
        Ok(
            locked(&self.inner)?.matches_registered_public_key(
                &agent_id,
                &key_id,
                public_key_bytes,
            ),
        )
    }

    /// Revokes the key from `revokedAt` (default: now); the earliest revocation is kept.
    #[napi(catch_unwind)]
    pub fn revoke(
        &self,
        agent_id: String,
        key_id: String,
        revoked_at: Option<f64>,
    ) -> napi::Result<(), String> {
        let revoked_at = instant(revoked_at, "revokedAt")?;
        locked(&self.inner)?
            .revoke(&agent_id, &key_id, revoked_at)
            .map_err(|e| refusal(&e))
    }
}

/// `SessionAuthority` options: the HMAC secret (at least 32 bytes; random when absent) and the
/// lifetimes in milliseconds (defaults 30 s and 15 min).
#[napi(object)]
#[derive(Default)]
pub struct SessionAuthorityOptions {
    pub secret: Option<Buffer>,
    pub challenge_ttl_ms: Option<f64>,
    pub session_ttl_ms: Option<f64>,
}

impl core::fmt::Debug for SessionAuthorityOptions {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SessionAuthorityOptions")
            .field("secret", &self.secret.as_ref().map(|_| "<redacted>"))
            .field("challenge_ttl_ms", &self.challenge_ttl_ms)
            .field("session_ttl_ms", &self.session_ttl_ms)
            .finish()
    }
}

/// `issueChallenge` options.
#[napi(object)]
#[derive(Debug, Default)]
pub struct ChallengeOptions {
    pub key_id: Option<String>,
    pub client_nonce: Option<String>,
    pub protocol_version: Option<String>,
    pub now: Option<f64>,
}

fn ttl(value: Option<f64>, default: u64, what: &str) -> napi::Result<u64, String> {
    match value {
        None => Ok(default),
        Some(ms)
            if ms.is_finite()
                && ms.fract() == 0.0
                && ms >= 1.0
                && ms <= MAX_SESSION_EPOCH as f64 =>
        {
            Ok(ms as u64)
        }
        Some(_) => Err(misuse(&format!(
            "{what} must be a positive integral number of milliseconds"
        ))),
    }
}

/// Challenges, session tokens and per-Agent Session Epochs.
#[napi]
#[derive(Debug)]
pub struct SessionAuthority {
    registry: Arc<Mutex<CoreRegistry>>,
    inner: Mutex<CoreAuthority>,
}

#[napi]
impl SessionAuthority {
    #[napi(constructor)]
    pub fn new(
        registry: &AuthKeyRegistry,
        options: Option<SessionAuthorityOptions>,
    ) -> napi::Result<Self, String> {
        let options = options.unwrap_or_default();
        let defaults = SessionConfig::default();
        let config = SessionConfig {
            challenge_ttl_ms: ttl(
                options.challenge_ttl_ms,
                defaults.challenge_ttl_ms,
                "challengeTtlMs",
            )?,
            session_ttl_ms: ttl(
                options.session_ttl_ms,
                defaults.session_ttl_ms,
                "sessionTtlMs",
            )?,
            ..defaults
        };
        let secret = match options.secret {
            Some(bytes) => bytes.to_vec(),
            None => {
                let mut bytes = vec![0u8; 32];
                getrandom_fill(&mut bytes)?;
                bytes
            }
        };
        let inner =
            CoreAuthority::new(secret, config, Box::new(OsNonces)).map_err(|e| refusal(&e))?;
        Ok(Self {
            registry: registry.inner.clone(),
            inner: Mutex::new(inner),
        })
    }

    /// A fresh one-use challenge for the Agent's registered, currently valid key.
    #[napi(catch_unwind)]
    pub fn issue_challenge(
        &self,
        agent_id: String,
        options: Option<ChallengeOptions>,
    ) -> napi::Result<Challenge, String> {
        let options = options.unwrap_or_default();
        let now = instant(options.now, "now")?;
        let registry = locked(&self.registry)?;
        let challenge = locked(&self.inner)?
            .issue_challenge(
                &registry,
                &agent_id,
                options.key_id.as_deref(),
                options.client_nonce.as_deref(),
                options.protocol_version.as_deref().unwrap_or("0.1"),
                now,
            )
            .map_err(|e| refusal(&e))?;
        challenge_object(&challenge)
    }

    /// Spends the challenge; a valid signature (base64url) opens a session at the next epoch.
    #[napi(catch_unwind)]
    pub fn open_session(
        &self,
        challenge_id: String,
        signature: String,
        now: Option<f64>,
    ) -> napi::Result<SessionGrant, String> {
        let now = instant(now, "now")?;
        let registry = locked(&self.registry)?;
        locked(&self.inner)?
            .open_session(&registry, &challenge_id, &signature, now)
            .map(grant_object)
            .map_err(|e| refusal(&e))
    }

    /// The session `token` proves: MAC, expiry, current epoch, key still valid.
    #[napi(catch_unwind)]
    pub fn verify_session(
        &self,
        token: String,
        now: Option<f64>,
    ) -> napi::Result<SessionGrant, String> {
        let now = instant(now, "now")?;
        let registry = locked(&self.registry)?;
        locked(&self.inner)?
            .verify_session(&registry, &token, now)
            .map(grant_object)
            .map_err(|e| refusal(&e))
    }

    /// Adopts the authoritative Core's epoch (never lowers it). With `keyId`, that key must be
    /// registered for the Agent.
    #[napi(catch_unwind)]
    pub fn synchronize_epoch(
        &self,
        agent_id: String,
        authoritative_epoch: f64,
        key_id: Option<String>,
    ) -> napi::Result<(), String> {
        if let Some(key_id) = key_id {
            locked(&self.registry)?
                .get(&agent_id, Some(&key_id))
                .map_err(|e| refusal(&e))?;
        }
        let epoch = if authoritative_epoch.is_finite()
            && authoritative_epoch.fract() == 0.0
            && authoritative_epoch >= 0.0
            && authoritative_epoch <= MAX_SESSION_EPOCH as f64
        {
            authoritative_epoch as u64
        } else {
            0
        };
        locked(&self.inner)?
            .synchronize_epoch(&agent_id, epoch)
            .map_err(|e| refusal(&e))
    }

    /// The Agent's current Session Epoch (0 before its first session).
    #[napi(catch_unwind)]
    pub fn current_epoch(&self, agent_id: String) -> napi::Result<f64, String> {
        Ok(locked(&self.inner)?.current_epoch(&agent_id) as f64)
    }
}

fn getrandom_fill(bytes: &mut [u8]) -> napi::Result<(), String> {
    use missionweaveprotocol_authority::auth::NonceSource;
    OsNonces.fill(bytes).map_err(|e| refusal(&e))
}
