//! The database schema, its version and its forward migrations.
//!
//! The SQLite store's tables (`core/store-sqlite/src/schema.rs`) with PostgreSQL types, text
//! keys in the `"C"` collation (byte order, the in-memory store's order for `list`) and the
//! integrity columns of `store::integrity`:
//!
//! - `aggregates (kind, id) → (revision, value, checksum)`: §15.3; `checksum` is
//!   `integrity::aggregate_checksum` of the row;
//! - `groups group_id → (next_sequence, first_online, snapshot_hash, chain_before)`: each
//!   log's head and archive boundary (§7.4, §16); `chain_before` is the chain hash of sequence
//!   `first_online - 1` (`GENESIS` until an archive);
//! - `events (group_id, sequence) → (event_id, body, chain_hash)`: §15.2; `chain_hash` is
//!   `integrity::event_chain` of the row after the previous one;
//! - `receipts (actor_type, actor_id, action_id) → (signing_hash, first Event)`: §15.1.
//!
//! Version 2 adds what `store::integrity` authenticates beyond that: `receipts.checksum`,
//! `groups.checksum`, the Action the first Event of each Command records
//! (`events.action_key`, `aggregates.action_key`, each with a partial unique index), and the
//! `integrity` table (the scheme, and for a keyed store a MAC recognizing its key); every row
//! is verified as version 1 sealed it and sealed anew under the store's scheme (`seal.rs`).
//!
//! Migrations run in one transaction under a lock of their own, so several processes opening
//! one database at once create or upgrade it once.

use missionweaveprotocol_engine::store::{Integrity, StoreError, StoreOptions};
use postgres::Client;

use crate::convert::backend;
use crate::locks;

/// The schema version this build writes and reads.
pub const SCHEMA_VERSION: i64 = 2;

/// The version whose migration binds receipts and seals every row (`seal.rs`) after its SQL.
const SEALING_VERSION: i64 = 2;

/// Migration `i` brings a database from version `i` to `i + 1`.
const MIGRATIONS: [&str; SCHEMA_VERSION as usize] = [
    "
CREATE TABLE aggregates (
    kind TEXT COLLATE \"C\" NOT NULL,
    id TEXT COLLATE \"C\" NOT NULL,
    revision BIGINT NOT NULL,
    value BYTEA NOT NULL,
    checksum BYTEA NOT NULL,
    PRIMARY KEY (kind, id)
);
CREATE TABLE groups (
    group_id TEXT COLLATE \"C\" NOT NULL PRIMARY KEY,
    next_sequence BIGINT NOT NULL,
    first_online BIGINT NOT NULL,
    snapshot_hash TEXT,
    chain_before BYTEA NOT NULL
);
CREATE TABLE events (
    group_id TEXT COLLATE \"C\" NOT NULL,
    sequence BIGINT NOT NULL,
    event_id TEXT NOT NULL,
    body BYTEA NOT NULL,
    chain_hash BYTEA NOT NULL,
    PRIMARY KEY (group_id, sequence)
);
CREATE TABLE receipts (
    actor_type TEXT COLLATE \"C\" NOT NULL,
    actor_id TEXT COLLATE \"C\" NOT NULL,
    action_id TEXT COLLATE \"C\" NOT NULL,
    signing_hash TEXT NOT NULL,
    event_id TEXT NOT NULL,
    group_id TEXT,
    sequence BIGINT,
    PRIMARY KEY (actor_type, actor_id, action_id)
);
",
    "
ALTER TABLE receipts ADD COLUMN checksum BYTEA;
ALTER TABLE groups ADD COLUMN checksum BYTEA;
ALTER TABLE events ADD COLUMN action_key BYTEA;
ALTER TABLE aggregates ADD COLUMN action_key BYTEA;
CREATE UNIQUE INDEX events_by_action ON events (action_key) WHERE action_key IS NOT NULL;
CREATE UNIQUE INDEX aggregates_by_action ON aggregates (action_key) WHERE action_key IS NOT NULL;
CREATE TABLE integrity (scheme TEXT NOT NULL, key_check BYTEA);
",
];

/// Creates the schema (in `schema`, created if missing, or the connection's current schema)
/// or migrates it forward to [`SCHEMA_VERSION`]; refuses a newer version (written by a later
/// build: reading it could misinterpret rows) and an unversioned schema holding other tables.
/// Seals what it migrates under `options`' scheme (an older store under a key only when the
/// options adopt it); a store already current must be sealed under it (`seal::check`).
/// Answers the scheme to read and write with.
pub(crate) fn migrate(
    client: &mut Client,
    schema: Option<&str>,
    namespace: &str,
    options: &StoreOptions,
) -> Result<Integrity, StoreError> {
    let mut db = client.transaction().map_err(backend)?;
    db.execute(
        "SELECT pg_advisory_xact_lock($1)",
        &[&locks::migration(namespace)],
    )
    .map_err(backend)?;
    if let Some(schema) = schema {
        db.batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {}", quote(schema)))
            .map_err(backend)?;
    }
    let versioned: bool = db
        .query_one(
            "SELECT to_regclass(quote_ident(current_schema()) || '.schema_version') IS NOT NULL",
            &[],
        )
        .and_then(|row| row.try_get(0))
        .map_err(backend)?;
    let current = if versioned {
        let version: Option<i64> = db
            .query_one("SELECT max(version) FROM schema_version", &[])
            .and_then(|row| row.try_get(0))
            .map_err(backend)?;
        version.unwrap_or(0)
    } else {
        let tables: i64 = db
            .query_one(
                "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()",
                &[],
            )
            .and_then(|row| row.try_get(0))
            .map_err(backend)?;
        if tables > 0 {
            return Err(StoreError::Backend {
                detail: "the schema holds tables but no schema_version: not a \
                         MissionWeaveProtocol store"
                    .to_owned(),
            });
        }
        db.batch_execute("CREATE TABLE schema_version (version BIGINT NOT NULL)")
            .map_err(backend)?;
        0
    };
    if current > SCHEMA_VERSION {
        return Err(StoreError::Backend {
            detail: format!(
                "the database has schema version {current}, newer than this build supports \
                 ({SCHEMA_VERSION}): open it with a newer missionweaveprotocol-store-postgres"
            ),
        });
    }
    if current < 0 {
        return Err(StoreError::Backend {
            detail: format!("the database has an unknown schema version {current}"),
        });
    }
    if current == SCHEMA_VERSION {
        let integrity = crate::seal::check(&mut db, options)?;
        db.commit().map_err(backend)?;
        return Ok(integrity);
    }
    let integrity = options.integrity();
    if current > 0 && integrity.is_keyed() && !options.adopt_key {
        // Sealing an older (unkeyed) store under a key vouches for every row it holds: only
        // on request.
        return Err(StoreError::IntegrityKeyRefused {
            detail: format!(
                "the store (schema version {current}) was sealed without an integrity key: \
                 set adopt_key to verify every row and seal it under this key"
            ),
        });
    }
    for (from, migration) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        let version = from as i64 + 1;
        db.batch_execute(migration).map_err(backend)?;
        if version == SEALING_VERSION {
            crate::seal::reseal(&mut db, crate::seal::Sealed::Version1, &integrity)?;
        }
        db.execute(
            "INSERT INTO schema_version (version) VALUES ($1)",
            &[&version],
        )
        .map_err(backend)?;
    }
    db.commit().map_err(backend)?;
    Ok(integrity)
}

/// A schema name as a quoted SQL identifier.
pub(crate) fn quote(schema: &str) -> String {
    format!("\"{}\"", schema.replace('"', "\"\""))
}
