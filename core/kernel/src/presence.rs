//! Presence staleness (§6.2): "A stale Presence Record MUST NOT be treated as an assignment
//! acceptance or lease renewal." The spec leaves "stale" to the implementation; the rule here is
//! the reference runtime's `AgentRegistry(presence_ttl=30 s)`: a record whose last heartbeat is
//! more than the TTL before `now` reads as `offline` with no available slots. Every binding
//! asks this module; none compares times itself.
//!
//! Times are in microseconds, the resolution of the hosts' datetimes, so a binding's boundary
//! case is decided exactly as it is written there.

use core::fmt;

/// The reference's default `presence_ttl`: 30 seconds.
pub const DEFAULT_PRESENCE_TTL_MICROS: i64 = 30_000_000;

/// What a stale record reads as.
pub const STALE_STATUS: &str = "offline";

/// The available slots a stale record reads as.
pub const STALE_AVAILABLE_SLOTS: u32 = 0;

/// A TTL that is not positive (or beyond `i64::MAX` microseconds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvalidTtl;

impl fmt::Display for InvalidTtl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("presence_ttl must be positive (at most 2^63 - 1 microseconds)")
    }
}

impl std::error::Error for InvalidTtl {}

/// A presence TTL in microseconds: positive and within `i64`, else [`InvalidTtl`].
pub fn presence_ttl(ttl_micros: i128) -> Result<i64, InvalidTtl> {
    i64::try_from(ttl_micros)
        .ok()
        .filter(|ttl| *ttl > 0)
        .ok_or(InvalidTtl)
}

/// Whether a record last heard at `heartbeat_at` is stale at `now` (both Unix microseconds):
/// more than `ttl` has passed. A heartbeat exactly `ttl` ago is still fresh; one in the future
/// (clock skew) is fresh.
pub fn is_stale(heartbeat_at_micros: i64, now_micros: i64, ttl_micros: i64) -> bool {
    i128::from(now_micros) - i128::from(heartbeat_at_micros) > i128::from(ttl_micros)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTL: i64 = DEFAULT_PRESENCE_TTL_MICROS;

    #[test]
    fn older_than_the_ttl_is_stale() {
        assert!(!is_stale(0, TTL, TTL), "exactly the TTL ago is fresh");
        assert!(is_stale(0, TTL + 1, TTL), "one microsecond more is stale");
        assert!(!is_stale(0, 0, TTL));
        assert!(
            !is_stale(TTL, 0, TTL),
            "a heartbeat from the future is fresh"
        );
        assert!(
            is_stale(i64::MIN, i64::MAX, TTL),
            "no overflow at the extremes"
        );
        assert!(!is_stale(i64::MAX, i64::MIN, 1));
    }

    #[test]
    fn the_ttl_must_be_positive() {
        assert_eq!(presence_ttl(1), Ok(1));
        assert_eq!(presence_ttl(i128::from(TTL)), Ok(TTL));
        for bad in [0, -1, i128::from(i64::MAX) + 1] {
            assert_eq!(presence_ttl(bad), Err(InvalidTtl), "{bad}");
        }
    }
}
