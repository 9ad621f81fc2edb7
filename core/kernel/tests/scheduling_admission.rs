//! Admission control (§10.3): every fine reason, its coarse category, and idempotency.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::WireCode;
use std::collections::HashSet;

use missionweaveprotocol_kernel::capability_version::CapabilityRef;
use missionweaveprotocol_kernel::scheduler::{
    AdmissionReason, DeclineCategory, GroupPolicy, Scheduler, SchedulerPolicy, WorkOffer,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

const T0: UnixMillis = UnixMillis(1_700_000_000_000);

fn cap(id: &str, v: &str) -> CapabilityRef {
    CapabilityRef::new(id, v).unwrap()
}

fn sched(policy: SchedulerPolicy) -> Scheduler {
    Scheduler::new(policy).unwrap()
}

#[test]
fn accepts_then_reports_duplicate_and_collision() {
    let mut s = sched(SchedulerPolicy::default());
    let offer = WorkOffer::new("w1", "g1");
    let d = s.admit(&offer, T0);
    assert!(d.accepted);
    assert_eq!(d.reason, AdmissionReason::Accepted);
    let d = s.admit(&offer, T0);
    assert!(d.accepted, "identical re-offer is idempotent");
    assert_eq!(d.reason, AdmissionReason::Duplicate);
    let mut other = offer.clone();
    other.priority = 5;
    let d = s.admit(&other, T0);
    assert!(!d.accepted);
    assert_eq!(d.reason, AdmissionReason::IdentifierCollision);
    assert_eq!(d.reason.category(), Some(DeclineCategory::Other));
    assert_eq!(s.len(), 1);
}

#[test]
fn terminal_items_are_not_readmitted_until_forgotten() {
    let mut s = sched(SchedulerPolicy::default());
    s.admit(&WorkOffer::new("w1", "g1"), T0);
    s.cancel("w1").unwrap();
    let d = s.admit(&WorkOffer::new("w1", "g1"), T0);
    assert_eq!(d.reason, AdmissionReason::AlreadyTerminal);
    assert!(s.forget("w1"));
    assert!(s.admit(&WorkOffer::new("w1", "g1"), T0).accepted);
}

#[test]
fn capacity_reasons() {
    let mut policy = SchedulerPolicy {
        capacity_slots: 4,
        max_work_items: 3,
        max_work_items_per_group: 2,
        ..SchedulerPolicy::default()
    };
    policy.groups.insert(
        "quota0".into(),
        GroupPolicy {
            weight: 1,
            slot_quota: Some(0),
        },
    );
    policy.groups.insert(
        "quota2".into(),
        GroupPolicy {
            weight: 1,
            slot_quota: Some(2),
        },
    );
    let mut s = sched(policy);
    let r = |s: &mut Scheduler, o: WorkOffer| s.admit(&o, T0).reason;
    assert_eq!(
        r(&mut s, WorkOffer::new("a", "quota0")),
        AdmissionReason::GroupQuotaDisabled
    );
    let mut big = WorkOffer::new("b", "g");
    big.slots = 5;
    assert_eq!(r(&mut s, big), AdmissionReason::ExceedsCapacity);
    let mut over_quota = WorkOffer::new("c", "quota2");
    over_quota.slots = 3;
    assert_eq!(r(&mut s, over_quota), AdmissionReason::ExceedsCapacity);
    let mut zero = WorkOffer::new("z", "g");
    zero.slots = 0;
    assert_eq!(r(&mut s, zero), AdmissionReason::ExceedsCapacity);
    assert!(s.admit(&WorkOffer::new("g1", "g"), T0).accepted);
    assert!(s.admit(&WorkOffer::new("g2", "g"), T0).accepted);
    assert_eq!(
        r(&mut s, WorkOffer::new("g3", "g")),
        AdmissionReason::GroupFull
    );
    assert!(s.admit(&WorkOffer::new("h1", "h"), T0).accepted);
    assert_eq!(
        r(&mut s, WorkOffer::new("h2", "h")),
        AdmissionReason::WorkerFull
    );
    for reason in [
        AdmissionReason::GroupQuotaDisabled,
        AdmissionReason::ExceedsCapacity,
        AdmissionReason::GroupFull,
        AdmissionReason::WorkerFull,
    ] {
        assert_eq!(reason.category(), Some(DeclineCategory::Capacity));
    }
}

#[test]
fn group_capability_deadline_and_eligibility_reasons() {
    let policy = SchedulerPolicy {
        allowed_groups: Some(HashSet::from(["g".to_owned()])),
        supported_capabilities: Some(vec![cap("code.review", "1.4.0")]),
        decline_infeasible_deadlines: true,
        ..SchedulerPolicy::default()
    };
    let mut s = sched(policy);
    let check = |s: &mut Scheduler, o: WorkOffer, want: AdmissionReason, cat: DeclineCategory| {
        let d = s.admit(&o, T0);
        assert!(!d.accepted);
        assert_eq!(d.reason, want);
        assert_eq!(d.reason.category(), Some(cat));
        assert_eq!(cat.as_str(), cat.as_str().to_lowercase());
    };
    check(
        &mut s,
        WorkOffer::new("a", "other"),
        AdmissionReason::GroupNotAllowed,
        DeclineCategory::Authorization,
    );
    let mut o = WorkOffer::new("b", "g");
    o.required_capabilities = vec![cap("code.review", "1.5.0")];
    check(
        &mut s,
        o.clone(),
        AdmissionReason::UnsupportedCapability,
        DeclineCategory::Capability,
    );
    o.required_capabilities = vec![cap("code.write", "1.0.0")];
    check(
        &mut s,
        o.clone(),
        AdmissionReason::UnsupportedCapability,
        DeclineCategory::Capability,
    );
    o.required_capabilities = vec![cap("code.review", "1.3.9")];
    assert!(
        s.admit(&o, T0).accepted,
        "offered 1.4.0 satisfies minimum 1.3.9"
    );

    let mut late = WorkOffer::new("c", "g");
    late.deadline = Some(T0);
    check(
        &mut s,
        late.clone(),
        AdmissionReason::DeadlineExpired,
        DeclineCategory::Deadline,
    );
    late.deadline = Some(UnixMillis(T0.0 + 1_000));
    late.estimated_duration_ms = 5_000;
    check(
        &mut s,
        late.clone(),
        AdmissionReason::DeadlineExpired,
        DeclineCategory::Deadline,
    );
    late.estimated_duration_ms = 500;
    assert!(s.admit(&late, T0).accepted);

    let mut e = WorkOffer::new("d", "g");
    e.eligibility.authorized = false;
    check(
        &mut s,
        e.clone(),
        AdmissionReason::NotAuthorized,
        DeclineCategory::Authorization,
    );
    e.eligibility.authorized = true;
    e.eligibility.dependencies_ready = false;
    check(
        &mut s,
        e.clone(),
        AdmissionReason::DependencyUnsatisfied,
        DeclineCategory::Dependency,
    );
    e.eligibility.dependencies_ready = true;
    e.eligibility.budget_available = false;
    check(
        &mut s,
        e,
        AdmissionReason::BudgetUnavailable,
        DeclineCategory::Budget,
    );
}

#[test]
fn accepted_reasons_have_no_category_and_names_are_reference_names() {
    assert_eq!(AdmissionReason::Accepted.category(), None);
    assert_eq!(AdmissionReason::Duplicate.category(), None);
    let names: Vec<&str> = [
        AdmissionReason::Accepted,
        AdmissionReason::Duplicate,
        AdmissionReason::IdentifierCollision,
        AdmissionReason::AlreadyTerminal,
        AdmissionReason::WorkerFull,
        AdmissionReason::GroupFull,
        AdmissionReason::GroupNotAllowed,
        AdmissionReason::GroupQuotaDisabled,
        AdmissionReason::UnsupportedCapability,
        AdmissionReason::ExceedsCapacity,
        AdmissionReason::DeadlineExpired,
    ]
    .iter()
    .map(|r| r.as_str())
    .collect();
    assert_eq!(
        names,
        [
            "accepted",
            "duplicate",
            "identifier_collision",
            "already_terminal",
            "worker_full",
            "group_full",
            "group_not_allowed",
            "group_quota_disabled",
            "unsupported_capability",
            "exceeds_capacity",
            "deadline_expired"
        ]
    );
}

#[test]
fn invalid_policies_are_rejected() {
    assert!(
        Scheduler::new(SchedulerPolicy {
            capacity_slots: 0,
            ..SchedulerPolicy::default()
        })
        .is_err()
    );
    let mut s = sched(SchedulerPolicy::default());
    let err = s
        .set_group_policy(
            "g",
            GroupPolicy {
                weight: 0,
                slot_quota: None,
            },
        )
        .unwrap_err();
    assert_eq!(err.code(), WireCode::InvalidCommand);
}
