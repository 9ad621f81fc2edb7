//! [`ExecutionAuthorization`]: the Authorization Service's front door (§12). It reads the live
//! authoritative state and issues a capability grant only when every rule holds, in this order:
//!
//! 1. the Worker's Session Epoch is current (`AUTH_STALE_SESSION`);
//! 2. the WorkItem exists (`GROUP_NOT_FOUND`, as every absent entity in this runtime), is
//!    `active` (`INVALID_STATE_TRANSITION`), is owned by the Worker (`AUTH_FORBIDDEN`) at the
//!    claimed Ownership Epoch (`WORK_STALE_OWNERSHIP`);
//! 3. it holds a live Execution Lease bound to the same Worker, Session and Ownership Epoch
//!    (`WORK_LEASE_EXPIRED` / the lease's fencing code);
//! 4. its Mission exists and is `active` (`INVALID_STATE_TRANSITION`);
//! 5. the requested tools, resources and operations are subsets of the Work Contract
//!    (`AUTH_FORBIDDEN`, §4 invariant 11: least privilege) and of the Mission permissions when
//!    the Mission has a list;
//! 6. the requested budget fits the authoritative remaining budget of the WorkItem and its
//!    ancestry (`BUDGET_EXCEEDED` naming the dimension; §12 "token budgets MUST be capped by
//!    both the contract and the authoritative remaining budget"); no budget = all that remains;
//! 7. a high-risk operation (`production.`, `payment.`, `external.send`, `destructive.`) or a
//!    contract whose `executionApproval` is not `not_required` needs a persisted Execution
//!    Approval for this WorkItem and Ownership Epoch, unexpired, covering the operations,
//!    resources and budget (`APPROVAL_REQUIRED` otherwise, §12). The grant then expires no
//!    later than the approval.

use missionweaveprotocol::WireCode;

use super::capability::{
    AuthorizationService, CapabilityBinding, CapabilityScope, IssuedCapabilityGrant,
};
use super::error::PolicyError;
use super::live_state::{ExecutionApprovalLookup, PolicyStateReader};
use missionweaveprotocol_engine::work::WorkItemState;
use missionweaveprotocol_engine::work::scope::is_high_risk_operation;
use missionweaveprotocol_kernel::resources::Resources;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// One request for a capability grant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExecutionRequest<'a> {
    /// Worker, Session Epoch, WorkItem and Ownership Epoch.
    pub binding: CapabilityBinding<'a>,
    /// Requested tools.
    pub tools: &'a [String],
    /// Requested resources.
    pub resources: &'a [String],
    /// Requested operations.
    pub operations: &'a [String],
    /// Requested budget; `None` = everything that remains.
    pub budget: Option<Resources>,
    /// The Execution Approval the request rests on.
    pub approval_id: Option<&'a str>,
    /// Requested lifetime (capped by the service's maximum, the lease and the approval).
    pub ttl_ms: u64,
}

/// Issues capability grants after checking live authoritative state (the reference's
/// `ExecutionAuthorization`).
#[derive(Clone, Debug)]
pub struct ExecutionAuthorization {
    authorization: AuthorizationService,
}

fn forbidden(reason: &'static str, what: &str, item: &str) -> PolicyError {
    PolicyError::new(
        WireCode::AuthForbidden,
        reason,
        format!("{what} {item:?} is not allowed"),
    )
    .with_text("item", item)
}

fn not_found(what: &'static str, id: &str) -> PolicyError {
    PolicyError::new(
        WireCode::GroupNotFound,
        "not_found",
        format!("{what} {id:?} does not exist"),
    )
    .with_text("entity", what)
}

impl ExecutionAuthorization {
    /// Wraps the service that signs the grants.
    pub fn new(authorization: AuthorizationService) -> Self {
        Self { authorization }
    }

    /// The signing service (to verify the grants it issued).
    pub fn authorization(&self) -> &AuthorizationService {
        &self.authorization
    }

