//! Bounded offline execution (§11.5, digest 2.17): the rules both sides agree on.
//!
//! While the Group service is unreachable a Worker may continue *already-active reversible*
//! computation (only `message.post` and `work.checkpoint`, [`REVERSIBLE_KINDS`]) until a grace
//! deadline, within [`OfflineLimits`]. Each buffered Command carries the critical extension
//! [`OFFLINE_EXECUTION_EXTENSION`] whose data is an [`OfflineProgressBinding`] (Agent, Group,
//! WorkItem, historical Session/Ownership Epochs and Execution Lease, disconnect/buffer/grace/
//! lease-expiry instants, usage delta).
//!
//! The Worker's side (buffering, the outbox, rebasing on reconnect) is
//! `missionweaveprotocol_agent::offline`; the Core's reconciliation of a rebased Command against
//! authoritative state is `missionweaveprotocol_engine::work::offline`.

mod binding;
mod error;
mod limits;

pub use binding::{OfflineProgressBinding, offline_binding_of};
pub use error::OfflineError;
pub use limits::OfflineLimits;

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
