//! The workload library in one process, over the in-memory store and SQLite: deterministic
//! bytes, setup and stream apply, races have one winner, bench counts, store specs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::sync::Arc;

use missionweaveprotocol::{DescribeError, WireCode};
use missionweaveprotocol_engine::store::{InMemoryStore, Store};
use missionweaveprotocol_store_harness::check::{group_log, verify_store};
use missionweaveprotocol_store_harness::perform::{apply, apply_all};
use missionweaveprotocol_store_harness::race::{FileBarrier, race_round, shared_group};
use missionweaveprotocol_store_harness::store_spec::{DEFAULT_POSTGRES_POOL, PostgresSpec};
use missionweaveprotocol_store_harness::workload::STREAM_GROUPS;
use missionweaveprotocol_store_harness::{
    Batching, HarnessError, NOW, StoreSpec, StreamEffect, Workload, bench, drop_store, open_store,
    open_store_with,
};

fn set_up(
    workload: &Workload,
) -> missionweaveprotocol_store_harness::HarnessCore<Arc<InMemoryStore>> {
    let core = workload.core(Arc::new(InMemoryStore::new())).unwrap();
    apply_all(&core, &workload.setup().unwrap()).unwrap();
    core
}

#[test]
fn stream_command_i_is_the_same_bytes_every_time_and_differs_by_seed_and_index() {
    let a = Workload::new(3).unwrap();
    let b = Workload::new(3).unwrap();
    let other = Workload::new(4).unwrap();
    for i in [0, 1, 17, 999] {
        assert_eq!(a.stream(i).unwrap(), b.stream(i).unwrap());
        assert_ne!(
            a.stream(i).unwrap().command.bytes,
            other.stream(i).unwrap().command.bytes
        );
    }
    assert_ne!(
        a.stream(1).unwrap().command.bytes,
        a.stream(2).unwrap().command.bytes
    );
    assert_eq!(a.setup().unwrap(), b.setup().unwrap());
    // The Sessions are the Organization's, the same for every seed (§6.3).
    assert_eq!(a.sessions().unwrap(), other.sessions().unwrap());
}

#[test]
fn the_stream_mixes_creations_memberships_and_renewals_over_the_stream_groups() {
    let workload = Workload::new(1).unwrap();
    let mut kinds = BTreeSet::new();
    let mut groups = BTreeSet::new();
    for i in 0..64 {
        let command = workload.stream(i).unwrap();
        kinds.insert(command.command.kind.clone());
        match command.effect {
            StreamEffect::CreateMission { .. } => {}
            _ => {
                groups.insert(command.group.clone());
            }
        }
    }
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        [
            "membership.change",
            "mission.create",
            "mission.renew_coordinator"
        ]
    );
    assert_eq!(groups.len() as u64, STREAM_GROUPS);
}

#[test]
fn setup_and_stream_apply_and_a_resend_is_answered_from_the_receipt() {
    let workload = Workload::new(1).unwrap();
    let core = set_up(&workload);
    for i in 0..40 {
        let command = workload.stream(i).unwrap();
        let performed = core.perform_bytes(&command.command.bytes, NOW).unwrap();
        assert!(!performed.duplicate, "stream Command {i}");
        assert_eq!(performed.group_id, command.group);
        // The same bytes again: the original Event, nothing appended (§15.1).
        let again = core.perform_bytes(&command.command.bytes, NOW).unwrap();
        assert!(again.duplicate);
        assert_eq!(again.events[0].event_id, performed.events[0].event_id);
    }
    // The setup again: every Command answered from its receipt.
    for performed in apply_all(&core, &workload.setup().unwrap()).unwrap() {
        assert!(performed.duplicate);
    }
    let report = verify_store(core.store(), workload.keys().registry()).unwrap();
    assert_eq!(report.organization_events, 5);
}

