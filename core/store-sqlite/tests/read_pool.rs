//! The file store's read connections: reads proceed while a commit holds the writer, see the
//! last committed state (never an uncommitted one), and the pool size is configurable
//! (`docs/store.md`, "Group commit and concurrency").
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use missionweaveprotocol_engine::store::suite::event;
use missionweaveprotocol_engine::store::{AggregateKey, Store, Transaction};
use missionweaveprotocol_store_sqlite::{SqliteOptions, SqliteStore, default_readers};

fn put(key: &AggregateKey, expected: u64, value: &str) -> Transaction {
    let mut tx = Transaction::new();
    tx.put(key.clone(), expected, value.as_bytes().into());
    tx
}

#[test]
fn pool_size_is_configurable_and_memory_keeps_one_connection() {
    let dir = tempfile::tempdir().unwrap();
    let default = SqliteStore::open(dir.path().join("a.sqlite")).unwrap();
    assert_eq!(default.read_connections(), default_readers());
    assert!((1..=8).contains(&default_readers()));
    let two = SqliteStore::open_with(
        dir.path().join("b.sqlite"),
        &SqliteOptions {
            readers: 2,
            ..SqliteOptions::default()
        },
    )
    .unwrap();
    assert_eq!(two.read_connections(), 2);
    let none = SqliteStore::open_with(
        dir.path().join("c.sqlite"),
        &SqliteOptions {
            readers: 0,
            ..SqliteOptions::default()
        },
    )
    .unwrap();
    assert_eq!(none.read_connections(), 0);
    assert_eq!(SqliteStore::in_memory().unwrap().read_connections(), 0);

    // A small writer cache and one reader change speed, never results.
    let small = SqliteStore::open_with(
        dir.path().join("d.sqlite"),
        &SqliteOptions {
            readers: 1,
            writer_cache_kib: 16,
            ..SqliteOptions::default()
        },
    )
    .unwrap();
    assert_eq!(small.read_connections(), 1);
    for i in 0..50 {
        let key = AggregateKey::new("mission", format!("m{i}"));
        small.commit(put(&key, 0, &"x".repeat(2_000))).unwrap();
    }
    assert_eq!(small.list("mission", "m").unwrap().len(), 50);

    // Without a pool, reads go through the writer connection and still see every commit.
    let key = AggregateKey::new("mission", "m");
    none.commit(put(&key, 0, "{}")).unwrap();
    assert_eq!(none.aggregate(&key).unwrap().unwrap().revision, 1);
}

/// A commit waiting for the database's write lock (held here by another connection, as another
/// process would) holds the writer connection; reads through the pool still answer at once,
/// with the last committed state and not the other connection's uncommitted row.
#[test]
fn reads_do_not_wait_behind_a_commit_in_progress() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite");
    let store = SqliteStore::open(&path).unwrap();
    let key = AggregateKey::new("mission", "m");
    store.commit(put(&key, 0, "{\"v\":1}")).unwrap();

    // Another writer takes the write lock and leaves a change uncommitted.
    let other = rusqlite::Connection::open(&path).unwrap();
    other
        .execute_batch(
            "BEGIN IMMEDIATE; UPDATE aggregates SET revision = 99 WHERE kind = 'mission';",
        )
        .unwrap();

    let committed = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            // Waits (busy timeout) for `other`'s lock while holding the writer connection.
            let result = store.commit(put(&AggregateKey::new("mission", "n"), 0, "{}"));
            committed.store(true, Ordering::SeqCst);
            result
        });
        // Let the commit reach SQLite's lock wait.
        std::thread::sleep(Duration::from_millis(200));
        let started = Instant::now();
        for _ in 0..50 {
            let read = store.aggregate(&key).unwrap().unwrap();
            assert_eq!(read.revision, 1, "a read saw an uncommitted change");
            assert_eq!(&*read.value, b"{\"v\":1}");
            assert_eq!(store.head("g").unwrap().next_sequence, 1);
        }
        assert!(
            !committed.load(Ordering::SeqCst),
            "the commit was expected to still wait for the other writer"
        );
        assert!(started.elapsed() < Duration::from_secs(2));
        other.execute_batch("ROLLBACK").unwrap();
        writer.join().unwrap().unwrap();
    });
    assert_eq!(
        store
            .aggregate(&AggregateKey::new("mission", "n"))
            .unwrap()
            .unwrap()
            .revision,
        1
    );
}

/// Read-your-writes through the pool: a thread that committed reads its own commit at once,
/// from whichever read connection it gets, while other threads commit and read too.
#[test]
fn pooled_reads_see_every_commit_that_returned() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open_with(
        dir.path().join("store.sqlite"),
        &SqliteOptions {
            readers: 3,
            ..SqliteOptions::default()
        },
    )
    .unwrap();
    std::thread::scope(|scope| {
        for thread in 0..6 {
            let store = &store;
            scope.spawn(move || {
                let key = AggregateKey::new("counter", format!("c{thread}"));
                let group = format!("g{thread}");
                for i in 0..15 {
                    let mut tx = put(&key, i, &format!("{i}"));
                    tx.append(&group, event(&group, i + 1));
                    store.commit(tx).unwrap();
                    let read = store.aggregate(&key).unwrap().unwrap();
                    assert_eq!(read.revision, i + 1);
                    assert_eq!(store.head(&group).unwrap().next_sequence, i + 2);
                    let page = store.replay(&group, 0, 100).unwrap();
                    assert_eq!(page.events.len() as u64, i + 1);
                    assert_eq!(page.last_sequence, i + 1);
                }
            });
        }
    });
}

/// `head` checks the head row against the log's last and next rows (three statements): under
/// a writer appending all the while, it must read them on one snapshot and never mistake a
/// fresh commit for a row past the head.
#[test]
fn head_reads_one_snapshot_while_a_writer_appends() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("h.sqlite")).unwrap();
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            for sequence in 1..=3_000 {
                let mut tx = Transaction::new();
                tx.append("g", event("g", sequence));
                store.commit(tx).unwrap();
            }
            done.store(true, Ordering::SeqCst);
        });
        for _ in 0..3 {
            s.spawn(|| {
                let mut last = 0;
                while !done.load(Ordering::SeqCst) {
                    let head = store.head("g").unwrap();
                    assert!(head.next_sequence >= last, "the head never moves back");
                    last = head.next_sequence;
                }
            });
        }
    });
    assert_eq!(store.head("g").unwrap().next_sequence, 3_001);
}
