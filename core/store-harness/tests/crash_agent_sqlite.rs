//! Crash safety of the Agent-local SQLite store (issue 12 "The Agent side"): an Agent process
//! (`mwp-agent-worker`) is SIGKILLed at seeded random moments, at least 50 times per test.
//!
//! - Replay: after every kill, each Group's cursor is at least the last one the worker
//!   confirmed, its inbox holds exactly the Events 1..=cursor at their positions, and the stored
//!   Scheduler snapshot holds exactly the offers of those Events (so no batch is half-written
//!   and no Event's effect is there twice or missing); the restarted worker replays only the
//!   tail, and a run to the end admits every offer once (`accepted`, never `duplicate`).
//! - Outbox: after every kill, every confirmed enqueue is there, every confirmed mark stays
//!   sent, the pending actions keep enqueue order; no action is ever sent again after its mark
//!   committed, and at the end every action is marked sent exactly once.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeSet, HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use missionweaveprotocol::json::{Number, Object, Value};
use missionweaveprotocol_store_sqlite::SqliteAgentStore;

const AGENT: &str = "urn:missionweaveprotocol:agent:crash-worker";
const KILLS: u32 = 50;

fn worker() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_mwp-agent-worker"))
}

fn group(g: u64) -> String {
    format!("urn:missionweaveprotocol:group:crash-{g}")
}

fn event_id(g: u64, sequence: u64) -> String {
    format!("urn:uuid:00000000-{g:04x}-4000-8000-{sequence:012x}")
}

/// SplitMix64: the kill delays.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n.max(1)
    }
}

/// One worker run: its lines, and whether it was killed (false: it finished first).
fn run(args: &[String], rng: &mut Rng, max_delay_ms: u64) -> (Vec<String>, bool) {
    let mut child = Command::new(worker())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut lines = Vec::new();
    // One kill in four is timed from the spawn (it may land while the store opens); the
    // others from the first line, at a random phase of the work.
    if rng.below(4) == 0 {
        std::thread::sleep(Duration::from_micros(rng.below(20_000)));
    } else if let Ok(first) = rx.recv_timeout(Duration::from_secs(60)) {
        lines.push(first);
        std::thread::sleep(Duration::from_millis(rng.below(max_delay_ms)));
    }
    // SIGKILL: no destructor, no rollback, no flush runs.
    child.kill().unwrap();
    let status = child.wait().unwrap();
    reader.join().unwrap();
    lines.extend(rx.try_iter());
    let killed = status.signal() == Some(9);
    assert!(
        killed || status.success(),
        "the worker failed by itself: {status}, last lines {:?}",
        lines.iter().rev().take(3).collect::<Vec<_>>()
    );
    if !killed {
        assert_eq!(lines.last().map(String::as_str), Some("done"));
    }
    (lines, killed)
}

fn expected_offers(cursors: &[u64]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (g, &c) in cursors.iter().enumerate() {
        for s in (20..=c).step_by(20) {
            out.insert(format!("work-{}", event_id(g as u64, s)));
        }
    }
    out
}

/// The store after a kill: cursors not behind the confirmed ones, exact inboxes, and a
/// Scheduler snapshot holding exactly the offers of the Events under the cursors.
fn check_replay(db: &Path, groups: u64, events: u64, confirmed: &HashMap<String, u64>) -> Vec<u64> {
    let store = SqliteAgentStore::open(db).unwrap();
    let mut cursors = Vec::new();
    for g in 0..groups {
        let name = group(g);
        let c = store.cursor(AGENT, &name).unwrap();
        assert!(
            c >= confirmed.get(&name).copied().unwrap_or(0),
            "a confirmed batch was lost"
        );
        assert!(c <= events);
        let inbox = store.inbox(AGENT, &name).unwrap();
        let expected: Vec<(String, u64)> = (1..=c).map(|s| (event_id(g, s), s)).collect();
        assert!(
            inbox == expected,
            "the inbox of {name} does not match its cursor {c}"
        );
        cursors.push(c);
    }
    let stored: BTreeSet<String> = store
        .load_scheduler(AGENT)
        .unwrap()
        .map(|s| s.records.into_iter().map(|r| r.offer.work_id).collect())
        .unwrap_or_default();
    assert!(
        stored == expected_offers(&cursors),
        "the Scheduler snapshot does not match the cursors {cursors:?}"
    );
    cursors
}

