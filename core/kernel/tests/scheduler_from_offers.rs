//! `Scheduler::from_offers`: the reference's `Scheduler.rebuild(offers)`, one rule for every
//! binding (Python's `Scheduler.rebuild(iterable)`, JavaScript's `Scheduler.rebuild(array)`):
//! each offer is admitted in order; a declined one refuses the whole rebuild
//! (`offer_declined`, naming the offer and the admission reason), so work is never lost silently;
//! no offers at all are an argument error (`source`), never an empty rebuild.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::{DescribeError, ErrorClass, FieldValue, WireCode};
use missionweaveprotocol_kernel::scheduler::{
    AdmissionReason, Scheduler, SchedulerError, SchedulerPolicy, WorkOffer, WorkState,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

const T0: UnixMillis = UnixMillis(1_700_000_000_000);

#[test]
fn offers_are_admitted_in_order() {
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
fn no_offers_are_an_argument_error_naming_the_source() {
    // Issue 22, item 8: `rebuild([])` restored nothing and was accepted; it is API misuse,
    // reported as every binding reports a source that is neither a snapshot nor offers.
    let empty: [WorkOffer; 0] = [];
    let e = Scheduler::from_offers(SchedulerPolicy::default(), &empty, T0).unwrap_err();
    assert_eq!(e, SchedulerError::NoOffers);
    assert_eq!(e.class(), ErrorClass::Argument);
    assert_eq!(e.wire_code(), WireCode::ProtocolViolation);
    assert_eq!(DescribeError::reason(&e), "invalid-argument");
    assert!(!e.retryable());
    assert_eq!(
        e.fields().get("argument"),
        Some(&FieldValue::Text("source".into()))
    );
    assert!(e.to_string().starts_with("source: "), "{e}");
    // One offer is enough (the boundary).
    let one = [WorkOffer::new("a", "g1")];
    let s = Scheduler::from_offers(SchedulerPolicy::default(), &one, T0).unwrap();
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
