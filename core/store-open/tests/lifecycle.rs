//! Opening stores by URL and the created → open → closed life cycle the bindings share.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use missionweaveprotocol::{DescribeError, ErrorClass, WireCode};
use missionweaveprotocol_engine::store::{
    AggregateKey, EventRecord, IntegrityKey, Store, StoreError, StoreOptions, Transaction,
};
use missionweaveprotocol_store_open::{
    LifecycleError, ManagedStore, SharedStore, StoreUrl, open, open_with,
};

fn append(store: &dyn Store, group: &str) -> u64 {
    let next = store.head(group).unwrap().next_sequence;
    let mut tx = Transaction::new();
    tx.append(
        group,
        EventRecord::new(next, &format!("e{next}"), &b"{}"[..]),
    )
    .put(
        AggregateKey::new("mission", format!("m{next}")),
        0,
        b"{}"[..].into(),
    );
    store.commit(tx).unwrap();
    next
}

#[test]
fn a_sqlite_file_keeps_its_log_across_opens() {
    let dir = tempfile::tempdir().unwrap();
    let url = StoreUrl::sqlite_path(dir.path().join("a.db").to_str().unwrap()).unwrap();
    let first: SharedStore = open(&url).unwrap();
    assert_eq!(append(&*first, "g"), 1);
    assert_eq!(append(&*first, "g"), 2);
    drop(first);
    let again = open(&url).unwrap();
    assert_eq!(again.head("g").unwrap().next_sequence, 3);
    assert_eq!(append(&*again, "g"), 3);
    // The URL spelling of the same file opens the same database.
    let text = format!("sqlite:///{}", dir.path().join("a.db").display());
    let by_url = open(&StoreUrl::parse(&text).unwrap()).unwrap();
    assert_eq!(by_url.replay("g", 0, 10).unwrap().events.len(), 3);
}

#[test]
fn sqlite_memory_stores_are_private() {
    let url = StoreUrl::parse("sqlite:///:memory:").unwrap();
    let a = open(&url).unwrap();
    let b = open(&url).unwrap();
    append(&*a, "g");
    assert_eq!(a.head("g").unwrap().next_sequence, 2);
    assert_eq!(b.head("g").unwrap().next_sequence, 1);
}

#[test]
fn a_sqlite_path_that_cannot_be_opened_is_a_backend_error() {
    let dir = tempfile::tempdir().unwrap();
    let url = StoreUrl::sqlite_path(dir.path().join("missing/dir/a.db").to_str().unwrap()).unwrap();
    let error = open(&url).err().expect("no such directory");
    assert!(matches!(error, StoreError::Backend { .. }), "{error:?}");
    assert_eq!(error.wire_code(), WireCode::InternalError);
}

#[test]
fn managed_store_life_cycle() {
    let dir = tempfile::tempdir().unwrap();
    let url = StoreUrl::sqlite_path(dir.path().join("m.db").to_str().unwrap()).unwrap();
    let managed = Arc::new(ManagedStore::new(url));
    assert!(!managed.is_open());
    // Before initialize: a typed lifecycle error, and store calls fail without opening anything.
    let error = managed.ensure_open().unwrap_err();
    assert_eq!(error, LifecycleError::NotInitialized);
    assert_eq!(error.class(), ErrorClass::Argument);
    assert_eq!(error.reason(), "store-not-initialized");
    let error = managed.head("g").unwrap_err();
    assert_eq!(error, StoreError::NotOpen { closed: false });
    assert_eq!(error.reason(), "store_not_initialized");
    assert_eq!(error.wire_code(), WireCode::InternalError);
    assert!(!error.retryable(), "only initialize() opens it");
    assert!(!dir.path().join("m.db").exists());

    managed.initialize().unwrap();
    managed.initialize().unwrap(); // idempotent while open
    assert!(managed.is_open());
    managed.ensure_open().unwrap();
    let shared: SharedStore = managed.clone();
    assert_eq!(append(&*shared, "g"), 1);
    let mut txs = Vec::new();
    for seq in [2, 3] {
        let mut tx = Transaction::new();
        tx.append("g", EventRecord::new(seq, &format!("e{seq}"), &b"{}"[..]));
        txs.push(tx);
    }
    assert!(shared.commit_many(txs).iter().all(Result::is_ok));

    assert!(managed.close());
    assert!(!managed.close()); // idempotent
    assert_eq!(managed.ensure_open().unwrap_err(), LifecycleError::Closed);
    assert_eq!(managed.initialize().unwrap_err(), LifecycleError::Closed);
    assert_eq!(LifecycleError::Closed.reason(), "store-closed");
    // A core's handle no longer reaches the database.
    // A core's handle no longer reaches the database: a store failure, not a conflict, and not
    // retryable (an unchanged retry fails the same way).
    let error = shared.head("g").unwrap_err();
    assert!(error.to_string().contains("closed"), "{error}");
    assert_eq!(error, StoreError::NotOpen { closed: true });
    assert_eq!(error.reason(), "store_closed");
    assert!(error.is_failure() && !error.retryable());
    let described = missionweaveprotocol_engine::service::CoreError::describe(&error);
    assert_eq!(
        described.family,
        missionweaveprotocol_engine::service::ErrorFamily::StoreFailure
    );
    let mut tx = Transaction::new();
    tx.append("g", EventRecord::new(4, "e4", &b"{}"[..]));
    let results = shared.commit_many(vec![tx]);
    assert_eq!(results.len(), 1);
    assert!(matches!(
        results[0],
        Err(StoreError::NotOpen { closed: true })
    ));

    // What was committed is on disk.
    let again = open(managed.url()).unwrap();
    assert_eq!(again.head("g").unwrap().next_sequence, 4);
}