    /// Checks `request` against `state` and `approvals` at `now`, then issues grant `grant_id`.
    pub fn issue<R, A>(
        &self,
        state: &R,
        approvals: &A,
        request: &ExecutionRequest<'_>,
        grant_id: &str,
        now: UnixMillis,
    ) -> Result<IssuedCapabilityGrant, PolicyError>
    where
        R: PolicyStateReader + ?Sized,
        A: ExecutionApprovalLookup + ?Sized,
    {
        let b = &request.binding;
        // 1. Session Epoch.
        match state.session_epoch(b.worker_id)? {
            Some(epoch) if epoch == b.session_epoch => {}
            current => {
                let mut e = PolicyError::new(
                    WireCode::AuthStaleSession,
                    "session_stale",
                    "the Worker's Session Epoch is not current",
                );
                if let Some(epoch) = current {
                    e = e.with_integer("current_session_epoch", epoch);
                }
                return Err(e);
            }
        }
        // 2. WorkItem, state, owner.
        let item = state
            .work_item(b.work_item_id)?
            .ok_or_else(|| not_found("work_item", b.work_item_id))?;
        if item.state != WorkItemState::Active {
            return Err(PolicyError::new(
                WireCode::InvalidStateTransition,
                "work_item_not_active",
                format!("the WorkItem is {}, not active", item.state.as_str()),
            )
            .with_text("state", item.state.as_str()));
        }
        match &item.owner {
            Some((owner, _)) if owner != b.worker_id => {
                return Err(PolicyError::new(
                    WireCode::AuthForbidden,
                    "not_owner",
                    "the Worker does not own the WorkItem",
                ));
            }
            None => {
                return Err(PolicyError::new(
                    WireCode::AuthForbidden,
                    "not_owner",
                    "the WorkItem has no owner",
                ));
            }
            Some((_, epoch)) if *epoch != b.ownership_epoch => {
                return Err(PolicyError::new(
                    WireCode::WorkStaleOwnership,
                    "ownership_stale",
                    "the Ownership Epoch is fenced",
                )
                .with_integer("current_ownership_epoch", *epoch));
            }
            Some(_) => {}
        }
        // 3. Live Execution Lease (checked in full again when the grant is sealed).
        let Some(lease) = &item.execution_lease else {
            return Err(PolicyError::new(
                WireCode::WorkLeaseExpired,
                "no_execution_lease",
                "the WorkItem holds no Execution Lease",
            ));
        };
        // 4. Mission.
        let mission = state
            .mission(&item.mission_id)?
            .ok_or_else(|| not_found("mission", &item.mission_id))?;
        if !mission.active {
            return Err(PolicyError::new(
                WireCode::InvalidStateTransition,
                "mission_not_active",
                "the Mission is not active",
            ));
        }
        // 5. Contract and Mission scope.
        let contract = &item.contract;
        for tool in request.tools {
            if !contract.tools.iter().any(|t| t == tool) {
                return Err(forbidden("tool_not_in_contract", "tool", tool));
            }
        }
        for resource in request.resources {
            if !contract.resources.iter().any(|g| &g.resource == resource) {
                return Err(forbidden("resource_not_in_contract", "resource", resource));
            }
        }
        for op in request.operations {
            // An operation must be granted on a requested resource, or on any contract
            // resource when the request names none.
            let allowed = contract.resources.iter().any(|g| {
                (request.resources.is_empty() || request.resources.contains(&g.resource))
                    && g.operations.iter().any(|o| o == op)
            });
            if !allowed {
                return Err(forbidden("operation_not_in_contract", "operation", op));
            }
        }
        if let Some(permissions) = &mission.permissions {
            for item in request
                .tools
                .iter()
                .chain(request.resources)
                .chain(request.operations)
            {
                if !permissions.contains(item) {
                    return Err(forbidden("mission_permission_exceeded", "permission", item));
                }
            }
        }
        // 6. Budget.
        let remaining = state
            .remaining_budget(b.work_item_id)?
            .ok_or_else(|| not_found("budget_account", b.work_item_id))?;
        let budget = request.budget.unwrap_or(remaining);
        if let Some(d) = budget.first_exceeding(&remaining) {
            return Err(PolicyError::budget_exceeded(
                d,
                format!(
                    "requested {} {} exceeds the remaining {}",
                    d.as_str(),
                    budget.get(d),
                    remaining.get(d)
                ),
            )
            .with_integer("remaining", remaining.get(d)));
        }
        // 7. Execution Approval.
        let high_risk = request.operations.iter().any(|o| is_high_risk_operation(o));
        let approval = if high_risk || contract.approval_required || request.approval_id.is_some() {
            let Some(id) = request.approval_id else {
                return Err(PolicyError::approval_required(
                    "approval_missing",
                    "this work needs an Execution Approval",
                ));
            };
            let Some(record) = approvals.execution_approval(id)? else {
                return Err(PolicyError::approval_required(
                    "approval_not_found",
                    "no accepted Execution Approval has this ID",
                )
                .with_text("approval_id", id));
            };
            if record.work_item_id != item.work_item_id
                || record.mission_id != item.mission_id
                || record.group_id != item.group_id
                || record.ownership_epoch != b.ownership_epoch
            {
                return Err(PolicyError::approval_required(
                    "approval_scope_mismatch",
                    "the Execution Approval is for another WorkItem or Ownership Epoch",
                ));
            }
            if now >= record.expires_at {
                return Err(PolicyError::approval_required(
                    "approval_expired",
                    "the Execution Approval has expired",
                ));
            }
            if let Some(op) = request
                .operations
                .iter()
                .find(|o| !record.operations.contains(o))
            {
                return Err(PolicyError::approval_required(
                    "approval_operation_not_covered",
                    format!("operation {op:?} is not approved"),
                ));
            }
            if let Some(r) = request
                .resources
                .iter()
                .find(|r| !record.resources.contains(r))
            {
                return Err(PolicyError::approval_required(
                    "approval_resource_not_covered",
                    format!("resource {r:?} is not approved"),
                ));
            }
            if let Some(ceiling) = record.budget
                && let Some(d) = budget.first_exceeding(&ceiling)
            {
                return Err(PolicyError::approval_required(
                    "approval_budget_exceeded",
                    format!("budget {} exceeds the approved ceiling", d.as_str()),
                )
                .with_text("dimension", d.as_str()));
            }
            Some(record)
        } else {
            None
        };
        let scope = CapabilityScope {
            tools: request.tools,
            resources: request.resources,
            operations: request.operations,
            budget,
        };
        self.authorization.issue_approved(
            b,
            lease,
            &scope,
            approval.as_ref().map(|r| r.approval_id.as_str()),
            approval.as_ref().map(|r| r.expires_at),
            request.ttl_ms,
            grant_id,
            now,
        )
    }
}
