//! Reading Command payload members. The spec gives every payload only `{"type": "object"}`
//! (digest §8 item 1), so the engine states each kind's members ([`members::TABLE`],
//! docs/engine.md): an undefined member is refused `SCHEMA_VALIDATION_FAILED`
//! (`unknown_payload_member`, §21) before anything is read, a missing or mistyped one
//! `INVALID_COMMAND`.

pub mod members;

pub use members::{KindMembers, payload_members};

use missionweaveprotocol::json::{Number, Value};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

use crate::error::EngineError;

/// A required string member.
pub(crate) fn text<'a>(payload: &'a Value, name: &str) -> Result<&'a str, EngineError> {
    match payload.get(name) {
        Some(v) => v
            .as_str()
            .filter(|s| !s.is_empty())
            .ok_or_else(|| wrong_type(name, "a non-empty string")),
        None => Err(missing(name)),
    }
}

/// An optional string member.
pub(crate) fn opt_text<'a>(payload: &'a Value, name: &str) -> Result<Option<&'a str>, EngineError> {
    match payload.get(name) {
        None => Ok(None),
        Some(_) => text(payload, name).map(Some),
    }
}

/// An optional non-negative integer member.
pub(crate) fn opt_u64(payload: &Value, name: &str) -> Result<Option<u64>, EngineError> {
    match payload.get(name) {
        None => Ok(None),
        Some(v) => v
            .as_number()
            .and_then(|n| n.as_u64())
            .map(Some)
            .ok_or_else(|| wrong_type(name, "a non-negative integer")),
    }
}

/// A required non-negative integer member.
pub(crate) fn u64_member(payload: &Value, name: &str) -> Result<u64, EngineError> {
    opt_u64(payload, name)?.ok_or_else(|| missing(name))
}

/// A required member of any JSON type.
pub(crate) fn member<'a>(payload: &'a Value, name: &str) -> Result<&'a Value, EngineError> {
    payload.get(name).ok_or_else(|| missing(name))
}

/// A required non-empty list of distinct `sha256:` content hashes (an Artifact set, §4.10,
/// §7.3), in the order given.
pub(crate) fn artifact_hashes(payload: &Value, name: &str) -> Result<Vec<String>, EngineError> {
    let items = member(payload, name)?
        .as_array()
        .ok_or_else(|| wrong_type(name, "an array of sha256 hashes"))?;
    if items.is_empty() {
        return Err(EngineError::invalid(
            "empty_artifact_set",
            format!("{name} must name at least one Artifact"),
        ));
    }
    let mut hashes: Vec<String> = Vec::with_capacity(items.len());
    for item in items {
        let hash = item
            .as_str()
            .filter(|h| is_sha256(h))
            .ok_or_else(|| wrong_type(name, "an array of sha256 hashes"))?;
        if hashes.iter().any(|h| h == hash) {
            return Err(EngineError::invalid(
                "duplicate_artifact_hash",
                format!("{name} names {hash} twice"),
            ));
        }
        hashes.push(hash.to_owned());
    }
    Ok(hashes)
}

/// `^sha256:[0-9a-f]{64}$` (`common.schema.json#/$defs/sha256`).
pub(crate) fn is_sha256(text: &str) -> bool {
    text.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

fn missing(name: &str) -> EngineError {
    EngineError::invalid(
        "missing_member",
        format!("payload member {name:?} is required"),
    )
}

fn wrong_type(name: &str, expected: &str) -> EngineError {
    EngineError::invalid(
        "invalid_member",
        format!("payload member {name:?} must be {expected}"),
    )
}

/// `now` in the §2 timestamp profile (millisecond precision). Outside years 0001–9999 the
/// Event could not be signed either; the epoch text keeps the diagnostic readable.
pub fn rfc3339(at: UnixMillis) -> String {
    at.to_rfc3339().unwrap_or_else(|| at.0.to_string())
}

pub fn num(n: u64) -> Value {
    Value::Number(Number::from_u64(n))
}
