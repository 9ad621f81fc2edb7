//! The six budget dimensions shared by the ledger, Delegation Grants and retries (§12, §9.1).
//!
//! Every dimension is a non-negative safe JSON integer (§2: ≤ 2^53 − 1). The financial
//! dimension is counted in integer micro-units of one currency (10^-6 of a unit), which keeps
//! charging exact; the schema's `financialLimit` number is `micro-units / 10^6`.

use core::fmt;

/// Largest safe JSON integer (§2): every budget value and counter stays at or below it.
pub const MAX_SAFE_INTEGER: u64 = 9_007_199_254_740_991;

/// One of the six Resource Budget dimensions (§12, `common.schema.json#/$defs/budget`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dimension {
    /// Money, in micro-units of the account's currency.
    Financial,
    /// Model tokens.
    ModelTokens,
    /// Tool calls.
    ToolCalls,
    /// Compute seconds.
    ComputeSeconds,
    /// Wall-clock seconds.
    WallClockSeconds,
    /// External side effects.
    ExternalSideEffects,
}

impl Dimension {
    /// All six dimensions in schema order.
    pub const ALL: [Dimension; 6] = [
        Dimension::Financial,
        Dimension::ModelTokens,
        Dimension::ToolCalls,
        Dimension::ComputeSeconds,
        Dimension::WallClockSeconds,
        Dimension::ExternalSideEffects,
    ];

    /// Index into [`Resources`] values.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The schema's limit field name (`financialLimit`, `modelTokenLimit`, …).
    pub const fn limit_field(self) -> &'static str {
        match self {
            Dimension::Financial => "financialLimit",
            Dimension::ModelTokens => "modelTokenLimit",
            Dimension::ToolCalls => "toolCallLimit",
            Dimension::ComputeSeconds => "computeSecondsLimit",
            Dimension::WallClockSeconds => "wallClockSecondsLimit",
            Dimension::ExternalSideEffects => "externalSideEffectLimit",
        }
    }

    /// The snake_case name: the reference's `ResourceUsage` field and the `dimension` field of
    /// every error that names a dimension (one spelling in every binding).
    pub const fn as_str(self) -> &'static str {
        match self {
            Dimension::Financial => "financial_microunits",
            Dimension::ModelTokens => "model_tokens",
            Dimension::ToolCalls => "tool_calls",
            Dimension::ComputeSeconds => "compute_seconds",
            Dimension::WallClockSeconds => "wall_clock_seconds",
            Dimension::ExternalSideEffects => "external_actions",
        }
    }

    /// Parses [`as_str`](Self::as_str).
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.as_str() == text)
    }
}

impl fmt::Display for Dimension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Six non-negative amounts, one per [`Dimension`]; used for limits, usage and deltas.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Resources(pub [u64; 6]);

/// Usage or a usage delta.
pub type ResourceUsage = Resources;
/// Limits (a missing schema limit is a zero allowance, as in the reference).
pub type ResourceLimits = Resources;

impl Resources {
    /// All zero.
    pub const ZERO: Resources = Resources([0; 6]);

    /// Builds from the six values in [`Dimension::ALL`] order.
    pub const fn new(
        financial_micros: u64,
        model_tokens: u64,
        tool_calls: u64,
        compute_seconds: u64,
        wall_clock_seconds: u64,
        external_side_effects: u64,
    ) -> Self {
        Resources([
            financial_micros,
            model_tokens,
            tool_calls,
            compute_seconds,
            wall_clock_seconds,
            external_side_effects,
        ])
    }

    /// The same value in every dimension.
    pub const fn splat(v: u64) -> Self {
        Resources([v; 6])
    }

    /// One dimension's amount.
    pub const fn get(&self, d: Dimension) -> u64 {
        self.0[d.index()]
    }

    /// Sets one dimension's amount.
    pub fn set(&mut self, d: Dimension, v: u64) {
        self.0[d.index()] = v;
    }

    /// A copy with one dimension replaced.
    pub fn with(mut self, d: Dimension, v: u64) -> Self {
        self.set(d, v);
        self
    }

