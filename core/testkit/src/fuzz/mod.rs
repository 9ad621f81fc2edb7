//! Stable-Rust fuzzing of every untrusted-input entry point (issue 9, "fuzzing that keeps its
//! findings"). One module per target under [`targets`]; the binary `mwp-fuzz` drives them
//! ([`runner`]), and `tests/fuzz_corpus.rs` replays the committed corpus
//! (`tests/fuzz-corpus/<target>/`) through the same oracles.
//!
//! A target turns one input (bytes) into an [`Outcome`] — the furthest stage reached and a
//! signal (the error's reason slug) — or an [`OracleFailure`]. Every target checks: no panic
//! (caught by the runner), every error is one of the library's typed errors with a §19 wire
//! code from the set that entry point may return, plus its own semantic oracle (no forgery for
//! verify, round trips for snapshots and frames).

pub mod corpus;
pub mod mutate_bytes;
pub mod mutate_json;
pub mod rng;
pub mod runner;
pub mod targets;

use missionweaveprotocol::{DescribeError, WireCode};

pub use rng::Rng;

/// What one execution of a target produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Index into [`Target::buckets`]: how far the input got.
    pub bucket: usize,
    /// A short signal (bucket and error reason) used to keep inputs that reach something new.
    pub signal: String,
}

/// An oracle that did not hold: a bug, to be saved as a finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OracleFailure(pub String);

impl std::fmt::Display for OracleFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The result of one execution.
pub type Verdict = Result<Outcome, OracleFailure>;

/// One fuzz target: an untrusted-input entry point with its seeds, mutator and oracles.
pub trait Target {
    /// The name used on the command line and as the corpus directory.
    fn name(&self) -> &'static str;
    /// Names of the outcome buckets, in order (e.g. the six stages of §6.4, then `accepted`).
    fn buckets(&self) -> &'static [&'static str];
    /// Valid inputs to start from.
    fn seeds(&self) -> Vec<Vec<u8>>;
    /// A new input derived from `base` (one of the seeds, corpus files or kept inputs).
    fn mutate(&self, rng: &mut Rng, base: &[u8]) -> Vec<u8>;
    /// Runs the entry point on `input` and checks the oracles.
    fn execute(&self, input: &[u8]) -> Verdict;
    /// Oracle failures already reported and reproduced under `tests/fuzz-open-findings/`
    /// (substrings of the failure message): the runner counts them without failing the run,
    /// so CI stays usable until their owner fixes them; remove the entry with the fix.
    fn known_open(&self) -> &'static [&'static str] {
        &[]
    }
    /// Whether the memory-bound oracle applies: the input is all the call reads (not so for
    /// `manifest`, whose run reads and compiles the whole bundle besides the manifest).
    fn memory_bounded(&self) -> bool {
        true
    }
    /// The memory-bound oracle's factor for this entry point: `peak <= factor × len + slack`.
    /// The parser's own bound is 4 (target `json`); the others also build owned trees and
    /// state (a tree costs up to about 21 × its input), so their factors are looser but still
    /// catch an amplification like the 100–230 × ones this oracle found.
    fn memory_factor(&self) -> f64 {
        runner::MEMORY_FACTOR
    }
    /// The oracle's constant slack in bytes (one-time costs of a call).
    fn memory_slack(&self) -> usize {
        runner::MEMORY_SLACK
    }
}

/// Every target, in the order the long run uses.
pub fn all_targets() -> Vec<Box<dyn Target>> {
    vec![
        Box::new(targets::json::JsonTarget),
        Box::new(targets::verify::VerifyTarget::new()),
        Box::new(targets::frames::FramesTarget),
        Box::new(targets::registry::RegistryTarget::new()),
        Box::new(targets::budget::BudgetTarget),
        Box::new(targets::scheduler::SchedulerTarget),
        Box::new(targets::lease::LeaseTarget),
        Box::new(targets::manifest::ManifestTarget),
    ]
}

/// The target called `name`.
pub fn target_by_name(name: &str) -> Option<Box<dyn Target>> {
    all_targets().into_iter().find(|t| t.name() == name)
}

/// Oracle: `error` is a typed library error whose §19 wire code is one `allowed` for this entry
/// point, with a non-empty reason slug. Returns the signal `bucket:reason`.
pub fn typed_error(
    what: &str,
    error: &dyn DescribeError,
    allowed: &[WireCode],
) -> Result<String, OracleFailure> {
    let code = error.wire_code();
    if !allowed.contains(&code) {
        return Err(OracleFailure(format!(
            "{what}: wire code {} is not one this entry point may return ({error})",
            code.as_str()
        )));
    }
    if error.reason().is_empty() {
        return Err(OracleFailure(format!(
            "{what}: error without a reason slug"
        )));
    }
    Ok(error.reason().to_owned())
}

/// Where two debug renderings first differ (for round-trip oracle messages).
pub fn first_difference(a: &impl std::fmt::Debug, b: &impl std::fmt::Debug) -> String {
    let (a, b): (Vec<char>, Vec<char>) = (
        format!("{a:?}").chars().collect(),
        format!("{b:?}").chars().collect(),
    );
    let at = a
        .iter()
        .zip(&b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let window = |s: &[char]| -> String {
        s[at.saturating_sub(60).min(s.len())..(at + 60).min(s.len())]
            .iter()
            .collect()
    };
    format!("first: …{}… then: …{}…", window(&a), window(&b))
}
