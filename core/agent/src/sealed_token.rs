//! Sealed tokens, the one codec behind session tokens (`auth`, §6.3), membership tokens and
//! capability grants (`policy`, §8, §12): `b64url(canonical claims) "." b64url(HMAC-SHA256)`
//! (the reference's format, `reference-python.md` §1.7, §1.16).
//!
//! - The MAC covers an optional per-kind domain label and the encoded claims, so a token of one
//!   kind never verifies as another even under one shared secret.
//! - Opening bounds the input length before any work (`max_chars`), checks the MAC in constant
//!   time before the claims are decoded (unauthenticated bytes never reach the JSON parser),
//!   and accepts only canonical base64url and canonical JSON, so an accepted token has exactly
//!   one spelling. Cost of opening any input: O(`max_chars`).
//! - The key is kept only as the keyed HMAC state; the secret bytes handed in are zeroed, and
//!   neither appears in `Debug`.

use core::fmt;

use hmac::{Hmac, KeyInit, Mac};
use missionweaveprotocol::json::{self, Object, Value};
use missionweaveprotocol::schema_formats::{decode_base64url, encode_base64url};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// Shortest accepted secret: 256 bits, the HMAC-SHA256 output size (RFC 2104 §3).
pub const MIN_SECRET_BYTES: usize = 32;

/// Why a token did not open. Callers map each to their own error family and §19 code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unsealed {
    /// Longer than the caller's bound: refused before any decoding.
    TooLong,
    /// Not two canonical base64url parts, or claims that are not one canonical JSON object.
    Malformed(&'static str),
    /// The MAC does not verify under this key and domain.
    Forged,
}

/// A sealing key: the keyed HMAC state.
#[derive(Clone)]
pub(crate) struct SealingKey(HmacSha256);

impl fmt::Debug for SealingKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SealingKey(<redacted>)")
    }
}

impl SealingKey {
    /// Keys HMAC-SHA256 with `secret` (at least [`MIN_SECRET_BYTES`]; the caller bounds the
    /// longest) and zeroes the bytes. `None` for a secret too short.
    pub(crate) fn new(mut secret: Vec<u8>) -> Option<Self> {
        let keyed = match secret.len() >= MIN_SECRET_BYTES {
            true => <HmacSha256 as KeyInit>::new_from_slice(&secret).ok(),
            false => None,
        };
        secret.fill(0);
        core::hint::black_box(&secret);
        keyed.map(Self)
    }

    fn mac(&self, domain: &str, encoded_claims: &str) -> HmacSha256 {
        let mut mac = self.0.clone();
        // No label for session tokens (their format predates the labels); a label otherwise.
        if !domain.is_empty() {
            mac.update(domain.as_bytes());
            mac.update(b".");
        }
        mac.update(encoded_claims.as_bytes());
        mac
    }

    /// Seals `claims` under `domain`. `None` when the claims have no canonical form.
    pub(crate) fn seal(&self, domain: &str, claims: &Value) -> Option<String> {
        let bytes = json::canonical_bytes(claims).ok()?;
        let encoded = encode_base64url(&bytes);
        let tag = self.mac(domain, &encoded).finalize().into_bytes();
        Some(format!("{encoded}.{}", encode_base64url(&tag)))
    }

    /// Opens a token sealed under `domain`: its claims object.
    pub(crate) fn open(
        &self,
        domain: &str,
        token: &str,
        max_chars: usize,
    ) -> Result<Object, Unsealed> {
        if token.len() > max_chars {
            return Err(Unsealed::TooLong);
        }
        let (encoded, tag) = token.split_once('.').ok_or(Unsealed::Malformed(
            "a token is two base64url parts joined by '.'",
        ))?;
        let tag = decode_base64url(tag)
            .ok_or(Unsealed::Malformed("the MAC is not canonical base64url"))?;
        // `verify_slice` compares in constant time and refuses a tag of the wrong length.
        self.mac(domain, encoded)
            .verify_slice(&tag)
            .map_err(|_| Unsealed::Forged)?;
        let bytes = decode_base64url(encoded).ok_or(Unsealed::Malformed(
            "the claims are not canonical base64url",
        ))?;
        let claims = json::parse_state(&bytes)
            .map_err(|_| Unsealed::Malformed("the claims are not JSON"))?;
        // Only the canonical spelling a key seals is accepted.
        if json::canonical_bytes(&claims).ok().as_deref() != Some(bytes.as_slice()) {
            return Err(Unsealed::Malformed("the claims are not canonical JSON"));
        }
        match claims {
            Value::Object(object) => Ok(object),
            _ => Err(Unsealed::Malformed("the claims are not a JSON object")),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn key(byte: u8) -> SealingKey {
        SealingKey::new(vec![byte; 32]).unwrap()
    }

    fn claims() -> Value {
        json::parse_state(br#"{"b":1,"a":"x"}"#).unwrap()
    }

    #[test]
    fn a_sealed_token_opens_under_its_key_and_domain_only() {
        let token = key(1).seal("kind-a", &claims()).unwrap();
        let opened = key(1).open("kind-a", &token, 1024).unwrap();
        assert_eq!(opened.get("a").and_then(Value::as_str), Some("x"));
        assert_eq!(key(1).open("kind-b", &token, 1024), Err(Unsealed::Forged));
        assert_eq!(key(1).open("", &token, 1024), Err(Unsealed::Forged));
        assert_eq!(key(2).open("kind-a", &token, 1024), Err(Unsealed::Forged));
        assert_eq!(key(1).open("kind-a", &token, 10), Err(Unsealed::TooLong));
        // Without a domain (session tokens) too.
        let bare = key(1).seal("", &claims()).unwrap();
        assert!(key(1).open("", &bare, 1024).is_ok());
        assert_eq!(key(1).open("kind-a", &bare, 1024), Err(Unsealed::Forged));
    }

    #[test]
    fn short_secrets_and_malformed_or_tampered_tokens_are_refused() {
        assert!(SealingKey::new(vec![1; 31]).is_none());
        let token = key(1).seal("k", &claims()).unwrap();
        let (body, tag) = token.split_once('.').unwrap();
        for bad in [
            "no-dot".to_owned(),
            format!("{body}.{tag}="),
            format!("{body}x.{tag}"),
            format!("{body}.{}", &tag[1..]),
        ] {
            assert!(key(1).open("k", &bad, 1024).is_err(), "{bad}");
        }
        // A validly MACed but non-canonical body is refused after the MAC.
        let raw = encode_base64url(br#"{"b":1, "a":"x"}"#);
        let tag = encode_base64url(&key(1).mac("k", &raw).finalize().into_bytes());
        assert_eq!(
            key(1).open("k", &format!("{raw}.{tag}"), 1024),
            Err(Unsealed::Malformed("the claims are not canonical JSON"))
        );
        assert_eq!(format!("{:?}", key(1)), "SealingKey(<redacted>)");
    }
}
