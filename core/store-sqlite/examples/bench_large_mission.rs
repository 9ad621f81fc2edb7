//! What a large Mission costs later Commands (issue "hostile day", item 4): a `mission.create`
//! with N `definitionOfDone` criteria (N = 1 and 40,000, about 3.4 MB), then R Coordinator
//! renewals (`mission.renew_coordinator`, pre-signed and pre-verified before the clock starts),
//! on the in-memory store, an in-memory SQLite database and a SQLite file (WAL,
//! `synchronous=FULL`). Prints one JSON line
//! per (store, N) with the median and p90 wall time of one renewal, then the ratio of the large
//! Mission's median to the small one's per store (target ≤ 2: a Command's cost must not grow
//! with the immutable parts of its aggregate).
//!
//! Run: `cargo run --release -p missionweaveprotocol-store-sqlite --example bench_large_mission
//! [-- RENEWALS]` (default 40). Not a test: nothing here fails because the machine is slow.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../engine/tests/engine_fixture.rs"]
mod fixture;

use std::sync::Arc;
use std::time::Instant;

use fixture::*;
use missionweaveprotocol_engine::engine::Engine;
use missionweaveprotocol_engine::events::{EventIssuer, SequentialEventIds};
use missionweaveprotocol_engine::ingress::VerifiedCommand;
use missionweaveprotocol_engine::store::{InMemoryStore, Store};
use missionweaveprotocol_store_sqlite::SqliteStore;

fn create_with(f: &Fixture, criteria: usize) -> VerifiedCommand {
    let items: Vec<String> = (0..criteria)
        .map(|i| {
            format!(
                r#"{{"criterionId": "c{i}", "description": "The ledger balances", "evidenceRequired": ["human_review"]}}"#
            )
        })
        .collect();
    let payload = f.create_payload(MISSION, "").replace(
        r#"[{"criterionId": "ledger-balanced", "description": "The ledger balances",
              "evidenceRequired": ["deterministic_test", "human_review"]}]"#,
        &format!("[{}]", items.join(",")),
    );
    f.command("mission.create", OWNER, "", &payload)
}

fn median_and_p90(mut samples: Vec<f64>) -> (f64, f64) {
    samples.sort_by(f64::total_cmp);
    let at = |p: f64| samples[((samples.len() - 1) as f64 * p).round() as usize];
    (at(0.5), at(0.9))
}

/// Median and p90 microseconds of one renewal after a Mission of `criteria` criteria.
fn renewals<S: Store>(f: &Fixture, store: S, criteria: usize, count: usize) -> (f64, f64, usize) {
    let engine = Engine::new(
        store,
        EventIssuer::new(authority(), f.authority_key.clone()),
        SequentialEventIds::new("urn:missionweaveprotocol:event:large-"),
    );
    f.open_sessions(&engine);
    let create = create_with(f, criteria);
    let created = engine.perform(&create, NOW).unwrap();
    let bytes = created.events[0].body.len();
    let commands: Vec<VerifiedCommand> = (0..count)
        .map(|_| f.by_coordinator("mission.renew_coordinator", 1, "{}"))
        .collect();
    let mut samples = Vec::with_capacity(count);
    for command in &commands {
        let start = Instant::now();
        engine.perform(command, NOW).unwrap();
        samples.push(start.elapsed().as_secs_f64() * 1e6);
    }
    let (median, p90) = median_and_p90(samples);
    (median, p90, bytes)
}

fn main() {
    let count: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    let f = fixture();
    let dir = std::env::temp_dir().join(format!("mwp-large-mission-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for store in ["memory", "sqlite_memory", "sqlite_file"] {
        let mut medians = Vec::new();
        for criteria in [1usize, 40_000] {
            let (median, p90, bytes) = match store {
                "memory" => renewals(&f, InMemoryStore::new(), criteria, count),
                "sqlite_memory" => renewals(
                    &f,
                    Arc::new(SqliteStore::in_memory().unwrap()),
                    criteria,
                    count,
                ),
                _ => {
                    let path = dir.join(format!("large-{criteria}.sqlite"));
                    let sqlite = Arc::new(SqliteStore::open(&path).unwrap());
                    renewals(&f, sqlite, criteria, count)
                }
            };
            println!(
                "{{\"name\":\"renew_coordinator\",\"store\":\"{store}\",\"criteria\":{criteria},\"mission_created_event_bytes\":{bytes},\"renewals\":{count},\"median_us\":{median:.1},\"p90_us\":{p90:.1}}}"
            );
            medians.push(median);
        }
        println!(
            "{{\"name\":\"large_over_small\",\"store\":\"{store}\",\"median_ratio\":{:.2},\"target\":2.0}}",
            medians[1] / medians[0]
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
