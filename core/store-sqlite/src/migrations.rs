//! The numbered forward migrations of the schema, applied in order inside the one
//! `BEGIN IMMEDIATE` transaction of `schema::migrate`: a step that fails rolls every step of
//! that open back, so the database stays at the version it had (`docs/store.md`, "Data at
//! rest").
//!
//! - **1**: the per-aggregate tables (`aggregates`, `groups`, `events`, `receipts`).
//! - **2**: integrity columns (`store::integrity`): `events.chain_hash` (each row's per-Group
//!   hash chain), `groups.chain_before` (the chain hash before the first online sequence) and
//!   `aggregates.checksum`. Existing rows are hashed as they are: the chain of a Group archived
//!   under version 1 restarts at its first online Event from `GENESIS` (the archived rows are
//!   gone; the signed snapshot covers them, §7.4).
//!
//! - **3**: receipts and heads authenticated, receipts bound to their first Event, rows
//!   optionally keyed (`store::integrity`): `receipts.checksum`, `groups.checksum`,
//!   `events.action_key` and `aggregates.action_key` (the Action a first Event records, with a
//!   partial unique index each, `events_by_action`, `aggregates_by_action`), and the
//!   `integrity` table (the scheme, and for a keyed store a MAC that recognizes its key). Every
//!   row is verified under the version-2 formulas and sealed anew under the store's scheme
//!   (`seal.rs`): a row that failed before still fails, at the same place.
//!
//! - **4**: `aggregates` and `events` become rowid tables with a unique index on their former
//!   primary key, the large column last. A `WITHOUT ROWID` table keeps the whole row in its key
//!   B-tree, and a seek compares the probe with every cell it passes, reading a spilled cell's
//!   whole payload to do so: one 3.4 MB Mission definition or Event made every lookup and every
//!   insert near its key read megabytes (a Command's cost grew with an immutable neighbour's
//!   size). In a rowid table the index holds only the key and the rowid; the value is read only
//!   when asked for.
//!
//! SQLite cannot add a `NOT NULL` column without a default to a table that holds rows, so
//! step 2 rebuilds the tables it changes (create the new shape, copy, drop, rename); step 3
//! adds nullable columns, which every read requires to hold a 32-byte hash where one belongs.
//! A migrated database ends with exactly the tables a new one gets.

use missionweaveprotocol_engine::store::integrity::{GENESIS, Hash32, v1};
use missionweaveprotocol_engine::store::{Integrity, StoreError};
use rusqlite::{Connection, params};

use crate::convert::{backend, bytes, integer, text, to_sql};

/// One forward migration: applied to a database at `version - 1`, leaves it at `version`.
pub(crate) struct Step {
    /// The schema version this step produces.
    pub(crate) version: i64,
    /// What it does, for error messages.
    pub(crate) summary: &'static str,
    /// The step itself, inside the migration's transaction, sealing what it writes under the
    /// store's scheme.
    pub(crate) apply: fn(&Connection, &Integrity) -> Result<(), StoreError>,
}

/// Every step, in order; the last one's version is `SCHEMA_VERSION`.
pub(crate) const STEPS: &[Step] = &[
    Step {
        version: 1,
        summary: "create the per-aggregate tables",
        apply: create_tables,
    },
    Step {
        version: 2,
        summary: "add the Event hash chain and the aggregate checksums",
        apply: add_integrity_columns,
    },
    Step {
        version: 3,
        summary: "authenticate receipts and heads, bind receipts to their first Event, \
                  seal every row under the store's integrity scheme",
        apply: bind_and_seal,
    },
    Step {
        version: 4,
        summary: "keep large values out of the key B-trees (rowid tables with unique indexes)",
        apply: rowid_tables,
    },
];

