//! Agent authentication (`missionweaveprotocol_agent::auth`, §6.3) for the JavaScript
//! backends' `AgentKeyRegistry`, `SessionAuthority` and `defaultAgentKeyId`: one function per
//! operation, arguments as strings, bytes and JavaScript numbers (instants in Unix
//! milliseconds), answers as envelopes. Every rule (key validity, one-use challenges, the
//! transcript, token MACs, Session Epochs) and every refusal (`AuthError`: class
//! `AuthenticationError`, its §19 code and reason) is the core's. No envelope names a secret,
//! token MAC or signature.
//!
//! The registry is shared: an authority sees later registrations and revocations. Randomness
//! (challenge nonces, a secret when none is given) is the host's [`RandomSource`].

use std::sync::{Arc, Mutex, MutexGuard};

use missionweaveprotocol::json::{Number, Value};
use missionweaveprotocol_agent::auth::{
    AgentKeyRegistry, AuthError, KeyValidity, SessionAuthority, SessionConfig, default_agent_key_id,
};
use missionweaveprotocol_kernel::random::RandomSource;
use missionweaveprotocol_kernel::resources::MAX_SAFE_INTEGER;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

use crate::envelope::{Failure, finish};
use crate::shapes::auth::{ChallengeAnswer, SessionGrantAnswer};
use crate::shapes::{Res, answer};

fn refused(error: &AuthError) -> Failure {
    Failure::error(error)
}

fn locked<T>(mutex: &Mutex<T>) -> Res<MutexGuard<'_, T>> {
    // A poisoned lock means a panic (a bug) interrupted an update: refuse rather than guess.
    mutex
        .lock()
        .map_err(|_| Failure::argument("the authentication state is unusable after a panic"))
}

/// A JavaScript number of milliseconds as an integer, or `None` when it is not one.
fn whole(ms: f64) -> Option<i64> {
    // Exact: a safe integer converts without rounding.
    #[allow(clippy::cast_possible_truncation)]
    (ms.is_finite() && ms.fract() == 0.0 && ms.abs() <= MAX_SAFE_INTEGER as f64)
        .then_some(ms as i64)
}

/// A JavaScript number as an instant; `what` names it in the refusal.
pub(crate) fn instant(ms: f64, what: &str) -> Res<UnixMillis> {
    whole(ms).map(UnixMillis).ok_or_else(|| {
        Failure::argument(format!("{what} must be an integral number of milliseconds"))
    })
}

fn opt_instant(ms: Option<f64>, what: &str) -> Res<Option<UnixMillis>> {
    ms.map(|ms| instant(ms, what)).transpose()
}

/// A count of milliseconds or an epoch for the core. A negative one becomes 0, which the core
/// refuses with its own rule and text ("time-to-live must be positive", a zero epoch).
fn unsigned(value: f64, what: &str) -> Res<u64> {
    let ms = whole(value)
        .ok_or_else(|| Failure::argument(format!("{what} must be an integral number")))?;
    Ok(u64::try_from(ms).unwrap_or(0))
}

fn unit(outcome: Res<()>) -> String {
    finish(outcome.map(|()| Value::Null))
}

/// `defaultAgentKeyId(agentId)`: `urn:missionweaveprotocol:key:<last path or colon segment>`.
pub fn default_key_id(agent_id: &str) -> String {
    finish(
        default_agent_key_id(agent_id)
            .map(Value::string)
            .map_err(|e| refused(&e)),
    )
}

/// The Organization's Agent keys, shared with the authorities built on them.
#[derive(Debug, Clone, Default)]
pub struct KeyRegistry(Arc<Mutex<AgentKeyRegistry>>);

