//! The fuzzing loop: mutate a pool entry, run the target under `catch_unwind` and a memory
//! probe, keep inputs that reach a new signal, save findings, report per-stage shares.

use std::cell::RefCell;
use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::{OracleFailure, Outcome, Rng, Target, Verdict, corpus};

/// Memory-bound oracle defaults: `peak <= factor * len + slack`, with each target's
/// [`Target::memory_factor`] and [`Target::memory_slack`] (these are the defaults of that
/// trait: the parser's own bound, 4 × the input, docs/limits.md). The slack covers the fixed
/// cost of one call (schema catalog lookups, result structs). `--memory-factor` and
/// `--memory-slack` override them for every target.
pub const MEMORY_FACTOR: f64 = 4.0;
/// See [`MEMORY_FACTOR`].
pub const MEMORY_SLACK: usize = 64 * 1024;
/// Whether `mwp-fuzz` and the corpus replay assert the memory bound (on since the bounded
/// parser of issue 9 item 1).
pub const MEMORY_ASSERT_BY_DEFAULT: bool = true;

/// The memory bound `(factor, slack)` a run applies to `target`.
pub fn memory_bound(config: &Config, target: &dyn Target) -> (f64, usize) {
    (
        config.memory_factor.unwrap_or(target.memory_factor()),
        config.memory_slack.unwrap_or(target.memory_slack()),
    )
}

/// The printed peak/len ratio is the largest over inputs of at least this size: below it the
/// fixed cost of a call (covered by the slack) dominates and says nothing about the parser.
pub const RATIO_MIN_LEN: usize = 256;
/// The second printed ratio is over inputs of at least this size (amplification shapes).
pub const RATIO_LARGE_LEN: usize = 4096;

/// Kept inputs larger than this are not written to the committed corpus (it stays well under
/// 1 MB; the large bundle manifests are seeds, replayed from the embedded bundle anyway).
pub const MAX_SAVED_BYTES: usize = 16 * 1024;

/// Inputs grow by mutation (amplification shapes repeat array elements); a mutant beyond this
/// is replaced by a fresh mutant of a seed (cutting it would break the JSON and the verify
/// target's expectations).
pub const MAX_INPUT_BYTES: usize = 256 * 1024;

/// Measures the peak bytes allocated during one call (a counting global allocator in the
/// binary; [`NoProbe`] in tests).
pub trait MemoryProbe {
    /// Starts a measurement; returns the bytes live now.
    fn begin(&self) -> usize;
    /// Peak bytes live since `begin`, minus the bytes live at `begin`.
    fn peak_since(&self, live_at_begin: usize) -> usize;
}

/// A probe that measures nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProbe;

impl MemoryProbe for NoProbe {
    fn begin(&self) -> usize {
        0
    }
    fn peak_since(&self, _: usize) -> usize {
        0
    }
}

/// How a run is set up.
#[derive(Debug, Clone)]
pub struct Config {
    pub seconds: f64,
    pub seed: u64,
    /// Whether the memory oracle asserts `peak <= factor * len + slack` (a finding otherwise).
    pub assert_memory: bool,
    /// Overrides of every target's factor and slack ([`memory_bound`]).
    pub memory_factor: Option<f64>,
    pub memory_slack: Option<usize>,
    pub save_findings: bool,
    pub save_interesting: bool,
    pub corpus_root: PathBuf,
}

/// What a run found and measured.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    pub target: String,
    pub seconds: f64,
    pub executions: u64,
    /// Executions per outcome bucket (the last one counts oracle failures and panics).
    pub buckets: Vec<u64>,
    pub bucket_names: Vec<&'static str>,
    pub max_ratio: f64,
    pub max_ratio_len: usize,
    pub max_ratio_peak: usize,
    /// The input with the largest ratio (for `--save-max-ratio`).
    pub max_ratio_input: Vec<u8>,
    /// The largest ratio over inputs of at least [`RATIO_LARGE_LEN`] bytes.
    pub max_ratio_large: f64,
    pub findings: Vec<String>,
    pub saved: Vec<PathBuf>,
    pub signals: usize,
    /// Oracle failures matching [`Target::known_open`] (reported, not failing the run).
    pub known_open: u64,
}

