//! The stored Execution Approval. Immutable once granted (§7.1 "Approvals are immutable"), so a
//! reader never needs to re-check it at commit: it can only be added, never changed.
//!
//! Two rows per approval, written in the same transaction at revision 1:
//!
//! - kind [`EXECUTION_APPROVAL_KIND`], ID = Approval ID: what the Authorization Service looks
//!   up by the ID a capability request cites (`policy::ExecutionApprovalLookup`);
//! - kind [`WORK_ITEM_APPROVAL_KIND`], ID = `"<workItemId> <approvalId>"`: what the
//!   `work.start` gate lists by the prefix `"<workItemId> "`, O(that WorkItem's approvals).
//!   Identifiers contain no whitespace (§2), so the space cannot occur inside either part.
//!
//! The value is the canonical JSON of [`ExecutionApproval::to_value`] (the reference's
//! `ExecutionApproval` model, camelCase, plus the instants in milliseconds).

use missionweaveprotocol::Principal;
use missionweaveprotocol::json::{self, Number, Object, Value};

use crate::budget::account::wire_limits;
use crate::store::{AggregateKey, Blob};
use missionweaveprotocol_kernel::budget::{AccountId, AccountKind, BudgetError};
use missionweaveprotocol_kernel::resources::Resources;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// Store kind of an Execution Approval (ID = Approval ID).
pub const EXECUTION_APPROVAL_KIND: &str = "execution_approval";
/// Store kind of the per-WorkItem approval index (ID = `"<workItemId> <approvalId>"`).
pub const WORK_ITEM_APPROVAL_KIND: &str = "work_item_execution_approval";

/// One granted Execution Approval.
#[derive(Clone, Debug, PartialEq)]
pub struct ExecutionApproval {
    /// Approval ID.
    pub approval_id: String,
    /// Mission.
    pub mission_id: String,
    /// Group.
    pub group_id: String,
    /// WorkItem.
    pub work_item_id: String,
    /// The Ownership Epoch it was granted for (§12: one WorkItem Ownership Epoch).
    pub ownership_epoch: u64,
    /// Approved operations (≥ 1, distinct).
    pub operations: Vec<String>,
    /// Approved resources (distinct).
    pub resources: Vec<String>,
    /// Approved budget ceiling (`common.schema.json#/$defs/budget`), if the approval sets one.
    pub budget: Option<Value>,
    /// The signed human decision's actor.
    pub approver: Principal,
    /// When it was granted.
    pub approved_at: UnixMillis,
    /// When it stops satisfying any gate (exclusive).
    pub expires_at: UnixMillis,
    /// Free text.
    pub comments: Option<String>,
}

fn strings(items: &[String]) -> Value {
    Value::Array(items.iter().map(Value::string).collect())
}

fn int(n: u64) -> Value {
    Value::Number(Number::from_u64(n))
}

fn millis(at: UnixMillis) -> Value {
    Value::Number(Number::from_i64(at.0))
}

impl ExecutionApproval {
    /// The row keyed by Approval ID.
    pub fn key(approval_id: &str) -> AggregateKey {
        AggregateKey::new(EXECUTION_APPROVAL_KIND, approval_id)
    }

    /// The per-WorkItem index row.
    pub fn index_key(work_item_id: &str, approval_id: &str) -> AggregateKey {
        AggregateKey::new(
            WORK_ITEM_APPROVAL_KIND,
            format!("{work_item_id} {approval_id}"),
        )
    }

    /// The budget ceiling in ledger units (financial in micro-units, like the accounts).
    pub fn budget_limits(&self) -> Result<Option<Resources>, BudgetError> {
        let account = AccountId {
            kind: AccountKind::WorkItem,
            id: self.work_item_id.clone(),
        };
        self.budget
            .as_ref()
            .map(|b| wire_limits(b, &account).map(|(_, limits)| limits))
            .transpose()
    }

    /// Whether it covers `operations` and `resources`: every one approved by name, as the
    /// Authorization Service checks a capability request against it (`policy::
    /// ExecutionAuthorization` step 7), so the start gate and the token agree.
    pub fn covers(&self, operations: &[String], resources: &[String]) -> bool {
        operations.iter().all(|o| self.operations.contains(o))
            && resources.iter().all(|r| self.resources.contains(r))
    }

    /// The Event payload members (`approval.execution.granted`): the approval without the
    /// millisecond instants.
    pub fn event_payload(&self) -> Object {
        let mut o = Object::new();
        o.insert("approvalId", Value::string(&self.approval_id));
        o.insert("kind", Value::string("work_execution"));
        o.insert("missionId", Value::string(&self.mission_id));
        o.insert("groupId", Value::string(&self.group_id));
        o.insert("workItemId", Value::string(&self.work_item_id));
        o.insert("ownershipEpoch", int(self.ownership_epoch));
        o.insert("operations", strings(&self.operations));
        o.insert("resources", strings(&self.resources));
        if let Some(budget) = &self.budget {
            o.insert("budget", budget.clone());
        }
        o.insert("approver", self.approver.to_value());
        o.insert(
            "approvedAt",
            Value::string(crate::input::rfc3339(self.approved_at)),
        );
        o.insert(
            "expiresAt",
            Value::string(crate::input::rfc3339(self.expires_at)),
        );
        if let Some(c) = &self.comments {
            o.insert("comments", Value::string(c));
        }
        o
    }

    /// The stored JSON: the Event payload plus `approvedAtMs` and `expiresAtMs`.
    pub fn to_value(&self) -> Value {
        let mut o = self.event_payload();
        o.insert("approvedAtMs", millis(self.approved_at));
        o.insert("expiresAtMs", millis(self.expires_at));
        Value::Object(o)
    }

    /// Canonical bytes of [`to_value`](Self::to_value).
    pub fn to_blob(&self) -> Blob {
        // Strings, safe integers and an already-validated budget object: always canonical.
        Blob::from(json::canonical_bytes(&self.to_value()).unwrap_or_default())
    }

    /// Reads a stored approval; `None` if malformed.
    pub fn from_stored(bytes: &[u8]) -> Option<Self> {
        Self::from_value(&json::parse_state(bytes).ok()?)
    }

    /// Reads [`to_value`](Self::to_value)'s form; `None` if malformed.
    pub fn from_value(v: &Value) -> Option<Self> {
        let text = |name: &str| v.get(name).and_then(Value::as_str).map(str::to_owned);
        let list = |name: &str| -> Option<Vec<String>> {
            v.get(name)?
                .as_array()?
                .iter()
                .map(|s| s.as_str().map(str::to_owned))
                .collect()
        };
        let ms = |name: &str| {
            v.get(name)
                .and_then(Value::as_number)
                .and_then(|n| n.as_i64())
                .map(UnixMillis)
        };
        Some(Self {
            approval_id: text("approvalId")?,
            mission_id: text("missionId")?,
            group_id: text("groupId")?,
            work_item_id: text("workItemId")?,
            ownership_epoch: v.get("ownershipEpoch")?.as_number()?.as_u64()?,
            operations: list("operations")?,
            resources: list("resources")?,
            budget: v.get("budget").cloned(),
            approver: Principal::from_value(v.get("approver")?)?,
            approved_at: ms("approvedAtMs")?,
            expires_at: ms("expiresAtMs")?,
            comments: text("comments"),
        })
    }
}
