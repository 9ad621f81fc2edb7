//! Delegation Grants (§9.1, digest §2.12).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;

use missionweaveprotocol_kernel::capability_version::CapabilityRef;
use missionweaveprotocol_kernel::delegation::{
    DelegatedWork, DelegationAuthority, DelegationContext, DelegationGrant,
    DelegationViolationKind as K, MembershipView, WorkItemNode, WorkItemTree,
};
use missionweaveprotocol_kernel::resources::{Currency, Dimension, Resources};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

#[derive(Default)]
struct Tree(HashMap<String, (String, Option<String>, bool)>);

impl Tree {
    fn add(&mut self, id: &str, parent: Option<&str>) {
        self.0
            .insert(id.into(), ("m".into(), parent.map(Into::into), false));
    }
}

impl WorkItemTree for Tree {
    fn node(&self, id: &str) -> Option<WorkItemNode<'_>> {
        self.0.get(id).map(|(m, p, closed)| WorkItemNode {
            mission_id: m,
            parent_work_item_id: p.as_deref(),
            closed: *closed,
        })
    }
}

fn cap(id: &str, v: &str) -> CapabilityRef {
    CapabilityRef::new(id, v).unwrap()
}

fn grant() -> DelegationGrant {
    DelegationGrant {
        grant_id: "grant-1".into(),
        grantee_agent_id: "agent-d".into(),
        mission_id: "m".into(),
        group_id: "g".into(),
        target_work_item_id: "root".into(),
        allowed_capabilities: vec![cap("code.write", "2.1.0")],
        currency: Currency::parse("USD").unwrap(),
        ceilings: Resources::splat(100),
        max_descendant_depth: 2,
        grantee_membership_epoch: 4,
        coordinator_epoch: 7,
        granted_by: "coord".into(),
        granted_at: UnixMillis(1_000),
        expires_at: UnixMillis(10_000),
    }
}

fn ctx() -> DelegationContext<'static> {
    DelegationContext {
        actor_agent_id: "agent-d",
        membership: Some(MembershipView {
            group_id: "g",
            active: true,
            work_delegate: true,
            epoch: 4,
        }),
        mission_id: "m",
        group_id: "g",
        coordinator_epoch: 7,
        coordinator_agent_id: "coord",
        organization_max_depth: 5,
        now: UnixMillis(2_000),
    }
}

fn tree() -> Tree {
    let mut t = Tree::default();
    t.add("root", None);
    t.add("child", Some("root"));
    t.add("grandchild", Some("child"));
    t.add("outside", None);
    t
}

const CAPS: &[CapabilityRef] = &[];

fn work(budget: u64) -> DelegatedWork<'static> {
    DelegatedWork {
        required_capabilities: CAPS,
        budget: Resources::splat(budget),
        currency: Currency::parse("USD"),
    }
}

#[test]
fn scope_depth_and_cumulative_budget() {
    let t = tree();
    let mut a = DelegationAuthority::new(grant()).unwrap();
    assert_eq!(a.authorize_offer(&ctx(), &t, "root", &work(30)), Ok(0));
    assert_eq!(
        a.authorize_offer(&ctx(), &t, "root", &work(30)),
        Ok(0),
        "re-offer does not charge twice"
    );
    assert_eq!(
        a.authorize_offer(&ctx(), &t, "grandchild", &work(30)),
        Ok(2)
    );
    assert_eq!(a.charged(), Resources::splat(60));
    assert_eq!(
        a.authorize_offer(&ctx(), &t, "outside", &work(1))
            .unwrap_err()
            .kind,
        K::Scope
    );
    assert_eq!(
        a.authorize_descendant(&ctx(), &t, "new1", "child", &work(30)),
        Ok(2)
    );
    let v = a
        .authorize_descendant(&ctx(), &t, "new2", "grandchild", &work(1))
        .unwrap_err();
    assert_eq!(v.kind, K::Depth, "depth 3 > Grant maximum 2");
    assert_eq!(
        a.authorize_descendant(&ctx(), &t, "new3", "outside", &work(1))
            .unwrap_err()
            .kind,
        K::Scope
    );
    assert_eq!(
        a.authorize_descendant(&ctx(), &t, "child", "root", &work(1))
            .unwrap_err()
            .kind,
        K::Scope,
        "already exists"
    );
    let v = a
        .authorize_descendant(&ctx(), &t, "new4", "root", &work(11))
        .unwrap_err();
    assert_eq!((v.kind, v.code().as_str()), (K::Budget, "BUDGET_EXCEEDED"));
    assert_eq!(
        a.charged(),
        Resources::splat(90),
        "a refused use charges nothing"
    );
    let one_dim = DelegatedWork {
        budget: Resources::splat(1).with(Dimension::ToolCalls, 11),
        ..work(0)
    };
    assert_eq!(
        a.authorize_descendant(&ctx(), &t, "new5", "root", &one_dim)
            .unwrap_err()
            .dimension,
        Some(Dimension::ToolCalls)
    );
    let eur = DelegatedWork {
        currency: Currency::parse("EUR"),
        ..work(1)
    };
    assert_eq!(
        a.authorize_descendant(&ctx(), &t, "new6", "root", &eur)
            .unwrap_err()
            .kind,
        K::Budget
    );
    let org = DelegationContext {
        organization_max_depth: 0,
        ..ctx()
    };
    assert_eq!(
        a.authorize_descendant(&org, &t, "new7", "root", &work(1))
            .unwrap_err()
            .kind,
        K::Depth
    );
}

