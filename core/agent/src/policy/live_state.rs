//! The authoritative state [`ExecutionAuthorization`](super::ExecutionAuthorization) reads
//! before it issues a grant (§12): read-only seams, so that the policy layer stays sans-IO.
//!
//! - [`PolicyStateReader`]: Session Epochs, WorkItems (state, owner, Execution Lease, contract
//!   scope), Missions (state, permissions) and the remaining budget. Implemented here for the
//!   [`Engine`] (reads its store directly) and for [`LiveDocuments`] (the documents a host got
//!   from `Core.query`: the Python and Node packages use this one).
//! - [`ExecutionApprovalLookup`]: persisted Execution Approvals. The [`Engine`] answers it from
//!   the approvals its `approval.grant_execution` Commands stored (`missionweaveprotocol_engine::approval`, kind
//!   `execution_approval`): only approvals whose signed human Command it accepted exist there.
//!   [`NoExecutionApprovals`] finds none (every approval-gated request is then refused with
//!   `APPROVAL_REQUIRED`), for hosts that hold no approval state.

use missionweaveprotocol::WireCode;
use missionweaveprotocol::crypto::Signer;
use missionweaveprotocol::json::Value;

use super::error::PolicyError;
use missionweaveprotocol_engine::approval::ExecutionApproval as StoredApproval;
use missionweaveprotocol_engine::budget::account::{BudgetAccount, account_key};
use missionweaveprotocol_engine::engine::Engine;
use missionweaveprotocol_engine::events::EventIdSource;
use missionweaveprotocol_engine::mission::MissionState;
use missionweaveprotocol_engine::store::{AggregateKey, Store};
use missionweaveprotocol_engine::work::scope::ContractScope;
use missionweaveprotocol_engine::work::{
    AGGREGATE_KIND as WORK_ITEM_KIND, WorkItem, WorkItemState,
};
use missionweaveprotocol_kernel::budget::AccountKind;
use missionweaveprotocol_kernel::lease::Lease;
use missionweaveprotocol_kernel::resources::Resources;

/// The live WorkItem facts a grant depends on.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveWorkItem {
    /// WorkItem ID.
    pub work_item_id: String,
    /// Its Mission.
    pub mission_id: String,
    /// Its Group.
    pub group_id: String,
    /// §10.2 state.
    pub state: WorkItemState,
    /// Owner Agent and Ownership Epoch.
    pub owner: Option<(String, u64)>,
    /// The Execution Lease, if any.
    pub execution_lease: Option<Lease>,
    /// The contract's scope.
    pub contract: ContractScope,
}

impl LiveWorkItem {
    /// From the engine's WorkItem aggregate.
    pub fn of(item: &WorkItem) -> Self {
        Self {
            work_item_id: item.work_item_id.clone(),
            mission_id: item.mission_id.clone(),
            group_id: item.group_id.clone(),
            state: item.state,
            owner: item
                .owner
                .as_ref()
                .map(|o| (o.agent_id.clone(), o.ownership_epoch)),
            execution_lease: item.execution_lease.clone(),
            contract: ContractScope::from_contract(item.contract.document()),
        }
    }
}

/// The live Mission facts a grant depends on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveMission {
    /// Mission ID.
    pub mission_id: String,
    /// Only an `active` Mission's work may execute.
    pub active: bool,
    /// Mission permissions (tools, resources and operations the MissionOwner allowed). `None`:
    /// the Mission records no permission list (the 0.1 `mission.schema.json` has none), so
    /// the contract is the only scope.
    pub permissions: Option<Vec<String>>,
}

/// A persisted Execution Approval (the reference's `ExecutionApproval`), as the authority
/// accepted it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecutionApprovalRecord {
    /// Approval ID.
    pub approval_id: String,
    /// Mission.
    pub mission_id: String,
    /// Group.
    pub group_id: String,
    /// WorkItem.
    pub work_item_id: String,
    /// The Ownership Epoch it was granted for.
    pub ownership_epoch: u64,
    /// Approved operations.
    pub operations: Vec<String>,
    /// Approved resources.
    pub resources: Vec<String>,
    /// Approved budget ceiling, if the approval sets one.
    pub budget: Option<Resources>,
    /// Expiry.
    pub expires_at: missionweaveprotocol_kernel::unix_millis::UnixMillis,
}

