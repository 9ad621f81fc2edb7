//! Group contexts (revisioned, never moved back) and checkpoint contents (immutable).

use missionweaveprotocol::json::Value;
use missionweaveprotocol_agent::replay::{LocalStoreError, LocalStoreErrorKind};
use rusqlite::{OptionalExtension, params};

use super::{SqliteAgentStore, backend, canonical, from_sql, non_empty, parse_stored, to_sql};

impl SqliteAgentStore {
    /// Stores the context of a Group at `revision`. An older revision is refused
    /// (`StaleRevision`); the same revision is accepted only with the same values.
    pub fn save_group_context(
        &self,
        agent_id: &str,
        group_id: &str,
        revision: u64,
        values: &Value,
    ) -> Result<(), LocalStoreError> {
        non_empty("agent_id", agent_id)?;
        non_empty("group_id", group_id)?;
        let rev = to_sql("revision", revision)?;
        let bytes = canonical(values)?;
        self.transaction(|conn| {
            let stored: Option<(i64, Vec<u8>)> = conn
                .query_row(
                    "SELECT revision, document FROM group_contexts \
                     WHERE agent_id = ?1 AND group_id = ?2",
                    params![agent_id, group_id],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()
                .map_err(backend)?;
            match stored {
                Some((r, _)) if r > rev => Err(LocalStoreError::new(
                    LocalStoreErrorKind::StaleRevision,
                    format!(
                        "the stored context of {group_id:?} has revision {r}, newer than {revision}"
                    ),
                )),
                Some((r, doc)) if r == rev && doc != bytes => Err(LocalStoreError::new(
                    LocalStoreErrorKind::StaleRevision,
                    format!("revision {revision} of {group_id:?} is stored with other values"),
                )),
                Some((r, _)) if r == rev => Ok(()),
                _ => {
                    conn.execute(
                        "INSERT INTO group_contexts (agent_id, group_id, revision, document) \
                         VALUES (?1, ?2, ?3, ?4) ON CONFLICT (agent_id, group_id) DO UPDATE \
                         SET revision = excluded.revision, document = excluded.document",
                        params![agent_id, group_id, rev, bytes],
                    )
                    .map_err(backend)?;
                    Ok(())
                }
            }
        })
    }

    /// The stored context of a Group: `(revision, values)`.
    pub fn group_context(
        &self,
        agent_id: &str,
        group_id: &str,
    ) -> Result<Option<(u64, Value)>, LocalStoreError> {
        let row: Option<(i64, Vec<u8>)> = self
            .conn()
            .query_row(
                "SELECT revision, document FROM group_contexts WHERE agent_id = ?1 AND group_id = ?2",
                params![agent_id, group_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(backend)?;
        row.map(|(r, doc)| {
            Ok((
                from_sql("context revision", r)?,
                parse_stored("group context", &doc)?,
            ))
        })
        .transpose()
    }

    /// Stores a checkpoint's content once: the same content again is accepted, other content
    /// under the same scope is a `CheckpointCollision`.
    pub fn save_checkpoint(
        &self,
        agent_id: &str,
        group_id: &str,
        work_id: &str,
        checkpoint_id: &str,
        content: &Value,
    ) -> Result<(), LocalStoreError> {
        check_scope(agent_id, group_id, work_id, checkpoint_id)?;
        let bytes = canonical(content)?;
        self.transaction(|conn| {
            let stored: Option<Vec<u8>> = conn
                .query_row(
                    "SELECT content FROM checkpoint_contents WHERE agent_id = ?1 AND group_id = ?2 \
                     AND work_id = ?3 AND checkpoint_id = ?4",
                    params![agent_id, group_id, work_id, checkpoint_id],
                    |r| r.get(0),
                )
                .optional()
                .map_err(backend)?;
            match stored {
                Some(s) if s == bytes => Ok(()),
                Some(_) => Err(LocalStoreError::new(
                    LocalStoreErrorKind::CheckpointCollision,
                    format!("checkpoint {checkpoint_id:?} is stored with other content; checkpoints are immutable"),
                )),
                None => {
                    conn.execute(
                        "INSERT INTO checkpoint_contents \
                         (agent_id, group_id, work_id, checkpoint_id, content) \
                         VALUES (?1, ?2, ?3, ?4, ?5)",
                        params![agent_id, group_id, work_id, checkpoint_id, bytes],
                    )
                    .map_err(backend)?;
                    Ok(())
                }
            }
        })
    }

    /// A checkpoint's content, in exactly its scope.
    pub fn load_checkpoint(
        &self,
        agent_id: &str,
        group_id: &str,
        work_id: &str,
        checkpoint_id: &str,
    ) -> Result<Option<Value>, LocalStoreError> {
        check_scope(agent_id, group_id, work_id, checkpoint_id)?;
        let stored: Option<Vec<u8>> = self
            .conn()
            .query_row(
                "SELECT content FROM checkpoint_contents WHERE agent_id = ?1 AND group_id = ?2 \
                 AND work_id = ?3 AND checkpoint_id = ?4",
                params![agent_id, group_id, work_id, checkpoint_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(backend)?;
        stored
            .map(|b| parse_stored("checkpoint content", &b))
            .transpose()
    }

    /// Deletes a checkpoint's content: `true` if it existed (idempotent).
    pub fn delete_checkpoint(
        &self,
        agent_id: &str,
        group_id: &str,
        work_id: &str,
        checkpoint_id: &str,
    ) -> Result<bool, LocalStoreError> {
        check_scope(agent_id, group_id, work_id, checkpoint_id)?;
        self.transaction(|conn| {
            let n = conn
                .execute(
                    "DELETE FROM checkpoint_contents WHERE agent_id = ?1 AND group_id = ?2 \
                     AND work_id = ?3 AND checkpoint_id = ?4",
                    params![agent_id, group_id, work_id, checkpoint_id],
                )
                .map_err(backend)?;
            Ok(n > 0)
        })
    }
}

fn check_scope(
    agent_id: &str,
    group_id: &str,
    work_id: &str,
    checkpoint_id: &str,
) -> Result<(), LocalStoreError> {
    non_empty("agent_id", agent_id)?;
    non_empty("group_id", group_id)?;
    non_empty("work_id", work_id)?;
    non_empty("checkpoint_id", checkpoint_id)
}
