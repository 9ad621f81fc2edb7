//! The database schema and its version (recorded at creation; a newer one is refused).
//!
//! - `aggregates (kind, id) → (revision, value)`: §15.3 optimistic concurrency per aggregate;
//!   `WITHOUT ROWID` so the primary key is the table's order and `list` by ID prefix is a range
//!   scan (TEXT compares bytewise, the in-memory store's order).
//! - `events (group_id, sequence) → (event_id, body)`: the per-Group logs (§15.2);
//!   the Event ID is stored, not indexed (lookup by Event ID is not part of the seam).
//! - `groups group_id → (next_sequence, first_online, snapshot_hash)`: each log's head and
//!   archive boundary (§7.4, §16).
//! - `receipts (actor_type, actor_id, action_id) → (signing_hash, first Event)`: §15.1.

use missionweaveprotocol_authority::store::StoreError;
use rusqlite::{Connection, OptionalExtension};

use crate::convert::backend;

/// The schema version this build writes and reads.
pub const SCHEMA_VERSION: i64 = 1;

const SCHEMA_V1: &str = "
CREATE TABLE aggregates (
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    value BLOB NOT NULL,
    PRIMARY KEY (kind, id)
) WITHOUT ROWID;
CREATE TABLE groups (
    group_id TEXT NOT NULL PRIMARY KEY,
    next_sequence INTEGER NOT NULL,
    first_online INTEGER NOT NULL,
    snapshot_hash TEXT
) WITHOUT ROWID;
CREATE TABLE events (
    group_id TEXT NOT NULL,
    sequence INTEGER NOT NULL,
    event_id TEXT NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (group_id, sequence)
) WITHOUT ROWID;
CREATE TABLE receipts (
    actor_type TEXT NOT NULL,
    actor_id TEXT NOT NULL,
    action_id TEXT NOT NULL,
    signing_hash TEXT NOT NULL,
    event_id TEXT NOT NULL,
    group_id TEXT,
    sequence INTEGER,
    PRIMARY KEY (actor_type, actor_id, action_id)
) WITHOUT ROWID;
";

/// Creates the schema in an empty database and records its version; accepts a database at
/// [`SCHEMA_VERSION`]; refuses a newer one (written by a later build: reading it could
/// misinterpret rows) and an unversioned one that already holds tables.
pub(crate) fn migrate(conn: &Connection) -> Result<(), StoreError> {
    conn.execute_batch("BEGIN IMMEDIATE").map_err(backend)?;
    let result = migrate_locked(conn);
    let end = if result.is_ok() { "COMMIT" } else { "ROLLBACK" };
    conn.execute_batch(end).map_err(backend)?;
    result
}

fn migrate_locked(conn: &Connection) -> Result<(), StoreError> {
    let versioned: bool = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'",
            [],
            |row| row.get::<_, i64>(0),
        )
        .map_err(backend)?
        > 0;
    if !versioned {
        let tables: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
                [],
                |row| row.get(0),
            )
            .map_err(backend)?;
        if tables > 0 {
            return Err(StoreError::Backend {
                detail: "the database holds tables but no schema_version: not a \
                         MissionWeaveProtocol store"
                    .to_owned(),
            });
        }
        conn.execute_batch(SCHEMA_V1).map_err(backend)?;
        conn.execute_batch("CREATE TABLE schema_version (version INTEGER NOT NULL)")
            .map_err(backend)?;
        conn.execute(
            "INSERT INTO schema_version (version) VALUES (?1)",
            [SCHEMA_VERSION],
        )
        .map_err(backend)?;
        return Ok(());
    }
    let version: Option<i64> = conn
        .query_row("SELECT max(version) FROM schema_version", [], |row| {
            row.get(0)
        })
        .optional()
        .map_err(backend)?
        .flatten();
    match version {
        Some(SCHEMA_VERSION) => Ok(()),
        Some(newer) if newer > SCHEMA_VERSION => Err(StoreError::Backend {
            detail: format!(
                "the database has schema version {newer}, newer than this build supports \
                 ({SCHEMA_VERSION}): open it with a newer missionweaveprotocol-store-sqlite"
            ),
        }),
        other => Err(StoreError::Backend {
            detail: format!("the database has an unknown schema version {other:?}"),
        }),
    }
}
