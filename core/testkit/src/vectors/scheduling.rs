//! `scheduling.jsonl`: scheduling scenarios whose steps are programs, not data, so every
//! binding re-implements them through its public API (`js/test/scheduling.test.mjs`,
//! `python/tests/test_vectors.py`) and compares with these outputs: the mixed scenario's full
//! trace and final snapshot (weights, a quota, a multi-slot reservation with cooperative
//! preemption, blocking with a retry time, release, failure, a decline, an exact restore from
//! JSON text, a rebuild after a restart), the 10,000-item benchmark's dispatch order (digest),
//! three idempotency keys (§9.1) and one lease document.

use std::collections::BTreeMap;

use missionweaveprotocol::json::{Value, canonical_bytes, parse_state, sha256_prefixed};
use missionweaveprotocol_kernel::lease::{Lease, LeaseBinding, LeaseWindow};
use missionweaveprotocol_kernel::retry::idempotency_key;
use missionweaveprotocol_kernel::scheduler::{
    CheckpointRef, GroupPolicy, ScheduleAction, Scheduler, SchedulerPolicy, SchedulerSnapshot,
    Transition, WorkOffer, WorkState,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

use super::Rec as Obj;
use crate::scheduling_workload::{bench_offers, run_bench};

const T0: i64 = 1_700_000_000_000;

fn bench() -> Value {
    let (order, _) = run_bench(&bench_offers(10_000)).unwrap_or_default();
    Obj::new()
        .str("area", "scheduling")
        .str("scenario", "bench")
        .num("count", order.len() as u64)
        .str("digest", sha256_prefixed(order.join("\n").as_bytes()))
        .strings("first", order.iter().take(8).map(String::as_str))
        .build()
}

fn offer(id: &str, group: &str, priority: i8) -> WorkOffer {
    let mut o = WorkOffer::new(id, group);
    o.priority = priority;
    o
}

/// Ticks an item runs before its run ends.
fn duration(id: &str) -> i64 {
    match id.as_bytes().first() {
        Some(b'h') => 3,
        Some(b'l') => 10,
        Some(b'r' | b'f') => 1,
        _ => 2,
    }
}

fn ckpt(id: &str, generation: u32) -> CheckpointRef {
    CheckpointRef {
        checkpoint_id: format!("ck-{id}-{generation}"),
        durable: true,
        safe: true,
    }
}

fn state_name(state: Option<WorkState>) -> &'static str {
    state.map_or("none", WorkState::as_str)
}