/// A durable store opened by URL batches concurrent commits (`GroupCommit`): threads sharing it
/// each get their own result, and every commit that returned is on disk after a reopen.
#[test]
fn concurrent_commits_through_a_sqlite_url_all_land() {
    let dir = tempfile::tempdir().unwrap();
    let url = StoreUrl::sqlite_path(dir.path().join("c.db").to_str().unwrap()).unwrap();
    let store = open(&url).unwrap();
    std::thread::scope(|s| {
        for thread in 0..16 {
            let store = &store;
            s.spawn(move || {
                let group = format!("g{thread}");
                for sequence in 1..=8 {
                    let mut tx = Transaction::new();
                    tx.append(
                        &group,
                        EventRecord::new(sequence, &format!("{group}/e{sequence}"), &b"{}"[..]),
                    )
                    .put(
                        AggregateKey::new("mission", format!("{group}/m{sequence}")),
                        0,
                        b"{}"[..].into(),
                    );
                    store.commit(tx).unwrap();
                }
            });
        }
    });
    drop(store);
    let again = open(&url).unwrap();
    for thread in 0..16 {
        assert_eq!(again.head(&format!("g{thread}")).unwrap().next_sequence, 9);
    }
}

fn key(byte: u8) -> IntegrityKey {
    IntegrityKey::new(vec![byte; 32]).unwrap()
}

/// The integrity key travels beside the URL (`open_with`, `ManagedStore::with_options`): a
/// file sealed under it opens again with it only; without a key, with another key, or an
/// unkeyed file given a key it was not told to adopt, opening is a typed refusal and nothing
/// is opened. The key never shows in `Debug`.
#[test]
fn a_keyed_sqlite_file_opens_with_its_key_only() {
    let dir = tempfile::tempdir().unwrap();
    let url = StoreUrl::sqlite_path(dir.path().join("k.db").to_str().unwrap()).unwrap();
    let keyed = StoreOptions::keyed(key(1));
    let first = open_with(&url, &keyed).unwrap();
    assert_eq!(append(&*first, "g"), 1);
    drop(first);
    for refused in [
        StoreOptions::default(),
        StoreOptions::keyed(key(2)),
        StoreOptions::keyed(key(2)).adopting_key(),
    ] {
        let e = open_with(&url, &refused).err().expect("refused");
        assert_eq!(e.wire_code(), WireCode::InternalError, "{e}");
        assert_eq!(DescribeError::reason(&e), "integrity_key_refused");
        assert!(!DescribeError::retryable(&e));
        let managed = ManagedStore::with_options(url.clone(), refused);
        let e = managed.initialize().unwrap_err();
        assert!(
            matches!(
                &e,
                LifecycleError::Open(StoreError::IntegrityKeyRefused { .. })
            ),
            "{e:?}"
        );
        assert!(!managed.is_open());
    }
    let managed = ManagedStore::with_options(url.clone(), keyed);
    managed.initialize().unwrap();
    assert_eq!(managed.head("g").unwrap().next_sequence, 2);
    assert_eq!(append(&managed, "g"), 2);
    let shown = format!("{managed:?}");
    assert!(
        shown.contains("keyed: true") && !shown.contains("[1, 1"),
        "{shown}"
    );

    // An unkeyed file adopts a key only when told to.
    let plain = StoreUrl::sqlite_path(dir.path().join("plain.db").to_str().unwrap()).unwrap();
    append(&*open(&plain).unwrap(), "g");
    let e = open_with(&plain, &StoreOptions::keyed(key(3)))
        .err()
        .expect("refused");
    assert_eq!(DescribeError::reason(&e), "integrity_key_refused");
    let adopted = open_with(&plain, &StoreOptions::keyed(key(3)).adopting_key()).unwrap();
    assert_eq!(adopted.replay("g", 0, 10).unwrap().events.len(), 1);
    drop(adopted);
    assert!(open(&plain).is_err());
    open_with(&plain, &StoreOptions::keyed(key(3))).unwrap();
}
