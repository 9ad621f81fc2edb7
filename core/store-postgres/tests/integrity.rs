//! Bad data at rest (issue 11): a row changed behind the store's back is detected when read
//! and reported as `StoreError::Corrupt` (`INTERNAL_ERROR`, `store_corrupt`), never served;
//! what the store refuses to open; what survives a reconnect; a server that is not there is a
//! typed backend error, never a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::TestStore;
use missionweaveprotocol::{DescribeError, WireCode};
use missionweaveprotocol_engine::store::suite::{appends, event};
use missionweaveprotocol_engine::store::{
    AggregateKey, EventRecord, EventRef, GroupHead, Integrity, Receipt, ReceiptKey,
    SnapshotPointer, Store, StoreError, Transaction,
};
use missionweaveprotocol_store_postgres::{PostgresOptions, PostgresStore, SCHEMA_VERSION};

fn corrupt<T: std::fmt::Debug>(result: Result<T, StoreError>, locator: &str) -> StoreError {
    let e = result.unwrap_err();
    assert!(matches!(e, StoreError::Corrupt { .. }), "{e:?}");
    assert_eq!(e.wire_code(), WireCode::InternalError);
    assert_eq!(DescribeError::reason(&e), "store_corrupt");
    assert!(e.to_string().contains(locator), "{e}");
    e
}

/// Group `g` with Events 1..=5 and aggregate `mission m` at revision 2.
fn filled() -> TestStore {
    let store = TestStore::new();
    store.commit(appends("g", 1, 5)).unwrap();
    let key = AggregateKey::new("mission", "m");
    let mut tx = Transaction::new();
    tx.put(key.clone(), 0, b"{\"v\":1}"[..].into());
    store.commit(tx).unwrap();
    let mut tx = Transaction::new();
    tx.put(key, 1, b"{\"v\":2}"[..].into());
    store.commit(tx).unwrap();
    store
}

fn sql(store: &TestStore, statement: &str) {
    let changed = store.raw().execute(statement, &[]).unwrap();
    assert_eq!(changed, 1, "{statement}");
}

#[test]
fn untouched_rows_verify_page_by_page() {
    let store = filled();
    for limit in 1..=6 {
        let mut after = 0;
        let mut seen = Vec::new();
        loop {
            let page = store.replay("g", after, limit).unwrap();
            for e in &page.events {
                assert_eq!(*e, event("g", e.sequence));
                seen.push(e.sequence);
            }
            match page.continuation {
                Some(next) => after = next,
                None => break,
            }
        }
        assert_eq!(seen, vec![1, 2, 3, 4, 5], "pages of {limit}");
    }
    let m = store
        .aggregate(&AggregateKey::new("mission", "m"))
        .unwrap()
        .unwrap();
    assert_eq!((m.revision, &*m.value), (2, &b"{\"v\":2}"[..]));
}

#[test]
fn a_changed_event_body_is_corrupt_in_every_page_holding_it() {
    let store = filled();
    sql(
        &store,
        "UPDATE events SET body = convert_to('{\"forged\":true}', 'UTF8') \
         WHERE group_id = 'g' AND sequence = 3",
    );
    corrupt(store.replay("g", 0, 10), "g #3");
    corrupt(store.replay("g", 2, 1), "g #3");
    // Pages before it are still served; the page after it chains from its stored hash.
    assert_eq!(store.replay("g", 0, 2).unwrap().events.len(), 2);
    assert_eq!(store.replay("g", 3, 10).unwrap().events.len(), 2);
}

#[test]
fn a_changed_event_id_or_a_recomputed_hash_breaks_the_chain() {
    let store = filled();
    sql(
        &store,
        "UPDATE events SET event_id = 'other' WHERE group_id = 'g' AND sequence = 2",
    );
    corrupt(store.replay("g", 0, 10), "g #2");
    let store = filled();
    // A forger who changes a body and its own hash breaks the next row's link.
    sql(
        &store,
        "UPDATE events SET chain_hash = sha256(chain_hash) WHERE group_id = 'g' AND sequence = 2",
    );
    corrupt(store.replay("g", 0, 10), "g #2");
    corrupt(store.replay("g", 2, 10), "g #3");
}

