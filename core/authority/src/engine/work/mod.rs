//! The WorkItem Commands (§10.2 rows 1–4, 7–14, Execution Lease renewal and dependency
//! insertion) wired into the engine: read, authorize the role, call the pure `work` decision,
//! plan the Events and writes.
//!
//! Check order (§15.1): Group and Mission (`GROUP_NOT_FOUND`), Mission non-terminal, role and
//! Coordinator Epoch fencing ([`authority`]), `expectedRevision` against the addressed
//! aggregate (§15.3), then the `work` decision (Ownership Epoch, state, owner, lease, payload).

mod authority;
mod decide;

pub(crate) use read::{INDEX_KIND, mission_items, read_item};
mod input;
pub(crate) mod offline;
pub(crate) mod plan;
mod read;
mod usage;

use crate::engine::{Decision, EngineError};
use crate::ingress::VerifiedCommand;
use crate::store::Store;
use crate::unix_millis::UnixMillis;

/// The Command kinds wired here.
pub const KINDS: [&str; 15] = [
    "work.propose",
    "work.authorize",
    "work.offer",
    "work.accept_offer",
    "work.start",
    "work.checkpoint",
    "work.block",
    "work.unblock",
    "work.submit",
    "work.accept_result",
    "work.fail",
    "work.cancel",
    "ext.missionweaveprotocol.core.work_execution_lease_renew",
    "ext.missionweaveprotocol.core.work_dependency_add",
    usage::RECORD_KIND,
];

/// Whether `kind` is a WorkItem Command the engine implements.
pub fn handles(kind: &str) -> bool {
    KINDS.contains(&kind)
}

/// Reads what a WorkItem Command needs and decides.
pub(crate) fn decide(
    store: &dyn Store,
    command: &VerifiedCommand,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let decision = decide::decide(store, command, now)?;
    // §9.1: a cited Delegation Grant and a `parentWorkItemId` link (`engine/delegation/`).
    crate::engine::delegation::after_work(store, command, decision, now)
}
