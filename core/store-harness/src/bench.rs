//! Throughput of a core over a store under concurrent submitters: `threads` threads share
//! one core and take Commands from one list in order; wall-clock Commands per second and the
//! per-Command latency percentiles. Commands are signed before the clock starts.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use missionweaveprotocol_engine::store::Store;

use crate::command::WireCommand;
use crate::error::HarnessError;
use crate::perform::send;
use crate::workload::{HarnessCore, Workload};

/// What [`run`] measured.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchReport {
    /// Commands performed.
    pub commands: usize,
    /// Submitter threads.
    pub threads: usize,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Commands per second (wall clock).
    pub per_second: f64,
    /// Median latency of one `perform_bytes` (with its re-sends), milliseconds.
    pub p50_ms: f64,
    /// 99th percentile latency, milliseconds.
    pub p99_ms: f64,
    /// Answers that were duplicates (the store already held the Command: not a fresh store).
    pub duplicates: usize,
    /// Re-sends after retryable refusals.
    pub resends: u64,
    /// When the first Command was sent and the last answered, milliseconds since the Unix
    /// epoch: several processes' windows combine into one rate.
    pub start_unix_ms: u128,
    /// See [`start_unix_ms`](Self::start_unix_ms).
    pub end_unix_ms: u128,
}

impl fmt::Display for BenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bench commands {} threads {} seconds {:.3} commands_per_second {:.0} p50_ms {:.3} p99_ms {:.3} duplicates {} resends {} start_unix_ms {} end_unix_ms {}",
            self.commands,
            self.threads,
            self.seconds,
            self.per_second,
            self.p50_ms,
            self.p99_ms,
            self.duplicates,
            self.resends,
            self.start_unix_ms,
            self.end_unix_ms
        )
    }
}

/// `count` `mission.create` Commands of distinct Missions, each in its own Group (no two
/// contend), named `bench-p<process>-<i>` under `workload`'s seed: processes benchmarking one
/// store together each pass their own `process`.
pub fn create_commands(
    workload: &Workload,
    process: u64,
    count: usize,
) -> Result<Vec<WireCommand>, HarnessError> {
    (0..count)
        .map(|i| workload.create_mission(&format!("bench-p{process}-{i}")))
        .collect()
}

/// Performs `commands` with `threads` threads sharing `core`; every Command must apply.
pub fn run<S: Store + Sync>(
    core: &HarnessCore<S>,
    commands: &[WireCommand],
    threads: usize,
) -> Result<BenchReport, HarnessError> {
    let threads = threads.max(1);
    let next = AtomicUsize::new(0);
    let start_unix_ms = unix_ms();
    let start = Instant::now();
    let per_thread = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut latencies = Vec::new();
                    let mut duplicates = 0usize;
                    let mut resends = 0u64;
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(command) = commands.get(i) else {
                            return Ok((latencies, duplicates, resends));
                        };
                        let began = Instant::now();
                        let sent = send(core, command);
                        latencies.push(began.elapsed());
                        resends += u64::from(sent.sends - 1);
                        match sent.result {
                            Ok(performed) => duplicates += usize::from(performed.duplicate),
                            Err(e) => {
                                return Err(HarnessError::check(format!(
                                    "{} refused: {} {}",
                                    command.action_id, e.wire_code, e.detail
                                )));
                            }
                        }
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .map_err(|_| HarnessError::check("a bench thread panicked"))?
            })
            .collect::<Result<Vec<_>, HarnessError>>()
    })?;
    let seconds = start.elapsed().as_secs_f64();
    let end_unix_ms = unix_ms();
    let mut latencies: Vec<Duration> = Vec::with_capacity(commands.len());
    let (mut duplicates, mut resends) = (0, 0);
    for (l, d, r) in per_thread {
        latencies.extend(l);
        duplicates += d;
        resends += r;
    }
    latencies.sort_unstable();
    let percentile = |p: f64| {
        latencies
            .get(((latencies.len() as f64 * p) as usize).min(latencies.len().saturating_sub(1)))
            .map_or(0.0, |d| d.as_secs_f64() * 1e3)
    };
    Ok(BenchReport {
        commands: commands.len(),
        threads,
        seconds,
        per_second: commands.len() as f64 / seconds.max(f64::MIN_POSITIVE),
        p50_ms: percentile(0.50),
        p99_ms: percentile(0.99),
        duplicates,
        resends,
        start_unix_ms,
        end_unix_ms,
    })
}

fn unix_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}

/// What [`replay`] measured.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayReport {
    /// Events in the replayed Group's log.
    pub events: usize,
    /// Whole-log replays timed.
    pub passes: usize,
    /// Wall-clock seconds of the passes.
    pub seconds: f64,
    /// Events per second replayed (pages of [`REPLAY_PAGE`]).
    pub per_second: f64,
    /// Mean bytes of one stored Event.
    pub mean_event_bytes: f64,
    /// Commands per second while the log was filled (one submitter, one by one).
    pub fill_per_second: f64,
}

impl fmt::Display for ReplayReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "replay events {} passes {} seconds {:.3} events_per_second {:.0} mean_event_bytes {:.0} fill_per_second {:.0}",
            self.events,
            self.passes,
            self.seconds,
            self.per_second,
            self.mean_event_bytes,
            self.fill_per_second
        )
    }
}

/// Replay page size: the store reads a page per call.
pub const REPLAY_PAGE: usize = 1_000;

/// Fills the shared Group (after the setup, which the caller applied) with `renewals`
/// `mission.renew_coordinator` Events performed one by one, then replays its whole log through
/// `Store::replay` in pages of [`REPLAY_PAGE`] (the store checks each Event's chain on the way)
/// until at least half a second has passed: Events per second from the store.
pub fn replay<S: Store>(
    core: &HarnessCore<S>,
    workload: &Workload,
    renewals: u64,
) -> Result<ReplayReport, HarnessError> {
    let (group, _) = workload.shared_group();
    let filling = Instant::now();
    for i in 0..renewals {
        let command = workload.renew(&group, &format!("replay-{i}"))?;
        let sent = send(core, &command);
        if let Err(e) = sent.result {
            return Err(HarnessError::check(format!(
                "{} refused: {} {}",
                command.action_id, e.wire_code, e.detail
            )));
        }
    }
    let fill_per_second = renewals as f64 / filling.elapsed().as_secs_f64().max(f64::MIN_POSITIVE);
    let store = core.store();
    let start = Instant::now();
    let (mut passes, mut events, mut bytes) = (0usize, 0usize, 0usize);
    while passes == 0 || start.elapsed() < Duration::from_millis(500) {
        let mut after = 0;
        loop {
            let page = store.replay(&group, after, REPLAY_PAGE)?;
            events += page.events.len();
            bytes += page.events.iter().map(|e| e.body.len()).sum::<usize>();
            match page.continuation {
                Some(next) => after = next,
                None => break,
            }
        }
        passes += 1;
    }
    let seconds = start.elapsed().as_secs_f64();
    Ok(ReplayReport {
        events: events / passes,
        passes,
        seconds,
        per_second: events as f64 / seconds.max(f64::MIN_POSITIVE),
        mean_event_bytes: bytes as f64 / events.max(1) as f64,
        fill_per_second,
    })
}
