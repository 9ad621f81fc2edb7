//! The reference runtime's scheduling knobs and how they map onto [`SchedulerPolicy`].
//!
//! The reference ranks work by a weighted score (priority, deadline, aging, fairness, quota
//! pressure, estimate) and sizes work in effort bands; this Scheduler orders by virtual ready
//! times and schedules on durations. Every binding that accepts the reference's shapes maps
//! them here, so the mapping is decided once:
//!
//! - **Effort bands** ([`EffortBand`]): a band is `value × EFFORT_UNIT_MS` milliseconds, except
//!   `Unknown`, which leaves the estimate to the policy's `default_estimate_ms`.
//! - **Aging**: the reference trades one priority point against `priority_weight /
//!   aging_weight` aging intervals; the core's `priority_step_ms` is that waiting time,
//!   `aging_interval × priority_weight / aging_weight`, which must be a whole number of
//!   milliseconds (computed on the numbers as written: `0.3 / 0.1` is 3).
//! - **Deadline horizon**: the core's `deadline_horizon_ms`, whole milliseconds.
//! - **Preemption margin** (score units): `ceil(preemption_margin / priority_weight)` priority
//!   points (exact: priorities are integers).
//! - **Fairness weight**: in the reference a Group's fairness credit `c` (dispatch debt, in
//!   slots × weight) adds `c · fairness_weight` to its score, so `priority_weight /
//!   fairness_weight` credits outweigh one priority point: 10 at the defaults, which the core's
//!   default lag of 1 slot stands for. A non-default `fairness_weight` sets the cross-Group lag
//!   to `priority_weight / (10 · fairness_weight)` slots (`fairness_lag_pass`, exact to the
//!   2^-40 slot of the stride arithmetic, rounded down: never less fair). Bounds: finite,
//!   `> 0` (zero would let priority alone order Groups: unbounded highest-priority-first,
//!   non-conforming under §11.1), and a lag of at most `u32::MAX` slots (the range of
//!   `fairness_lag_slots`); `fairness_weight = 100` is a lag of 0.1 slot, near-strict
//!   weighted round robin.
//! - `deadline_weight`, `quota_pressure_weight`, `estimate_weight` and a Group's
//!   `priority_bias` have no equivalent: only their defaults are accepted.
//!
//! A knob left at the reference's default keeps the core's own default. A value the core cannot
//! honour exactly is refused ([`SchedulerError::ReferencePolicy`]), never approximated.

use core::fmt;

use super::types::{
    GroupPolicy, MAX_FAIRNESS_LAG_PASS, MAX_PRIORITY, MAX_WEIGHT, MIN_PRIORITY, PASS_UNIT,
    SchedulerError,
};

/// One unit of reference effort as a duration, chosen so that the bands sit around the core's
/// default estimate of 60 s: `Tiny` is 10 s, `Medium` 40 s, `Huge` 160 s.
pub const EFFORT_UNIT_MS: u32 = 10_000;

/// The reference's effort bands (`EstimateBand`); the value is relative effort.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EffortBand {
    /// 1 unit.
    Tiny = 1,
    /// 2 units.
    Small = 2,
    /// 4 units.
    Medium = 4,
    /// No estimate: the policy's default.
    Unknown = 6,
    /// 8 units.
    Large = 8,
    /// 16 units.
    Huge = 16,
}

impl EffortBand {
    /// Every band, in value order.
    pub const ALL: [EffortBand; 6] = [
        Self::Tiny,
        Self::Small,
        Self::Medium,
        Self::Unknown,
        Self::Large,
        Self::Huge,
    ];

    /// The band of a reference value.
    pub fn from_value(value: u64) -> Option<Self> {
        Self::ALL.into_iter().find(|b| b.value() == value)
    }

    /// The reference value.
    pub const fn value(self) -> u64 {
        self as u64
    }

    /// The estimate handed to the Scheduler: `value × EFFORT_UNIT_MS`, or `None` for
    /// `Unknown` (the policy's `default_estimate_ms`).
    pub const fn duration_ms(self) -> Option<u32> {
        match self {
            Self::Unknown => None,
            _ => Some(self as u32 * EFFORT_UNIT_MS),
        }
    }
}

/// A finite number as written in decimal — `0.1` is one tenth, not its binary value —
/// normalized (`mantissa` has no trailing zero; zero is `0 × 10^0`, never negative).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WrittenNumber {
    negative: bool,
    mantissa: u128,
    exponent: i64,
}

impl WrittenNumber {
    /// An integer.
    pub fn integer(value: i64) -> Self {
        Self::normalized(value < 0, u128::from(value.unsigned_abs()), 0)
    }

    fn normalized(negative: bool, mut mantissa: u128, mut exponent: i64) -> Self {
        if mantissa == 0 {
            return Self {
                negative: false,
                mantissa: 0,
                exponent: 0,
            };
        }
        while mantissa.is_multiple_of(10) {
            mantissa /= 10;
            exponent += 1;
        }
        Self {
            negative,
            mantissa,
            exponent,
        }
    }

