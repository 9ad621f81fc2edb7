//! Tampered Scheduler snapshots are refused with a typed error naming the JSON Pointer of the
//! offending member (issue 9, item 11); the untampered snapshot restores.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::{ArgumentError, DescribeError, ErrorClass, FieldValue, WireCode};
use missionweaveprotocol_kernel::scheduler::{
    Scheduler, SchedulerError, SchedulerPolicy, SchedulerSnapshot, WorkOffer, WorkState,
};
use missionweaveprotocol_kernel::unix_millis::{
    MAX_RFC3339_MILLIS, MIN_RFC3339_MILLIS, UnixMillis,
};

const T0: i64 = 1_700_000_000_000;

fn policy(slots: u32) -> SchedulerPolicy {
    SchedulerPolicy {
        capacity_slots: slots,
        ..SchedulerPolicy::default()
    }
}

/// Two items in a capacity-2 Scheduler: "a" running (dispatched at T0), "b" ready.
fn running_snapshot() -> (SchedulerPolicy, SchedulerSnapshot) {
    let mut s = Scheduler::new(policy(1)).unwrap();
    assert!(s.admit(&WorkOffer::new("a", "g"), UnixMillis(T0)).accepted);
    assert!(s.admit(&WorkOffer::new("b", "g"), UnixMillis(T0)).accepted);
    s.schedule(UnixMillis(T0));
    let snap = s.snapshot();
    assert_eq!(
        snap.records
            .iter()
            .filter(|r| r.state == WorkState::Running)
            .count(),
        1
    );
    (s.policy().clone(), snap)
}

fn index_of(snap: &SchedulerSnapshot, state: WorkState) -> usize {
    snap.records.iter().position(|r| r.state == state).unwrap()
}

fn refused(policy: &SchedulerPolicy, snap: &SchedulerSnapshot) -> (String, String) {
    let restored = Scheduler::restore(policy.clone(), snap).unwrap_err();
    let rebuilt =
        Scheduler::rebuild_after_restart(policy.clone(), snap, UnixMillis(T0 + 1)).unwrap_err();
    assert_eq!(restored, rebuilt);
    assert_eq!(restored.class(), ErrorClass::Snapshot);
    assert_eq!(restored.wire_code(), WireCode::InternalError);
    assert_eq!(DescribeError::reason(&restored), "corrupt_snapshot");
    let SchedulerError::CorruptSnapshot { path, problem } = &restored else {
        panic!("{restored:?}");
    };
    assert_eq!(
        restored.fields().get("path"),
        Some(&FieldValue::Text(path.clone()))
    );
    assert!(restored.to_string().contains(path.as_str()), "{restored}");
    (path.clone(), (*problem).to_owned())
}

#[test]
fn the_untampered_snapshot_restores_and_rebuilds() {
    let (p, snap) = running_snapshot();
    let r = Scheduler::restore(p.clone(), &snap).unwrap();
    assert_eq!(r.used_slots(), 1);
    let r = Scheduler::rebuild_after_restart(p, &snap, UnixMillis(T0 + 1)).unwrap();
    assert_eq!(r.used_slots(), 0);
}

#[test]
fn more_running_slots_than_capacity_are_refused() {
    let (p, mut snap) = running_snapshot();
    let ready = index_of(&snap, WorkState::Ready);
    snap.records[ready].state = WorkState::Running;
    let (path, problem) = refused(&p, &snap);
    assert!(path.starts_with("/records/") && path.ends_with("/offer/slots"));
    assert_eq!(problem, "running slots exceed capacity");
    // The same two running items fit a capacity of 2.
    assert!(Scheduler::restore(policy(2), &snap).is_ok());
    // One running item needing more slots than the capacity.
    let (p, mut snap) = running_snapshot();
    let running = index_of(&snap, WorkState::Running);
    snap.records[running].offer.slots = 2;
    assert_eq!(
        refused(&p, &snap).0,
        format!("/records/{running}/offer/slots")
    );
    // Large slot counts are summed without overflow: they fit a large capacity only.
    let (_, mut snap) = running_snapshot();
    for r in &mut snap.records {
        r.state = WorkState::Running;
        r.offer.slots = u16::MAX;
    }
    refused(&policy(u32::from(u16::MAX)), &snap);
    let r = Scheduler::restore(policy(u32::MAX), &snap).unwrap();
    assert_eq!(r.used_slots(), 2 * u32::from(u16::MAX));
}

