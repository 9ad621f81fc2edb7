//! The typed refusals of Agent authentication (§6.3), each with its §19 wire code.
//!
//! No variant carries a secret, a token, a MAC, a signature or a nonce: an error may be logged
//! or shown to the peer, so it names only the rule that failed (and public identifiers the
//! caller already supplied).

use core::fmt;

use missionweaveprotocol::{DescribeError, ErrorClass, WireCode};

/// Why an authentication step was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthError {
    /// API misuse: an empty identifier, a malformed nonce, a validity window that ends before
    /// it starts, a short secret (`PROTOCOL_VIOLATION`, as every binding reports misuse).
    InvalidArgument(&'static str),
    /// The public key is not a strictly valid Ed25519 point (§6.4: canonical, on the curve, in
    /// the prime-order subgroup, not the identity).
    InvalidPublicKey,
    /// The key ID is registered with other material or another `validFrom`: key IDs are never
    /// reused and `validFrom` is set once (digest §2.18).
    KeyIdReused,
    /// No registered key for this Agent and key ID.
    UnknownKey,
    /// The key's `validFrom` lies after the instant.
    KeyNotYetValid,
    /// The key's `validUntil` is at or before the instant.
    KeyExpired,
    /// The key's `revokedAt` is at or before the instant.
    KeyRevoked,
    /// HELLO negotiated a protocol version this runtime does not speak (§6.3, §21).
    UnsupportedVersion,
    /// No pending challenge has this ID: never issued, or already used once (a replay).
    UnknownChallenge,
    /// The challenge expired before the response arrived.
    ChallengeExpired,
    /// The `client_response` names another Agent, key or nonce than the challenge it answers.
    ChallengeMismatch,
    /// The challenge signature is malformed or does not verify under the registered key.
    InvalidSignature,
    /// Too many challenges are pending; expired ones were already dropped.
    TooManyChallenges,
    /// The session token is malformed, too long, or its MAC does not verify.
    InvalidToken,
    /// The session token is past its `expiresAt`.
    SessionExpired,
    /// The session token authenticates another Agent than the one acting.
    AgentMismatch,
    /// The token's Session Epoch is no longer the Agent's current one (§6.3 fencing).
    StaleSession,
    /// The Session Epoch cannot be increased further (it stays a JSON safe integer).
    EpochExhausted,
    /// A frame other than `HELLO` before the handshake completed (digest §2.10).
    NotAuthenticated,
    /// A `HELLO` phase out of order (digest §2.10).
    UnexpectedPhase,
}

impl AuthError {
    /// The §19 wire code.
    pub const fn code(&self) -> WireCode {
        match self {
            Self::InvalidArgument(_)
            | Self::InvalidPublicKey
            | Self::KeyIdReused
            | Self::UnexpectedPhase => WireCode::ProtocolViolation,
            // "signature, key validity, admission proof, or freshness check failed" (§19).
            Self::UnknownKey
            | Self::KeyNotYetValid
            | Self::KeyExpired
            | Self::KeyRevoked
            | Self::UnknownChallenge
            | Self::ChallengeExpired
            | Self::ChallengeMismatch
            | Self::InvalidSignature => WireCode::AuthInvalidSignature,
            Self::UnsupportedVersion => WireCode::UnsupportedVersion,
            Self::TooManyChallenges => WireCode::RateLimited,
            // No valid session is presented: "Authentication is absent" (§19); the Agent must
            // run the HELLO handshake again.
            Self::InvalidToken
            | Self::SessionExpired
            | Self::AgentMismatch
            | Self::NotAuthenticated => WireCode::AuthRequired,
            Self::StaleSession => WireCode::AuthStaleSession,
            Self::EpochExhausted => WireCode::InternalError,
        }
    }

