//! The cross-process race bodies (issue 11 "Races across processes"): several worker
//! processes, each with many threads, race `work.accept_offer` on the same offer round after
//! round, lined up by a file barrier; and several processes send Commands to one Group at
//! once. Real processes, real threads, one store.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use missionweaveprotocol_engine::store::{AggregateKey, Store};
use missionweaveprotocol_engine::work::{AGGREGATE_KIND, WorkItem};
use missionweaveprotocol_store_harness::check::{caused_by, group_log, mission_matches_log};
use missionweaveprotocol_store_harness::{Workload, open_store};

use super::{check_output, run_worker, worker};

fn spawn(args: &[String]) -> Child {
    Command::new(worker())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Runs `processes` workers with `args(p)` at once; their stdouts.
fn run_processes(processes: u64, args: impl Fn(u64) -> Vec<String>) -> Vec<String> {
    let children: Vec<(Vec<String>, Child)> = (0..processes)
        .map(|p| {
            let a = args(p);
            let child = spawn(&a);
            (a, child)
        })
        .collect();
    children
        .into_iter()
        .map(|(a, child)| {
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            check_output(&a, child.wait_with_output().unwrap())
        })
        .collect()
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| (*s).to_owned()).collect()
}

#[derive(Debug)]
pub struct RaceReport {
    pub rounds: u64,
    pub submitters_per_round: u64,
    /// Refusals of the losers by `CODE/reason`, over all rounds.
    pub refused: BTreeMap<String, u64>,
    pub resends: u64,
    /// Wall time of the racing processes (setup of each round included).
    pub race: Duration,
    pub elapsed: Duration,
}

/// `processes` worker processes × `tasks` threads race `work.accept_offer` on each of
/// `rounds` offers (one fresh offer per round, all processes lined up before each round):
/// exactly one winner every round, every loser a typed refusal, and the store agrees.
pub fn accept_offer_rounds(
    spec: &str,
    barrier: &Path,
    seed: u64,
    rounds: u64,
    processes: u64,
    tasks: u64,
) -> RaceReport {
    let start = Instant::now();
    run_worker(&["setup", "--store", spec, "--seed", &seed.to_string()]);
    let racing = Instant::now();
    let outputs = run_processes(processes, |p| {
        strings(&[
            "race",
            "--store",
            spec,
            "--seed",
            &seed.to_string(),
            "--round",
            "0",
            "--rounds",
            &rounds.to_string(),
            "--tasks",
            &tasks.to_string(),
            "--process",
            &p.to_string(),
            "--parties",
            &processes.to_string(),
            "--barrier",
            &barrier.display().to_string(),
        ])
    });
    let mut report = RaceReport {
        rounds,
        submitters_per_round: processes * tasks,
        refused: BTreeMap::new(),
        resends: 0,
        race: racing.elapsed(),
        elapsed: Duration::ZERO,
    };
    // round → (winners, answers)
    let mut per_round: BTreeMap<u64, (Vec<u64>, u64)> = BTreeMap::new();
    for output in &outputs {
        assert_eq!(output.lines().count() as u64, rounds, "{output}");
        for line in output.lines() {
            // round R won W duplicates D resends N winners [..] refused CODE/reason=n …
            let words: Vec<&str> = line.split(' ').collect();
            assert_eq!(
                (words[0], words[2], words[4], words[6]),
                ("round", "won", "duplicates", "resends"),
                "{line}"
            );
            let round: u64 = words[1].parse().unwrap();
            let won: u64 = words[3].parse().unwrap();
            assert_eq!(
                words[5], "0",
                "a submitter's own Command answered as a duplicate: {line}"
            );
            report.resends += words[7].parse::<u64>().unwrap();
            let winners_start = line.find('[').unwrap();
            let winners_end = line.find(']').unwrap();
            let winners: Vec<u64> = line[winners_start + 1..winners_end]
                .split(", ")
                .filter(|w| !w.is_empty())
                .map(|w| w.parse().unwrap())
                .collect();
            assert_eq!(winners.len() as u64, won, "{line}");
            let refused = line[winners_end + 1..].trim_start();
            let refused = refused.strip_prefix("refused").unwrap();
            let mut losers = 0;
            for pair in refused.split_whitespace() {
                let (code, n) = pair.split_once('=').unwrap();
                let n: u64 = n.parse().unwrap();
                assert!(
                    code.starts_with("WORK_ALREADY_OWNED/")
                        || code.starts_with("INVALID_STATE_TRANSITION/"),
                    "a loser got {code}: {line}"
                );
                *report.refused.entry(code.to_owned()).or_default() += n;
                losers += n;
            }
            assert_eq!(
                won + losers,
                tasks,
                "every submitter has one answer: {line}"
            );
            let entry = per_round.entry(round).or_default();
            entry.0.extend(winners);
            entry.1 += tasks;
        }
    }
    assert_eq!(per_round.len() as u64, rounds);
    // Exactly one winner per round over all processes, and the store agrees.
    let workload = Workload::new(seed).unwrap();
    let store = open_store(spec).unwrap();
    for (round, (winners, answers)) in &per_round {
        assert_eq!(*answers, processes * tasks);
        assert_eq!(winners.len(), 1, "round {round}: winners {winners:?}");
        check_round(&*store, &workload, *round, winners[0], processes * tasks);
    }
    report.elapsed = start.elapsed();
    report
}

