//! Data at rest changed behind the store's back (raw SQL on the file, as damage or a tamperer
//! would) is detected when read: every read checks the integrity columns of schema version 2
//! (`store::integrity`, `docs/store.md` "Data at rest") and answers `StoreError::Corrupt` with
//! what and where, never the damaged row, never a panic. The untouched store reads fine.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::{DescribeError, WireCode};
use missionweaveprotocol_engine::store::{
    AggregateKey, EventRecord, GroupHead, Integrity, SnapshotPointer, Store, StoreError,
    Transaction,
};
use missionweaveprotocol_store_sqlite::SqliteStore;
use rusqlite::{Connection, params};

/// A file store and a second, raw connection to the same file.
struct Fixture {
    store: SqliteStore,
    raw: Connection,
    _dir: tempfile::TempDir,
}

fn body(group: &str, sequence: u64) -> Vec<u8> {
    format!(
        "{{\"group\":\"{group}\",\"n\":{sequence},\"pad\":\"{}\"}}",
        "x".repeat(40)
    )
    .into_bytes()
}

/// Groups `g` and `h` with `events` Events each, and aggregates `mission m`, `mission m2`.
fn fixture(events: u64) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite");
    let store = SqliteStore::open(&path).unwrap();
    for group in ["g", "h"] {
        let mut tx = Transaction::new();
        for sequence in 1..=events {
            tx.append(
                group,
                EventRecord::new(
                    sequence,
                    &format!("{group}-e{sequence}"),
                    &body(group, sequence)[..],
                ),
            );
        }
        store.commit(tx).unwrap();
    }
    let mut tx = Transaction::new();
    tx.put(
        AggregateKey::new("mission", "m"),
        0,
        b"{\"v\":1}"[..].into(),
    )
    .put(
        AggregateKey::new("mission", "m2"),
        0,
        b"{\"v\":2}"[..].into(),
    );
    store.commit(tx).unwrap();
    let mut tx = Transaction::new();
    tx.put(
        AggregateKey::new("mission", "m"),
        1,
        b"{\"v\":3}"[..].into(),
    );
    store.commit(tx).unwrap();
    let raw = Connection::open(&path).unwrap();
    raw.execute_batch("PRAGMA synchronous=OFF").unwrap();
    Fixture {
        store,
        raw,
        _dir: dir,
    }
}

/// `result` is `Corrupt` about `what` at `locator` (INTERNAL_ERROR, `store_corrupt`); answers
/// its detail.
fn corrupt<T: std::fmt::Debug>(result: Result<T, StoreError>, what: &str, locator: &str) -> String {
    let error = result.unwrap_err();
    assert_eq!(error.wire_code(), WireCode::InternalError, "{error}");
    assert_eq!(error.reason(), "store_corrupt", "{error}");
    match error {
        StoreError::Corrupt {
            what: found,
            locator: at,
            detail,
        } => {
            assert_eq!((found, at.as_str()), (what, locator), "{detail}");
            detail
        }
        other => panic!("not Corrupt: {other:?}"),
    }
}

/// Every Event of `group`, in pages of `page`.
fn replay_all(
    store: &SqliteStore,
    group: &str,
    page: usize,
) -> Result<Vec<EventRecord>, StoreError> {
    let mut events = Vec::new();
    let mut after = 0;
    loop {
        let next = store.replay(group, after, page)?;
        events.extend(next.events);
        match next.continuation {
            Some(cursor) => after = cursor,
            None => return Ok(events),
        }
    }
}

fn mission(store: &SqliteStore, id: &str) -> Result<Option<u64>, StoreError> {
    Ok(store
        .aggregate(&AggregateKey::new("mission", id))?
        .map(|a| a.revision))
}

