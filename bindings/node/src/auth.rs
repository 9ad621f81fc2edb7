//! Agent authentication (§6.3): the core's `auth` module for the package's `AgentKeyRegistry`,
//! `SessionAuthority` and `defaultAgentKeyId` (`js/src/api.mjs`, Node entry only).
//!
//! Envelopes as everywhere in this addon: every call returns `{"ok":…}` or the core's own
//! description of the refusal (`AuthError` is a `DescribeError`: class `AuthenticationError`,
//! its §19 code and reason slug), and nothing throws. No envelope names a secret, token, MAC or
//! signature. Instants are Unix milliseconds; the JavaScript wrapper supplies the clock. The
//! registry is shared: a `SessionAuthority` sees later registrations and revocations. `free()`
//! drops the native state at once (an authority's secret with it).

use std::sync::{Arc, Mutex, MutexGuard};

use missionweaveprotocol::json::Value;
use missionweaveprotocol_agent::auth::{
    AgentKeyRegistry as CoreRegistry, AuthError, Challenge as CoreChallenge, KeyValidity,
    SessionAuthority as CoreAuthority, SessionConfig, SessionGrant as CoreGrant,
    default_agent_key_id,
};
use missionweaveprotocol_ffi::{Failure, Obj, Outcome, finish};
use missionweaveprotocol_host::OsRandom;
use missionweaveprotocol_kernel::random::RandomSource;
use missionweaveprotocol_kernel::resources::MAX_SAFE_INTEGER;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use napi::bindgen_prelude::{Buffer, Either};
use napi_derive::napi;

use crate::freed;

fn refused(error: &AuthError) -> Failure {
    Failure::error(error)
}

fn locked<T>(mutex: &Mutex<T>) -> Result<MutexGuard<'_, T>, Failure> {
    // A poisoned lock means a panic (a bug) interrupted an update: refuse rather than guess.
    mutex
        .lock()
        .map_err(|_| Failure::argument("the authentication state is unusable after a panic"))
}

/// A JavaScript number of milliseconds as an integer, or `None` when it is not one.
fn whole(ms: f64) -> Option<i64> {
    (ms.is_finite() && ms.fract() == 0.0 && ms.abs() <= MAX_SAFE_INTEGER as f64)
        .then_some(ms as i64)
}

fn instant(ms: f64, what: &str) -> Result<UnixMillis, Failure> {
    whole(ms).map(UnixMillis).ok_or_else(|| {
        Failure::argument(format!("{what} must be an integral number of milliseconds"))
    })
}

fn opt_instant(ms: Option<f64>, what: &str) -> Result<Option<UnixMillis>, Failure> {
    ms.map(|ms| instant(ms, what)).transpose()
}

/// A count of milliseconds or an epoch for the core. A negative one becomes 0, which the core
/// refuses with its own rule and text ("time-to-live must be positive", a zero epoch).
fn unsigned(value: f64, what: &str) -> Result<u64, Failure> {
    let ms = whole(value)
        .ok_or_else(|| Failure::argument(format!("{what} must be an integral number")))?;
    Ok(u64::try_from(ms).unwrap_or(0))
}

fn unit(outcome: Result<(), Failure>) -> String {
    finish(outcome.map(|()| Value::Null))
}

/// `defaultAgentKeyId(agentId)`: `urn:missionweaveprotocol:key:<last path or colon segment>`.
#[napi(catch_unwind)]
pub fn auth_default_agent_key_id(agent_id: String) -> String {
    finish(
        default_agent_key_id(&agent_id)
            .map(Value::string)
            .map_err(|e| refused(&e)),
    )
}

/// The Organization's Agent keys.
#[napi]
#[derive(Debug)]
pub struct AuthKeyRegistry(Option<Arc<Mutex<CoreRegistry>>>);

impl Default for AuthKeyRegistry {
    fn default() -> Self {
        Self(Some(Arc::default()))
    }
}

impl AuthKeyRegistry {
    fn inner(&self) -> Result<&Arc<Mutex<CoreRegistry>>, String> {
        self.0.as_ref().ok_or_else(|| freed("AgentKeyRegistry"))
    }

