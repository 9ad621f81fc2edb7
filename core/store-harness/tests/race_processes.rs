//! Races across processes on SQLite (issue 11 "Reliability"): 3 worker processes × 32
//! threads race `work.accept_offer` on the same offer for 200 rounds — exactly one winner every
//! round — and 3 processes × 8 threads sending Commands to one Group leave one contiguous
//! sequence. SQLite serializes writers across processes with its file lock (5 s busy
//! timeout); the bodies (`tests/common/race.rs`) take any store spec.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

#[test]
fn three_processes_of_32_threads_race_200_offers_with_exactly_one_winner_each() {
    let dir = tempfile::tempdir().unwrap();
    let spec = format!("sqlite:{}", dir.path().join("race.sqlite").display());
    let barrier = dir.path().join("barrier");
    std::fs::create_dir(&barrier).unwrap();
    let report = common::race::accept_offer_rounds(&spec, &barrier, 1, 200, 3, 32);
    println!(
        "race on SQLite: {} rounds × {} submitters (3 processes × 32 threads), one winner each; \
         losers {:?}; {} re-sends; processes {:.1} s, with the checks {:.1} s",
        report.rounds,
        report.submitters_per_round,
        report.refused,
        report.resends,
        report.race.as_secs_f64(),
        report.elapsed.as_secs_f64()
    );
}

#[test]
fn three_processes_sending_to_one_group_leave_one_contiguous_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let spec = format!("sqlite:{}", dir.path().join("group.sqlite").display());
    let barrier = dir.path().join("barrier");
    std::fs::create_dir(&barrier).unwrap();
    let report = common::race::one_group(&spec, &barrier, 1, 3, 8, 10);
    println!(
        "one Group on SQLite: {} Commands from 3 processes × 8 threads, {} Events contiguous; \
         {} re-sends after contention; {:.1} s",
        report.commands,
        report.events,
        report.resends,
        report.elapsed.as_secs_f64()
    );
}
