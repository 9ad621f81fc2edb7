//! Forward migrations (`docs/store.md`, "Data at rest"): a version-1 database built by hand
//! (the version-1 tables and rows exactly as that build wrote them) opens at the current
//! version with every Event chained, every aggregate, receipt and head checksummed and the
//! receipt bound to its Event; a failing step leaves version 1 as it was; a newer version is
//! still refused; an older store is sealed under a key only when it is told to adopt one.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use missionweaveprotocol::{DescribeError, WireCode};
use missionweaveprotocol_engine::store::{
    AggregateKey, EventRecord, IntegrityKey, ReceiptKey, Store, StoreError, StoreOptions,
    Transaction,
};
use missionweaveprotocol_store_sqlite::{SCHEMA_VERSION, SqliteOptions, SqliteStore};
use rusqlite::{Connection, params};

/// The tables of schema version 1, as `SqliteStore` 0.1 created them.
const V1_DDL: &str = "
CREATE TABLE aggregates (
    kind TEXT NOT NULL, id TEXT NOT NULL, revision INTEGER NOT NULL, value BLOB NOT NULL,
    PRIMARY KEY (kind, id)
) WITHOUT ROWID;
CREATE TABLE groups (
    group_id TEXT NOT NULL PRIMARY KEY, next_sequence INTEGER NOT NULL,
    first_online INTEGER NOT NULL, snapshot_hash TEXT
) WITHOUT ROWID;
CREATE TABLE events (
    group_id TEXT NOT NULL, sequence INTEGER NOT NULL, event_id TEXT NOT NULL,
    body BLOB NOT NULL, PRIMARY KEY (group_id, sequence)
) WITHOUT ROWID;
CREATE TABLE receipts (
    actor_type TEXT NOT NULL, actor_id TEXT NOT NULL, action_id TEXT NOT NULL,
    signing_hash TEXT NOT NULL, event_id TEXT NOT NULL, group_id TEXT, sequence INTEGER,
    PRIMARY KEY (actor_type, actor_id, action_id)
) WITHOUT ROWID;
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version (version) VALUES (1);
";

fn body(group: &str, sequence: i64) -> Vec<u8> {
    format!("{{\"g\":\"{group}\",\"n\":{sequence}}}").into_bytes()
}

/// A version-1 file: Group `g` with Events 1..=4, Group `a` archived before 3 (Events 3..=5
/// online), two aggregates and a receipt.
fn v1_database(path: &Path) {
    let raw = Connection::open(path).unwrap();
    raw.execute_batch("PRAGMA journal_mode=WAL").unwrap();
    raw.execute_batch(V1_DDL).unwrap();
    let event = |group: &str, sequence: i64| {
        raw.execute(
            "INSERT INTO events (group_id, sequence, event_id, body) VALUES (?1, ?2, ?3, ?4)",
            params![
                group,
                sequence,
                format!("{group}-e{sequence}"),
                body(group, sequence)
            ],
        )
        .unwrap();
    };
    (1..=4).for_each(|s| event("g", s));
    (3..=5).for_each(|s| event("a", s));
    raw.execute_batch(
        "INSERT INTO groups VALUES ('g', 5, 1, NULL);
         INSERT INTO groups VALUES ('a', 6, 3, 'sha256:snap');
         INSERT INTO aggregates VALUES ('mission', 'm', 3, X'7B7D');
         INSERT INTO aggregates VALUES ('work_item', 'w', 1, X'5B5D');
         INSERT INTO receipts VALUES ('agent', 'urn:agent:a', 'act-1', 'sha256:aa', 'g-e1', 'g', 1);",
    )
    .unwrap();
}

