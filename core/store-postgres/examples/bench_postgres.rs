//! PostgreSQL store figures, printed as JSON lines (wall clock; the machine is shared, so they
//! are indications, not guarantees):
//!
//! - `postgres_append`: one ~1 KB Event per `commit` (with its aggregate write), one durable
//!   transaction each (`synchronous_commit = on`: one WAL flush per commit), one submitter;
//! - `postgres_append_batched`: the same Events through `commit_many` in batches of 100 (one
//!   durable transaction, one WAL flush per batch);
//! - `postgres_replay`: replay of the first log in pages of 1,000, every Event verified
//!   against the Group's hash chain;
//! - `postgres_point_reads`: the reads the engine makes before deciding a `mission.create`
//!   (a receipt, two aggregates, a Group head), one round trip each and then in one
//!   `read_many`: wall time and this process's CPU time per set.
//!
//! Run against a server: `MWP_POSTGRES_URL=$(scripts/pg-cluster.sh start) cargo run --release
//! -p missionweaveprotocol-store-postgres --example bench_postgres [N]` (N defaults to 2000).
//! The example works in a schema of its own and drops it at the end. Not a test: nothing here
//! fails because the disk is slow.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

use missionweaveprotocol_engine::store::{
    AggregateKey, EventRecord, Read, ReceiptKey, Store, StoreError, Transaction,
};
use missionweaveprotocol_store_postgres::{PostgresOptions, PostgresStore};

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

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .map_or(2000, |a| a.parse().unwrap_or_else(|e| fail("N", &e)));
    let url = std::env::var("MWP_POSTGRES_URL")
        .unwrap_or_else(|_| fail("MWP_POSTGRES_URL", &"unset (scripts/pg-cluster.sh start)"));
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let schema = format!("mwp_bench_{}_{nanos}", std::process::id());
    let store = PostgresStore::connect_with(&url, PostgresOptions::default().schema(&schema))
        .unwrap_or_else(|e| fail("connect", &e));
    let body = vec![b'x'; 1024];

    let start = Instant::now();
    for sequence in 1..=n {
        store
            .commit(tx("g", sequence, &body))
            .unwrap_or_else(|e: StoreError| fail("commit", &e));
    }
    println!(
        "{{\"name\": \"postgres_append\", \"events\": {n}, \"commits_per_second\": {:.0}}}",
        n as f64 / start.elapsed().as_secs_f64()
    );

    let start = Instant::now();
    let mut sequence = 1;
    while sequence <= n {
        let batch: Vec<Transaction> = (sequence..(sequence + 100).min(n + 1))
            .map(|s| tx("batched", s, &body))
            .collect();
        sequence += batch.len() as u64;
        for result in store.commit_many(batch) {
            result.unwrap_or_else(|e| fail("commit_many", &e));
        }
    }
    println!(
        "{{\"name\": \"postgres_append_batched\", \"batch\": 100, \"events\": {n}, \"events_per_second\": {:.0}}}",
        n as f64 / start.elapsed().as_secs_f64()
    );

    let start = Instant::now();
    let mut after = 0;
    let mut replayed = 0usize;
    loop {
        let page = store
            .replay("g", after, 1000)
            .unwrap_or_else(|e| fail("replay", &e));
        replayed += page.events.len();
        match page.continuation {
            Some(next) => after = next,
            None => break,
        }
    }
    println!(
        "{{\"name\": \"postgres_replay\", \"page\": 1000, \"events\": {replayed}, \"events_per_second\": {:.0}}}",
        replayed as f64 / start.elapsed().as_secs_f64()
    );
    point_reads(&store, n);
    store
        .drop_schema()
        .unwrap_or_else(|e| fail("drop schema", &e));
}

/// This process's user + system CPU time in seconds (`/proc/self/stat`, clock ticks of 10 ms).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // Fields 14 and 15 of the whole line: the 12th and 13th after the name.
    (ticks(11) + ticks(12)) / 100.0
}

fn point_reads(store: &PostgresStore, n: u64) {
    let reads = |i: u64| {
        vec![
            Read::Receipt(ReceiptKey::new("human", "alice", format!("act-{i}"))),
            Read::Aggregate(AggregateKey::new("work_item", format!("g/w{}", i % n + 1))),
            Read::Aggregate(AggregateKey::new("mission", format!("absent-{i}"))),
            Read::Head("g".to_owned()),
        ]
    };
    let sets = n.max(1);
    for (name, batched) in [("one_round_trip_each", false), ("read_many", true)] {
        let (start, cpu) = (Instant::now(), cpu_seconds());
        for i in 0..sets {
            let set = reads(i);
            let answers = match batched {
                true => store.read_many(&set),
                false => missionweaveprotocol_engine::store::read_each(store, &set),
            };
            answers.unwrap_or_else(|e| fail("point reads", &e));
        }
        let (wall, cpu) = (start.elapsed().as_secs_f64(), cpu_seconds() - cpu);
        println!(
            "{{\"name\": \"postgres_point_reads\", \"mode\": \"{name}\", \"sets\": {sets}, \"reads_per_set\": 4, \"wall_us_per_set\": {:.1}, \"cpu_us_per_set\": {:.1}}}",
            wall * 1e6 / sets as f64,
            cpu * 1e6 / sets as f64
        );
    }
}