    /// The stable reason slug (snake_case, as the authority layer's other slugs).
    pub const fn reason(&self) -> &'static str {
        match self {
            Self::InvalidArgument(_) => "invalid_argument",
            Self::InvalidPublicKey => "invalid_public_key",
            Self::KeyIdReused => "key_id_reused",
            Self::UnknownKey => "unknown_key",
            Self::KeyNotYetValid => "key_not_yet_valid",
            Self::KeyExpired => "key_expired",
            Self::KeyRevoked => "key_revoked",
            Self::UnsupportedVersion => "unsupported_version",
            Self::UnknownChallenge => "unknown_challenge",
            Self::ChallengeExpired => "challenge_expired",
            Self::ChallengeMismatch => "challenge_mismatch",
            Self::InvalidSignature => "invalid_signature",
            Self::TooManyChallenges => "too_many_challenges",
            Self::InvalidToken => "invalid_token",
            Self::SessionExpired => "session_expired",
            Self::AgentMismatch => "agent_mismatch",
            Self::StaleSession => "stale_session",
            Self::EpochExhausted => "epoch_exhausted",
            Self::NotAuthenticated => "not_authenticated",
            Self::UnexpectedPhase => "unexpected_phase",
        }
    }

    /// Whether an unchanged retry can succeed (§19).
    pub const fn retryable(&self) -> bool {
        self.code().retryable()
    }
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidArgument(what) => write!(f, "invalid argument: {what}"),
            Self::InvalidPublicKey => f.write_str("the public key is not a valid Ed25519 key"),
            Self::KeyIdReused => {
                f.write_str("the key ID is already registered with other key material or validFrom")
            }
            Self::UnknownKey => f.write_str("no registered key for this Agent and key ID"),
            Self::KeyNotYetValid => f.write_str("the Agent key is not valid yet"),
            Self::KeyExpired => f.write_str("the Agent key has expired"),
            Self::KeyRevoked => f.write_str("the Agent key is revoked"),
            Self::UnsupportedVersion => f.write_str("no compatible protocol version"),
            Self::UnknownChallenge => {
                f.write_str("unknown challenge (never issued, or already used)")
            }
            Self::ChallengeExpired => f.write_str("the challenge has expired"),
            Self::ChallengeMismatch => {
                f.write_str("the response does not match the challenge it answers")
            }
            Self::InvalidSignature => f.write_str("the challenge signature does not verify"),
            Self::TooManyChallenges => f.write_str("too many pending challenges"),
            Self::InvalidToken => f.write_str("the session token is not valid"),
            Self::SessionExpired => f.write_str("the session has expired"),
            Self::AgentMismatch => f.write_str("the session belongs to another Agent"),
            Self::StaleSession => f.write_str("the Session Epoch is fenced"),
            Self::EpochExhausted => f.write_str("the Session Epoch cannot be increased"),
            Self::NotAuthenticated => f.write_str("authentication is required"),
            Self::UnexpectedPhase => f.write_str("HELLO phase out of order"),
        }
    }
}

impl std::error::Error for AuthError {}

/// The one description every binding converts (`ErrorClass::Authentication`: Python
/// `AuthenticationError`, a `ValueError` as the reference's; JavaScript `AuthenticationError`).
/// No structured fields: an identifier the caller supplied is already known to it, and nothing
/// secret may travel in an error.
impl DescribeError for AuthError {
    fn class(&self) -> ErrorClass {
        ErrorClass::Authentication
    }

    fn wire_code(&self) -> WireCode {
        self.code()
    }

    fn reason(&self) -> &str {
        AuthError::reason(self)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use missionweaveprotocol::{DescribeError, ErrorClass, WireCode};

    use super::AuthError;

    const ALL: [AuthError; 20] = [
        AuthError::InvalidArgument("agent_id is empty"),
        AuthError::InvalidPublicKey,
        AuthError::KeyIdReused,
        AuthError::UnknownKey,
        AuthError::KeyNotYetValid,
        AuthError::KeyExpired,
        AuthError::KeyRevoked,
        AuthError::UnsupportedVersion,
        AuthError::UnknownChallenge,
        AuthError::ChallengeExpired,
        AuthError::ChallengeMismatch,
        AuthError::InvalidSignature,
        AuthError::TooManyChallenges,
        AuthError::InvalidToken,
        AuthError::SessionExpired,
        AuthError::AgentMismatch,
        AuthError::StaleSession,
        AuthError::EpochExhausted,
        AuthError::NotAuthenticated,
        AuthError::UnexpectedPhase,
    ];

    #[test]
    fn every_refusal_describes_itself_as_authentication() {
        let mut reasons = HashSet::new();
        for error in ALL {
            let described: &dyn DescribeError = &error;
            assert_eq!(described.class(), ErrorClass::Authentication);
            assert_eq!(described.wire_code(), error.code());
            assert_eq!(described.reason(), error.reason());
            assert_eq!(described.retryable(), error.retryable());
            assert_eq!(described.detail(), error.to_string());
            assert_eq!(described.stage(), None);
            assert!(described.fields().is_empty());
            assert!(reasons.insert(error.reason()), "{error:?}: one slug each");
        }
        assert_eq!(
            ErrorClass::Authentication.python_name(),
            "AuthenticationError"
        );
        assert_eq!(ErrorClass::Authentication.js_name(), "AuthenticationError");
        assert_eq!(
            ErrorClass::parse("authentication"),
            Some(ErrorClass::Authentication)
        );
    }

    #[test]
    fn retryability_is_the_wire_codes() {
        // §19: a refused credential needs another one, not the same call again; the
        // pending-challenge limit clears by itself.
        let too_many: &dyn DescribeError = &AuthError::TooManyChallenges;
        assert_eq!(too_many.wire_code(), WireCode::RateLimited);
        assert!(too_many.retryable());
        let stale: &dyn DescribeError = &AuthError::StaleSession;
        assert_eq!(stale.wire_code(), WireCode::AuthStaleSession);
        assert!(!stale.retryable());
        assert_eq!(ErrorClass::parse("auth"), None);
    }
}
