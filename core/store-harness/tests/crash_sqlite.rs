//! Crash safety on SQLite (issue 11 "Reliability"): a writer process running the stream is
//! SIGKILLed at seeded random moments, at least 50 times; after every kill the store holds
//! every confirmed Command at its confirmed position, all-or-nothing, with contiguous
//! sequences, and re-sending the in-flight Command (same bytes) yields exactly one Event
//! (`tests/common/crash.rs`; PostgreSQL: the same `crash::run` with its store spec).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

#[test]
fn a_writer_killed_a_hundred_times_loses_nothing_confirmed_and_half_applies_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let spec = format!("sqlite:{}", dir.path().join("crash.sqlite").display());
    let report = common::crash::run(&spec, 1, 100, 0x5eed_c4a5);
    println!(
        "crash test on SQLite: {} kills ({} before the first confirmation), {} stream Commands; \
         in-flight Command applied-unconfirmed {} times, absent {} times; {:.1} s",
        report.kills,
        report.early_kills,
        report.commands,
        report.in_flight_applied,
        report.in_flight_absent,
        report.elapsed.as_secs_f64()
    );
    assert!(report.kills >= 50);
    assert_eq!(
        report.in_flight_applied + report.in_flight_absent,
        report.kills
    );
}