thread_local! {
    static PANIC_MESSAGE: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Runs `target` once on `input` with the panic oracle: a panic becomes an oracle failure.
pub fn run_once(target: &dyn Target, input: &[u8]) -> Verdict {
    match catch_unwind(AssertUnwindSafe(|| target.execute(input))) {
        Ok(verdict) => verdict,
        Err(_) => Err(OracleFailure(format!(
            "panic: {}",
            PANIC_MESSAGE.with(|m| m.borrow().clone())
        ))),
    }
}

/// Replaces the panic hook by one that records the message silently (the runner reports it).
pub fn quiet_panics() {
    std::panic::set_hook(Box::new(|info| {
        PANIC_MESSAGE.with(|m| *m.borrow_mut() = info.to_string());
    }));
}

/// Greedy minimizer: drops byte ranges while `keep` still holds (bounded work).
pub fn minimize(input: &[u8], mut keep: impl FnMut(&[u8]) -> bool) -> Vec<u8> {
    let mut best = input.to_vec();
    let mut chunk = (best.len() / 2).max(1);
    let mut budget = 400;
    while chunk >= 1 && budget > 0 {
        let mut at = 0;
        while at < best.len() && budget > 0 {
            let end = (at + chunk).min(best.len());
            let mut candidate = best.clone();
            candidate.drain(at..end);
            budget -= 1;
            if keep(&candidate) {
                best = candidate;
            } else {
                at += chunk;
            }
        }
        if chunk == 1 {
            break;
        }
        chunk /= 2;
    }
    best
}

/// Fuzzes `target` for `config.seconds`.
pub fn run(target: &dyn Target, config: &Config, probe: &dyn MemoryProbe) -> Stats {
    let names = target.buckets();
    let mut stats = Stats {
        target: target.name().to_owned(),
        buckets: vec![0; names.len() + 1],
        bucket_names: names.to_vec(),
        ..Stats::default()
    };
    let mut rng = Rng::new(config.seed);
    let mut pool: Vec<Vec<u8>> = target.seeds();
    let seed_count = pool.len();
    let mut signals: HashSet<String> = HashSet::new();
    // The committed corpus first: its signals are known, its inputs are mutation bases.
    let committed = corpus::load(&config.corpus_root, target.name()).unwrap_or_default();
    for input in pool.iter().chain(committed.iter().map(|(_, b)| b)) {
        if let Ok(outcome) = run_once(target, input) {
            signals.insert(outcome.signal);
        }
    }
    // The seeds themselves are not saved: most are files of the protocol bundle, which is read
    // from MWP_PROTOCOL_ROOT and never committed; the replay test runs them from there.
    pool.extend(committed.into_iter().map(|(_, b)| b));
    let mut reported: HashSet<String> = HashSet::new();
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(config.seconds);
    while Instant::now() < deadline {
        // Half the time a seed: kept inputs are mostly invalid already, seeds reach deepest.
        let base = if rng.chance(50) {
            &pool[rng.below(seed_count)]
        } else {
            &pool[rng.below(pool.len())]
        };
        let mut input = target.mutate(&mut rng, base);
        if input.len() > MAX_INPUT_BYTES {
            let seed = rng.below(seed_count);
            input = target.mutate(&mut rng, &pool[seed]);
            input.truncate(MAX_INPUT_BYTES);
        }
        let measure = |input: &[u8]| {
            let live = probe.begin();
            let verdict = run_once(target, input);
            (verdict, probe.peak_since(live))
        };
        let (mut verdict, mut peak) = measure(&input);
        // A new maximum may be a one-time cost (a lazily compiled schema pattern, a cache
        // growing): measure again and keep the second figure, which is the input's own.
        let len = input.len().max(1) as f64;
        let (factor, slack) = memory_bound(config, target);
        let over = |peak: usize| peak as f64 > factor * input.len() as f64 + slack as f64;
        if (input.len() >= RATIO_MIN_LEN && peak as f64 / len > stats.max_ratio)
            || (config.assert_memory && over(peak))
        {
            (verdict, peak) = measure(&input);
        }
        stats.executions += 1;
        let ratio = peak as f64 / input.len().max(1) as f64;
        if input.len() >= RATIO_LARGE_LEN && ratio > stats.max_ratio_large {
            stats.max_ratio_large = ratio;
        }
        if input.len() >= RATIO_MIN_LEN && ratio > stats.max_ratio {
            (stats.max_ratio, stats.max_ratio_len, stats.max_ratio_peak) =
                (ratio, input.len(), peak);
            stats.max_ratio_input.clone_from(&input);
        }
        if config.assert_memory && target.memory_bounded() && verdict.is_ok() && over(peak) {
            verdict = Err(OracleFailure(format!(
                "memory: peak {peak} bytes for a {}-byte input exceeds {factor} x len + {slack}",
                input.len()
            )));
        }
        match verdict {
            Ok(Outcome { bucket, signal }) => {
                stats.buckets[bucket.min(names.len() - 1)] += 1;
                if signals.insert(signal.clone()) {
                    if config.save_interesting && input.len() <= MAX_SAVED_BYTES {
                        let small = minimize(&input, |candidate| {
                            run_once(target, candidate).is_ok_and(|o| o.signal == signal)
                        });
                        if let Ok(path) = corpus::save(&config.corpus_root, target.name(), &small) {
                            stats.saved.push(path);
                        }
                    }
                    if pool.len() < 4096 && input.len() <= MAX_SAVED_BYTES {
                        pool.push(input);
                    }
                }
            }
            Err(OracleFailure(message))
                if target.known_open().iter().any(|k| message.contains(k)) =>
            {
                stats.known_open += 1;
            }
            Err(OracleFailure(message)) => {
                stats.buckets[names.len()] += 1;
                // One report per distinct first line (a loop that finds the same bug keeps quiet).
                // Digits dropped: the same bug with other sizes or offsets is one report.
                let key: String = message
                    .chars()
                    .filter(|c| !c.is_ascii_digit())
                    .take(120)
                    .collect();
                if reported.insert(key) {
                    eprintln!(
                        "FINDING [{}] {message}\n  input ({} bytes): {:?}",
                        target.name(),
                        input.len(),
                        String::from_utf8_lossy(&input[..input.len().min(600)])
                    );
                    if config.save_findings
                        && let Ok(path) = corpus::save(&config.corpus_root, target.name(), &input)
                    {
                        eprintln!("  saved as {}", path.display());
                        stats.saved.push(path);
                    }
                    stats.findings.push(message);
                }
            }
        }
    }
    stats.seconds = start.elapsed().as_secs_f64();
    stats.signals = signals.len();
    stats
}

impl Stats {
    /// Share (percent) of executions that reached bucket `i` or a later one (stage `i + 1` of
    /// a staged entry point), oracle failures excluded.
    pub fn reached(&self, i: usize) -> f64 {
        let total: u64 = self.buckets[..self.bucket_names.len()].iter().sum();
        let later: u64 = self.buckets[i..self.bucket_names.len()].iter().sum();
        100.0 * later as f64 / total.max(1) as f64
    }

    /// A readable report of the run.
    pub fn report(&self) -> String {
        let mut out = format!(
            "[{}] {} executions in {:.1} s ({:.0}/s), {} distinct signals, {} findings, {} known open\n  reached:",
            self.target,
            self.executions,
            self.seconds,
            self.executions as f64 / self.seconds.max(1e-9),
            self.signals,
            self.findings.len(),
            self.known_open
        );
        for (i, name) in self.bucket_names.iter().enumerate() {
            out.push_str(&format!(" {name} {:.1}%", self.reached(i)));
        }
        out.push_str(&format!(
            "\n  max peak/len {:.1} over inputs >= {RATIO_MIN_LEN} bytes (peak {} bytes for {} bytes), \
             {:.1} over inputs >= {RATIO_LARGE_LEN} bytes",
            self.max_ratio, self.max_ratio_peak, self.max_ratio_len, self.max_ratio_large
        ));
        out
    }

    /// One row of the long run's summary table (Markdown).
    pub fn table_row(&self) -> String {
        let shares: Vec<String> = self
            .bucket_names
            .iter()
            .enumerate()
            .map(|(i, name)| format!("{name} {:.1}%", self.reached(i)))
            .collect();
        format!(
            "| {} | {:.0} | {} | {} | {:.1} / {:.1} | {} |",
            self.target,
            self.seconds,
            self.executions,
            shares.join(", "),
            self.max_ratio,
            self.max_ratio_large,
            self.findings.len()
        )
    }
}
