//! The WorkItem Command kinds the engine implements and their entry: read, decide, then the
//! Delegation Grant and `parentWorkItemId` checks (§9.1).

use crate::decision::Decision;
use crate::error::EngineError;
use crate::ingress::VerifiedCommand;
use crate::store::Store;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

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
    super::usage::RECORD_KIND,
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
    let decision = super::decide::decide(store, command, now)?;
    // §9.1: a cited Delegation Grant and a `parentWorkItemId` link (`delegation/`).
    crate::delegation::use_grant::after_work(store, command, decision, now)
}