fn columns(raw: &Connection, table: &str) -> Vec<String> {
    let mut statement = raw
        .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
        .unwrap();
    statement
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn version(raw: &Connection) -> i64 {
    raw.query_row("SELECT version FROM schema_version", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn a_version_1_database_is_migrated_and_every_read_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.sqlite");
    v1_database(&path);

    let store = SqliteStore::open(&path).unwrap();
    let page = store.replay("g", 0, 10).unwrap();
    let expected: Vec<EventRecord> = (1..=4)
        .map(|s| EventRecord::new(s as u64, &format!("g-e{s}"), &body("g", s)[..]))
        .collect();
    assert_eq!(page.events, expected);
    // Mid-log pages verify from the stored hash of the row before them.
    assert_eq!(store.replay("g", 2, 1).unwrap().events, expected[2..3]);
    // The Group archived under version 1: its online rows chain from GENESIS.
    let archived = store.head("a").unwrap();
    assert_eq!((archived.first_online, archived.next_sequence), (3, 6));
    assert_eq!(store.replay("a", 2, 10).unwrap().events.len(), 3);
    assert_eq!(
        store.replay("a", 0, 10).unwrap_err().wire_code(),
        WireCode::CursorTooOld
    );
    let mission = store
        .aggregate(&AggregateKey::new("mission", "m"))
        .unwrap()
        .unwrap();
    assert_eq!((mission.revision, &*mission.value), (3, &b"{}"[..]));
    assert_eq!(store.list("work_item", "").unwrap().len(), 1);
    assert!(
        store
            .receipt(&ReceiptKey::new("agent", "urn:agent:a", "act-1"))
            .unwrap()
            .is_some()
    );
    // The migrated logs keep growing on the same chain.
    let mut tx = Transaction::new();
    tx.append("g", EventRecord::new(5, "g-e5", &b"{}"[..]))
        .append("a", EventRecord::new(6, "a-e6", &b"{}"[..]))
        .put(
            AggregateKey::new("mission", "m"),
            3,
            b"{\"v\":4}"[..].into(),
        );
    store.commit(tx).unwrap();
    drop(store);

    let raw = Connection::open(&path).unwrap();
    assert_eq!(version(&raw), SCHEMA_VERSION);
    assert_eq!(SCHEMA_VERSION, 4);
    for (table, column) in [
        ("events", "chain_hash"),
        ("events", "action_key"),
        ("aggregates", "checksum"),
        ("aggregates", "action_key"),
        ("groups", "chain_before"),
        ("groups", "checksum"),
        ("receipts", "checksum"),
        ("integrity", "scheme"),
        ("integrity", "key_check"),
    ] {
        assert!(
            columns(&raw, table).contains(&column.to_owned()),
            "{table}.{column}"
        );
    }
    // No table of the migration is left behind.
    let leftovers: i64 = raw
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name LIKE '%_v2' OR name LIKE '%_v4'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(leftovers, 0);
    // The migrated file has the shape of a new one.
    let fresh_path = dir.path().join("fresh.sqlite");
    drop(SqliteStore::open(&fresh_path).unwrap());
    let fresh = Connection::open(&fresh_path).unwrap();
    for table in [
        "events",
        "aggregates",
        "groups",
        "receipts",
        "integrity",
        "schema_version",
    ] {
        assert_eq!(columns(&raw, table), columns(&fresh, table), "{table}");
    }
    let indexes = |conn: &Connection| -> Vec<String> {
        let mut statement = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name")
            .unwrap();
        statement
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert_eq!(indexes(&raw), indexes(&fresh));
    assert!(indexes(&raw).contains(&"events_by_action".to_owned()));

    // Reopened (already current): nothing to migrate, everything verifies.
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.replay("g", 0, 10).unwrap().events.len(), 5);
    assert_eq!(store.replay("a", 2, 10).unwrap().events.len(), 4);
    // And the migrated rows are protected like new ones: the receipt is bound to its Event,
    // so removing it is detected rather than taken for a new Command.
    let receipt = ReceiptKey::new("agent", "urn:agent:a", "act-1");
    raw.execute("DELETE FROM receipts", []).unwrap();
    let e = store.dedup(&receipt, "sha256:aa").unwrap_err();
    assert!(
        matches!(&e, StoreError::Corrupt { what: "receipt", locator, .. } if locator == "agent urn:agent:a act-1"),
        "{e:?}"
    );
    raw.execute(
        "UPDATE events SET body = X'7B7D' WHERE group_id = 'g' AND sequence = 2",
        [],
    )
    .unwrap();
    assert!(matches!(
        store.replay("g", 0, 10),
        Err(StoreError::Corrupt { what: "event", .. })
    ));
}

fn keyed(adopt: bool) -> SqliteOptions {
    let options = StoreOptions::keyed(IntegrityKey::new([7u8; 32]).unwrap());
    SqliteOptions {
        store: if adopt {
            options.adopting_key()
        } else {
            options
        },
        ..SqliteOptions::default()
    }
}

#[test]
fn an_older_store_is_sealed_under_a_key_only_when_told_to_adopt_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.sqlite");
    v1_database(&path);
    // A key alone would vouch for every unkeyed row: refused, and nothing migrated.
    let e = SqliteStore::open_with(&path, &keyed(false)).unwrap_err();
    assert_eq!(e.reason(), "integrity_key_refused");
    assert_eq!(e.wire_code(), WireCode::InternalError);
    assert!(!e.retryable());
    let raw = Connection::open(&path).unwrap();
    assert_eq!(version(&raw), 1);
    // Adopted: migrated and sealed under the key, every read verifies, and the file opens
    // with that key only.
    let store = SqliteStore::open_with(&path, &keyed(true)).unwrap();
    assert!(store.is_keyed());
    assert_eq!(store.replay("g", 0, 10).unwrap().events.len(), 4);
    assert_eq!(store.replay("a", 2, 10).unwrap().events.len(), 3);
    assert_eq!(
        store
            .aggregate(&AggregateKey::new("mission", "m"))
            .unwrap()
            .unwrap()
            .revision,
        3
    );
    drop(store);
    assert_eq!(version(&raw), SCHEMA_VERSION);
    let e = SqliteStore::open(&path).unwrap_err();
    assert_eq!(e.reason(), "integrity_key_refused");
    SqliteStore::open_with(&path, &keyed(false)).unwrap();
}

#[test]
fn a_failing_migration_step_leaves_version_1_intact() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.sqlite");
    v1_database(&path);
    // A version-1 row the version-2 step cannot carry forward: an Event ID that is not text.
    let raw = Connection::open(&path).unwrap();
    raw.execute(
        "UPDATE events SET event_id = X'FF00' WHERE group_id = 'g' AND sequence = 3",
        [],
    )
    .unwrap();
    let error = SqliteStore::open(&path).unwrap_err();
    assert_eq!(error.wire_code(), WireCode::InternalError);
    assert!(
        matches!(&error, StoreError::Corrupt { what: "event", locator, .. } if locator == "g #3"),
        "{error:?}"
    );

    // Still version 1: the old tables, their rows, no table of the step.
    assert_eq!(version(&raw), 1);
    assert!(!columns(&raw, "events").contains(&"chain_hash".to_owned()));
    assert!(!columns(&raw, "groups").contains(&"chain_before".to_owned()));
    let (events, aggregates): (i64, i64) = raw
        .query_row(
            "SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM aggregates)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((events, aggregates), (7, 2));
    let leftovers: i64 = raw
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name LIKE '%_v2' OR name LIKE '%_v4'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(leftovers, 0);

    // Repaired, the same file migrates.
    raw.execute(
        "UPDATE events SET event_id = 'g-e3' WHERE group_id = 'g' AND sequence = 3",
        [],
    )
    .unwrap();
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.replay("g", 0, 10).unwrap().events.len(), 4);
    assert_eq!(version(&raw), SCHEMA_VERSION);
}

