//! `mwp-fuzz`: stable-Rust fuzzing of every untrusted-input entry point (docs/testing.md).
//!
//! ```text
//! mwp-fuzz --target NAME|all --seconds N [--seed S] [--memory-factor F] [--memory-slack B]
//!          [--save-findings] [--save-interesting] [--corpus DIR] [--table]
//!          [--save-max-ratio DIR]
//! mwp-fuzz --target NAME --replay FILE
//! ```
//!
//! Prints the seed first (a fresh one unless `--seed` is given), then per target: executions,
//! exec/s, the share of inputs that reached each stage, the largest peak-allocation/input ratio
//! and the findings. Exits 1 when an oracle failed.

use std::path::PathBuf;
use std::process::ExitCode;

use missionweaveprotocol_testkit::fuzz::rng::fresh_seed;
use missionweaveprotocol_testkit::fuzz::runner::{
    self, Config, MEMORY_ASSERT_BY_DEFAULT, MemoryProbe, quiet_panics,
};
use missionweaveprotocol_testkit::fuzz::{all_targets, corpus, target_by_name};
use mwp_alloc_count::Counting;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Peak bytes live during one call, from the counting allocator (single-threaded loop).
struct PeakProbe;

impl MemoryProbe for PeakProbe {
    fn begin(&self) -> usize {
        mwp_alloc_count::begin()
    }
    fn peak_since(&self, live_at_begin: usize) -> usize {
        mwp_alloc_count::peak_since(live_at_begin)
    }
}

const USAGE: &str = "usage: mwp-fuzz --target NAME|all --seconds N [--seed S] [--memory-factor F] \
[--memory-slack BYTES] [--save-findings] [--save-interesting] [--corpus DIR] [--table] [--save-max-ratio DIR] | \
mwp-fuzz --target NAME --replay FILE";

fn parse_seed(text: &str) -> Option<u64> {
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut target = None;
    let mut table = false;
    let mut replay = None;
    let mut save_max_ratio: Option<PathBuf> = None;
    let mut config = Config {
        seconds: 10.0,
        seed: fresh_seed(),
        assert_memory: MEMORY_ASSERT_BY_DEFAULT,
        memory_factor: None,
        memory_slack: None,
        save_findings: false,
        save_interesting: false,
        corpus_root: corpus::default_root(),
    };
    while let Some(arg) = args.next() {
        let ok = match arg.as_str() {
            "--target" => args.next().map(|v| target = Some(v)).is_some(),
            "--seconds" => args
                .next()
                .and_then(|v| v.parse().ok())
                .map(|v| config.seconds = v)
                .is_some(),
            "--seed" => args
                .next()
                .and_then(|v| parse_seed(&v))
                .map(|v| config.seed = v)
                .is_some(),
            "--memory-factor" => args
                .next()
                .and_then(|v| v.parse().ok())
                .map(|v| {
                    config.memory_factor = Some(v);
                    config.assert_memory = true;
                })
                .is_some(),
            "--memory-slack" => args
                .next()
                .and_then(|v| v.parse().ok())
                .map(|v| config.memory_slack = Some(v))
                .is_some(),
            "--save-max-ratio" => args
                .next()
                .map(|v| save_max_ratio = Some(PathBuf::from(v)))
                .is_some(),
            "--replay" => args
                .next()
                .map(|v| replay = Some(PathBuf::from(v)))
                .is_some(),
            "--corpus" => args
                .next()
                .map(|v| config.corpus_root = PathBuf::from(v))
                .is_some(),
            "--save-findings" => {
                config.save_findings = true;
                true
            }
            "--save-interesting" => {
                config.save_interesting = true;
                true
            }
            "--table" => {
                table = true;
                true
            }
            _ => false,
        };
        if !ok {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    }
    let targets = match target.as_deref() {
        Some("all") => all_targets(),
        Some(name) => match target_by_name(name) {
            Some(t) => vec![t],
            None => {
                let names: Vec<&str> = all_targets().iter().map(|t| t.name()).collect();
                eprintln!("unknown target {name:?}; targets: {}", names.join(", "));
                return ExitCode::from(2);
            }
        },
        None => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    if let Some(file) = replay {
        return replay_file(targets.first().map(|t| t.as_ref()), &file);
    }
    println!(
        "mwp-fuzz seed {:#x} ({} s per target; reproduce with --seed {:#x})",
        config.seed, config.seconds, config.seed
    );
    quiet_panics();
    let mut rows = Vec::new();
    let mut failed = false;
    for target in &targets {
        let stats = runner::run(target.as_ref(), &config, &PeakProbe);
        println!("{}", stats.report());
        for path in &stats.saved {
            println!("  saved {}", path.display());
        }
        if let Some(dir) = &save_max_ratio {
            let path = dir.join(format!("{}-max-ratio", stats.target));
            if std::fs::create_dir_all(dir)
                .and_then(|()| std::fs::write(&path, &stats.max_ratio_input))
                .is_ok()
            {
                println!("  max-ratio input saved as {}", path.display());
            }
        }
        failed |= !stats.findings.is_empty();
        rows.push(stats.table_row());
    }
    if table {
        println!(
            "\n| target | seconds | executions | reached (share per stage) | max peak/len (>= 256 B / >= 4 KiB) | findings |"
        );
        println!("| --- | --- | --- | --- | --- | --- |");
        for row in rows {
            println!("{row}");
        }
    }
    if failed {
        println!(
            "mwp-fuzz: oracle failures (see FINDING above); seed {:#x}",
            config.seed
        );
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// Runs one input file through `target` and prints the verdict.
fn replay_file(
    target: Option<&dyn missionweaveprotocol_testkit::fuzz::Target>,
    file: &std::path::Path,
) -> ExitCode {
    let (Some(target), Ok(input)) = (target, std::fs::read(file)) else {
        eprintln!("cannot read {} or no target", file.display());
        return ExitCode::from(2);
    };
    // Twice: the first call may fill process-wide caches (schema catalog, Registry cache).
    let _ = runner::run_once(target, &input);
    let live = PeakProbe.begin();
    let verdict = runner::run_once(target, &input);
    let peak = PeakProbe.peak_since(live);
    println!("peak {peak} bytes for {} bytes of input", input.len());
    match verdict {
        Ok(outcome) => {
            println!(
                "{}: {} ({})",
                file.display(),
                target.buckets()[outcome.bucket],
                outcome.signal
            );
            ExitCode::SUCCESS
        }
        Err(failure) => {
            println!("{}: oracle failure: {failure}", file.display());
            ExitCode::FAILURE
        }
    }
}
