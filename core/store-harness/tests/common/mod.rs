//! Shared bodies of the process tests: each takes a store spec, so the same body runs on
//! SQLite (`sqlite:PATH`) and on PostgreSQL (`postgresql://…?schema=NAME`, `pg.rs`): a
//! PostgreSQL test is one more `#[test]` calling the same function.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod crash;
pub mod pg;
pub mod race;

use std::path::Path;
use std::process::{Command, Output, Stdio};

/// The worker binary Cargo built for these tests.
pub fn worker() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_mwp-store-worker"))
}

/// Runs the worker with `args` to completion; panics unless it succeeded. Its stdout.
pub fn run_worker(args: &[&str]) -> String {
    let output = Command::new(worker())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    check_output(args, output)
}

pub fn check_output(args: &[&str], output: Output) -> String {
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "mwp-store-worker {args:?} failed ({}):\n{}\n{stdout}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// A small seeded generator (SplitMix64): the kill delays of the crash test.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(1);
        missionweaveprotocol_store_harness::workload::splitmix64(self.0)
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}
