//! Rows 7–10 and Execution Lease renewal: `work.start`, `work.checkpoint`, `work.block`,
//! `work.unblock`, and the renewal ext Command (`work.progressed`).
//!
//! Leases (§11.3, digest 2.5): `work.start` releases the ownership lease and opens an Execution
//! Lease (it now carries ownership); checkpoint and block release the Execution Lease and open a
//! bounded ownership or blocked lease under the same Ownership Epoch. Every lease-bound Command
//! is fenced by [`crate::work::fencing`] first.

use missionweaveprotocol::json::Value;

use super::{check_reason, event, integer, require_state, timestamp, touch};
use crate::work::contract::ExecutionApproval;
use crate::work::dependencies::DependencyGraph;
use crate::work::error::WorkError;
use crate::work::fencing::{WorkClaim, binding, check_epoch, check_execution_claim, check_owner};
use crate::work::state::{LeaseGrant, Transition, WorkItem, WorkItemState};
use missionweaveprotocol_kernel::lease::{Lease, LeaseClaim, LeaseError, LeaseState, LeaseWindow};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

fn window(now: UnixMillis, grant: &LeaseGrant) -> LeaseWindow {
    LeaseWindow {
        issued_at: now,
        starts_at: now,
        expires_at: grant.expires_at,
    }
}

/// Members of a structured progress report (§11.4, `work-item.schema.json` `progress`).
const PROGRESS: [&str; 6] = [
    "currentPhase",
    "completedMilestones",
    "nextCheckpoint",
    "blockers",
    "updatedCompletionEstimate",
    "evidenceIds",
];

fn check_progress(report: &Value) -> Result<(), WorkError> {
    let ok = report
        .as_object()
        .is_some_and(|r| PROGRESS.into_iter().all(|m| r.contains(m)));
    if ok {
        Ok(())
    } else {
        Err(WorkError::InvalidInput(
            "checkpoint",
            "progress reports are structured (§11.4)",
        ))
    }
}

/// `work.start` input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StartInput {
    /// The owner's claim; `lease_id` cites its ownership lease.
    pub claim: WorkClaim,
    /// The Execution Lease to open.
    pub execution_lease: LeaseGrant,
    /// Whether the execution-approval gate (row 6, §12) is satisfied.
    pub execution_approved: bool,
}

/// Row 7: `queued` → `active`. Needs valid ownership (epoch, live ownership lease, start-by),
/// the approval gate when the contract requires it (`APPROVAL_REQUIRED`), and every dependency
/// `verified` (§10.4). `state_of` reports the dependencies' states.
pub fn start(
    item: &WorkItem,
    input: StartInput,
    state_of: impl Fn(&str) -> Option<WorkItemState>,
    now: UnixMillis,
) -> Result<Transition<WorkItem>, WorkError> {
    check_epoch(item, &input.claim)?;
    require_state(item, "work.start", &[WorkItemState::Queued])?;
    check_owner(item, &input.claim)?;
    let ownership = item
        .ownership_lease
        .as_ref()
        .ok_or(WorkError::Lease(LeaseError::StaleLease))?;
    ownership.check_claim(
        &LeaseClaim {
            agent_id: &input.claim.agent_id,
            lease_id: &input.claim.lease_id,
            session_epoch: input.claim.session_epoch,
            ownership_epoch: Some(input.claim.ownership_epoch),
            coordinator_epoch: None,
        },
        now,
    )?;
    ownership.check_start_by(now)?;
    if item.contract.execution_approval() != ExecutionApproval::NotRequired
        && !input.execution_approved
    {
        return Err(WorkError::ApprovalRequired);
    }
    DependencyGraph::check_ready(
        item.contract.dependencies().iter().map(String::as_str),
        state_of,
    )?;
    let epoch = input.claim.ownership_epoch;
    let lease = Lease::execution(
        binding(
            item,
            &input.claim.agent_id,
            input.claim.session_epoch,
            &input.execution_lease.lease_id,
        ),
        &item.work_item_id,
        epoch,
        window(now, &input.execution_lease),
    )?;
    let mut next = item.clone();
    if let Some(ownership) = &mut next.ownership_lease {
        ownership.release(now, "work started")?;
    }
    next.execution_lease = Some(lease);
    next.state = WorkItemState::Active;
    touch(&mut next, now);
    let started = event(
        "work.started",
        &next,
        [
            ("agentId", Value::string(input.claim.agent_id.as_str())),
            ("ownershipEpoch", integer(epoch)),
            (
                "executionLeaseId",
                Value::string(input.execution_lease.lease_id.as_str()),
            ),
            (
                "leaseExpiresAt",
                timestamp(input.execution_lease.expires_at)?,
            ),
        ],
    );
    Ok(Transition {
        state: next,
        events: vec![started],
    })
}

