//! Races across processes on PostgreSQL (issue 11 "Reliability"): 3 worker processes × 32
//! threads race `work.accept_offer` on the same offer for 200 rounds — exactly one winner
//! every round — and 3 processes × 8 threads sending Commands to one Group leave one contiguous
//! sequence. The bodies are `race_processes.rs`'s (`tests/common/race.rs`) on a fresh schema of
//! a PostgreSQL server; each process has its own connections (16 at most) and its own group
//! commit, so contention meets both inside a batch and across processes under the store's
//! advisory locks.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::pg::PgSpec;

#[test]
fn three_processes_of_32_threads_race_200_offers_with_exactly_one_winner_each_on_postgresql() {
    let store = PgSpec::fresh("race");
    let dir = tempfile::tempdir().unwrap();
    let barrier = dir.path().join("barrier");
    std::fs::create_dir(&barrier).unwrap();
    let report = common::race::accept_offer_rounds(&store.spec, &barrier, 1, 200, 3, 32);
    println!(
        "race on PostgreSQL: {} rounds × {} submitters (3 processes × 32 threads), one winner \
         each; losers {:?}; {} re-sends; processes {:.1} s, with the checks {:.1} s",
        report.rounds,
        report.submitters_per_round,
        report.refused,
        report.resends,
        report.race.as_secs_f64(),
        report.elapsed.as_secs_f64()
    );
}

#[test]
fn three_processes_sending_to_one_group_leave_one_contiguous_sequence_on_postgresql() {
    let store = PgSpec::fresh("group");
    let dir = tempfile::tempdir().unwrap();
    let barrier = dir.path().join("barrier");
    std::fs::create_dir(&barrier).unwrap();
    let report = common::race::one_group(&store.spec, &barrier, 1, 3, 8, 10);
    println!(
        "one Group on PostgreSQL: {} Commands from 3 processes × 8 threads, {} Events \
         contiguous; {} re-sends after contention; {:.1} s",
        report.commands,
        report.events,
        report.resends,
        report.elapsed.as_secs_f64()
    );
}
