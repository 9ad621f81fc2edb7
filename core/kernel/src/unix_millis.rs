//! A minimal instant type for the sans-IO scheduling and authority modules.
//!
//! The core has no clock: every operation that depends on time takes a [`UnixMillis`] argument.
//! It counts milliseconds since 1970-01-01T00:00:00Z (UTC, no leap seconds — the §2 timestamp
//! profile forbids second 60). Wire timestamps keep their own exact text elsewhere; this type is
//! only for policy arithmetic (lease expiry, deadlines, backoff, aging) and for rendering
//! schema-shaped documents such as leases (§11.3).

use core::fmt;

/// Milliseconds since the Unix epoch (UTC). Negative values are instants before 1970.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct UnixMillis(pub i64);

/// 0001-01-01T00:00:00Z in Unix milliseconds: the first instant of the §2 timestamp profile.
pub const MIN_RFC3339_MILLIS: i64 = -62_135_596_800_000;
/// 9999-12-31T23:59:59.999Z in Unix milliseconds: the last instant of the §2 timestamp profile.
pub const MAX_RFC3339_MILLIS: i64 = 253_402_300_799_999;

impl UnixMillis {
    /// Builds an instant from whole seconds since the epoch (saturating).
    pub const fn from_secs(secs: i64) -> Self {
        Self(secs.saturating_mul(1000))
    }

    /// The instant `ms` milliseconds later, saturating instead of overflowing.
    pub const fn saturating_add_ms(self, ms: u64) -> Self {
        let delta = if ms > i64::MAX as u64 {
            i64::MAX
        } else {
            ms as i64
        };
        Self(self.0.saturating_add(delta))
    }

    /// Milliseconds from `earlier` to `self`, or 0 when `earlier` is not earlier.
    pub const fn millis_since(self, earlier: Self) -> u64 {
        if self.0 <= earlier.0 {
            0
        } else {
            self.0.abs_diff(earlier.0)
        }
    }

    /// Renders RFC 3339 UTC with millisecond precision (`2026-01-02T03:04:05.006Z`).
    ///
    /// Returns `None` outside years 0001–9999, which the §2 timestamp profile cannot express.
    pub fn to_rfc3339(self) -> Option<String> {
        if !(MIN_RFC3339_MILLIS..=MAX_RFC3339_MILLIS).contains(&self.0) {
            return None;
        }
        let days = self.0.div_euclid(86_400_000);
        let ms_of_day = self.0.rem_euclid(86_400_000);
        let (y, m, d) = civil_from_days(days);
        let secs = ms_of_day / 1000;
        let ms = ms_of_day % 1000;
        Some(format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z",
            secs / 3600,
            (secs / 60) % 60,
            secs % 60
        ))
    }
}

impl UnixMillis {
    /// Renders RFC 3339 UTC with the shortest fraction (none for whole seconds, `.5Z` for
    /// 500 ms): the form a host re-renders its own datetimes in (Python's `render_timestamp`,
    /// JavaScript's trimmed `toISOString`), so a document built here re-renders to itself.
    pub fn to_rfc3339_shortest(self) -> Option<String> {
        let full = self.to_rfc3339()?;
        let (head, fraction) = full.trim_end_matches('Z').split_once('.')?;
        let fraction = fraction.trim_end_matches('0');
        Some(if fraction.is_empty() {
            format!("{head}Z")
        } else {
            format!("{head}.{fraction}Z")
        })
    }
}

impl fmt::Display for UnixMillis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to_rfc3339() {
            Some(s) => f.write_str(&s),
            None => write!(f, "{}ms", self.0),
        }
    }
}

/// Proleptic Gregorian date from days since 1970-01-01 (H. Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_known_instants() {
        assert_eq!(
            UnixMillis(0).to_rfc3339().as_deref(),
            Some("1970-01-01T00:00:00.000Z")
        );
        assert_eq!(
            UnixMillis(1_767_323_045_006).to_rfc3339().as_deref(),
            Some("2026-01-02T03:04:05.006Z")
        );
        // 2000-02-29 exists (leap century).
        assert_eq!(
            UnixMillis(951_782_400_000).to_rfc3339().as_deref(),
            Some("2000-02-29T00:00:00.000Z")
        );
        assert_eq!(
            UnixMillis(-1).to_rfc3339().as_deref(),
            Some("1969-12-31T23:59:59.999Z")
        );
    }

    #[test]
    fn shortest_form_trims_the_fraction() {
        let shortest = |ms| UnixMillis(ms).to_rfc3339_shortest();
        assert_eq!(shortest(0).as_deref(), Some("1970-01-01T00:00:00Z"));
        assert_eq!(shortest(500).as_deref(), Some("1970-01-01T00:00:00.5Z"));
        assert_eq!(
            shortest(1_767_323_045_006).as_deref(),
            Some("2026-01-02T03:04:05.006Z")
        );
        assert_eq!(shortest(-1).as_deref(), Some("1969-12-31T23:59:59.999Z"));
        assert_eq!(shortest(MAX_RFC3339_MILLIS + 1), None);
    }

    #[test]
    fn profile_bounds() {
        assert_eq!(
            UnixMillis(MIN_RFC3339_MILLIS).to_rfc3339().as_deref(),
            Some("0001-01-01T00:00:00.000Z")
        );
        assert_eq!(
            UnixMillis(MAX_RFC3339_MILLIS).to_rfc3339().as_deref(),
            Some("9999-12-31T23:59:59.999Z")
        );
        assert_eq!(UnixMillis(MIN_RFC3339_MILLIS - 1).to_rfc3339(), None);
        assert_eq!(UnixMillis(MAX_RFC3339_MILLIS + 1).to_rfc3339(), None);
    }

    #[test]
    fn arithmetic_saturates() {
        assert_eq!(UnixMillis(i64::MAX - 1).saturating_add_ms(10).0, i64::MAX);
        assert_eq!(UnixMillis(5).millis_since(UnixMillis(9)), 0);
        assert_eq!(UnixMillis(9).millis_since(UnixMillis(5)), 4);
    }
}
