//! `Core::replay` (the call the Python and Node bindings serve) against the store's own
//! `Engine::replay`, in memory and on a SQLite file, printed as JSON lines (issue 27 item 3,
//! "replay at store speed"; `docs/figures.md`, "Checking served Events").
//!
//! One Group of N genuine Events (~1 KB each, signed by the Group Authority) is replayed in
//! pages of 1,000:
//!
//! - `store`: `Engine::replay`, the store's read with its integrity checks (hash chain on SQLite);
//! - `core_first`: `Core::replay` on a fresh Core — each Event checked in full once (strict
//!   parse, position, Ed25519 signature);
//! - `core_again`: `Core::replay` of the same log by the same Core — recognized by digest
//!   (`service/verified_events.rs`), no signature check; best of 5 passes.
//!
//! Three stores: memory, an unkeyed SQLite file, and a SQLite file keyed since its creation
//! (`StoreOptions::integrity_key`), which the Core serves without any signature check — its
//! HMAC chain, checked on every read, is the check (`service/served_events.rs`, "When the
//! store's key is enough"): there `core_first` is already at the store's rate.
//!
//! Run: `cargo run --release -p missionweaveprotocol-store-sqlite --example bench_core_replay [N]`
//! (N defaults to 20000). Not a test: nothing here fails because the machine is slow.

use std::sync::Arc;
use std::time::Instant;

use missionweaveprotocol::json::{Object, Value};
use missionweaveprotocol::{Principal, PrincipalType};
use missionweaveprotocol_engine::events::{EventDraft, EventIssuer, SequentialEventIds};
use missionweaveprotocol_engine::service::{Core, default_authorizer};
use missionweaveprotocol_engine::store::suite::engine::{AUTHORITY, Keys, NOW, create, keys};
use missionweaveprotocol_engine::store::{
    EventRecord, InMemoryStore, IntegrityKey, Store, StoreOptions, Transaction,
};
use missionweaveprotocol_store_sqlite::{SqliteOptions, SqliteStore};

const GROUP: &str = "urn:missionweaveprotocol:group:finance";
const PAGE: i64 = 1_000;

fn fail(what: &str, e: &dyn std::fmt::Display) -> ! {
    eprintln!("benchmark failed: {what}: {e}");
    std::process::exit(1)
}

fn issuer(keys: &Keys) -> EventIssuer<missionweaveprotocol::crypto::SigningKey> {
    EventIssuer::new(
        Principal::new(PrincipalType::Service, AUTHORITY),
        keys.authority.clone(),
    )
}

/// N signed Events of `GROUP` at sequences `first..first + n`, each with ~700 bytes of payload.
fn events(keys: &Keys, first: u64, n: u64) -> Vec<EventRecord> {
    let command = create(keys);
    let issuer = issuer(keys);
    let mut ids = SequentialEventIds::new("urn:missionweaveprotocol:event:bench-");
    (first..first + n)
        .map(|sequence| {
            let mut payload = Object::new();
            payload.insert(
                "missionId",
                Value::string("urn:missionweaveprotocol:mission:m"),
            );
            payload.insert("objective", Value::string("x".repeat(700)));
            let draft = EventDraft::for_command(&command, "mission.created", payload)
                .at(GROUP, sequence, sequence);
            let signed = issuer
                .issue(&draft, &mut ids, NOW)
                .unwrap_or_else(|e| fail("issue", &e));
            EventRecord::new(sequence, signed.event_id(), signed.bytes().to_vec())
        })
        .collect()
}

fn fill<S: Store>(store: &S, events: &[EventRecord]) {
    for chunk in events.chunks(500) {
        let mut tx = Transaction::new();
        for record in chunk {
            tx.append(GROUP, record.clone());
        }
        store.commit(tx).unwrap_or_else(|e| fail("commit", &e));
    }
}

fn core<S: Store>(store: S, keys: &Keys) -> Core<S> {
    Core::new(
        store,
        Arc::clone(&keys.registry),
        issuer(keys),
        default_authorizer(Vec::new(), Vec::new()),
        Box::new(SequentialEventIds::new("urn:uuid:unused-")),
    )
}

/// Events/s of one pass over the log by `page`.
fn pass(n: u64, page: impl Fn(u64) -> usize) -> f64 {
    let start = Instant::now();
    let mut after = 0;
    while after < n {
        let got = page(after);
        assert!(got > 0);
        after += got as u64;
    }
    n as f64 / start.elapsed().as_secs_f64()
}

fn best(n: u64, page: impl Fn(u64) -> usize) -> f64 {
    (0..5).map(|_| pass(n, &page)).fold(0.0, f64::max)
}

/// The Group is created by a real `mission.create` through the Core; N more Events follow.
fn bench<S: Store>(name: &str, store: S, keys: &Keys, n: u64) {
    let core = core(store, keys);
    core.perform_verified(&create(keys), NOW)
        .unwrap_or_else(|e| fail("mission.create", &e));
    let first = core
        .store()
        .head(GROUP)
        .unwrap_or_else(|e| fail("head", &e))
        .next_sequence;
    let log = events(keys, first, n);
    fill(core.store(), &log);
    let bytes = log.iter().map(|r| r.body.len()).sum::<usize>() as f64 / n as f64;
    let n = first - 1 + n;
    let store_rate = best(n, |after| {
        core.engine()
            .replay(GROUP, after, PAGE as usize)
            .unwrap_or_else(|e| fail("engine replay", &e))
            .events
            .len()
    });
    let core_page = |after: u64| {
        core.replay(GROUP, after as i64, PAGE)
            .unwrap_or_else(|e| fail("core replay", &e))
            .events
            .len()
    };
    let cold = pass(n, core_page);
    let checked = core.served_events_checked();
    let again = best(n, core_page);
    assert_eq!(core.served_events_checked(), checked);
    println!(
        "{{\"name\": \"core_replay\", \"store\": \"{name}\", \"events\": {n}, \"mean_event_bytes\": {bytes:.0}, \"page\": {PAGE}, \"store_events_per_second\": {store_rate:.0}, \"core_first_events_per_second\": {cold:.0}, \"core_again_events_per_second\": {again:.0}, \"first_to_store\": {:.3}, \"again_to_store\": {:.3}, \"signature_checks\": {checked}}}",
        cold / store_rate,
        again / store_rate
    );
}

fn main() {
    let n: u64 = match std::env::args().nth(1) {
        None => 20_000,
        Some(text) => text.parse().unwrap_or_else(|e| fail("N", &e)),
    };
    let keys = keys();
    bench("memory", Arc::new(InMemoryStore::new()), &keys, n);

    let dir = tempfile::tempdir().unwrap_or_else(|e| fail("tempdir", &e));
    let sqlite =
        SqliteStore::open(dir.path().join("replay.sqlite")).unwrap_or_else(|e| fail("open", &e));
    bench("sqlite", sqlite, &keys, n);

    let key = IntegrityKey::new([7u8; 32]).unwrap_or_else(|e| fail("key", &e));
    let keyed = SqliteStore::open_with(
        dir.path().join("replay-keyed.sqlite"),
        &SqliteOptions {
            store: StoreOptions::keyed(key),
            ..SqliteOptions::default()
        },
    )
    .unwrap_or_else(|e| fail("open keyed", &e));
    bench("sqlite_keyed", keyed, &keys, n);
}