    /// Parses decimal text: `[-+]digits[.digits][(e|E)[-+]digits]` (also `.5`, `5.`). `None`
    /// for anything else (`nan`, `inf`) or more than 38 significant digits.
    pub fn parse(text: &str) -> Option<Self> {
        let (negative, rest) = match text.as_bytes().first()? {
            b'-' => (true, &text[1..]),
            b'+' => (false, &text[1..]),
            _ => (false, text),
        };
        let (number, exp) = match rest.find(['e', 'E']) {
            Some(i) => (&rest[..i], Some(&rest[i + 1..])),
            None => (rest, None),
        };
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if whole.is_empty() && fraction.is_empty() {
            return None;
        }
        let digits = whole.bytes().chain(fraction.bytes());
        let mut exponent = -i64::try_from(fraction.len()).ok()?;
        if let Some(exp) = exp {
            let (exp_negative, exp_digits) = match exp.as_bytes().first()? {
                b'-' => (true, &exp[1..]),
                b'+' => (false, &exp[1..]),
                _ => (false, exp),
            };
            if exp_digits.is_empty() || !exp_digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let value: i64 = exp_digits.parse().ok().filter(|v: &i64| *v < 1 << 40)?;
            exponent += if exp_negative { -value } else { value };
        }
        let mut mantissa: u128 = 0;
        let mut pending_zeros: i64 = 0;
        for b in digits {
            if !b.is_ascii_digit() {
                return None;
            }
            let d = u128::from(b - b'0');
            if d == 0 && mantissa != 0 {
                pending_zeros += 1;
                continue;
            }
            if d == 0 {
                continue;
            }
            for _ in 0..pending_zeros {
                mantissa = mantissa.checked_mul(10)?;
            }
            pending_zeros = 0;
            mantissa = mantissa.checked_mul(10)?.checked_add(d)?;
        }
        Some(Self::normalized(
            negative,
            mantissa,
            exponent + pending_zeros,
        ))
    }

    /// Whether the value is zero.
    pub const fn is_zero(&self) -> bool {
        self.mantissa == 0
    }

    /// Whether the value is below zero.
    pub const fn is_negative(&self) -> bool {
        self.negative
    }

    /// The value when it is a whole number that fits an `i128`, else `None`.
    pub fn to_integer(&self) -> Option<i128> {
        if self.exponent < 0 {
            return None;
        }
        let mut value = i128::try_from(self.mantissa).ok()?;
        for _ in 0..self.exponent {
            value = value.checked_mul(10)?;
        }
        Some(if self.negative { -value } else { value })
    }

    /// Whether the value is a whole number (of any size).
    pub const fn is_integer(&self) -> bool {
        self.exponent >= 0
    }
}

impl fmt::Display for WrittenNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.negative { "-" } else { "" };
        let digits = self.mantissa.to_string();
        let len = digits.len() as i64;
        match self.exponent {
            0 => write!(f, "{sign}{digits}"),
            e if e > 0 && e <= 21 => {
                write!(f, "{sign}{digits}{}", "0".repeat(e as usize))
            }
            e if e < 0 && -e < len => {
                let (head, tail) = digits.split_at((len + e) as usize);
                write!(f, "{sign}{head}.{tail}")
            }
            e if e < 0 && -e - len <= 6 => {
                write!(f, "{sign}0.{}{digits}", "0".repeat((-e - len) as usize))
            }
            e => write!(f, "{sign}{digits}e{e}"),
        }
    }
}

/// The reference's policy knobs. A duration is in microseconds (`None`: not a duration); a
/// number is as written (`None`: not a finite number).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReferenceSchedulerPolicy {
    /// How long one aging step is.
    pub aging_interval_us: Option<i128>,
    /// How far ahead a deadline pulls work forward.
    pub deadline_horizon_us: Option<i128>,
    /// Score per priority point.
    pub priority_weight: Option<WrittenNumber>,
    /// Score of deadline pressure (no equivalent: default only).
    pub deadline_weight: Option<WrittenNumber>,
    /// Score per aging interval.
    pub aging_weight: Option<WrittenNumber>,
    /// Score per unit of fairness credit (sets the cross-Group lag).
    pub fairness_weight: Option<WrittenNumber>,
    /// Score of quota pressure (no equivalent: default only).
    pub quota_pressure_weight: Option<WrittenNumber>,
    /// Score of the estimate (no equivalent: default only).
    pub estimate_weight: Option<WrittenNumber>,
    /// Score by which waiting work must outrank running work to preempt it.
    pub preemption_margin: Option<WrittenNumber>,
}