    fn with<T>(
        &self,
        use_: impl FnOnce(&mut CoreRegistry) -> Result<T, Failure>,
    ) -> Result<T, String> {
        let inner = self.inner()?;
        locked(inner)
            .and_then(|mut registry| use_(&mut registry))
            .map_err(|f| finish(Err(f)))
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
        let outcome = self.with(|registry| {
            let validity = KeyValidity {
                valid_from: opt_instant(valid_from, "validFrom")?,
                valid_until: opt_instant(valid_until, "validUntil")?,
                revoked_at: opt_instant(revoked_at, "revokedAt")?,
            };
            registry
                .register(&agent_id, public_key, key_id.as_deref(), validity)
                .map_err(|e| refused(&e))
        });
        outcome.map_or_else(|envelope| envelope, |()| unit(Ok(())))
    }

    /// The 32 public-key bytes of the Agent's key valid at `at`, or the error envelope.
    #[napi(catch_unwind)]
    pub fn resolve(
        &self,
        agent_id: String,
        key_id: Option<String>,
        at: f64,
    ) -> Either<Buffer, String> {
        let outcome = self.with(|registry| {
            let at = instant(at, "at")?;
            registry
                .resolve(&agent_id, key_id.as_deref(), at)
                .map(|key| key.public_key.as_bytes().to_vec())
                .map_err(|e| refused(&e))
        });
        match outcome {
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
        let outcome = self.with(|registry| {
            Ok(registry.matches_registered_public_key(&agent_id, &key_id, public_key_bytes))
        });
        outcome.map_or_else(|envelope| envelope, |flag| finish(Ok(Value::Bool(flag))))
    }

    /// Revokes the key from `revokedAt`; the earliest revocation is kept.
    #[napi(catch_unwind)]
    pub fn revoke(&self, agent_id: String, key_id: String, revoked_at: f64) -> String {
        let outcome = self.with(|registry| {
            let revoked_at = instant(revoked_at, "revokedAt")?;
            registry
                .revoke(&agent_id, &key_id, revoked_at)
                .map_err(|e| refused(&e))
        });
        outcome.map_or_else(|envelope| envelope, |()| unit(Ok(())))
    }

    /// Drops this handle on the keys now (idempotent); authorities built on them keep theirs.
    #[napi(catch_unwind)]
    pub fn free(&mut self) {
        self.0 = None;
    }
}

fn challenge_value(challenge: &CoreChallenge) -> Outcome {
    let bytes = challenge.signing_bytes().map_err(|e| refused(&e))?;
    // RFC 8785 text is UTF-8: it crosses as a string and JavaScript encodes it back.
    let text = String::from_utf8(bytes).map_err(|_| {
        refused(&AuthError::InvalidArgument(
            "the challenge is not canonical JSON",
        ))
    })?;
    Ok(Obj::new()
        .str("protocolVersion", challenge.protocol_version.clone())
        .str("challengeId", challenge.challenge_id.clone())
        .str("agentId", challenge.agent_id.clone())
        .str("keyId", challenge.key_id.clone())
        .str("clientNonce", challenge.client_nonce.clone())
        .str("serverNonce", challenge.server_nonce.clone())
        .int("expiresAt", challenge.expires_at.0)
        .str("signingBytes", text)
        .build())
}

fn grant_value(grant: CoreGrant) -> Value {
    Obj::new()
        .str("agentId", grant.agent_id)
        .str("keyId", grant.key_id)
        .str("protocolVersion", grant.protocol_version)
        .num("sessionEpoch", grant.session_epoch)
        .int("issuedAt", grant.issued_at.0)
        .int("expiresAt", grant.expires_at.0)
        .str("token", grant.token)
        .build()
}

/// The registry and the authority of a live `SessionAuthority`.
struct Live {
    registry: Arc<Mutex<CoreRegistry>>,
    inner: Mutex<CoreAuthority>,
}

impl core::fmt::Debug for Live {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Live(<secret redacted>)")
    }
}

/// Challenges, session tokens and per-Agent Session Epochs. The constructor never throws:
/// `status()` is the envelope of the construction (a refused configuration, a freed registry).
#[napi]
#[derive(Debug)]
pub struct AuthSessionAuthority(Result<Live, String>);

