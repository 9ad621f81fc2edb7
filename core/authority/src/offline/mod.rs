//! Bounded offline execution (§11.5, digest 2.17; reference `offline.py`).
//!
//! **Agent side.** While the Group service is unreachable a Worker may continue
//! *already-active reversible* computation (only `message.post` and `work.checkpoint`,
//! [`REVERSIBLE_KINDS`]) until a grace deadline, within [`OfflineLimits`]. Each buffered
//! Command carries the critical extension [`OFFLINE_EXECUTION_EXTENSION`] whose data is an
//! [`OfflineProgressBinding`] (Agent, Group, WorkItem, historical Session/Ownership Epochs and
//! Execution Lease, disconnect/buffer/grace/lease-expiry instants, usage delta), is re-signed
//! with the Agent's key and queued in an [`OfflineOutbox`] (idempotent per Action ID).
//! On reconnect [`rebase_offline_command`] keeps the binding but rebases `issuedAt`, Session
//! Epoch and Membership Epoch onto the current session and re-signs.
//!
//! **Core side.** [`reconcile`] validates a rebased Command's binding against authoritative
//! state (window, lease closure, owner, epochs, Conversation, the Core's own bounds), then
//! charges the offline delta to the WorkItem and its budget ancestry with a
//! `…resource_usage_recorded` Event *before* the checkpoint, in the same transaction; any
//! failure refuses the whole Command with a typed §19 error and applies nothing.

mod binding;
mod error;
mod outbox;
mod policy;
mod rebase;
pub mod reconcile;

pub use binding::OfflineProgressBinding;
pub use error::OfflineError;
pub use outbox::{InMemoryOutbox, OfflineOutbox, OutboxError};
pub use policy::{OfflineAssignment, OfflineExecutionPolicy, OfflineLimits};
pub use rebase::{RebaseInput, offline_binding_of, rebase_offline_command};
pub use reconcile::DEFAULT_CORE_LIMITS;

/// The critical extension every buffered Command carries (§11.5).
pub const OFFLINE_EXECUTION_EXTENSION: &str =
    "urn:missionweaveprotocol:extension:bounded-offline-execution";
/// Its version.
pub const OFFLINE_EXECUTION_EXTENSION_VERSION: &str = "0.1.0";
/// The only Command kinds a Worker may buffer while disconnected (reversible progress).
pub const REVERSIBLE_KINDS: [&str; 2] = ["message.post", "work.checkpoint"];

/// Whether `kind` may be buffered offline.
pub fn is_reversible(kind: &str) -> bool {
    REVERSIBLE_KINDS.contains(&kind)
}
