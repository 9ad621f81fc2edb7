//! Deduplication receipts (§15.1 idempotency, §4.8).

/// The idempotency key: the actor (type and ID) and its stable Action ID.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReceiptKey {
    /// The actor type (`agent`, `human`, `service`).
    pub actor_type: String,
    /// The actor ID.
    pub actor_id: String,
    /// The Command's Action ID.
    pub action_id: String,
}

impl ReceiptKey {
    /// The key of `action_id` issued by `actor_type`/`actor_id`.
    pub fn new(
        actor_type: impl Into<String>,
        actor_id: impl Into<String>,
        action_id: impl Into<String>,
    ) -> Self {
        Self {
            actor_type: actor_type.into(),
            actor_id: actor_id.into(),
            action_id: action_id.into(),
        }
    }
}

/// Where the first Event of an applied Command is: its ID and, for Group Events, its Group
/// and sequence. Organization-scoped Events (`session_opened`, `agent_card_registered`) have
/// no Group position (§15.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRef {
    /// The Event ID.
    pub event_id: String,
    /// The Group and sequence of a Group Event.
    pub position: Option<(String, u64)>,
}

/// What an applied Command leaves behind for deduplication: the verified signing hash of the
/// Command (`sha256:…`) and its first Event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    /// The verified signing hash of the Command's canonical signed content.
    pub signing_hash: String,
    /// The first Event the Command produced.
    pub first_event: EventRef,
}
