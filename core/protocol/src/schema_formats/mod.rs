//! The `format` assertions and value profiles of spec §2: timestamps, canonical unpadded
//! base64url, protocol identifiers (absolute RFC 3986 URIs) and safe integers.

mod base64url;
mod timestamp;
mod uri;

pub use base64url::{decode_base64url, encode_base64url};
pub use timestamp::{Instant, Timestamp, TimestampError};
pub use uri::{MAX_ID_CHARS, is_protocol_id, is_protocol_uri};

/// The largest safe integer (2^53 − 1), the bound of every epoch, sequence and counter (§2).
pub const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

/// Whether `value` is a safe integer in `1..=MAX_SAFE_INTEGER`.
pub fn is_positive_safe_integer(value: i64) -> bool {
    (1..=MAX_SAFE_INTEGER).contains(&value)
}