#[test]
fn a_deleted_event_is_a_missing_sequence_and_blocks_appends_after_a_missing_head() {
    let store = filled();
    sql(
        &store,
        "DELETE FROM events WHERE group_id = 'g' AND sequence = 3",
    );
    let e = corrupt(store.replay("g", 0, 10), "g #");
    assert!(e.to_string().contains("sequence 3 is missing"), "{e}");
    let e = corrupt(store.replay("g", 3, 10), "g #");
    assert!(e.to_string().contains("sequence 3 is missing"), "{e}");
    assert_eq!(store.replay("g", 0, 2).unwrap().events.len(), 2);

    let store = filled();
    sql(
        &store,
        "DELETE FROM events WHERE group_id = 'g' AND sequence = 5",
    );
    corrupt(store.replay("g", 0, 10), "g #5");
    // An append would chain onto a row that is gone: refused, nothing written.
    corrupt(store.commit(appends("g", 6, 1)), "g #5");
    assert_eq!(store.head("g").unwrap().next_sequence, 6);
}

#[test]
fn an_edited_revision_or_value_is_corrupt_on_read_and_at_commit() {
    let key = AggregateKey::new("mission", "m");
    let store = filled();
    sql(
        &store,
        "UPDATE aggregates SET revision = 7 WHERE kind = 'mission'",
    );
    corrupt(store.aggregate(&key), "mission m");
    corrupt(store.list("mission", ""), "mission m");
    let mut tx = Transaction::new();
    tx.put(key.clone(), 7, b"{}"[..].into());
    corrupt(store.commit(tx), "mission m");
    // Checked only (not written): refused as well.
    let mut tx = Transaction::new();
    tx.append("g", event("g", 6)).check(key.clone(), 7);
    corrupt(store.commit(tx), "mission m");
    assert_eq!(store.head("g").unwrap().next_sequence, 6);

    let store = filled();
    sql(
        &store,
        "UPDATE aggregates SET value = convert_to('{\"v\":9}', 'UTF8') WHERE kind = 'mission'",
    );
    corrupt(store.aggregate(&key), "mission m");
    // Other aggregates are still served.
    let mut tx = Transaction::new();
    tx.put(AggregateKey::new("mission", "n"), 0, b"{}"[..].into());
    store.commit(tx).unwrap();
    assert_eq!(store.list("mission", "n").unwrap().len(), 1);
}

#[test]
fn archival_keeps_the_online_chain_verifiable_and_its_anchor_is_checked() {
    let store = filled();
    let snapshot = SnapshotPointer {
        artifact_hash: "sha256:snap".into(),
    };
    store.archive_before("g", 3, snapshot).unwrap();
    let page = store.replay("g", 2, 10).unwrap();
    assert_eq!(
        page.events.iter().map(|e| e.sequence).collect::<Vec<_>>(),
        vec![3, 4, 5]
    );
    store.commit(appends("g", 6, 2)).unwrap();
    assert_eq!(store.replay("g", 2, 10).unwrap().events.len(), 5);
    assert_eq!(
        store.replay("g", 0, 10).unwrap_err().wire_code(),
        WireCode::CursorTooOld
    );
    sql(
        &store,
        "UPDATE groups SET chain_before = sha256(chain_before) WHERE group_id = 'g'",
    );
    // The head's checksum covers its anchor; with the checksum recomputed (the store is
    // unkeyed: anyone can), the first online Event no longer chains from it.
    corrupt(store.replay("g", 2, 10), "group g");
    let mut raw = store.raw();
    let forged: Vec<u8> = raw
        .query_one("SELECT chain_before FROM groups WHERE group_id = 'g'", &[])
        .unwrap()
        .get(0);
    let head = GroupHead {
        next_sequence: 8,
        first_online: 3,
        snapshot: Some(SnapshotPointer {
            artifact_hash: "sha256:snap".into(),
        }),
    };
    let checksum = Integrity::unkeyed()
        .head_checksum("g", &head, &forged.try_into().unwrap())
        .to_vec();
    raw.execute(
        "UPDATE groups SET checksum = $1 WHERE group_id = 'g'",
        &[&checksum],
    )
    .unwrap();
    corrupt(store.replay("g", 2, 10), "g #3");
}

#[test]
fn a_damaged_receipt_is_corrupt() {
    let store = TestStore::new();
    let key = ReceiptKey::new("agent", "a", "x");
    let mut tx = Transaction::new();
    tx.record_receipt(
        key.clone(),
        Receipt {
            signing_hash: "sha256:aa".into(),
            first_event: EventRef {
                event_id: "e1".into(),
                position: Some(("g".into(), 1)),
            },
        },
    )
    .append("g", event("g", 1));
    store.commit(tx).unwrap();
    sql(&store, "UPDATE receipts SET sequence = NULL");
    corrupt(store.receipt(&key), "receipt agent a x");
}

