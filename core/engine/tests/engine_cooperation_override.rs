//! §20 Cooperation Override Grants through the engine: `policy.grant_cooperation_override` by
//! the MissionOwner or Organization policy, and its one-shot use by the exact target Command,
//! lifting exactly the limit it names. Every refusal appends nothing and consumes nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_work_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol::{DescribeError, WireCode};
use missionweaveprotocol_engine::cooperation_override::OVERRIDE_KIND;
use missionweaveprotocol_engine::engine::{Query, QueryKind};
use missionweaveprotocol_engine::ingress::VerifiedCommand;
use missionweaveprotocol_engine::store::{AggregateKey, Store};
use missionweaveprotocol_kernel::cooperation::CooperationLimits;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

const OVERRIDE: &str = "urn:missionweaveprotocol:grant:override-1";
const W3: &str = "urn:missionweaveprotocol:work:audit";
const EXPIRES: &str = "2026-07-15T10:30:00Z";

/// One queued WorkItem allowed per Group.
fn limited(f: &Fixture) -> TestEngine {
    let engine = f.active().with_cooperation_limits(CooperationLimits {
        maximum_queued_work_items: Some(1),
        maximum_active_work_items: None,
        maximum_proposal_rate_per_minute: None,
        ..CooperationLimits::default()
    });
    f.ok(&engine, &f.authorize(W1, &[]), NOW);
    engine
}

fn override_payload(
    grant: &str,
    policy: &str,
    beneficiary: &str,
    kind: &str,
    action: &str,
) -> String {
    format!(
        r#"{{"grantId":"{grant}","policyName":"{policy}",
        "beneficiary":{{"type":"agent","id":"{beneficiary}"}},"targetCommandKind":"{kind}",
        "targetActionId":"{action}","reason":"month-end backlog","expiresAt":"{EXPIRES}"}}"#
    )
}

fn issue(f: &Fixture, actor: &str, payload: &str) -> VerifiedCommand {
    f.command("policy.grant_cooperation_override", actor, "", payload)
}

