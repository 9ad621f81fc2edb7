//! Cursors, the inbox, the Scheduler snapshot and the atomic replay batch (§16).

use missionweaveprotocol::json;
use missionweaveprotocol_agent::replay::{
    AgentLocalStore, EventPosition, LocalStoreError, LocalStoreErrorKind, ReplayBatch,
};
use missionweaveprotocol_kernel::scheduler::SchedulerSnapshot;
use rusqlite::{Connection, OptionalExtension, params};

use super::{SqliteAgentStore, backend, corrupt, from_sql, non_empty, to_sql};

fn read_cursor(conn: &Connection, agent: &str, group: &str) -> Result<u64, LocalStoreError> {
    let value: Option<i64> = conn
        .prepare_cached("SELECT sequence FROM cursors WHERE agent_id = ?1 AND group_id = ?2")
        .and_then(|mut s| s.query_row(params![agent, group], |r| r.get(0)).optional())
        .map_err(backend)?;
    value.map_or(Ok(0), |v| from_sql("cursor", v))
}

/// `(group, sequence)` of a remembered Event: `Some(None)` when remembered without one.
fn read_position(
    conn: &Connection,
    agent: &str,
    event_id: &str,
) -> Result<Option<Option<(String, u64)>>, LocalStoreError> {
    let row: Option<(Option<String>, Option<i64>)> = conn
        .prepare_cached(
            "SELECT group_id, sequence FROM inbox WHERE agent_id = ?1 AND event_id = ?2",
        )
        .and_then(|mut s| {
            s.query_row(params![agent, event_id], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()
        })
        .map_err(backend)?;
    match row {
        None => Ok(None),
        Some((Some(group), Some(sequence))) => {
            Ok(Some(Some((group, from_sql("inbox sequence", sequence)?))))
        }
        Some(_) => Ok(Some(None)),
    }
}

fn holder(
    conn: &Connection,
    agent: &str,
    group: &str,
    sequence: i64,
) -> Result<Option<String>, LocalStoreError> {
    conn.prepare_cached(
        "SELECT event_id FROM inbox WHERE agent_id = ?1 AND group_id = ?2 AND sequence = ?3",
    )
    .and_then(|mut s| {
        s.query_row(params![agent, group, sequence], |r| r.get(0))
            .optional()
    })
    .map_err(backend)
}

/// Records `event_id` at `group`#`sequence`: `Ok(true)` if written, `Ok(false)` if it was
/// there already; a collision either way is refused. The fast path is one insert.
fn insert_row(
    conn: &Connection,
    agent: &str,
    event_id: &str,
    group: &str,
    sequence: u64,
) -> Result<bool, LocalStoreError> {
    let seq = to_sql("sequence", sequence)?;
    let inserted = conn
        .prepare_cached(
            "INSERT INTO inbox (agent_id, event_id, group_id, sequence) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT DO NOTHING",
        )
        .and_then(|mut s| s.execute(params![agent, event_id, group, seq]))
        .map_err(backend)?;
    if inserted == 1 {
        return Ok(true);
    }
    match read_position(conn, agent, event_id)? {
        Some(Some((g, s))) if g == group && s == sequence => Ok(false),
        Some(Some((g, s))) => Err(LocalStoreError::new(
            LocalStoreErrorKind::EventPositionCollision,
            format!(
                "Event {event_id:?} is remembered at {g:?}#{s} and cannot move to \
                 {group:?}#{sequence}"
            ),
        )),
        // Remembered without a position: it takes this one, unless another Event holds it.
        Some(None) => match holder(conn, agent, group, seq)? {
            Some(other) => Err(taken(group, sequence, &other, event_id)),
            None => {
                conn.prepare_cached(
                    "UPDATE inbox SET group_id = ?3, sequence = ?4 \
                     WHERE agent_id = ?1 AND event_id = ?2",
                )
                .and_then(|mut s| s.execute(params![agent, event_id, group, seq]))
                .map_err(backend)?;
                Ok(false)
            }
        },
        // Not there under this ID: the position is held by another Event.
        None => {
            let other = holder(conn, agent, group, seq)?.unwrap_or_default();
            Err(taken(group, sequence, &other, event_id))
        }
    }
}

fn taken(group: &str, sequence: u64, holder: &str, event_id: &str) -> LocalStoreError {
    LocalStoreError::new(
        LocalStoreErrorKind::EventPositionCollision,
        format!("{group:?}#{sequence} holds Event {holder:?}, not {event_id:?}"),
    )
}

fn write_cursor(
    conn: &Connection,
    agent: &str,
    group: &str,
    sequence: u64,
    snapshot_hash: Option<&str>,
) -> Result<(), LocalStoreError> {
    let seq = to_sql("sequence", sequence)?;
    conn.prepare_cached(
        "INSERT INTO cursors (agent_id, group_id, sequence, snapshot_hash) VALUES (?1, ?2, ?3, ?4) \
         ON CONFLICT (agent_id, group_id) DO UPDATE SET sequence = excluded.sequence, \
         snapshot_hash = COALESCE(excluded.snapshot_hash, cursors.snapshot_hash)",
    )
    .and_then(|mut s| s.execute(params![agent, group, seq, snapshot_hash]))
    .map_err(backend)?;
    Ok(())
}

fn write_scheduler(
    conn: &Connection,
    agent: &str,
    snapshot: &SchedulerSnapshot,
) -> Result<(), LocalStoreError> {
    let bytes = json::canonical_bytes(&snapshot.to_value())
        .map_err(|e| LocalStoreError::new(LocalStoreErrorKind::InvalidArgument, e.to_string()))?;
    conn.prepare_cached(
        "INSERT INTO scheduler_snapshots (agent_id, snapshot) VALUES (?1, ?2) \
         ON CONFLICT (agent_id) DO UPDATE SET snapshot = excluded.snapshot",
    )
    .and_then(|mut s| s.execute(params![agent, bytes]))
    .map_err(backend)?;
    Ok(())
}

impl SqliteAgentStore {
    /// The durable cursor of `agent_id` in `group_id` (0 before any Event).
    pub fn cursor(&self, agent_id: &str, group_id: &str) -> Result<u64, LocalStoreError> {
        read_cursor(&self.conn(), agent_id, group_id)
    }

    /// The last `CURSOR_TOO_OLD` snapshot restored for the Group, by Artifact hash.
    pub fn restored_snapshot(
        &self,
        agent_id: &str,
        group_id: &str,
    ) -> Result<Option<String>, LocalStoreError> {
        let row: Option<Option<String>> = self
            .conn()
            .query_row(
                "SELECT snapshot_hash FROM cursors WHERE agent_id = ?1 AND group_id = ?2",
                params![agent_id, group_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(backend)?;
        Ok(row.flatten())
    }

    /// Moves the cursor forward to `sequence` (reference `acknowledge`: monotonic; an older
    /// sequence leaves it unchanged).
    pub fn acknowledge(
        &self,
        agent_id: &str,
        group_id: &str,
        sequence: u64,
    ) -> Result<(), LocalStoreError> {
        non_empty("agent_id", agent_id)?;
        non_empty("group_id", group_id)?;
        let seq = to_sql("sequence", sequence)?;
        self.transaction(|conn| {
            conn.execute(
                "INSERT INTO cursors (agent_id, group_id, sequence) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (agent_id, group_id) DO UPDATE \
                 SET sequence = MAX(cursors.sequence, excluded.sequence)",
                params![agent_id, group_id, seq],
            )
            .map_err(backend)?;
            Ok(())
        })
    }

    /// Remembers an Event (reference `remember_event`): `false` if it was known already. With a
    /// position, an Event known elsewhere or a position held by another Event is an
    /// `EventPositionCollision`.
    pub fn remember_event(
        &self,
        agent_id: &str,
        event_id: &str,
        position: Option<(&str, u64)>,
    ) -> Result<bool, LocalStoreError> {
        non_empty("agent_id", agent_id)?;
        non_empty("event_id", event_id)?;
        if let Some((group, _)) = position {
            non_empty("group_id", group)?;
        }
        self.transaction(|conn| {
            let known = read_position(conn, agent_id, event_id)?.is_some();
            match position {
                Some((group, sequence)) => {
                    insert_row(conn, agent_id, event_id, group, sequence)?;
                }
                None if !known => {
                    conn.execute(
                        "INSERT INTO inbox (agent_id, event_id) VALUES (?1, ?2)",
                        params![agent_id, event_id],
                    )
                    .map_err(backend)?;
                }
                None => {}
            }
            Ok(!known)
        })
    }

    /// Whether the Event was remembered.
    pub fn has_event(&self, agent_id: &str, event_id: &str) -> Result<bool, LocalStoreError> {
        Ok(read_position(&self.conn(), agent_id, event_id)?.is_some())
    }

    /// Where the Event was processed, if remembered with a position.
    pub fn event_position(
        &self,
        agent_id: &str,
        event_id: &str,
    ) -> Result<Option<EventPosition>, LocalStoreError> {
        Ok(read_position(&self.conn(), agent_id, event_id)?
            .flatten()
            .map(|(group_id, sequence)| EventPosition { group_id, sequence }))
    }

    /// Inbox rows of `agent_id` in `group_id`, in sequence order.
    pub fn inbox(
        &self,
        agent_id: &str,
        group_id: &str,
    ) -> Result<Vec<(String, u64)>, LocalStoreError> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare(
                "SELECT event_id, sequence FROM inbox INDEXED BY inbox_position \
                 WHERE agent_id = ?1 AND group_id = ?2 ORDER BY sequence",
            )
            .map_err(backend)?;
        let rows = stmt
            .query_map(params![agent_id, group_id], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
            })
            .map_err(backend)?;
        let mut out = Vec::new();
        for row in rows {
            let (id, seq) = row.map_err(backend)?;
            out.push((id, from_sql("inbox sequence", seq)?));
        }
        Ok(out)
    }

    /// Stores the Scheduler snapshot of `agent_id` (reference `save_scheduler`).
    pub fn save_scheduler(
        &self,
        agent_id: &str,
        snapshot: &SchedulerSnapshot,
    ) -> Result<(), LocalStoreError> {
        non_empty("agent_id", agent_id)?;
        self.transaction(|conn| write_scheduler(conn, agent_id, snapshot))
    }

    /// The stored Scheduler snapshot (reference `load_scheduler`).
    pub fn load_scheduler(
        &self,
        agent_id: &str,
    ) -> Result<Option<SchedulerSnapshot>, LocalStoreError> {
        let bytes: Option<Vec<u8>> = self
            .conn()
            .query_row(
                "SELECT snapshot FROM scheduler_snapshots WHERE agent_id = ?1",
                [agent_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(backend)?;
        let Some(bytes) = bytes else { return Ok(None) };
        let value = json::parse_state(&bytes).map_err(|e| corrupt("Scheduler snapshot", e))?;
        SchedulerSnapshot::from_value(&value)
            .map(Some)
            .map_err(|e| corrupt("Scheduler snapshot", e))
    }

    /// Commits one replay batch in one transaction (rules: [`ReplayBatch`]).
    pub fn commit_replay(&self, batch: &ReplayBatch<'_>) -> Result<(), LocalStoreError> {
        non_empty("agent_id", batch.agent_id)?;
        non_empty("group_id", batch.group_id)?;
        self.transaction(|conn| {
            let current = read_cursor(conn, batch.agent_id, batch.group_id)?;
            if current != batch.from_cursor || batch.to_cursor < batch.from_cursor {
                return Err(LocalStoreError::new(
                    LocalStoreErrorKind::CursorConflict,
                    format!(
                        "the batch moves the cursor {} → {}, the stored cursor is {current}",
                        batch.from_cursor, batch.to_cursor
                    ),
                ));
            }
            for row in batch.events {
                insert_row(
                    conn,
                    batch.agent_id,
                    &row.event_id,
                    batch.group_id,
                    row.sequence,
                )?;
            }
            write_cursor(
                conn,
                batch.agent_id,
                batch.group_id,
                batch.to_cursor,
                batch.snapshot_hash,
            )?;
            if let Some(snapshot) = batch.scheduler {
                write_scheduler(conn, batch.agent_id, snapshot)?;
            }
            Ok(())
        })
    }
}

impl AgentLocalStore for SqliteAgentStore {
    fn cursor(&self, agent_id: &str, group_id: &str) -> Result<u64, LocalStoreError> {
        SqliteAgentStore::cursor(self, agent_id, group_id)
    }
    fn event_position(
        &self,
        agent_id: &str,
        event_id: &str,
    ) -> Result<Option<EventPosition>, LocalStoreError> {
        SqliteAgentStore::event_position(self, agent_id, event_id)
    }
    fn remember_event(
        &self,
        agent_id: &str,
        event_id: &str,
        position: Option<(&str, u64)>,
    ) -> Result<bool, LocalStoreError> {
        SqliteAgentStore::remember_event(self, agent_id, event_id, position)
    }
    fn load_scheduler(&self, agent_id: &str) -> Result<Option<SchedulerSnapshot>, LocalStoreError> {
        SqliteAgentStore::load_scheduler(self, agent_id)
    }
    fn save_scheduler(
        &self,
        agent_id: &str,
        snapshot: &SchedulerSnapshot,
    ) -> Result<(), LocalStoreError> {
        SqliteAgentStore::save_scheduler(self, agent_id, snapshot)
    }
    fn commit_replay(&self, batch: &ReplayBatch<'_>) -> Result<(), LocalStoreError> {
        SqliteAgentStore::commit_replay(self, batch)
    }
}