/// Read-only access to the authoritative state (§12 "the Authorization Service issues …
/// after acceptance and approvals").
pub trait PolicyStateReader {
    /// The Agent's current Session Epoch, if it ever opened one.
    fn session_epoch(&self, agent_id: &str) -> Result<Option<u64>, PolicyError>;
    /// The WorkItem.
    fn work_item(&self, work_item_id: &str) -> Result<Option<LiveWorkItem>, PolicyError>;
    /// The Mission.
    fn mission(&self, mission_id: &str) -> Result<Option<LiveMission>, PolicyError>;
    /// What the WorkItem may still spend: the minimum over its account and its ancestry.
    fn remaining_budget(&self, work_item_id: &str) -> Result<Option<Resources>, PolicyError>;
}

/// Persisted Execution Approvals.
pub trait ExecutionApprovalLookup {
    /// The approval with this ID, if the authority accepted one.
    fn execution_approval(
        &self,
        approval_id: &str,
    ) -> Result<Option<ExecutionApprovalRecord>, PolicyError>;
}

/// No approval state: every lookup finds nothing (see the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoExecutionApprovals;

impl ExecutionApprovalLookup for NoExecutionApprovals {
    fn execution_approval(&self, _: &str) -> Result<Option<ExecutionApprovalRecord>, PolicyError> {
        Ok(None)
    }
}

/// The approvals the engine stored (§12): what `approval.grant_execution` accepted.
impl<S: Store, G: Signer, I: EventIdSource> ExecutionApprovalLookup for Engine<S, G, I> {
    fn execution_approval(
        &self,
        approval_id: &str,
    ) -> Result<Option<ExecutionApprovalRecord>, PolicyError> {
        let key = StoredApproval::key(approval_id);
        let Some(stored) = self.store().aggregate(&key).map_err(unavailable)? else {
            return Ok(None);
        };
        let approval = StoredApproval::from_stored(&stored.value)
            .ok_or_else(|| unavailable("unreadable Execution Approval"))?;
        ExecutionApprovalRecord::of(&approval).map(Some)
    }
}

/// Execution Approvals a host read through `Core.query` (kind `execution_approval`, by Approval
/// ID): the stored approval documents, as the engine answers them. Hosts that query their core
/// (the Python and Node packages) pass these next to [`LiveDocuments`].
#[derive(Clone, Debug, Default)]
pub struct ApprovalDocuments(pub Vec<Value>);

impl ExecutionApprovalLookup for ApprovalDocuments {
    fn execution_approval(
        &self,
        approval_id: &str,
    ) -> Result<Option<ExecutionApprovalRecord>, PolicyError> {
        let Some(document) = self
            .0
            .iter()
            .find(|d| d.get("approvalId").and_then(Value::as_str) == Some(approval_id))
        else {
            return Ok(None);
        };
        let approval = StoredApproval::from_value(document)
            .ok_or_else(|| unavailable("unreadable Execution Approval document"))?;
        ExecutionApprovalRecord::of(&approval).map(Some)
    }
}

impl ExecutionApprovalRecord {
    /// From a stored approval (`missionweaveprotocol_engine::approval`); its budget in ledger units.
    pub fn of(approval: &StoredApproval) -> Result<Self, PolicyError> {
        Ok(Self {
            approval_id: approval.approval_id.clone(),
            mission_id: approval.mission_id.clone(),
            group_id: approval.group_id.clone(),
            work_item_id: approval.work_item_id.clone(),
            ownership_epoch: approval.ownership_epoch,
            operations: approval.operations.clone(),
            resources: approval.resources.clone(),
            budget: approval.budget_limits().map_err(unavailable)?,
            expires_at: approval.expires_at,
        })
    }
}

fn unavailable(detail: impl ToString) -> PolicyError {
    PolicyError::new(
        WireCode::InternalError,
        "state_unavailable",
        format!("authoritative state unavailable: {}", detail.to_string()),
    )
}

/// Deepest account chain walked (Missions nest through WorkItems; real trees are shallow, this
/// bounds a corrupt cycle).
const MAX_ACCOUNT_DEPTH: usize = 256;

impl<S: Store, G: Signer, I: EventIdSource> PolicyStateReader for Engine<S, G, I> {
    fn session_epoch(&self, agent_id: &str) -> Result<Option<u64>, PolicyError> {
        Engine::session_epoch(self, agent_id).map_err(unavailable)
    }

    fn work_item(&self, work_item_id: &str) -> Result<Option<LiveWorkItem>, PolicyError> {
        let key = AggregateKey::new(WORK_ITEM_KIND, work_item_id);
        let Some(stored) = self.store().aggregate(&key).map_err(unavailable)? else {
            return Ok(None);
        };
        let item = WorkItem::from_json(&stored.value).map_err(unavailable)?;
        Ok(Some(LiveWorkItem::of(&item)))
    }

