//! The crash-test body (issue 11 "Crash safety"): a writer process performing the stream is
//! killed with SIGKILL at random moments, again and again; after each kill the store is
//! opened and checked, the in-flight Command is re-sent, and a new writer continues from the
//! last Command it confirmed.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use missionweaveprotocol_store_harness::check::{
    Applied, LoggedEvent, group_log, mission_matches_log, stream_applied,
};
use missionweaveprotocol_store_harness::workload::STREAM_GROUPS;
use missionweaveprotocol_store_harness::{NOW, StreamCommand, Workload, open_store};

use super::{Rng, run_worker, worker};

/// What a crash run did.
#[derive(Debug, Default)]
pub struct CrashReport {
    /// SIGKILLs delivered to a running writer.
    pub kills: u32,
    /// Stream Commands confirmed (`done`) or re-sent and checked.
    pub commands: u64,
    /// Kills after which the in-flight Command turned out applied though unconfirmed (the
    /// writer died between its commit and its `done` line).
    pub in_flight_applied: u32,
    /// Kills after which the in-flight Command was not applied (died before its commit
    /// returned, or before it began).
    pub in_flight_absent: u32,
    /// Kills before the writer confirmed any Command.
    pub early_kills: u32,
    pub elapsed: Duration,
}

/// How the writers of one run reach the store, per backend.
pub struct Writers<'a> {
    /// The spec writer `n` (counting from 0) opens.
    pub spec: &'a dyn Fn(u32) -> String,
    /// Returns once what killed writer `n` left behind is settled: nothing of it can still
    /// commit. SQLite: at once (the kernel drops the dead process's file locks; its WAL
    /// frames are on disk or not). A server: when the dead client's sessions have ended.
    pub settle: &'a dyn Fn(u32),
}

/// One writer: `stream --from from`, killed after a random delay. The confirmed
/// `(index, group, sequence)` lines, in order.
fn killed_writer(spec: &str, seed: u64, from: u64, rng: &mut Rng) -> Vec<(u64, String, u64)> {
    let mut child = Command::new(worker())
        .args([
            "stream",
            "--store",
            spec,
            "--seed",
            &seed.to_string(),
            "--from",
            &from.to_string(),
            "--to",
            &(from + 1_000_000).to_string(),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (lines, received) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let parts: Vec<&str> = line.split(' ').collect();
            assert_eq!(parts.len(), 4, "unexpected writer line {line:?}");
            assert_eq!(parts[0], "done", "unexpected writer line {line:?}");
            let done = (
                parts[1].parse::<u64>().unwrap(),
                parts[2].to_owned(),
                parts[3].parse::<u64>().unwrap(),
            );
            if lines.send(done).is_err() {
                break;
            }
        }
    });
    let mut confirmed = Vec::new();
    // One kill in four is timed from the spawn (it may land while the writer starts, opens the
    // store or performs its first Command); the others from its first confirmed Command, so
    // they land at a random phase of the perform/commit cycle.
    if rng.below(4) == 0 {
        std::thread::sleep(Duration::from_micros(rng.below(30_000)));
    } else {
        let first = received
            .recv_timeout(Duration::from_secs(30))
            .expect("the writer confirmed nothing within 30 s");
        confirmed.push(first);
        std::thread::sleep(Duration::from_micros(rng.below(25_000)));
    }
    // `Child::kill` is SIGKILL on Unix: no destructor, no flush, no rollback runs.
    child.kill().unwrap();
    let status = child.wait().unwrap();
    // Killed by our SIGKILL, not ended by itself (a writer's own failure exits 1).
    assert_eq!(
        status.signal(),
        Some(9),
        "the writer ended before it was killed: {status}"
    );
    reader.join().unwrap();
    confirmed.extend(received.try_iter());
    confirmed
}

/// The stream Commands generated so far (generating one signs it; the checks need them all).
struct Stream {
    workload: Workload,
    commands: Vec<StreamCommand>,
}

impl Stream {
    fn get(&mut self, i: u64) -> &StreamCommand {
        while self.commands.len() as u64 <= i {
            let next = self.commands.len() as u64;
            self.commands.push(self.workload.stream(next).unwrap());
        }
        &self.commands[i as usize]
    }
}

