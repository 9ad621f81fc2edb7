//! The Delegation Grant aggregate (§9.1, digest 2.12): store kind [`GRANT_KIND`], ID = Grant ID.
//!
//! Value (canonical JSON):
//!
//! ```json
//! {"grant": <membership.schema.json delegationGrants[] item>,
//!  "uses": [{"workItemId": "…", "budget": {<six dimensions>}}]}
//! ```
//!
//! `uses` lists every WorkItem created or offered under the Grant with the budget it was
//! charged, so the pure [`DelegationAuthority`] is rebuilt from the stored value
//! (`restore_attribution`) and its cumulative ceilings hold across Commands.

use missionweaveprotocol::json::{self, Number, Object, Value};
use missionweaveprotocol::schema_formats::Timestamp;

use crate::budget::account::wire_limits;
use crate::error::EngineError;
use crate::store::{AggregateKey, Blob, Store};
use missionweaveprotocol_kernel::budget::{AccountId, AccountKind};
use missionweaveprotocol_kernel::capability_version::CapabilityRef;
use missionweaveprotocol_kernel::delegation::{DelegationAuthority, DelegationGrant};
use missionweaveprotocol_kernel::resources::Resources;
use missionweaveprotocol_kernel::snapshot_json::{resources_from_value, resources_to_value};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// Store kind of a Delegation Grant.
pub const GRANT_KIND: &str = "delegation_grant";

/// A stored Grant: its document, the WorkItems charged to it, and the pure authority.
#[derive(Debug, Clone)]
pub(crate) struct StoredGrant {
    /// Store revision (0: not stored yet).
    pub revision: u64,
    /// The `delegationGrants[]` item.
    pub document: Value,
    /// `(workItemId, budget)` of every use.
    pub uses: Vec<(String, Resources)>,
    /// The pure checks over the Grant, with every use restored.
    pub authority: DelegationAuthority,
}

impl StoredGrant {
    /// The store key of Grant `grant_id`.
    pub fn key(grant_id: &str) -> AggregateKey {
        AggregateKey::new(GRANT_KIND, grant_id)
    }

    /// A new Grant from its document (nothing charged yet).
    pub fn new(document: Value) -> Result<Self, EngineError> {
        let grant = grant_from_document(&document)
            .map_err(|detail| EngineError::invalid("malformed_grant", detail))?;
        let authority = DelegationAuthority::new(grant)
            .map_err(|v| EngineError::invalid("malformed_grant", v.message))?;
        Ok(Self {
            revision: 0,
            document,
            uses: Vec::new(),
            authority,
        })
    }

    /// The stored Grant `grant_id`, if any.
    pub fn read(store: &dyn Store, grant_id: &str) -> Result<Option<Self>, EngineError> {
        let key = Self::key(grant_id);
        let Some(stored) = store.aggregate(&key)? else {
            return Ok(None);
        };
        let corrupt = |detail: String| EngineError::Corrupt {
            key: key.clone(),
            detail,
        };
        let value = json::parse_state(&stored.value).map_err(|e| corrupt(e.to_string()))?;
        let document = value
            .get("grant")
            .cloned()
            .ok_or_else(|| corrupt("no grant".into()))?;
        let mut grant = Self::new(document).map_err(|e| corrupt(e.to_string()))?;
        grant.revision = stored.revision;
        for use_ in value
            .get("uses")
            .and_then(Value::as_array)
            .ok_or_else(|| corrupt("no uses".into()))?
        {
            let id = use_
                .get("workItemId")
                .and_then(Value::as_str)
                .ok_or_else(|| corrupt("use without workItemId".into()))?;
            let budget = use_
                .get("budget")
                .ok_or_else(|| corrupt("use without budget".into()))
                .and_then(|b| {
                    resources_from_value(b, "budget").map_err(|e| corrupt(e.to_string()))
                })?;
            grant
                .authority
                .restore_attribution(id, &budget)
                .map_err(|v| corrupt(v.message))?;
            grant.uses.push((id.to_owned(), budget));
        }
        Ok(Some(grant))
    }

    /// Records a use of `work_item_id` charged `budget` (once per WorkItem).
    pub fn record_use(&mut self, work_item_id: &str, budget: Resources) {
        if !self.uses.iter().any(|(id, _)| id == work_item_id) {
            self.uses.push((work_item_id.to_owned(), budget));
        }
    }

    /// The canonical bytes of the stored value.
    pub fn to_blob(&self) -> Result<Blob, EngineError> {
        let mut value = Object::new();
        value.insert("grant", self.document.clone());
        value.insert(
            "uses",
            Value::Array(
                self.uses
                    .iter()
                    .map(|(id, budget)| {
                        let mut o = Object::new();
                        o.insert("workItemId", Value::string(id));
                        o.insert("budget", resources_to_value(budget));
                        Value::Object(o)
                    })
                    .collect(),
            ),
        );
        json::canonical_bytes(&Value::Object(value))
            .map(Blob::from)
            .map_err(|e| EngineError::invalid("not_canonical", e.to_string()))
    }
}

/// A `delegationGrants[]` item (schema-valid) as the pure [`DelegationGrant`].
pub(crate) fn grant_from_document(document: &Value) -> Result<DelegationGrant, String> {
    let text = |name: &str| -> Result<String, String> {
        document
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| format!("{name} is missing or not a string"))
    };
    let count = |name: &str| -> Result<u64, String> {
        document
            .get(name)
            .and_then(Value::as_number)
            .and_then(Number::as_u64)
            .ok_or_else(|| format!("{name} is missing or not a non-negative integer"))
    };
    let time = |name: &str| -> Result<UnixMillis, String> {
        let raw = text(name)?;
        let stamp = Timestamp::parse(&raw).map_err(|e| format!("{name}: {e}"))?;
        Ok(UnixMillis(stamp.instant().unix_millis()))
    };
    let allowed_capabilities = document
        .get("allowedCapabilities")
        .and_then(Value::as_array)
        .ok_or("allowedCapabilities is missing")?
        .iter()
        .map(|c| {
            let id = c.get("id").and_then(Value::as_str).unwrap_or_default();
            let version = c.get("version").and_then(Value::as_str).unwrap_or_default();
            CapabilityRef::new(id, version).ok_or_else(|| format!("capability {id} {version}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let grant_id = text("grantId")?;
    let budget = document.get("budget").ok_or("budget is missing")?;
    let account = AccountId {
        kind: AccountKind::WorkItem,
        id: grant_id.clone(),
    };
    let (currency, ceilings) = wire_limits(budget, &account).map_err(|e| e.to_string())?;
    let granted_by = document
        .get("grantedBy")
        .and_then(|a| a.get("id"))
        .and_then(Value::as_str)
        .ok_or("grantedBy is missing")?
        .to_owned();
    Ok(DelegationGrant {
        grant_id,
        grantee_agent_id: text("granteeAgentId")?,
        mission_id: text("missionId")?,
        group_id: text("groupId")?,
        target_work_item_id: text("targetWorkItemId")?,
        allowed_capabilities,
        currency: currency.ok_or("budget.currency is required (§9.1)")?,
        ceilings,
        max_descendant_depth: u32::try_from(count("maxDescendantDepth")?).unwrap_or(u32::MAX),
        grantee_membership_epoch: count("granteeMembershipEpoch")?,
        coordinator_epoch: count("coordinatorEpoch")?,
        granted_by,
        granted_at: time("grantedAt")?,
        expires_at: time("expiresAt")?,
    })
}
