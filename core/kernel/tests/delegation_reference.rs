//! The reference runtime's shapes read through the kernel's Grant rules (§9.1): who may use and
//! grant a Grant, which WorkItem statuses close it, what a Membership record counts as, the
//! reference's `ResourceBudget.contains`, the six required ceilings and a contract's currency.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol_kernel::capability_version::CapabilityRef;
use missionweaveprotocol_kernel::delegation::{
    CLOSED_WORK_ITEM_STATUSES, DelegationGrant, DelegationViolationKind as K, MembershipRecord,
    MembershipView, budget_contains, check_grant_user, check_grantor, grant_ceilings,
    is_closed_status,
};
use missionweaveprotocol_kernel::resources::{Currency, Dimension, Resources};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

#[test]
fn only_an_agent_uses_or_grants_a_grant() {
    assert!(check_grant_user("agent").is_ok());
    for other in ["human", "service", "Agent", ""] {
        let v = check_grant_user(other).unwrap_err();
        assert_eq!(v.kind, K::Identity, "{other}");
        assert_eq!(v.code().as_str(), "AUTH_FORBIDDEN");
        assert_eq!(v.message, "only an Agent can use a Delegation Grant");
        assert!(!v.kind.invalidates());
    }
    assert!(check_grantor("agent").is_ok());
    let v = check_grantor("human").unwrap_err();
    assert_eq!(v.kind, K::Malformed);
    assert_eq!(v.code().as_str(), "INVALID_COMMAND");
    assert_eq!(v.message, "a Delegation Grant is granted by an Agent");
}

#[test]
fn the_closed_statuses() {
    for status in CLOSED_WORK_ITEM_STATUSES {
        assert!(is_closed_status(status), "{status}");
    }
    for status in [
        "open",
        "active",
        "offered",
        "submitted",
        "blocked",
        "Verified",
        "",
    ] {
        assert!(!is_closed_status(status), "{status}");
    }
}

fn record<'a>(
    principal_type: &'a str,
    roles: &'a [&'a str],
    status: &'a str,
) -> MembershipRecord<'a> {
    MembershipRecord {
        principal_type,
        principal_id: "agent-d",
        group_id: "g",
        status,
        roles,
        epoch: 4,
    }
}

#[test]
fn a_membership_record_as_the_grant_checks_see_it() {
    let view = MembershipView::of_record(
        "agent-d",
        &record("agent", &["worker", "work_delegate"], "active"),
    );
    assert_eq!(
        view,
        Some(MembershipView {
            group_id: "g",
            active: true,
            work_delegate: true,
            epoch: 4
        })
    );
    // Not active, or without the role: still the actor's Membership, flagged.
    let view =
        MembershipView::of_record("agent-d", &record("agent", &["worker"], "provisional")).unwrap();
    assert!(!view.active && !view.work_delegate);
    // Another principal's Membership counts as none.
    assert_eq!(
        MembershipView::of_record("agent-x", &record("agent", &["work_delegate"], "active")),
        None
    );
    assert_eq!(
        MembershipView::of_record("agent-d", &record("human", &["work_delegate"], "active")),
        None
    );
}

#[test]
fn the_references_contains() {
    let have = [Some(10), Some(5), None, Some(0), Some(1), Some(1)];
    assert!(budget_contains(&have, &[None; 6]));
    assert!(budget_contains(
        &have,
        &[Some(10), Some(5), None, Some(0), None, Some(1)]
    ));
    assert!(!budget_contains(
        &have,
        &[Some(11), None, None, None, None, None]
    ));
    assert!(
        !budget_contains(&have, &[None, None, Some(0), None, None, None]),
        "unset here"
    );
    assert!(
        !budget_contains(&have, &[None, None, None, Some(1), None, None]),
        "zero ceiling"
    );
}

#[test]
fn a_grant_sets_all_six_ceilings() {
    assert_eq!(grant_ceilings(&[Some(1); 6]).unwrap(), Resources::splat(1));
    assert_eq!(
        grant_ceilings(&[Some(0), Some(1), Some(2), Some(3), Some(4), Some(5)]).unwrap(),
        Resources([0, 1, 2, 3, 4, 5])
    );
    let v = grant_ceilings(&[Some(1), None, Some(1), Some(1), None, Some(1)]).unwrap_err();
    assert_eq!(v.kind, K::Malformed);
    assert_eq!(
        v.message,
        "a Delegation Grant sets all six ceilings; unset: model_tokens, wall_clock_seconds"
    );
}

#[test]
fn a_contract_budget_without_currency_is_in_the_grants() {
    let grant = DelegationGrant {
        grant_id: "grant-1".into(),
        grantee_agent_id: "agent-d".into(),
        mission_id: "m".into(),
        group_id: "g".into(),
        target_work_item_id: "root".into(),
        allowed_capabilities: vec![CapabilityRef::new("code.write", "1.0.0").unwrap()],
        currency: Currency::parse("USD").unwrap(),
        ceilings: Resources::splat(100),
        max_descendant_depth: 2,
        grantee_membership_epoch: 4,
        coordinator_epoch: 7,
        granted_by: "coord".into(),
        granted_at: UnixMillis(1_000),
        expires_at: UnixMillis(10_000),
    };
    let eur = Currency::parse("EUR");
    let money = Resources::ZERO.with(Dimension::Financial, 5);
    assert_eq!(
        grant.contract_currency(&money, None),
        Currency::parse("USD")
    );
    assert_eq!(
        grant.contract_currency(&money, eur),
        eur,
        "its own currency is kept"
    );
    assert_eq!(
        grant.contract_currency(&Resources::splat(0).with(Dimension::ToolCalls, 3), None),
        None
    );
}
