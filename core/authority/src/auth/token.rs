//! Session tokens: `b64url(JCS claims) "." b64url(HMAC-SHA256(secret, claims part))`.
//!
//! The claims bind the Agent, its key, the protocol version, the Session Epoch and the
//! validity window. A token is at most [`MAX_TOKEN_CHARS`] characters (the `sessionToken`
//! bound of `websocket-frame.schema.json`); a longer input is refused before any decoding, so
//! reading any input costs O(8192) work. The MAC is checked, in constant time, before the
//! claims are parsed: unauthenticated bytes never reach the JSON parser.

use core::fmt;

use hmac::{Hmac, KeyInit, Mac};
use missionweaveprotocol::json::{Number, Object, Value, canonical_bytes, parse};
use missionweaveprotocol::schema_formats::{decode_base64url, encode_base64url};
use sha2::Sha256;

use super::AuthError;
use crate::unix_millis::UnixMillis;

/// The longest token accepted (`sessionToken` `maxLength`, §17 frame schema).
pub const MAX_TOKEN_CHARS: usize = 8192;

/// The smallest secret accepted: HMAC-SHA256 keys shorter than the hash output weaken it.
pub const MIN_SECRET_BYTES: usize = 32;

/// The HMAC key, kept only as the keyed HMAC state (the raw bytes are zeroed once it is
/// derived). It never appears in `Debug`.
pub(crate) struct Secret(Hmac<Sha256>);

impl Secret {
    pub(crate) fn new(mut bytes: Vec<u8>) -> Result<Self, AuthError> {
        let keyed = if bytes.len() < MIN_SECRET_BYTES {
            Err(AuthError::InvalidArgument(
                "the session secret must be at least 32 bytes",
            ))
        } else {
            <Hmac<Sha256> as KeyInit>::new_from_slice(&bytes)
                .map_err(|_| AuthError::InvalidArgument("the session secret is not an HMAC key"))
        };
        bytes.fill(0);
        core::hint::black_box(&bytes);
        keyed.map(Self)
    }

    fn mac(&self) -> Hmac<Sha256> {
        self.0.clone()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
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
    let json = canonical_bytes(&claims.to_value())
        .map_err(|_| AuthError::InvalidArgument("the claims are not canonical JSON"))?;
    let body = encode_base64url(&json);
    let mut mac = secret.mac();
    mac.update(body.as_bytes());
    let tag = mac.finalize().into_bytes();
    let token = format!("{body}.{}", encode_base64url(&tag));
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
    if token.len() > MAX_TOKEN_CHARS {
        return Err(AuthError::InvalidToken);
    }
    let (body, tag) = token.split_once('.').ok_or(AuthError::InvalidToken)?;
    let tag = decode_base64url(tag).ok_or(AuthError::InvalidToken)?;
    let mut mac = secret.mac();
    mac.update(body.as_bytes());
    // `verify_slice` compares in constant time (and refuses a tag of the wrong length).
    mac.verify_slice(&tag)
        .map_err(|_| AuthError::InvalidToken)?;
    let json = decode_base64url(body).ok_or(AuthError::InvalidToken)?;
    let value = parse(&json).map_err(|_| AuthError::InvalidToken)?;
    Claims::from_value(&value).ok_or(AuthError::InvalidToken)
}
