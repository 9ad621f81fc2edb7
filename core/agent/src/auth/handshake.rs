//! The per-connection HELLO state machine (digest §2.10, §6.3): one `HELLO` frame type whose
//! `phase` is `client_init`, `server_challenge`, `client_response` or `server_accept`.
//!
//! ```text
//! Open ──client_init──▶ Challenged ──client_response (valid)──▶ Authenticated
//!   any other frame: AUTH_REQUIRED      a failed response ends the challenge (one use)
//! ```
//!
//! The frames themselves are parsed and schema-checked by `missionweaveprotocol::wire`; this
//! module takes their members.

use missionweaveprotocol::PROTOCOL_VERSION;

use super::challenge::Challenge;
use super::registry::AgentKeyRegistry;
use super::session::{SessionAuthority, SessionGrant};
use crate::auth::error::AuthError;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The four phases of the one `HELLO` frame type (§6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HelloPhase {
    /// Agent → server: Agent ID, key ID, nonce, supported versions.
    ClientInit,
    /// Server → Agent: the challenge and the selected version.
    ServerChallenge,
    /// Agent → server: the signature over the challenge transcript.
    ClientResponse,
    /// Server → Agent: the session token and the new Session Epoch.
    ServerAccept,
}

impl HelloPhase {
    /// Every phase, in handshake order.
    pub const ALL: [HelloPhase; 4] = [
        Self::ClientInit,
        Self::ServerChallenge,
        Self::ClientResponse,
        Self::ServerAccept,
    ];

    /// The wire spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::ClientInit => "client_init",
            Self::ServerChallenge => "server_challenge",
            Self::ClientResponse => "client_response",
            Self::ServerAccept => "server_accept",
        }
    }

    /// The phase of a wire spelling.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == text)
    }
}

/// The members of `HELLO/client_init`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientInit {
    pub agent_id: String,
    pub key_id: String,
    pub client_nonce: String,
    pub supported_versions: Vec<String>,
}

/// The members of `HELLO/client_response`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientResponse {
    pub agent_id: String,
    pub key_id: String,
    pub client_nonce: String,
    pub server_nonce: String,
    pub challenge_signature: String,
}

/// Where one connection is in the handshake.
#[derive(Debug, Clone, Default)]
pub enum Handshake {
    /// Nothing received yet.
    #[default]
    Open,
    /// A challenge was sent; the connection holds its ID.
    Challenged(Challenge),
    /// The response verified; the Session Epoch is being opened elsewhere (the gateway opens
    /// it through the Core's `session_open`), then [`Handshake::open_at`] authenticates.
    Verified(Challenge),
    /// The Agent is authenticated.
    Authenticated(SessionGrant),
    /// A response failed: the connection must be closed (its challenge is spent).
    Failed,
}

impl Handshake {
    /// Handles `client_init`: negotiates the version (`UNSUPPORTED_VERSION` when the Agent
    /// speaks none of ours) and issues a challenge. Returns the `server_challenge` members
    /// (`selectedVersion` = `challenge.protocol_version`, `challenge` = `challenge_id`).
    pub fn client_init(
        &mut self,
        authority: &mut SessionAuthority,
        registry: &AgentKeyRegistry,
        init: &ClientInit,
        now: UnixMillis,
    ) -> Result<Challenge, AuthError> {
        if !matches!(self, Self::Open) {
            return Err(AuthError::UnexpectedPhase);
        }
        if !init
            .supported_versions
            .iter()
            .any(|v| v == PROTOCOL_VERSION)
        {
            return Err(AuthError::UnsupportedVersion);
        }
        let challenge = authority.issue_challenge(
            registry,
            &init.agent_id,
            Some(&init.key_id),
            Some(&init.client_nonce),
            PROTOCOL_VERSION,
            now,
        )?;
        *self = Self::Challenged(challenge.clone());
        Ok(challenge)
    }

    /// Handles `client_response`: its Agent, key and nonces must echo the challenge, and its
    /// signature must verify. The challenge is spent whatever the outcome; on failure the
    /// connection moves to [`Handshake::Failed`].
    pub fn client_response(
        &mut self,
        authority: &mut SessionAuthority,
        registry: &AgentKeyRegistry,
        response: &ClientResponse,
        now: UnixMillis,
    ) -> Result<SessionGrant, AuthError> {
        let challenge = self.verify_response(authority, registry, response, now)?;
        let epoch = authority.next_epoch(&challenge.agent_id).inspect_err(|_| {
            *self = Self::Failed;
        })?;
        self.open_at(authority, epoch, now)
    }

    /// [`client_response`](Self::client_response) up to the verified signature, for a host whose
    /// Session Epoch comes from the authoritative Core (§6.3: the gateway performs
    /// `session_open` only for a verified Agent): spends the challenge, checks the echoes and
    /// the signature, and moves to [`Handshake::Verified`]. On failure: [`Handshake::Failed`].
    pub fn verify_response(
        &mut self,
        authority: &mut SessionAuthority,
        registry: &AgentKeyRegistry,
        response: &ClientResponse,
        now: UnixMillis,
    ) -> Result<Challenge, AuthError> {
        let Self::Challenged(challenge) = core::mem::replace(self, Self::Failed) else {
            return Err(AuthError::UnexpectedPhase);
        };
        let pending = authority
            .discard_challenge(&challenge.challenge_id)
            .ok_or(AuthError::UnknownChallenge)?;
        let echoes = pending.agent_id == response.agent_id
            && pending.key_id == response.key_id
            && pending.client_nonce == response.client_nonce
            && pending.server_nonce == response.server_nonce;
        if !echoes {
            return Err(AuthError::ChallengeMismatch);
        }
        authority.check_answer(registry, &pending, &response.challenge_signature, now)?;
        *self = Self::Verified(pending.clone());
        Ok(pending)
    }

    /// Authenticates a [`Handshake::Verified`] connection at Session Epoch `epoch` (the Core's):
    /// the token is issued by [`SessionAuthority::open_at_epoch`]. On failure:
    /// [`Handshake::Failed`].
    pub fn open_at(
        &mut self,
        authority: &mut SessionAuthority,
        epoch: u64,
        now: UnixMillis,
    ) -> Result<SessionGrant, AuthError> {
        let Self::Verified(challenge) = core::mem::replace(self, Self::Failed) else {
            return Err(AuthError::UnexpectedPhase);
        };
        let grant = authority.open_at_epoch(&challenge, epoch, now)?;
        *self = Self::Authenticated(grant.clone());
        Ok(grant)
    }

    /// The session, for any frame other than `HELLO`: `AUTH_REQUIRED` before the handshake
    /// completed.
    pub fn require_authenticated(&self) -> Result<&SessionGrant, AuthError> {
        match self {
            Self::Authenticated(grant) => Ok(grant),
            _ => Err(AuthError::NotAuthenticated),
        }
    }
}
