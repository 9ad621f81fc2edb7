//! Policy tokens over the one sealed-token codec (`crate::sealed_token`): membership tokens and
//! capability grants, each under its own domain label, so one never verifies as the other even
//! under one shared secret; and the claim-field helpers both kinds use.

use missionweaveprotocol::json::{Number, Object, Value};

use super::error::PolicyError;
use crate::sealed_token::{SealingKey, Unsealed};
use missionweaveprotocol_kernel::resources::MAX_SAFE_INTEGER;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

pub use crate::sealed_token::MIN_SECRET_BYTES;

/// Longest secret accepted (longer keys are hashed by HMAC anyway).
pub const MAX_SECRET_BYTES: usize = 1024;

/// Longest token string examined: anything longer is refused before decoding (a bound on the
/// work an unauthenticated input can cause).
pub const MAX_TOKEN_CHARS: usize = 16 * 1024;

/// Identifier fields (principal, Group, WorkItem, …) are 1..=512 characters, as the reference's.
pub const MAX_ID_CHARS: usize = 512;

/// A MAC key (`sealed_token::SealingKey`). Its `Debug` never shows the bytes.
#[derive(Clone, Debug)]
pub struct TokenKey(SealingKey);

impl TokenKey {
    /// A key of 32..=1024 bytes.
    pub fn new(secret: &[u8]) -> Result<Self, PolicyError> {
        let invalid = || {
            PolicyError::invalid(
                "secret",
                format!("the secret must be {MIN_SECRET_BYTES} to {MAX_SECRET_BYTES} bytes"),
            )
        };
        if secret.len() > MAX_SECRET_BYTES {
            return Err(invalid());
        }
        SealingKey::new(secret.to_vec())
            .map(Self)
            .ok_or_else(invalid)
    }

    /// Seals `claims` (a JSON object) under `domain`.
    pub fn seal(&self, domain: &str, claims: &Value) -> Result<String, PolicyError> {
        self.0
            .seal(domain, claims)
            .ok_or_else(|| PolicyError::invalid("claims", "claims have no canonical form"))
    }

    /// Opens a token sealed under `domain`: its claims object, or `token_malformed` /
    /// `token_forged`. The MAC is checked before the claims are parsed.
    pub fn open(&self, domain: &str, token: &str) -> Result<Object, PolicyError> {
        self.0
            .open(domain, token, MAX_TOKEN_CHARS)
            .map_err(|e| match e {
                Unsealed::TooLong => PolicyError::malformed_token(format!(
                    "a token is at most {MAX_TOKEN_CHARS} bytes"
                )),
                Unsealed::Malformed(why) => PolicyError::malformed_token(why),
                Unsealed::Forged => PolicyError::forged_token(),
            })
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
