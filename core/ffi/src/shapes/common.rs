//! Shapes shared by several objects: times, safe integers, resource amounts, capability
//! references, currencies.

use missionweaveprotocol_kernel::capability_version::CapabilityRef;
use missionweaveprotocol_kernel::resources::{Currency, Dimension, MAX_SAFE_INTEGER, Resources};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use serde::{Deserialize, Serialize};
#[cfg(test)]
use ts_rs::TS;

/// Milliseconds since the epoch within ±(2^53 − 1): what a JavaScript number holds exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(try_from = "i64", into = "i64")]
pub struct Millis(pub UnixMillis);

impl TryFrom<i64> for Millis {
    type Error = &'static str;
    fn try_from(v: i64) -> Result<Self, Self::Error> {
        if v.unsigned_abs() > MAX_SAFE_INTEGER {
            return Err("time out of the safe integer range");
        }
        Ok(Self(UnixMillis(v)))
    }
}

impl From<Millis> for i64 {
    fn from(m: Millis) -> Self {
        m.0.0
    }
}

impl From<UnixMillis> for Millis {
    fn from(t: UnixMillis) -> Self {
        Self(t)
    }
}

/// A non-negative integer within 2^53 − 1 (epochs, amounts, delays).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(try_from = "u64", into = "u64")]
pub struct Safe(pub u64);

impl TryFrom<u64> for Safe {
    type Error = &'static str;
    fn try_from(v: u64) -> Result<Self, Self::Error> {
        if v > MAX_SAFE_INTEGER {
            return Err("integer out of the safe integer range");
        }
        Ok(Self(v))
    }
}

impl From<Safe> for u64 {
    fn from(s: Safe) -> Self {
        s.0
    }
}

/// A `ResourceUsage` amount (§14): six optional dimensions (absent = 0), financial in
/// micro-units. The member names are the snapshot form's (`snapshot_json::dimension_member`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(test, derive(TS), ts(optional_fields))]
pub struct ResourceInput {
    pub financial_microunits: Option<Safe>,
    pub model_tokens: Option<Safe>,
    pub tool_calls: Option<Safe>,
    pub compute_seconds: Option<Safe>,
    pub wall_clock_seconds: Option<Safe>,
    pub external_actions: Option<Safe>,
}

impl ResourceInput {
    /// The member of each dimension, in [`Dimension::ALL`] order.
    fn members(&self) -> [Option<Safe>; 6] {
        [
            self.financial_microunits,
            self.model_tokens,
            self.tool_calls,
            self.compute_seconds,
            self.wall_clock_seconds,
            self.external_actions,
        ]
    }
}

impl From<ResourceInput> for Resources {
    fn from(r: ResourceInput) -> Self {
        let mut out = Resources::ZERO;
        for (d, v) in Dimension::ALL.into_iter().zip(r.members()) {
            out.set(d, v.map_or(0, |s| s.0));
        }
        out
    }
}

/// `{id, version}`: a capability and a semantic version.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(test, derive(TS))]
pub struct Capability {
    pub id: String,
    pub version: String,
}

/// A [`Capability`] whose version parsed.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Capability")]
pub struct CapabilityArg(pub CapabilityRef);

impl TryFrom<Capability> for CapabilityArg {
    type Error = String;
    fn try_from(c: Capability) -> Result<Self, Self::Error> {
        CapabilityRef::new(&c.id, &c.version)
            .map(Self)
            .ok_or_else(|| format!("version {:?} is not a semantic version", c.version))
    }
}

impl From<&CapabilityRef> for Capability {
    fn from(c: &CapabilityRef) -> Self {
        Self {
            id: c.id.clone(),
            version: c.version.as_str().to_owned(),
        }
    }
}

pub fn capability_refs(items: Vec<CapabilityArg>) -> Vec<CapabilityRef> {
    items.into_iter().map(|c| c.0).collect()
}

/// A `ResourceUsage` amount as the core reports it: all six dimensions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(TS))]
pub struct ResourceAmounts {
    pub financial_microunits: u64,
    pub model_tokens: u64,
    pub tool_calls: u64,
    pub compute_seconds: u64,
    pub wall_clock_seconds: u64,
    pub external_actions: u64,
}

impl From<Resources> for ResourceAmounts {
    fn from(r: Resources) -> Self {
        let get = |d| r.get(d);
        Self {
            financial_microunits: get(Dimension::Financial),
            model_tokens: get(Dimension::ModelTokens),
            tool_calls: get(Dimension::ToolCalls),
            compute_seconds: get(Dimension::ComputeSeconds),
            wall_clock_seconds: get(Dimension::WallClockSeconds),
            external_actions: get(Dimension::ExternalSideEffects),
        }
    }
}

/// An ISO 4217 code: three upper-case letters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct CurrencyCode(pub Currency);

impl TryFrom<String> for CurrencyCode {
    type Error = &'static str;
    fn try_from(text: String) -> Result<Self, Self::Error> {
        Currency::parse(&text)
            .map(Self)
            .ok_or("expected three upper-case letters")
    }
}

/// The TypeScript spelling of the checked newtypes: what crosses, not the Rust wrapper.
#[cfg(test)]
macro_rules! ts_spelled {
    ($($t:ty => $ts:literal),* $(,)?) => {$(
        impl TS for $t {
            type WithoutGenerics = Self;
            type OptionInnerType = Self;
            fn name(_: &ts_rs::Config) -> String {
                $ts.to_owned()
            }
            fn inline(_: &ts_rs::Config) -> String {
                $ts.to_owned()
            }
        }
    )*};
}

#[cfg(test)]
ts_spelled!(
    Millis => "Millis",
    Safe => "number",
    CapabilityArg => "Capability",
    CurrencyCode => "string",
);
