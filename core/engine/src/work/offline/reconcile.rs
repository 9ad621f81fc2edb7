//! The Group Authority's side of §11.5: is a rebased offline Command's binding acceptable?
//!
//! [`check_binding`] is pure: it compares the binding with the rebased Command's envelope,
//! the Core's own [`OfflineLimits`], the WorkItem's current owner and the historical Execution
//! Lease the binding names. The engine (`work/offline/mod.rs`) reads those from the store,
//! calls this, and only then charges the delta and applies the checkpoint, all in one
//! transaction (§11.5 "Reconciliation and resource charge form one transaction").
//!
//! Rules, each refusing the whole Command:
//! - the binding names the Command's own Agent, Group and WorkItem, and a Session Epoch not
//!   above the Command's (`INVALID_COMMAND`, `outside_assignment` / `invalid_binding`);
//! - the Command stays in the WorkItem Conversation (`INVALID_COMMAND`);
//! - the window is ordered, ends no later than the Core's grace bound, and the progress was
//!   buffered no later than the reconciliation (`WORK_LEASE_EXPIRED`, `outside_grace`);
//! - the WorkItem is still owned by that Agent under that Ownership Epoch
//!   (`WORK_STALE_OWNERSHIP`, "for a changed owner");
//! - the historical lease exists for that WorkItem, Agent, Session and Ownership Epochs, its
//!   expiry is not understated by the binding (`INVALID_COMMAND`, forged binding), and it had
//!   neither lapsed nor closed when the progress was buffered (`WORK_LEASE_EXPIRED`, "after
//!   lease closure");
//! - at most `max_actions` Commands and `max_usage` in total reconcile per historical lease
//!   (`RATE_LIMITED`, `BUDGET_EXCEEDED`).

use crate::work::state::WorkItem;
use missionweaveprotocol_kernel::lease::Lease;
use missionweaveprotocol_kernel::offline::{OfflineError, OfflineLimits, OfflineProgressBinding};
use missionweaveprotocol_kernel::resources::{MAX_SAFE_INTEGER, Resources};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The Core's bounds when the engine is not configured otherwise: a one-hour window, 64
/// reconciled Commands and no usage cap beyond the budget ledger per historical lease.
pub const DEFAULT_CORE_LIMITS: OfflineLimits = OfflineLimits {
    max_disconnect_grace_ms: 3_600_000,
    max_actions: 64,
    max_usage: Resources::new(
        MAX_SAFE_INTEGER,
        MAX_SAFE_INTEGER,
        MAX_SAFE_INTEGER,
        MAX_SAFE_INTEGER,
        MAX_SAFE_INTEGER,
        0,
    ),
};

/// What the rebased Command says about itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RebasedEnvelope<'a> {
    /// `actor.id` (an Agent).
    pub agent_id: &'a str,
    /// `groupId`.
    pub group_id: &'a str,
    /// The addressed WorkItem (envelope or payload).
    pub work_item_id: &'a str,
    /// `conversationId`, if present.
    pub conversation_id: Option<&'a str>,
    /// The current `sessionEpoch`.
    pub session_epoch: u64,
}

/// What earlier reconciliations of the same historical lease already used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reconciled {
    /// Commands reconciled.
    pub actions: u32,
    /// Their total usage.
    pub usage: Resources,
}

/// Checks `binding` for reconciliation at `now` (see the module documentation); returns the
/// totals after this Command.
pub fn check_binding(
    binding: &OfflineProgressBinding,
    envelope: &RebasedEnvelope<'_>,
    item: &WorkItem,
    historical_lease: Option<&Lease>,
    before: Reconciled,
    limits: &OfflineLimits,
    now: UnixMillis,
) -> Result<Reconciled, OfflineError> {
    binding.validate()?;
    if binding.agent_id != envelope.agent_id {
        return Err(OfflineError::OutsideAssignment { member: "agentId" });
    }
    if binding.group_id != envelope.group_id || binding.group_id != item.group_id {
        return Err(OfflineError::OutsideAssignment { member: "groupId" });
    }
    if binding.work_item_id != envelope.work_item_id || binding.work_item_id != item.work_item_id {
        return Err(OfflineError::OutsideAssignment {
            member: "workItemId",
        });
    }
    if envelope
        .conversation_id
        .is_some_and(|c| c != item.conversation_id)
    {
        return Err(OfflineError::OutsideAssignment {
            member: "conversationId",
        });
    }
    if binding.session_epoch > envelope.session_epoch {
        return Err(OfflineError::binding(
            "the historical Session Epoch is above the current one",
        ));
    }
    // The window: bounded by the Core's grace, and not in the future.
    let window = binding.grace_deadline.millis_since(binding.disconnected_at);
    if window > limits.max_disconnect_grace_ms || binding.buffered_at > now {
        return Err(OfflineError::OutsideGrace {
            at: binding.buffered_at,
            grace_deadline: binding
                .disconnected_at
                .saturating_add_ms(limits.max_disconnect_grace_ms),
        });
    }
    // "for a changed owner"
    let current = item.owner.as_ref().map_or(0, |o| o.ownership_epoch);
    let same_owner = item.owner.as_ref().is_some_and(|o| {
        o.agent_id == binding.agent_id && o.ownership_epoch == binding.ownership_epoch
    });
    if !same_owner {
        return Err(OfflineError::StaleOwnership {
            claimed: binding.ownership_epoch,
            current,
        });
    }
    // The historical lease, as the authority recorded it.
    let lease = historical_lease.ok_or(OfflineError::LeaseClosed { reason: "unknown" })?;
    let b = lease.binding();
    let matches = lease.lease_id() == binding.execution_lease_id
        && lease.work_item_id() == Some(binding.work_item_id.as_str())
        && b.holder_agent_id == binding.agent_id
        && b.session_epoch == binding.session_epoch
        && lease.ownership_epoch() == Some(binding.ownership_epoch);
    if !matches {
        return Err(OfflineError::binding(
            "the binding does not match the historical Execution Lease",
        ));
    }
    let window = lease.window();
    if binding.execution_lease_expires_at > window.expires_at {
        return Err(OfflineError::binding(
            "the binding overstates the historical lease expiry",
        ));
    }
    if binding.disconnected_at < window.starts_at {
        return Err(OfflineError::binding(
            "the disconnect precedes the historical lease",
        ));
    }
    if binding.buffered_at >= window.expires_at {
        return Err(OfflineError::LeaseClosed { reason: "expired" });
    }
    if lease
        .closed_at()
        .is_some_and(|closed| binding.buffered_at >= closed)
    {
        return Err(OfflineError::LeaseClosed { reason: "closed" });
    }
    // The Core's per-lease bounds.
    if before.actions >= limits.max_actions {
        return Err(OfflineError::TooManyActions {
            max_actions: limits.max_actions,
        });
    }
    let usage = before
        .usage
        .checked_add(&binding.resource_usage_delta)
        .map_err(OfflineError::UsageExceeded)?;
    if let Some(d) = usage.first_exceeding(&limits.max_usage) {
        return Err(OfflineError::UsageExceeded(d));
    }
    Ok(Reconciled {
        actions: before.actions + 1,
        usage,
    })
}
