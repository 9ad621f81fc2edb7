//! One HELLO challenge (§6.3 step 2) and the bytes the Agent signs for it (step 3).

use missionweaveprotocol::crypto::{PublicKey, check_r, split_signature};
use missionweaveprotocol::json::{Object, Value, canonical_bytes};
use missionweaveprotocol::schema_formats::decode_base64url;

use crate::auth::error::AuthError;
use missionweaveprotocol_kernel::unix_millis::{Fraction, UnixMillis, render_rfc3339};

/// A fresh server challenge for one Agent key. `challenge_id` is the `challenge` member of the
/// `HELLO/server_challenge` frame; `server_nonce` is its `serverNonce`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    /// The negotiated protocol version.
    pub protocol_version: String,
    /// The unpredictable challenge (canonical base64url of 32 random bytes).
    pub challenge_id: String,
    /// The Agent the challenge is for.
    pub agent_id: String,
    /// The key the Agent must sign with.
    pub key_id: String,
    /// The Agent's nonce from `HELLO/client_init` (canonical base64url).
    pub client_nonce: String,
    /// The server's nonce (canonical base64url of 32 random bytes).
    pub server_nonce: String,
    /// The first instant the challenge can no longer be answered.
    pub expires_at: UnixMillis,
}

impl Challenge {
    /// The server nonce (the reference's `Challenge.nonce`).
    pub fn nonce(&self) -> &str {
        &self.server_nonce
    }

    /// The canonical challenge transcript the Agent signs (§6.3 step 3): RFC 8785 bytes of
    /// `{agentId, challengeId, clientNonce, expiresAt, keyId, protocolVersion, serverNonce}`,
    /// `expiresAt` rendered as the reference runtime renders it (Python's `isoformat()` of a
    /// UTC instant: `2026-07-15T08:00:05+00:00`, `…05.006000+00:00`). §6.3 leaves the
    /// transcript undefined (digest ambiguity 7) and it never travels (both sides rebuild it,
    /// `gateway::frames::challenge`), so the reference's bytes are kept: a `Challenge` signs
    /// the same bytes there and here. Wire documents keep the `Z` profile.
    pub fn signing_bytes(&self) -> Result<Vec<u8>, AuthError> {
        let expires_at = self
            .expires_at
            .0
            .checked_mul(1000)
            .and_then(|micros| render_rfc3339(micros, Fraction::Micros))
            .and_then(|text| text.strip_suffix('Z').map(|t| format!("{t}+00:00")))
            .ok_or(AuthError::InvalidArgument(
                "expires_at is outside years 0001-9999",
            ))?;
        let mut object = Object::new();
        object.insert(
            "protocolVersion",
            Value::string(self.protocol_version.as_str()),
        );
        object.insert("challengeId", Value::string(self.challenge_id.as_str()));
        object.insert("agentId", Value::string(self.agent_id.as_str()));
        object.insert("keyId", Value::string(self.key_id.as_str()));
        object.insert("clientNonce", Value::string(self.client_nonce.as_str()));
        object.insert("serverNonce", Value::string(self.server_nonce.as_str()));
        object.insert("expiresAt", Value::string(expires_at));
        canonical_bytes(&Value::Object(object))
            .map_err(|_| AuthError::InvalidArgument("the challenge is not canonical JSON"))
    }
}

/// Strict Ed25519 verification of a base64url signature over `message` (§6.4's rules: canonical
/// unpadded base64url, 64 bytes, `S < L`, `R` canonical and on the curve, then the cofactorless
/// equation). Every failure is [`AuthError::InvalidSignature`].
pub(crate) fn verify_signature(
    key: &PublicKey,
    message: &[u8],
    signature: &str,
) -> Result<(), AuthError> {
    let bytes = decode_base64url(signature).ok_or(AuthError::InvalidSignature)?;
    let parts = split_signature(&bytes).map_err(|_| AuthError::InvalidSignature)?;
    check_r(&parts.r).map_err(|_| AuthError::InvalidSignature)?;
    if key.verify_equation(&parts.r, &parts.s, message) {
        Ok(())
    } else {
        Err(AuthError::InvalidSignature)
    }
}
