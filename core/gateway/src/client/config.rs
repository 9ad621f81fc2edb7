//! What a client [`Session`](super::Session) is set up with.

use std::sync::Arc;

use missionweaveprotocol::{KeyRegistrySnapshot, Principal};

/// A client session's identity, trust anchors and bounds.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// The Agent this session authenticates as.
    pub agent_id: String,
    /// The Organization Registry every Event is verified against (six stages, §6.4).
    pub registry: Arc<KeyRegistrySnapshot>,
    /// The Group Authority: the one signer an Event may have (§15.2; `acceptedBy` alone names
    /// no one, the verified key's Principal must be this one).
    pub group_authority: Principal,
    /// Out-of-order Events buffered per Group (default 1024); beyond: dropped and reported as
    /// a gap (they come again on resubscription, §16).
    pub max_buffered_events: usize,
    /// Their bytes per Group (default 8 MiB).
    pub max_buffered_bytes: usize,
    /// Event IDs remembered for deduplication across Groups and positions (default 4096);
    /// within a Group, the Cursor already drops every older sequence.
    pub dedup_window: usize,
    /// Commands awaiting their Event or error (default 256).
    pub max_pending_commands: usize,
    /// When a pending Command is reported timed out (default 30 s; the host may resend the
    /// same bytes: §15.1 idempotency returns the original Event).
    pub command_timeout_ms: u64,
}

impl ClientConfig {
    /// A configuration with every default bound.
    pub fn new(
        agent_id: impl Into<String>,
        registry: Arc<KeyRegistrySnapshot>,
        group_authority: Principal,
    ) -> Self {
        Self {
            agent_id: agent_id.into(),
            registry,
            group_authority,
            max_buffered_events: 1024,
            max_buffered_bytes: 8 << 20,
            dedup_window: 4096,
            max_pending_commands: 256,
            command_timeout_ms: 30_000,
        }
    }
}