/// Execution Lease renewal input (ext Command, Event `work.progressed`).
#[derive(Clone, Debug, PartialEq)]
pub struct RenewInput {
    /// The owner's claim citing the current Execution Lease.
    pub claim: WorkClaim,
    /// The new expiry (strictly extending).
    pub expires_at: UnixMillis,
    /// An optional structured progress report (§11.4).
    pub progress: Option<Value>,
}

/// `active` → `active`: renews the current Execution Lease (digest 2.5).
pub fn renew_execution_lease(
    item: &WorkItem,
    input: RenewInput,
    now: UnixMillis,
) -> Result<Transition<WorkItem>, WorkError> {
    check_epoch(item, &input.claim)?;
    require_state(item, "work.progressed", &[WorkItemState::Active])?;
    check_execution_claim(item, &input.claim, now)?;
    if let Some(report) = &input.progress {
        check_progress(report)?;
    }
    let mut next = item.clone();
    let lease = next
        .execution_lease
        .as_mut()
        .ok_or(WorkError::Lease(LeaseError::StaleLease))?;
    lease.renew(now, input.expires_at)?;
    let renewals = lease.renewal_count();
    if input.progress.is_some() {
        next.progress = input.progress.clone();
    }
    touch(&mut next, now);
    let mut progressed = event(
        "work.progressed",
        &next,
        [
            (
                "executionLeaseId",
                Value::string(input.claim.lease_id.as_str()),
            ),
            ("renewalCount", integer(renewals)),
            ("leaseExpiresAt", timestamp(input.expires_at)?),
        ],
    );
    if let (Some(report), Value::Object(payload)) = (input.progress, &mut progressed.payload) {
        payload.insert("progress", report);
    }
    Ok(Transition {
        state: next,
        events: vec![progressed],
    })
}

/// `work.checkpoint` input.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckpointInput {
    /// The owner's claim citing the current Execution Lease.
    pub claim: WorkClaim,
    /// The structured progress report (§11.4).
    pub checkpoint: Value,
    /// The bounded ownership lease retained while queued; start-by = its expiry.
    pub ownership_lease: LeaseGrant,
}

/// Row 8: `active` → `queued`. Releases the Execution Lease, retains a bounded ownership lease.
pub fn checkpoint(
    item: &WorkItem,
    input: CheckpointInput,
    now: UnixMillis,
) -> Result<Transition<WorkItem>, WorkError> {
    check_epoch(item, &input.claim)?;
    require_state(item, "work.checkpoint", &[WorkItemState::Active])?;
    check_execution_claim(item, &input.claim, now)?;
    check_progress(&input.checkpoint)?;
    let epoch = input.claim.ownership_epoch;
    let ownership = Lease::ownership(
        binding(
            item,
            &input.claim.agent_id,
            input.claim.session_epoch,
            &input.ownership_lease.lease_id,
        ),
        &item.work_item_id,
        epoch,
        input.ownership_lease.expires_at,
        window(now, &input.ownership_lease),
    )?;
    let mut next = item.clone();
    if let Some(lease) = &mut next.execution_lease {
        lease.release(now, "work checkpointed")?;
    }
    next.ownership_lease = Some(ownership);
    next.progress = Some(input.checkpoint.clone());
    next.state = WorkItemState::Queued;
    touch(&mut next, now);
    let checkpointed = event(
        "work.checkpointed",
        &next,
        [
            (
                "executionLeaseId",
                Value::string(input.claim.lease_id.as_str()),
            ),
            (
                "ownershipLeaseId",
                Value::string(input.ownership_lease.lease_id.as_str()),
            ),
            ("resumeBy", timestamp(input.ownership_lease.expires_at)?),
            ("checkpoint", input.checkpoint),
        ],
    );
    Ok(Transition {
        state: next,
        events: vec![checkpointed],
    })
}

/// `work.block` input.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockInput {
    /// The owner's claim citing the current Execution Lease.
    pub claim: WorkClaim,
    /// The required resolution (§11.4).
    pub reason: String,
    /// The checkpoint taken before blocking (§11.4).
    pub checkpoint: Value,
    /// The bounded blocked lease.
    pub blocked_lease: LeaseGrant,
}

