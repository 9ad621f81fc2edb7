//! Sealed tokens: `b64url(canonical claims) "." b64url(HMAC-SHA256)` (the reference's format,
//! `reference-python.md` §1.16).
//!
//! The MAC covers a per-kind domain label and the encoded claims, so a membership token never
//! verifies as a capability grant (or the reverse) even under one shared secret. Verification
//! bounds the input length before any work, compares MACs in constant time (`hmac`'s
//! `verify_slice`), and accepts only canonical base64url and canonical JSON claims, so every
//! accepted token has exactly one spelling.

use core::fmt;

use hmac::{Hmac, KeyInit, Mac};
use missionweaveprotocol::json::{self, Number, Object, Value};
use missionweaveprotocol::schema_formats::{decode_base64url, encode_base64url};
use sha2::Sha256;

use super::error::PolicyError;
use crate::resources::MAX_SAFE_INTEGER;
use crate::unix_millis::UnixMillis;

type HmacSha256 = Hmac<Sha256>;

/// Shortest accepted secret (256 bits, the HMAC-SHA256 block-size guidance of RFC 2104 §3).
pub const MIN_SECRET_BYTES: usize = 32;

/// Longest secret accepted (longer keys are hashed by HMAC anyway).
pub const MAX_SECRET_BYTES: usize = 1024;

/// Longest token string examined: anything longer is refused before decoding (a bound on the
/// work an unauthenticated input can cause).
pub const MAX_TOKEN_CHARS: usize = 16 * 1024;

/// Identifier fields (principal, Group, WorkItem, …) are 1..=512 characters, as the reference's.
pub const MAX_ID_CHARS: usize = 512;

/// A MAC key. Its `Debug` never shows the bytes.
#[derive(Clone)]
pub struct TokenKey {
    secret: Vec<u8>,
}

impl fmt::Debug for TokenKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TokenKey(<redacted>)")
    }
}

impl TokenKey {
    /// A key of 32..=1024 bytes.
    pub fn new(secret: &[u8]) -> Result<Self, PolicyError> {
        if !(MIN_SECRET_BYTES..=MAX_SECRET_BYTES).contains(&secret.len()) {
            return Err(PolicyError::invalid(
                "secret",
                format!("the secret must be {MIN_SECRET_BYTES} to {MAX_SECRET_BYTES} bytes"),
            ));
        }
        Ok(Self {
            secret: secret.to_vec(),
        })
    }

    fn mac(&self, domain: &str, encoded_claims: &str) -> Result<HmacSha256, PolicyError> {
        let mut mac = <HmacSha256 as KeyInit>::new_from_slice(&self.secret)
            .map_err(|_| PolicyError::invalid("secret", "the secret cannot key HMAC-SHA256"))?;
        mac.update(domain.as_bytes());
        mac.update(b".");
        mac.update(encoded_claims.as_bytes());
        Ok(mac)
    }

    /// Seals `claims` (a JSON object) under `domain`.
    pub fn seal(&self, domain: &str, claims: &Value) -> Result<String, PolicyError> {
        let bytes = json::canonical_bytes(claims).map_err(|e| {
            PolicyError::invalid("claims", format!("claims have no canonical form: {e}"))
        })?;
        let encoded = encode_base64url(&bytes);
        let tag = self.mac(domain, &encoded)?.finalize().into_bytes();
        let mut token = encoded;
        token.push('.');
        token.push_str(&encode_base64url(&tag));
        Ok(token)
    }

    /// Opens a token sealed under `domain`: its claims object, or `token_malformed` /
    /// `token_forged`. The MAC is checked before the claims are parsed.
    pub fn open(&self, domain: &str, token: &str) -> Result<Object, PolicyError> {
        if token.len() > MAX_TOKEN_CHARS {
            return Err(PolicyError::malformed_token(format!(
                "a token is at most {MAX_TOKEN_CHARS} bytes"
            )));
        }
        let Some((encoded, tag)) = token.split_once('.') else {
            return Err(PolicyError::malformed_token(
                "a token is two base64url parts joined by '.'",
            ));
        };
        let Some(tag) = decode_base64url(tag) else {
            return Err(PolicyError::malformed_token(
                "the MAC is not canonical base64url",
            ));
        };
        // verify_slice compares in constant time and refuses a wrong length.
        self.mac(domain, encoded)?
            .verify_slice(&tag)
            .map_err(|_| PolicyError::forged_token())?;
        let bytes = decode_base64url(encoded).ok_or_else(|| {
            PolicyError::malformed_token("the claims are not canonical base64url")
        })?;
        let claims = json::parse(&bytes)
            .map_err(|_| PolicyError::malformed_token("the claims are not JSON"))?;
        // Only the canonical spelling this service seals is accepted.
        if json::canonical_bytes(&claims).ok().as_deref() != Some(bytes.as_slice()) {
            return Err(PolicyError::malformed_token(
                "the claims are not canonical JSON",
            ));
        }
        match claims {
            Value::Object(object) => Ok(object),
            _ => Err(PolicyError::malformed_token(
                "the claims are not a JSON object",
            )),
        }
    }
}

// ---- claim fields ------------------------------------------------------------------------------