/// The Coordinator's `work.authorize` of `item` under Action ID `action`, citing `grant`.
fn authorize_citing(f: &Fixture, item: &str, action: &str, grant: Option<&str>) -> VerifiedCommand {
    let extra = match grant {
        Some(g) => format!(r#""coordinatorEpoch": 1, "cooperationOverrideGrantId": "{g}""#),
        None => r#""coordinatorEpoch": 1"#.to_owned(),
    };
    f.verified(
        COORDINATOR,
        &f.unsigned(
            "work.authorize",
            COORDINATOR,
            action,
            &extra,
            &format!(
                r#"{{"workItemId":"{item}","conversationId":"{CONVERSATION}","contract":{}}}"#,
                contract(&[])
            ),
        ),
    )
}

fn stored(engine: &TestEngine, id: &str) -> Option<(u64, Value)> {
    engine
        .store()
        .aggregate(&AggregateKey::new(OVERRIDE_KIND, id))
        .unwrap()
        .map(|a| (a.revision, json::parse(&a.value).unwrap()))
}

fn consumed(engine: &TestEngine, id: &str) -> bool {
    stored(engine, id).unwrap().1.get("consumed").is_some()
}

#[test]
fn the_mission_owner_or_organization_policy_issues_a_grant() {
    let f = fixture();
    let engine = f.active();
    let payload = override_payload(
        OVERRIDE,
        "queued_work_items",
        COORDINATOR,
        "work.authorize",
        "urn:missionweaveprotocol:action:t1",
    );
    let events = f.ok(&engine, &issue(&f, OWNER, &payload), NOW);
    assert_eq!(
        text(&events[0], "/kind"),
        "policy.cooperation_override.granted"
    );
    let grant = events[0].pointer("/payload/grant").unwrap();
    for (pointer, expected) in [
        ("/missionId", MISSION),
        ("/groupId", GROUP),
        ("/policyName", "queued_work_items"),
        ("/beneficiary/id", COORDINATOR),
        ("/targetCommandKind", "work.authorize"),
        ("/targetActionId", "urn:missionweaveprotocol:action:t1"),
        ("/reason", "month-end backlog"),
        ("/approver/id", OWNER),
        ("/grantedAt", "2026-07-15T09:30:00.000Z"),
        ("/expiresAt", EXPIRES),
    ] {
        assert_eq!(text(grant, pointer), expected, "{pointer}");
    }
    let (revision, value) = stored(&engine, OVERRIDE).unwrap();
    assert_eq!(revision, 1);
    assert_eq!(value.get("grant"), Some(grant));
    assert!(!consumed(&engine, OVERRIDE));
    // An Organization policy service may issue one too.
    let by_service = override_payload(
        "urn:missionweaveprotocol:grant:override-2",
        "proposal_rate",
        COORDINATOR,
        "work.propose",
        "urn:missionweaveprotocol:action:t2",
    );
    f.ok(&engine, &issue(&f, SERVICE, &by_service), NOW);
}

#[test]
fn nobody_else_issues_a_grant() {
    let f = fixture();
    let engine = f.active();
    let payload = override_payload(
        OVERRIDE,
        "queued_work_items",
        COORDINATOR,
        "work.authorize",
        "urn:missionweaveprotocol:action:t1",
    );
    for actor in [OTHER_HUMAN, COORDINATOR] {
        let e = f.refused(
            &engine,
            &issue(&f, actor, &payload),
            NOW,
            WireCode::AuthForbidden,
        );
        assert_eq!(e.reason(), "not_owner_or_policy");
    }
    assert!(stored(&engine, OVERRIDE).is_none());
}

#[test]
fn malformed_grants_are_refused() {
    let f = fixture();
    let engine = f.active();
    let good = override_payload(
        OVERRIDE,
        "queued_work_items",
        COORDINATOR,
        "work.authorize",
        "urn:missionweaveprotocol:action:t1",
    );
    let unknown = good.replace("queued_work_items", "coffee_breaks");
    let e = f.refused(
        &engine,
        &issue(&f, OWNER, &unknown),
        NOW,
        WireCode::InvalidCommand,
    );
    assert_eq!(e.reason(), "unknown_policy");
    let past = good.replace(EXPIRES, NOW_TEXT);
    let e = f.refused(
        &engine,
        &issue(&f, OWNER, &past),
        NOW,
        WireCode::InvalidCommand,
    );
    assert_eq!(e.reason(), "expired_on_issue");
    let no_reason = good.replace(r#""reason":"month-end backlog","#, "");
    f.refused(
        &engine,
        &issue(&f, OWNER, &no_reason),
        NOW,
        WireCode::InvalidCommand,
    );
    f.ok(&engine, &issue(&f, OWNER, &good), NOW);
    f.refused(
        &engine,
        &issue(&f, OWNER, &good),
        NOW,
        WireCode::InvalidStateTransition,
    );
}

#[test]
fn the_exact_target_command_is_accepted_once_and_consumes_the_grant() {
    let f = fixture();
    let engine = limited(&f);
    let action = "urn:missionweaveprotocol:action:target-1";
    // Without a grant the limit holds.
    f.refused(
        &engine,
        &authorize_citing(&f, W2, action, None),
        NOW,
        WireCode::RateLimited,
    );
    f.ok(
        &engine,
        &issue(
            &f,
            OWNER,
            &override_payload(
                OVERRIDE,
                "queued_work_items",
                COORDINATOR,
                "work.authorize",
                action,
            ),
        ),
        NOW,
    );
    let target = authorize_citing(&f, W2, action, Some(OVERRIDE));
    let events = f.ok(&engine, &target, NOW);
    assert_eq!(text(&events[0], "/kind"), "work.authorized");
    assert_eq!(
        text(&events[0], "/payload/cooperationOverride/grantId"),
        OVERRIDE
    );
    assert_eq!(
        text(&events[0], "/payload/cooperationOverride/policyName"),
        "queued_work_items"
    );
    let (revision, value) = stored(&engine, OVERRIDE).unwrap();
    assert_eq!(revision, 2);
    assert_eq!(text(&value, "/consumed/actionId"), action);
    let answer = engine
        .query(
            &Query::new(QueryKind::CooperationOverrideGrant, OVERRIDE),
            NOW,
        )
        .unwrap()
        .unwrap();
    assert_eq!(answer, value);
    assert_eq!(item_state(&engine, W2), "open");
    // The idempotent retry returns the prior Event.
    let again = engine.perform(&target, NOW).unwrap();
    assert!(again.duplicate);
    // Any other use fails: the grant is one-shot.
    let reuse = authorize_citing(
        &f,
        W3,
        "urn:missionweaveprotocol:action:target-2",
        Some(OVERRIDE),
    );
    let e = f.refused(&engine, &reuse, NOW, WireCode::AuthForbidden);
    assert_eq!(e.reason(), "override_grant_consumed");
}

#[test]
fn a_grant_binds_actor_kind_action_and_group() {
    let f = fixture();
    let engine = limited(&f);
    let action = "urn:missionweaveprotocol:action:target-1";
    // Bound to the Worker, not the Coordinator.
    f.ok(
        &engine,
        &issue(
            &f,
            OWNER,
            &override_payload(
                OVERRIDE,
                "queued_work_items",
                WORKER,
                "work.authorize",
                action,
            ),
        ),
        NOW,
    );
    let e = f.refused(
        &engine,
        &authorize_citing(&f, W2, action, Some(OVERRIDE)),
        NOW,
        WireCode::AuthForbidden,
    );
    assert_eq!(e.reason(), "override_grant_mismatch");
    // Bound to another kind.
    let g2 = "urn:missionweaveprotocol:grant:override-2";
    f.ok(
        &engine,
        &issue(
            &f,
            OWNER,
            &override_payload(g2, "queued_work_items", COORDINATOR, "work.offer", action),
        ),
        NOW,
    );
    f.refused(
        &engine,
        &authorize_citing(&f, W2, action, Some(g2)),
        NOW,
        WireCode::AuthForbidden,
    );
    // Bound to another Action ID.
    let g3 = "urn:missionweaveprotocol:grant:override-3";
    f.ok(
        &engine,
        &issue(
            &f,
            OWNER,
            &override_payload(
                g3,
                "queued_work_items",
                COORDINATOR,
                "work.authorize",
                "urn:missionweaveprotocol:action:other",
            ),
        ),
        NOW,
    );
    f.refused(
        &engine,
        &authorize_citing(&f, W2, action, Some(g3)),
        NOW,
        WireCode::AuthForbidden,
    );
    // A forged grant ID.
    let e = f.refused(
        &engine,
        &authorize_citing(
            &f,
            W2,
            action,
            Some("urn:missionweaveprotocol:grant:forged"),
        ),
        NOW,
        WireCode::AuthForbidden,
    );
    assert_eq!(e.reason(), "unknown_override_grant");
    for g in [OVERRIDE, g2, g3] {
        assert!(!consumed(&engine, g), "{g} stays unconsumed");
    }
    assert_eq!(item_state(&engine, W1), "open");
}

#[test]
fn a_grant_lifts_exactly_the_policy_it_names() {
    let f = fixture();
    let engine = limited(&f);
    let action = "urn:missionweaveprotocol:action:target-1";
    f.ok(
        &engine,
        &issue(
            &f,
            OWNER,
            &override_payload(
                OVERRIDE,
                "proposal_rate",
                COORDINATOR,
                "work.authorize",
                action,
            ),
        ),
        NOW,
    );
    let e = f.refused(
        &engine,
        &authorize_citing(&f, W2, action, Some(OVERRIDE)),
        NOW,
        WireCode::RateLimited,
    );
    assert_eq!(e.reason(), "queued_work_items");
    assert!(!consumed(&engine, OVERRIDE));
}

#[test]
fn an_expired_grant_is_refused_and_stays_unconsumed() {
    let f = fixture();
    let engine = limited(&f);
    let action = "urn:missionweaveprotocol:action:target-1";
    f.ok(
        &engine,
        &issue(
            &f,
            OWNER,
            &override_payload(
                OVERRIDE,
                "queued_work_items",
                COORDINATOR,
                "work.authorize",
                action,
            ),
        ),
        NOW,
    );
    let late = UnixMillis(NOW.0 + 3_600_000);
    let target = authorize_citing(&f, W2, action, Some(OVERRIDE));
    // The Coordinator lease lapsed too; renew it so only the grant's expiry decides.
    f.ok(
        &engine,
        &f.by_coordinator("mission.renew_coordinator", 1, r#"{"leaseSeconds": 86400}"#),
        UnixMillis(NOW.0 + 1),
    );
    let e = f.refused(&engine, &target, late, WireCode::AuthForbidden);
    assert_eq!(e.reason(), "override_grant_expired");
    assert!(!consumed(&engine, OVERRIDE));
    // Before expiry the same signed Command applies (a refusal leaves no receipt, §19).
    f.ok(&engine, &target, UnixMillis(late.0 - 1));
}

#[test]
fn the_organization_delegation_depth_is_lifted_once() {
    let f = fixture();
    let engine = f.active();
    f.ok(
        &engine,
        &f.command(
            "membership.change",
            OWNER,
            "",
            &format!(r#"{{"member":{{"type":"agent","id":"{WORKER}"}},"role":"work_delegate","scopes":["work:delegate"]}}"#),
        ),
        NOW,
    );
    f.ok(&engine, &f.authorize(W1, &[]), NOW);
    let action = "urn:missionweaveprotocol:action:deep-grant";
    let grant = |extra: &str| {
        f.verified(
            COORDINATOR,
            &f.unsigned(
                "membership.grant_delegation",
                COORDINATOR,
                action,
                &format!(r#""coordinatorEpoch": 1{extra}"#),
                &format!(
                    r#"{{"grantId":"urn:missionweaveprotocol:grant:deep","granteeAgentId":"{WORKER}","targetWorkItemId":"{W1}",
                    "allowedCapabilities":[{{"id":"text.summarise","version":"1.0.0"}}],
                    "budget":{{"currency":"EUR","financialLimit":0,"modelTokenLimit":0,"toolCallLimit":5,
                      "computeSecondsLimit":0,"wallClockSecondsLimit":0,"externalSideEffectLimit":0}},
                    "maxDescendantDepth":5,"expiresAt":"{EXPIRES}"}}"#
                ),
            ),
        )
    };
    let e = f.refused(&engine, &grant(""), NOW, WireCode::RateLimited);
    assert_eq!(e.reason(), "delegation_depth");
    f.ok(
        &engine,
        &issue(
            &f,
            OWNER,
            &override_payload(
                OVERRIDE,
                "delegation_depth",
                COORDINATOR,
                "membership.grant_delegation",
                action,
            ),
        ),
        NOW,
    );
    let events = f.ok(
        &engine,
        &grant(&format!(r#", "cooperationOverrideGrantId": "{OVERRIDE}""#)),
        NOW,
    );
    assert_eq!(text(&events[0], "/kind"), "membership.delegation.granted");
    assert!(consumed(&engine, OVERRIDE));
}
