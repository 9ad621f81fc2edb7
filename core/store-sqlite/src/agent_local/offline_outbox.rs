//! The SQLite agent store as the outbox of bounded offline execution (§11.5):
//! `offline::OfflineExecutionPolicy::buffer` queues its re-signed Commands here, so they
//! survive a restart of the Worker (the crash test `crash_agent_sqlite` kills it mid-outbox).

use missionweaveprotocol::json::Value;
use missionweaveprotocol_agent::offline::{OfflineOutbox, OutboxError};
use missionweaveprotocol_agent::replay::{LocalStoreError, LocalStoreErrorKind};

use super::SqliteAgentStore;

fn outbox_error(action_id: &str, e: LocalStoreError) -> OutboxError {
    match e.kind {
        LocalStoreErrorKind::ActionCollision => OutboxError::Collision {
            action_id: action_id.to_owned(),
        },
        _ => OutboxError::Backend(e.to_string()),
    }
}

impl OfflineOutbox for SqliteAgentStore {
    fn enqueue_action(
        &mut self,
        agent_id: &str,
        action_id: &str,
        payload: &Value,
    ) -> Result<(), OutboxError> {
        SqliteAgentStore::enqueue_action(self, agent_id, action_id, payload)
            .map(drop)
            .map_err(|e| outbox_error(action_id, e))
    }

    fn pending_actions(&self, agent_id: &str) -> Result<Vec<Value>, OutboxError> {
        SqliteAgentStore::pending_actions(self, agent_id)
            .map(|pending| pending.into_iter().map(|a| a.payload).collect())
            .map_err(|e| outbox_error("", e))
    }

    /// The trait's contract: marking is idempotent and an unknown Action ID is ignored
    /// (the store itself answers `InvalidArgument` for an action it never queued).
    fn mark_action_sent(&mut self, agent_id: &str, action_id: &str) -> Result<(), OutboxError> {
        if agent_id.is_empty() || action_id.is_empty() {
            return Err(OutboxError::Backend(
                "an empty Agent or Action ID names no buffered action".to_owned(),
            ));
        }
        match SqliteAgentStore::mark_action_sent(self, agent_id, action_id) {
            Ok(_) => Ok(()),
            Err(e) if e.kind == LocalStoreErrorKind::InvalidArgument => Ok(()),
            Err(e) => Err(outbox_error(action_id, e)),
        }
    }
}
