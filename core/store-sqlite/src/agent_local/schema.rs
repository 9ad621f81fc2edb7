//! The Agent-local schema (reference table names): every table `WITHOUT ROWID` keyed by the
//! Agent first, so one file can hold several Agents and each lookup is one B-tree descent.
//!
//! - `cursors (agent_id, group_id) → (sequence, snapshot_hash)`: the durable cursor per Group
//!   (§16) and the last `CURSOR_TOO_OLD` snapshot restored.
//! - `inbox (agent_id, event_id) → (group_id, sequence)`: Events processed, at their position;
//!   `inbox_position` makes a position hold one Event.
//! - `outbox (agent_id, action_id) → (position, payload, sent)`: buffered Commands in enqueue
//!   order (`position`, from `outbox_order`).
//! - `scheduler_snapshots agent_id → snapshot`: the Scheduler's JSON form.
//! - `group_contexts (agent_id, group_id) → (revision, document)`.
//! - `checkpoint_contents (agent_id, group_id, work_id, checkpoint_id) → content`.
//! - `agent_store_version (version)`.

use rusqlite::{Connection, OptionalExtension};

use missionweaveprotocol_agent::replay::{LocalStoreError, LocalStoreErrorKind};

use super::backend;

/// The schema version this build writes.
pub const AGENT_SCHEMA_VERSION: i64 = 1;

const TABLES: &str = "
CREATE TABLE IF NOT EXISTS cursors (
  agent_id TEXT NOT NULL, group_id TEXT NOT NULL,
  sequence INTEGER NOT NULL CHECK (sequence >= 0), snapshot_hash TEXT,
  PRIMARY KEY (agent_id, group_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS inbox (
  agent_id TEXT NOT NULL, event_id TEXT NOT NULL, group_id TEXT, sequence INTEGER,
  PRIMARY KEY (agent_id, event_id)) WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS inbox_position ON inbox (agent_id, group_id, sequence);
CREATE TABLE IF NOT EXISTS outbox (
  agent_id TEXT NOT NULL, action_id TEXT NOT NULL, position INTEGER NOT NULL,
  payload BLOB NOT NULL, sent INTEGER NOT NULL DEFAULT 0 CHECK (sent IN (0, 1)),
  PRIMARY KEY (agent_id, action_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS outbox_pending ON outbox (agent_id, sent, position);
CREATE TABLE IF NOT EXISTS scheduler_snapshots (
  agent_id TEXT NOT NULL PRIMARY KEY, snapshot BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS group_contexts (
  agent_id TEXT NOT NULL, group_id TEXT NOT NULL,
  revision INTEGER NOT NULL CHECK (revision >= 0), document BLOB NOT NULL,
  PRIMARY KEY (agent_id, group_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS checkpoint_contents (
  agent_id TEXT NOT NULL, group_id TEXT NOT NULL, work_id TEXT NOT NULL,
  checkpoint_id TEXT NOT NULL, content BLOB NOT NULL,
  PRIMARY KEY (agent_id, group_id, work_id, checkpoint_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS agent_store_version (version INTEGER NOT NULL);
";

/// Creates the tables in one transaction; refuses a newer schema version.
pub(super) fn migrate(conn: &Connection) -> Result<(), LocalStoreError> {
    conn.execute_batch("BEGIN IMMEDIATE").map_err(backend)?;
    let result = (|| {
        conn.execute_batch(TABLES).map_err(backend)?;
        let version: Option<i64> = conn
            .query_row("SELECT version FROM agent_store_version", [], |r| r.get(0))
            .optional()
            .map_err(backend)?;
        match version {
            None => {
                conn.execute(
                    "INSERT INTO agent_store_version (version) VALUES (?1)",
                    [AGENT_SCHEMA_VERSION],
                )
                .map_err(backend)?;
                Ok(())
            }
            Some(v) if v <= AGENT_SCHEMA_VERSION => Ok(()),
            Some(v) => Err(LocalStoreError::new(
                LocalStoreErrorKind::Corrupt,
                format!(
                    "the Agent store has schema version {v}, newer than this build supports \
                     ({AGENT_SCHEMA_VERSION})"
                ),
            )),
        }
    })();
    let end = if result.is_ok() { "COMMIT" } else { "ROLLBACK" };
    conn.execute_batch(end).map_err(backend)?;
    result
}