impl AuthSessionAuthority {
    fn run(&self, use_: impl FnOnce(&Live) -> Outcome) -> String {
        match &self.0 {
            Ok(live) => finish(use_(live)),
            Err(envelope) => envelope.clone(),
        }
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
        let build = || -> Result<Live, String> {
            let registry = registry.inner()?.clone();
            let fail = |f: Failure| finish(Err(f));
            let defaults = SessionConfig::default();
            let config = SessionConfig {
                challenge_ttl_ms: challenge_ttl_ms
                    .map(|ms| unsigned(ms, "challengeTtlMs"))
                    .transpose()
                    .map_err(fail)?
                    .unwrap_or(defaults.challenge_ttl_ms),
                session_ttl_ms: session_ttl_ms
                    .map(|ms| unsigned(ms, "sessionTtlMs"))
                    .transpose()
                    .map_err(fail)?
                    .unwrap_or(defaults.session_ttl_ms),
                ..defaults
            };
            let secret = match secret {
                Some(bytes) => bytes.to_vec(),
                None => {
                    let mut bytes = vec![0u8; 32];
                    OsRandom
                        .fill(&mut bytes)
                        .map_err(|_| fail(Failure::argument("the OS random source failed")))?;
                    bytes
                }
            };
            let inner = CoreAuthority::new(secret, config, Box::new(OsRandom))
                .map_err(|e| fail(refused(&e)))?;
            Ok(Live {
                registry,
                inner: Mutex::new(inner),
            })
        };
        Self(build())
    }

    /// `{"ok":null}`, or why the construction was refused.
    #[napi(catch_unwind)]
    pub fn status(&self) -> String {
        self.run(|_| Ok(Value::Null))
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
        self.run(|live| {
            let now = instant(now, "now")?;
            let registry = locked(&live.registry)?;
            let challenge = locked(&live.inner)?
                .issue_challenge(
                    &registry,
                    &agent_id,
                    key_id.as_deref(),
                    client_nonce.as_deref(),
                    &protocol_version,
                    now,
                )
                .map_err(|e| refused(&e))?;
            challenge_value(&challenge)
        })
    }

    /// Spends the challenge; a valid signature (base64url) opens a session at the next epoch.
    #[napi(catch_unwind)]
    pub fn open_session(&self, challenge_id: String, signature: String, now: f64) -> String {
        self.run(|live| {
            let now = instant(now, "now")?;
            let registry = locked(&live.registry)?;
            locked(&live.inner)?
                .open_session(&registry, &challenge_id, &signature, now)
                .map(grant_value)
                .map_err(|e| refused(&e))
        })
    }

    /// The session `token` proves: MAC, expiry, current epoch, key still valid.
    #[napi(catch_unwind)]
    pub fn verify_session(&self, token: String, now: f64) -> String {
        self.run(|live| {
            let now = instant(now, "now")?;
            let registry = locked(&live.registry)?;
            locked(&live.inner)?
                .verify_session(&registry, &token, now)
                .map(grant_value)
                .map_err(|e| refused(&e))
        })
    }

    /// Adopts the authoritative Core's epoch (never lowers it). With `keyId`, that key must be
    /// registered for the Agent.
    #[napi(catch_unwind)]
    pub fn synchronize_epoch(
        &self,
        agent_id: String,
        authoritative_epoch: f64,
        key_id: Option<String>,
    ) -> String {
        self.run(|live| {
            let epoch = unsigned(authoritative_epoch, "authoritativeEpoch")?;
            if let Some(key_id) = key_id {
                locked(&live.registry)?
                    .get(&agent_id, Some(&key_id))
                    .map_err(|e| refused(&e))?;
            }
            locked(&live.inner)?
                .synchronize_epoch(&agent_id, epoch)
                .map(|()| Value::Null)
                .map_err(|e| refused(&e))
        })
    }

    /// The Agent's current Session Epoch (0 before its first session).
    #[napi(catch_unwind)]
    pub fn current_epoch(&self, agent_id: String) -> String {
        self.run(|live| {
            let epoch = locked(&live.inner)?.current_epoch(&agent_id);
            Ok(Value::Number(missionweaveprotocol::json::Number::from_u64(
                epoch,
            )))
        })
    }

    /// Drops the authority (its secret, challenges and epochs) now (idempotent).
    #[napi(catch_unwind)]
    pub fn free(&mut self) {
        self.0 = Err(freed("SessionAuthority"));
    }
}
