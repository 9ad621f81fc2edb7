//! One module per untrusted-input entry point.

pub mod budget;
pub mod frames;
pub mod json;
pub mod lease;
pub mod manifest;
pub mod registry;
pub mod scheduler;
pub mod verify;

use missionweaveprotocol::WireCode;
use missionweaveprotocol::json::{Value, parse_state};

use super::mutate_json::{self, J};
use super::{OracleFailure, Outcome, Rng, mutate_bytes, typed_error};

/// Stage 1 of a snapshot target: the parsed value, or the outcome of bucket 0 for a typed
/// refusal (an untyped one is an oracle failure).
pub(crate) fn parse_stage(
    what: &str,
    input: &[u8],
    codes: &[WireCode],
) -> Result<Result<Value, Outcome>, OracleFailure> {
    match parse_state(input) {
        Ok(value) => Ok(Ok(value)),
        Err(error) => Ok(Err(Outcome {
            bucket: 0,
            signal: typed_error(what, &error, codes)?,
        })),
    }
}

/// The embedded bundle file at `path` (the fuzz seeds come from the pinned bundle).
pub(crate) fn bundle_file(path: &str) -> Vec<u8> {
    missionweaveprotocol::bundle::embedded_file(path)
        .map(<[u8]>::to_vec)
        .unwrap_or_default()
}

/// The generic mutator for JSON inputs: structure-aware most of the time (half of it a
/// type-keeping tweak of one or two scalars, which passes format checks and reaches the
/// semantic ones), byte-level otherwise (and always when `base` is not JSON any more).
pub(crate) fn mutate_json_or_bytes(rng: &mut Rng, base: &[u8], json_percent: usize) -> Vec<u8> {
    if rng.chance(json_percent)
        && let Some(mut value) = J::parse(base)
    {
        if rng.chance(50) {
            for _ in 0..=rng.below(2) {
                mutate_json::tweak_leaf(rng, &mut value);
            }
        } else {
            mutate_json::mutate(rng, &mut value);
        }
        return value.to_bytes();
    }
    mutate_bytes::mutate(rng, base)
}
