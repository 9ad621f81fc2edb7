//! The timestamp profile of §2: RFC 3339 `date-time` with exact instants. The original text is
//! kept (it is signed and reported verbatim), fractions of any length compare exactly, offsets go
//! to ±23:59, and leap seconds, year 0000 and `-00:00` are rejected.

use std::cmp::Ordering;
use std::fmt;

/// Why text is not a protocol timestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimestampError {
    Syntax,
    YearZero,
    Month,
    Day,
    Hour,
    Minute,
    LeapSecond,
    Second,
    UnknownLocalOffset,
    Offset,
}

impl fmt::Display for TimestampError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Syntax => "not an RFC 3339 date-time",
            Self::YearZero => "year 0000 is outside the profile",
            Self::Month => "month out of range",
            Self::Day => "day out of range for the month",
            Self::Hour => "hour out of range",
            Self::Minute => "minute out of range",
            Self::LeapSecond => "leap seconds are outside the profile",
            Self::Second => "second out of range",
            Self::UnknownLocalOffset => "offset -00:00 is outside the profile",
            Self::Offset => "offset out of range",
        })
    }
}

impl std::error::Error for TimestampError {}

/// An exact instant: whole seconds since 1970-01-01T00:00:00Z and the decimal fraction digits
/// without trailing zeros (so equal instants have equal representations).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Instant {
    seconds: i64,
    fraction: Box<str>,
}

impl Instant {
    /// An instant from whole Unix seconds.
    pub fn from_unix_seconds(seconds: i64) -> Self {
        Self {
            seconds,
            fraction: "".into(),
        }
    }

    /// Whole seconds since the Unix epoch (floor).
    pub fn unix_seconds(&self) -> i64 {
        self.seconds
    }

    /// The fraction digits (no trailing zeros).
    pub fn fraction_digits(&self) -> &str {
        &self.fraction
    }

    /// Milliseconds since the Unix epoch, truncating finer digits.
    pub fn unix_millis(&self) -> i64 {
        let millis = self
            .fraction
            .bytes()
            .chain(std::iter::repeat(b'0'))
            .take(3)
            .fold(0, |acc, digit| acc * 10 + i64::from(digit - b'0'));
        self.seconds.saturating_mul(1000).saturating_add(millis)
    }
}

impl PartialOrd for Instant {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Instant {
    fn cmp(&self, other: &Self) -> Ordering {
        // Fractions have no trailing zeros, so comparing them as digit strings is the same as
        // right-padding both with zeros to one width.
        self.seconds
            .cmp(&other.seconds)
            .then_with(|| self.fraction.as_bytes().cmp(other.fraction.as_bytes()))
    }
}

/// A protocol timestamp: its exact text and its instant.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Timestamp {
    text: Box<str>,
    instant: Instant,
}

impl Timestamp {
    /// Parses text under the §2 timestamp profile.
    pub fn parse(text: &str) -> Result<Self, TimestampError> {
        let instant = parse_instant(text.as_bytes())?;
        Ok(Self {
            text: text.into(),
            instant,
        })
    }

    /// The original text, unchanged.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The exact instant.
    pub fn instant(&self) -> &Instant {
        &self.instant
    }

