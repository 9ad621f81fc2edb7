//! `mwp-native-baselines`: the benchmarks' native figures, measured in a Rust process with no
//! language boundary, for the binding benchmarks to compare against (they used to call loops
//! exported by the napi addon; nothing a user installs exports a benchmark loop now).
//!
//! ```text
//! mwp-native-baselines verify KIND DOCUMENT REGISTRY ITERATIONS   -> elapsed seconds
//! mwp-native-baselines schedule COUNT                              -> elapsed seconds
//! ```
//! Exit status 1 when the work did not complete (a document that does not verify, a stalled
//! Scheduler), 2 on bad arguments.

use std::process::ExitCode;
use std::time::Instant;

use missionweaveprotocol::registry::{AgentRegistryKeyResolver, KeyRegistrySnapshot};
use missionweaveprotocol::signed_documents::{SignedDocumentCodec, SignedDocumentKind};
use missionweaveprotocol_testkit::scheduling_workload::{bench_offers, run_bench};

fn verify(args: &[String]) -> Result<f64, String> {
    let [kind, document, registry, iterations] = args else {
        return Err("usage: verify KIND DOCUMENT REGISTRY ITERATIONS".into());
    };
    let kind = SignedDocumentKind::parse(kind).ok_or_else(|| format!("unknown kind {kind:?}"))?;
    let document = std::fs::read(document).map_err(|e| format!("{document}: {e}"))?;
    let registry = std::fs::read(registry).map_err(|e| format!("{registry}: {e}"))?;
    let iterations: u32 = iterations.parse().map_err(|e| format!("iterations: {e}"))?;
    let snapshot = KeyRegistrySnapshot::from_bytes_cached(&registry).map_err(|e| e.to_string())?;
    let resolver = AgentRegistryKeyResolver::from_snapshot(snapshot);
    let codec = SignedDocumentCodec::new();
    let start = Instant::now();
    for _ in 0..iterations {
        codec
            .verify(kind, &document, &resolver)
            .map_err(|e| format!("does not verify: {e}"))?;
    }
    Ok(start.elapsed().as_secs_f64())
}

fn schedule(args: &[String]) -> Result<f64, String> {
    let [count] = args else {
        return Err("usage: schedule COUNT".into());
    };
    let count: usize = count.parse().map_err(|e| format!("count: {e}"))?;
    run_bench(&bench_offers(count))
        .map(|(_, seconds)| seconds)
        .ok_or_else(|| "the scheduling workload did not complete".into())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("verify") => verify(&args[1..]),
        Some("schedule") => schedule(&args[1..]),
        _ => {
            eprintln!("usage: mwp-native-baselines verify|schedule ...");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(seconds) => {
            println!("{seconds}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("mwp-native-baselines: {message}");
            ExitCode::from(1)
        }
    }
}