#[test]
fn instants_outside_the_timestamp_range_are_refused() {
    let (p, snap) = running_snapshot();
    let running = index_of(&snap, WorkState::Running);
    for bad in [
        -(1_i64 << 62),
        MIN_RFC3339_MILLIS - 1,
        MAX_RFC3339_MILLIS + 1,
        i64::MAX,
    ] {
        let mut t = snap.clone();
        t.records[running].since = UnixMillis(bad);
        assert_eq!(refused(&p, &t).0, format!("/records/{running}/since"));
        let mut t = snap.clone();
        t.records[running].offer.deadline = Some(UnixMillis(bad));
        assert_eq!(
            refused(&p, &t).0,
            format!("/records/{running}/offer/deadline")
        );
        let mut t = snap.clone();
        t.records[running].retry_at = Some(UnixMillis(bad));
        assert_eq!(refused(&p, &t).0, format!("/records/{running}/retryAt"));
    }
    // The range's ends are valid instants.
    for good in [MIN_RFC3339_MILLIS, MAX_RFC3339_MILLIS] {
        let mut t = snap.clone();
        t.records[running].since = UnixMillis(good);
        t.records[running].offer.deadline = Some(UnixMillis(good));
        let r = Scheduler::restore(p.clone(), &t).unwrap();
        let id = &t.records[running].offer.work_id;
        assert!(r.disclose(id, UnixMillis(T0)).is_some());
    }
}

#[test]
fn other_invariants_name_their_path() {
    let (p, snap) = running_snapshot();
    let mut t = snap.clone();
    t.records[1].offer.work_id = String::new();
    assert_eq!(refused(&p, &t).0, "/records/1/offer/workId");
    let mut t = snap.clone();
    t.records[1].offer.work_id = t.records[0].offer.work_id.clone();
    assert_eq!(
        refused(&p, &t),
        ("/records/1/offer/workId".into(), "duplicate work id".into())
    );
    let mut t = snap.clone();
    t.records[1].offer.group_id = "elsewhere".into();
    assert_eq!(refused(&p, &t).0, "/records/1/offer/groupId");
    let mut t = snap.clone();
    t.records[1].ticket = t.next_ticket;
    assert_eq!(refused(&p, &t).0, "/records/1/ticket");
    let mut t = snap.clone();
    t.records[1].offer.slots = 0;
    assert_eq!(refused(&p, &t).0, "/records/1/offer/slots");
    let mut t = snap.clone();
    t.records[1].offer.priority = 101;
    assert_eq!(refused(&p, &t).0, "/records/1/offer/priority");
    let mut t = snap.clone();
    t.terminal.push(String::new());
    assert_eq!(refused(&p, &t).0, "/terminal/0");
    let mut t = snap.clone();
    t.groups.push(t.groups[0].clone());
    assert_eq!(refused(&p, &t).0, "/groups/1/groupId");
    let mut t = snap.clone();
    t.groups[0].group_id = String::new();
    assert_eq!(refused(&p, &t).0, "/groups/0/groupId");
    let mut t = snap;
    t.version = 2;
    assert_eq!(refused(&p, &t).0, "/version");
}

#[test]
fn empty_offer_ids_are_argument_errors() {
    for (work, group, argument) in [
        ("", "g", "work_id"),
        ("w", "", "group_id"),
        ("", "", "work_id"),
    ] {
        let e: ArgumentError = WorkOffer::try_new(work, group).unwrap_err();
        assert_eq!(e.argument.as_deref(), Some(argument));
        assert_eq!(e.class(), ErrorClass::Argument);
        assert_eq!(e.wire_code(), WireCode::ProtocolViolation);
        assert_eq!(e.reason(), "invalid-argument");
    }
    let offer = WorkOffer::try_new("w", "g").unwrap();
    assert_eq!(offer, WorkOffer::new("w", "g"));
    assert!(WorkOffer::check_ids("w", "g").is_ok());
}