#[test]
fn an_agent_killed_during_replay_keeps_cursor_inbox_and_scheduler_consistent() {
    const GROUPS: u64 = 3;
    const EVENTS: u64 = 20_000;
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x5eed_a9e7);
    let (mut kills, mut epochs, mut batches) = (0u32, 0u32, 0u64);
    let started = Instant::now();
    while kills < KILLS {
        let db = dir.path().join(format!("replay-{epochs}.sqlite"));
        let args: Vec<String> = [
            "replay",
            "--db",
            db.to_str().unwrap(),
            "--groups",
            &GROUPS.to_string(),
            "--events",
            &EVENTS.to_string(),
            "--batch",
            "128",
            "--page",
            "500",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        let mut confirmed: HashMap<String, u64> = HashMap::new();
        let mut cursors = vec![0; GROUPS as usize];
        loop {
            let (lines, killed) = run(&args, &mut rng, 600);
            for line in &lines {
                let parts: Vec<&str> = line.split(' ').collect();
                if parts[0] == "commit" {
                    batches += 1;
                    confirmed.insert(parts[1].to_owned(), parts[2].parse().unwrap());
                }
            }
            if killed {
                kills += 1;
                cursors = check_replay(&db, GROUPS, EVENTS, &confirmed);
                continue;
            }
            // Finished: it replayed only the tail after the cursors of the last check, and
            // admitted every offer once.
            for (g, &c) in cursors.iter().enumerate() {
                let name = group(g as u64);
                let result = lines
                    .iter()
                    .find(|l| l.starts_with(&format!("result {name} ")))
                    .unwrap();
                let f: Vec<u64> = result
                    .split(' ')
                    .skip(2)
                    .map(|x| x.parse().unwrap())
                    .collect();
                assert_eq!(f, [c, EVENTS, EVENTS - c, 0], "{result}");
            }
            let end = check_replay(&db, GROUPS, EVENTS, &confirmed);
            assert_eq!(end, vec![EVENTS; GROUPS as usize]);
            break;
        }
        epochs += 1;
    }
    println!(
        "agent replay crash test: {kills} SIGKILLs over {epochs} full replays of {GROUPS} Groups × \
         {EVENTS} Events, {batches} confirmed batches, every check passed; {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

fn payload(i: u64) -> Value {
    let mut o = Object::new();
    o.insert("index", Value::Number(Number::from_u64(i)));
    o.insert("kind", Value::string("message.post"));
    Value::Object(o)
}

#[test]
fn an_agent_killed_during_enqueue_and_mark_sent_loses_and_repeats_nothing() {
    const ACTIONS: u64 = 300;
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x0b0c_5eed);
    let (mut kills, mut epochs, mut in_flight_resent) = (0u32, 0u32, 0u32);
    let started = Instant::now();
    while kills < KILLS {
        let db = dir.path().join(format!("outbox-{epochs}.sqlite"));
        let mut enqueued: Option<u64> = None;
        let mut marked: HashSet<String> = HashSet::new();
        loop {
            let from = enqueued.map_or(0, |i| i + 1);
            let args: Vec<String> = [
                "outbox",
                "--db",
                db.to_str().unwrap(),
                "--from",
                &from.to_string(),
                "--to",
                &ACTIONS.to_string(),
            ]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
            let (lines, killed) = run(&args, &mut rng, 250);
            let mut sending: Option<String> = None;
            for line in &lines {
                let (word, rest) = line.split_once(' ').unwrap_or((line.as_str(), ""));
                match word {
                    "enqueued" => enqueued = Some(rest.parse().unwrap()),
                    "send" => {
                        assert!(
                            !marked.contains(rest),
                            "{rest} is sent again after its mark committed"
                        );
                        sending = Some(rest.to_owned());
                    }
                    "sent" => {
                        assert_eq!(sending.take().as_deref(), Some(rest));
                        marked.insert(rest.to_owned());
                    }
                    _ => {}
                }
            }
            let store = SqliteAgentStore::open(&db).unwrap();
            let pending: Vec<String> = store
                .pending_actions(AGENT)
                .unwrap()
                .into_iter()
                .map(|p| p.action_id)
                .collect();
            assert!(
                pending.windows(2).all(|w| w[0] < w[1]),
                "pending out of enqueue order"
            );
            assert!(
                pending.iter().all(|p| !marked.contains(p)),
                "a confirmed mark was lost"
            );
            if let Some(in_flight) = sending {
                // Killed between sending and its mark: the next run sends it again (the stable
                // idempotency key makes that safe, §16); it is never lost.
                if pending.contains(&in_flight) {
                    in_flight_resent += 1;
                }
            }
            for i in 0..=enqueued.unwrap_or(0) {
                if enqueued.is_none() {
                    break;
                }
                let id = format!("act-{i:06}");
                // Already there (pending or sent): enqueueing again changes nothing.
                assert!(
                    !store.enqueue_action(AGENT, &id, &payload(i)).unwrap(),
                    "{id} was lost"
                );
            }
            if killed {
                kills += 1;
                continue;
            }
            assert!(pending.is_empty());
            for i in 0..ACTIONS {
                let id = format!("act-{i:06}");
                assert!(
                    !store.mark_action_sent(AGENT, &id).unwrap(),
                    "{id} was not sent"
                );
            }
            break;
        }
        epochs += 1;
    }
    println!(
        "agent outbox crash test: {kills} SIGKILLs over {epochs} runs of {ACTIONS} actions; \
         {in_flight_resent} in-flight sends repeated after a kill before their mark, none after; \
         {:.1} s",
        started.elapsed().as_secs_f64()
    );
}
