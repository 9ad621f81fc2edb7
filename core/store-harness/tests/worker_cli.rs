//! `mwp-store-worker` as a process: each subcommand's output on a SQLite file, and bad input
//! refused with a usage error (exit 2) or a typed error naming its §19 code (exit 1).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::process::{Command, Output};

use common::{run_worker, worker};

fn spec(dir: &tempfile::TempDir, name: &str) -> String {
    format!("sqlite:{}", dir.path().join(name).display())
}

fn raw(args: &[&str]) -> Output {
    Command::new(worker()).args(args).output().unwrap()
}

#[test]
fn setup_stream_verify_and_bench_print_what_they_did() {
    let dir = tempfile::tempdir().unwrap();
    let store = spec(&dir, "w.sqlite");
    assert_eq!(
        run_worker(&["setup", "--store", &store]),
        "setup 30 Commands, 30 newly applied\n"
    );
    assert_eq!(
        run_worker(&["setup", "--store", &store]),
        "setup 30 Commands, 0 newly applied\n"
    );
    let out = run_worker(&["stream", "--store", &store, "--from", "0", "--to", "12"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 12);
    for (i, line) in lines.iter().enumerate() {
        let words: Vec<&str> = line.split(' ').collect();
        assert_eq!(
            (words[0], words[1]),
            ("done", i.to_string().as_str()),
            "{line}"
        );
        assert!(
            words[2].starts_with("urn:missionweaveprotocol:group:h1-"),
            "{line}"
        );
        assert!(words[3].parse::<u64>().unwrap() >= 1, "{line}");
    }
    // The same range again: answered from the receipts, the same positions.
    assert_eq!(
        run_worker(&["stream", "--store", &store, "--from", "0", "--to", "12"]),
        out
    );
    let verified = run_worker(&["verify", "--store", &store]);
    assert!(verified.starts_with("verified groups "), "{verified}");
    assert!(verified.ends_with("organization_events 5\n"), "{verified}");
    let bench = run_worker(&[
        "bench",
        "--store",
        &spec(&dir, "b.sqlite"),
        "--threads",
        "2",
        "--count",
        "20",
    ]);
    assert!(bench.starts_with("bench commands 20 threads 2 "), "{bench}");
    assert!(bench.contains(" duplicates 0 "), "{bench}");
    // Group commit by default, its batches counted; `--group-commit off` commits one by one.
    assert!(bench.contains(" group_commit on batches "), "{bench}");
    let unbatched = run_worker(&[
        "bench",
        "--store",
        &spec(&dir, "u.sqlite"),
        "--threads",
        "2",
        "--count",
        "20",
        "--group-commit",
        "off",
    ]);
    assert!(unbatched.ends_with(" group_commit off\n"), "{unbatched}");
    // Replay: the setup's 5 Events of the shared Group and 20 renewals, replayed whole.
    let replay = run_worker(&[
        "replay",
        "--store",
        &spec(&dir, "r.sqlite"),
        "--events",
        "20",
    ]);
    assert!(replay.starts_with("replay events 25 passes "), "{replay}");
    assert!(replay.contains(" events_per_second "), "{replay}");
    let output = raw(&["replay", "--store", &spec(&dir, "r.sqlite")]);
    assert_eq!(output.status.code(), Some(2), "--events is required");
}

#[test]
fn two_bench_processes_start_together_on_distinct_missions() {
    let dir = tempfile::tempdir().unwrap();
    let store = spec(&dir, "pb.sqlite");
    let barrier = dir.path().join("barrier");
    std::fs::create_dir(&barrier).unwrap();
    let barrier = barrier.display().to_string();
    let children: Vec<_> = ["0", "1"]
        .iter()
        .map(|p| {
            Command::new(worker())
                .args([
                    "bench",
                    "--store",
                    &store,
                    "--threads",
                    "2",
                    "--count",
                    "15",
                    "--process",
                    p,
                    "--parties",
                    "2",
                    "--barrier",
                    &barrier,
                ])
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = common::check_output(&["bench"], child.wait_with_output().unwrap());
        assert!(out.starts_with("bench commands 15 threads 2 "), "{out}");
        assert!(out.contains(" duplicates 0 "), "{out}");
    }
    let verified = run_worker(&["verify", "--store", &store]);
    assert!(
        verified.starts_with("verified groups 30 events 30 "),
        "{verified}"
    );
}

#[test]
fn race_and_shared_print_their_tallies() {
    let dir = tempfile::tempdir().unwrap();
    let store = spec(&dir, "r.sqlite");
    run_worker(&["setup", "--store", &store]);
    let out = run_worker(&[
        "race", "--store", &store, "--round", "5", "--rounds", "2", "--tasks", "8",
    ]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[0].starts_with("round 5 won 1 duplicates 0 "), "{out}");
    assert!(lines[1].starts_with("round 6 won 1 duplicates 0 "), "{out}");
    let shared = run_worker(&[
        "shared",
        "--store",
        &store,
        "--threads",
        "2",
        "--count",
        "3",
    ]);
    assert_eq!(shared, "shared applied 6 resends 0 refused\n");
}

#[test]
fn the_scenario_tells_the_story_and_replays_it_after_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_worker(&["scenario", "--store", &spec(&dir, "s.sqlite")]);
    for needle in [
        "-> #1 mission.created",
        "-> #6 work.offer.accepted",
        "-> #8 artifact.published",
        "-> #12 mission.approved",
        "reopened: 12 Events replayed",
        "Mission approved, WorkItem verified",
    ] {
        assert!(out.contains(needle), "{needle} missing:\n{out}");
    }
}

#[test]
fn bad_arguments_are_usage_errors_and_a_missing_postgres_server_is_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    let store = spec(&dir, "x.sqlite");
    for args in [
        vec![],
        vec!["explode", "--store", &store],
        vec!["stream", "--store", &store],
        vec!["stream", "--store", &store, "--from", "x", "--to", "1"],
        vec!["setup", "--store"],
        vec!["setup", "store", &store],
        vec!["setup", "--store", &store, "--store", &store],
        vec!["setup", "--store", "nowhere"],
        vec![
            "race",
            "--store",
            &store,
            "--round",
            "0",
            "--tasks",
            "2",
            "--barrier",
            "/tmp",
        ],
    ] {
        let output = raw(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&output.stderr).contains("usage: mwp-store-worker"));
    }
    // A PostgreSQL server that is not there: the store's typed error, exit 1.
    let output = raw(&[
        "setup",
        "--store",
        "postgresql://mwp@127.0.0.1:1/mwp?schema=nowhere&connect_timeout=2",
    ]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("error: INTERNAL_ERROR backend_failure: store: "),
        "{stderr}"
    );
    // A bad harness parameter in a PostgreSQL spec, and a bad --group-commit: usage errors.
    for args in [
        vec!["setup", "--store", "postgresql://h/db?schema=no-dash"],
        vec![
            "bench",
            "--store",
            &store,
            "--threads",
            "2",
            "--count",
            "2",
            "--group-commit",
            "maybe",
        ],
    ] {
        let output = raw(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
    }
    // The stream before the setup: stream Command 0 adds a member to a stream Group that does
    // not exist yet, refused with the core's own code (§17.2), exit 1, nothing confirmed.
    let output = raw(&["stream", "--store", &store, "--from", "0", "--to", "30"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("error: GROUP_NOT_FOUND group_not_found: membership.change "),
        "{stderr}"
    );
    assert!(raw(&["--help"]).status.success());
}
