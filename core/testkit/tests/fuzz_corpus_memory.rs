//! The fuzzers' memory-bound oracle over the committed corpus: the peak bytes allocated while a
//! target runs one corpus input, against `MEMORY_FACTOR × len + MEMORY_SLACK`
//! (`core/testkit/src/fuzz/runner.rs`). One test in its own binary, so no other test allocates
//! while it measures. The bound is asserted once `MEMORY_ASSERT_BY_DEFAULT` is switched on (after
//! the parser rework of issue 9 item 1); until then the ratios are printed and the probe itself
//! is checked. The corpus holds the amplification shapes the fuzzer found (`[{},{},…]` inside
//! a document and a snapshot: about 100× and 170× today).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol_testkit::fuzz::runner::{
    MEMORY_ASSERT_BY_DEFAULT, MEMORY_FACTOR, MEMORY_SLACK, RATIO_MIN_LEN, run_once,
};
use missionweaveprotocol_testkit::fuzz::{all_targets, corpus};
use peak_alloc::PeakAlloc;

#[global_allocator]
static ALLOCATOR: PeakAlloc = PeakAlloc;

fn peak_of(run: impl Fn()) -> usize {
    run(); // first call: one-time costs (compiled schemas, caches)
    ALLOCATOR.reset_peak_usage();
    let live = ALLOCATOR.current_usage();
    run();
    ALLOCATOR.peak_usage().saturating_sub(live)
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
            if target.memory_bounded()
                && peak as f64 > MEMORY_FACTOR * input.len() as f64 + MEMORY_SLACK as f64
            {
                over.push(format!(
                    "{}: peak {peak} bytes for {} bytes",
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
    println!("over {MEMORY_FACTOR} x len + {MEMORY_SLACK}: {over:#?}");
    if MEMORY_ASSERT_BY_DEFAULT {
        assert!(
            over.is_empty(),
            "memory bound exceeded:\n{}",
            over.join("\n")
        );
    }
}