/// Row 9: `active` → `blocked`. Checkpoint, release the execution slot, bounded blocked lease.
pub fn block(
    item: &WorkItem,
    input: BlockInput,
    now: UnixMillis,
) -> Result<Transition<WorkItem>, WorkError> {
    check_epoch(item, &input.claim)?;
    require_state(item, "work.block", &[WorkItemState::Active])?;
    check_execution_claim(item, &input.claim, now)?;
    check_reason("reason", &input.reason)?;
    check_progress(&input.checkpoint)?;
    let blocked = Lease::blocked(
        binding(
            item,
            &input.claim.agent_id,
            input.claim.session_epoch,
            &input.blocked_lease.lease_id,
        ),
        &item.work_item_id,
        input.claim.ownership_epoch,
        window(now, &input.blocked_lease),
        None,
    )?;
    let mut next = item.clone();
    if let Some(lease) = &mut next.execution_lease {
        lease.release(now, "work blocked")?;
    }
    next.ownership_lease = Some(blocked);
    next.progress = Some(input.checkpoint.clone());
    next.blocker = Some(input.reason.clone());
    next.state = WorkItemState::Blocked;
    touch(&mut next, now);
    let blocked_event = event(
        "work.blocked",
        &next,
        [
            ("reason", Value::string(input.reason.as_str())),
            (
                "executionLeaseId",
                Value::string(input.claim.lease_id.as_str()),
            ),
            (
                "blockedLeaseId",
                Value::string(input.blocked_lease.lease_id.as_str()),
            ),
            ("leaseExpiresAt", timestamp(input.blocked_lease.expires_at)?),
            ("checkpoint", input.checkpoint),
        ],
    );
    Ok(Transition {
        state: next,
        events: vec![blocked_event],
    })
}

/// `work.unblock` input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnblockInput {
    /// The ownership lease to grant when the blocked lease is still live (→ `queued`).
    pub ownership_lease: Option<LeaseGrant>,
}

/// Row 10: `blocked` → `queued` while the blocked lease is live (a new bounded ownership lease,
/// same epoch), or → `open` after it lapsed (the owner is fenced; re-offer with a higher epoch).
pub fn unblock(
    item: &WorkItem,
    input: UnblockInput,
    now: UnixMillis,
) -> Result<Transition<WorkItem>, WorkError> {
    require_state(item, "work.unblock", &[WorkItemState::Blocked])?;
    let blocked = item
        .ownership_lease
        .as_ref()
        .ok_or(WorkError::Document("ownershipLease"))?;
    let owner = item.owner.as_ref().ok_or(WorkError::Document("owner"))?;
    let mut next = item.clone();
    let live = blocked.is_live(now);
    if live {
        let grant = input.ownership_lease.ok_or(WorkError::InvalidInput(
            "ownershipLease",
            "required while the blocked lease is live",
        ))?;
        let ownership = Lease::ownership(
            binding(
                item,
                &owner.agent_id,
                blocked.binding().session_epoch,
                &grant.lease_id,
            ),
            &item.work_item_id,
            owner.ownership_epoch,
            grant.expires_at,
            window(now, &grant),
        )?;
        if let Some(lease) = &mut next.ownership_lease {
            lease.release(now, "work unblocked")?;
        }
        next.ownership_lease = Some(ownership);
        next.state = WorkItemState::Queued;
    } else {
        if let Some(lease) = &mut next.ownership_lease {
            crate::work::fencing::close_lease(lease, now, LeaseState::Revoked, "work unblocked")?;
        }
        next.state = WorkItemState::Open;
    }
    next.blocker = None;
    touch(&mut next, now);
    let mut unblocked = event(
        "work.unblocked",
        &next,
        [
            ("nextState", Value::string(next.state.as_str())),
            ("ownershipEpoch", integer(owner.ownership_epoch)),
        ],
    );
    if let (true, Some(lease), Value::Object(payload)) =
        (live, &next.ownership_lease, &mut unblocked.payload)
    {
        payload.insert("ownershipLeaseId", Value::string(lease.lease_id()));
        // Additive: the new lease's expiry (= its start-by), so that a replica rebuilds the
        // lease from the Event alone (`work::projection`).
        payload.insert("leaseExpiresAt", timestamp(lease.window().expires_at)?);
    }
    Ok(Transition {
        state: next,
        events: vec![unblocked],
    })
}
