//! In-memory store benchmarks (issue 10 figures), printed as JSON lines: appends/s (one Event
//! per transaction, as one Command commits), replay Events/s from memory, bytes per stored
//! Event for a ~1 KB Event.
//!
//! Run: `cargo run --release -p missionweaveprotocol-engine --example bench_store`
//! Not a test: nothing here fails because the machine is slow.

use std::alloc::System;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use missionweaveprotocol_engine::store::{
    Blob, EventRecord, InMemoryStore, Store, StoreError, Transaction,
};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const GROUP: &str = "urn:uuid:6a1f0000-0000-4000-8000-000000000001";
const BODY_BYTES: usize = 1024;

/// A realistic Event ID: a lower-case `urn:uuid:` (45 bytes).
fn event_id(i: u64) -> String {
    format!("urn:uuid:00000000-0000-4000-8000-{i:012x}")
}

/// ~1 KB of canonical-JSON-like bytes, distinct per Event.
fn body(i: u64) -> Blob {
    let mut text = format!(r#"{{"eventId":"{}","payload":""#, event_id(i));
    while text.len() < BODY_BYTES - 2 {
        text.push('x');
    }
    text.push_str("\"}");
    text.into_bytes().into()
}

fn append(store: &InMemoryStore, sequence: u64, id: &str, body: Blob) -> Result<(), StoreError> {
    let mut tx = Transaction::new();
    tx.append(GROUP, EventRecord::new(sequence, id, body));
    store.commit(tx)
}

fn fail(e: &StoreError) -> ! {
    eprintln!("benchmark failed: {e}");
    std::process::exit(1)
}

fn bench_memory(n: u64) {
    let region = Region::new(GLOBAL);
    let store = InMemoryStore::new();
    for i in 0..n {
        append(&store, i + 1, &event_id(i), body(i)).unwrap_or_else(|e| fail(&e));
    }
    let c = region.change();
    let net = c.bytes_allocated as f64 - c.bytes_deallocated as f64;
    let per_event = net / n as f64;
    println!(
        "{{\"name\": \"store_bytes_per_event\", \"bytes\": {per_event:.1}, \"body_bytes\": {BODY_BYTES}, \"overhead_bytes\": {:.1}, \"events\": {n}}}",
        per_event - BODY_BYTES as f64
    );
    black_box(&store);
}

fn bench_throughput(n: u64) {
    let store = InMemoryStore::new();
    // One shared body: the figure is the store's cost, not the cost of building Events.
    let shared: Blob = body(0);
    let ids: Vec<Arc<str>> = (0..n).map(|i| Arc::from(event_id(i))).collect();
    let start = Instant::now();
    for (i, id) in ids.iter().enumerate() {
        let mut tx = Transaction::new();
        tx.append(
            GROUP,
            EventRecord {
                sequence: i as u64 + 1,
                event_id: id.clone(),
                body: shared.clone(),
            },
        );
        store.commit(tx).unwrap_or_else(|e| fail(&e));
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{{\"name\": \"store_appends_per_sec\", \"ops_per_sec\": {:.0}, \"events\": {n}}}",
        n as f64 / secs
    );

    for page in [100usize, 1_000] {
        let mut best = f64::INFINITY;
        for _ in 0..5 {
            let start = Instant::now();
            let mut after = 0;
            let mut seen = 0usize;
            loop {
                let p = store
                    .replay(GROUP, after, page)
                    .unwrap_or_else(|e| fail(&e));
                seen += p.events.len();
                black_box(&p.events);
                match p.continuation {
                    Some(next) => after = next,
                    None => break,
                }
            }
            assert_eq!(seen as u64, n);
            best = best.min(start.elapsed().as_secs_f64());
        }
        println!(
            "{{\"name\": \"store_replay_events_per_sec_page_{page}\", \"ops_per_sec\": {:.0}, \"events\": {n}, \"target\": 2000000}}",
            n as f64 / best
        );
    }
}

fn main() {
    bench_memory(100_000);
    bench_throughput(1_000_000);
}
