//! The database schema and its version, brought forward by the numbered steps of
//! `migrations.rs` when a store is opened; a newer version is refused.
//!
//! - `aggregates (kind, id) → (revision, checksum, action_key, value)`: §15.3 optimistic
//!   concurrency per aggregate; a rowid table with the unique index `aggregates_by_key`, so
//!   `list` by ID prefix is an index range scan (TEXT compares bytewise, the in-memory store's
//!   order) and a seek never reads a value (step 4 of `migrations.rs` says why).
//!   `checksum` is `Integrity::aggregate_checksum` of the row; `action_key` the Action an
//!   Organization-scoped first Event records (`aggregates_by_action`).
//! - `events (group_id, sequence) → (event_id, chain_hash, action_key, body)`, unique index
//!   `events_by_position`: the per-Group
//!   logs (§15.2) with each row's hash chain (`Integrity::event_chain`) and, on the first Event
//!   of a Command, the Action it records (`events_by_action`); the Event ID is stored, not
//!   indexed (lookup by Event ID is not part of the seam).
//! - `groups group_id → (next_sequence, first_online, snapshot_hash, chain_before, checksum)`:
//!   each log's head and archive boundary (§7.4, §16), the chain hash of sequence
//!   `first_online - 1`, and the head's checksum.
//! - `receipts (actor_type, actor_id, action_id) → (signing_hash, first Event, checksum)`:
//!   §15.1.
//! - `integrity (scheme, key_check)`: one row, the scheme every authenticator is computed
//!   with (`sha256` or `hmac-sha256`) and, keyed, a MAC recognizing the key (`seal.rs`).
//! - `schema_version (version)`: one row, the version the steps reached.

use missionweaveprotocol_engine::store::{Integrity, StoreError, StoreOptions};
use rusqlite::{Connection, OptionalExtension};

use crate::convert::backend;
use crate::migrations::STEPS;

/// The schema version this build writes and reads (the last migration step's).
pub const SCHEMA_VERSION: i64 = 4;

const _: () = assert!(STEPS[STEPS.len() - 1].version == SCHEMA_VERSION);

/// Brings the database to [`SCHEMA_VERSION`] in one `BEGIN IMMEDIATE` transaction: an empty
/// database gets every step, an older one the steps after its version, in order; any failure
/// rolls all of them back. Refuses a newer version (written by a later build: reading it could
/// misinterpret rows) and an unversioned database that already holds tables. The steps seal
/// what they write under `options`' scheme; a database already at the current version must be
/// sealed under it (`seal::check`: the same key, or an unkeyed store adopting one). Answers the
/// scheme to read and write with.
pub(crate) fn migrate(conn: &Connection, options: &StoreOptions) -> Result<Integrity, StoreError> {
    conn.execute_batch("BEGIN IMMEDIATE").map_err(backend)?;
    let result = migrate_locked(conn, options);
    let end = if result.is_ok() { "COMMIT" } else { "ROLLBACK" };
    conn.execute_batch(end).map_err(backend)?;
    result
}

fn migrate_locked(conn: &Connection, options: &StoreOptions) -> Result<Integrity, StoreError> {
    let current = stored_version(conn)?;
    if current > SCHEMA_VERSION {
        return Err(StoreError::Backend {
            detail: format!(
                "the database has schema version {current}, newer than this build supports \
                 ({SCHEMA_VERSION}): open it with a newer missionweaveprotocol-store-sqlite"
            ),
        });
    }
    if current == SCHEMA_VERSION {
        return crate::seal::check(conn, options);
    }
    let integrity = options.integrity();
    if current > 0 && integrity.is_keyed() && !options.adopt_key {
        // Sealing an older (unkeyed) store under a key vouches for every row it holds: only
        // on request, as for a current unkeyed store (`seal::check`).
        return Err(StoreError::IntegrityKeyRefused {
            detail: format!(
                "the store (schema version {current}) was sealed without an integrity key: \
                 set adopt_key to verify every row and seal it under this key"
            ),
        });
    }
    for step in STEPS.iter().filter(|step| step.version > current) {
        (step.apply)(conn, &integrity).map_err(|error| match error {
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
    Ok(integrity)
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
