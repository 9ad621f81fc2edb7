//! Property tests of the Scheduler: slot safety, the stated starvation bound, checkpoint-only
//! preemption, and snapshot → restore → identical decisions.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;

use missionweaveprotocol_kernel::scheduler::{
    CheckpointRef, GroupPolicy, ScheduleAction, Scheduler, SchedulerPolicy, Transition, WorkOffer,
    WorkState,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Admit {
        group: u8,
        priority: i8,
        slots: u16,
        preemptible: bool,
    },
    Schedule,
    Complete(u16),
    Block {
        pick: u16,
        retry_in: Option<u16>,
    },
    Cancel(u16),
    Unblock(u16),
    Reprioritize(u16, i8),
    Checkpoint {
        pick: u16,
        durable: bool,
        safe: bool,
    },
    Decline(u16),
    Advance(u16),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..4, -100i8..=100, 1u16..=3, any::<bool>()).prop_map(|(group, priority, slots, preemptible)| Op::Admit { group, priority, slots, preemptible }),
        4 => Just(Op::Schedule),
        3 => any::<u16>().prop_map(Op::Complete),
        1 => (any::<u16>(), proptest::option::of(0u16..5_000)).prop_map(|(pick, retry_in)| Op::Block { pick, retry_in }),
        1 => any::<u16>().prop_map(Op::Cancel),
        1 => any::<u16>().prop_map(Op::Unblock),
        1 => (any::<u16>(), -100i8..=100).prop_map(|(a, b)| Op::Reprioritize(a, b)),
        2 => (any::<u16>(), any::<bool>(), any::<bool>()).prop_map(|(pick, durable, safe)| Op::Checkpoint { pick, durable, safe }),
        1 => any::<u16>().prop_map(Op::Decline),
        2 => (0u16..3_000).prop_map(Op::Advance),
    ]
}

fn policy(capacity: u32) -> SchedulerPolicy {
    let mut p = SchedulerPolicy {
        capacity_slots: capacity,
        max_work_items: 60,
        max_work_items_per_group: 30,
        ..SchedulerPolicy::default()
    };
    p.groups.insert(
        "g1".into(),
        GroupPolicy {
            weight: 3,
            slot_quota: None,
        },
    );
    p.groups.insert(
        "g2".into(),
        GroupPolicy {
            weight: 1,
            slot_quota: Some(2),
        },
    );
    p
}

/// Drives one scheduler through `ops`; returns every output, for comparison.
struct Driver {
    s: Scheduler,
    now: i64,
    next_id: u32,
    ids: Vec<String>,
    outputs: Vec<String>,
}

impl Driver {
    fn pick(&self, n: u16, want: &[WorkState]) -> Option<String> {
        let live: Vec<&String> = self
            .ids
            .iter()
            .filter(|id| self.s.state(id).is_some_and(|st| want.contains(&st)))
            .collect();
        (!live.is_empty()).then(|| live[n as usize % live.len()].clone())
    }

