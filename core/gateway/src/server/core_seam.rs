//! The narrow seam between a connection and the authoritative Core: exactly what the
//! connection machine needs, nothing more. [`CoreGateway`](super::CoreGateway) implements it
//! over `service::Core`; tests or other hosts may implement it over anything else.
//!
//! Every method may do store I/O through the Core (the store seam is synchronous): hosts call
//! the connection machine from a context that may block (`docs/store.md`).

use core::fmt;

use missionweaveprotocol::Principal;
use missionweaveprotocol_agent::auth::AgentKeyRegistry;
use missionweaveprotocol_engine::Performed;
use missionweaveprotocol_engine::ingress::VerifiedCommand;
use missionweaveprotocol_engine::service::CoreError;
use missionweaveprotocol_engine::store::ReplayPage;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// What an Agent may see of a Group it holds a live Membership in (§8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Visibility {
    /// `visibilityStartSequence`: the first sequence the Agent may see (0 and 1: all).
    pub start_sequence: u64,
}

impl Visibility {
    /// The replay position a subscription starts after (§8: a late member gets no history
    /// from before its visibility): `max(after, start − 1)`.
    pub fn start_after(&self, after: u64) -> u64 {
        after.max(self.start_sequence.saturating_sub(1))
    }
}

/// One read of a Group's log after a cursor (§16).
#[derive(Debug, Clone, PartialEq)]
pub enum GroupPage {
    /// Events after the cursor, in sequence order.
    Events(ReplayPage),
    /// `CURSOR_TOO_OLD`: the cursor lies before the online log; the signed snapshot to
    /// restore, when the Group was archived with one.
    CursorTooOld {
        /// `snapshotArtifactHash`.
        snapshot_artifact_hash: Option<String>,
    },
}

/// A Session Epoch opened through the Core (§6.3).
#[derive(Debug, Clone, PartialEq)]
pub struct OpenedSession {
    /// The new epoch (fences every earlier session of the Agent).
    pub epoch: u64,
    /// The `session_open` result: its `…session_opened` Event and the Execution Lease
    /// revocations it appended in other Groups (§11.3), whose heads moved.
    pub performed: Performed,
}

/// The Core as a connection sees it.
pub trait GatewayCore: fmt::Debug + Send + Sync {
    /// Ingress: six-stage verification of the exact Command bytes (Command profile), freshness
    /// and the Organization's authorizer (§6.4).
    fn verify(&self, command: &[u8], now: UnixMillis) -> Result<VerifiedCommand, CoreError>;

    /// Applies a verified Command: its Events, or a refusal with nothing applied (§15.1).
    fn perform(&self, command: &VerifiedCommand, now: UnixMillis) -> Result<Performed, CoreError>;

    /// Opens the Agent's next Session Epoch with the Group Authority's bootstrap Command
    /// `ext.missionweaveprotocol.identity.session_open` under `action_id` (§6.3).
    fn open_session(
        &self,
        agent_id: &str,
        action_id: &str,
        now: UnixMillis,
    ) -> Result<OpenedSession, CoreError>;

    /// Up to `limit` (1–10 000) Events of `group` after sequence `after`.
    fn read_page(&self, group: &str, after: u64, limit: usize) -> Result<GroupPage, CoreError>;

    /// Up to `limit` Events of `group` after `after` when they can be answered from memory
    /// without blocking (the Events the Core handed out recently), `None` otherwise: the
    /// caller then uses [`read_page`](Self::read_page) where it may block. Default: `None`.
    fn recent_page(&self, group: &str, after: u64, limit: usize) -> Option<ReplayPage> {
        let _ = (group, after, limit);
        None
    }

    /// The last sequence of `group` (0 for a Group without Events or none at all).
    fn head(&self, group: &str) -> Result<u64, CoreError>;

    /// The view of `group` of `member` (an Agent, or a human on a human session): `Some` when
    /// the Group exists and the member holds a live (`active` or `provisional`) Membership in
    /// it, `None` otherwise — absent and hidden Groups are the same answer (§17.2).
    fn visibility(&self, member: &Principal, group: &str) -> Result<Option<Visibility>, CoreError>;

    /// Advances the durable delivery Cursor of (Agent, Group) to `sequence` if it is higher
    /// (§16; history is never deleted).
    fn acknowledge(&self, agent_id: &str, group: &str, sequence: u64) -> Result<(), CoreError>;

    /// The durable delivery Cursor of (Agent, Group) (0: none).
    fn acknowledged(&self, agent_id: &str, group: &str) -> Result<u64, CoreError>;

    /// The registered keys HELLO may use for the principal `agent_id` (the frame's member
    /// name): at most its key `key_id`, empty when the Registry does not bind that key to an
    /// Agent or a human of that ID (§6.3; humans: docs/network.md "Human sessions").
    fn agent_keys(&self, agent_id: &str, key_id: &str) -> AgentKeyRegistry;

    /// The principal the Registry binds `key_id` to, when it is an Agent or a human named
    /// `id` (who may open a session with HELLO), else `None`.
    fn session_principal(&self, id: &str, key_id: &str) -> Option<Principal>;
}
