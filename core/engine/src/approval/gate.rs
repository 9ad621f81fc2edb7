//! The `work.start` gate (§10.2 row 7 "plus execution approval when required", §12 "the
//! Authorization Service MUST withhold the token until the signed approval gate is satisfied").
//!
//! A WorkItem whose Work Contract requires execution approval starts only under an approval
//! that, at `now`:
//!
//! - names this WorkItem and its **current** Ownership Epoch (an approval granted to an earlier
//!   owner is fenced with that owner, §4.5);
//! - has not expired (`now < expiresAt`);
//! - covers every high-risk operation the Work Contract allows (`policy::
//!   HIGH_RISK_OPERATION_PREFIXES`: production deployment, payments, external communications,
//!   destructive changes), and the resources they are allowed on: starting hands the Worker an
//!   Execution Lease under which those operations can be requested, so the human must have
//!   approved them. Budget is enforced when a capability is requested (the grant is capped by
//!   the approval's ceiling, `policy::ExecutionAuthorization` step 7).
//!
//! Otherwise `work.start` is refused `APPROVAL_REQUIRED` with nothing applied. Approvals are
//! immutable, so nothing read here needs a commit-time check.

use super::record::{ExecutionApproval, WORK_ITEM_APPROVAL_KIND};
use crate::error::EngineError;
use crate::store::{AggregateKey, Store};
use crate::work::contract::ExecutionApproval as ExecutionApprovalRule;
use crate::work::scope::{ContractScope, is_high_risk_operation};
use crate::work::state::WorkItem;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// Whether the start gate of `item` is satisfied at `now`: the contract requires no approval
/// (nothing is read then), or a stored approval satisfies it.
pub(crate) fn start_gate(
    store: &dyn Store,
    item: &WorkItem,
    now: UnixMillis,
) -> Result<bool, EngineError> {
    if item.contract.execution_approval() == ExecutionApprovalRule::NotRequired {
        return Ok(true);
    }
    let Some(epoch) = item.owner.as_ref().map(|o| o.ownership_epoch) else {
        return Ok(false);
    };
    let (operations, resources) =
        high_risk_scope(&ContractScope::from_contract(item.contract.document()));
    let prefix = format!("{} ", item.work_item_id);
    for (id, stored) in store.list(WORK_ITEM_APPROVAL_KIND, &prefix)? {
        let approval =
            ExecutionApproval::from_stored(&stored.value).ok_or_else(|| EngineError::Corrupt {
                key: AggregateKey::new(WORK_ITEM_APPROVAL_KIND, id.as_str()),
                detail: "unreadable Execution Approval".to_owned(),
            })?;
        if approval.work_item_id == item.work_item_id
            && approval.mission_id == item.mission_id
            && approval.ownership_epoch == epoch
            && now < approval.expires_at
            && approval.covers(&operations, &resources)
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The high-risk operations the contract allows and the resources they are allowed on.
fn high_risk_scope(contract: &ContractScope) -> (Vec<String>, Vec<String>) {
    let mut operations: Vec<String> = Vec::new();
    let mut resources: Vec<String> = Vec::new();
    for grant in &contract.resources {
        let risky: Vec<&String> = grant
            .operations
            .iter()
            .filter(|o| is_high_risk_operation(o))
            .collect();
        if risky.is_empty() {
            continue;
        }
        if !resources.contains(&grant.resource) {
            resources.push(grant.resource.clone());
        }
        for op in risky {
            if !operations.contains(op) {
                operations.push(op.clone());
            }
        }
    }
    (operations, resources)
}