#[test]
fn the_untouched_store_reads_fine_from_every_cursor_and_page_size() {
    let f = fixture(6);
    for page in [1, 2, 4, 100] {
        let events = replay_all(&f.store, "g", page).unwrap();
        let expected: Vec<EventRecord> = (1..=6)
            .map(|s| EventRecord::new(s, &format!("g-e{s}"), &body("g", s)[..]))
            .collect();
        assert_eq!(events, expected);
    }
    for after in 0..=7 {
        let page = f.store.replay("g", after, 2).unwrap();
        assert_eq!(
            page.events.first().map(|e| e.sequence),
            (after < 6).then_some(after + 1)
        );
    }
    assert_eq!(f.store.head("g").unwrap().next_sequence, 7);
    assert_eq!(mission(&f.store, "m").unwrap(), Some(2));
    assert_eq!(f.store.list("mission", "m").unwrap().len(), 2);
    // Appends keep extending the verified chain, also through a group commit.
    let mut tx = Transaction::new();
    tx.append("g", EventRecord::new(7, "g-e7", &b"{}"[..]));
    let mut tx2 = Transaction::new();
    tx2.append("g", EventRecord::new(8, "g-e8", &b"{}"[..]));
    for result in f.store.commit_many(vec![tx, tx2]) {
        result.unwrap();
    }
    assert_eq!(replay_all(&f.store, "g", 3).unwrap().len(), 8);
}

#[test]
fn a_changed_event_body_is_detected() {
    let f = fixture(5);
    f.raw
        .execute(
            "UPDATE events SET body = ?1 WHERE group_id = 'g' AND sequence = 3",
            [&b"{\"group\":\"g\",\"n\":3,\"forged\":true}"[..]],
        )
        .unwrap();
    let detail = corrupt(f.store.replay("g", 0, 10), "event", "g #3");
    assert!(detail.contains("do not match its hash chain"), "{detail}");
    // A page that does not include the row still serves; one that does never does.
    assert_eq!(f.store.replay("g", 0, 2).unwrap().events.len(), 2);
    corrupt(f.store.replay("g", 2, 1), "event", "g #3");
    assert_eq!(f.store.replay("g", 3, 10).unwrap().events.len(), 2);
    // Another Group is unaffected.
    assert_eq!(replay_all(&f.store, "h", 2).unwrap().len(), 5);
}

#[test]
fn a_changed_event_id_is_detected() {
    let f = fixture(4);
    f.raw
        .execute(
            "UPDATE events SET event_id = 'g-forged' WHERE group_id = 'g' AND sequence = 2",
            [],
        )
        .unwrap();
    corrupt(f.store.replay("g", 0, 10), "event", "g #2");
}

#[test]
fn a_deleted_middle_row_is_a_gap() {
    let f = fixture(5);
    f.raw
        .execute(
            "DELETE FROM events WHERE group_id = 'g' AND sequence = 3",
            [],
        )
        .unwrap();
    // Read across: the row after the gap is out of place.
    let detail = corrupt(f.store.replay("g", 0, 10), "event", "g #4");
    assert!(detail.contains("sequence 3 is missing"), "{detail}");
    // Read from just after it: the chain has no anchor.
    let detail = corrupt(f.store.replay("g", 3, 10), "event", "g #3");
    assert!(detail.contains("sequence 3 is missing"), "{detail}");
    // The head is still consistent with the last row.
    assert_eq!(f.store.head("g").unwrap().next_sequence, 6);
}

