//! The database schema and its version, brought forward by the numbered steps of
//! `migrations.rs` when a store is opened; a newer version is refused.
//!
//! - `aggregates (kind, id) → (revision, value, checksum)`: §15.3 optimistic concurrency per
//!   aggregate; `WITHOUT ROWID` so the primary key is the table's order and `list` by ID prefix
//!   is a range scan (TEXT compares bytewise, the in-memory store's order). `checksum` is
//!   `store::integrity::aggregate_checksum` of the row.
//! - `events (group_id, sequence) → (event_id, body, chain_hash)`: the per-Group logs (§15.2)
//!   with each row's hash chain (`store::integrity::event_chain`); the Event ID is stored, not
//!   indexed (lookup by Event ID is not part of the seam).
//! - `groups group_id → (next_sequence, first_online, snapshot_hash, chain_before)`: each log's
//!   head and archive boundary (§7.4, §16), and the chain hash of sequence `first_online - 1`.
//! - `receipts (actor_type, actor_id, action_id) → (signing_hash, first Event)`: §15.1.
//! - `schema_version (version)`: one row, the version the steps reached.

use missionweaveprotocol_engine::store::StoreError;
use rusqlite::{Connection, OptionalExtension};

use crate::convert::backend;
use crate::migrations::STEPS;

/// The schema version this build writes and reads (the last migration step's).
pub const SCHEMA_VERSION: i64 = 2;

const _: () = assert!(STEPS[STEPS.len() - 1].version == SCHEMA_VERSION);

/// Brings the database to [`SCHEMA_VERSION`] in one `BEGIN IMMEDIATE` transaction: an empty
/// database gets every step, an older one the steps after its version, in order; any failure
/// rolls all of them back. Refuses a newer version (written by a later build: reading it could
/// misinterpret rows) and an unversioned database that already holds tables.
pub(crate) fn migrate(conn: &Connection) -> Result<(), StoreError> {
    conn.execute_batch("BEGIN IMMEDIATE").map_err(backend)?;
    let result = migrate_locked(conn);
    let end = if result.is_ok() { "COMMIT" } else { "ROLLBACK" };
    conn.execute_batch(end).map_err(backend)?;
    result
}

fn migrate_locked(conn: &Connection) -> Result<(), StoreError> {
    let current = stored_version(conn)?;
    if current > SCHEMA_VERSION {
        return Err(StoreError::Backend {
            detail: format!(
                "the database has schema version {current}, newer than this build supports \
                 ({SCHEMA_VERSION}): open it with a newer missionweaveprotocol-store-sqlite"
            ),
        });
    }
    for step in STEPS.iter().filter(|step| step.version > current) {
        (step.apply)(conn).map_err(|error| match error {
            StoreError::Backend { detail } => StoreError::Backend {
                detail: format!(
                    "migration to schema version {} ({}) failed, the database stays at \
                     version {current}: {detail}",
                    step.version, step.summary
                ),
            },
            // A damaged row the step could not carry forward keeps its typed error.
            other => other,
        })?;
        conn.execute("UPDATE schema_version SET version = ?1", [step.version])
            .map_err(backend)?;
    }
    Ok(())
}

/// The recorded version; 0 for an empty database (whose `schema_version` is created here).
fn stored_version(conn: &Connection) -> Result<i64, StoreError> {
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
        conn.execute_batch(
            "CREATE TABLE schema_version (version INTEGER NOT NULL);
             INSERT INTO schema_version (version) VALUES (0);",
        )
        .map_err(backend)?;
        return Ok(0);
    }
    let version: Option<i64> = conn
        .query_row("SELECT max(version) FROM schema_version", [], |row| {
            row.get(0)
        })
        .optional()
        .map_err(backend)?
        .flatten();
    match version {
        Some(version) if version >= 1 => Ok(version),
        other => Err(StoreError::Backend {
            detail: format!("the database has an unknown schema version {other:?}"),
        }),
    }
}