#[test]
fn capabilities_need_minimum_versions() {
    let t = tree();
    let mut a = DelegationAuthority::new(grant()).unwrap();
    for (caps, ok) in [
        (vec![cap("code.write", "2.1.0")], true),
        (vec![cap("code.write", "3.0.0")], true),
        (vec![cap("code.write", "2.1.0-rc.1")], false),
        (vec![cap("code.write", "2.0.9")], false),
        (vec![cap("code.review", "9.0.0")], false),
    ] {
        let w = DelegatedWork {
            required_capabilities: &caps,
            ..work(1)
        };
        let r = a.authorize_offer(&ctx(), &t, "child", &w);
        assert_eq!(r.is_ok(), ok, "{caps:?}");
        if !ok {
            assert_eq!(r.unwrap_err().kind, K::Capability);
        }
    }
}

#[test]
fn identity_and_membership_checks() {
    let t = tree();
    let mut a = DelegationAuthority::new(grant()).unwrap();
    let other = DelegationContext {
        actor_agent_id: "agent-x",
        ..ctx()
    };
    assert_eq!(a.check_use(&other, &t).unwrap_err().kind, K::Identity);
    assert!(
        a.invalidated().is_none(),
        "someone else's attempt does not end the Grant"
    );
    let wrong_group = DelegationContext {
        group_id: "g2",
        ..ctx()
    };
    assert_eq!(a.check_use(&wrong_group, &t).unwrap_err().kind, K::Scope);
    let early = DelegationContext {
        now: UnixMillis(999),
        ..ctx()
    };
    assert_eq!(a.check_use(&early, &t).unwrap_err().kind, K::NotYetValid);
    assert!(a.check_use(&ctx(), &t).is_ok());
}

#[test]
fn every_invalidation_latches() {
    let cases: Vec<(DelegationContext<'static>, Option<bool>, K, &str)> = vec![
        (
            DelegationContext {
                membership: None,
                ..ctx()
            },
            None,
            K::Membership,
            "MEMBERSHIP_REQUIRED",
        ),
        (
            DelegationContext {
                membership: Some(MembershipView {
                    group_id: "g",
                    active: false,
                    work_delegate: true,
                    epoch: 4,
                }),
                ..ctx()
            },
            None,
            K::Membership,
            "MEMBERSHIP_REQUIRED",
        ),
        (
            DelegationContext {
                membership: Some(MembershipView {
                    group_id: "g",
                    active: true,
                    work_delegate: false,
                    epoch: 4,
                }),
                ..ctx()
            },
            None,
            K::Membership,
            "MEMBERSHIP_REQUIRED",
        ),
        (
            DelegationContext {
                membership: Some(MembershipView {
                    group_id: "g",
                    active: true,
                    work_delegate: true,
                    epoch: 5,
                }),
                ..ctx()
            },
            None,
            K::MembershipEpoch,
            "MEMBERSHIP_STALE",
        ),
        (
            DelegationContext {
                coordinator_epoch: 8,
                ..ctx()
            },
            None,
            K::CoordinatorEpoch,
            "AUTH_STALE_COORDINATOR",
        ),
        (
            DelegationContext {
                coordinator_agent_id: "coord2",
                ..ctx()
            },
            None,
            K::Issuer,
            "AUTH_STALE_COORDINATOR",
        ),
        (
            DelegationContext {
                now: UnixMillis(10_000),
                ..ctx()
            },
            None,
            K::Expired,
            "AUTH_FORBIDDEN",
        ),
        (ctx(), Some(false), K::TargetMissing, "AUTH_FORBIDDEN"),
        (ctx(), Some(true), K::TargetClosed, "AUTH_FORBIDDEN"),
    ];
    for (bad, target, kind, code) in cases {
        let mut t = tree();
        match target {
            Some(false) => {
                t.0.remove("root");
            }
            Some(true) => t.0.get_mut("root").unwrap().2 = true,
            None => {}
        }
        let mut a = DelegationAuthority::new(grant()).unwrap();
        let v = a.check_use(&bad, &t).unwrap_err();
        assert_eq!((v.kind, v.code().as_str()), (kind, code));
        // Even a fully valid context cannot use it any more.
        assert_eq!(
            a.check_use(&ctx(), &tree()).unwrap_err().kind,
            kind,
            "{kind:?} must latch"
        );
        assert_eq!(
            kind.as_str(),
            format!("{kind:?}").chars().fold(String::new(), |mut s, c| {
                if c.is_uppercase() && !s.is_empty() {
                    s.push('_');
                }
                s.push(c.to_ascii_lowercase());
                s
            })
        );
    }
}

#[test]
fn malformed_grants_and_restoration() {
    let mut g = grant();
    g.allowed_capabilities.clear();
    assert_eq!(DelegationAuthority::new(g).unwrap_err().kind, K::Malformed);
    let mut g = grant();
    g.expires_at = g.granted_at;
    assert!(DelegationAuthority::new(g).is_err());
    let mut g = grant();
    g.coordinator_epoch = 0;
    assert!(DelegationAuthority::new(g).is_err());
    let mut a = DelegationAuthority::new(grant()).unwrap();
    a.restore_attribution("child", &Resources::splat(95))
        .unwrap();
    assert_eq!(a.remaining(), Resources::splat(5));
    assert_eq!(
        a.authorize_offer(&ctx(), &tree(), "child", &work(95)),
        Ok(1),
        "already attributed"
    );
    assert_eq!(
        a.authorize_offer(&ctx(), &tree(), "grandchild", &work(6))
            .unwrap_err()
            .kind,
        K::Budget
    );
}