    fn step(&mut self, op: &Op) {
        let now = UnixMillis(self.now);
        let out = match op {
            Op::Admit {
                group,
                priority,
                slots,
                preemptible,
            } => {
                let id = format!("w{}", self.next_id);
                self.next_id += 1;
                let mut o = WorkOffer::new(&id, &format!("g{group}"));
                o.priority = *priority;
                o.slots = *slots;
                o.preemptible = *preemptible;
                let d = self.s.admit(&o, now);
                if d.accepted {
                    self.ids.push(id);
                }
                format!("{d:?}")
            }
            Op::Schedule => {
                let used_before = self.s.used_slots();
                let actions = self.s.schedule(now);
                let added: u32 = actions
                    .iter()
                    .map(|a| match a {
                        ScheduleAction::Dispatch(d) => u32::from(d.slots),
                        ScheduleAction::Preempt(_) => 0,
                    })
                    .sum();
                assert_eq!(self.s.used_slots(), used_before + added);
                assert!(
                    actions
                        .iter()
                        .filter(|a| matches!(a, ScheduleAction::Preempt(_)))
                        .count()
                        <= 1
                );
                format!("{actions:?}")
            }
            Op::Complete(n) => match self.pick(*n, &[WorkState::Running, WorkState::Preempting]) {
                Some(id) => {
                    let generation = self.s.generation(&id).unwrap();
                    format!(
                        "{:?}",
                        self.s.apply(&id, Transition::Completed { generation }, now)
                    )
                }
                None => String::new(),
            },
            Op::Block { pick, retry_in } => match self.pick(*pick, &[WorkState::Running]) {
                Some(id) => {
                    let generation = self.s.generation(&id).unwrap();
                    let t = Transition::Blocked {
                        generation,
                        checkpoint: CheckpointRef {
                            checkpoint_id: format!("{id}-b"),
                            durable: true,
                            safe: true,
                        },
                        retry_at: retry_in.map(|r| UnixMillis(self.now + i64::from(r))),
                        reason: "needs input".into(),
                    };
                    format!("{:?}", self.s.apply(&id, t, now))
                }
                None => String::new(),
            },
            Op::Cancel(n) => match self.pick(
                *n,
                &[
                    WorkState::Ready,
                    WorkState::Running,
                    WorkState::Blocked,
                    WorkState::Preempting,
                ],
            ) {
                Some(id) => format!("{:?}", self.s.cancel(&id)),
                None => String::new(),
            },
            Op::Unblock(n) => match self.pick(*n, &[WorkState::Blocked]) {
                Some(id) => format!("{:?}", self.s.unblock(&id, now)),
                None => String::new(),
            },
            Op::Reprioritize(n, p) => {
                match self.pick(*n, &[WorkState::Ready, WorkState::Running]) {
                    Some(id) => format!("{:?}", self.s.reprioritize(&id, *p)),
                    None => String::new(),
                }
            }
            Op::Checkpoint {
                pick,
                durable,
                safe,
            } => {
                match self.pick(*pick, &[WorkState::Preempting, WorkState::Running]) {
                    Some(id) => {
                        let before = self.s.state(&id);
                        let used = self.s.used_slots();
                        let generation = self.s.generation(&id).unwrap();
                        let ck = CheckpointRef {
                            checkpoint_id: format!("{id}-c"),
                            durable: *durable,
                            safe: *safe,
                        };
                        let r = self.s.apply(
                            &id,
                            Transition::CheckpointSaved {
                                generation,
                                checkpoint: ck,
                            },
                            now,
                        );
                        // Preemption releases a slot only with a durable safe checkpoint.
                        if self.s.used_slots() < used {
                            assert!(
                                *durable && *safe,
                                "slot released without a safe durable checkpoint"
                            );
                            assert_eq!(before, Some(WorkState::Preempting));
                            assert_eq!(self.s.state(&id), Some(WorkState::Ready));
                        }
                        if !(*durable && *safe) {
                            assert!(r.is_err());
                            assert_eq!(self.s.state(&id), before);
                        }
                        format!("{r:?}")
                    }
                    None => String::new(),
                }
            }
            Op::Decline(n) => match self.pick(*n, &[WorkState::Preempting]) {
                Some(id) => {
                    let generation = self.s.generation(&id).unwrap();
                    format!(
                        "{:?}",
                        self.s
                            .apply(&id, Transition::PreemptionDeclined { generation }, now)
                    )
                }
                None => String::new(),
            },
            Op::Advance(ms) => {
                self.now += i64::from(*ms);
                String::new()
            }
        };
        // Never more slots in use than declared.
        assert!(self.s.used_slots() <= self.s.capacity_slots());
        let held: u32 = self
            .s
            .snapshot()
            .records
            .iter()
            .filter(|r| matches!(r.state, WorkState::Running | WorkState::Preempting))
            .map(|r| u32::from(r.offer.slots))
            .sum();
        assert_eq!(held, self.s.used_slots());
        self.outputs.push(out);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn slots_preemption_and_restore(capacity in 1u32..=4, ops in proptest::collection::vec(op(), 1..120), cut in 0usize..120) {
        let mut a = Driver { s: Scheduler::new(policy(capacity)).unwrap(), now: 1_000_000, next_id: 0, ids: vec![], outputs: vec![] };
        let cut = cut.min(ops.len());
        for o in &ops[..cut] {
            a.step(o);
        }
        let snap = a.s.snapshot();
        let mut b = Driver {
            s: Scheduler::restore(policy(capacity), &snap).unwrap(),
            now: a.now,
            next_id: a.next_id,
            ids: a.ids.clone(),
            outputs: vec![],
        };
        prop_assert_eq!(b.s.snapshot(), snap);
        let mark = a.outputs.len();
        for o in &ops[cut..] {
            a.step(o);
            b.step(o);
        }
        prop_assert_eq!(&a.outputs[mark..], &b.outputs[..]);
    }

    /// The starvation bound stated in `scheduler` docs, checked on every dispatch:
    /// while Group g has ready work, each other Group h gets at most
    /// ⌈w_h·(s_max/w_g + 2L)⌉ + 1 dispatches before g's next dispatch.
    #[test]
    fn cross_group_starvation_bound(
        weights in proptest::collection::vec(1u32..=5, 2..=5),
        lag in 0u32..=3,
        capacity in 1u32..=4,
        arrivals in proptest::collection::vec((0usize..5, -100i8..=100, 1u16..=3, 0u8..4), 1..200),
    ) {
        let n = weights.len();
        let s_max = 3u32;
        let mut p = SchedulerPolicy { capacity_slots: capacity.max(s_max), max_work_items: 10_000, max_work_items_per_group: 10_000, fairness_lag_slots: lag, ..SchedulerPolicy::default() };
        for (i, w) in weights.iter().enumerate() {
            p.groups.insert(format!("g{i}"), GroupPolicy { weight: *w, slot_quota: None });
        }
        let mut s = Scheduler::new(p).unwrap();
        let mut ready = vec![0u32; n];
        let mut counts = vec![vec![0u32; n]; n];
        let mut running: Vec<(String, u32)> = vec![];
        let mut now = 0i64;
        let bound = |g: usize, h: usize| -> u32 {
            let x = f64::from(weights[h]) * (f64::from(s_max) / f64::from(weights[g]) + 2.0 * f64::from(lag));
            x.ceil() as u32 + 1
        };
        for (k, (group, prio, slots, completions)) in arrivals.into_iter().enumerate() {
            let g = group % n;
            let mut o = WorkOffer::new(&format!("w{k}"), &format!("g{g}"));
            o.priority = prio;
            o.slots = slots;
            o.preemptible = false;
            if s.admit(&o, UnixMillis(now)).accepted {
                if ready[g] == 0 {
                    counts[g] = vec![0; n];
                }
                ready[g] += 1;
            }
            for _ in 0..completions {
                if let Some((id, generation)) = running.pop() {
                    s.apply(&id, Transition::Completed { generation }, UnixMillis(now)).unwrap();
                }
            }
            for a in s.schedule(UnixMillis(now)) {
                let ScheduleAction::Dispatch(d) = a else { continue };
                let h: usize = d.group_id[1..].parse().unwrap();
                for gg in 0..n {
                    if gg != h && ready[gg] > 0 {
                        counts[gg][h] += 1;
                        prop_assert!(counts[gg][h] <= bound(gg, h), "group {} waited {} dispatches of {} (bound {})", gg, counts[gg][h], h, bound(gg, h));
                    }
                }
                ready[h] -= 1;
                counts[h] = vec![0; n];
                running.insert(0, (d.work_id.to_string(), d.generation));
            }
            now += 7;
        }
    }

    /// Within a Group, nothing that became ready more than H after an item overtakes it.
    #[test]
    fn within_group_overtaking_is_bounded_by_h(items in proptest::collection::vec((-100i8..=100, 0u32..700_000, proptest::option::of(0u32..50_000)), 2..80)) {
        let p = SchedulerPolicy { capacity_slots: 1, max_work_items: 10_000, max_work_items_per_group: 10_000, ..SchedulerPolicy::default() };
        let h = p.horizon_ms();
        let mut s = Scheduler::new(p).unwrap();
        s.admit(&WorkOffer::new("hold", "g"), UnixMillis(0));
        s.schedule(UnixMillis(0));
        let mut ready_at = HashMap::new();
        let mut t = 1i64;
        for (i, (prio, gap, deadline)) in items.iter().enumerate() {
            t += i64::from(*gap);
            let mut o = WorkOffer::new(&format!("w{i}"), "g");
            o.priority = *prio;
            o.deadline = deadline.map(|d| UnixMillis(t + 1 + i64::from(d)));
            if s.admit(&o, UnixMillis(t)).accepted {
                ready_at.insert(format!("w{i}"), t);
            }
        }
        s.apply("hold", Transition::Completed { generation: 1 }, UnixMillis(t)).unwrap();
        let mut order = vec![];
        loop {
            let acts = s.schedule(UnixMillis(t));
            let Some(ScheduleAction::Dispatch(d)) = acts.first() else { break };
            order.push(d.work_id.to_string());
            s.apply(&d.work_id, Transition::Completed { generation: 1 }, UnixMillis(t)).unwrap();
        }
        prop_assert_eq!(order.len(), ready_at.len());
        for (i, a) in order.iter().enumerate() {
            for b in &order[i + 1..] {
                // a went before b: a must have become ready before b + H.
                prop_assert!(ready_at[a] < ready_at[b] + h, "{} overtook {}", a, b);
            }
        }
    }
}
