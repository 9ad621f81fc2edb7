//! A store process that stops in the middle of a commit holds that commit's advisory locks;
//! the session settings (`Pool::session`, `PostgresOptions::idle_in_transaction_timeout`) make
//! the server end such a session, so commits to the same keys go on instead of waiting forever.
#![cfg(test)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::mpsc;
use std::time::{Duration, Instant};

use missionweaveprotocol_engine::store::Store;
use missionweaveprotocol_engine::store::suite::appends;

use crate::pool::Pool;
use crate::{PostgresOptions, PostgresStore, locks, test_server};

/// A session opened exactly as the store opens its own, which then takes the lock of Group
/// `g`'s log inside a transaction and stops talking (a process stopped mid-commit).
fn stalled_holder(options: &PostgresOptions, namespace: &str) -> postgres::Client {
    let config: postgres::Config = test_server::url().parse().unwrap();
    let mut client = Pool::new(config, options).session().unwrap();
    client
        .batch_execute(&format!(
            "BEGIN; SELECT pg_advisory_xact_lock({});",
            locks::group(namespace, "g")
        ))
        .unwrap();
    client
}

/// Appends to `g` from another thread; the receiver gets the result when the commit returns.
fn append_in_background(store: &std::sync::Arc<PostgresStore>) -> mpsc::Receiver<bool> {
    let (sender, receiver) = mpsc::channel();
    let store = std::sync::Arc::clone(store);
    std::thread::spawn(move || {
        let _ = sender.send(store.commit(appends("g", 1, 1)).is_ok());
    });
    receiver
}

fn store(options: PostgresOptions) -> std::sync::Arc<PostgresStore> {
    std::sync::Arc::new(PostgresStore::connect_with(test_server::url(), options).unwrap())
}

#[test]
fn a_session_stopped_mid_commit_is_ended_and_its_locks_released() {
    let schema = format!("stalled_{}", std::process::id());
    let options = PostgresOptions::default()
        .schema(schema.clone())
        .idle_in_transaction_timeout(Some(Duration::from_millis(500)));
    let store = store(options.clone());
    let holder = stalled_holder(&options, &schema);
    let start = Instant::now();
    let done = append_in_background(&store);
    assert!(done.recv_timeout(Duration::from_secs(30)).unwrap());
    // Ended by the server after the timeout, not before.
    assert!(
        start.elapsed() >= Duration::from_millis(400),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(store.head("g").unwrap().next_sequence, 2);
    drop(holder);
    store.drop_schema().unwrap();
}

#[test]
fn without_the_timeout_a_stopped_session_blocks_the_key_until_it_ends() {
    let schema = format!("stalled_none_{}", std::process::id());
    let options = PostgresOptions::default()
        .schema(schema.clone())
        .idle_in_transaction_timeout(None);
    let store = store(options.clone());
    let mut holder = stalled_holder(&options, &schema);
    let done = append_in_background(&store);
    assert!(done.recv_timeout(Duration::from_millis(1500)).is_err());
    holder.batch_execute("ROLLBACK").unwrap();
    assert!(done.recv_timeout(Duration::from_secs(30)).unwrap());
    store.drop_schema().unwrap();
}