    fn mission(&self, mission_id: &str) -> Result<Option<LiveMission>, PolicyError> {
        Ok(Engine::mission(self, mission_id)
            .map_err(unavailable)?
            .map(|m| LiveMission {
                mission_id: m.mission_id().to_owned(),
                active: m.state() == MissionState::Active,
                permissions: None,
            }))
    }

    fn remaining_budget(&self, work_item_id: &str) -> Result<Option<Resources>, PolicyError> {
        let mut key = account_key(AccountKind::WorkItem, work_item_id);
        let mut remaining: Option<Resources> = None;
        for _ in 0..MAX_ACCOUNT_DEPTH {
            let Some(stored) = self.store().aggregate(&key).map_err(unavailable)? else {
                // The WorkItem's own account must exist; a missing ancestor is corruption.
                return match remaining {
                    None => Ok(None),
                    Some(_) => Err(unavailable("a budget account's parent is missing")),
                };
            };
            let account = BudgetAccount::from_stored(&stored.value)
                .ok_or_else(|| unavailable("unreadable budget account"))?;
            let here = account.remaining();
            remaining = Some(match remaining {
                None => here,
                Some(r) => r.min(&here),
            });
            match account.parent {
                None => return Ok(remaining),
                Some(parent) => key = account_key(parent.kind, &parent.id),
            }
        }
        Err(unavailable("the budget account chain is too deep"))
    }
}

/// Live state a host read through `Core.query` (one request's worth): the Session Epoch, the
/// WorkItem document, its Execution Lease document, the Mission document and the remaining
/// budgets (`budget_remaining` of the WorkItem and of its Mission).
#[derive(Clone, Debug, Default)]
pub struct LiveDocuments {
    /// `(agent, Session Epoch)`.
    pub session: Option<(String, u64)>,
    /// The WorkItem (`work-item.schema.json`).
    pub work_item: Option<Value>,
    /// Its Execution Lease (`lease.schema.json`), if it has one.
    pub execution_lease: Option<Value>,
    /// The Mission (`mission.schema.json`).
    pub mission: Option<Value>,
    /// Mission permissions, when the host's Mission model has them.
    pub mission_permissions: Option<Vec<String>>,
    /// Remaining budgets of the WorkItem and its ancestry (their minimum is used).
    pub remaining: Vec<Resources>,
}

fn text<'a>(document: &'a Value, name: &str) -> Result<&'a str, PolicyError> {
    document
        .get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| unavailable(format!("document member {name} is missing")))
}

impl PolicyStateReader for LiveDocuments {
    fn session_epoch(&self, agent_id: &str) -> Result<Option<u64>, PolicyError> {
        Ok(self
            .session
            .as_ref()
            .filter(|(agent, _)| agent == agent_id)
            .map(|(_, epoch)| *epoch))
    }

    fn work_item(&self, work_item_id: &str) -> Result<Option<LiveWorkItem>, PolicyError> {
        let Some(document) = &self.work_item else {
            return Ok(None);
        };
        if text(document, "workItemId")? != work_item_id {
            return Ok(None);
        }
        let state = WorkItemState::parse(text(document, "state")?)
            .ok_or_else(|| unavailable("unknown WorkItem state"))?;
        let owner = match document.get("owner") {
            None | Some(Value::Null) => None,
            Some(owner) => Some((
                text(owner, "agentId")?.to_owned(),
                owner
                    .get("ownershipEpoch")
                    .and_then(Value::as_number)
                    .and_then(|n| n.as_u64())
                    .ok_or_else(|| unavailable("owner.ownershipEpoch"))?,
            )),
        };
        let execution_lease = self
            .execution_lease
            .as_ref()
            .map(Lease::from_value)
            .transpose()
            .map_err(unavailable)?;
        Ok(Some(LiveWorkItem {
            work_item_id: work_item_id.to_owned(),
            mission_id: text(document, "missionId")?.to_owned(),
            group_id: text(document, "groupId")?.to_owned(),
            state,
            owner,
            execution_lease,
            contract: ContractScope::from_contract(
                document
                    .get("contract")
                    .ok_or_else(|| unavailable("contract"))?,
            ),
        }))
    }

    fn mission(&self, mission_id: &str) -> Result<Option<LiveMission>, PolicyError> {
        let Some(document) = &self.mission else {
            return Ok(None);
        };
        if text(document, "missionId")? != mission_id {
            return Ok(None);
        }
        Ok(Some(LiveMission {
            mission_id: mission_id.to_owned(),
            active: text(document, "state")? == MissionState::Active.as_str(),
            permissions: self.mission_permissions.clone(),
        }))
    }

    fn remaining_budget(&self, _: &str) -> Result<Option<Resources>, PolicyError> {
        Ok(self.remaining.iter().copied().reduce(|a, b| a.min(&b)))
    }
}
