//! Races: many submitters send Commands at the same moment, in threads of one process and
//! across processes.
//!
//! - [`race_round`]: the threads of this process each send their `work.accept_offer` for one
//!   round's offer at once (after a [`FileBarrier`] lines up the processes, if any), and the
//!   outcomes are tallied: exactly one may win (§10.3).
//! - [`shared_group`]: threads each send a run of Commands to the one shared Group; the store
//!   must keep one contiguous sequence (§4.7, §15.2).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use missionweaveprotocol_engine::store::Store;

use crate::command::WireCommand;
use crate::error::HarnessError;
use crate::perform::send;
use crate::workload::{HarnessCore, Workload};

/// How long a [`FileBarrier`] waits for the other processes.
const BARRIER_TIMEOUT: Duration = Duration::from_secs(120);
/// The marker a failing process leaves in the barrier directory.
const ABORT: &str = "abort";

/// A barrier across processes through marker files in one directory: process `process` of
/// `parties` creates `round-R-process-P`, then waits until every party's marker of round R
/// exists. Independent of the store, so it lines up processes on any backend.
#[derive(Debug, Clone)]
pub struct FileBarrier {
    dir: PathBuf,
    parties: u64,
    process: u64,
}

impl FileBarrier {
    /// Process `process` (`< parties`) of `parties` meeting in `dir` (which must exist).
    pub fn new(dir: impl Into<PathBuf>, parties: u64, process: u64) -> Result<Self, HarnessError> {
        if process >= parties {
            return Err(HarnessError::argument(
                "process",
                format!("process {process} is not one of {parties} parties"),
            ));
        }
        Ok(Self {
            dir: dir.into(),
            parties,
            process,
        })
    }

    fn marker(dir: &Path, round: u64, process: u64) -> PathBuf {
        dir.join(format!("round-{round}-process-{process}"))
    }

    /// Tells every party to stop waiting (this process failed): their [`wait`](Self::wait)
    /// fails at once instead of after the timeout.
    pub fn abort(&self) {
        // Best effort: if even this fails, the others time out.
        let _ = std::fs::write(self.dir.join(ABORT), self.process.to_string());
    }

    /// Arrives at `round` and waits for every party. Fails if a party aborted, or did not
    /// arrive within two minutes.
    pub fn wait(&self, round: u64) -> Result<(), HarnessError> {
        let marker = Self::marker(&self.dir, round, self.process);
        std::fs::write(&marker, b"")
            .map_err(|e| HarnessError::io(marker.display().to_string(), &e))?;
        let start = Instant::now();
        while !(0..self.parties).all(|p| Self::marker(&self.dir, round, p).exists()) {
            if self.dir.join(ABORT).exists() {
                return Err(HarnessError::check(format!(
                    "barrier of round {round}: another process failed"
                )));
            }
            if start.elapsed() > BARRIER_TIMEOUT {
                return Err(HarnessError::check(format!(
                    "barrier of round {round}: the other processes did not arrive"
                )));
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        Ok(())
    }
}

/// The outcomes of one round's acceptances sent by this process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RoundTally {
    /// The round.
    pub round: u64,
    /// Acceptances applied by this send (winners).
    pub won: u32,
    /// Answers naming an earlier application of the same Command (none expected: every
    /// submitter has its own Action ID).
    pub duplicates: u32,
    /// Refusals by wire code and reason (`WORK_ALREADY_OWNED/…`).
    pub refused: BTreeMap<String, u32>,
    /// Re-sends after retryable refusals.
    pub resends: u32,
    /// The winners' submitters.
    pub winners: Vec<u64>,
}

impl fmt::Display for RoundTally {
    /// `round R won W duplicates D resends N refused CODE/reason=n …` (one line).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "round {} won {} duplicates {} resends {} winners {:?} refused",
            self.round, self.won, self.duplicates, self.resends, self.winners
        )?;
        for (code, n) in &self.refused {
            write!(f, " {code}={n}")?;
        }
        Ok(())
    }
}

