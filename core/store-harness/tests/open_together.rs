//! Processes opening one new SQLite file at the same moment (issue "what a hostile or unlucky
//! day still breaks", item 3): each `mwp-store-worker open` meets the others at a file barrier
//! and only then opens the store — creating the file, switching it to WAL, running the
//! migrations — and applies one `mission.create` of its own. Every process of every
//! repetition must succeed with its first send: before the fix, the WAL switch of a new file
//! failed at once with `database is locked` whenever another process held the file's lock
//! (SQLite does not run the busy handler for it; `core/store-sqlite/src/wal.rs`).
//!
//! 50 repetitions of 2 processes and 50 of 3, each on a fresh file, bounded in time so that
//! the test runs in CI (a repetition costs a process start, an open and one commit per
//! process; a lost wake-up or a lock wait turned into a timeout shows up as a slow run).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::worker;
use missionweaveprotocol_store_harness::open_store;

const REPETITIONS: usize = 50;
/// Far above what 50 repetitions take on a loaded 2-core machine (a few seconds), far below
/// the 5 s busy timeout times the repetitions a stuck open would cost.
const BOUND: Duration = Duration::from_secs(45);

/// `parties` processes open a new file together, `REPETITIONS` times; answers how long it
/// took.
fn open_together(parties: u64) -> Duration {
    let began = Instant::now();
    for repetition in 0..REPETITIONS {
        let dir = tempfile::tempdir().unwrap();
        let store = format!("sqlite:{}", dir.path().join("new.sqlite").display());
        let barrier = dir.path().join("barrier");
        std::fs::create_dir(&barrier).unwrap();
        let barrier = barrier.display().to_string();
        let children: Vec<_> = (0..parties)
            .map(|p| {
                let process = p.to_string();
                let parties = parties.to_string();
                Command::new(worker())
                    .args([
                        "open",
                        "--store",
                        &store,
                        "--process",
                        &process,
                        "--parties",
                        &parties,
                        "--barrier",
                        &barrier,
                    ])
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let mut groups = Vec::new();
        for (p, child) in children.into_iter().enumerate() {
            let output = child.wait_with_output().unwrap();
            assert!(
                output.status.success(),
                "repetition {repetition}, process {p} of {parties}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            let out = String::from_utf8(output.stdout).unwrap();
            let fields: Vec<&str> = out.split_whitespace().collect();
            assert!(
                matches!(
                    fields[..],
                    [
                        "opened",
                        "process",
                        _,
                        "group",
                        _,
                        "sequence",
                        "1",
                        "sends",
                        "1"
                    ]
                ),
                "repetition {repetition}, process {p}: {out}"
            );
            groups.push(fields[4].to_owned());
        }
        // Every process's Command is in the one file, each at the start of its own Group.
        let store = open_store(&store).unwrap();
        for group in &groups {
            assert_eq!(store.head(group).unwrap().next_sequence, 2, "{group}");
        }
    }
    let took = began.elapsed();
    assert!(
        took < BOUND,
        "{REPETITIONS} repetitions of {parties} processes took {took:?}"
    );
    println!("{REPETITIONS} repetitions of {parties} processes opening one new file: {took:?}");
    took
}

#[test]
fn two_processes_open_one_new_file_together_50_times() {
    open_together(2);
}

#[test]
fn three_processes_open_one_new_file_together_50_times() {
    open_together(3);
}
