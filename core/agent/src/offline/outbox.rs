//! The Agent-local outbox seam for buffered offline Commands (reference `SQLiteAgentStore`'s
//! `enqueue_action` / `pending_actions` / `mark_action_sent`). A durable backend (the SQLite
//! agent store) implements [`OfflineOutbox`]; [`InMemoryOutbox`] is the in-process one.

use std::collections::BTreeMap;

use missionweaveprotocol::json::Value;

/// An outbox failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutboxError {
    /// The Action ID is already queued (or was sent) with other content (§15.1).
    Collision {
        /// The Action ID.
        action_id: String,
    },
    /// The backend failed.
    Backend(String),
}

impl core::fmt::Display for OutboxError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Collision { action_id } => {
                write!(f, "action {action_id} is already queued with other content")
            }
            Self::Backend(detail) => write!(f, "{detail}"),
        }
    }
}

impl std::error::Error for OutboxError {}

/// Where buffered Commands wait for reconnection. Idempotent per `(agent, action)`:
/// enqueueing the same content again changes nothing; other content is a collision.
pub trait OfflineOutbox {
    /// Queues `payload` (a signed wire Command) under `action_id` for `agent_id`.
    fn enqueue_action(
        &mut self,
        agent_id: &str,
        action_id: &str,
        payload: &Value,
    ) -> Result<(), OutboxError>;
    /// The Agent's queued, unsent Commands in enqueue order.
    fn pending_actions(&self, agent_id: &str) -> Result<Vec<Value>, OutboxError>;
    /// Marks one as sent (idempotent; unknown IDs are ignored).
    fn mark_action_sent(&mut self, agent_id: &str, action_id: &str) -> Result<(), OutboxError>;
}

#[derive(Clone, Debug)]
struct Row {
    order: u64,
    payload: Value,
    sent: bool,
}

/// An in-memory [`OfflineOutbox`] (tests, and Workers without a local store).
#[derive(Clone, Debug, Default)]
pub struct InMemoryOutbox {
    rows: BTreeMap<(String, String), Row>,
    next: u64,
}

impl InMemoryOutbox {
    /// An empty outbox.
    pub fn new() -> Self {
        Self::default()
    }
}

impl OfflineOutbox for InMemoryOutbox {
    fn enqueue_action(
        &mut self,
        agent_id: &str,
        action_id: &str,
        payload: &Value,
    ) -> Result<(), OutboxError> {
        let key = (agent_id.to_owned(), action_id.to_owned());
        if let Some(row) = self.rows.get(&key) {
            return if row.payload.json_eq(payload) {
                Ok(())
            } else {
                Err(OutboxError::Collision {
                    action_id: action_id.to_owned(),
                })
            };
        }
        self.next += 1;
        self.rows.insert(
            key,
            Row {
                order: self.next,
                payload: payload.clone(),
                sent: false,
            },
        );
        Ok(())
    }

    fn pending_actions(&self, agent_id: &str) -> Result<Vec<Value>, OutboxError> {
        let mut pending: Vec<&Row> = self
            .rows
            .iter()
            .filter(|((agent, _), row)| agent == agent_id && !row.sent)
            .map(|(_, row)| row)
            .collect();
        pending.sort_by_key(|row| row.order);
        Ok(pending.into_iter().map(|row| row.payload.clone()).collect())
    }

    fn mark_action_sent(&mut self, agent_id: &str, action_id: &str) -> Result<(), OutboxError> {
        if let Some(row) = self
            .rows
            .get_mut(&(agent_id.to_owned(), action_id.to_owned()))
        {
            row.sent = true;
        }
        Ok(())
    }
}