/// Round `round`: one thread per submitter of `submitters` sends its `work.accept_offer`
/// ([`Workload::race_accept`]) at once — after `barrier` (other processes) when given — and
/// the outcomes are tallied.
pub fn race_round<S: Store + Sync>(
    core: &HarnessCore<S>,
    workload: &Workload,
    round: u64,
    submitters: std::ops::Range<u64>,
    barrier: Option<&FileBarrier>,
) -> Result<RoundTally, HarnessError> {
    let commands: Vec<(u64, WireCommand)> = submitters
        .map(|s| workload.race_accept(round, s).map(|c| (s, c)))
        .collect::<Result<_, _>>()?;
    let start = Barrier::new(commands.len() + 1);
    let outcomes = std::thread::scope(|scope| {
        let handles: Vec<_> = commands
            .iter()
            .map(|(submitter, command)| {
                let start = &start;
                scope.spawn(move || {
                    start.wait();
                    (*submitter, send(core, command))
                })
            })
            .collect();
        // Every thread holds its signed Command; line up the processes, then release them.
        let lined_up = barrier.map_or(Ok(()), |b| b.wait(round));
        start.wait();
        let outcomes: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
        lined_up.map(|()| outcomes)
    })?;
    let mut tally = RoundTally {
        round,
        ..RoundTally::default()
    };
    for outcome in outcomes {
        let (submitter, sent) =
            outcome.map_err(|_| HarnessError::check("a submitter thread panicked"))?;
        tally.resends += sent.sends - 1;
        match sent.result {
            Ok(performed) if performed.duplicate => tally.duplicates += 1,
            Ok(_) => {
                tally.won += 1;
                tally.winners.push(submitter);
            }
            Err(e) => {
                *tally
                    .refused
                    .entry(format!("{}/{}", e.wire_code, e.reason))
                    .or_default() += 1
            }
        }
    }
    tally.winners.sort_unstable();
    Ok(tally)
}

/// What [`shared_group`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SharedTally {
    /// Commands applied.
    pub applied: u32,
    /// Re-sends after retryable refusals.
    pub resends: u32,
    /// Refusals by wire code and reason (none expected).
    pub refused: BTreeMap<String, u32>,
}

/// `threads` threads of process `process` each send `count` Commands
/// ([`Workload::shared_group_command`]) to the shared Group, all starting at once (after
/// `barrier` when given, as round 0).
pub fn shared_group<S: Store + Sync>(
    core: &HarnessCore<S>,
    workload: &Workload,
    process: u64,
    threads: u64,
    count: u64,
    barrier: Option<&FileBarrier>,
) -> Result<SharedTally, HarnessError> {
    let commands: Vec<Vec<WireCommand>> = (0..threads)
        .map(|t| {
            (0..count)
                .map(|k| workload.shared_group_command(process, t, k))
                .collect()
        })
        .collect::<Result<_, _>>()?;
    let start = Barrier::new(commands.len() + 1);
    let results = std::thread::scope(|scope| {
        let handles: Vec<_> = commands
            .iter()
            .map(|run| {
                let start = &start;
                scope.spawn(move || {
                    start.wait();
                    run.iter().map(|c| send(core, c)).collect::<Vec<_>>()
                })
            })
            .collect();
        let lined_up = barrier.map_or(Ok(()), |b| b.wait(0));
        start.wait();
        let results: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
        lined_up.map(|()| results)
    })?;
    let mut tally = SharedTally::default();
    for run in results {
        let run = run.map_err(|_| HarnessError::check("a submitter thread panicked"))?;
        for sent in run {
            tally.resends += sent.sends - 1;
            match sent.result {
                Ok(_) => tally.applied += 1,
                Err(e) => {
                    *tally
                        .refused
                        .entry(format!("{}/{}", e.wire_code, e.reason))
                        .or_default() += 1
                }
            }
        }
    }
    Ok(tally)
}
