//! The answers of the `auth` module (§6.3): a HELLO challenge and a session grant. Arguments
//! are strings and JavaScript numbers (instants in Unix milliseconds), checked in
//! [`crate::auth`]; no answer names a secret, and a grant's `token` is the bearer string the
//! Agent presents.

use missionweaveprotocol_agent::auth::{Challenge, SessionGrant};
use serde::Serialize;
#[cfg(test)]
use ts_rs::TS;

use super::common::Millis;

/// A one-use challenge; `signingBytes` is the canonical transcript (RFC 8785 text) the Agent
/// signs.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(TS))]
pub struct ChallengeAnswer {
    pub protocol_version: String,
    pub challenge_id: String,
    pub agent_id: String,
    pub key_id: String,
    pub client_nonce: String,
    pub server_nonce: String,
    pub expires_at: Millis,
    pub signing_bytes: String,
}

impl ChallengeAnswer {
    /// The challenge with its transcript `signing_bytes` (RFC 8785 text).
    pub fn new(challenge: &Challenge, signing_bytes: String) -> Self {
        Self {
            protocol_version: challenge.protocol_version.clone(),
            challenge_id: challenge.challenge_id.clone(),
            agent_id: challenge.agent_id.clone(),
            key_id: challenge.key_id.clone(),
            client_nonce: challenge.client_nonce.clone(),
            server_nonce: challenge.server_nonce.clone(),
            expires_at: challenge.expires_at.into(),
            signing_bytes,
        }
    }
}

/// An open session: the Agent, its key, the Session Epoch and the token's window.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(TS))]
pub struct SessionGrantAnswer {
    pub agent_id: String,
    pub key_id: String,
    pub protocol_version: String,
    pub session_epoch: u64,
    pub issued_at: Millis,
    pub expires_at: Millis,
    pub token: String,
}

impl From<SessionGrant> for SessionGrantAnswer {
    fn from(grant: SessionGrant) -> Self {
        Self {
            agent_id: grant.agent_id,
            key_id: grant.key_id,
            protocol_version: grant.protocol_version,
            session_epoch: grant.session_epoch,
            issued_at: grant.issued_at.into(),
            expires_at: grant.expires_at.into(),
            token: grant.token,
        }
    }
}
