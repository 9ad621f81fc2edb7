//! SQLite store figures, printed as JSON lines (wall clock; the machine is shared, so they are
//! indications, not guarantees):
//!
//! - `sqlite_append`: one ~1 KB Event per `commit` (with its aggregate write), file
//!   (WAL, `synchronous=FULL`: one fsync per commit) and in memory;
//! - `sqlite_append_batched`: the same Events through `commit_many` in batches of 100 (one
//!   durable transaction, one fsync per batch);
//! - `sqlite_replay`: replay of the file store's log in pages of 1,000.
//!
//! Run: `cargo run --release -p missionweaveprotocol-store-sqlite --example bench_sqlite [N]`
//! (N defaults to 2000). Not a test: nothing here fails because the disk is slow.

use std::time::Instant;

use missionweaveprotocol_engine::store::{
    AggregateKey, EventRecord, Store, StoreError, Transaction,
};
use missionweaveprotocol_store_sqlite::SqliteStore;

fn fail(what: &str, e: &dyn std::fmt::Display) -> ! {
    eprintln!("benchmark failed: {what}: {e}");
    std::process::exit(1)
}

fn tx(group: &str, sequence: u64, body: &[u8]) -> Transaction {
    let mut tx = Transaction::new();
    let id = format!("urn:uuid:00000000-0000-4000-8000-{sequence:012}");
    tx.append(group, EventRecord::new(sequence, &id, body)).put(
        AggregateKey::new("work_item", format!("{group}/w{sequence}")),
        0,
        body.into(),
    );
    tx
}

fn appends(store: &SqliteStore, group: &str, n: u64, body: &[u8]) -> f64 {
    let start = Instant::now();
    for sequence in 1..=n {
        store
            .commit(tx(group, sequence, body))
            .unwrap_or_else(|e: StoreError| fail("commit", &e));
    }
    n as f64 / start.elapsed().as_secs_f64()
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .map_or(2000, |a| a.parse().unwrap_or_else(|e| fail("N", &e)));
    let body = vec![b'x'; 1024];
    let dir = tempfile::tempdir().unwrap_or_else(|e| fail("tempdir", &e));

    let file =
        SqliteStore::open(dir.path().join("bench.sqlite")).unwrap_or_else(|e| fail("open", &e));
    let per_second = appends(&file, "g", n, &body);
    println!(
        "{{\"name\": \"sqlite_append\", \"store\": \"file_wal_full\", \"events\": {n}, \"commits_per_second\": {per_second:.0}}}"
    );
    let memory = SqliteStore::in_memory().unwrap_or_else(|e| fail("open", &e));
    let per_second = appends(&memory, "g", n, &body);
    println!(
        "{{\"name\": \"sqlite_append\", \"store\": \"memory\", \"events\": {n}, \"commits_per_second\": {per_second:.0}}}"
    );

    let start = Instant::now();
    let mut sequence = 1;
    while sequence <= n {
        let batch: Vec<Transaction> = (sequence..(sequence + 100).min(n + 1))
            .map(|s| tx("batched", s, &body))
            .collect();
        sequence += batch.len() as u64;
        for result in file.commit_many(batch) {
            result.unwrap_or_else(|e| fail("commit_many", &e));
        }
    }
    println!(
        "{{\"name\": \"sqlite_append_batched\", \"store\": \"file_wal_full\", \"batch\": 100, \"events\": {n}, \"events_per_second\": {:.0}}}",
        n as f64 / start.elapsed().as_secs_f64()
    );

    let start = Instant::now();
    let mut after = 0;
    let mut replayed = 0usize;
    loop {
        let page = file
            .replay("g", after, 1000)
            .unwrap_or_else(|e| fail("replay", &e));
        replayed += page.events.len();
        match page.continuation {
            Some(next) => after = next,
            None => break,
        }
    }
    println!(
        "{{\"name\": \"sqlite_replay\", \"store\": \"file_wal_full\", \"page\": 1000, \"events\": {replayed}, \"events_per_second\": {:.0}}}",
        replayed as f64 / start.elapsed().as_secs_f64()
    );
}
