//! What a pure decision returns: the Events to append and the aggregate writes, with the
//! revisions the decision read (§15.2, §15.3).

use crate::events::EventDraft;
use crate::store::{AggregateKey, Blob};

/// One Event to append, before the engine places it at the Group's next sequence.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedEvent {
    /// The Event, without its Group position.
    pub draft: EventDraft,
    /// The Group whose log receives it; `None` for an Organization-scoped Event
    /// (`…session_opened`, `…agent_card_registered`: no Group, sequence or aggregate revision,
    /// §15.2), which the engine stores as an aggregate keyed by its Event ID.
    pub group_id: Option<String>,
    /// The revision of the aggregate it changes, after the change (§15.2 `aggregateRevision`).
    pub aggregate_revision: u64,
}

/// One aggregate the decision depended on: written (`value: Some`) or only checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedWrite {
    /// The aggregate.
    pub key: AggregateKey,
    /// The revision the decision read (0: absent).
    pub read_revision: u64,
    /// The new canonical JSON bytes, or `None` to check `read_revision` at commit only.
    pub value: Option<Blob>,
}

/// The outcome of a pure decision: Events (at least one) and every aggregate the decision read,
/// so that the commit fails if any of them changed meanwhile (optimistic, serializable per
/// Command; `docs/store.md`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Decision {
    /// The Events, in the order they are appended.
    pub events: Vec<PlannedEvent>,
    /// The writes and checks.
    pub writes: Vec<PlannedWrite>,
}

impl Decision {
    /// Adds an Event.
    pub fn event(mut self, draft: EventDraft, group_id: &str, aggregate_revision: u64) -> Self {
        self.events.push(PlannedEvent {
            draft,
            group_id: Some(group_id.to_owned()),
            aggregate_revision,
        });
        self
    }

    /// Adds an Organization-scoped Event (§15.2: no Group ID, sequence or aggregate revision).
    pub fn organization_event(mut self, draft: EventDraft) -> Self {
        self.events.push(PlannedEvent {
            draft,
            group_id: None,
            aggregate_revision: 0,
        });
        self
    }

    /// Adds a write of the next revision of `key`.
    pub fn put(mut self, key: AggregateKey, read_revision: u64, value: Blob) -> Self {
        self.writes.push(PlannedWrite {
            key,
            read_revision,
            value: Some(value),
        });
        self
    }

    /// Adds a check that `key` is still at `read_revision` at commit.
    pub fn check(mut self, key: AggregateKey, read_revision: u64) -> Self {
        self.writes.push(PlannedWrite {
            key,
            read_revision,
            value: None,
        });
        self
    }
}