/// The store after round `round`: the WorkItem `queued` at Ownership Epoch 1, owned by the
/// winner's Agent, one `work.offer.accepted` (the winner's) in a contiguous, verified log, a
/// receipt for the winner's Command and none for any loser's.
fn check_round(store: &dyn Store, workload: &Workload, round: u64, winner: u64, submitters: u64) {
    let race = workload.race_round(round).unwrap();
    let stored = store
        .aggregate(&AggregateKey::new(AGGREGATE_KIND, &race.item))
        .unwrap()
        .unwrap();
    let item = WorkItem::from_json(&stored.value).unwrap();
    let won = workload.race_accept(round, winner).unwrap();
    assert_eq!(item.state.as_str(), "queued");
    let owner = item.owner.as_ref().unwrap();
    assert_eq!(
        (owner.ownership_epoch, owner.agent_id.as_str()),
        (1, won.actor.id.as_str())
    );
    let log = group_log(store, &race.group, Some(workload.keys().registry())).unwrap();
    let accepted: Vec<_> = log
        .iter()
        .filter(|e| e.kind == "work.offer.accepted")
        .collect();
    assert_eq!(accepted.len(), 1, "round {round}");
    assert_eq!(
        accepted[0].action_id.as_deref(),
        Some(won.action_id.as_str())
    );
    for submitter in 0..submitters {
        let key = workload.race_accept_key(round, submitter);
        let receipt = store.receipt(&key).unwrap();
        assert_eq!(
            receipt.is_some(),
            submitter == winner,
            "round {round}: submitter {submitter}'s receipt"
        );
    }
}

#[derive(Debug)]
pub struct SharedReport {
    pub commands: u64,
    pub events: usize,
    pub resends: u64,
    pub elapsed: Duration,
}

/// `processes` worker processes × `threads` threads each send `count` Commands to the one
/// shared Group at once: one contiguous, verified sequence holding each Command's Event
/// exactly once, and the Mission at the revision its last Event announced.
pub fn one_group(
    spec: &str,
    barrier: &Path,
    seed: u64,
    processes: u64,
    threads: u64,
    count: u64,
) -> SharedReport {
    let start = Instant::now();
    run_worker(&["setup", "--store", spec, "--seed", &seed.to_string()]);
    let workload = Workload::new(seed).unwrap();
    let (group, mission) = workload.shared_group();
    let store = open_store(spec).unwrap();
    let before = group_log(&*store, &group, None).unwrap().len();
    drop(store);
    let outputs = run_processes(processes, |p| {
        strings(&[
            "shared",
            "--store",
            spec,
            "--seed",
            &seed.to_string(),
            "--threads",
            &threads.to_string(),
            "--count",
            &count.to_string(),
            "--process",
            &p.to_string(),
            "--parties",
            &processes.to_string(),
            "--barrier",
            &barrier.display().to_string(),
        ])
    });
    let mut resends = 0;
    for output in &outputs {
        // shared applied N resends R refused
        let words: Vec<&str> = output.split_whitespace().collect();
        assert_eq!(words[..2], ["shared", "applied"], "{output}");
        assert_eq!(
            words[2].parse::<u64>().unwrap(),
            threads * count,
            "{output}"
        );
        resends += words[4].parse::<u64>().unwrap();
        assert_eq!(words.len(), 6, "no refusal expected: {output}");
    }
    let store = open_store(spec).unwrap();
    let log = group_log(&*store, &group, Some(workload.keys().registry())).unwrap();
    let commands = processes * threads * count;
    assert_eq!(
        log.len() as u64,
        before as u64 + commands,
        "one Event per Command"
    );
    let mut actions = HashSet::new();
    for p in 0..processes {
        for t in 0..threads {
            for k in 0..count {
                let command = workload.shared_group_command(p, t, k).unwrap();
                assert_eq!(
                    caused_by(&log, &command.action_id).len(),
                    1,
                    "{}",
                    command.action_id
                );
                assert!(store.receipt(&command.receipt_key()).unwrap().is_some());
                actions.insert(command.action_id);
            }
        }
    }
    assert_eq!(actions.len() as u64, commands);
    mission_matches_log(&*store, &mission, &log).unwrap();
    SharedReport {
        commands,
        events: log.len(),
        resends,
        elapsed: start.elapsed(),
    }
}