    /// Whether the text ends in an uppercase `Z` (required of protected signed times, §6.4).
    pub fn is_utc_z(&self) -> bool {
        self.text.ends_with('Z')
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn number(bytes: &[u8]) -> Option<i64> {
    if bytes.is_empty() || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(
        bytes
            .iter()
            .fold(0, |acc, &d| acc * 10 + i64::from(d - b'0')),
    )
}

fn is_leap_year(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to the given proleptic Gregorian date.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_index = (month + 9) % 12;
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

fn parse_instant(b: &[u8]) -> Result<Instant, TimestampError> {
    use TimestampError as E;
    // YYYY-MM-DDTHH:MM:SS is 19 bytes; then an optional fraction and the offset.
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't')
        || b[13] != b':'
        || b[16] != b':'
    {
        return Err(E::Syntax);
    }
    let field = |range: std::ops::Range<usize>| number(&b[range]).ok_or(E::Syntax);
    let (year, month, day) = (field(0..4)?, field(5..7)?, field(8..10)?);
    let (hour, minute, second) = (field(11..13)?, field(14..16)?, field(17..19)?);
    let mut index = 19;
    let mut fraction = &b[0..0];
    if b.get(index) == Some(&b'.') {
        let start = index + 1;
        index = start;
        while b.get(index).is_some_and(u8::is_ascii_digit) {
            index += 1;
        }
        if index == start {
            return Err(E::Syntax);
        }
        fraction = &b[start..index];
    }
    let offset_seconds = match &b[index..] {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let hours = number(&[*h1, *h2]).ok_or(E::Syntax)?;
            let minutes = number(&[*m1, *m2]).ok_or(E::Syntax)?;
            if hours > 23 || minutes > 59 {
                return Err(E::Offset);
            }
            if *sign == b'-' && hours == 0 && minutes == 0 {
                return Err(E::UnknownLocalOffset);
            }
            let magnitude = hours * 3600 + minutes * 60;
            if *sign == b'-' { -magnitude } else { magnitude }
        }
        _ => return Err(E::Syntax),
    };
    if year == 0 {
        return Err(E::YearZero);
    }
    if !(1..=12).contains(&month) {
        return Err(E::Month);
    }
    if day < 1 || day > days_in_month(year, month) {
        return Err(E::Day);
    }
    if hour > 23 {
        return Err(E::Hour);
    }
    if minute > 59 {
        return Err(E::Minute);
    }
    if second == 60 {
        return Err(E::LeapSecond);
    }
    if second > 59 {
        return Err(E::Second);
    }
    let seconds = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
        - offset_seconds;
    let trimmed = fraction.len() - fraction.iter().rev().take_while(|&&d| d == b'0').count();
    // The fraction is ASCII digits, so this is valid UTF-8.
    let fraction = String::from_utf8_lossy(&fraction[..trimmed])
        .into_owned()
        .into_boxed_str();
    Ok(Instant { seconds, fraction })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn instant(text: &str) -> Instant {
        Timestamp::parse(text).unwrap().instant().clone()
    }

    #[test]
    fn accepts_the_profile() {
        for text in [
            "2026-07-15T00:00:00Z",
            "2026-07-15t00:00:00z",
            "2026-07-14T00:01:00-23:59",
            "2026-07-15T23:59:01+23:59",
            "2024-02-29T12:00:00.5+01:00",
            "0001-01-01T00:00:00Z",
            "9999-12-31T23:59:59.999999999999999999999Z",
        ] {
            assert!(Timestamp::parse(text).is_ok(), "{text}");
        }
    }

    #[test]
    fn rejects_outside_the_profile() {
        use TimestampError as E;
        for (text, error) in [
            ("2026-06-30T23:59:60Z", E::LeapSecond),
            ("0000-01-01T00:00:00Z", E::YearZero),
            ("2026-07-15T00:00:00-00:00", E::UnknownLocalOffset),
            ("2026-02-29T00:00:00Z", E::Day),
            ("2026-13-01T00:00:00Z", E::Month),
            ("2026-07-15T24:00:00Z", E::Hour),
            ("2026-07-15T00:60:00Z", E::Minute),
            ("2026-07-15T00:00:00+24:00", E::Offset),
            ("2026-07-15T00:00:00+00:60", E::Offset),
            ("2026-07-15 00:00:00Z", E::Syntax),
            ("2026-07-15T00:00:00", E::Syntax),
            ("2026-07-15T00:00:00.Z", E::Syntax),
            ("2026-07-15T00:00:00Z ", E::Syntax),
            ("not-a-timestamp", E::Syntax),
            ("", E::Syntax),
            ("+026-07-15T00:00:00Z", E::Syntax),
        ] {
            assert_eq!(Timestamp::parse(text), Err(error), "{text}");
        }
    }

    #[test]
    fn compares_exactly() {
        assert!(
            instant("2026-07-15T00:00:00.1234560000000000001Z")
                < instant("2026-07-15T00:00:00.1234560000000000002Z")
        );
        assert_eq!(
            instant("2026-07-15T00:00:00.500Z"),
            instant("2026-07-15T00:00:00.5Z")
        );
        assert_eq!(
            instant("2026-07-14T00:01:00-23:59"),
            instant("2026-07-15T00:00:00Z")
        );
        assert_eq!(
            instant("2026-07-15T23:59:01+23:59"),
            instant("2026-07-15T00:00:01Z")
        );
        assert!(instant("2026-07-15T00:00:00Z") < instant("2026-07-15T00:00:00.0000001Z"));
        assert_eq!(instant("1970-01-01T00:00:00Z").unix_seconds(), 0);
        assert_eq!(instant("2000-03-01T00:00:00Z").unix_seconds(), 951_868_800);
        assert_eq!(instant("1970-01-01T00:00:01.25Z").unix_millis(), 1250);
    }
}
