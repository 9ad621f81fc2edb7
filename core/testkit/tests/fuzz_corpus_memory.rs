//! The fuzzers' memory-bound oracle over the committed corpus: the peak bytes allocated while a
//! target runs one corpus input, against that target's `memory_factor() x len + memory_slack()`
//! (4 x + 64 B for the parser itself, looser for entry points that also build owned trees and
//! state; `core/testkit/src/fuzz/mod.rs`). One test in its own binary, so no other test
//! allocates while it measures. The corpus holds the amplification shapes the fuzzer found
//! (`[{},{},...]` inside a document and a snapshot, 100-230 x before the bounded parser).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol_testkit::fuzz::runner::{
    MEMORY_ASSERT_BY_DEFAULT, RATIO_MIN_LEN, run_once,
};
use missionweaveprotocol_testkit::fuzz::{all_targets, corpus};
use mwp_alloc_count::Counting;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn peak_of(run: impl Fn()) -> usize {
    run(); // first call: one-time costs (compiled schemas, caches)
    let live = mwp_alloc_count::begin();
    run();
    mwp_alloc_count::peak_since(live)
}

#[test]
fn corpus_inputs_stay_within_the_memory_bound() {
    // The probe works: a 1 MiB buffer is seen.
    assert!(peak_of(|| drop(std::hint::black_box(vec![1u8; 1 << 20]))) >= 1 << 20);
    let mut over = Vec::new();
    for target in all_targets() {
        let mut worst = (0.0f64, 0usize, 0usize);
        for (path, input) in corpus::load(&corpus::default_root(), target.name()).unwrap() {
            let peak = peak_of(|| {
                let _ = run_once(target.as_ref(), &input);
            });
            let ratio = peak as f64 / input.len().max(1) as f64;
            if input.len() >= RATIO_MIN_LEN && ratio > worst.0 {
                worst = (ratio, peak, input.len());
            }
            let (factor, slack) = (target.memory_factor(), target.memory_slack());
            if target.memory_bounded() && peak as f64 > factor * input.len() as f64 + slack as f64 {
                over.push(format!(
                    "{}: peak {peak} bytes for {} bytes (bound {factor} x len + {slack})",
                    path.display(),
                    input.len()
                ));
            }
        }
        println!(
            "{}: max peak/len {:.1} (peak {} bytes for {} bytes)",
            target.name(),
            worst.0,
            worst.1,
            worst.2
        );
    }
    println!("over their target's bound: {over:#?}");
    if MEMORY_ASSERT_BY_DEFAULT {
        assert!(
            over.is_empty(),
            "memory bound exceeded:\n{}",
            over.join("\n")
        );
    }
}