    /// True when every dimension is zero.
    pub fn is_zero(&self) -> bool {
        self.0.iter().all(|v| *v == 0)
    }

    /// The first dimension above [`MAX_SAFE_INTEGER`], if any (§2).
    pub fn first_unsafe(&self) -> Option<Dimension> {
        Dimension::ALL
            .into_iter()
            .find(|d| self.get(*d) > MAX_SAFE_INTEGER)
    }

    /// Sum per dimension; `Err(d)` names the first dimension that would exceed
    /// [`MAX_SAFE_INTEGER`].
    pub fn checked_add(&self, other: &Resources) -> Result<Resources, Dimension> {
        let mut out = [0u64; 6];
        for d in Dimension::ALL {
            let v = self.get(d).saturating_add(other.get(d));
            if v > MAX_SAFE_INTEGER {
                return Err(d);
            }
            out[d.index()] = v;
        }
        Ok(Resources(out))
    }

    /// Difference per dimension, saturating at zero.
    pub fn saturating_sub(&self, other: &Resources) -> Resources {
        let mut out = [0u64; 6];
        for d in Dimension::ALL {
            out[d.index()] = self.get(d).saturating_sub(other.get(d));
        }
        Resources(out)
    }

    /// Minimum per dimension.
    pub fn min(&self, other: &Resources) -> Resources {
        let mut out = [0u64; 6];
        for d in Dimension::ALL {
            out[d.index()] = self.get(d).min(other.get(d));
        }
        Resources(out)
    }

    /// The first dimension where `self > ceiling`, if any.
    pub fn first_exceeding(&self, ceiling: &Resources) -> Option<Dimension> {
        Dimension::ALL
            .into_iter()
            .find(|d| self.get(*d) > ceiling.get(*d))
    }

    /// True when `self ≤ ceiling` in every dimension.
    pub fn fits_within(&self, ceiling: &Resources) -> bool {
        self.first_exceeding(ceiling).is_none()
    }
}

/// An ISO 4217-shaped currency code (`^[A-Z]{3}$`, `common.schema.json`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Currency([u8; 3]);

impl Currency {
    /// Parses three upper-case ASCII letters; anything else is `None`.
    pub fn parse(code: &str) -> Option<Currency> {
        let b = code.as_bytes();
        if b.len() == 3 && b.iter().all(u8::is_ascii_uppercase) {
            Some(Currency([b[0], b[1], b[2]]))
        } else {
            None
        }
    }

    /// The three-letter code.
    pub fn as_str(&self) -> &str {
        // Only ASCII upper-case letters are ever stored, so this cannot fail.
        core::str::from_utf8(&self.0).unwrap_or("XXX")
    }
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn currency_parsing() {
        assert_eq!(
            Currency::parse("USD").map(|c| c.to_string()),
            Some("USD".into())
        );
        for bad in ["usd", "US", "USDX", "U$D", ""] {
            assert!(Currency::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn checked_add_names_the_overflowing_dimension() {
        let a = Resources::ZERO.with(Dimension::ToolCalls, MAX_SAFE_INTEGER);
        let b = Resources::ZERO.with(Dimension::ToolCalls, 1);
        assert_eq!(a.checked_add(&b), Err(Dimension::ToolCalls));
        assert_eq!(
            a.checked_add(&Resources::ZERO.with(Dimension::Financial, 1))
                .map(|r| r.get(Dimension::Financial)),
            Ok(1)
        );
    }

    #[test]
    fn comparisons() {
        let limit = Resources::splat(10);
        assert!(Resources::splat(10).fits_within(&limit));
        assert_eq!(
            Resources::ZERO
                .with(Dimension::WallClockSeconds, 11)
                .first_exceeding(&limit),
            Some(Dimension::WallClockSeconds)
        );
        assert_eq!(Resources::splat(3).saturating_sub(&limit), Resources::ZERO);
        assert_eq!(
            Resources::splat(u64::MAX).first_unsafe(),
            Some(Dimension::Financial)
        );
    }
}
