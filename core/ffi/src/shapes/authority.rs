//! The shapes of bounded authority: fenced leases (§11.3), the budget ledger (§12, §14),
//! Delegation Grants (§13) and retries (§15). Ranges and consistency rules stay in the core;
//! these types only fix names, types and which members exist.

use missionweaveprotocol_kernel::delegation::{DelegationGrant, DelegationViolation};
use missionweaveprotocol_kernel::lease::{Lease, LeaseBinding, LeaseWindow};
use missionweaveprotocol_kernel::resources::{Dimension, Resources};
use serde::{Deserialize, Serialize};
#[cfg(test)]
use ts_rs::TS;

use super::common::{
    Capability, CapabilityArg, CurrencyCode, Millis, ResourceAmounts, ResourceInput, Safe,
};
use super::unique::UniqueMap;

// ---- leases --------------------------------------------------------------------------------

/// The members every lease type has, then the type's own (`$extra`).
macro_rules! lease_fields {
    ($(#[$doc:meta])* $name:ident { $($(#[$fa:meta])* $field:ident : $ty:ty,)* }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Deserialize)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        #[cfg_attr(test, derive(TS))]
        pub struct $name {
            pub lease_id: String,
            pub mission_id: String,
            pub group_id: String,
            pub holder_agent_id: String,
            pub session_epoch: Safe,
            #[cfg_attr(test, ts(type = "TimeInput"))]
            pub issued_at: Millis,
            #[cfg_attr(test, ts(type = "TimeInput"))]
            pub starts_at: Millis,
            #[cfg_attr(test, ts(type = "TimeInput"))]
            pub expires_at: Millis,
            $($(#[$fa])* pub $field: $ty,)*
        }

        impl $name {
            pub fn binding(&self) -> (LeaseBinding, LeaseWindow) {
                (
                    LeaseBinding {
                        lease_id: self.lease_id.clone(),
                        mission_id: self.mission_id.clone(),
                        group_id: self.group_id.clone(),
                        holder_agent_id: self.holder_agent_id.clone(),
                        session_epoch: self.session_epoch.0,
                    },
                    LeaseWindow {
                        issued_at: self.issued_at.0,
                        starts_at: self.starts_at.0,
                        expires_at: self.expires_at.0,
                    },
                )
            }
        }
    };
}

lease_fields!(
    /// An execution lease: one WorkItem under one Ownership Epoch.
    WorkLeaseFields {
        work_item_id: String,
        ownership_epoch: Safe,
    }
);

lease_fields!(
    /// Queued ownership that must start by `startBy`.
    OwnershipLeaseFields {
        work_item_id: String,
        ownership_epoch: Safe,
        #[cfg_attr(test, ts(type = "TimeInput"))]
        start_by: Millis,
    }
);

lease_fields!(
    /// Ownership retained while blocked, optionally bounded by `graceExpiresAt`.
    BlockedLeaseFields {
        work_item_id: String,
        ownership_epoch: Safe,
        #[cfg_attr(test, ts(type = "TimeInput | null", optional))]
        grace_expires_at: Option<Millis>,
    }
);

lease_fields!(
    /// The Coordinator's lease (no WorkItem).
    CoordinatorLeaseFields {
        coordinator_epoch: Safe,
    }
);

/// The fencing tokens a holder presents (§11.3).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(test, derive(TS))]
pub struct LeaseClaim {
    pub agent_id: String,
    pub lease_id: String,
    pub session_epoch: u64,
    #[cfg_attr(test, ts(optional = nullable))]
    pub ownership_epoch: Option<u64>,
    #[cfg_attr(test, ts(optional = nullable))]
    pub coordinator_epoch: Option<u64>,
}

/// A lease's full state; times in Unix milliseconds.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(TS))]
pub struct LeaseStateAnswer {
    pub lease_id: String,
    #[cfg_attr(
        test,
        ts(type = "'coordinator' | 'ownership' | 'execution' | 'blocked'")
    )]
    pub lease_type: &'static str,
    pub mission_id: String,
    pub group_id: String,
    pub holder_agent_id: String,
    pub session_epoch: u64,
    pub work_item_id: Option<String>,
    pub ownership_epoch: Option<u64>,
    pub coordinator_epoch: Option<u64>,
    pub issued_at: Millis,
    pub starts_at: Millis,
    pub expires_at: Millis,
    pub start_by: Option<Millis>,
    pub grace_expires_at: Option<Millis>,
    #[cfg_attr(test, ts(type = "LeaseStateName"))]
    pub state: &'static str,
    pub renewal_count: u64,
    pub last_renewed_at: Option<Millis>,
    pub closed_at: Option<Millis>,
    pub closure_reason: Option<String>,
}

impl From<&Lease> for LeaseStateAnswer {
    fn from(l: &Lease) -> Self {
        let b = l.binding();
        let w = l.window();
        Self {
            lease_id: b.lease_id.clone(),
            lease_type: l.lease_type().as_str(),
            mission_id: b.mission_id.clone(),
            group_id: b.group_id.clone(),
            holder_agent_id: b.holder_agent_id.clone(),
            session_epoch: b.session_epoch,
            work_item_id: l.work_item_id().map(str::to_owned),
            ownership_epoch: l.ownership_epoch(),
            coordinator_epoch: l.coordinator_epoch(),
            issued_at: w.issued_at.into(),
            starts_at: w.starts_at.into(),
            expires_at: w.expires_at.into(),
            start_by: l.start_by().map(Millis),
            grace_expires_at: l.grace_expires_at().map(Millis),
            state: l.state().as_str(),
            renewal_count: l.renewal_count(),
            last_renewed_at: l.last_renewed_at().map(Millis),
            closed_at: l.closed_at().map(Millis),
            closure_reason: l.closure_reason().map(str::to_owned),
        }
    }
}

/// The answer of `close`: whether the state changed, and the lease after the call.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(TS))]
pub struct LeaseCloseAnswer {
    pub changed: bool,
    pub lease: LeaseStateAnswer,
}

// ---- delegation ----------------------------------------------------------------------------

/// A Delegation Grant's budget: the currency and the six ceilings (absent = 0).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(test, derive(TS))]
pub struct DelegationBudgetInput {
    pub currency: CurrencyCode,
    #[cfg_attr(test, ts(optional))]
    pub financial_microunits: Option<Safe>,
    #[cfg_attr(test, ts(optional))]
    pub model_tokens: Option<Safe>,
    #[cfg_attr(test, ts(optional))]
    pub tool_calls: Option<Safe>,
    #[cfg_attr(test, ts(optional))]
    pub compute_seconds: Option<Safe>,
    #[cfg_attr(test, ts(optional))]
    pub wall_clock_seconds: Option<Safe>,
    #[cfg_attr(test, ts(optional))]
    pub external_actions: Option<Safe>,
}

impl DelegationBudgetInput {
    fn ceilings(&self) -> Resources {
        ResourceInput {
            financial_microunits: self.financial_microunits,
            model_tokens: self.model_tokens,
            tool_calls: self.tool_calls,
            compute_seconds: self.compute_seconds,
            wall_clock_seconds: self.wall_clock_seconds,
            external_actions: self.external_actions,
        }
        .into()
    }
}

/// A Delegation Grant (§13).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(test, derive(TS))]
pub struct DelegationGrantFields {
    pub grant_id: String,
    pub grantee_agent_id: String,
    pub mission_id: String,
    pub group_id: String,
    pub target_work_item_id: String,
    pub allowed_capabilities: Vec<CapabilityArg>,
    pub budget: DelegationBudgetInput,
    pub max_descendant_depth: u32,
    pub grantee_membership_epoch: u64,
    pub coordinator_epoch: u64,
    pub granted_by: String,
    #[cfg_attr(test, ts(type = "TimeInput"))]
    pub granted_at: Millis,
    #[cfg_attr(test, ts(type = "TimeInput"))]
    pub expires_at: Millis,
}

impl From<DelegationGrantFields> for DelegationGrant {
    fn from(g: DelegationGrantFields) -> Self {
        Self {
            ceilings: g.budget.ceilings(),
            currency: g.budget.currency.0,
            grant_id: g.grant_id,
            grantee_agent_id: g.grantee_agent_id,
            mission_id: g.mission_id,
            group_id: g.group_id,
            target_work_item_id: g.target_work_item_id,
            allowed_capabilities: g.allowed_capabilities.into_iter().map(|c| c.0).collect(),
            max_descendant_depth: g.max_descendant_depth,
            grantee_membership_epoch: g.grantee_membership_epoch,
            coordinator_epoch: g.coordinator_epoch,
            granted_by: g.granted_by,
            granted_at: g.granted_at.0,
            expires_at: g.expires_at.0,
        }
    }
}

/// A Delegation Grant as the authority holds it; the budget has all six ceilings.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(TS))]
pub struct DelegationGrantAnswer {
    pub grant_id: String,
    pub grantee_agent_id: String,
    pub mission_id: String,
    pub group_id: String,
    pub target_work_item_id: String,
    pub allowed_capabilities: Vec<Capability>,
    pub budget: DelegationBudgetAnswer,
    pub max_descendant_depth: u32,
    pub grantee_membership_epoch: u64,
    pub coordinator_epoch: u64,
    pub granted_by: String,
    pub granted_at: Millis,
    pub expires_at: Millis,
}

/// The currency and all six ceilings.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(TS))]
pub struct DelegationBudgetAnswer {
    pub currency: String,
    #[serde(flatten)]
    #[cfg_attr(test, ts(flatten))]
    pub ceilings: ResourceAmounts,
}

impl From<&DelegationGrant> for DelegationGrantAnswer {
    fn from(g: &DelegationGrant) -> Self {
        Self {
            grant_id: g.grant_id.clone(),
            grantee_agent_id: g.grantee_agent_id.clone(),
            mission_id: g.mission_id.clone(),
            group_id: g.group_id.clone(),
            target_work_item_id: g.target_work_item_id.clone(),
            allowed_capabilities: g.allowed_capabilities.iter().map(Into::into).collect(),
            budget: DelegationBudgetAnswer {
                currency: g.currency.as_str().to_owned(),
                ceilings: g.ceilings.into(),
            },
            max_descendant_depth: g.max_descendant_depth,
            grantee_membership_epoch: g.grantee_membership_epoch,
            coordinator_epoch: g.coordinator_epoch,
            granted_by: g.granted_by.clone(),
            granted_at: g.granted_at.into(),
            expires_at: g.expires_at.into(),
        }
    }
}

/// The actor's membership in the Mission group (absent or `null`: not a member).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(test, derive(TS))]
pub struct MembershipInput {
    pub group_id: String,
    #[cfg_attr(test, ts(optional = nullable))]
    pub active: Option<bool>,
    #[cfg_attr(test, ts(optional = nullable))]
    pub work_delegate: Option<bool>,
    pub epoch: u64,
}

/// What the caller knows when it uses a Grant.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(test, derive(TS))]
pub struct DelegationContextInput {
    pub actor_agent_id: String,
    #[cfg_attr(test, ts(optional = nullable))]
    pub membership: Option<MembershipInput>,
    pub mission_id: String,
    pub group_id: String,
    pub coordinator_epoch: u64,
    pub coordinator_agent_id: String,
    /// The Organization cooperation policy's maximum delegation depth (default 3).
    #[cfg_attr(test, ts(optional = nullable))]
    pub organization_max_depth: Option<u32>,
    #[cfg_attr(test, ts(type = "TimeInput"))]
    pub now: Millis,
}

/// One node of the caller's WorkItem graph.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(test, derive(TS))]
pub struct WorkItemNodeInput {
    pub mission_id: String,
    #[cfg_attr(test, ts(optional = nullable))]
    pub parent_work_item_id: Option<String>,
    #[cfg_attr(test, ts(optional = nullable))]
    pub closed: Option<bool>,
}

/// The caller's WorkItem graph, keyed by WorkItem id.
pub type WorkItems = UniqueMap<WorkItemNodeInput>;

/// The work a Grant is used for.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(test, derive(TS), ts(optional_fields = nullable))]
pub struct DelegatedWorkInput {
    pub required_capabilities: Option<Vec<CapabilityArg>>,
    pub budget: Option<ResourceInput>,
    pub currency: Option<CurrencyCode>,
}

/// Why a Grant refused or ended.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(TS))]
pub struct DelegationViolationAnswer {
    #[cfg_attr(test, ts(type = "DelegationViolationKindName"))]
    pub kind: &'static str,
    #[cfg_attr(test, ts(type = "WireCode"))]
    pub code: &'static str,
    pub message: String,
    #[cfg_attr(test, ts(type = "Dimension | null"))]
    pub dimension: Option<&'static str>,
}

impl From<&DelegationViolation> for DelegationViolationAnswer {
    fn from(v: &DelegationViolation) -> Self {
        Self {
            kind: v.kind.as_str(),
            code: v.code().as_str(),
            message: v.message.clone(),
            dimension: v.dimension.map(Dimension::as_str),
        }
    }
}

// ---- retries -------------------------------------------------------------------------------

/// `retryPolicy.backoff` (`work-contract.schema.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(test, derive(TS))]
pub enum BackoffName {
    None,
    Fixed,
    Exponential,
}

/// A WorkItem's retry policy; `maxDelayMs` or the contract's `maxDelay` duration, not both.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(test, derive(TS), ts(optional_fields))]
pub struct RetryPolicyInput {
    #[cfg_attr(test, ts(optional = false))]
    pub max_attempts: u32,
    pub backoff: Option<BackoffName>,
    /// Default min(1000, maxDelayMs).
    pub initial_delay_ms: Option<Safe>,
    pub max_delay_ms: Option<Safe>,
    pub max_delay: Option<String>,
    pub retryable_failures: Option<Vec<String>>,
}

/// A RetryController's construction.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(test, derive(TS))]
pub struct RetryOptions {
    pub policy: RetryPolicyInput,
    #[cfg_attr(test, ts(type = "TimeInput | null", optional))]
    pub deadline: Option<Millis>,
    #[cfg_attr(test, ts(optional = nullable))]
    pub cost_budget: Option<ResourceInput>,
    pub mission_id: String,
    pub work_item_id: String,
    pub ownership_epoch: u64,
}

/// How an attempt ended: `{success: true}` or a failure with its code.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(test, derive(TS))]
pub struct AttemptOutcomeInput {
    pub success: bool,
    #[cfg_attr(test, ts(optional = nullable))]
    pub code: Option<String>,
    #[cfg_attr(test, ts(optional = nullable))]
    pub retryable: Option<bool>,
}

/// The controller's progress.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(TS))]
pub struct RetryStateAnswer {
    pub attempts: u32,
    pub usage: ResourceAmounts,
    #[cfg_attr(test, ts(type = "RetryReasonName | null"))]
    pub finished: Option<&'static str>,
}

/// One started attempt.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(TS))]
pub struct AttemptAnswer {
    pub attempt_number: u32,
    pub idempotency_key: String,
    pub attempt_key: String,
    pub started_at: Millis,
}

/// Whether and when to retry.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(TS))]
pub struct RetryScheduleAnswer {
    pub retry: bool,
    pub retry_at: Option<Millis>,
    #[cfg_attr(test, ts(type = "RetryReasonName"))]
    pub reason: &'static str,
}