#[test]
fn text_postgres_cannot_hold_is_refused_before_anything_is_written_and_never_found() {
    let store = TestStore::new();
    let mut tx = Transaction::new();
    tx.append("g", event("g", 1))
        .put(AggregateKey::new("mission", "nul\0"), 0, b"{}"[..].into());
    let e = store.commit(tx).unwrap_err();
    assert_eq!(e.wire_code(), WireCode::ProtocolViolation, "{e}");
    assert_eq!(store.head("g").unwrap().next_sequence, 1);
    let mut ok = Transaction::new();
    ok.append("g", event("g", 1));
    let mut bad = Transaction::new();
    bad.append("g\0", event("g\0", 1));
    let results = store.commit_many(vec![bad, ok]);
    assert!(matches!(
        results[0],
        Err(StoreError::InvalidArgument { .. })
    ));
    assert!(results[1].is_ok());
    assert_eq!(
        store.aggregate(&AggregateKey::new("a\0", "b")).unwrap(),
        None
    );
    assert_eq!(store.head("g\0").unwrap().next_sequence, 1);
    assert!(store.replay("g\0", 0, 5).unwrap().events.is_empty());
    assert!(store.list("a", "\0").unwrap().is_empty());
}

#[test]
fn a_reconnected_store_keeps_everything_and_continues_the_log() {
    let store = filled();
    let again = store.another();
    assert_eq!(again.head("g").unwrap().next_sequence, 6);
    assert_eq!(again.replay("g", 0, 10).unwrap().events.len(), 5);
    let mut tx = Transaction::new();
    tx.append("g", EventRecord::new(1, "again", &b"{}"[..]));
    assert!(matches!(
        again.commit(tx),
        Err(StoreError::SequenceConflict { next: 6, .. })
    ));
    again.commit(appends("g", 6, 1)).unwrap();
    assert_eq!(store.replay("g", 5, 10).unwrap().events.len(), 1);
}

#[test]
fn a_newer_or_foreign_schema_is_refused() {
    let store = TestStore::new();
    store
        .raw()
        .execute(
            "INSERT INTO schema_version (version) VALUES ($1)",
            &[&(SCHEMA_VERSION + 1)],
        )
        .unwrap();
    let e = PostgresStore::connect_with(
        common::url(),
        PostgresOptions::default().schema(store.store.schema()),
    )
    .unwrap_err();
    assert!(e.to_string().contains("newer"), "{e}");

    let schema = common::fresh_schema();
    let mut raw = postgres::Client::connect(common::url(), postgres::NoTls).unwrap();
    raw.batch_execute(&format!(
        "CREATE SCHEMA {schema}; CREATE TABLE {schema}.other (x int)"
    ))
    .unwrap();
    let e = PostgresStore::connect_with(common::url(), PostgresOptions::default().schema(&schema))
        .unwrap_err();
    assert!(
        e.to_string().contains("not a MissionWeaveProtocol store"),
        "{e}"
    );
    raw.batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
        .unwrap();
}

#[test]
fn no_server_or_a_bad_url_is_a_typed_error() {
    // A port nobody listens on (the cluster's port plus one is free or refuses us anyway).
    let e = PostgresStore::connect("postgresql://mwp@127.0.0.1:1/mwp").unwrap_err();
    assert!(matches!(e, StoreError::Backend { .. }), "{e:?}");
    assert_eq!(e.wire_code(), WireCode::InternalError);
    let e = PostgresStore::connect("not a url ://").unwrap_err();
    assert!(matches!(e, StoreError::InvalidArgument { .. }), "{e:?}");
}

#[test]
fn the_server_going_away_is_a_backend_error_and_the_pool_reconnects() {
    let schema = common::fresh_schema();
    // Its sessions carry a name of their own, so this test ends only them.
    let base = common::url();
    let separator = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{separator}application_name={schema}");
    let store =
        PostgresStore::connect_with(&url, PostgresOptions::default().schema(&schema)).unwrap();
    store.commit(appends("g", 1, 5)).unwrap();
    let mut raw = common::raw(&schema);
    let ended = raw
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE application_name = $1",
            &[&schema],
        )
        .unwrap();
    assert!(ended.get::<_, i64>(0) >= 1);
    // A call on a dead connection fails with a backend error; the pool drops it and the next
    // call opens a fresh one.
    let mut failures = 0;
    let mut served = false;
    for _ in 0..10 {
        match store.head("g") {
            Ok(head) => {
                assert_eq!(head.next_sequence, 6);
                served = true;
                break;
            }
            Err(e) => {
                assert!(matches!(e, StoreError::Backend { .. }), "{e:?}");
                failures += 1;
            }
        }
    }
    assert!(served, "{failures} failures and never served again");
    assert!(failures >= 1, "the terminated connection was not used");
    store.commit(appends("g", 6, 1)).unwrap();
    store.drop_schema().unwrap();
}
