//! The session authority: one-use HELLO challenges, session tokens and per-Agent Session
//! Epochs (§6.3).
//!
//! Sans-IO: every call takes the instant (`now`) and the Organization's key registry; random
//! bytes come from the host's injected [`RandomSource`].
//!
//! **One use per challenge, even a failed one.** §6.3 requires "a fresh server challenge"; it
//! does not say whether a challenge survives a wrong answer. We remove the challenge before
//! looking at the answer, so a second response to the same challenge — after a success or a
//! failure — is refused `unknown_challenge`: a challenge can never be an oracle for more than
//! one signature guess, and a replayed `client_response` never opens a second session.
//!
//! **Epochs.** Opening a session issues epoch `n + 1`, which fences every token of that Agent
//! at epoch `n` or lower (§6.3: [`SessionAuthority::verify_session`] accepts only the current
//! epoch). [`SessionAuthority::synchronize_epoch`] adopts the authoritative Core's epoch and
//! never lowers it.

use core::fmt;
use std::collections::HashMap;

use missionweaveprotocol::PROTOCOL_VERSION;
use missionweaveprotocol::schema_formats::{decode_base64url, encode_base64url};

use super::challenge::{Challenge, verify_signature};
use super::registry::AgentKeyRegistry;
use super::token::{self, Claims, Secret};
use crate::auth::error::AuthError;
use missionweaveprotocol_kernel::random::RandomSource;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The largest Session Epoch (JSON safe integer, `positiveInteger` of the frame schema).
pub const MAX_SESSION_EPOCH: u64 = (1 << 53) - 1;

/// Lifetimes and bounds of a [`SessionAuthority`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionConfig {
    /// How long a challenge can be answered (reference default: 30 s).
    pub challenge_ttl_ms: u64,
    /// How long a session token is valid (reference default: 15 min).
    pub session_ttl_ms: u64,
    /// Most challenges pending at once (expired ones are dropped first).
    pub max_pending_challenges: usize,
}

impl Default for SessionConfig {
    fn default() -> Self {
        Self {
            challenge_ttl_ms: 30_000,
            session_ttl_ms: 15 * 60_000,
            max_pending_challenges: 4096,
        }
    }
}

/// An opened (or verified) session. `Debug` never shows the token.
#[derive(Clone, PartialEq, Eq)]
pub struct SessionGrant {
    /// The authenticated Agent.
    pub agent_id: String,
    /// The key it proved possession of.
    pub key_id: String,
    /// The negotiated protocol version.
    pub protocol_version: String,
    /// Its Session Epoch (≥ 1).
    pub session_epoch: u64,
    /// When the session was opened.
    pub issued_at: UnixMillis,
    /// The first instant the token is no longer valid.
    pub expires_at: UnixMillis,
    /// The bearer token (secret to the Agent: never log it).
    pub token: String,
}

impl fmt::Debug for SessionGrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionGrant")
            .field("agent_id", &self.agent_id)
            .field("key_id", &self.key_id)
            .field("protocol_version", &self.protocol_version)
            .field("session_epoch", &self.session_epoch)
            .field("issued_at", &self.issued_at)
            .field("expires_at", &self.expires_at)
            .field("token", &"<redacted>")
            .finish()
    }
}

/// Challenges, tokens and Session Epochs for one Organization's Agents.
#[derive(Debug)]
pub struct SessionAuthority {
    secret: Secret,
    config: SessionConfig,
    challenges: HashMap<String, Challenge>,
    epochs: HashMap<String, u64>,
    nonces: Box<dyn RandomSource>,
}

