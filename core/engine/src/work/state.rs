//! The WorkItem aggregate's state (§10.2, `work-item.schema.json`).

use missionweaveprotocol::json::Value;

use super::contract::WorkContract;
use super::evidence::EvidenceRef;
use missionweaveprotocol_kernel::lease::Lease;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// `state` of `work-item.schema.json` (§10.2). `verified` and `cancelled` are terminal for the
/// WorkItem revision; `failed` leaves only through a new `work.offer` (digest 2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WorkItemState {
    /// Authorized, not offered.
    Open,
    /// A durable offer is out (§10.3).
    Offered,
    /// Owned, waiting to start (ownership lease).
    Queued,
    /// Executing under an Execution Lease.
    Active,
    /// Blocked under a bounded blocked lease (§11.4).
    Blocked,
    /// Artifacts and Evidence submitted (§13.2).
    Submitted,
    /// Coordinator review succeeded.
    Verified,
    /// Failed; control returns to the Coordinator.
    Failed,
    /// Cancelled.
    Cancelled,
}

missionweaveprotocol::spelling!(WorkItemState {
    Open => "open",
    Offered => "offered",
    Queued => "queued",
    Active => "active",
    Blocked => "blocked",
    Submitted => "submitted",
    Verified => "verified",
    Failed => "failed",
    Cancelled => "cancelled",
});

impl WorkItemState {
    /// `verified` and `cancelled` end the WorkItem revision (digest 2.2).
    pub const fn is_terminal(self) -> bool {
        matches!(self, Self::Verified | Self::Cancelled)
    }
}

/// `actor.type` (`common.schema.json#/$defs/actor`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ActorType {
    /// An Agent.
    Agent,
    /// A human principal.
    Human,
    /// A service.
    Service,
}

missionweaveprotocol::spelling!(ActorType {
    Agent => "agent",
    Human => "human",
    Service => "service",
});

/// `common.schema.json#/$defs/actor`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Actor {
    /// Its type.
    pub actor_type: ActorType,
    /// Its ID.
    pub id: String,
}

impl Actor {
    /// An Agent actor.
    pub fn agent(id: impl Into<String>) -> Self {
        Self {
            actor_type: ActorType::Agent,
            id: id.into(),
        }
    }
    /// A human actor.
    pub fn human(id: impl Into<String>) -> Self {
        Self {
            actor_type: ActorType::Human,
            id: id.into(),
        }
    }
}

/// `offers[].status` (digest 2.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OfferStatus {
    /// Out, reserving nothing (§10.3).
    Pending,
    /// Won ownership.
    Accepted,
    /// Declined by the Worker (transport unspecified in 0.1).
    Declined,
    /// Replaced by a new `work.offer`, or closed by fail / cancel / contract revision.
    Withdrawn,
    /// Observed past `expiresAt` when recorded.
    Expired,
    /// Another candidate won first (§10.3).
    LostRace,
}

missionweaveprotocol::spelling!(OfferStatus {
    Pending => "pending",
    Accepted => "accepted",
    Declined => "declined",
    Withdrawn => "withdrawn",
    Expired => "expired",
    LostRace => "lost_race",
});

/// One durable offer (`offers[]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Offer {
    /// Offer ID.
    pub offer_id: String,
    /// The candidate Worker.
    pub agent_id: String,
    /// The candidate's Agent Card version.
    pub agent_card_version: u64,
    /// When acceptance stops being valid (§10.2 "offer expiry").
    pub expires_at: UnixMillis,
    /// Its status.
    pub status: OfferStatus,
}

impl Offer {
    /// Pending and not yet past its expiry at `now`.
    pub fn is_acceptable(&self, now: UnixMillis) -> bool {
        self.status == OfferStatus::Pending && now < self.expires_at
    }
}

/// `owner` (§10.3, §11.3): who holds which Ownership Epoch.
#[derive(Clone, Debug, PartialEq)]
pub struct Owner {
    /// Owning Worker.
    pub agent_id: String,
    /// Its Agent Card version at acceptance.
    pub agent_card_version: u64,
    /// `capabilityRef` objects pinned at acceptance (≥ 1).
    pub capability_pins: Vec<Value>,
    /// The current Ownership Epoch (§4.5).
    pub ownership_epoch: u64,
    /// The ownership lease ID granted at acceptance.
    pub ownership_lease_id: String,
    /// When the offer was accepted.
    pub accepted_at: UnixMillis,
}

/// `submission` (§13.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Submission {
    /// Submitted Artifact hashes (≥ 1).
    pub artifact_hashes: Vec<String>,
    /// The Evidence mapped to the acceptance criteria (≥ 1).
    pub evidence: Vec<EvidenceRef>,
    /// When.
    pub submitted_at: UnixMillis,
}

/// A lease the engine grants with a transition: its stable ID (the engine's ID source) and
/// expiry; it is issued and starts at `now`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseGrant {
    /// The new Lease ID.
    pub lease_id: String,
    /// When it lapses unless renewed.
    pub expires_at: UnixMillis,
}

/// The WorkItem aggregate.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkItem {
    /// WorkItem ID.
    pub work_item_id: String,
    /// Its Mission.
    pub mission_id: String,
    /// The Mission's Group.
    pub group_id: String,
    /// The WorkItem Conversation (§10.1 ambiguity is raised there).
    pub conversation_id: String,
    /// Aggregate revision (§15.3); +1 per accepted transition.
    pub revision: u64,
    /// §10.2 state.
    pub state: WorkItemState,
    /// Exclusive ownership (§4.5).
    pub exclusive: bool,
    /// The Work Contract (§10.1).
    pub contract: WorkContract,
    /// Offers, newest last.
    pub offers: Vec<Offer>,
    /// The current or last owner; "live" only while one of its leases is (see `fencing`).
    pub owner: Option<Owner>,
    /// Structured selection basis of the offer that won (§10.3).
    pub selection_basis: Option<Value>,
    /// Selection basis of the pending offer round.
    pub offered_selection_basis: Option<Value>,
    /// The ownership lease (`queued`) or the blocked lease (`blocked`).
    pub ownership_lease: Option<Lease>,
    /// The Execution Lease (`active`).
    pub execution_lease: Option<Lease>,
    /// Latest structured progress report (§11.4).
    pub progress: Option<Value>,
    /// The open blocker (`work.block`).
    pub blocker: Option<String>,
    /// Submission (`submitted`, `verified`).
    pub submission: Option<Submission>,
    /// Coordinator review Evidence (`work.accept_result`).
    pub review_evidence: Vec<EvidenceRef>,
    /// Failure reason and Evidence IDs (`work.fail`).
    pub failure: Option<(String, Vec<String>)>,
    /// Cancellation reason (`work.cancel`).
    pub cancel_reason: Option<String>,
    /// Who created it (proposer, or the authorizer).
    pub created_by: Actor,
    /// Who authorized it.
    pub authorized_by: Actor,
    /// Creation instant.
    pub created_at: UnixMillis,
    /// Last change.
    pub updated_at: UnixMillis,
}

/// One Event a transition emits: its kind and payload (the engine wraps, sequences and signs).
#[derive(Clone, Debug, PartialEq)]
pub struct WorkEvent {
    /// Event kind (`work.started`, …).
    pub kind: &'static str,
    /// Event payload.
    pub payload: Value,
}

/// The result of a decision: the whole new state and the Events, applied together or not at all.
#[derive(Clone, Debug, PartialEq)]
pub struct Transition<T> {
    /// The new aggregate state.
    pub state: T,
    /// Events in order.
    pub events: Vec<WorkEvent>,
}
