//! Session tokens: `b64url(JCS claims) "." b64url(HMAC-SHA256(secret, claims part))`.
//!
//! The claims bind the Agent, its key, the protocol version, the Session Epoch and the
//! validity window. A token is at most [`MAX_TOKEN_CHARS`] characters (the `sessionToken`
//! bound of `websocket-frame.schema.json`); a longer input is refused before any decoding, so
//! reading any input costs O(8192) work. The MAC is checked, in constant time, before the
//! claims are parsed: unauthenticated bytes never reach the JSON parser.

use missionweaveprotocol::json::{Number, Object, Value};

use crate::auth::error::AuthError;
use crate::sealed_token::{SealingKey, Unsealed};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The longest token accepted (`sessionToken` `maxLength`, §17 frame schema).
pub const MAX_TOKEN_CHARS: usize = 8192;

pub use crate::sealed_token::MIN_SECRET_BYTES;

/// Session tokens carry no domain label (`sealed_token`).
const DOMAIN: &str = "";

/// The HMAC key (`sealed_token::SealingKey`: the keyed state only, never in `Debug`).
#[derive(Debug)]
pub(crate) struct Secret(SealingKey);

impl Secret {
    pub(crate) fn new(bytes: Vec<u8>) -> Result<Self, AuthError> {
        SealingKey::new(bytes)
            .map(Self)
            .ok_or(AuthError::InvalidArgument(
                "the session secret must be at least 32 bytes",
            ))
    }
}

/// What a session token asserts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Claims {
    pub agent_id: String,
    pub key_id: String,
    pub protocol_version: String,
    pub session_epoch: u64,
    pub issued_at: UnixMillis,
    pub expires_at: UnixMillis,
}

impl Claims {
    fn to_value(&self) -> Value {
        let mut object = Object::new();
        object.insert("agentId", Value::string(self.agent_id.as_str()));
        object.insert("keyId", Value::string(self.key_id.as_str()));
        object.insert(
            "protocolVersion",
            Value::string(self.protocol_version.as_str()),
        );
        object.insert(
            "sessionEpoch",
            Value::Number(Number::from_u64(self.session_epoch)),
        );
        object.insert(
            "issuedAt",
            Value::Number(Number::from_i64(self.issued_at.0)),
        );
        object.insert(
            "expiresAt",
            Value::Number(Number::from_i64(self.expires_at.0)),
        );
        Value::Object(object)
    }

    fn from_value(value: &Value) -> Option<Self> {
        let object = value.as_object()?;
        if object.len() != 6 {
            return None;
        }
        let text = |name: &str| object.get(name)?.as_str().map(str::to_owned);
        let number = |name: &str| object.get(name)?.as_number();
        Some(Self {
            agent_id: text("agentId")?,
            key_id: text("keyId")?,
            protocol_version: text("protocolVersion")?,
            session_epoch: number("sessionEpoch")?.as_u64()?,
            issued_at: UnixMillis(number("issuedAt")?.as_i64()?),
            expires_at: UnixMillis(number("expiresAt")?.as_i64()?),
        })
    }
}

/// Signs `claims` into a token.
pub(crate) fn seal(secret: &Secret, claims: &Claims) -> Result<String, AuthError> {
    let token = secret
        .0
        .seal(DOMAIN, &claims.to_value())
        .ok_or(AuthError::InvalidArgument(
            "the claims are not canonical JSON",
        ))?;
    if token.len() > MAX_TOKEN_CHARS {
        return Err(AuthError::InvalidArgument(
            "identifiers too long for a session token",
        ));
    }
    Ok(token)
}

/// Checks the token's form and MAC, then reads its claims. Every failure is
/// [`AuthError::InvalidToken`]; nothing about the token is echoed.
pub(crate) fn open(secret: &Secret, token: &str) -> Result<Claims, AuthError> {
    let claims = secret
        .0
        .open(DOMAIN, token, MAX_TOKEN_CHARS)
        .map_err(|_: Unsealed| AuthError::InvalidToken)?;
    Claims::from_value(&Value::Object(claims)).ok_or(AuthError::InvalidToken)
}
