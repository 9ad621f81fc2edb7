//! Scheduling and budget benchmarks (docs/performance.md targets), printed as JSON lines.
//!
//! Run: `cargo run --release -p missionweaveprotocol-kernel --example bench_scheduling`
//! Not a test: nothing here fails because the machine is slow.

use std::alloc::System;
use std::hint::black_box;
use std::time::Instant;

use missionweaveprotocol_kernel::budget::BudgetLedger;
use missionweaveprotocol_kernel::resources::{Currency, Resources};
use missionweaveprotocol_kernel::retry::idempotency_key;
use missionweaveprotocol_kernel::scheduler::{
    ScheduleAction, Scheduler, SchedulerPolicy, Transition, WorkOffer,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const GROUPS: usize = 8;
const SLOTS: u32 = 8;

fn policy(n: usize) -> SchedulerPolicy {
    SchedulerPolicy {
        capacity_slots: SLOTS,
        max_work_items: n as u32,
        max_work_items_per_group: n as u32,
        ..SchedulerPolicy::default()
    }
}

/// Realistic identifiers: lower-case `urn:uuid:` WorkItem IDs (45 bytes), URN Group IDs.
fn offers(n: usize) -> Vec<WorkOffer> {
    (0..n)
        .map(|i| {
            let mut o = WorkOffer::new(
                &format!("urn:uuid:00000000-0000-4000-8000-{i:012x}"),
                &format!("urn:uuid:6a1f0000-0000-4000-8000-{:012x}", i % GROUPS),
            );
            o.priority = (((i * 37) % 201) as i64 - 100) as i8;
            o
        })
        .collect()
}

/// Admits every offer, then dispatches and completes until the Scheduler is empty.
fn admit_and_dispatch(offers: &[WorkOffer]) -> f64 {
    let mut s = Scheduler::new(policy(offers.len())).unwrap_or_else(|e| panic_any(&e));
    let start = Instant::now();
    let now = UnixMillis(1_767_225_600_000);
    for o in offers {
        if !s.admit(o, now).accepted {
            panic_any(&"offer declined");
        }
    }
    let mut done = 0usize;
    let mut t = now.0;
    while done < offers.len() {
        t += 1;
        let actions = s.schedule(UnixMillis(t));
        if actions.is_empty() {
            panic_any(&"scheduler stalled");
        }
        for a in actions {
            if let ScheduleAction::Dispatch(d) = a {
                let _ = s.apply(
                    &d.work_id,
                    Transition::Completed {
                        generation: d.generation,
                    },
                    UnixMillis(t),
                );
                done += 1;
            }
        }
    }
    let ms = start.elapsed().as_secs_f64() * 1e3;
    black_box(&s);
    ms
}

fn panic_any(e: &dyn std::fmt::Debug) -> ! {
    eprintln!("benchmark failed: {e:?}");
    std::process::exit(1)
}

fn bench_scheduler(n: usize, runs: usize, target_ms: f64) {
    let offers = offers(n);
    let mut times: Vec<f64> = (0..runs).map(|_| admit_and_dispatch(&offers)).collect();
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!(
        "{{\"name\": \"scheduler_admit_dispatch_{n}_over_{GROUPS}_groups\", \"ms\": {median:.3}, \"best_ms\": {:.3}, \"ops_per_sec\": {:.0}, \"target_ms\": {target_ms}, \"runs\": {runs}}}",
        times[0],
        n as f64 / (median / 1e3)
    );
}

fn bench_memory(n: usize) {
    let offers = offers(n);
    let mut s = Scheduler::new(policy(n)).unwrap_or_else(|e| panic_any(&e));
    let now = UnixMillis(1_767_225_600_000);
    let region = Region::new(GLOBAL);
    for o in &offers {
        s.admit(o, now);
    }
    let c = region.change();
    // stats_alloc already folds realloc growth into bytes_allocated/bytes_deallocated.
    let net = c.bytes_allocated as isize - c.bytes_deallocated as isize;
    black_box(&s);
    println!(
        "{{\"name\": \"scheduler_bytes_per_queued_item\", \"bytes\": {:.1}, \"items\": {n}, \"target_bytes\": 300}}",
        net as f64 / n as f64
    );
}

fn bench_budget() {
    let mut ledger = BudgetLedger::new();
    let limit = Resources::splat(1_000_000_000_000);
    let usd = Currency::parse("USD");
    let ok = ledger.register_mission("urn:m:root", usd, limit).is_ok()
        && ledger
            .register_work_item("urn:w:1", "urn:m:root", None, limit)
            .is_ok()
        && ledger
            .register_child_mission("urn:m:child", "urn:w:1", None, limit)
            .is_ok()
        && ledger
            .register_work_item("urn:w:2", "urn:m:child", None, limit)
            .is_ok()
        && ledger
            .register_work_item("urn:w:3", "urn:m:child", Some("urn:w:2"), limit)
            .is_ok();
    if !ok {
        panic_any(&"ledger setup");
    }
    let delta = Resources::new(10, 100, 1, 1, 1, 0);
    let n = 2_000_000u32;
    let start = Instant::now();
    for _ in 0..n {
        if ledger.consume(black_box("urn:w:3"), &delta).is_err() {
            panic_any(&"consume failed");
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{{\"name\": \"budget_consume_5_level_ancestry\", \"ops_per_sec\": {:.0}, \"ops\": {n}}}",
        f64::from(n) / secs
    );
}

fn bench_idempotency_key() {
    let n = 500_000u32;
    let start = Instant::now();
    for i in 0..n {
        black_box(idempotency_key(
            "urn:uuid:11111111-2222-4333-8444-555555555555",
            "urn:uuid:66666666-7777-4888-8999-aaaaaaaaaaaa",
            u64::from(i % 7) + 1,
            "send-invoice-email",
        ));
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{{\"name\": \"idempotency_key\", \"ops_per_sec\": {:.0}, \"ops\": {n}}}",
        f64::from(n) / secs
    );
}

fn main() {
    bench_scheduler(1_000, 21, 5.0);
    bench_scheduler(10_000, 11, 50.0);
    bench_scheduler(1_000_000, 3, 3_000.0);
    bench_memory(1_000_000);
    bench_budget();
    bench_idempotency_key();
}
