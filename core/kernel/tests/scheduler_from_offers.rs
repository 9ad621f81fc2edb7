//! `Scheduler::from_offers`: the reference's `Scheduler.rebuild(offers)`, one rule for every
//! binding (Python's `Scheduler.rebuild(iterable)`, JavaScript's `Scheduler.rebuild(array)`):
//! each offer is admitted in order; a declined one refuses the whole rebuild
//! (`offer_declined`, naming the offer and the admission reason), so work is never lost silently.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::{DescribeError, ErrorClass, FieldValue, WireCode};
use missionweaveprotocol_kernel::scheduler::{
    AdmissionReason, Scheduler, SchedulerError, SchedulerPolicy, WorkOffer, WorkState,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

const T0: UnixMillis = UnixMillis(1_700_000_000_000);

#[test]
fn offers_are_admitted_in_order_and_none_make_an_empty_scheduler() {
    let empty: [WorkOffer; 0] = [];
    let s = Scheduler::from_offers(SchedulerPolicy::default(), &empty, T0).unwrap();
    assert_eq!(s.len(), 0);
    let offers = [WorkOffer::new("a", "g1"), WorkOffer::new("b", "g2")];
    let s = Scheduler::from_offers(SchedulerPolicy::default(), &offers, T0).unwrap();
    assert_eq!(s.len(), 2);
    assert_eq!(s.state("a"), Some(WorkState::Ready));
    assert_eq!(s.state("b"), Some(WorkState::Ready));
    // The same as admitting them one by one.
    let mut by_hand = Scheduler::new(SchedulerPolicy::default()).unwrap();
    for offer in &offers {
        assert!(by_hand.admit(offer, T0).accepted);
    }
    assert_eq!(s.snapshot(), by_hand.snapshot());
    // An identical repeat is idempotent (`duplicate` is accepted), as for `admit`.
    let repeated = [WorkOffer::new("a", "g1"), WorkOffer::new("a", "g1")];
    let s = Scheduler::from_offers(SchedulerPolicy::default(), &repeated, T0).unwrap();
    assert_eq!(s.len(), 1);
}

#[test]
fn a_declined_offer_refuses_the_rebuild() {
    let offers = [
        WorkOffer::new("a", "g1"),
        WorkOffer::new("b", "g1"),
        WorkOffer::new("a", "g2"),
    ];
    let e = Scheduler::from_offers(SchedulerPolicy::default(), &offers, T0).unwrap_err();
    assert_eq!(
        e,
        SchedulerError::OfferDeclined {
            work_id: "a".to_owned(),
            reason: AdmissionReason::IdentifierCollision,
        }
    );
    assert_eq!(e.class(), ErrorClass::Scheduler);
    assert_eq!(e.wire_code(), WireCode::InvalidCommand);
    assert_eq!(DescribeError::reason(&e), "offer_declined");
    assert!(!e.retryable());
    assert_eq!(
        e.fields().get("work_id"),
        Some(&FieldValue::Text("a".into()))
    );
    assert_eq!(
        e.fields().get("admission_reason"),
        Some(&FieldValue::Text("identifier_collision".into()))
    );
    assert_eq!(
        e.to_string(),
        "offer \"a\" was declined (identifier_collision): nothing was rebuilt"
    );
    // A full Worker declines too.
    let policy = SchedulerPolicy {
        max_work_items: 1,
        ..SchedulerPolicy::default()
    };
    let e = Scheduler::from_offers(
        policy,
        &[WorkOffer::new("a", "g1"), WorkOffer::new("b", "g1")],
        T0,
    )
    .unwrap_err();
    assert!(
        matches!(&e, SchedulerError::OfferDeclined { work_id, reason: AdmissionReason::WorkerFull } if work_id == "b"),
        "{e:?}"
    );
}

#[test]
fn an_invalid_policy_is_refused_before_any_offer() {
    let policy = SchedulerPolicy {
        capacity_slots: 0,
        ..SchedulerPolicy::default()
    };
    let e = Scheduler::from_offers(policy, &[WorkOffer::new("a", "g1")], T0).unwrap_err();
    assert!(matches!(e, SchedulerError::InvalidArgument(_)), "{e:?}");
}
