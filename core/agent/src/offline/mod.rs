//! Bounded offline execution, the Worker's side (§11.5, digest 2.17; reference `offline.py`).
//!
//! While the Group service is unreachable a Worker may continue *already-active reversible*
//! computation until a grace deadline, within [`OfflineLimits`]. [`OfflineExecutionPolicy`]
//! buffers each Command with the critical extension [`OFFLINE_EXECUTION_EXTENSION`] (its data an
//! [`OfflineProgressBinding`]), re-signs it with the Agent's key and queues it in an
//! [`OfflineOutbox`] (idempotent per Action ID). On reconnect [`rebase_offline_command`] keeps the
//! binding but rebases `issuedAt`, Session Epoch and Membership Epoch onto the current session
//! and re-signs.
//!
//! The rules both sides share (the binding, the limits, the reversible kinds) are
//! [`missionweaveprotocol_kernel::offline`], re-exported here; the Core's reconciliation is
//! `missionweaveprotocol_engine::work::offline`.

mod outbox;
mod policy;
mod rebase;

pub use missionweaveprotocol_kernel::offline::{
    OFFLINE_EXECUTION_EXTENSION, OFFLINE_EXECUTION_EXTENSION_VERSION, OfflineError, OfflineLimits,
    OfflineProgressBinding, REVERSIBLE_KINDS, is_reversible, offline_binding_of,
};
pub use outbox::{InMemoryOutbox, OfflineOutbox, OutboxError};
pub use policy::{OfflineAssignment, OfflineExecutionPolicy};
pub use rebase::{RebaseInput, rebase_offline_command};
