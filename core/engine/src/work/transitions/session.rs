//! Session replacement (§11.3, §6.3; digest 2.5 and 2.10): opening Session Epoch `n + 1` for an
//! Agent revokes that Agent's active leases and "return[s] affected WorkItems to `queued`
//! before the new runtime may start them under new leases".
//!
//! Per WorkItem the Agent owns with a live lease:
//!
//! | state | lease revoked | replacement (bound to the new Session Epoch, same Ownership Epoch) | next state |
//! | --- | --- | --- | --- |
//! | `active` | Execution Lease | ownership lease, start-by = its expiry (`replacement`) | `queued` |
//! | `queued` | ownership lease | ownership lease with the old expiry and start-by | `queued` |
//! | `blocked` | blocked lease | blocked lease with the old expiry | `blocked` |
//!
//! Ownership (and so the Ownership Epoch) survives: §11.3 returns the item to `queued`, not
//! `open` (digest 2.5, ambiguity on the ownership lease). Every lease binds its holder's Session
//! Epoch (§11.3), so a lease of the fenced session could never be used again: without a
//! replacement the new runtime could not start the item. A replacement never lasts longer than
//! the lease it replaces, except the `active` → `queued` one, which is new (as a checkpoint's).
//! A lapsed lease is no "active lease": the item is left alone.

use missionweaveprotocol::json::Value;

use super::{event, integer, timestamp, touch};
use crate::work::error::WorkError;
use crate::work::fencing::binding;
use crate::work::state::{LeaseGrant, Transition, WorkItem, WorkItemState};
use missionweaveprotocol_kernel::lease::{Lease, LeaseType, LeaseWindow};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The Event kind of one revoked lease (the reference runtime's `EXECUTION_LEASE_REVOKED`,
/// named like the renewal ext Command `…core.work_execution_lease_renew`; §15.2 allows
/// `ext.` Event kinds, and no core Event kind records a revocation).
pub const LEASE_REVOKED_EVENT: &str = "ext.missionweaveprotocol.core.work_execution_lease_revoked";

/// The closure reason recorded on the revoked lease.
pub const REVOCATION_REASON: &str = "agent session replaced";

/// Session replacement input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplaceSessionInput {
    /// The Agent whose session was replaced.
    pub agent_id: String,
    /// The newly issued Session Epoch (≥ 2).
    pub session_epoch: u64,
    /// The ownership lease granted when an `active` item returns to `queued`; for the other
    /// states only its `lease_id` is used (the old expiry is kept).
    pub replacement: LeaseGrant,
}

/// The transition of `item` when `input.agent_id`'s session is replaced at `now`, or `None`
/// when that Agent holds no live lease on it (nothing to revoke).
pub fn replace_session(
    item: &WorkItem,
    input: &ReplaceSessionInput,
    now: UnixMillis,
) -> Result<Option<Transition<WorkItem>>, WorkError> {
    let Some(owner) = item.owner.as_ref().filter(|o| o.agent_id == input.agent_id) else {
        return Ok(None);
    };
    let held = match item.state {
        WorkItemState::Active => item.execution_lease.as_ref(),
        WorkItemState::Queued | WorkItemState::Blocked => item.ownership_lease.as_ref(),
        _ => None,
    };
    let Some(revoked) =
        held.filter(|l| l.is_live(now) && l.binding().holder_agent_id == input.agent_id)
    else {
        return Ok(None);
    };
    let epoch = owner.ownership_epoch;
    let bind = binding(
        item,
        &input.agent_id,
        input.session_epoch,
        &input.replacement.lease_id,
    );
    let old = revoked.window();
    let kept = |expires_at: UnixMillis| LeaseWindow {
        issued_at: now,
        starts_at: now,
        expires_at,
    };
    let replacement = match revoked.lease_type() {
        LeaseType::Execution => Lease::ownership(
            bind,
            &item.work_item_id,
            epoch,
            input.replacement.expires_at,
            kept(input.replacement.expires_at),
        )?,
        LeaseType::Blocked => Lease::blocked(
            bind,
            &item.work_item_id,
            epoch,
            kept(old.expires_at),
            revoked.grace_expires_at(),
        )?,
        _ => {
            let start_by = revoked.start_by().unwrap_or(old.expires_at).max(now);
            Lease::ownership(
                bind,
                &item.work_item_id,
                epoch,
                start_by.min(old.expires_at),
                kept(old.expires_at),
            )?
        }
    };
    let revoked_id = revoked.lease_id().to_owned();
    let revoked_type = revoked.lease_type();
    let previous = item.state;
    let mut next = item.clone();
    let slot = if previous == WorkItemState::Active {
        &mut next.execution_lease
    } else {
        &mut next.ownership_lease
    };
    if let Some(lease) = slot {
        lease.revoke(now, REVOCATION_REASON)?;
    }
    next.ownership_lease = Some(replacement);
    if previous == WorkItemState::Active {
        next.state = WorkItemState::Queued;
    }
    touch(&mut next, now);
    let lease = next
        .ownership_lease
        .as_ref()
        .ok_or(WorkError::Document("ownershipLease"))?;
    let revoked_event = event(
        LEASE_REVOKED_EVENT,
        &next,
        [
            ("agentId", Value::string(input.agent_id.as_str())),
            ("sessionEpoch", integer(input.session_epoch)),
            ("ownershipEpoch", integer(epoch)),
            ("revokedLeaseId", Value::string(revoked_id.as_str())),
            ("revokedLeaseType", Value::string(revoked_type.as_str())),
            ("reason", Value::string(REVOCATION_REASON)),
            ("previousState", Value::string(previous.as_str())),
            ("nextState", Value::string(next.state.as_str())),
            ("leaseId", Value::string(lease.lease_id())),
            ("leaseType", Value::string(lease.lease_type().as_str())),
            ("leaseExpiresAt", timestamp(lease.window().expires_at)?),
        ],
    );
    Ok(Some(Transition {
        state: next,
        events: vec![revoked_event],
    }))
}