/// Step 3's new columns, indexes and table.
const BINDINGS_V3: &str = "
ALTER TABLE receipts ADD COLUMN checksum BLOB;
ALTER TABLE groups ADD COLUMN checksum BLOB;
ALTER TABLE events ADD COLUMN action_key BLOB;
ALTER TABLE aggregates ADD COLUMN action_key BLOB;
CREATE UNIQUE INDEX events_by_action ON events (action_key) WHERE action_key IS NOT NULL;
CREATE UNIQUE INDEX aggregates_by_action ON aggregates (action_key) WHERE action_key IS NOT NULL;
CREATE TABLE integrity (scheme TEXT NOT NULL, key_check BLOB);
";

const TABLES_V1: &str = "
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

/// The version-2 shapes of the three tables that gain an integrity column, created under a
/// temporary name and renamed once filled.
const TABLES_V2: &str = "
CREATE TABLE aggregates_v2 (
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    value BLOB NOT NULL,
    checksum BLOB NOT NULL,
    PRIMARY KEY (kind, id)
) WITHOUT ROWID;
CREATE TABLE groups_v2 (
    group_id TEXT NOT NULL PRIMARY KEY,
    next_sequence INTEGER NOT NULL,
    first_online INTEGER NOT NULL,
    snapshot_hash TEXT,
    chain_before BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE events_v2 (
    group_id TEXT NOT NULL,
    sequence INTEGER NOT NULL,
    event_id TEXT NOT NULL,
    body BLOB NOT NULL,
    chain_hash BLOB NOT NULL,
    PRIMARY KEY (group_id, sequence)
) WITHOUT ROWID;
";

const SWAP_V2: &str = "
DROP TABLE aggregates;
ALTER TABLE aggregates_v2 RENAME TO aggregates;
DROP TABLE groups;
ALTER TABLE groups_v2 RENAME TO groups;
DROP TABLE events;
ALTER TABLE events_v2 RENAME TO events;
";

/// Step 4: the same columns and indexes, in rowid tables, the large column last; rows copied
/// as they are (their checksums and chain hashes do not depend on the table's shape).
const ROWID_V4: &str = "
CREATE TABLE aggregates_v4 (
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    checksum BLOB NOT NULL,
    action_key BLOB,
    value BLOB NOT NULL
);
INSERT INTO aggregates_v4 (kind, id, revision, checksum, action_key, value)
    SELECT kind, id, revision, checksum, action_key, value FROM aggregates ORDER BY kind, id;
DROP TABLE aggregates;
ALTER TABLE aggregates_v4 RENAME TO aggregates;
CREATE UNIQUE INDEX aggregates_by_key ON aggregates (kind, id);
CREATE UNIQUE INDEX aggregates_by_action ON aggregates (action_key) WHERE action_key IS NOT NULL;
CREATE TABLE events_v4 (
    group_id TEXT NOT NULL,
    sequence INTEGER NOT NULL,
    event_id TEXT NOT NULL,
    chain_hash BLOB NOT NULL,
    action_key BLOB,
    body BLOB NOT NULL
);
INSERT INTO events_v4 (group_id, sequence, event_id, chain_hash, action_key, body)
    SELECT group_id, sequence, event_id, chain_hash, action_key, body FROM events
    ORDER BY group_id, sequence;
DROP TABLE events;
ALTER TABLE events_v4 RENAME TO events;
CREATE UNIQUE INDEX events_by_position ON events (group_id, sequence);
CREATE UNIQUE INDEX events_by_action ON events (action_key) WHERE action_key IS NOT NULL;
";

fn rowid_tables(conn: &Connection, _: &Integrity) -> Result<(), StoreError> {
    conn.execute_batch(ROWID_V4).map_err(backend)
}

fn create_tables(conn: &Connection, _: &Integrity) -> Result<(), StoreError> {
    conn.execute_batch(TABLES_V1).map_err(backend)
}

fn bind_and_seal(conn: &Connection, integrity: &Integrity) -> Result<(), StoreError> {
    conn.execute_batch(BINDINGS_V3).map_err(backend)?;
    crate::seal::reseal(conn, crate::seal::Sealed::Version2, integrity)
}

fn add_integrity_columns(conn: &Connection, _: &Integrity) -> Result<(), StoreError> {
    conn.execute_batch(TABLES_V2).map_err(backend)?;
    conn.execute(
        "INSERT INTO groups_v2 (group_id, next_sequence, first_online, snapshot_hash, \
         chain_before) SELECT group_id, next_sequence, first_online, snapshot_hash, ?1 FROM groups",
        [&GENESIS[..]],
    )
    .map_err(backend)?;
    checksum_aggregates(conn)?;
    chain_events(conn)?;
    conn.execute_batch(SWAP_V2).map_err(backend)
}

fn checksum_aggregates(conn: &Connection) -> Result<(), StoreError> {
    let mut select = conn
        .prepare("SELECT kind, id, revision, value FROM aggregates")
        .map_err(backend)?;
    let mut insert = conn
        .prepare(
            "INSERT INTO aggregates_v2 (kind, id, revision, value, checksum) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .map_err(backend)?;
    let mut rows = select.query([]).map_err(backend)?;
    while let Some(row) = rows.next().map_err(backend)? {
        let unknown = || "a row being migrated".to_owned();
        let kind = text(
            "aggregate",
            unknown,
            "kind",
            row.get_ref(0).map_err(backend)?,
        )?;
        let id = text("aggregate", unknown, "id", row.get_ref(1).map_err(backend)?)?;
        let locator = || format!("{kind} {id}");
        let revision = integer(
            "aggregate",
            locator,
            "revision",
            row.get_ref(2).map_err(backend)?,
        )?;
        let value = bytes(
            "aggregate",
            locator,
            "value",
            row.get_ref(3).map_err(backend)?,
        )?;
        let checksum = v1::aggregate_checksum(&kind, &id, revision, value);
        insert
            .execute(params![
                kind,
                id,
                to_sql("revision", revision)?,
                value,
                &checksum[..]
            ])
            .map_err(backend)?;
    }
    Ok(())
}

/// Hashes every Group's stored rows in sequence order, each Group's chain from `GENESIS`.
/// A gap already present stays a gap: the chain binds each row's own sequence, so reads still
/// report it.
fn chain_events(conn: &Connection) -> Result<(), StoreError> {
    let mut select = conn
        .prepare(
            "SELECT group_id, sequence, event_id, body FROM events ORDER BY group_id, sequence",
        )
        .map_err(backend)?;
    let mut insert = conn
        .prepare(
            "INSERT INTO events_v2 (group_id, sequence, event_id, body, chain_hash) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .map_err(backend)?;
    let mut rows = select.query([]).map_err(backend)?;
    let mut previous: Option<(String, Hash32)> = None;
    while let Some(row) = rows.next().map_err(backend)? {
        let unknown = || "a row being migrated".to_owned();
        let group = text(
            "event",
            unknown,
            "group_id",
            row.get_ref(0).map_err(backend)?,
        )?;
        let sequence = integer(
            "event",
            || format!("{group} (a row being migrated)"),
            "sequence",
            row.get_ref(1).map_err(backend)?,
        )?;
        let locator = || format!("{group} #{sequence}");
        let event_id = text(
            "event",
            locator,
            "event_id",
            row.get_ref(2).map_err(backend)?,
        )?;
        let body = bytes("event", locator, "body", row.get_ref(3).map_err(backend)?)?;
        let before = match &previous {
            Some((last_group, hash)) if *last_group == group => *hash,
            _ => GENESIS,
        };
        let hash = v1::event_chain(&before, &group, sequence, &event_id, body);
        insert
            .execute(params![
                group,
                to_sql("sequence", sequence)?,
                event_id,
                body,
                &hash[..]
            ])
            .map_err(backend)?;
        previous = Some((group, hash));
    }
    Ok(())
}
