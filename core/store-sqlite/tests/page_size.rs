//! The page size of a new database (`SqliteOptions::page_size`, default 16 KiB, `lib.rs`): a new
//! file and `:memory:` take it, an existing file keeps its own, a size SQLite cannot use is an
//! argument error, and Events larger than a 4 KiB page round-trip either way.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol_engine::store::{
    AggregateKey, EventRecord, Store, StoreError, Transaction,
};
use missionweaveprotocol_store_sqlite::{DEFAULT_PAGE_SIZE, SqliteOptions, SqliteStore};

fn with_page_size(page_size: u32) -> SqliteOptions {
    SqliteOptions {
        page_size,
        ..SqliteOptions::default()
    }
}

/// Appends Events of `size` bytes (bigger than a 4 KiB page's local payload) and reads them
/// back, with an aggregate of the same size.
fn round_trip(store: &SqliteStore, group: &str, size: usize) {
    let next = store.head(group).unwrap().next_sequence;
    let body = vec![b'x'; size];
    let mut tx = Transaction::new();
    for sequence in next..next + 3 {
        tx.append(
            group,
            EventRecord::new(sequence, &format!("{group}-{sequence}"), &body[..]),
        );
    }
    tx.put(
        AggregateKey::new("mission", format!("{group}-{next}")),
        0,
        body[..].into(),
    );
    store.commit(tx).unwrap();
    let page = store.replay(group, next - 1, 10).unwrap();
    assert_eq!(page.events.len(), 3);
    assert!(page.events.iter().all(|e| *e.body == body[..]));
    let stored = store
        .aggregate(&AggregateKey::new("mission", format!("{group}-{next}")))
        .unwrap()
        .unwrap();
    assert_eq!(*stored.value, body[..]);
}

#[test]
fn a_new_database_takes_the_page_size() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("new.sqlite")).unwrap();
    assert_eq!(store.page_size().unwrap(), DEFAULT_PAGE_SIZE);
    assert_eq!(DEFAULT_PAGE_SIZE, 16_384);
    round_trip(&store, "g", 6_000);
    let small =
        SqliteStore::open_with(dir.path().join("small.sqlite"), &with_page_size(4_096)).unwrap();
    assert_eq!(small.page_size().unwrap(), 4_096);
    round_trip(&small, "g", 6_000);
    let memory = SqliteStore::in_memory().unwrap();
    assert_eq!(memory.page_size().unwrap(), DEFAULT_PAGE_SIZE);
    round_trip(&memory, "g", 6_000);
}

#[test]
fn an_existing_database_keeps_its_page_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.sqlite");
    let old = SqliteStore::open_with(&path, &with_page_size(4_096)).unwrap();
    round_trip(&old, "g", 2_000);
    drop(old);
    // Reopened with the default (16 KiB): still 4 KiB, every row still there and writable.
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.page_size().unwrap(), 4_096);
    assert_eq!(store.head("g").unwrap().next_sequence, 4);
    round_trip(&store, "g", 2_000);
    assert_eq!(store.replay("g", 0, 10).unwrap().events.len(), 6);
}

#[test]
fn a_page_size_sqlite_cannot_use_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for bad in [0, 256, 1_000, 16_000, 131_072] {
        let error = SqliteStore::open_with(dir.path().join("bad.sqlite"), &with_page_size(bad))
            .unwrap_err();
        assert!(
            matches!(
                error,
                StoreError::InvalidArgument {
                    argument: "page_size",
                    ..
                }
            ),
            "{bad}: {error}"
        );
    }
    for good in [512, 65_536] {
        let store = SqliteStore::open_with(
            dir.path().join(format!("{good}.sqlite")),
            &with_page_size(good),
        )
        .unwrap();
        assert_eq!(store.page_size().unwrap(), good);
        round_trip(&store, "g", 5_000);
    }
}
