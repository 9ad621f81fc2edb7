//! §12 "all or nothing": a consume whose *ancestor* (not the leaf) would overflow leaves no
//! partial charge anywhere — the full snapshot and every account's `remaining` are unchanged —
//! at each WorkItem depth of a 5-level tree (mission → work item → child mission → work item →
//! work item). Missions (depths 0 and 2) cannot be the first account to overflow: every child's
//! limit is reserved against its parent, so a Mission's usage is bounded by its children's limits.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::WireCode;
use missionweaveprotocol_kernel::budget::{AccountId, AccountKind, BudgetError, BudgetLedger};
use missionweaveprotocol_kernel::resources::{Currency, Dimension, Resources};

const ACCOUNTS: [(AccountKind, &str); 5] = [
    (AccountKind::Mission, "m"),
    (AccountKind::WorkItem, "w1"),
    (AccountKind::Mission, "c"),
    (AccountKind::WorkItem, "w2"),
    (AccountKind::WorkItem, "w3"),
];

/// m(100) → w1(60) → c(40) → w2(30) → w3(20); depths 0..=4.
fn tree() -> BudgetLedger {
    let mut l = BudgetLedger::new();
    l.register_mission("m", Currency::parse("USD"), Resources::splat(100))
        .unwrap();
    l.register_work_item("w1", "m", None, Resources::splat(60))
        .unwrap();
    l.register_child_mission("c", "w1", None, Resources::splat(40))
        .unwrap();
    l.register_work_item("w2", "c", None, Resources::splat(30))
        .unwrap();
    l.register_work_item("w3", "c", Some("w2"), Resources::splat(20))
        .unwrap();
    for (depth, (kind, id)) in ACCOUNTS.iter().enumerate() {
        assert_eq!(l.depth(*kind, id).unwrap(), depth);
    }
    l
}

fn remaining_of_all(l: &BudgetLedger) -> Vec<Resources> {
    ACCOUNTS
        .iter()
        .map(|(kind, id)| l.remaining(*kind, id).unwrap())
        .collect()
}

fn usage_of_all(l: &BudgetLedger) -> Vec<Resources> {
    ACCOUNTS
        .iter()
        .map(|(kind, id)| l.usage(*kind, id).unwrap())
        .collect()
}

/// Pre-charges `pre` directly on `overflowing`, then consumes `delta` at the leaf `w3` and
/// expects the exact `Exceeded` error naming `overflowing` and leaves the ledger untouched.
fn assert_ancestor_overflow_leaves_no_trace(
    overflowing: &str,
    pre: Resources,
    delta: Resources,
    dimension: Dimension,
) {
    let mut l = tree();
    if !pre.is_zero() {
        l.consume(overflowing, &pre).unwrap();
    }
    let snapshot = l.snapshot();
    let remaining = remaining_of_all(&l);
    let usage = usage_of_all(&l);
    let error = l.consume("w3", &delta).unwrap_err();
    assert_eq!(
        error,
        BudgetError::Exceeded {
            account: AccountId {
                kind: AccountKind::WorkItem,
                id: overflowing.into()
            },
            dimension
        },
        "overflow at {overflowing}"
    );
    assert_eq!(error.code(), WireCode::BudgetExceeded);
    assert_eq!(l.snapshot(), snapshot, "no partial charge ({overflowing})");
    assert_eq!(remaining_of_all(&l), remaining, "remaining ({overflowing})");
    assert_eq!(usage_of_all(&l), usage, "usage ({overflowing})");
    // A rebuilt ledger agrees: the rejected charge is not hidden in derived totals.
    let rebuilt = BudgetLedger::rebuild(&l.snapshot()).unwrap();
    assert_eq!(remaining_of_all(&rebuilt), remaining);
    // The ledger still works: the largest charge that fits every ancestor is accepted whole.
    let smallest = remaining
        .iter()
        .flat_map(|r| Dimension::ALL.map(|d| r.get(d)))
        .min()
        .unwrap();
    let fits = Resources::splat(smallest);
    if !fits.is_zero() {
        l.consume("w3", &fits).unwrap();
        for (before, after) in usage.iter().zip(usage_of_all(&l)) {
            assert_eq!(after, before.checked_add(&fits).unwrap());
        }
    }
}

#[test]
fn overflow_at_depth_1_work_item_leaves_no_trace() {
    // w1 used 50 of 60; 15 fits w3(20), w2(30), c(40) but not w1.
    assert_ancestor_overflow_leaves_no_trace(
        "w1",
        Resources::splat(50),
        Resources::splat(15),
        Dimension::Financial,
    );
}

#[test]
fn overflow_at_depth_3_work_item_leaves_no_trace() {
    // w2 used 20 of 30; 15 fits w3(20) but not w2, while w1/c/m would still fit.
    assert_ancestor_overflow_leaves_no_trace(
        "w2",
        Resources::splat(20),
        Resources::splat(15),
        Dimension::Financial,
    );
}

#[test]
fn overflow_at_depth_4_leaf_leaves_no_trace() {
    assert_ancestor_overflow_leaves_no_trace(
        "w3",
        Resources::ZERO,
        Resources::splat(21),
        Dimension::Financial,
    );
}

#[test]
fn overflow_in_one_dimension_of_an_ancestor_charges_no_dimension() {
    // Only ToolCalls overflows at w1; every other dimension would fit everywhere.
    assert_ancestor_overflow_leaves_no_trace(
        "w1",
        Resources::splat(1).with(Dimension::ToolCalls, 55),
        Resources::splat(1).with(Dimension::ToolCalls, 10),
        Dimension::ToolCalls,
    );
}

#[test]
fn missions_cannot_overflow_first_because_limits_are_reserved() {
    // Fill every WorkItem to its limit: each Mission's usage stays within its own limit.
    let mut l = tree();
    l.consume("w3", &Resources::splat(20)).unwrap();
    l.consume("w2", &Resources::splat(10)).unwrap();
    l.consume("w1", &Resources::splat(20)).unwrap();
    assert_eq!(
        l.usage(AccountKind::Mission, "c").unwrap(),
        Resources::splat(30)
    );
    assert_eq!(
        l.usage(AccountKind::Mission, "m").unwrap(),
        Resources::splat(50)
    );
    assert!(l.remaining(AccountKind::WorkItem, "w3").unwrap().is_zero());
}