#[test]
fn a_version_1_log_with_a_gap_migrates_and_the_gap_is_still_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.sqlite");
    v1_database(&path);
    Connection::open(&path)
        .unwrap()
        .execute(
            "DELETE FROM events WHERE group_id = 'g' AND sequence = 2",
            [],
        )
        .unwrap();
    let store = SqliteStore::open(&path).unwrap();
    assert!(matches!(
        store.replay("g", 0, 10),
        Err(StoreError::Corrupt { what: "event", locator, .. }) if locator == "g #3"
    ));
}

#[test]
fn a_newer_version_is_still_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite");
    drop(SqliteStore::open(&path).unwrap());
    let raw = Connection::open(&path).unwrap();
    raw.execute(
        "UPDATE schema_version SET version = ?1",
        [SCHEMA_VERSION + 1],
    )
    .unwrap();
    let error = SqliteStore::open(&path).unwrap_err();
    assert_eq!(error.reason(), "backend_failure");
    assert!(
        error.to_string().contains("newer than this build supports"),
        "{error}"
    );
    assert_eq!(version(&raw), SCHEMA_VERSION + 1);
}

#[test]
fn aggregates_and_events_are_rowid_tables_whose_large_column_comes_last() {
    // Step 4: a `WITHOUT ROWID` table made every seek near a large row read its whole
    // overflow chain. A new file has rowid tables, keyed by unique indexes, the value last.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shape.sqlite");
    drop(SqliteStore::open(&path).unwrap());
    let raw = Connection::open(&path).unwrap();
    for (table, last, index) in [
        ("aggregates", "value", "aggregates_by_key"),
        ("events", "body", "events_by_position"),
    ] {
        let sql: String = raw
            .query_row(
                "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1",
                [table],
                |r| r.get(0),
            )
            .unwrap();
        assert!(!sql.contains("WITHOUT ROWID"), "{table}: {sql}");
        assert_eq!(columns(&raw, table).last().map(String::as_str), Some(last));
        let unique: i64 = raw
            .query_row(
                "SELECT \"unique\" FROM pragma_index_list(?1) WHERE name = ?2",
                [table, index],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(unique, 1, "{index}");
    }
}