impl KeyRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    fn with<T>(&self, use_: impl FnOnce(&mut AgentKeyRegistry) -> Res<T>) -> Res<T> {
        let mut registry = locked(&self.0)?;
        use_(&mut registry)
    }

    /// Registers 32 public-key bytes for the Agent (the default key ID when `key_id` is absent).
    pub fn register(
        &self,
        agent_id: &str,
        public_key: &[u8],
        key_id: Option<&str>,
        valid_from: Option<f64>,
        valid_until: Option<f64>,
        revoked_at: Option<f64>,
    ) -> String {
        unit(self.with(|registry| {
            let validity = KeyValidity {
                valid_from: opt_instant(valid_from, "validFrom")?,
                valid_until: opt_instant(valid_until, "validUntil")?,
                revoked_at: opt_instant(revoked_at, "revokedAt")?,
            };
            registry
                .register(agent_id, public_key, key_id, validity)
                .map_err(|e| refused(&e))
        }))
    }

    /// The 32 public-key bytes of the Agent's key valid at `at`, or the error envelope.
    pub fn resolve(
        &self,
        agent_id: &str,
        key_id: Option<&str>,
        at: f64,
    ) -> Result<Vec<u8>, String> {
        self.with(|registry| {
            let at = instant(at, "at")?;
            registry
                .resolve(agent_id, key_id, at)
                .map(|key| key.public_key.as_bytes().to_vec())
                .map_err(|e| refused(&e))
        })
        .map_err(|failure| finish(Err(failure)))
    }

    /// Whether the bytes are the key's registered material (constant-time comparison).
    pub fn matches_registered_public_key(
        &self,
        agent_id: &str,
        key_id: &str,
        public_key_bytes: &[u8],
    ) -> String {
        finish(
            self.with(|registry| {
                Ok(registry.matches_registered_public_key(agent_id, key_id, public_key_bytes))
            })
            .map(Value::Bool),
        )
    }

    /// Revokes the key from `revoked_at`; the earliest revocation is kept.
    pub fn revoke(&self, agent_id: &str, key_id: &str, revoked_at: f64) -> String {
        unit(self.with(|registry| {
            let revoked_at = instant(revoked_at, "revokedAt")?;
            registry
                .revoke(agent_id, key_id, revoked_at)
                .map_err(|e| refused(&e))
        }))
    }
}

/// Challenges, session tokens and per-Agent Session Epochs over a shared [`KeyRegistry`].
pub struct Authority {
    registry: KeyRegistry,
    inner: Mutex<SessionAuthority>,
    /// Kept only to key a twin (`twin`): never answered, never in an envelope.
    secret: Vec<u8>,
}

impl core::fmt::Debug for Authority {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Authority(<secret redacted>)")
    }
}

impl Authority {
    /// `secret`: at least 32 bytes (absent: 32 bytes from `random`); lifetimes in
    /// milliseconds, absent: the core's `SessionConfig` defaults (30 s, 15 min).
    pub fn new(
        registry: &KeyRegistry,
        secret: Option<&[u8]>,
        challenge_ttl_ms: Option<f64>,
        session_ttl_ms: Option<f64>,
        mut random: Box<dyn RandomSource>,
    ) -> Res<Self> {
        let defaults = SessionConfig::default();
        let config = SessionConfig {
            challenge_ttl_ms: challenge_ttl_ms
                .map(|ms| unsigned(ms, "challengeTtlMs"))
                .transpose()?
                .unwrap_or(defaults.challenge_ttl_ms),
            session_ttl_ms: session_ttl_ms
                .map(|ms| unsigned(ms, "sessionTtlMs"))
                .transpose()?
                .unwrap_or(defaults.session_ttl_ms),
            ..defaults
        };
        let secret = match secret {
            Some(bytes) => bytes.to_vec(),
            None => {
                let mut bytes = vec![0u8; 32];
                random
                    .fill(&mut bytes)
                    .map_err(|e| Failure::argument(e.to_string()))?;
                bytes
            }
        };
        let inner =
            SessionAuthority::new(secret.clone(), config, random).map_err(|e| refused(&e))?;
        Ok(Self {
            registry: registry.clone(),
            inner: Mutex::new(inner),
            secret,
        })
    }

    /// An authority with the same secret and lifetimes but its own challenges and epochs:
    /// the sans-IO gateway (`missionweaveprotocol-gateway`) owns its authority, and the Core
    /// is the truth of every Session Epoch, so tokens of either verify at both.
    pub fn twin(&self, random: Box<dyn RandomSource>) -> Result<SessionAuthority, AuthError> {
        let config = *locked(&self.inner)
            .map_err(|_| AuthError::InvalidArgument("the authentication state is unusable"))?
            .config();
        SessionAuthority::new(self.secret.clone(), config, random)
    }

    /// A fresh one-use challenge for the Agent's registered, currently valid key.
    pub fn issue_challenge(
        &self,
        agent_id: &str,
        key_id: Option<&str>,
        client_nonce: Option<&str>,
        protocol_version: &str,
        now: f64,
    ) -> String {
        finish((|| {
            let now = instant(now, "now")?;
            let registry = locked(&self.registry.0)?;
            let challenge = locked(&self.inner)?
                .issue_challenge(
                    &registry,
                    agent_id,
                    key_id,
                    client_nonce,
                    protocol_version,
                    now,
                )
                .map_err(|e| refused(&e))?;
            let bytes = challenge.signing_bytes().map_err(|e| refused(&e))?;
            // RFC 8785 text is UTF-8: it crosses as a string and JavaScript encodes it back.
            let text = String::from_utf8(bytes).map_err(|_| {
                refused(&AuthError::InvalidArgument(
                    "the challenge is not canonical JSON",
                ))
            })?;
            answer(&ChallengeAnswer::new(&challenge, text))
        })())
    }

