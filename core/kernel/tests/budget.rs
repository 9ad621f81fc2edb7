//! Budget ledger (§12, §14): reservation, atomic ancestry charging, remaining, snapshots.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::WireCode;
use missionweaveprotocol_kernel::budget::{AccountKind, BudgetError, BudgetLedger};
use missionweaveprotocol_kernel::resources::{Currency, Dimension, MAX_SAFE_INTEGER, Resources};

fn usd() -> Option<Currency> {
    Currency::parse("USD")
}

/// root(100) → w1(60) → child mission(40) → w2(30) → w3(20); plus w4(30) under root.
fn tree() -> BudgetLedger {
    let mut l = BudgetLedger::new();
    l.register_mission("m", usd(), Resources::splat(100))
        .unwrap();
    l.register_work_item("w1", "m", None, Resources::splat(60))
        .unwrap();
    l.register_child_mission("c", "w1", None, Resources::splat(40))
        .unwrap();
    l.register_work_item("w2", "c", None, Resources::splat(30))
        .unwrap();
    l.register_work_item("w3", "c", Some("w2"), Resources::splat(20))
        .unwrap();
    l.register_work_item("w4", "m", None, Resources::splat(30))
        .unwrap();
    l
}

#[test]
fn children_reserve_against_parents() {
    let mut l = tree();
    assert_eq!(
        l.reserved(AccountKind::Mission, "m").unwrap(),
        Resources::splat(90)
    );
    let err = l
        .register_work_item("w5", "m", None, Resources::splat(11))
        .unwrap_err();
    assert_eq!(
        err,
        BudgetError::AllocationExceeded {
            parent: missionweaveprotocol_kernel::budget::AccountId {
                kind: AccountKind::Mission,
                id: "m".into()
            },
            dimension: Dimension::Financial
        }
    );
    assert_eq!(err.code(), WireCode::BudgetExceeded);
    let one_dim = Resources::splat(10).with(Dimension::ToolCalls, 11);
    match l.register_work_item("w5", "m", None, one_dim).unwrap_err() {
        BudgetError::AllocationExceeded { dimension, .. } => {
            assert_eq!(dimension, Dimension::ToolCalls)
        }
        e => panic!("{e:?}"),
    }
    l.register_work_item("w5", "m", None, Resources::splat(10))
        .unwrap();
    assert_eq!(l.depth(AccountKind::WorkItem, "w3").unwrap(), 4);
}

#[test]
fn consumption_charges_the_whole_ancestry_or_nothing() {
    let mut l = tree();
    let d = Resources::splat(5);
    assert_eq!(l.consume("w3", &d).unwrap(), Resources::splat(5));
    for (k, id) in [
        (AccountKind::WorkItem, "w3"),
        (AccountKind::WorkItem, "w2"),
        (AccountKind::Mission, "c"),
        (AccountKind::WorkItem, "w1"),
        (AccountKind::Mission, "m"),
    ] {
        assert_eq!(l.usage(k, id).unwrap(), Resources::splat(5), "{id}");
    }
    assert_eq!(
        l.usage(AccountKind::WorkItem, "w4").unwrap(),
        Resources::ZERO
    );
    // Direct usage on w2 counts for w2 and up, not for w3.
    l.consume("w2", &Resources::splat(10)).unwrap();
    assert_eq!(
        l.usage(AccountKind::WorkItem, "w2").unwrap(),
        Resources::splat(15)
    );
    assert_eq!(
        l.usage(AccountKind::WorkItem, "w3").unwrap(),
        Resources::splat(5)
    );
    // One overflowing dimension anywhere rejects everything (§12).
    let before = l.snapshot();
    let over = Resources::splat(1).with(Dimension::ExternalSideEffects, 16);
    let err = l.consume("w3", &over).unwrap_err();
    assert_eq!(err.code(), WireCode::BudgetExceeded);
    match err {
        BudgetError::Exceeded { account, dimension } => {
            assert_eq!(dimension, Dimension::ExternalSideEffects);
            assert_eq!(account.id, "w3");
        }
        e => panic!("{e:?}"),
    }
    // The leaf fits but an ancestor does not: w2 has 15/30, charge 16 on w3 (5/20 → 21 > 20 fails at w3 first).
    l.consume("w3", &Resources::splat(10)).unwrap();
    let err = l
        .consume("w2", &Resources::splat(1).with(Dimension::ModelTokens, 6))
        .unwrap_err();
    assert!(
        matches!(err, BudgetError::Exceeded { ref account, dimension: Dimension::ModelTokens } if account.id == "w2"),
        "{err:?}"
    );
    assert_ne!(l.snapshot(), before);
    let snapshot = l.snapshot();
    assert!(l.consume("w3", &Resources::splat(6)).is_err());
    assert_eq!(l.snapshot(), snapshot, "a rejected charge leaves no trace");
}