pub(crate) fn malformed(name: &str) -> PolicyError {
    PolicyError::malformed_token(format!("claim {name} is missing or malformed"))
}

pub(crate) fn get_text(claims: &Object, name: &str) -> Result<String, PolicyError> {
    claims
        .get(name)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| malformed(name))
}

pub(crate) fn get_opt_text(claims: &Object, name: &str) -> Result<Option<String>, PolicyError> {
    match claims.get(name) {
        None => Ok(None),
        Some(_) => get_text(claims, name).map(Some),
    }
}

pub(crate) fn get_count(claims: &Object, name: &str) -> Result<u64, PolicyError> {
    claims
        .get(name)
        .and_then(Value::as_number)
        .and_then(Number::as_u64)
        .filter(|n| *n <= MAX_SAFE_INTEGER)
        .ok_or_else(|| malformed(name))
}

pub(crate) fn get_instant(claims: &Object, name: &str) -> Result<UnixMillis, PolicyError> {
    let ms = get_count(claims, name)?;
    i64::try_from(ms)
        .map(UnixMillis)
        .map_err(|_| malformed(name))
}

pub(crate) fn get_texts(claims: &Object, name: &str) -> Result<Vec<String>, PolicyError> {
    let items = claims
        .get(name)
        .and_then(Value::as_array)
        .ok_or_else(|| malformed(name))?;
    items
        .iter()
        .map(|v| v.as_str().map(str::to_owned).ok_or_else(|| malformed(name)))
        .collect()
}

pub(crate) fn count(n: u64) -> Value {
    Value::Number(Number::from_u64(n))
}

pub(crate) fn instant(at: UnixMillis) -> Value {
    Value::Number(Number::from_i64(at.0))
}

pub(crate) fn texts(items: &[String]) -> Value {
    Value::Array(items.iter().map(|s| Value::string(s.as_str())).collect())
}

// ---- argument rules ----------------------------------------------------------------------------

/// A 1..=512-character identifier.
pub(crate) fn check_id(field: &'static str, value: &str) -> Result<(), PolicyError> {
    let chars = value.chars().count();
    if chars == 0 || chars > MAX_ID_CHARS || value.trim().is_empty() {
        return Err(PolicyError::invalid(
            field,
            format!("{field} must be 1 to {MAX_ID_CHARS} characters"),
        ));
    }
    Ok(())
}

/// An epoch: 1..=2^53−1.
pub(crate) fn check_epoch(field: &'static str, value: u64) -> Result<(), PolicyError> {
    if value == 0 || value > MAX_SAFE_INTEGER {
        return Err(PolicyError::invalid(
            field,
            format!("{field} must be between 1 and 2^53-1"),
        ));
    }
    Ok(())
}

/// A TTL: 1 ms ..= `maximum_ms`.
pub(crate) fn check_ttl(ttl_ms: u64, maximum_ms: u64) -> Result<(), PolicyError> {
    if ttl_ms == 0 || ttl_ms > maximum_ms {
        return Err(PolicyError::invalid(
            "ttl",
            format!("ttl must be positive and at most {maximum_ms} ms"),
        )
        .with_integer("maximum_ttl_ms", maximum_ms));
    }
    Ok(())
}

/// Sorted, unique, each a 1..=512-character identifier; `non_empty` requires at least one.
pub(crate) fn sorted_unique(
    field: &'static str,
    items: &[String],
    non_empty: bool,
) -> Result<Vec<String>, PolicyError> {
    if non_empty && items.is_empty() {
        return Err(PolicyError::invalid(
            field,
            format!("{field} needs at least one entry"),
        ));
    }
    let mut sorted = items.to_vec();
    sorted.sort();
    for (i, item) in sorted.iter().enumerate() {
        check_id(field, item)?;
        if i > 0 && sorted[i - 1] == *item {
            return Err(PolicyError::invalid(
                field,
                format!("{field} has a duplicate entry"),
            ));
        }
    }
    Ok(sorted)
}

/// The expiry of a token issued at `now` for `ttl_ms`, or `INVALID_COMMAND` when it cannot be
/// represented.
pub(crate) fn expiry(now: UnixMillis, ttl_ms: u64) -> Result<UnixMillis, PolicyError> {
    let at = now.saturating_add_ms(ttl_ms);
    if at.0 == i64::MAX || now.0 < 0 {
        return Err(PolicyError::invalid("now", "now + ttl is out of range"));
    }
    Ok(at)
}

/// The validity window check shared by both token kinds (§12 "expired … tokens MUST be
/// rejected").
pub(crate) fn check_window(
    issued_at: UnixMillis,
    expires_at: UnixMillis,
    now: UnixMillis,
) -> Result<(), PolicyError> {
    if now >= expires_at {
        return Err(PolicyError::new(
            missionweaveprotocol::WireCode::AuthInvalidSignature,
            "token_expired",
            "the token has expired",
        ));
    }
    if now < issued_at {
        return Err(PolicyError::new(
            missionweaveprotocol::WireCode::AuthInvalidSignature,
            "token_not_yet_valid",
            "the token was issued after now",
        ));
    }
    Ok(())
}
