//! The freshness and clock-skew window of a Command's `issuedAt` (§6.4, §22).
//!
//! The spec leaves the window to the Organization ("Organization-defined, bounded"), so both
//! bounds are configuration. A Command is fresh at `now` when
//! `now − max_age ≤ issuedAt ≤ now + max_future_skew`; both edges are inclusive. The comparison
//! is by exact instant: a sub-millisecond fraction beyond an edge is outside.

use missionweaveprotocol::schema_formats::Timestamp;

use super::error::{FreshnessError, FreshnessViolation};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// How far `issuedAt` may lie ahead of, or behind, the authority's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FreshnessWindow {
    /// The clock skew tolerated into the future, in milliseconds.
    pub max_future_skew_ms: u64,
    /// The largest age of `issuedAt` at presentation, in milliseconds.
    pub max_age_ms: u64,
}

impl FreshnessWindow {
    /// Default tolerated skew into the future: 30 seconds (a few NTP-synchronized clocks'
    /// worth; a Command from further ahead was not signed "now").
    pub const DEFAULT_MAX_FUTURE_SKEW_MS: u64 = 30_000;
    /// Default maximum age: 5 minutes (room for a reconnect and a retry of the same signed
    /// Command, §19; older Commands must be re-issued with a new Action ID and `issuedAt`).
    pub const DEFAULT_MAX_AGE_MS: u64 = 300_000;

    /// A window with both bounds given in milliseconds.
    pub const fn new(max_future_skew_ms: u64, max_age_ms: u64) -> Self {
        Self {
            max_future_skew_ms,
            max_age_ms,
        }
    }

    /// Checks `issued_at` against `now`.
    pub fn check(&self, issued_at: &Timestamp, now: UnixMillis) -> Result<(), FreshnessError> {
        let instant = issued_at.instant();
        // Whole milliseconds (floor) and whether finer, nonzero digits follow: the fraction has
        // no trailing zeros, so more than three digits means strictly after `floor_ms`.
        let floor_ms = instant.unix_millis();
        let sub_ms = instant.fraction_digits().len() > 3;
        let latest = now.saturating_add_ms(self.max_future_skew_ms);
        let earliest = UnixMillis(now.0.saturating_sub(clamp_i64(self.max_age_ms)));
        let violation = if floor_ms > latest.0 || (floor_ms == latest.0 && sub_ms) {
            Some((FreshnessViolation::InFuture, latest))
        } else if floor_ms < earliest.0 {
            Some((FreshnessViolation::TooOld, earliest))
        } else {
            None
        };
        match violation {
            None => Ok(()),
            Some((violation, bound)) => Err(FreshnessError {
                violation,
                issued_at: issued_at.as_str().to_owned(),
                now,
                bound,
            }),
        }
    }
}

impl Default for FreshnessWindow {
    fn default() -> Self {
        Self::new(Self::DEFAULT_MAX_FUTURE_SKEW_MS, Self::DEFAULT_MAX_AGE_MS)
    }
}

fn clamp_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}
