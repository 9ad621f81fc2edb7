//! Ownership Epoch and lease fencing (§4.5, §11.3, §11.5).
//!
//! A lease-bound Command (renewal, checkpoint, block, submission, Worker-reported failure)
//! carries a [`WorkClaim`]. The Ownership Epoch is checked first, so that a fenced former owner
//! learns `WORK_STALE_OWNERSHIP` whatever state the item has moved on to; then the current
//! Execution Lease checks holder, Session Epoch, Lease ID and expiry through the `lease` module.

use super::error::WorkError;
use super::state::WorkItem;
use missionweaveprotocol_kernel::lease::{Lease, LeaseBinding, LeaseClaim, LeaseError, LeaseState};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// What a lease-bound Command claims.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkClaim {
    /// The acting Agent.
    pub agent_id: String,
    /// Its current Session Epoch (the engine checked it is current).
    pub session_epoch: u64,
    /// The Ownership Epoch the Command carries.
    pub ownership_epoch: u64,
    /// The Lease ID the Command cites.
    pub lease_id: String,
}

/// `WORK_STALE_OWNERSHIP` when the claim's Ownership Epoch is not the current one (§4.5: a stale
/// owner's Command must not change the item, whatever state it is in).
pub fn check_epoch(item: &WorkItem, claim: &WorkClaim) -> Result<(), WorkError> {
    match &item.owner {
        Some(owner) if owner.ownership_epoch != claim.ownership_epoch => {
            Err(WorkError::StaleOwnership {
                claimed: claim.ownership_epoch,
                current: owner.ownership_epoch,
            })
        }
        _ => Ok(()),
    }
}

/// The owner check: the claim's Agent owns the item under the current epoch.
pub fn check_owner(item: &WorkItem, claim: &WorkClaim) -> Result<(), WorkError> {
    let owner = item.owner.as_ref().ok_or(WorkError::NotOwner)?;
    check_epoch(item, claim)?;
    if owner.agent_id != claim.agent_id {
        return Err(WorkError::NotOwner);
    }
    Ok(())
}

fn lease_claim(claim: &WorkClaim) -> LeaseClaim<'_> {
    LeaseClaim {
        agent_id: &claim.agent_id,
        lease_id: &claim.lease_id,
        session_epoch: claim.session_epoch,
        ownership_epoch: Some(claim.ownership_epoch),
        coordinator_epoch: None,
    }
}

/// The claim is the owner's and cites the live current Execution Lease (§11.3).
pub fn check_execution_claim(
    item: &WorkItem,
    claim: &WorkClaim,
    now: UnixMillis,
) -> Result<(), WorkError> {
    check_owner(item, claim)?;
    let lease = item
        .execution_lease
        .as_ref()
        .ok_or(WorkError::Lease(LeaseError::StaleLease))?;
    lease.check_claim(&lease_claim(claim), now)?;
    Ok(())
}

/// Whether the owner still holds a live ownership, blocked or Execution Lease at `now`.
pub fn owner_is_live(item: &WorkItem, now: UnixMillis) -> bool {
    item.owner.is_some()
        && [&item.ownership_lease, &item.execution_lease]
            .into_iter()
            .flatten()
            .any(|lease| lease.is_live(now))
}

/// Closes every still-active lease: a lapsed one is recorded `expired` (§11.3 "timeout expires
/// it"), a live one is closed with `live_state` (`revoked` or `released`) and `reason`.
pub fn close_leases(
    item: &mut WorkItem,
    now: UnixMillis,
    live_state: LeaseState,
    reason: &str,
) -> Result<(), WorkError> {
    for lease in [&mut item.ownership_lease, &mut item.execution_lease]
        .into_iter()
        .flatten()
    {
        close_lease(lease, now, live_state, reason)?;
    }
    Ok(())
}

/// Closes one lease if it is still recorded active (see [`close_leases`]).
pub fn close_lease(
    lease: &mut Lease,
    now: UnixMillis,
    live_state: LeaseState,
    reason: &str,
) -> Result<(), WorkError> {
    if lease.state() != LeaseState::Active {
        return Ok(());
    }
    if lease.state_at(now) == LeaseState::Expired {
        lease.expire(now, "lease lapsed")?;
    } else {
        lease.close(live_state, now, reason)?;
    }
    Ok(())
}

/// The binding of a new lease on `item` for `agent_id` (§11.3: bound to Agent, Session Epoch,
/// WorkItem and Ownership Epoch).
pub fn binding(
    item: &WorkItem,
    agent_id: &str,
    session_epoch: u64,
    lease_id: &str,
) -> LeaseBinding {
    LeaseBinding {
        lease_id: lease_id.to_owned(),
        mission_id: item.mission_id.clone(),
        group_id: item.group_id.clone(),
        holder_agent_id: agent_id.to_owned(),
        session_epoch,
    }
}
