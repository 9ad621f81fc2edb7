//! The benchmark workload's dispatch order, pinned as a digest. `python/tests/test_scheduler.py`
//! runs the same workload through the Python binding and asserts the same digest, so the two
//! languages are checked against each other on 10,000 WorkItems.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::json::sha256_prefixed;
use missionweaveprotocol_kernel::scheduler::{
    ScheduleAction, Scheduler, SchedulerPolicy, Transition, WorkOffer,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// 2026-01-01T00:00:00Z.
const T0: i64 = 1_767_225_600_000;
/// `sha256:` of the WorkItem IDs in dispatch order, one per line (no trailing newline).
const ORDER_DIGEST_10000: &str =
    "sha256:bc78291af65e56f6bbf1087e258e2cb689e772e7623f6150c86dbf87e1534916";

/// examples/bench_scheduling.rs's workload: 8 Groups, 8 slots, priorities (37·i mod 201) − 100.
fn dispatch_order(n: usize) -> Vec<String> {
    let policy = SchedulerPolicy {
        capacity_slots: 8,
        max_work_items: n as u32,
        max_work_items_per_group: n as u32,
        ..SchedulerPolicy::default()
    };
    let mut s = Scheduler::new(policy).unwrap();
    for i in 0..n {
        let mut o = WorkOffer::new(
            &format!("urn:uuid:00000000-0000-4000-8000-{i:012x}"),
            &format!("urn:uuid:6a1f0000-0000-4000-8000-{:012x}", i % 8),
        );
        o.priority = (((i * 37) % 201) as i64 - 100) as i8;
        assert!(s.admit(&o, UnixMillis(T0)).accepted);
    }
    let mut order = Vec::with_capacity(n);
    let mut t = T0;
    while order.len() < n {
        t += 1;
        let actions = s.schedule(UnixMillis(t));
        assert!(!actions.is_empty(), "stalled");
        for a in actions {
            let ScheduleAction::Dispatch(d) = a else {
                panic!("no preemption expected")
            };
            s.apply(
                &d.work_id,
                Transition::Completed {
                    generation: d.generation,
                },
                UnixMillis(t),
            )
            .unwrap();
            order.push(d.work_id.to_string());
        }
    }
    order
}

#[test]
fn bench_workload_dispatch_order_is_pinned() {
    let order = dispatch_order(10_000);
    let digest = sha256_prefixed(order.join("\n").as_bytes());
    eprintln!("first: {:?}", &order[..4]);
    assert_eq!(digest, ORDER_DIGEST_10000);
}
