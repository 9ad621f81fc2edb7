//! Exact decimal values of JSON numbers, for JSON Schema `minimum`, `maximum`, `integer`,
//! `const`, `enum` and `uniqueItems`. Schema-level comparisons must be mathematical and must not
//! round through binary64 (`1e400` is a number at stage 2 and only fails at stage 5).

use std::cmp::Ordering;

/// `(-1)^negative × digits × 10^exponent`, normalized: no leading or trailing zero digits;
/// zero has no digits and is never negative.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Decimal {
    negative: bool,
    digits: Box<[u8]>,
    exponent: i64,
}

/// Exponents beyond this are saturated; no JSON text can carry that many digits.
const EXPONENT_LIMIT: i64 = 1 << 60;

impl Decimal {
    /// Parses text that follows the JSON number grammar. Other text gives zero.
    pub fn from_json_number(text: &str) -> Self {
        let bytes = text.as_bytes();
        let mut index = 0;
        let negative = bytes.first() == Some(&b'-');
        if negative {
            index += 1;
        }
        let mut digits: Vec<u8> = Vec::with_capacity(bytes.len());
        while index < bytes.len() && bytes[index].is_ascii_digit() {
            digits.push(bytes[index]);
            index += 1;
        }
        let mut exponent: i64 = 0;
        if bytes.get(index) == Some(&b'.') {
            index += 1;
            while index < bytes.len() && bytes[index].is_ascii_digit() {
                digits.push(bytes[index]);
                exponent -= 1;
                index += 1;
            }
        }
        if matches!(bytes.get(index), Some(b'e' | b'E')) {
            index += 1;
            let exponent_negative = match bytes.get(index) {
                Some(b'-') => {
                    index += 1;
                    true
                }
                Some(b'+') => {
                    index += 1;
                    false
                }
                _ => false,
            };
            let mut value: i64 = 0;
            while index < bytes.len() && bytes[index].is_ascii_digit() {
                value = (value * 10 + i64::from(bytes[index] - b'0')).min(EXPONENT_LIMIT);
                index += 1;
            }
            exponent += if exponent_negative { -value } else { value };
        }
        Self::normalize(negative, digits, exponent)
    }

    fn normalize(negative: bool, mut digits: Vec<u8>, mut exponent: i64) -> Self {
        let leading = digits.iter().take_while(|&&d| d == b'0').count();
        digits.drain(..leading);
        while digits.last() == Some(&b'0') {
            digits.pop();
            exponent += 1;
        }
        if digits.is_empty() {
            return Self {
                negative: false,
                digits: Box::new([]),
                exponent: 0,
            };
        }
        Self {
            negative,
            digits: digits.into_boxed_slice(),
            exponent,
        }
    }

    /// Whether the value is zero.
    pub fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// Whether the value is mathematically an integer (JSON Schema `integer`: `2.0` is one).
    pub fn is_integer(&self) -> bool {
        self.is_zero() || self.exponent >= 0
    }

    /// The value as an `i64` when it is an integer in range.
    pub fn to_i64(&self) -> Option<i64> {
        if !self.is_integer() {
            return None;
        }
        if self.digits.len() as i64 + self.exponent > 19 {
            return None;
        }
        let mut value: i64 = 0;
        for &digit in self.digits.iter() {
            value = value
                .checked_mul(10)?
                .checked_add(i64::from(digit - b'0'))?;
        }
        for _ in 0..self.exponent {
            value = value.checked_mul(10)?;
        }
        Some(if self.negative { -value } else { value })
    }

    fn compare_magnitude(&self, other: &Self) -> Ordering {
        match (self.is_zero(), other.is_zero()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            (false, false) => {}
        }
        let order_a = self.digits.len() as i64 + self.exponent;
        let order_b = other.digits.len() as i64 + other.exponent;
        order_a
            .cmp(&order_b)
            // Same order of magnitude: digit strings compare lexically; trailing zeros are
            // trimmed, so when one is a prefix of the other the longer one is larger.
            .then_with(|| self.digits.cmp(&other.digits))
    }
}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Decimal {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.negative, other.negative) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => self.compare_magnitude(other),
            (true, true) => other.compare_magnitude(self),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Decimal;

    fn d(text: &str) -> Decimal {
        Decimal::from_json_number(text)
    }

    #[test]
    fn equal_values_in_different_spellings() {
        assert_eq!(d("2"), d("2.0"));
        assert_eq!(d("2"), d("0.2e1"));
        assert_eq!(d("-0"), d("0"));
        assert_eq!(d("100"), d("1e2"));
        assert_ne!(d("1"), d("-1"));
    }

    #[test]
    fn ordering_is_exact() {
        assert!(d("9007199254740991") < d("9007199254740992"));
        assert!(d("1e400") > d("9007199254740991"));
        assert!(d("-1e400") < d("-9007199254740991"));
        assert!(d("0.1000000000000000000001") > d("0.1"));
        assert!(d("-0.5") < d("0"));
        assert!(d("1.5") > d("1.49999999999999999999"));
    }

    #[test]
    fn integers() {
        assert!(d("2.0").is_integer());
        assert!(d("1e400").is_integer());
        assert!(!d("1.5").is_integer());
        assert!(!d("1e-1").is_integer());
        assert_eq!(d("12.0").to_i64(), Some(12));
        assert_eq!(d("-3e2").to_i64(), Some(-300));
        assert_eq!(d("1e400").to_i64(), None);
        assert_eq!(d("0.5").to_i64(), None);
    }
}