#[test]
fn a_deleted_last_row_makes_the_head_promise_more_than_exists() {
    let f = fixture(5);
    f.raw
        .execute(
            "DELETE FROM events WHERE group_id = 'g' AND sequence = 5",
            [],
        )
        .unwrap();
    let detail = corrupt(f.store.head("g"), "event", "g #5");
    assert!(
        detail.contains("the head says the log reaches it"),
        "{detail}"
    );
    corrupt(f.store.replay("g", 0, 10), "event", "g #5");
    // Nothing is appended to a damaged log.
    let mut tx = Transaction::new();
    tx.append("g", EventRecord::new(6, "g-e6", &b"{}"[..]));
    corrupt(f.store.commit(tx), "event", "g #5");
    let rows: i64 = f
        .raw
        .query_row(
            "SELECT count(*) FROM events WHERE group_id = 'g'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(rows, 4);
}

#[test]
fn a_row_past_the_head_is_detected() {
    let f = fixture(3);
    f.raw
        .execute(
            "INSERT INTO events (group_id, sequence, event_id, body, chain_hash) \
             SELECT group_id, 4, 'g-e4', body, chain_hash FROM events \
             WHERE group_id = 'g' AND sequence = 3",
            [],
        )
        .unwrap();
    let detail = corrupt(f.store.head("g"), "group", "g");
    assert!(detail.contains("row #4 lies past the head"), "{detail}");
}

#[test]
fn swapped_bodies_are_detected() {
    let f = fixture(4);
    f.raw
        .execute_batch(
            "UPDATE events SET body = (SELECT body FROM events WHERE group_id = 'g' AND sequence = 3) \
               WHERE group_id = 'g' AND sequence = 2;
             UPDATE events SET body = (SELECT body FROM events WHERE group_id = 'h' AND sequence = 2) \
               WHERE group_id = 'g' AND sequence = 3;",
        )
        .unwrap();
    corrupt(f.store.replay("g", 0, 10), "event", "g #2");
    corrupt(f.store.replay("g", 2, 10), "event", "g #3");
}

#[test]
fn swapped_rows_with_their_hashes_break_the_chain() {
    // Moving whole rows (body, ID and stored hash) to other positions still fails: each chain
    // hash binds its sequence and the hash before it.
    let f = fixture(4);
    f.raw
        .execute_batch(
            "UPDATE events SET sequence = 100 WHERE group_id = 'g' AND sequence = 2;
             UPDATE events SET sequence = 2 WHERE group_id = 'g' AND sequence = 3;
             UPDATE events SET sequence = 3 WHERE group_id = 'g' AND sequence = 100;",
        )
        .unwrap();
    corrupt(f.store.replay("g", 0, 10), "event", "g #2");
}

#[test]
fn an_aggregate_revision_bumped_by_raw_sql_is_detected() {
    let f = fixture(1);
    f.raw
        .execute(
            "UPDATE aggregates SET revision = revision + 1 WHERE kind = 'mission' AND id = 'm'",
            [],
        )
        .unwrap();
    let detail = corrupt(mission(&f.store, "m"), "aggregate", "mission m");
    assert!(detail.contains("revision 3"), "{detail}");
    corrupt(f.store.list("mission", ""), "aggregate", "mission m");
    // The other aggregate still reads.
    assert_eq!(mission(&f.store, "m2").unwrap(), Some(1));
}

#[test]
fn an_edited_aggregate_value_is_detected() {
    let f = fixture(1);
    f.raw
        .execute(
            "UPDATE aggregates SET value = ?1 WHERE kind = 'mission' AND id = 'm2'",
            [&b"{\"v\":200}"[..]],
        )
        .unwrap();
    corrupt(mission(&f.store, "m2"), "aggregate", "mission m2");
    corrupt(f.store.list("mission", "m2"), "aggregate", "mission m2");
    assert_eq!(mission(&f.store, "m").unwrap(), Some(2));
}

#[test]
fn a_stored_hash_of_31_bytes_is_detected() {
    let f = fixture(3);
    f.raw
        .execute(
            "UPDATE events SET chain_hash = substr(chain_hash, 1, 31) \
             WHERE group_id = 'g' AND sequence = 2",
            [],
        )
        .unwrap();
    let detail = corrupt(f.store.replay("g", 0, 10), "event", "g #2");
    assert!(detail.contains("31 bytes, not 32"), "{detail}");
    // As the anchor of a later page, too.
    corrupt(f.store.replay("g", 2, 10), "event", "g #2");

    f.raw
        .execute(
            "UPDATE aggregates SET checksum = substr(checksum, 1, 31) WHERE id = 'm'",
            [],
        )
        .unwrap();
    let detail = corrupt(mission(&f.store, "m"), "aggregate", "mission m");
    assert!(detail.contains("31 bytes"), "{detail}");

    f.raw
        .execute(
            "UPDATE groups SET chain_before = substr(chain_before, 1, 31) WHERE group_id = 'h'",
            [],
        )
        .unwrap();
    corrupt(f.store.head("h"), "group", "h");
}

#[test]
fn an_archived_log_verifies_from_its_stored_chain_before() {
    let f = fixture(5);
    f.store
        .archive_before(
            "g",
            3,
            SnapshotPointer {
                artifact_hash: "sha256:snap".into(),
            },
        )
        .unwrap();
    let too_old = replay_all(&f.store, "g", 2).unwrap_err();
    assert_eq!(too_old.wire_code(), WireCode::CursorTooOld);
    let page = f.store.replay("g", 2, 10).unwrap();
    assert_eq!(page.events.len(), 3);
    // Archiving everything leaves an empty online log that still appends and verifies.
    f.store
        .archive_before(
            "g",
            6,
            SnapshotPointer {
                artifact_hash: "sha256:snap2".into(),
            },
        )
        .unwrap();
    let mut tx = Transaction::new();
    tx.append("g", EventRecord::new(6, "g-e6", &b"{}"[..]));
    f.store.commit(tx).unwrap();
    assert_eq!(f.store.replay("g", 5, 10).unwrap().events.len(), 1);

    // A forged anchor breaks the head's checksum, and with the head's checksum recomputed (the
    // store is unkeyed: anyone can) the first online row.
    f.raw
        .execute(
            "UPDATE groups SET chain_before = zeroblob(32) WHERE group_id = 'g'",
            [],
        )
        .unwrap();
    corrupt(f.store.replay("g", 5, 10), "group", "g");
    let head = GroupHead {
        next_sequence: 7,
        first_online: 6,
        snapshot: Some(SnapshotPointer {
            artifact_hash: "sha256:snap2".into(),
        }),
    };
    let checksum = Integrity::unkeyed().head_checksum("g", &head, &[0; 32]);
    f.raw
        .execute(
            "UPDATE groups SET checksum = ?1 WHERE group_id = 'g'",
            [&checksum[..]],
        )
        .unwrap();
    corrupt(f.store.replay("g", 5, 10), "event", "g #6");
}

/// Deterministic pseudo-random numbers (xorshift64*), so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Any single-byte change of any stored Event body, at any offset, to any other value, is
/// detected by the replay that would serve it, and names that row; restoring the byte
/// restores the log.
#[test]
fn random_single_byte_flips_in_any_event_body_are_always_detected() {
    let f = fixture(8);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..400 {
        let group = if rng.below(2) == 0 { "g" } else { "h" };
        let sequence = rng.below(8) + 1;
        let original: Vec<u8> = f
            .raw
            .query_row(
                "SELECT body FROM events WHERE group_id = ?1 AND sequence = ?2",
                params![group, sequence as i64],
                |r| r.get(0),
            )
            .unwrap();
        let mut flipped = original.clone();
        let at = rng.below(flipped.len() as u64) as usize;
        let mask = (rng.below(255) + 1) as u8;
        flipped[at] ^= mask;
        let set = |bytes: &[u8]| {
            f.raw
                .execute(
                    "UPDATE events SET body = ?3 WHERE group_id = ?1 AND sequence = ?2",
                    params![group, sequence as i64, bytes],
                )
                .unwrap();
        };
        set(&flipped);
        let page = 1 + rng.below(8) as usize;
        let result = replay_all(&f.store, group, page);
        corrupt(result, "event", &format!("{group} #{sequence}"));
        set(&original);
        if round % 50 == 0 {
            assert_eq!(replay_all(&f.store, group, page).unwrap().len(), 8);
        }
    }
}

#[test]
fn a_revision_that_is_not_an_integer_is_detected_by_reads_and_commits() {
    let f = fixture(1);
    f.raw
        .execute(
            "UPDATE aggregates SET revision = 'two' WHERE kind = 'mission' AND id = 'm'",
            [],
        )
        .unwrap();
    let detail = corrupt(mission(&f.store, "m"), "aggregate", "mission m");
    assert!(detail.contains("not an integer"), "{detail}");
    let mut tx = Transaction::new();
    tx.put(AggregateKey::new("mission", "m"), 2, b"{}"[..].into());
    corrupt(f.store.commit(tx), "aggregate", "mission m");
}

/// A file SQLite itself finds damaged or not a database (`SQLITE_NOTADB`, `SQLITE_CORRUPT`) is
/// damaged data at rest (`store_corrupt`, not retryable), not a transient backend failure.
#[test]
fn a_file_that_is_not_a_database_is_corrupt_not_a_backend_failure() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite");
    std::fs::write(&path, vec![0x5a; 8192]).unwrap();
    let Err(error) = SqliteStore::open(&path) else {
        panic!("a file that is not a database was opened");
    };
    assert!(
        matches!(&error, StoreError::Corrupt { what: "database", locator, .. } if locator == "file"),
        "{error:?}"
    );
    assert_eq!(error.wire_code(), WireCode::InternalError);
    assert_eq!(error.reason(), "store_corrupt");
    assert!(!error.retryable());
    assert!(error.is_failure());
}