impl Default for ReferenceSchedulerPolicy {
    /// The reference's defaults.
    fn default() -> Self {
        Self {
            aging_interval_us: Some(5 * 60 * 1_000_000),
            deadline_horizon_us: Some(60 * 60 * 1_000_000),
            priority_weight: Some(WrittenNumber::integer(100)),
            deadline_weight: Some(WrittenNumber::integer(1000)),
            aging_weight: Some(WrittenNumber::integer(25)),
            fairness_weight: Some(WrittenNumber::integer(10)),
            quota_pressure_weight: Some(WrittenNumber::integer(50)),
            estimate_weight: Some(WrittenNumber::integer(1)),
            preemption_margin: Some(WrittenNumber::integer(1)),
        }
    }
}

/// Which of this Scheduler's own fields the caller also set: each conflicts with the reference
/// knobs that map onto it when those are not at their defaults.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OwnFieldsGiven {
    /// `priority_step_ms` (conflicts with `priority_weight`, `aging_weight`, `aging_interval`).
    pub priority_step_ms: bool,
    /// `deadline_horizon_ms` (conflicts with `deadline_horizon`).
    pub deadline_horizon_ms: bool,
    /// `preemption_margin_points` (conflicts with `preemption_margin`).
    pub preemption_margin_points: bool,
    /// `fairness_lag_slots` (conflicts with `fairness_weight`).
    pub fairness_lag_slots: bool,
}

/// What the reference knobs set in [`SchedulerPolicy`](super::SchedulerPolicy); `None`: left to
/// the caller's own field or the core's default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReferenceMapping {
    /// `priority_step_ms`.
    pub priority_step_ms: Option<u32>,
    /// `deadline_horizon_ms`.
    pub deadline_horizon_ms: Option<u32>,
    /// `preemption_margin` (priority points).
    pub preemption_margin: Option<u8>,
    /// `fairness_lag_pass` (pass units, [`PASS_UNIT`] per slot).
    pub fairness_lag_pass: Option<u128>,
}

fn unsupported(field: &'static str, detail: String) -> SchedulerError {
    SchedulerError::ReferencePolicy {
        field,
        detail,
        unsupported: true,
    }
}

fn invalid(field: &'static str, detail: String) -> SchedulerError {
    SchedulerError::ReferencePolicy {
        field,
        detail,
        unsupported: false,
    }
}

fn shown(value: Option<WrittenNumber>) -> String {
    value.map_or_else(|| "not a finite number".to_owned(), |v| v.to_string())
}

/// A positive weight, as written.
fn positive(
    field: &'static str,
    value: Option<WrittenNumber>,
) -> Result<WrittenNumber, SchedulerError> {
    match value {
        None => Err(invalid(field, format!("{field} must be a finite number"))),
        Some(v) if v.is_negative() || v.is_zero() => {
            Err(invalid(field, format!("{field} must be positive, not {v}")))
        }
        Some(v) => Ok(v),
    }
}

/// A duration as a positive whole number of milliseconds.
fn exact_ms(field: &'static str, micros: Option<i128>) -> Result<u128, SchedulerError> {
    let micros = micros.ok_or_else(|| invalid(field, format!("{field} must be a duration")))?;
    if micros <= 0 || micros % 1000 != 0 {
        return Err(unsupported(
            field,
            format!("{field} = {micros} µs is not a positive whole number of milliseconds"),
        ));
    }
    Ok(micros.unsigned_abs() / 1000)
}

fn u32_range(field: &'static str, value: Option<u128>) -> Result<u32, SchedulerError> {
    value
        .and_then(|v| u32::try_from(v).ok())
        .filter(|v| *v >= 1)
        .ok_or_else(|| invalid(field, format!("{field} must be within 1..{}", u32::MAX)))
}

