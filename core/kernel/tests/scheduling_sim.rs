//! Deterministic simulations of the Scheduler with time passed in (§11.1–§11.4).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::WireCode;
use missionweaveprotocol_kernel::scheduler::{
    CheckpointRef, Confidence, GroupPolicy, MAX_FAIRNESS_LAG_PASS, PASS_UNIT, RUNTIME_SESSION_LOST,
    ScheduleAction, Scheduler, SchedulerPolicy, Transition, WorkOffer, WorkState,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

const T0: i64 = 1_700_000_000_000;

fn at(ms: i64) -> UnixMillis {
    UnixMillis(T0 + ms)
}

fn policy(slots: u32) -> SchedulerPolicy {
    SchedulerPolicy {
        capacity_slots: slots,
        max_work_items: 1_000_000,
        max_work_items_per_group: 1_000_000,
        ..SchedulerPolicy::default()
    }
}

fn dispatched(actions: &[ScheduleAction]) -> Vec<String> {
    actions
        .iter()
        .filter_map(|a| match a {
            ScheduleAction::Dispatch(d) => Some(d.work_id.to_string()),
            ScheduleAction::Preempt(_) => None,
        })
        .collect()
}

fn ckpt(id: &str) -> CheckpointRef {
    CheckpointRef {
        checkpoint_id: id.into(),
        durable: true,
        safe: true,
    }
}

/// Runs one slot to completion repeatedly; returns the dispatch order.
fn drain_one_slot(s: &mut Scheduler, mut now: i64) -> Vec<String> {
    let mut order = Vec::new();
    loop {
        let ids = dispatched(&s.schedule(at(now)));
        if ids.is_empty() {
            return order;
        }
        for id in ids {
            let generation = s.generation(&id).unwrap();
            s.apply(&id, Transition::Completed { generation }, at(now))
                .unwrap();
            order.push(id);
        }
        now += 1;
    }
}

#[test]
fn weighted_fair_share_across_groups() {
    let mut p = policy(1);
    p.groups.insert(
        "heavy".into(),
        GroupPolicy {
            weight: 3,
            slot_quota: None,
        },
    );
    p.fairness_lag_slots = 0;
    let mut s = Scheduler::new(p).unwrap();
    for i in 0..40 {
        assert!(
            s.admit(&WorkOffer::new(&format!("h{i}"), "heavy"), at(0))
                .accepted
        );
        assert!(
            s.admit(&WorkOffer::new(&format!("l{i}"), "light"), at(0))
                .accepted
        );
    }
    let order = drain_one_slot(&mut s, 1);
    let first40 = &order[..40];
    let heavy = first40.iter().filter(|id| id.starts_with('h')).count();
    assert_eq!(heavy, 30, "3:1 weights give 30 of the first 40 dispatches");
}

/// Group "urgent" holds priority-100 work, "routine" priority-0 work, equal weights; the
/// first eight dispatches on one slot under a cross-Group lag of `lag` pass units.
fn urgent_vs_routine(lag: Option<u128>) -> String {
    let mut p = policy(1);
    p.fairness_lag_pass = lag;
    let mut s = Scheduler::new(p).unwrap();
    for i in 0..8 {
        let mut o = WorkOffer::new(&format!("u{i}"), "urgent");
        o.priority = 100;
        assert!(s.admit(&o, at(0)).accepted);
        assert!(
            s.admit(&WorkOffer::new(&format!("r{i}"), "routine"), at(0))
                .accepted
        );
    }
    drain_one_slot(&mut s, 1)[..8]
        .iter()
        .map(|id| &id[..1])
        .collect()
}

#[test]
fn the_fairness_lag_trades_priority_against_the_other_group_share() {
    // Default lag (1 slot, the reference's fairness_weight=10): priority runs one dispatch ahead.
    assert_eq!(urgent_vs_routine(None), "uurururu");
    // 0.1 slot (fairness_weight=100): near-strict alternation, priority only breaks ties.
    assert_eq!(urgent_vs_routine(Some(PASS_UNIT / 10)), "urururur");
    // 3 slots (fairness_weight=10/3): up to three slots ahead, then alternation — never more.
    assert_eq!(urgent_vs_routine(Some(3 * PASS_UNIT)), "uuuururu");
}

#[test]
fn a_lag_beyond_the_bound_is_refused() {
    let mut p = policy(1);
    p.fairness_lag_pass = Some(MAX_FAIRNESS_LAG_PASS);
    assert!(Scheduler::new(p.clone()).is_ok());
    p.fairness_lag_pass = Some(MAX_FAIRNESS_LAG_PASS + 1);
    let err = Scheduler::new(p).unwrap_err();
    assert_eq!(err.code().as_str(), "INVALID_COMMAND");
    assert!(err.to_string().contains("fairness_lag_pass"), "{err}");
}

#[test]
fn priority_orders_within_a_group_and_reorders_immediately() {
    let mut s = Scheduler::new(policy(1)).unwrap();
    for (id, prio) in [("low", -50), ("mid", 0), ("high", 80)] {
        let mut o = WorkOffer::new(id, "g");
        o.priority = prio;
        s.admit(&o, at(0));
    }
    s.reprioritize("low", 100).unwrap();
    assert_eq!(drain_one_slot(&mut s, 1), ["low", "high", "mid"]);
}

#[test]
fn aging_bounds_how_long_priority_can_overtake() {
    let p = policy(1);
    let horizon = p.horizon_ms();
    let mut s = Scheduler::new(p).unwrap();
    // Occupy the slot so nothing runs while the queue builds.
    s.admit(&WorkOffer::new("blocker", "g"), at(0));
    assert_eq!(dispatched(&s.schedule(at(0))), ["blocker"]);
    let mut old = WorkOffer::new("old-low", "g");
    old.priority = -100;
    s.admit(&old, at(1));
    // Max-priority items arriving within H overtake it; those after H must not.
    for (i, t) in [
        (0, 10),
        (1, horizon / 2),
        (2, horizon + 2),
        (3, horizon + 100),
    ] {
        let mut o = WorkOffer::new(&format!("hot{i}"), "g");
        o.priority = 100;
        s.admit(&o, at(t));
    }
    s.apply(
        "blocker",
        Transition::Completed { generation: 1 },
        at(horizon + 200),
    )
    .unwrap();
    let order = drain_one_slot(&mut s, horizon + 200);
    assert_eq!(order, ["hot0", "hot1", "old-low", "hot2", "hot3"]);
}

#[test]
fn deadlines_pull_items_forward() {
    let mut s = Scheduler::new(policy(1)).unwrap();
    s.admit(&WorkOffer::new("first-come", "g"), at(0));
    let mut urgent = WorkOffer::new("urgent", "g");
    urgent.deadline = Some(at(120_000));
    urgent.estimated_duration_ms = 60_000;
    s.admit(&urgent, at(5));
    let mut relaxed = WorkOffer::new("relaxed", "g");
    relaxed.deadline = Some(at(86_400_000));
    s.admit(&relaxed, at(6));
    assert_eq!(
        drain_one_slot(&mut s, 10),
        ["urgent", "first-come", "relaxed"]
    );
}

#[test]
fn group_quota_limits_concurrency_but_not_other_groups() {
    let mut p = policy(4);
    p.groups.insert(
        "q".into(),
        GroupPolicy {
            weight: 10,
            slot_quota: Some(1),
        },
    );
    let mut s = Scheduler::new(p).unwrap();
    for i in 0..3 {
        s.admit(&WorkOffer::new(&format!("q{i}"), "q"), at(0));
        s.admit(&WorkOffer::new(&format!("o{i}"), "o"), at(0));
    }
    let ids = dispatched(&s.schedule(at(1)));
    assert_eq!(ids.len(), 4);
    assert_eq!(ids.iter().filter(|i| i.starts_with('q')).count(), 1);
    assert_eq!(s.used_slots(), 4);
}

#[test]
fn multi_slot_head_reserves_slots_instead_of_starving() {
    let mut s = Scheduler::new(policy(2)).unwrap();
    s.admit(&WorkOffer::new("small0", "a"), at(0));
    assert_eq!(dispatched(&s.schedule(at(0))), ["small0"]);
    let mut big = WorkOffer::new("big", "b");
    big.slots = 2;
    s.admit(&big, at(1));
    for i in 1..5 {
        s.admit(&WorkOffer::new(&format!("small{i}"), "a"), at(2));
    }
    // One slot free, but "b" is the most-behind Group and its head needs two: nothing else
    // may take the free slot.
    assert!(dispatched(&s.schedule(at(3))).is_empty());
    s.apply("small0", Transition::Completed { generation: 1 }, at(4))
        .unwrap();
    let d = s.schedule(at(4));
    assert_eq!(dispatched(&d), ["big"]);
    assert_eq!(s.used_slots(), 2);
}

#[test]
fn blocked_work_releases_its_slot_and_returns_when_due() {
    let mut s = Scheduler::new(policy(1)).unwrap();
    s.admit(&WorkOffer::new("w", "g"), at(0));
    s.admit(&WorkOffer::new("x", "g"), at(1));
    assert_eq!(dispatched(&s.schedule(at(2))), ["w"]);
    // Blocking requires a durable safe checkpoint (§11.4).
    let unsafe_ck = CheckpointRef {
        checkpoint_id: "c0".into(),
        durable: true,
        safe: false,
    };
    let err = s
        .apply(
            "w",
            Transition::Blocked {
                generation: 1,
                checkpoint: unsafe_ck,
                retry_at: None,
                reason: "r".into(),
            },
            at(3),
        )
        .unwrap_err();
    assert_eq!(err.code(), WireCode::InvalidCommand);
    s.apply(
        "w",
        Transition::Blocked {
            generation: 1,
            checkpoint: ckpt("c1"),
            retry_at: Some(at(1_000)),
            reason: "waiting on input".into(),
        },
        at(3),
    )
    .unwrap();
    assert_eq!(s.state("w"), Some(WorkState::Blocked));
    assert_eq!(s.used_slots(), 0);
    assert_eq!(dispatched(&s.schedule(at(4))), ["x"]);
    s.apply("x", Transition::Completed { generation: 1 }, at(5))
        .unwrap();
    assert!(dispatched(&s.schedule(at(999))).is_empty(), "not due yet");
    let actions = s.schedule(at(1_000));
    let ScheduleAction::Dispatch(d) = &actions[0] else {
        panic!("expected dispatch")
    };
    assert_eq!(&*d.work_id, "w");
    assert_eq!(d.generation, 2);
    assert_eq!(d.resume_from, Some(ckpt("c1")));
    assert_eq!(d.run_id(), "w:2");
}

#[test]
fn unblock_requeues_and_stale_runs_are_rejected() {
    let mut s = Scheduler::new(policy(1)).unwrap();
    s.admit(&WorkOffer::new("w", "g"), at(0));
    s.schedule(at(0));
    s.apply(
        "w",
        Transition::Blocked {
            generation: 1,
            checkpoint: ckpt("c"),
            retry_at: None,
            reason: "r".into(),
        },
        at(1),
    )
    .unwrap();
    assert!(
        s.schedule(at(10_000_000)).is_empty(),
        "no retry time: waits for unblock"
    );
    assert_eq!(s.unblock("w", at(2)).map_err(|e| e.code()), Ok(()));
    assert_eq!(
        s.unblock("w", at(2)).unwrap_err().code(),
        WireCode::InvalidStateTransition
    );
    s.schedule(at(3));
    let err = s
        .apply("w", Transition::Completed { generation: 1 }, at(4))
        .unwrap_err();
    assert_eq!(
        err.code(),
        WireCode::WorkLeaseExpired,
        "an older run is fenced like an older lease"
    );
    s.apply("w", Transition::Completed { generation: 2 }, at(4))
        .unwrap();
    assert!(s.is_terminal("w"));
    assert_eq!(
        s.apply("w", Transition::Completed { generation: 2 }, at(5))
            .unwrap_err()
            .code(),
        WireCode::InvalidCommand
    );
}

#[test]
fn cooperative_preemption_follows_the_five_steps() {
    let mut s = Scheduler::new(policy(1)).unwrap();
    let mut low = WorkOffer::new("low", "a");
    low.priority = -80;
    s.admit(&low, at(0));
    assert_eq!(dispatched(&s.schedule(at(0))), ["low"]);
    let mut high = WorkOffer::new("high", "b");
    high.priority = 90;
    s.admit(&high, at(1));
    // 1. The Scheduler requests preemption.
    let actions = s.schedule(at(2));
    assert!(
        matches!(&actions[..], [ScheduleAction::Preempt(p)] if &*p.work_id == "low" && p.generation == 1)
    );
    assert_eq!(s.state("low"), Some(WorkState::Preempting));
    assert!(
        s.schedule(at(3)).is_empty(),
        "one request at a time, slot still held"
    );
    // Unsafe or non-durable checkpoints never release the slot.
    for (durable, safe) in [(false, true), (true, false)] {
        let c = CheckpointRef {
            checkpoint_id: "x".into(),
            durable,
            safe,
        };
        assert!(
            s.apply(
                "low",
                Transition::CheckpointSaved {
                    generation: 1,
                    checkpoint: c
                },
                at(4)
            )
            .is_err()
        );
        assert_eq!(s.used_slots(), 1);
    }
    assert!(
        s.apply("low", Transition::Released { generation: 1 }, at(4))
            .is_err()
    );
    // 2–4. Safe durable checkpoint: paused, slot released.
    s.apply(
        "low",
        Transition::CheckpointSaved {
            generation: 1,
            checkpoint: ckpt("safe"),
        },
        at(5),
    )
    .unwrap();
    assert_eq!(s.state("low"), Some(WorkState::Ready));
    assert_eq!(s.used_slots(), 0);
    // 5. Re-enters its queue; the preemptor runs first, then it resumes from the checkpoint.
    assert_eq!(dispatched(&s.schedule(at(6))), ["high"]);
    s.apply("high", Transition::Completed { generation: 1 }, at(7))
        .unwrap();
    let actions = s.schedule(at(8));
    let ScheduleAction::Dispatch(d) = &actions[0] else {
        panic!()
    };
    assert_eq!(
        (&*d.work_id, d.generation, d.resume_from.clone()),
        ("low", 2, Some(ckpt("safe")))
    );
}

#[test]
fn declined_preemption_keeps_running_and_margin_is_respected() {
    let mut s = Scheduler::new(policy(1)).unwrap();
    s.admit(&WorkOffer::new("run", "a"), at(0));
    s.schedule(at(0));
    let mut slightly = WorkOffer::new("slightly", "b");
    slightly.priority = 49;
    s.admit(&slightly, at(1));
    assert!(
        s.schedule(at(2)).is_empty(),
        "49 < margin 50: no preemption"
    );
    s.reprioritize("slightly", 50).unwrap();
    assert!(matches!(
        &s.schedule(at(3))[..],
        [ScheduleAction::Preempt(_)]
    ));
    s.apply(
        "run",
        Transition::PreemptionDeclined { generation: 1 },
        at(4),
    )
    .unwrap();
    assert_eq!(s.state("run"), Some(WorkState::Running));
    assert_eq!(s.used_slots(), 1);
    // Non-preemptible work is never asked.
    let mut s = Scheduler::new(policy(1)).unwrap();
    let mut pinned = WorkOffer::new("pinned", "a");
    pinned.preemptible = false;
    s.admit(&pinned, at(0));
    s.schedule(at(0));
    let mut vip = WorkOffer::new("vip", "b");
    vip.priority = 100;
    s.admit(&vip, at(1));
    assert!(s.schedule(at(2)).is_empty());
}

#[test]
fn cancel_frees_slots_and_queue_entries() {
    let mut s = Scheduler::new(policy(1)).unwrap();
    s.admit(&WorkOffer::new("a", "g"), at(0));
    s.admit(&WorkOffer::new("b", "g"), at(0));
    s.admit(&WorkOffer::new("c", "g"), at(0));
    s.schedule(at(0));
    s.cancel("a").unwrap();
    s.cancel("b").unwrap();
    assert_eq!(s.used_slots(), 0);
    assert_eq!(dispatched(&s.schedule(at(1))), ["c"]);
    assert_eq!(
        s.cancel("zzz").unwrap_err().code(),
        WireCode::InvalidCommand
    );
}

#[test]
fn disclosure_reveals_nothing_of_other_groups() {
    let build = |other_ids: &[&str]| {
        let mut s = Scheduler::new(policy(2)).unwrap();
        for id in other_ids {
            s.admit(&WorkOffer::new(id, "other"), at(0));
        }
        for i in 0..5 {
            s.admit(&WorkOffer::new(&format!("mine{i}"), "mine"), at(1));
        }
        s
    };
    let a = build(&["secret-x", "secret-y"]);
    let b = build(&["totally-different", "names-here"]);
    let da = a.disclose("mine3", at(10)).unwrap();
    let db = b.disclose("mine3", at(10)).unwrap();
    assert_eq!(
        da, db,
        "other Groups' names and content do not affect the disclosure"
    );
    let text = format!("{da:?}");
    assert!(!text.contains("secret") && !text.contains("other"));
    assert!(da.earliest_start <= da.latest_start);
    assert!(da.latest_start < da.estimated_completion);
    assert_eq!(da.calculated_at, at(10));
    assert!(a.disclose("secret-x", at(10)).is_some());
    assert!(a.disclose("nope", at(10)).is_none());
    // The head with a free slot starts now with high confidence.
    let head = a.disclose("mine0", at(10)).unwrap();
    assert_eq!(head.earliest_start, Some(at(10)));
    assert_eq!(head.confidence, Confidence::High);
}

#[test]
fn snapshot_restore_makes_identical_decisions() {
    let mut s = Scheduler::new(policy(3)).unwrap();
    for i in 0..30 {
        let mut o = WorkOffer::new(&format!("w{i}"), &format!("g{}", i % 4));
        o.priority = ((i * 37) % 201 - 100) as i8;
        o.slots = 1 + (i % 2) as u16;
        s.admit(&o, at(i));
    }
    let running = dispatched(&s.schedule(at(40)));
    assert!(!running.is_empty());
    let snap = s.snapshot();
    let mut r = Scheduler::restore(s.policy().clone(), &snap).unwrap();
    assert_eq!(r.snapshot(), snap);
    for id in &running {
        let t = Transition::Completed { generation: 1 };
        s.apply(id, t.clone(), at(45)).unwrap();
        r.apply(id, t, at(45)).unwrap();
    }
    for step in 0..40 {
        let now = at(50 + step);
        let a = s.schedule(now);
        let b = r.schedule(now);
        assert_eq!(a, b, "step {step}");
        for act in a {
            if let ScheduleAction::Dispatch(d) = act {
                let t = Transition::Completed {
                    generation: d.generation,
                };
                s.apply(&d.work_id, t.clone(), now).unwrap();
                r.apply(&d.work_id, t, now).unwrap();
            }
        }
    }
    assert!(s.is_empty() && r.is_empty());
}

#[test]
fn rebuild_after_restart_resumes_only_from_safe_checkpoints() {
    let mut s = Scheduler::new(policy(2)).unwrap();
    s.admit(&WorkOffer::new("with-ckpt", "g"), at(0));
    s.admit(&WorkOffer::new("without", "g"), at(1));
    s.admit(&WorkOffer::new("queued", "g"), at(2));
    s.schedule(at(3));
    s.apply(
        "with-ckpt",
        Transition::CheckpointSaved {
            generation: 1,
            checkpoint: ckpt("k"),
        },
        at(4),
    )
    .unwrap();
    let snap = s.snapshot();
    let mut r = Scheduler::rebuild_after_restart(s.policy().clone(), &snap, at(100)).unwrap();
    assert_eq!(r.used_slots(), 0);
    assert_eq!(r.state("with-ckpt"), Some(WorkState::Ready));
    assert_eq!(r.state("without"), Some(WorkState::Blocked));
    assert_eq!(
        r.snapshot()
            .records
            .iter()
            .find(|q| q.offer.work_id == "without")
            .unwrap()
            .blocked_reason
            .as_deref(),
        Some(RUNTIME_SESSION_LOST)
    );
    let ids = dispatched(&r.schedule(at(101)));
    assert_eq!(ids, ["queued", "with-ckpt"]);
}

#[test]
fn corrupt_snapshots_are_rejected() {
    let mut s = Scheduler::new(policy(1)).unwrap();
    s.admit(&WorkOffer::new("a", "g"), at(0));
    s.admit(&WorkOffer::new("b", "g"), at(0));
    let good = s.snapshot();
    let p = s.policy().clone();
    let mut dup = good.clone();
    dup.records[1].offer.work_id = "a".into();
    assert!(Scheduler::restore(p.clone(), &dup).is_err());
    let mut ticket = good.clone();
    ticket.records[1].ticket = ticket.records[0].ticket;
    assert!(Scheduler::restore(p.clone(), &ticket).is_err());
    let mut future = good.clone();
    future.records[0].ticket = future.next_ticket;
    assert!(Scheduler::restore(p.clone(), &future).is_err());
    let mut version = good.clone();
    version.version = 2;
    assert_eq!(
        Scheduler::restore(p.clone(), &version).unwrap_err().code(),
        WireCode::InternalError
    );
    let mut group = good.clone();
    group.groups.clear();
    assert!(Scheduler::restore(p.clone(), &group).is_err());
    let mut unsafe_ck = good;
    unsafe_ck.records[0].checkpoint = Some(CheckpointRef {
        checkpoint_id: "c".into(),
        durable: false,
        safe: true,
    });
    assert!(Scheduler::restore(p, &unsafe_ck).is_err());
}
