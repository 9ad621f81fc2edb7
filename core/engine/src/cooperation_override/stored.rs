//! The stored Cooperation Override Grant.

use missionweaveprotocol::json::{self, Object, Value};
use missionweaveprotocol::schema_formats::Timestamp;

use crate::error::EngineError;
use crate::store::{AggregateKey, Blob, Store};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// Store kind of a Cooperation Override Grant.
pub const OVERRIDE_KIND: &str = "cooperation_override_grant";

/// A stored Grant and its revision.
#[derive(Debug, Clone)]
pub(crate) struct StoredOverride {
    pub revision: u64,
    pub grant: Value,
    pub consumed: Option<Value>,
}

impl StoredOverride {
    pub fn key(grant_id: &str) -> AggregateKey {
        AggregateKey::new(OVERRIDE_KIND, grant_id)
    }

    pub fn read(store: &dyn Store, grant_id: &str) -> Result<Option<Self>, EngineError> {
        let key = Self::key(grant_id);
        let Some(stored) = store.aggregate(&key)? else {
            return Ok(None);
        };
        let value = json::parse_state(&stored.value).map_err(|e| EngineError::Corrupt {
            key: key.clone(),
            detail: e.to_string(),
        })?;
        let grant = value.get("grant").cloned().ok_or(EngineError::Corrupt {
            key,
            detail: "no grant".to_owned(),
        })?;
        Ok(Some(Self {
            revision: stored.revision,
            grant,
            consumed: value.get("consumed").cloned(),
        }))
    }

    /// A member of the Grant (`""` when absent: a stored Grant was complete when written).
    pub fn text(&self, name: &str) -> &str {
        self.grant
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// `expiresAt`.
    pub fn expires_at(&self) -> UnixMillis {
        Timestamp::parse(self.text("expiresAt"))
            .map(|t| UnixMillis(t.instant().unix_millis()))
            .unwrap_or(UnixMillis(i64::MIN))
    }

    pub fn to_blob(&self) -> Result<Blob, EngineError> {
        let mut value = Object::new();
        value.insert("grant", self.grant.clone());
        if let Some(consumed) = &self.consumed {
            value.insert("consumed", consumed.clone());
        }
        json::canonical_bytes(&Value::Object(value))
            .map(Blob::from)
            .map_err(|e| EngineError::invalid("not_canonical", e.to_string()))
    }
}