#[test]
fn a_stream_command_before_the_setup_is_refused_and_nothing_is_applied() {
    let workload = Workload::new(1).unwrap();
    let core = workload.core(InMemoryStore::new()).unwrap();
    // A renewal needs its stream Mission and the Coordinator's Session.
    let renewal = (0..)
        .map(|i| workload.stream(i).unwrap())
        .find(|c| matches!(c.effect, StreamEffect::RenewCoordinator { .. }))
        .unwrap();
    let error = apply(&core, &renewal.command).unwrap_err();
    assert!(matches!(error, HarnessError::Refused { .. }), "{error}");
    assert_eq!(error.wire_code(), WireCode::AuthRequired);
    assert!(
        group_log(core.store(), &renewal.group, None)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn thirty_two_threads_racing_one_offer_have_exactly_one_winner() {
    let workload = Workload::new(1).unwrap();
    let core = set_up(&workload);
    for round in 0..3 {
        for command in workload.race_round(round).unwrap().setup {
            apply(&core, &command).unwrap();
        }
        let tally = race_round(&core, &workload, round, 0..32, None).unwrap();
        assert_eq!(tally.won, 1, "{tally}");
        assert_eq!(tally.winners.len(), 1);
        let losers: u32 = tally.refused.values().sum();
        assert_eq!(losers, 31, "{tally}");
        // The same Commands again: the winner's is a duplicate, the losers refused again.
        let again = race_round(&core, &workload, round, 0..32, None).unwrap();
        assert_eq!((again.won, again.duplicates), (0, 1), "{again}");
    }
}

#[test]
fn threads_sending_to_the_shared_group_leave_one_contiguous_log() {
    let workload = Workload::new(1).unwrap();
    let core = set_up(&workload);
    let tally = shared_group(&core, &workload, 0, 4, 5, None).unwrap();
    assert_eq!(tally.applied, 20);
    assert!(tally.refused.is_empty(), "{:?}", tally.refused);
    let (group, _) = workload.shared_group();
    // The Mission and 4 Worker Memberships of the setup, then the 20 Commands.
    assert_eq!(
        group_log(core.store(), &group, Some(workload.keys().registry()))
            .unwrap()
            .len(),
        25
    );
}

#[test]
fn bench_counts_fresh_commands_and_reports_duplicates_on_a_used_store() {
    let workload = Workload::new(1).unwrap();
    let core = set_up(&workload);
    let commands = bench::create_commands(&workload, 0, 40).unwrap();
    let first = bench::run(&core, &commands, 4).unwrap();
    assert_eq!(
        (first.commands, first.threads, first.duplicates),
        (40, 4, 0)
    );
    assert!(first.per_second > 0.0 && first.p99_ms >= first.p50_ms);
    assert!(first.end_unix_ms >= first.start_unix_ms);
    // Another process's Commands are other Missions.
    let other = bench::create_commands(&workload, 1, 40).unwrap();
    assert!(other.iter().all(|c| !commands.contains(c)));
    let again = bench::run(&core, &commands, 4).unwrap();
    assert_eq!(again.duplicates, 40);
}

#[test]
fn store_specs_open_sqlite_parse_postgresql_and_refuse_everything_else_with_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spec.sqlite");
    let spec = format!("sqlite:{}", path.display());
    assert_eq!(
        StoreSpec::parse(&spec).unwrap(),
        StoreSpec::Sqlite(path.display().to_string())
    );
    let store = open_store(&spec).unwrap();
    assert_eq!(store.head("g").unwrap().next_sequence, 1);
    assert!(path.exists());
    for bad in ["sqlite:", "", "mysql://x", "/tmp/x.sqlite"] {
        let error = open_store(bad).err().unwrap();
        assert!(
            matches!(error, HarnessError::InvalidArgument { .. }),
            "{bad}"
        );
        assert_eq!(error.wire_code(), WireCode::ProtocolViolation);
        assert_eq!(error.reason(), "invalid_argument");
    }
    // PostgreSQL specs: the harness's own parameters are taken out, the others kept.
    let parsed = |spec: &str| match StoreSpec::parse(spec).unwrap() {
        StoreSpec::Postgres(pg) => pg,
        other => panic!("{spec} parsed as {other:?}"),
    };
    assert_eq!(
        parsed("postgresql://mwp@127.0.0.1:5432/mwp"),
        PostgresSpec {
            url: "postgresql://mwp@127.0.0.1:5432/mwp".to_owned(),
            schema: None,
            pool_size: DEFAULT_POSTGRES_POOL,
            batch_reads: true,
        }
    );
    assert_eq!(
        parsed(
            "postgres://u@h/db?connect_timeout=3&schema=run_7&pool_size=4&application_name=w&batch_reads=false"
        ),
        PostgresSpec {
            url: "postgres://u@h/db?connect_timeout=3&application_name=w".to_owned(),
            schema: Some("run_7".to_owned()),
            pool_size: 4,
            batch_reads: false,
        }
    );
    for bad in [
        "postgresql://h/db?schema=",
        "postgresql://h/db?schema=1st",
        "postgresql://h/db?schema=a-b",
        "postgresql://h/db?schema=a%22b",
        "postgresql://h/db?schema=a&schema=b",
        &format!("postgresql://h/db?schema={}", "s".repeat(64)),
        "postgresql://h/db?pool_size=0",
        "postgresql://h/db?pool_size=x",
        "postgresql://h/db?pool_size=2&pool_size=3",
        "postgresql://h/db?batch_reads=yes",
        "postgresql://h/db?batch_reads=",
        "postgresql://h/db?batch_reads=true&batch_reads=false",
    ] {
        let error = open_store(bad).err().unwrap();
        assert!(
            matches!(error, HarnessError::InvalidArgument { .. }),
            "{bad}: {error}"
        );
        assert_eq!(error.reason(), "invalid_argument");
    }
    assert_eq!(
        parsed(&format!("postgresql://h/db?schema={}", "s".repeat(63))).schema,
        Some("s".repeat(63))
    );
    // No server on port 1: the store's typed error, not a panic (and nothing to drop).
    let error = open_store("postgresql://mwp@127.0.0.1:1/mwp?schema=x&connect_timeout=2")
        .err()
        .unwrap();
    assert!(matches!(error, HarnessError::Store(_)), "{error}");
    assert_eq!(error.wire_code(), WireCode::InternalError);
    assert_eq!(error.reason(), "backend_failure");
    assert!(
        drop_store(&spec).is_ok(),
        "a SQLite spec has nothing to drop"
    );
    assert!(
        drop_store("postgresql://mwp@127.0.0.1:1/mwp").is_ok(),
        "no schema= named"
    );
    assert!(drop_store("postgresql://mwp@127.0.0.1:1/mwp?schema=x").is_err());
    // A directory is not a database file: the store's own typed error.
    let error = open_store(&format!("sqlite:{}", dir.path().display()))
        .err()
        .unwrap();
    assert!(matches!(error, HarnessError::Store(_)), "{error}");
}

#[test]
fn the_file_barrier_lines_up_its_parties_and_fails_fast_after_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(
        FileBarrier::new(dir.path(), 2, 2),
        Err(HarnessError::InvalidArgument { .. })
    ));
    let a = FileBarrier::new(dir.path(), 2, 0).unwrap();
    let b = FileBarrier::new(dir.path(), 2, 1).unwrap();
    std::thread::scope(|s| {
        let other = s.spawn(|| b.wait(0));
        a.wait(0).unwrap();
        other.join().unwrap().unwrap();
    });
    b.abort();
    let error = a.wait(1).unwrap_err();
    assert!(
        error.to_string().contains("another process failed"),
        "{error}"
    );
    // A directory that does not exist: a typed I/O error, not a hang.
    let nowhere = FileBarrier::new(dir.path().join("missing"), 1, 0).unwrap();
    let error = nowhere.wait(0).unwrap_err();
    assert!(matches!(error, HarnessError::Io { .. }), "{error}");
    assert_eq!(
        (error.wire_code(), error.reason()),
        (WireCode::InternalError, "io")
    );
}

