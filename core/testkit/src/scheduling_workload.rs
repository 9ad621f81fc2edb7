//! The scheduling benchmark workload, shared by `examples/bench_scheduling.rs`, the JS
//! benchmark's native baseline and the scheduling reference traces.

use std::time::Instant;

use missionweaveprotocol_kernel::scheduler::{
    ScheduleAction, Scheduler, SchedulerPolicy, Transition, WorkOffer,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// 2026-01-01T00:00:00Z, the workload's start.
pub const BENCH_T0: i64 = 1_767_225_600_000;

/// The benchmark's offers (`examples/bench_scheduling.rs`): `n` WorkItems over 8 Groups,
/// priorities `(37·i mod 201) − 100`, `urn:uuid:` identifiers.
pub fn bench_offers(n: usize) -> Vec<WorkOffer> {
    (0..n)
        .map(|i| {
            let mut o = WorkOffer::new(
                &format!("urn:uuid:00000000-0000-4000-8000-{i:012x}"),
                &format!("urn:uuid:6a1f0000-0000-4000-8000-{:012x}", i % 8),
            );
            o.priority = (((i * 37) % 201) as i64 - 100) as i8;
            o
        })
        .collect()
}

/// The benchmark's policy: 8 slots, queues large enough for `n`.
pub fn bench_policy(n: usize) -> SchedulerPolicy {
    SchedulerPolicy {
        capacity_slots: 8,
        max_work_items: n as u32,
        max_work_items_per_group: n as u32,
        ..SchedulerPolicy::default()
    }
}

/// Admits the offers at T0, then dispatches and completes one tick (1 ms) at a time until all
/// ran. Returns the dispatch order and the seconds spent, or `None` if anything was declined or
/// the Scheduler stalled.
pub fn run_bench(offers: &[WorkOffer]) -> Option<(Vec<String>, f64)> {
    let mut s = Scheduler::new(bench_policy(offers.len())).ok()?;
    let start = Instant::now();
    for o in offers {
        if !s.admit(o, UnixMillis(BENCH_T0)).accepted {
            return None;
        }
    }
    let mut order = Vec::with_capacity(offers.len());
    let mut t = BENCH_T0;
    while order.len() < offers.len() {
        t += 1;
        let actions = s.schedule(UnixMillis(t));
        if actions.is_empty() {
            return None;
        }
        for a in actions {
            let ScheduleAction::Dispatch(d) = a else {
                return None;
            };
            s.apply(
                &d.work_id,
                Transition::Completed {
                    generation: d.generation,
                },
                UnixMillis(t),
            )
            .ok()?;
            order.push(d.work_id.to_string());
        }
    }
    Some((order, start.elapsed().as_secs_f64()))
}