/// The mixed scenario (see `js/test/scheduling.test.mjs`, which drives the same steps): weights,
/// a quota, a multi-slot reservation with cooperative preemption, blocking with a retry time,
/// release, failure, a decline, an exact restore from JSON text and a rebuild after a restart.
fn mixed() -> Value {
    let mut policy = SchedulerPolicy {
        capacity_slots: 3,
        ..SchedulerPolicy::default()
    };
    policy.groups.insert(
        "g-heavy".into(),
        GroupPolicy {
            weight: 2,
            slot_quota: None,
        },
    );
    policy.groups.insert(
        "g-quota".into(),
        GroupPolicy {
            weight: 1,
            slot_quota: Some(1),
        },
    );
    let Ok(mut s) = Scheduler::new(policy.clone()) else {
        return Value::Null;
    };
    let mut trace: Vec<String> = Vec::new();
    let mut ids: Vec<String> = Vec::new();
    let admit = |s: &mut Scheduler,
                 o: WorkOffer,
                 t: i64,
                 trace: &mut Vec<String>,
                 ids: &mut Vec<String>| {
        let d = s.admit(&o, UnixMillis(T0 + t));
        trace.push(format!("t={t} admit {} {}", o.work_id, d.reason.as_str()));
        if !ids.contains(&o.work_id) {
            ids.push(o.work_id.clone());
        }
    };
    let mut first = Vec::new();
    for i in 0..6 {
        first.push(offer(&format!("h{i}"), "g-heavy", 0));
    }
    for i in 0..4 {
        first.push(offer(&format!("l{i}"), "g-light", -20));
    }
    for i in 0..3 {
        first.push(offer(&format!("q{i}"), "g-quota", 30));
    }
    first.push(offer("blk0", "g-light", 10));
    first.push(offer("rel0", "g-heavy", 0));
    first.push(offer("fail0", "g-light", 0));
    for o in first {
        admit(&mut s, o, 0, &mut trace, &mut ids);
    }
    // id → (generation, end tick)
    let mut running: BTreeMap<String, (u32, i64)> = BTreeMap::new();
    let mut preempted: Vec<(String, u32)> = Vec::new();
    for t in 0..=60i64 {
        let now = UnixMillis(T0 + t);
        if t == 5 {
            let mut big = offer("big", "g-urgent", 100);
            big.slots = 2;
            admit(&mut s, big, t, &mut trace, &mut ids);
            let mut late = offer("late", "g-light", 0);
            late.deadline = Some(UnixMillis(T0 + 3));
            admit(&mut s, late, t, &mut trace, &mut ids);
            admit(&mut s, offer("h0", "g-heavy", 0), t, &mut trace, &mut ids);
        }
        if t == 12 {
            let text = canonical_bytes(&s.snapshot().to_value()).unwrap_or_default();
            let snap = parse_state(&text)
                .ok()
                .and_then(|v| SchedulerSnapshot::from_value(&v).ok());
            match snap.map(|snap| Scheduler::restore(policy.clone(), &snap)) {
                Some(Ok(restored)) => s = restored,
                _ => trace.push(format!("t={t} restore failed")),
            }
            trace.push(format!("t={t} restored size={}", s.len()));
        }
        if t == 18 {
            let snap = s.snapshot();
            match Scheduler::rebuild_after_restart(policy.clone(), &snap, now) {
                Ok(rebuilt) => s = rebuilt,
                Err(_) => trace.push(format!("t={t} rebuild failed")),
            }
            running.clear();
            preempted.clear();
            for id in &ids {
                let st = s.state(id);
                if st.is_some() {
                    trace.push(format!("t={t} rebuilt {id} {}", state_name(st)));
                }
            }
        }
        if t == 19 {
            for id in &ids {
                if s.state(id) == Some(WorkState::Blocked) {
                    let ok = s.unblock(id, now).is_ok();
                    trace.push(format!("t={t} unblock {id} {ok}"));
                }
            }
        }
        for (id, generation) in std::mem::take(&mut preempted) {
            let r = s.apply(
                &id,
                Transition::CheckpointSaved {
                    generation,
                    checkpoint: ckpt(&id, generation),
                },
                now,
            );
            running.remove(&id);
            trace.push(format!("t={t} apply {id} checkpoint_saved {}", r.is_ok()));
        }
        let due: Vec<(String, u32)> = running
            .iter()
            .filter(|(_, (_, end))| *end == t)
            .map(|(id, (g, _))| (id.clone(), *g))
            .collect();
        for (id, generation) in due {
            running.remove(&id);
            let (kind, transition) = match (id.as_str(), generation) {
                ("blk0", 1) => (
                    "blocked",
                    Transition::Blocked {
                        generation,
                        checkpoint: ckpt(&id, generation),
                        retry_at: Some(UnixMillis(T0 + t + 4)),
                        reason: "waiting".into(),
                    },
                ),
                ("rel0", 1) => ("released", Transition::Released { generation }),
                ("fail0", _) => ("failed", Transition::Failed { generation }),
                _ => ("completed", Transition::Completed { generation }),
            };
            let r = s.apply(&id, transition, now);
            trace.push(format!("t={t} apply {id} {kind} {}", r.is_ok()));
        }
        for action in s.schedule(now) {
            match action {
                ScheduleAction::Dispatch(d) => {
                    let resume = d
                        .resume_from
                        .as_ref()
                        .map_or("-".to_owned(), |c| c.checkpoint_id.clone());
                    trace.push(format!(
                        "t={t} dispatch {} {} gen={} slots={} resume={resume}",
                        d.work_id, d.group_id, d.generation, d.slots
                    ));
                    running.insert(
                        d.work_id.to_string(),
                        (d.generation, t + duration(&d.work_id)),
                    );
                }
                ScheduleAction::Preempt(p) => {
                    trace.push(format!("t={t} preempt {} gen={}", p.work_id, p.generation));
                    preempted.push((p.work_id.to_string(), p.generation));
                }
            }
        }
    }
    let final_snapshot = canonical_bytes(&s.snapshot().to_value()).unwrap_or_default();
    Obj::new()
        .str("area", "scheduling")
        .str("scenario", "mixed")
        .strings("trace", trace.iter().map(String::as_str))
        .str("snapshot", String::from_utf8_lossy(&final_snapshot))
        .build()
}

fn keys() -> Value {
    let cases: [(&str, &str, u64, &str); 3] = [
        ("urn:mission:1", "urn:work:1", 1, "charge-card"),
        ("m", "w", 9_007_199_254_740_991, "op/é \"quoted\""),
        ("urn:mission:ü", "urn:work:2", 42, ""),
    ];
    let cases = cases
        .iter()
        .map(|(m, w, e, op)| {
            Obj::new()
                .str("missionId", *m)
                .str("workItemId", *w)
                .num("ownershipEpoch", *e)
                .str("logicalOperationId", *op)
                .str("key", idempotency_key(m, w, *e, op).unwrap_or_default())
                .build()
        })
        .collect();
    Obj::new()
        .str("area", "scheduling")
        .str("scenario", "idempotency")
        .value("cases", Value::Array(cases))
        .build()
}

fn lease() -> Value {
    let binding = LeaseBinding {
        lease_id: "urn:lease:1".into(),
        mission_id: "urn:mission:1".into(),
        group_id: "urn:group:1".into(),
        holder_agent_id: "urn:agent:1".into(),
        session_epoch: 3,
    };
    let window = LeaseWindow {
        issued_at: UnixMillis(T0),
        starts_at: UnixMillis(T0 + 1_000),
        expires_at: UnixMillis(T0 + 60_000),
    };
    let doc = Lease::execution(binding, "urn:work:1", 7, window).and_then(|mut l| {
        l.renew(UnixMillis(T0 + 30_000), UnixMillis(T0 + 90_000))?;
        l.release(UnixMillis(T0 + 45_000), "checkpoint")?;
        l.to_json_string()
    });
    Obj::new()
        .str("area", "scheduling")
        .str("scenario", "lease")
        .str("document", doc.unwrap_or_default())
        .build()
}

/// The four scenario records.
pub(super) fn records() -> Vec<Value> {
    vec![bench(), mixed(), keys(), lease()]
}