/// Checks the store after a kill: every confirmed Command applied at its confirmed position
/// and all-or-nothing, every log contiguous, every stream Mission's revision the one its last
/// Event announced, nothing of the Commands after the in-flight one. Then re-sends the
/// in-flight Command (same bytes) and checks it has exactly one Event. Returns whether it had
/// been applied before the re-send.
fn check_after_kill(
    spec: &str,
    stream: &mut Stream,
    confirmed: &[Option<(String, u64)>],
    in_flight: u64,
) -> bool {
    let store = open_store(spec).unwrap();
    let mut logs: HashMap<String, Vec<LoggedEvent>> = HashMap::new();
    for n in 0..STREAM_GROUPS {
        let (group, mission) = stream.workload.stream_group(n);
        let log = group_log(&*store, &group, None).unwrap();
        mission_matches_log(&*store, &mission, &log).unwrap();
        logs.insert(group, log);
    }
    let mut applied_at = |stream: &mut Stream, i: u64| -> Option<Applied> {
        let command = stream.get(i).clone();
        let log = logs
            .entry(command.group.clone())
            .or_insert_with(|| group_log(&*store, &command.group, None).unwrap());
        stream_applied(&*store, &command, log).unwrap()
    };
    for (i, position) in confirmed.iter().enumerate() {
        let applied = applied_at(stream, i as u64)
            .unwrap_or_else(|| panic!("confirmed stream Command {i} is missing after a kill"));
        if let Some((group, sequence)) = position {
            assert_eq!(
                (&applied.group, applied.sequence),
                (group, *sequence),
                "stream Command {i} moved"
            );
        }
    }
    let before = applied_at(stream, in_flight);
    for later in in_flight + 1..in_flight + 3 {
        assert_eq!(
            applied_at(stream, later),
            None,
            "stream Command {later} applied before {in_flight}"
        );
    }
    // Re-send the in-flight Command: the same bytes, through a fresh core.
    let command = stream.get(in_flight).clone();
    let core = stream.workload.core(store.clone()).unwrap();
    let performed = core
        .perform_bytes(&command.command.bytes, NOW)
        .unwrap_or_else(|e| panic!("re-sent stream Command {in_flight} refused: {e:?}"));
    let first = &performed.events[0];
    match &before {
        Some(applied) => {
            assert!(performed.duplicate, "an applied Command was applied again");
            assert_eq!(&*first.event_id, applied.event_id);
        }
        None => assert!(!performed.duplicate),
    }
    let log = group_log(&*store, &command.group, None).unwrap();
    let after = stream_applied(&*store, &command, &log)
        .unwrap()
        .expect("the re-sent Command is applied");
    assert_eq!(
        (after.group.as_str(), after.sequence),
        (performed.group_id.as_str(), first.sequence)
    );
    if let Some(before) = &before {
        assert_eq!(&after, before, "the re-send changed the first application");
    }
    before.is_some()
}

/// Kills a stream writer on the store `spec` `kills` times (delays from `rng_seed`), checking
/// the store after each kill; then lets a last writer finish and verifies the whole store.
pub fn run(spec: &str, seed: u64, kills: u32, rng_seed: u64) -> CrashReport {
    let writers = Writers {
        spec: &|_| spec.to_owned(),
        settle: &|_| {},
    };
    run_with(spec, seed, kills, rng_seed, &writers)
}

/// [`run`], the writers opening the store as `writers` says and settled after each kill.
pub fn run_with(
    spec: &str,
    seed: u64,
    kills: u32,
    rng_seed: u64,
    writers: &Writers<'_>,
) -> CrashReport {
    let start = Instant::now();
    run_worker(&["setup", "--store", spec, "--seed", &seed.to_string()]);
    let mut stream = Stream {
        workload: Workload::new(seed).unwrap(),
        commands: Vec::new(),
    };
    let mut rng = Rng::new(rng_seed);
    let mut report = CrashReport::default();
    // Index i: where stream Command i's Event is (None: re-sent by this test after a kill,
    // checked then).
    let mut confirmed: Vec<Option<(String, u64)>> = Vec::new();
    while report.kills < kills {
        let from = confirmed.len() as u64;
        let lines = killed_writer(&(writers.spec)(report.kills), seed, from, &mut rng);
        (writers.settle)(report.kills);
        report.kills += 1;
        if lines.is_empty() {
            report.early_kills += 1;
        }
        for (offset, (i, group, sequence)) in lines.into_iter().enumerate() {
            assert_eq!(i, from + offset as u64, "the writer confirmed out of order");
            confirmed.push(Some((group, sequence)));
        }
        let in_flight = confirmed.len() as u64;
        if check_after_kill(spec, &mut stream, &confirmed, in_flight) {
            report.in_flight_applied += 1;
        } else {
            report.in_flight_absent += 1;
        }
        confirmed.push(None);
    }
    // A last writer runs to its end; everything must still hold, and every Event verify.
    let from = confirmed.len() as u64;
    let out = run_worker(&[
        "stream",
        "--store",
        spec,
        "--seed",
        &seed.to_string(),
        "--from",
        &from.to_string(),
        "--to",
        &(from + 10).to_string(),
    ]);
    assert_eq!(out.lines().count(), 10);
    check_after_kill(spec, &mut stream, &confirmed, from + 9);
    let verified = run_worker(&["verify", "--store", spec, "--seed", &seed.to_string()]);
    assert!(verified.starts_with("verified "), "{verified}");
    report.commands = from + 10;
    report.elapsed = start.elapsed();
    report
}
