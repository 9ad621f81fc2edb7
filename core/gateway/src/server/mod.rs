//! The server side: one [`Connection`] machine per WebSocket, sharing one [`Gateway`] (the
//! Core seam, the session authority, the delivery [`Hub`], the per-Agent counter and the
//! [`Limits`]).
//!
//! | file | what | spec |
//! | --- | --- | --- |
//! | `connection.rs` | the machine: inputs, outputs, dispatch by frame type, framing violations | §17.1, §19 |
//! | `hello.rs` | `HELLO` phases, the Session Epoch opened through the Core | §6.3 |
//! | `subscribe.rs` | `SUBSCRIBE` (Membership, visibility, `CURSOR_TOO_OLD`) and `ACK` | §8, §16, §17.2 |
//! | `command.rs` | `COMMAND`: ingress, session checks, the Core, the Events back | §15.1, §6.3 |
//! | `control.rs` | the control-plane relay of human Commands (`POST /control` in the server) | §15, §6.3 |
//! | `ping.rs` | `PING` replies and the ephemeral Presence Record | §17.3, §6.2 |
//! | `delivery.rs` | pull-based delivery, per-Group pause, `BACKPRESSURE`, resume | §16, §17.3, §8 |
//! | `attention.rs` | what a live attention filter selects | §8, §17.2 |
//! | `outbound.rs` | the bounded outbound queue | §17.3 |
//! | `errors.rs` | every refusal as an `ERROR` body; non-disclosure | §19, §17.2 |
//! | `hub.rs` | which connections subscribe to which Group | — |
//! | `polled_heads.rs` | the heads the periodic polls read, shared by the connections | §16 |
//! | `agents.rs` | connections per Agent | §6.3 |
//! | `limits.rs` | every bound and the memory bound it gives | §17.3 |
//! | `host_cursors.rs` | the host's durable Cursor store: ACKs reported, SUBSCRIBE resumed from it | §16 |
//! | `core_seam.rs`, `core_gateway.rs` | the seam to the Core and its implementation over `service::Core` | — |

mod agents;
mod attention;
mod command;
mod connection;
mod control;
mod core_gateway;
mod core_seam;
mod delivery;
mod errors;
mod event_body;
mod event_tail;
mod hello;
mod host_cursors;
mod hub;
mod limits;
mod outbound;
mod ping;
mod polled_heads;
mod subscribe;

use std::sync::{Arc, Mutex, MutexGuard};

use missionweaveprotocol_agent::auth::SessionAuthority;

pub use agents::AgentConnections;
pub use connection::{
    CLOSE_INVALID_PAYLOAD, CLOSE_POLICY, CLOSE_TOO_BIG, CLOSE_UNSUPPORTED_DATA, Close, Connection,
    GroupMoved, MAX_NOTIFICATIONS, Output,
};
pub use control::{MAX_CONTROL_BYTES, Relayed, control_too_large, relay_human_command};
pub use core_gateway::{CoreGateway, DELIVERY_CURSOR_KIND, SESSION_OPEN};
pub use core_seam::{GatewayCore, GroupPage, OpenedSession, Visibility};
pub use errors::GROUP_NOT_FOUND_MESSAGE;
pub use event_tail::{DEFAULT_TAIL_BYTES, EventTail, TAIL_EVENTS_PER_GROUP};
pub use host_cursors::{
    CursorAcknowledged, CursorsWanted, DurableCursors, MAX_KNOWN_CURSORS, MAX_PENDING_REPORTS,
};
pub use hub::{ConnectionId, Hub};
pub use limits::{
    ATTENTION_ENTRY_OVERHEAD_BYTES, CONNECTION_BASE_BYTES, Limits, LimitsError,
    MAX_EVENT_FRAME_BYTES, MAX_ID_BYTES, MAX_PAGE_SIZE, QUEUED_FRAME_OVERHEAD_BYTES,
    SUBSCRIPTION_OVERHEAD_BYTES, attention_cost,
};
pub use polled_heads::{MAX_POLLED_GROUPS, PolledHeads};

/// What every connection of one server shares. Build it once, keep it in an `Arc`, and create
/// a [`Connection`] per accepted WebSocket with [`Gateway::connect`].
#[derive(Debug)]
pub struct Gateway {
    core: Arc<dyn GatewayCore>,
    sessions: Mutex<SessionAuthority>,
    hub: Hub,
    agents: AgentConnections,
    polled_heads: PolledHeads,
    limits: Limits,
    cursors: DurableCursors,
}

impl Gateway {
    /// A gateway over `core`, issuing challenges and session tokens with `sessions` (its
    /// secret, lifetimes and pending-challenge bound, `agent::auth::SessionConfig`).
    pub fn new(
        core: Arc<dyn GatewayCore>,
        sessions: SessionAuthority,
        limits: Limits,
    ) -> Result<Arc<Self>, LimitsError> {
        Self::with_durable_cursors(core, sessions, limits, DurableCursors::Core)
    }

    /// The same, choosing where `SUBSCRIBE` resumes from (`DurableCursors::Host`: the host's
    /// Cursor store, the reference's `GroupGateway(cursors=…)`; `host_cursors.rs`).
    pub fn with_durable_cursors(
        core: Arc<dyn GatewayCore>,
        sessions: SessionAuthority,
        limits: Limits,
        cursors: DurableCursors,
    ) -> Result<Arc<Self>, LimitsError> {
        limits.validate()?;
        Ok(Arc::new(Self {
            core,
            sessions: Mutex::new(sessions),
            hub: Hub::new(),
            agents: AgentConnections::new(limits.max_connections_per_agent),
            polled_heads: PolledHeads::new(),
            limits,
            cursors,
        }))
    }

    /// Where `SUBSCRIBE` resumes from.
    pub fn durable_cursors(&self) -> DurableCursors {
        self.cursors
    }

    /// The Core seam.
    pub fn core(&self) -> &Arc<dyn GatewayCore> {
        &self.core
    }

    /// The delivery hub: whom to wake when a Group's head moves.
    pub fn hub(&self) -> &Hub {
        &self.hub
    }

    /// The per-Agent connection counter.
    pub fn agents(&self) -> &AgentConnections {
        &self.agents
    }

    /// The heads the periodic polls read, shared by the connections.
    pub fn polled_heads(&self) -> &PolledHeads {
        &self.polled_heads
    }

    /// The limits.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    // Every use is one short call on the authority; a panic inside cannot leave a challenge
    // half-issued, so a poisoned lock is used as is.
    pub(crate) fn sessions(&self) -> MutexGuard<'_, SessionAuthority> {
        self.sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