impl SessionAuthority {
    /// An authority keyed by `secret` (at least 32 bytes; it is not kept in clear).
    pub fn new(
        secret: Vec<u8>,
        config: SessionConfig,
        nonces: Box<dyn RandomSource>,
    ) -> Result<Self, AuthError> {
        if config.challenge_ttl_ms == 0 || config.session_ttl_ms == 0 {
            return Err(AuthError::InvalidArgument("time-to-live must be positive"));
        }
        Ok(Self {
            secret: Secret::new(secret)?,
            config,
            challenges: HashMap::new(),
            epochs: HashMap::new(),
            nonces,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    fn random_b64(&mut self) -> Result<String, AuthError> {
        let mut bytes = [0u8; 32];
        self.nonces
            .fill(&mut bytes)
            .map_err(|_| AuthError::InvalidArgument("no randomness from the host"))?;
        Ok(encode_base64url(&bytes))
    }

    /// Issues a one-use challenge for the Agent's key (default key ID when `key_id` is `None`),
    /// which must be registered and valid at `now`. `client_nonce` must be canonical
    /// base64url; a random one is drawn when absent.
    pub fn issue_challenge(
        &mut self,
        registry: &AgentKeyRegistry,
        agent_id: &str,
        key_id: Option<&str>,
        client_nonce: Option<&str>,
        protocol_version: &str,
        now: UnixMillis,
    ) -> Result<Challenge, AuthError> {
        if protocol_version != PROTOCOL_VERSION {
            return Err(AuthError::UnsupportedVersion);
        }
        if let Some(nonce) = client_nonce
            && decode_base64url(nonce).is_none()
        {
            return Err(AuthError::InvalidArgument(
                "client_nonce is not canonical base64url",
            ));
        }
        let key_id = registry.resolve(agent_id, key_id, now)?.key_id.clone();
        let expires_at = now.saturating_add_ms(self.config.challenge_ttl_ms);
        if expires_at.to_rfc3339().is_none() {
            return Err(AuthError::InvalidArgument("now is outside years 0001-9999"));
        }
        self.challenges
            .retain(|_, pending| now < pending.expires_at);
        if self.challenges.len() >= self.config.max_pending_challenges {
            return Err(AuthError::TooManyChallenges);
        }
        let client_nonce = match client_nonce {
            Some(nonce) => nonce.to_owned(),
            None => self.random_b64()?,
        };
        let challenge = Challenge {
            protocol_version: protocol_version.to_owned(),
            challenge_id: self.random_b64()?,
            agent_id: agent_id.to_owned(),
            key_id,
            client_nonce,
            server_nonce: self.random_b64()?,
            expires_at,
        };
        self.challenges
            .insert(challenge.challenge_id.clone(), challenge.clone());
        Ok(challenge)
    }

    /// Takes the pending challenge out (it can never be used again) without opening a session.
    pub fn discard_challenge(&mut self, challenge_id: &str) -> Option<Challenge> {
        self.challenges.remove(challenge_id)
    }

    /// How many challenges are pending (expired ones included until the next issue).
    pub fn pending_challenges(&self) -> usize {
        self.challenges.len()
    }

    /// Answers a challenge: consumes it (even when the answer fails), checks its expiry, the
    /// key's validity at `now` and the strict Ed25519 `signature` (base64url) over
    /// [`Challenge::signing_bytes`], then issues the Agent's next Session Epoch and its token.
    pub fn open_session(
        &mut self,
        registry: &AgentKeyRegistry,
        challenge_id: &str,
        signature: &str,
        now: UnixMillis,
    ) -> Result<SessionGrant, AuthError> {
        let challenge = self
            .challenges
            .remove(challenge_id)
            .ok_or(AuthError::UnknownChallenge)?;
        self.answer(registry, &challenge, signature, now)
    }

    /// [`open_session`](Self::open_session) for a challenge already taken out of the pending set
    /// (by [`discard_challenge`](Self::discard_challenge)).
    pub(crate) fn answer(
        &mut self,
        registry: &AgentKeyRegistry,
        challenge: &Challenge,
        signature: &str,
        now: UnixMillis,
    ) -> Result<SessionGrant, AuthError> {
        self.check_answer(registry, challenge, signature, now)?;
        let epoch = self.next_epoch(&challenge.agent_id)?;
        self.open_at_epoch(challenge, epoch, now)
    }

    /// Checks an answer to a challenge already taken out of the pending set, without opening a
    /// session: its expiry, the key's validity at `now` and the strict Ed25519 `signature`
    /// (base64url) over [`Challenge::signing_bytes`].
    ///
    /// For a host whose Session Epoch comes from elsewhere (the gateway opens it through the
    /// authoritative Core's `session_open`, §6.3): it verifies first, so that nobody who failed
    /// the challenge can fence the Agent's sessions, then calls
    /// [`open_at_epoch`](Self::open_at_epoch) with the Core's epoch.
    pub fn check_answer(
        &self,
        registry: &AgentKeyRegistry,
        challenge: &Challenge,
        signature: &str,
        now: UnixMillis,
    ) -> Result<(), AuthError> {
        if now >= challenge.expires_at {
            return Err(AuthError::ChallengeExpired);
        }
        let key = registry.resolve(&challenge.agent_id, Some(&challenge.key_id), now)?;
        verify_signature(&key.public_key, &challenge.signing_bytes()?, signature)
    }

    /// The epoch a locally opened session gets: the current one + 1.
    pub(crate) fn next_epoch(&self, agent_id: &str) -> Result<u64, AuthError> {
        let epoch = self.current_epoch(agent_id);
        if epoch >= MAX_SESSION_EPOCH {
            return Err(AuthError::EpochExhausted);
        }
        Ok(epoch + 1)
    }

    /// Issues the session token of a verified challenge ([`check_answer`](Self::check_answer))
    /// at Session Epoch `epoch`, which becomes the Agent's current one (fencing every token at a
    /// lower epoch, §6.3). `epoch` must be a positive safe integer above the current epoch: an
    /// epoch at or below it was already issued (`StaleSession`).
    pub fn open_at_epoch(
        &mut self,
        challenge: &Challenge,
        epoch: u64,
        now: UnixMillis,
    ) -> Result<SessionGrant, AuthError> {
        if !(1..=MAX_SESSION_EPOCH).contains(&epoch) {
            return Err(AuthError::InvalidArgument(
                "epoch must be a positive safe integer",
            ));
        }
        if epoch <= self.current_epoch(&challenge.agent_id) {
            return Err(AuthError::StaleSession);
        }
        let claims = Claims {
            agent_id: challenge.agent_id.clone(),
            key_id: challenge.key_id.clone(),
            protocol_version: challenge.protocol_version.clone(),
            session_epoch: epoch,
            issued_at: now,
            expires_at: now.saturating_add_ms(self.config.session_ttl_ms),
        };
        let token = token::seal(&self.secret, &claims)?;
        self.epochs
            .insert(claims.agent_id.clone(), claims.session_epoch);
        Ok(grant(claims, token))
    }

    /// Checks a session token at `now`: its MAC (constant time), its expiry, that its epoch is
    /// still the Agent's current one, and that its key is still registered and valid.
    pub fn verify_session(
        &self,
        registry: &AgentKeyRegistry,
        token: &str,
        now: UnixMillis,
    ) -> Result<SessionGrant, AuthError> {
        let claims = token::open(&self.secret, token)?;
        if now >= claims.expires_at {
            return Err(AuthError::SessionExpired);
        }
        if claims.session_epoch != self.current_epoch(&claims.agent_id) {
            return Err(AuthError::StaleSession);
        }
        registry.resolve(&claims.agent_id, Some(&claims.key_id), now)?;
        Ok(grant(claims, token.to_owned()))
    }

    /// [`verify_session`](Self::verify_session) for a Command acting as `agent_id`: a valid
    /// token of another Agent is [`AuthError::AgentMismatch`].
    pub fn verify_session_for(
        &self,
        registry: &AgentKeyRegistry,
        token: &str,
        agent_id: &str,
        now: UnixMillis,
    ) -> Result<SessionGrant, AuthError> {
        let grant = self.verify_session(registry, token, now)?;
        if grant.agent_id != agent_id {
            return Err(AuthError::AgentMismatch);
        }
        Ok(grant)
    }

    /// Adopts the authoritative Core's Session Epoch for `agent_id` (e.g. after a restart or
    /// when another gateway opened a session). It never lowers the epoch: an older value is
    /// ignored. Tokens below the new epoch stop verifying.
    pub fn synchronize_epoch(
        &mut self,
        agent_id: &str,
        authoritative_epoch: u64,
    ) -> Result<(), AuthError> {
        if agent_id.is_empty() {
            return Err(AuthError::InvalidArgument("agent_id is empty"));
        }
        if !(1..=MAX_SESSION_EPOCH).contains(&authoritative_epoch) {
            return Err(AuthError::InvalidArgument(
                "authoritative_epoch must be a positive safe integer",
            ));
        }
        let current = self.epochs.entry(agent_id.to_owned()).or_insert(0);
        *current = (*current).max(authoritative_epoch);
        Ok(())
    }

    /// The Agent's current Session Epoch (0 before its first session).
    pub fn current_epoch(&self, agent_id: &str) -> u64 {
        self.epochs.get(agent_id).copied().unwrap_or(0)
    }
}

fn grant(claims: Claims, token: String) -> SessionGrant {
    SessionGrant {
        agent_id: claims.agent_id,
        key_id: claims.key_id,
        protocol_version: claims.protocol_version,
        session_epoch: claims.session_epoch,
        issued_at: claims.issued_at,
        expires_at: claims.expires_at,
        token,
    }
}