#[test]
fn remaining_is_the_minimum_over_the_ancestry() {
    let mut l = tree();
    l.consume("w4", &Resources::splat(30)).unwrap();
    // Mission m: 100 − 30 = 70; w1: 60; c: 40; w2: 30; w3: 20 → 20.
    assert_eq!(
        l.remaining(AccountKind::WorkItem, "w3").unwrap(),
        Resources::splat(20)
    );
    l.consume("w1", &Resources::splat(55)).unwrap();
    // m: 100 − 85 = 15 is now the tightest.
    assert_eq!(
        l.remaining(AccountKind::WorkItem, "w3").unwrap(),
        Resources::splat(5)
    );
    assert_eq!(
        l.remaining(AccountKind::Mission, "m").unwrap(),
        Resources::splat(15)
    );
}

#[test]
fn input_validation() {
    let mut l = tree();
    assert_eq!(
        l.consume("w3", &Resources::ZERO).unwrap_err(),
        BudgetError::ZeroDelta
    );
    assert!(matches!(
        l.consume("nope", &Resources::splat(1)),
        Err(BudgetError::UnknownAccount(_))
    ));
    assert!(matches!(
        l.register_mission("m", usd(), Resources::ZERO),
        Err(BudgetError::Duplicate(_))
    ));
    assert!(matches!(
        l.register_work_item("w1", "m", None, Resources::ZERO),
        Err(BudgetError::Duplicate(_))
    ));
    assert!(matches!(
        l.register_work_item("x", "m", Some("w2"), Resources::ZERO),
        Err(BudgetError::CrossMissionParent(_))
    ));
    assert!(matches!(
        l.register_mission("nomoney", None, Resources::splat(1)),
        Err(BudgetError::Currency(_))
    ));
    l.register_mission(
        "tokens-only",
        None,
        Resources::ZERO.with(Dimension::ModelTokens, 9),
    )
    .unwrap();
    assert!(matches!(
        l.register_child_mission("eur", "w4", Currency::parse("EUR"), Resources::ZERO),
        Err(BudgetError::Currency(_))
    ));
    assert_eq!(
        l.register_mission("big", usd(), Resources::splat(MAX_SAFE_INTEGER + 1))
            .unwrap_err(),
        BudgetError::UnsafeInteger(Dimension::Financial)
    );
    assert_eq!(
        l.currency(AccountKind::WorkItem, "w3").unwrap(),
        usd(),
        "inherited through the child Mission"
    );
}

#[test]
fn snapshot_round_trip_and_corruption() {
    let mut l = tree();
    l.consume("w3", &Resources::splat(3)).unwrap();
    l.consume("w4", &Resources::splat(7)).unwrap();
    let snap = l.snapshot();
    let mut r = BudgetLedger::rebuild(&snap).unwrap();
    assert_eq!(r.snapshot(), snap);
    assert_eq!(
        r.remaining(AccountKind::WorkItem, "w3"),
        l.remaining(AccountKind::WorkItem, "w3")
    );
    assert!(
        r.register_work_item("w9", "m", None, Resources::splat(11))
            .is_err(),
        "reservations rebuilt"
    );
    // Same charge accepted by both.
    assert_eq!(
        r.consume("w3", &Resources::splat(1)),
        l.consume("w3", &Resources::splat(1))
    );

    let mut dup = snap.clone();
    dup.work_items.push(dup.work_items[0].clone());
    assert!(matches!(
        BudgetLedger::rebuild(&dup),
        Err(BudgetError::Duplicate(_))
    ));
    let mut bad_total = snap.clone();
    bad_total
        .work_items
        .iter_mut()
        .find(|w| w.work_item_id == "w2")
        .unwrap()
        .usage = Resources::splat(99);
    assert!(matches!(
        BudgetLedger::rebuild(&bad_total),
        Err(BudgetError::CorruptTotals(_))
    ));
    let mut missing = snap.clone();
    missing
        .work_items
        .iter_mut()
        .find(|w| w.work_item_id == "w3")
        .unwrap()
        .parent_work_item_id = Some("ghost".into());
    assert!(matches!(
        BudgetLedger::rebuild(&missing),
        Err(BudgetError::UnknownAccount(_))
    ));
    // Cycle: the child Mission's parent WorkItem w2 lives inside that child Mission.
    let mut cycle = snap.clone();
    cycle
        .missions
        .iter_mut()
        .find(|m| m.mission_id == "c")
        .unwrap()
        .parent_work_item_id = Some("w2".into());
    let err = BudgetLedger::rebuild(&cycle).unwrap_err();
    assert!(matches!(err, BudgetError::Cycle(_)), "{err:?}");
    assert_eq!(err.code(), WireCode::InternalError);
    let mut over_reserved = snap;
    over_reserved
        .work_items
        .iter_mut()
        .find(|w| w.work_item_id == "w4")
        .unwrap()
        .limit = Resources::splat(41);
    assert!(matches!(
        BudgetLedger::rebuild(&over_reserved),
        Err(BudgetError::CorruptTotals(_))
    ));
}