#[test]
fn the_scenario_runs_on_a_sqlite_file_and_again_from_its_receipts() {
    let dir = tempfile::tempdir().unwrap();
    let spec = format!("sqlite:{}", dir.path().join("scenario.sqlite").display());
    let first = missionweaveprotocol_store_harness::scenario::run(&spec, 1).unwrap();
    assert_eq!(
        (first.mission_state.as_str(), first.item_state.as_str()),
        ("approved", "verified")
    );
    assert_eq!(first.replayed.len(), 12);
    assert!(first.steps.iter().all(|s| !s.duplicate));
    assert_eq!(first.replayed.last().unwrap().1, "mission.approved");
    let again = missionweaveprotocol_store_harness::scenario::run(&spec, 1).unwrap();
    assert!(again.steps.iter().all(|s| s.duplicate));
    assert_eq!(again.replayed, first.replayed);
}

#[test]
fn group_commit_batches_a_process_s_commits_and_can_be_turned_off() {
    assert_eq!(Batching::parse("on").unwrap(), Batching::GroupCommit);
    assert_eq!(Batching::parse("off").unwrap(), Batching::PerCommand);
    for bad in ["", "yes", "ON"] {
        let error = Batching::parse(bad).err().unwrap();
        assert!(
            matches!(error, HarnessError::InvalidArgument { .. }),
            "{bad}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let workload = Workload::new(1).unwrap();
    let commands = bench::create_commands(&workload, 0, 48).unwrap();
    let spec = format!("sqlite:{}", dir.path().join("grouped.sqlite").display());
    let grouped = open_store_with(&spec, Batching::GroupCommit).unwrap();
    let core = workload.core(grouped.store.clone()).unwrap();
    let report = bench::run(&core, &commands, 8).unwrap();
    assert_eq!(report.duplicates, 0);
    // Every Command's write set went through the group commit, in at most 48 transactions.
    let stats = grouped.group_commit_stats().unwrap();
    assert_eq!(stats.transactions, 48);
    assert!((1..=48).contains(&stats.batches), "{stats:?}");
    // Unbatched: no group commit, and the same Commands on another file apply alike.
    let spec = format!("sqlite:{}", dir.path().join("single.sqlite").display());
    let single = open_store_with(&spec, Batching::PerCommand).unwrap();
    assert_eq!(single.group_commit_stats(), None);
    let core = workload.core(single.store.clone()).unwrap();
    assert_eq!(bench::run(&core, &commands, 8).unwrap().duplicates, 0);
    for opened in [grouped, single] {
        let report = verify_store(&*opened.store, workload.keys().registry()).unwrap();
        assert_eq!(report.groups, 48);
    }
}
