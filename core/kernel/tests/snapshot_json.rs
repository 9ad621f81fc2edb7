//! JSON forms of the budget and scheduler snapshots: strict round trips through JSON text,
//! identical decisions after restoring from text, and rejection of malformed documents.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::WireCode;
use missionweaveprotocol::json::{canonical_bytes, parse};
use missionweaveprotocol_kernel::budget::{AccountKind, BudgetLedger, BudgetLedgerSnapshot};
use missionweaveprotocol_kernel::resources::{Currency, Dimension, Resources};
use missionweaveprotocol_kernel::scheduler::{
    CheckpointRef, ScheduleAction, Scheduler, SchedulerPolicy, SchedulerSnapshot, Transition,
    WorkOffer, WorkState,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

fn through_text_budget(snap: &BudgetLedgerSnapshot) -> BudgetLedgerSnapshot {
    let text = canonical_bytes(&snap.to_value()).unwrap();
    BudgetLedgerSnapshot::from_value(&parse(&text).unwrap()).unwrap()
}

fn through_text_scheduler(snap: &SchedulerSnapshot) -> SchedulerSnapshot {
    let text = canonical_bytes(&snap.to_value()).unwrap();
    SchedulerSnapshot::from_value(&parse(&text).unwrap()).unwrap()
}

#[test]
fn budget_snapshot_round_trips_through_json_text() {
    let mut l = BudgetLedger::new();
    let usd = Currency::parse("USD");
    l.register_mission("m", usd, Resources::splat(100)).unwrap();
    l.register_work_item("w1", "m", None, Resources::splat(60))
        .unwrap();
    l.register_child_mission("c", "w1", None, Resources::splat(40))
        .unwrap();
    l.register_work_item("w2", "c", None, Resources::splat(30))
        .unwrap();
    l.register_work_item("w3", "c", Some("w2"), Resources::splat(20))
        .unwrap();
    l.consume("w3", &Resources::new(1, 2, 3, 4, 5, 6)).unwrap();
    l.consume("w2", &Resources::splat(1)).unwrap();
    let snap = l.snapshot();
    let back = through_text_budget(&snap);
    assert_eq!(back, snap);
    let mut r = BudgetLedger::rebuild(&back).unwrap();
    assert_eq!(r.snapshot(), snap);
    assert_eq!(
        r.remaining(AccountKind::WorkItem, "w3").unwrap(),
        l.remaining(AccountKind::WorkItem, "w3").unwrap()
    );
    // The rebuilt ledger enforces the same limits.
    let err = r
        .consume("w3", &Resources::ZERO.with(Dimension::ToolCalls, 18))
        .unwrap_err();
    assert_eq!(err.code(), WireCode::BudgetExceeded);
    assert_eq!(
        r.usage(AccountKind::Mission, "m").unwrap(),
        l.usage(AccountKind::Mission, "m").unwrap()
    );
}

#[test]
fn budget_snapshot_rejects_malformed_documents() {
    let good = br#"{"version":1,"missions":[{"missionId":"m","currency":"USD","limit":{"financialMicrounits":1,"modelTokens":0,"toolCalls":0,"computeSeconds":0,"wallClockSeconds":0,"externalActions":0},"usage":{"financialMicrounits":0,"modelTokens":0,"toolCalls":0,"computeSeconds":0,"wallClockSeconds":0,"externalActions":0}}],"workItems":[]}"#;
    let snap = BudgetLedgerSnapshot::from_value(&parse(good).unwrap()).unwrap();
    assert_eq!(snap.missions.len(), 1);
    let text = std::str::from_utf8(good).unwrap();
    for (bad, path) in [
        (text.replace("\"USD\"", "\"usd\""), "/missions/0/currency"),
        (
            text.replace("\"missionId\"", "\"missionID\""),
            "/missions/0/missionId",
        ),
        (text.replace(",\"workItems\":[]", ""), "/workItems"),
        (
            text.replace("\"workItems\":[]", "\"workItems\":{}"),
            "/workItems",
        ),
        (
            text.replace("\"version\":1", "\"version\":1,\"extra\":true"),
            "",
        ),
    ] {
        let err = BudgetLedgerSnapshot::from_value(&parse(bad.as_bytes()).unwrap()).unwrap_err();
        assert_eq!(err.path, path, "{bad}");
    }
}

const T0: i64 = 1_767_225_600_000;

fn busy_scheduler() -> Scheduler {
    let policy = SchedulerPolicy {
        capacity_slots: 3,
        ..SchedulerPolicy::default()
    };
    let mut s = Scheduler::new(policy).unwrap();
    for i in 0..12i64 {
        let mut o = WorkOffer::new(&format!("w{i}"), &format!("g{}", i % 3));
        o.priority = ((i * 37) % 201 - 100) as i8;
        if i % 4 == 0 {
            o.deadline = Some(UnixMillis(T0 + 3_600_000 + i));
        }
        o.preemptible = i % 5 != 0;
        assert!(s.admit(&o, UnixMillis(T0 + i)).accepted);
    }
    let actions = s.schedule(UnixMillis(T0 + 20));
    let ids: Vec<String> = actions
        .iter()
        .filter_map(|a| match a {
            ScheduleAction::Dispatch(d) => Some(d.work_id.to_string()),
            ScheduleAction::Preempt(_) => None,
        })
        .collect();
    assert_eq!(ids.len(), 3);
    // One blocked with a retry timer, one completed (terminal), one still running with a
    // checkpoint.
    s.apply(
        &ids[0],
        Transition::Blocked {
            generation: 1,
            checkpoint: CheckpointRef {
                checkpoint_id: "ck-0".into(),
                durable: true,
                safe: true,
            },
            retry_at: Some(UnixMillis(T0 + 5_000)),
            reason: "waiting for input".into(),
        },
        UnixMillis(T0 + 21),
    )
    .unwrap();
    s.apply(
        &ids[1],
        Transition::Completed { generation: 1 },
        UnixMillis(T0 + 22),
    )
    .unwrap();
    s.apply(
        &ids[2],
        Transition::CheckpointSaved {
            generation: 1,
            checkpoint: CheckpointRef {
                checkpoint_id: "ck-2".into(),
                durable: true,
                safe: true,
            },
        },
        UnixMillis(T0 + 23),
    )
    .unwrap();
    s
}

#[test]
fn scheduler_snapshot_round_trips_and_restores_identical_decisions() {
    let mut s = busy_scheduler();
    let snap = s.snapshot();
    let back = through_text_scheduler(&snap);
    assert_eq!(back, snap);
    assert!(back.virtual_time > 0 && back.groups.iter().any(|g| g.pass > 0));
    let mut r = Scheduler::restore(s.policy().clone(), &back).unwrap();
    for q in back
        .records
        .iter()
        .filter(|q| q.state == WorkState::Running)
    {
        let t = Transition::Completed {
            generation: q.generation,
        };
        let now = UnixMillis(T0 + 25);
        s.apply(&q.offer.work_id, t.clone(), now).unwrap();
        r.apply(&q.offer.work_id, t, now).unwrap();
    }
    for step in 0..200 {
        let now = UnixMillis(T0 + 30 + step * 100);
        let a = s.schedule(now);
        assert_eq!(a, r.schedule(now), "step {step}");
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
    // Rebuild after restart from the text form: the running item with a checkpoint resumes.
    let s = busy_scheduler();
    let back = through_text_scheduler(&s.snapshot());
    let r =
        Scheduler::rebuild_after_restart(s.policy().clone(), &back, UnixMillis(T0 + 100)).unwrap();
    assert_eq!(r.used_slots(), 0);
    assert!(
        back.records
            .iter()
            .filter(|q| q.state == WorkState::Running)
            .all(|q| r.state(&q.offer.work_id) == Some(WorkState::Ready))
    );
}

#[test]
fn scheduler_snapshot_rejects_malformed_documents() {
    let snap = busy_scheduler().snapshot();
    let text = String::from_utf8(canonical_bytes(&snap.to_value()).unwrap()).unwrap();
    for (bad, path) in [
        (
            text.replacen("\"state\":\"", "\"state\":\"x", 1),
            "/records/0/state",
        ),
        (
            text.replacen("\"pass\":\"", "\"pass\":\"-", 1),
            "/groups/0/pass",
        ),
        (
            text.replacen("\"priority\":", "\"priority\":300,\"priorityX\":", 1),
            "/records/0/offer/priority",
        ),
        (
            text.replacen("\"slots\":", "\"slots\":-1,\"slotsX\":", 1),
            "/records/0/offer/slots",
        ),
        (
            text.replacen("\"nextTicket\"", "\"nextticket\"", 1),
            "/nextTicket",
        ),
    ] {
        let err = SchedulerSnapshot::from_value(&parse(bad.as_bytes()).unwrap()).unwrap_err();
        assert_eq!(err.path, path, "{bad}");
    }
}

/// Integers are read only within ±(2^53 − 1): beyond, the RFC 8785 writer would round them and
/// a restored Scheduler would not survive its own snapshot (a `scheduler` fuzz finding:
/// `"key": 9007199254740993` came back as `…992`). The largest exact value round-trips.
#[test]
fn snapshot_integers_beyond_the_exact_json_range_are_refused() {
    let snap = busy_scheduler().snapshot();
    let text = String::from_utf8(canonical_bytes(&snap.to_value()).unwrap()).unwrap();
    let next_ticket = format!("\"nextTicket\":{}", snap.next_ticket);
    // Positive: 2^53 − 1 is exact, read, restored and written back unchanged.
    let largest = text.replacen(&next_ticket, "\"nextTicket\":9007199254740991", 1);
    let read = SchedulerSnapshot::from_value(&parse(largest.as_bytes()).unwrap()).unwrap();
    assert_eq!(read.next_ticket, 9_007_199_254_740_991);
    let restored = Scheduler::restore(busy_scheduler().policy().clone(), &read).unwrap();
    assert_eq!(
        through_text_scheduler(&restored.snapshot()),
        restored.snapshot()
    );
    // Negative: 2^53 + 1 (and a negative key below −(2^53 − 1)) are refused with their path.
    for (bad, path) in [
        (
            text.replacen(&next_ticket, "\"nextTicket\":9007199254740993", 1),
            "/nextTicket",
        ),
        (
            text.replacen("\"key\":", "\"key\":-9007199254740992,\"keyX\":", 1),
            "/records/0/key",
        ),
    ] {
        let err = SchedulerSnapshot::from_value(&parse(bad.as_bytes()).unwrap()).unwrap_err();
        assert_eq!(err.path, path, "{bad}");
        assert_eq!(err.code(), WireCode::InternalError);
    }
    // The budget ledger's reader shares the rule.
    let budget = br#"{"version":9007199254740993,"missions":[],"workItems":[]}"#;
    let err = BudgetLedgerSnapshot::from_value(&parse(budget).unwrap()).unwrap_err();
    assert_eq!(err.path, "/version");
}
