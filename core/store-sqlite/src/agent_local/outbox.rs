//! The outbox: Commands buffered while offline (§11.5), sent in enqueue order, each exactly
//! once marked sent.
//!
//! Enqueue is idempotent per Action ID (the same content again is accepted and keeps its place
//! and its sent mark; other content is an `ActionCollision`, §15.1). A sent action stays as a
//! tombstone, so re-enqueueing it after a restart cannot queue it again.

use missionweaveprotocol::json::Value;
use missionweaveprotocol_agent::replay::{LocalStoreError, LocalStoreErrorKind};
use rusqlite::{OptionalExtension, params};

use super::{SqliteAgentStore, backend, canonical, non_empty, parse_stored};

/// One action waiting to be sent.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingAction {
    /// The Action ID.
    pub action_id: String,
    /// The buffered document.
    pub payload: Value,
}

impl SqliteAgentStore {
    /// Buffers `payload` under `action_id`: `true` if queued now, `false` if the same content
    /// was queued (or sent) before.
    pub fn enqueue_action(
        &self,
        agent_id: &str,
        action_id: &str,
        payload: &Value,
    ) -> Result<bool, LocalStoreError> {
        non_empty("agent_id", agent_id)?;
        non_empty("action_id", action_id)?;
        // A buffered action is a document (a wire Command and its metadata): a JSON object, as
        // the reference's `enqueue_action(…, payload: dict)` takes; an array is refused.
        if payload.as_object().is_none() {
            return Err(LocalStoreError::new(
                LocalStoreErrorKind::InvalidArgument,
                "payload must be a JSON object (the buffered action document)".to_owned(),
            ));
        }
        let bytes = canonical(payload)?;
        self.transaction(|conn| {
            let existing: Option<Vec<u8>> = conn
                .query_row(
                    "SELECT payload FROM outbox WHERE agent_id = ?1 AND action_id = ?2",
                    params![agent_id, action_id],
                    |r| r.get(0),
                )
                .optional()
                .map_err(backend)?;
            match existing {
                Some(stored) if stored == bytes => Ok(false),
                Some(_) => Err(LocalStoreError::new(
                    LocalStoreErrorKind::ActionCollision,
                    format!("action {action_id:?} is already buffered with other content"),
                )),
                None => {
                    conn.execute(
                        "INSERT INTO outbox (agent_id, action_id, position, payload) \
                         VALUES (?1, ?2, (SELECT COALESCE(MAX(position), 0) + 1 FROM outbox \
                         WHERE agent_id = ?1), ?3)",
                        params![agent_id, action_id, bytes],
                    )
                    .map_err(backend)?;
                    Ok(true)
                }
            }
        })
    }

    /// Actions not yet marked sent, in enqueue order.
    pub fn pending_actions(&self, agent_id: &str) -> Result<Vec<PendingAction>, LocalStoreError> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare(
                "SELECT action_id, payload FROM outbox INDEXED BY outbox_pending \
                 WHERE agent_id = ?1 AND sent = 0 ORDER BY position",
            )
            .map_err(backend)?;
        let rows = stmt
            .query_map([agent_id], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?))
            })
            .map_err(backend)?;
        let mut out = Vec::new();
        for row in rows {
            let (action_id, bytes) = row.map_err(backend)?;
            out.push(PendingAction {
                payload: parse_stored("outbox payload", &bytes)?,
                action_id,
            });
        }
        Ok(out)
    }

    /// Marks an action sent: `true` if it was pending, `false` if it was sent already. An
    /// unknown action is an `InvalidArgument` (nothing to mark).
    pub fn mark_action_sent(
        &self,
        agent_id: &str,
        action_id: &str,
    ) -> Result<bool, LocalStoreError> {
        self.transaction(|conn| {
            let sent: Option<i64> = conn
                .query_row(
                    "SELECT sent FROM outbox WHERE agent_id = ?1 AND action_id = ?2",
                    params![agent_id, action_id],
                    |r| r.get(0),
                )
                .optional()
                .map_err(backend)?;
            match sent {
                None => Err(LocalStoreError::new(
                    LocalStoreErrorKind::InvalidArgument,
                    format!("no buffered action {action_id:?}"),
                )),
                Some(1) => Ok(false),
                Some(_) => {
                    conn.execute(
                        "UPDATE outbox SET sent = 1 WHERE agent_id = ?1 AND action_id = ?2",
                        params![agent_id, action_id],
                    )
                    .map_err(backend)?;
                    Ok(true)
                }
            }
        })
    }
}