    /// Spends the challenge; a valid signature (base64url) opens a session at the next epoch.
    pub fn open_session(&self, challenge_id: &str, signature: &str, now: f64) -> String {
        finish((|| {
            let now = instant(now, "now")?;
            let registry = locked(&self.registry.0)?;
            let grant = locked(&self.inner)?
                .open_session(&registry, challenge_id, signature, now)
                .map_err(|e| refused(&e))?;
            answer(&SessionGrantAnswer::from(grant))
        })())
    }

    /// The session `token` proves: MAC, expiry, current epoch, key still valid.
    pub fn verify_session(&self, token: &str, now: f64) -> String {
        finish((|| {
            let now = instant(now, "now")?;
            let registry = locked(&self.registry.0)?;
            let grant = locked(&self.inner)?
                .verify_session(&registry, token, now)
                .map_err(|e| refused(&e))?;
            answer(&SessionGrantAnswer::from(grant))
        })())
    }

    /// Adopts the authoritative Core's epoch (never lowers it). With `key_id`, that key must be
    /// registered for the Agent.
    pub fn synchronize_epoch(
        &self,
        agent_id: &str,
        authoritative_epoch: f64,
        key_id: Option<&str>,
    ) -> String {
        unit((|| {
            let epoch = unsigned(authoritative_epoch, "authoritativeEpoch")?;
            if let Some(key_id) = key_id {
                locked(&self.registry.0)?
                    .get(agent_id, Some(key_id))
                    .map_err(|e| refused(&e))?;
            }
            locked(&self.inner)?
                .synchronize_epoch(agent_id, epoch)
                .map_err(|e| refused(&e))
        })())
    }

    /// The Agent's current Session Epoch (0 before its first session).
    pub fn current_epoch(&self, agent_id: &str) -> String {
        finish(
            locked(&self.inner)
                .map(|inner| Value::Number(Number::from_u64(inner.current_epoch(agent_id)))),
        )
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use missionweaveprotocol::json::{Value, parse};
    use missionweaveprotocol_kernel::random::{RandomSource, RandomUnavailable};

    use super::{Authority, KeyRegistry, default_key_id};

    #[derive(Debug)]
    struct Counter(u8);

    impl RandomSource for Counter {
        fn fill(&mut self, out: &mut [u8]) -> Result<(), RandomUnavailable> {
            for byte in out {
                self.0 = self.0.wrapping_add(1);
                *byte = self.0;
            }
            Ok(())
        }
    }

    fn member(text: &str, pointer: &str) -> Option<Value> {
        parse(text.as_bytes()).ok()?.pointer(pointer).cloned()
    }

    #[test]
    fn a_challenge_names_its_key_and_arguments_are_checked() {
        let agent = "urn:missionweaveprotocol:agent:alice";
        assert_eq!(
            member(&default_key_id(agent), "/ok"),
            Some(Value::string("urn:missionweaveprotocol:key:alice"))
        );
        let registry = KeyRegistry::new();
        let key = missionweaveprotocol::crypto::SigningKey::from_seed("k", &[7; 32]);
        let registered =
            registry.register(agent, &key.public_key_bytes(), None, Some(0.0), None, None);
        assert_eq!(
            member(&registered, "/ok"),
            Some(Value::Null),
            "{registered}"
        );
        let authority = Authority::new(&registry, None, None, None, Box::new(Counter(0))).unwrap();
        let challenge = authority.issue_challenge(agent, None, None, "0.1", 1000.0);
        assert_eq!(
            member(&challenge, "/ok/keyId").and_then(|v| v.as_str().map(str::to_owned)),
            Some("urn:missionweaveprotocol:key:alice".to_owned()),
            "{challenge}"
        );
        assert!(member(&challenge, "/ok/signingBytes").is_some());
        let refused = authority.issue_challenge(agent, None, None, "0.1", 0.5);
        assert_eq!(
            member(&refused, "/error/class"),
            Some(Value::string("ArgumentError"))
        );
        assert_eq!(
            member(&authority.current_epoch(agent), "/ok")
                .and_then(|v| v.as_number().and_then(|n| n.as_u64())),
            Some(0)
        );
    }
}
