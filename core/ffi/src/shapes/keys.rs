//! The shape of a Registry key's validity history (`RegistryBuilder.addKey`): the timestamps
//! are §2 text, checked by the core's builder.

use missionweaveprotocol::registry::ValidityRecord;
use serde::Deserialize;
#[cfg(test)]
use ts_rs::TS;

/// One validity record; the builder numbers the sequence. Unknown members are refused, so a
/// misspelt `revokedAt` never yields a key that stays valid.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(test, derive(TS))]
pub struct ValidityRecordInput {
    #[cfg_attr(test, ts(type = "TimestampInput"))]
    pub recorded_at: String,
    #[cfg_attr(test, ts(type = "TimestampInput | null", optional))]
    pub valid_until: Option<String>,
    #[cfg_attr(test, ts(type = "TimestampInput | null", optional))]
    pub revoked_at: Option<String>,
}

impl From<ValidityRecordInput> for ValidityRecord {
    fn from(r: ValidityRecordInput) -> Self {
        Self {
            recorded_at: r.recorded_at,
            valid_until: r.valid_until,
            revoked_at: r.revoked_at,
        }
    }
}
