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

    /// Renders RFC 3339 UTC with millisecond precision (`2026-01-02T03:04:05.006Z`):
    /// [`render_rfc3339`] with [`Fraction::Millis`].
    ///
    /// Returns `None` outside years 0001–9999, which the §2 timestamp profile cannot express.
    pub fn to_rfc3339(self) -> Option<String> {
        render_rfc3339(self.0.checked_mul(1000)?, Fraction::Millis)
    }

    /// Renders RFC 3339 UTC with the shortest fraction (none for whole seconds, `.5Z` for
    /// 500 ms): [`render_rfc3339`] with [`Fraction::Shortest`], the form a host re-renders its
    /// own datetimes in (Python's `render_timestamp`, JavaScript's trimmed `toISOString`), so a
    /// document built here re-renders to itself.
    pub fn to_rfc3339_shortest(self) -> Option<String> {
        render_rfc3339(self.0.checked_mul(1000)?, Fraction::Shortest)
    }
}

/// How [`render_rfc3339`] writes the fraction of a second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fraction {
    /// Always three digits, floored to the millisecond (`.006Z`, `.000Z`): the form of the
    /// core's documents (leases, bindings, signed artifacts of the Python models).
    Millis,
    /// Six digits, none for a whole second (`.001500Z`, `05Z`): the reference runtime's form
    /// (Python's `isoformat`), used where a host value is normalised as the reference does.
    Micros,
    /// The shortest: trailing zeros trimmed, none for a whole second (`.12Z`, `05Z`), so that a
    /// wire text re-renders to itself.
    Shortest,
}

impl Fraction {
    /// Every form.
    pub const ALL: [Fraction; 3] = [Self::Millis, Self::Micros, Self::Shortest];

    /// The form's name (`millis`, `micros`, `shortest`), as bindings spell the option.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Millis => "millis",
            Self::Micros => "micros",
            Self::Shortest => "shortest",
        }
    }

    /// Parses [`as_str`](Self::as_str).
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.as_str() == text)
    }
}

/// The one RFC 3339 renderer of instants (UTC, `Z`): `micros` microseconds since the epoch,
/// the fraction written as `fraction` says. `None` outside years 0001–9999, which the §2
/// timestamp profile cannot express.
pub fn render_rfc3339(micros: i64, fraction: Fraction) -> Option<String> {
    let first = MIN_RFC3339_MILLIS * 1000;
    let last = MAX_RFC3339_MILLIS * 1000 + 999;
    if !(first..=last).contains(&micros) {
        return None;
    }
    let days = micros.div_euclid(86_400_000_000);
    let us_of_day = micros.rem_euclid(86_400_000_000);
    let (y, m, d) = civil_from_days(days);
    let secs = us_of_day / 1_000_000;
    let us = us_of_day % 1_000_000;
    let head = format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    );
    Some(match fraction {
        Fraction::Millis => format!("{head}.{:03}Z", us / 1000),
        Fraction::Micros if us == 0 => format!("{head}Z"),
        Fraction::Micros => format!("{head}.{us:06}Z"),
        Fraction::Shortest if us == 0 => format!("{head}Z"),
        Fraction::Shortest => {
            let digits = format!("{us:06}");
            format!("{head}.{}Z", digits.trim_end_matches('0'))
        }
    })
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
    fn one_renderer_three_fractions() {
        // 2026-07-15T00:00:00Z plus a fraction, in microseconds.
        let at = |us: i64| 1_784_073_600_000_000 + us;
        let all = |us: i64| Fraction::ALL.map(|f| render_rfc3339(at(us), f).unwrap_or_default());
        assert_eq!(
            all(0),
            [
                "2026-07-15T00:00:00.000Z",
                "2026-07-15T00:00:00Z",
                "2026-07-15T00:00:00Z"
            ]
        );
        assert_eq!(
            all(1_500),
            [
                "2026-07-15T00:00:00.001Z",
                "2026-07-15T00:00:00.001500Z",
                "2026-07-15T00:00:00.0015Z"
            ]
        );
        assert_eq!(
            all(120_000),
            [
                "2026-07-15T00:00:00.120Z",
                "2026-07-15T00:00:00.120000Z",
                "2026-07-15T00:00:00.12Z"
            ]
        );
        assert_eq!(
            all(999_999)[0],
            "2026-07-15T00:00:00.999Z",
            "floored to the millisecond"
        );
        // Before the epoch the fraction still counts forward from the whole second.
        assert_eq!(
            render_rfc3339(-1, Fraction::Micros).as_deref(),
            Some("1969-12-31T23:59:59.999999Z")
        );
        assert_eq!(
            render_rfc3339(-1, Fraction::Millis).as_deref(),
            Some("1969-12-31T23:59:59.999Z")
        );
        for f in Fraction::ALL {
            assert_eq!(Fraction::parse(f.as_str()), Some(f));
            assert_eq!(
                render_rfc3339(MIN_RFC3339_MILLIS * 1000, f)
                    .as_deref()
                    .map(|s| &s[..19]),
                Some("0001-01-01T00:00:00")
            );
            assert!(render_rfc3339(MAX_RFC3339_MILLIS * 1000 + 999, f).is_some());
            assert_eq!(render_rfc3339(MIN_RFC3339_MILLIS * 1000 - 1, f), None);
            assert_eq!(render_rfc3339(MAX_RFC3339_MILLIS * 1000 + 1000, f), None);
        }
        assert_eq!(Fraction::parse("nanos"), None);
        assert_eq!(UnixMillis(i64::MAX).to_rfc3339(), None);
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