/// `(times, exponent)`: how often `factor` divides `value`, and what is left.
fn strip(mut value: u128, factor: u128) -> (i64, u128) {
    let mut times = 0;
    while value != 0 && value.is_multiple_of(factor) {
        value /= factor;
        times += 1;
    }
    (times, value)
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

fn pow(base: u128, exp: i64) -> Option<u128> {
    u32::try_from(exp).ok().and_then(|e| base.checked_pow(e))
}

/// `a · b · 10^e / d` for positive `a`, `b`, `d`: `Ok(Some(q))` when whole and within `u128`,
/// `Ok(None)` when whole but larger, `Err(())` when not a whole number.
fn exact_quotient(mut a: u128, mut b: u128, mut d: u128, e: i64) -> Result<Option<u128>, ()> {
    let g = gcd(a, d);
    (a, d) = (a / g, d / g);
    let g = gcd(b, d);
    (b, d) = (b / g, d / g);
    // Now d shares no factor with a · b.
    if e >= 0 {
        let (twos, rest) = strip(d, 2);
        let (fives, rest) = strip(rest, 5);
        if rest != 1 || twos > e || fives > e {
            return Err(());
        }
        let scale = pow(2, e - twos).and_then(|t| t.checked_mul(pow(5, e - fives)?));
        return Ok(scale.and_then(|s| a.checked_mul(b)?.checked_mul(s)));
    }
    if d != 1 {
        return Err(());
    }
    let k = -e;
    let (a2, _) = strip(a, 2);
    let (b2, _) = strip(b, 2);
    let (a5, _) = strip(a, 5);
    let (b5, _) = strip(b, 5);
    if a2 + b2 < k || a5 + b5 < k {
        return Err(());
    }
    for (factor, in_a) in [(2u128, a2.min(k)), (5, a5.min(k))] {
        let in_b = k - in_a;
        a /= pow(factor, in_a).ok_or(())?;
        b /= pow(factor, in_b).ok_or(())?;
    }
    Ok(a.checked_mul(b))
}

/// `ceil(a · 10^e / d)` for `a ≥ 0`, `d > 0`; `None` when larger than `u128`.
fn ceil_quotient(a: u128, d: u128, e: i64) -> Option<u128> {
    if a == 0 {
        return Some(0);
    }
    if e >= 0 {
        let n = a.checked_mul(pow(10, e)?)?;
        return Some(n / d + u128::from(!n.is_multiple_of(d)));
    }
    match pow(10, -e).and_then(|s| d.checked_mul(s)) {
        Some(den) => Some(a / den + u128::from(!a.is_multiple_of(den))),
        // The denominator exceeds u128 and so `a`: 0 < quotient < 1.
        None => Some(1),
    }
}

/// `floor(a · 10^e / d)` for `d > 0`; `None` when larger than `u128`.
fn floor_quotient(a: u128, d: u128, e: i64) -> Option<u128> {
    if e >= 0 {
        return Some(a.checked_mul(pow(10, e)?)? / d);
    }
    match pow(10, -e).and_then(|s| d.checked_mul(s)) {
        Some(den) => Some(a / den),
        // The denominator exceeds u128 and so `a`: the quotient is below 1.
        None => Some(0),
    }
}

/// Maps the reference's knobs onto the core's policy fields (see the module documentation).
/// `own` says which of the core's own fields the caller set too: giving both is refused.
pub fn map_reference_policy(
    reference: &ReferenceSchedulerPolicy,
    own: OwnFieldsGiven,
) -> Result<ReferenceMapping, SchedulerError> {
    let defaults = ReferenceSchedulerPolicy::default();
    for (field, value, default) in [
        (
            "deadline_weight",
            reference.deadline_weight,
            defaults.deadline_weight,
        ),
        (
            "quota_pressure_weight",
            reference.quota_pressure_weight,
            defaults.quota_pressure_weight,
        ),
        (
            "estimate_weight",
            reference.estimate_weight,
            defaults.estimate_weight,
        ),
    ] {
        if value != default {
            return Err(unsupported(
                field,
                format!(
                    "{field}={} is not supported by the core scheduler (only the default {})",
                    shown(value),
                    shown(default)
                ),
            ));
        }
    }
    let mut mapping = ReferenceMapping::default();
    if reference.priority_weight != defaults.priority_weight
        || reference.aging_weight != defaults.aging_weight
        || reference.aging_interval_us != defaults.aging_interval_us
    {
        if own.priority_step_ms {
            return Err(invalid(
                "priority_step_ms",
                "give priority_step_ms or the reference's aging weights, not both".to_owned(),
            ));
        }
        let priority = positive("priority_weight", reference.priority_weight)?;
        let aging = positive("aging_weight", reference.aging_weight)?;
        let interval = exact_ms("aging_interval", reference.aging_interval_us)?;
        let what = "aging_interval × priority_weight / aging_weight";
        let step = exact_quotient(
            interval,
            priority.mantissa,
            aging.mantissa,
            priority.exponent - aging.exponent,
        )
        .map_err(|()| {
            unsupported(
                "aging_interval",
                format!("{what} is not a whole number of milliseconds"),
            )
        })?;
        mapping.priority_step_ms = Some(u32_range("aging_interval", step).map_err(|_| {
            invalid(
                "aging_interval",
                format!("{what} must be within 1..{} ms", u32::MAX),
            )
        })?);
    }
    if reference.deadline_horizon_us != defaults.deadline_horizon_us {
        if own.deadline_horizon_ms {
            return Err(invalid(
                "deadline_horizon_ms",
                "give deadline_horizon_ms or deadline_horizon, not both".to_owned(),
            ));
        }
        let horizon = exact_ms("deadline_horizon", reference.deadline_horizon_us)?;
        mapping.deadline_horizon_ms = Some(u32_range("deadline_horizon", Some(horizon))?);
    }
    if reference.preemption_margin != defaults.preemption_margin {
        if own.preemption_margin_points {
            return Err(invalid(
                "preemption_margin_points",
                "give preemption_margin_points or preemption_margin, not both".to_owned(),
            ));
        }
        let (Some(margin), Some(weight)) = (reference.preemption_margin, reference.priority_weight)
        else {
            let field = if reference.preemption_margin.is_none() {
                "preemption_margin"
            } else {
                "priority_weight"
            };
            return Err(invalid(field, format!("{field} must be a finite number")));
        };
        if margin.is_negative() || weight.is_negative() || weight.is_zero() {
            return Err(invalid(
                "preemption_margin",
                "preemption_margin must be ≥ 0 and priority_weight > 0".to_owned(),
            ));
        }
        let points = ceil_quotient(
            margin.mantissa,
            weight.mantissa,
            margin.exponent - weight.exponent,
        )
        .and_then(|p| u8::try_from(p).ok())
        .ok_or_else(|| {
            invalid(
                "preemption_margin",
                format!(
                    "ceil(preemption_margin / priority_weight) must be within 0..{}",
                    u8::MAX
                ),
            )
        })?;
        mapping.preemption_margin = Some(points);
    }
    if reference.fairness_weight != defaults.fairness_weight {
        if own.fairness_lag_slots {
            return Err(invalid(
                "fairness_lag_slots",
                "give fairness_lag_slots or fairness_weight, not both".to_owned(),
            ));
        }
        mapping.fairness_lag_pass = Some(fairness_lag_pass(
            reference.priority_weight,
            reference.fairness_weight,
        )?);
    }
    Ok(mapping)
}

/// `floor(PASS_UNIT · priority_weight / (10 · fairness_weight))`: the cross-Group lag the
/// reference's `fairness_weight` stands for (module documentation), within
/// `0..=MAX_FAIRNESS_LAG_PASS`.
fn fairness_lag_pass(
    priority_weight: Option<WrittenNumber>,
    fairness_weight: Option<WrittenNumber>,
) -> Result<u128, SchedulerError> {
    let fairness = positive("fairness_weight", fairness_weight)?;
    let priority = positive("priority_weight", priority_weight)?;
    let too_large = || {
        invalid(
            "fairness_weight",
            format!(
                "priority_weight / (10 · fairness_weight) = {priority} / (10 · {fairness}) slots \
                 exceeds the largest fairness lag ({} slots)",
                u32::MAX
            ),
        )
    };
    let numerator = PASS_UNIT
        .checked_mul(priority.mantissa)
        .ok_or_else(too_large)?;
    floor_quotient(
        numerator,
        fairness.mantissa,
        priority.exponent - fairness.exponent - 1,
    )
    .filter(|lag| *lag <= MAX_FAIRNESS_LAG_PASS)
    .ok_or_else(too_large)
}

/// A Group's policy from the reference's `GroupSchedulingPolicy(weight, slot_quota,
/// priority_bias)`. The weight must be a whole number (a float holding one is fine) in
/// `1..=MAX_WEIGHT`; `priority_bias` must be an integer in `MIN_PRIORITY..=MAX_PRIORITY`
/// (`None`: not an integer) and, having no equivalent (the core orders each Group's queue by
/// its own items' priorities), `0`.
pub fn reference_group_policy(
    weight: Option<WrittenNumber>,
    slot_quota: Option<u32>,
    priority_bias: Option<i64>,
) -> Result<GroupPolicy, SchedulerError> {
    let weight = match weight {
        None => return Err(invalid("weight", "weight must be a number".to_owned())),
        Some(w) if !w.is_integer() => {
            return Err(unsupported(
                "weight",
                format!("weight={w} is not a whole number the core can represent"),
            ));
        }
        Some(w) => w,
    };
    let bias = priority_bias
        .filter(|b| (i64::from(MIN_PRIORITY)..=i64::from(MAX_PRIORITY)).contains(b))
        .ok_or_else(|| {
            invalid(
                "priority_bias",
                format!("priority_bias must be an integer within {MIN_PRIORITY}..{MAX_PRIORITY}"),
            )
        })?;
    if bias != 0 {
        return Err(unsupported(
            "priority_bias",
            "priority_bias is not supported by the core scheduler".to_owned(),
        ));
    }
    let weight = weight
        .to_integer()
        .and_then(|w| u32::try_from(w).ok())
        .filter(|w| (1..=MAX_WEIGHT).contains(w))
        .ok_or(SchedulerError::InvalidArgument("weight"))?;
    Ok(GroupPolicy { weight, slot_quota })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    fn n(text: &str) -> WrittenNumber {
        WrittenNumber::parse(text).unwrap()
    }

    #[test]
    fn numbers_as_written() {
        assert_eq!(n("100"), n("1e2"));
        assert_eq!(n("100.0"), WrittenNumber::integer(100));
        assert_eq!(n("0.1"), n("1e-1"));
        assert_eq!(n("-0.0"), n("0"));
        assert_eq!(n("1e+21").to_string(), "1000000000000000000000");
        assert_eq!(n("0.000125").to_string(), "0.000125");
        assert_eq!(n("-2.5").to_string(), "-2.5");
        assert_eq!(n("1.5e300").to_string(), "15e299");
        assert_eq!(
            n("12345678901234567890123456789012345678").mantissa,
            12345678901234567890123456789012345678
        );
        assert_eq!(n(&format!("1{}", "0".repeat(400))).to_integer(), None);
        assert!(n(&format!("1{}", "0".repeat(400))).is_integer());
        assert_eq!(n("7.0").to_integer(), Some(7));
        assert_eq!(n("-7").to_integer(), Some(-7));
        assert_eq!(n("7.5").to_integer(), None);
        for bad in [
            "",
            "-",
            ".",
            "nan",
            "NaN",
            "inf",
            "-inf",
            "1e",
            "1.2.3",
            "1e1.5",
            "0x10",
            "123456789012345678901234567890123456789012",
        ] {
            assert_eq!(WrittenNumber::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn effort_bands() {
        assert_eq!(EffortBand::Tiny.duration_ms(), Some(10_000));
        assert_eq!(EffortBand::Medium.duration_ms(), Some(40_000));
        assert_eq!(EffortBand::Huge.duration_ms(), Some(160_000));
        assert_eq!(EffortBand::Unknown.duration_ms(), None);
        assert_eq!(EffortBand::from_value(8), Some(EffortBand::Large));
        assert_eq!(EffortBand::from_value(3), None);
        assert_eq!(EffortBand::from_value(0), None);
    }

    fn policy(edit: impl FnOnce(&mut ReferenceSchedulerPolicy)) -> ReferenceSchedulerPolicy {
        let mut p = ReferenceSchedulerPolicy::default();
        edit(&mut p);
        p
    }

    fn kind(r: Result<ReferenceMapping, SchedulerError>) -> &'static str {
        match r.unwrap_err() {
            SchedulerError::ReferencePolicy {
                unsupported: true, ..
            } => "unsupported_policy",
            SchedulerError::ReferencePolicy { .. } => "invalid_argument",
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn defaults_map_to_nothing() {
        let mapped = map_reference_policy(
            &ReferenceSchedulerPolicy::default(),
            OwnFieldsGiven::default(),
        );
        assert_eq!(mapped.unwrap(), ReferenceMapping::default());
        let own = OwnFieldsGiven {
            priority_step_ms: true,
            deadline_horizon_ms: true,
            preemption_margin_points: true,
            fairness_lag_slots: true,
        };
        assert_eq!(
            map_reference_policy(&ReferenceSchedulerPolicy::default(), own).unwrap(),
            ReferenceMapping::default()
        );
    }

    #[test]
    fn weights_map_exactly() {
        let p = policy(|p| {
            p.aging_interval_us = Some(3_000_000);
            p.deadline_horizon_us = Some(30 * 60 * 1_000_000);
            p.preemption_margin = Some(n("150.0"));
        });
        let m = map_reference_policy(&p, OwnFieldsGiven::default()).unwrap();
        assert_eq!(m.priority_step_ms, Some(12_000));
        assert_eq!(m.deadline_horizon_ms, Some(1_800_000));
        assert_eq!(m.preemption_margin, Some(2));
        let p = policy(|p| {
            p.aging_interval_us = Some(1_000_000);
            p.priority_weight = Some(n("0.3"));
            p.aging_weight = Some(n("0.1"));
        });
        let m = map_reference_policy(&p, OwnFieldsGiven::default()).unwrap();
        assert_eq!(m.priority_step_ms, Some(3_000), "0.3 / 0.1 is 3 as written");
        assert_eq!(
            m.preemption_margin, None,
            "a default margin keeps the core's default whatever the weight"
        );
        // 1 ms × 1 / 3: a third of a millisecond.
        let p = policy(|p| {
            p.aging_interval_us = Some(1_000);
            p.priority_weight = Some(n("1"));
            p.aging_weight = Some(n("3"));
        });
        assert_eq!(
            kind(map_reference_policy(&p, OwnFieldsGiven::default())),
            "unsupported_policy"
        );
        // 1 ms × 2.5e-1 / 2.5e-4 = 1000 ms; 1 ms × 1e-3 / 1e-6 likewise.
        let p = policy(|p| {
            p.aging_interval_us = Some(1_000);
            p.priority_weight = Some(n("1e-3"));
            p.aging_weight = Some(n("1e-6"));
        });
        assert_eq!(
            map_reference_policy(&p, OwnFieldsGiven::default())
                .unwrap()
                .priority_step_ms,
            Some(1000)
        );
        // A whole result beyond u32 is out of range, not unsupported.
        let p = policy(|p| p.priority_weight = Some(n("1e300")));
        assert_eq!(
            kind(map_reference_policy(&p, OwnFieldsGiven::default())),
            "invalid_argument"
        );
        let p = policy(|p| p.aging_weight = Some(n("1e300")));
        assert_eq!(
            kind(map_reference_policy(&p, OwnFieldsGiven::default())),
            "unsupported_policy"
        );
    }

    #[test]
    fn what_the_core_cannot_honour_is_refused() {
        let cases: Vec<(ReferenceSchedulerPolicy, OwnFieldsGiven, &str)> = vec![
            (
                policy(|p| p.aging_interval_us = Some(1_500)),
                OwnFieldsGiven::default(),
                "unsupported_policy",
            ),
            (
                policy(|p| p.aging_interval_us = Some(-1_000)),
                OwnFieldsGiven::default(),
                "unsupported_policy",
            ),
            (
                policy(|p| p.aging_interval_us = None),
                OwnFieldsGiven::default(),
                "invalid_argument",
            ),
            (
                policy(|p| p.deadline_horizon_us = Some(1)),
                OwnFieldsGiven::default(),
                "unsupported_policy",
            ),
            (
                policy(|p| p.deadline_horizon_us = Some(5_000_000_000_000)),
                OwnFieldsGiven::default(),
                "invalid_argument",
            ),
            (
                policy(|p| p.deadline_weight = None),
                OwnFieldsGiven::default(),
                "unsupported_policy",
            ),
            (
                policy(|p| p.quota_pressure_weight = Some(n("0"))),
                OwnFieldsGiven::default(),
                "unsupported_policy",
            ),
            (
                policy(|p| p.estimate_weight = Some(n("2"))),
                OwnFieldsGiven::default(),
                "unsupported_policy",
            ),
            (
                policy(|p| p.priority_weight = Some(n("50"))),
                OwnFieldsGiven {
                    priority_step_ms: true,
                    ..OwnFieldsGiven::default()
                },
                "invalid_argument",
            ),
            (
                policy(|p| p.deadline_horizon_us = Some(60_000_000)),
                OwnFieldsGiven {
                    deadline_horizon_ms: true,
                    ..OwnFieldsGiven::default()
                },
                "invalid_argument",
            ),
            (
                policy(|p| p.preemption_margin = Some(n("2"))),
                OwnFieldsGiven {
                    preemption_margin_points: true,
                    ..OwnFieldsGiven::default()
                },
                "invalid_argument",
            ),
            (
                policy(|p| p.preemption_margin = Some(n("-1"))),
                OwnFieldsGiven::default(),
                "invalid_argument",
            ),
            (
                policy(|p| p.preemption_margin = None),
                OwnFieldsGiven::default(),
                "invalid_argument",
            ),
            (
                policy(|p| p.preemption_margin = Some(n("1e9"))),
                OwnFieldsGiven::default(),
                "invalid_argument",
            ),
            (
                policy(|p| p.aging_weight = Some(n("0"))),
                OwnFieldsGiven::default(),
                "invalid_argument",
            ),
            (
                policy(|p| p.priority_weight = None),
                OwnFieldsGiven::default(),
                "invalid_argument",
            ),
        ];
        for (p, own, expected) in cases {
            assert_eq!(
                kind(map_reference_policy(&p, own)),
                expected,
                "{p:?} {own:?}"
            );
        }
        let err = map_reference_policy(
            &policy(|p| p.estimate_weight = Some(n("5.0"))),
            OwnFieldsGiven::default(),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "estimate_weight=5 is not supported by the core scheduler (only the default 1)"
        );
        assert_eq!(err.code().as_str(), "INVALID_COMMAND");
    }

    fn lag(priority: &str, fairness: &str) -> Result<Option<u128>, SchedulerError> {
        let p = policy(|p| {
            p.priority_weight = Some(n(priority));
            // Keeps the aging step (interval × priority / aging) representable.
            p.aging_weight = Some(n(priority));
            p.fairness_weight = Some(n(fairness));
        });
        map_reference_policy(&p, OwnFieldsGiven::default()).map(|m| m.fairness_lag_pass)
    }

    #[test]
    fn fairness_weight_sets_the_cross_group_lag() {
        // The default keeps the core's own lag (1 slot = 100 / (10 · 10)).
        assert_eq!(lag("100", "10").unwrap(), None);
        // lag = priority_weight / (10 · fairness_weight) slots, rounded down to 2^-40 slot.
        assert_eq!(lag("100", "100").unwrap(), Some(PASS_UNIT / 10));
        assert_eq!(lag("100", "5").unwrap(), Some(2 * PASS_UNIT));
        assert_eq!(lag("100", "1").unwrap(), Some(10 * PASS_UNIT));
        assert_eq!(lag("100", "3").unwrap(), Some(PASS_UNIT * 10 / 3));
        assert_eq!(lag("200", "20").unwrap(), Some(PASS_UNIT));
        assert_eq!(lag("100", "0.1").unwrap(), Some(100 * PASS_UNIT));
        // Strictly fair (a lag below 2^-40 slot) and the largest lag are within bounds.
        assert_eq!(lag("100", "1e30").unwrap(), Some(0));
        assert_eq!(
            lag("1", &format!("{}e-1", 1u64 << 32)).unwrap(),
            Some(PASS_UNIT / (1 << 32))
        );
        let largest = format!("{}", u64::from(u32::MAX) * 10);
        assert_eq!(lag(&largest, "1").unwrap(), Some(MAX_FAIRNESS_LAG_PASS));
    }

    #[test]
    fn fairness_weight_out_of_bounds_is_refused() {
        for (priority, fairness) in [("100", "0"), ("100", "-10"), ("100", "1e-30")] {
            let err = lag(priority, fairness).unwrap_err();
            assert_eq!(err.code().as_str(), "INVALID_COMMAND");
            assert!(
                matches!(
                    err,
                    SchedulerError::ReferencePolicy {
                        field: "fairness_weight",
                        unsupported: false,
                        ..
                    }
                ),
                "{fairness}: {err:?}"
            );
        }
        let largest = format!("{}", u64::from(u32::MAX) * 10 + 1);
        assert!(lag(&largest, "1").is_err());
        let p = policy(|p| p.fairness_weight = None);
        assert_eq!(
            kind(map_reference_policy(&p, OwnFieldsGiven::default())),
            "invalid_argument"
        );
        // The core's own field and the reference's knob for the same lag: not both.
        let p = policy(|p| p.fairness_weight = Some(n("100")));
        let own = OwnFieldsGiven {
            fairness_lag_slots: true,
            ..OwnFieldsGiven::default()
        };
        assert_eq!(kind(map_reference_policy(&p, own)), "invalid_argument");
        // At the default, the own field is fine.
        assert!(map_reference_policy(&policy(|_| {}), own).is_ok());
    }

    #[test]
    fn margins_round_up() {
        for (margin, weight, points) in [
            ("0", "100", 0),
            ("2", "300", 1),
            ("99", "100", 1),
            ("100", "100", 1),
            ("101", "100", 2),
            ("25500", "100", 255),
            ("1e-30", "100", 1),
            ("1e-50", "100", 1),
        ] {
            let p = policy(|p| {
                p.preemption_margin = Some(n(margin));
                p.priority_weight = Some(n(weight));
            });
            let m = map_reference_policy(&p, OwnFieldsGiven::default()).unwrap();
            assert_eq!(m.preemption_margin, Some(points), "{margin} / {weight}");
        }
        let p = policy(|p| p.preemption_margin = Some(n("25501")));
        assert_eq!(
            kind(map_reference_policy(&p, OwnFieldsGiven::default())),
            "invalid_argument"
        );
    }

    #[test]
    fn run_ids_name_a_generation() {
        use crate::scheduler::Dispatch;
        let dispatch = Dispatch {
            work_id: "urn:w:1".into(),
            group_id: "urn:g:1".into(),
            generation: 7,
            slots: 1,
            resume_from: None,
        };
        assert_eq!(
            Dispatch::run_generation("urn:w:1", &dispatch.run_id()),
            Some(7)
        );
        assert_eq!(Dispatch::run_generation("urn:w:1", "urn:w:1:0"), Some(0));
        for bad in [
            "urn:w:2:7",
            "urn:w:1:",
            "urn:w:1:x",
            "urn:w:1:-7",
            "urn:w:1:+7",
            "7",
            "urn:w:1:4294967296",
            "urn:w:1:٣",
        ] {
            assert_eq!(Dispatch::run_generation("urn:w:1", bad), None, "{bad}");
        }
    }

    #[test]
    fn group_policies() {
        let ok = reference_group_policy(Some(n("2.0")), Some(3), Some(0)).unwrap();
        assert_eq!(
            ok,
            GroupPolicy {
                weight: 2,
                slot_quota: Some(3)
            }
        );
        assert_eq!(
            reference_group_policy(Some(n("1000000")), None, Some(0))
                .unwrap()
                .weight,
            MAX_WEIGHT
        );
        let reason = |r: Result<GroupPolicy, SchedulerError>| {
            let e = r.unwrap_err();
            (crate::scheduler::SchedulerError::reason(&e), e.to_string())
        };
        assert_eq!(
            reason(reference_group_policy(Some(n("1.5")), None, Some(0))).0,
            "unsupported_policy"
        );
        assert_eq!(
            reason(reference_group_policy(None, None, Some(0))).0,
            "invalid_argument"
        );
        assert_eq!(
            reason(reference_group_policy(Some(n("1")), None, Some(5))).0,
            "unsupported_policy"
        );
        assert_eq!(
            reason(reference_group_policy(Some(n("1")), None, Some(-101))).0,
            "invalid_argument"
        );
        assert_eq!(
            reason(reference_group_policy(Some(n("1")), None, None)).0,
            "invalid_argument"
        );
        for weight in ["0", "1000001", "-3", "1e40"] {
            assert_eq!(
                reason(reference_group_policy(Some(n(weight)), None, Some(0))),
                ("invalid_argument", "invalid weight".to_owned()),
                "{weight}"
            );
        }
    }
}
