//! §9.1 Delegation Grants through the engine: `membership.grant_delegation` by the current
//! Coordinator, and `work.authorize` / `work.offer` by the grantee citing the Grant, each rule
//! with an accepted and a refused Command (refusals append nothing and charge nothing).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_work_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol::{DescribeError, WireCode};
use missionweaveprotocol_engine::delegation::{GRANT_KIND, LINK_KIND};
use missionweaveprotocol_engine::engine::{Query, QueryKind};
use missionweaveprotocol_engine::ingress::VerifiedCommand;
use missionweaveprotocol_engine::store::{AggregateKey, Store};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The grantee: the fixture's second Agent.
const DELEGATE: &str = WORKER;
const GRANT: &str = "urn:missionweaveprotocol:grant:g1";
const W3: &str = "urn:missionweaveprotocol:work:audit";
const W4: &str = "urn:missionweaveprotocol:work:archive";
/// 2026-07-15T10:30:00Z: the Grants' expiry (one hour after `NOW`).
const EXPIRES: &str = "2026-07-15T10:30:00Z";

fn grant_payload(grant: &str, target: &str, tool_calls: u64, depth: u64, extra: &str) -> String {
    format!(
        r#"{{"grantId":"{grant}","granteeAgentId":"{DELEGATE}","targetWorkItemId":"{target}",
        "allowedCapabilities":[{{"id":"text.summarise","version":"1.0.0"}}],
        "budget":{{"currency":"EUR","financialLimit":0,"modelTokenLimit":0,"toolCallLimit":{tool_calls},
          "computeSecondsLimit":0,"wallClockSecondsLimit":0,"externalSideEffectLimit":0}},
        "maxDescendantDepth":{depth},"expiresAt":"{EXPIRES}"{extra}}}"#
    )
}

fn grant_command(f: &Fixture, payload: &str) -> VerifiedCommand {
    f.by_coordinator("membership.grant_delegation", 1, payload)
}

/// `membership.change` making `agent` an active member with `role` (epoch + 1 if it was one).
fn make_member(f: &Fixture, engine: &TestEngine, agent: &str, role: &str) {
    let payload = format!(
        r#"{{"member":{{"type":"agent","id":"{agent}"}},"role":"{role}","scopes":["work:delegate"]}}"#
    );
    f.ok(
        engine,
        &f.command("membership.change", OWNER, "", &payload),
        NOW,
    );
}

/// An active Mission, `DELEGATE` a `work_delegate`, `W1` authorized by the Coordinator, and
/// Grant `GRANT` over `W1` (25 tool calls, depth `depth`).
fn granted(f: &Fixture, depth: u64) -> TestEngine {
    let engine = f.active();
    make_member(f, &engine, DELEGATE, "work_delegate");
    f.ok(&engine, &f.authorize(W1, &[]), NOW);
    f.ok(
        &engine,
        &grant_command(f, &grant_payload(GRANT, W1, 25, depth, "")),
        NOW,
    );
    engine
}

/// `contract(&[])` with `from` replaced by `to`.
fn contract_with(from: &str, to: &str) -> String {
    let c = contract(&[]);
    assert!(c.contains(from), "{from} not in the contract");
    c.replace(from, to)
}

/// A delegated `work.authorize` of `item` under `parent` by `actor`, citing `grant`.
fn delegated_authorize(
    f: &Fixture,
    actor: &str,
    item: &str,
    parent: Option<&str>,
    grant: &str,
    contract: &str,
) -> VerifiedCommand {
    let parent = parent.map_or(String::new(), |p| format!(r#","parentWorkItemId":"{p}""#));
    f.command(
        "work.authorize",
        actor,
        "",
        &format!(
            r#"{{"workItemId":"{item}","conversationId":"{CONVERSATION}","contract":{contract},"delegationGrantId":"{grant}"{parent}}}"#
        ),
    )
}

fn delegated_offer(f: &Fixture, actor: &str, item: &str, grant: &str) -> VerifiedCommand {
    f.command(
        "work.offer",
        actor,
        "",
        &format!(
            r#"{{"workItemId":"{item}","candidates":[{{"offerId":"urn:missionweaveprotocol:offer:d-{}","agentId":"{COORDINATOR}","agentCardVersion":1}}],"selectionBasis":{},"delegationGrantId":"{grant}"}}"#,
            f.action().rsplit(':').next().unwrap(),
            selection_basis()
        ),
    )
}

fn stored_value(engine: &TestEngine, kind: &str, id: &str) -> Option<(u64, Value)> {
    engine
        .store()
        .aggregate(&AggregateKey::new(kind, id))
        .unwrap()
        .map(|a| (a.revision, json::parse(&a.value).unwrap()))
}

/// The WorkItems charged to `GRANT`.
fn uses(engine: &TestEngine) -> Vec<String> {
    let (_, value) = stored_value(engine, GRANT_KIND, GRANT).unwrap();
    value
        .get("uses")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .map(|u| {
            u.get("workItemId")
                .and_then(Value::as_str)
                .unwrap()
                .to_owned()
        })
        .collect()
}

fn reason(e: &dyn DescribeError) -> String {
    e.reason().to_owned()
}

// ---- issuance ----------------------------------------------------------------------------

#[test]
fn the_current_coordinator_issues_a_grant_recording_what_section_9_1_binds() {
    let f = fixture();
    let engine = f.active();
    make_member(&f, &engine, DELEGATE, "work_delegate");
    f.ok(&engine, &f.authorize(W1, &[]), NOW);
    let events = f.ok(
        &engine,
        &grant_command(&f, &grant_payload(GRANT, W1, 25, 2, "")),
        NOW,
    );
    assert_eq!(events.len(), 1);
    assert_eq!(text(&events[0], "/kind"), "membership.delegation.granted");
    assert_eq!(text(&events[0], "/workItemId"), W1);
    let grant = events[0].pointer("/payload/grant").unwrap();
    assert_eq!(text(grant, "/missionId"), MISSION);
    assert_eq!(text(grant, "/groupId"), GROUP);
    assert_eq!(text(grant, "/granteeAgentId"), DELEGATE);
    assert_eq!(text(grant, "/grantedBy/id"), COORDINATOR);
    assert_eq!(text(grant, "/grantedAt"), "2026-07-15T09:30:00.000Z");
    assert_eq!(
        grant
            .pointer("/granteeMembershipEpoch")
            .unwrap()
            .as_number()
            .unwrap()
            .as_u64(),
        Some(1)
    );
    assert_eq!(
        grant
            .pointer("/coordinatorEpoch")
            .unwrap()
            .as_number()
            .unwrap()
            .as_u64(),
        Some(1)
    );
    let (revision, stored) = stored_value(&engine, GRANT_KIND, GRANT).unwrap();
    assert_eq!(revision, 1);
    assert_eq!(stored.get("grant"), Some(grant));
    // QueryKind DELEGATION_GRANT answers the stored Grant; an unknown one is absent.
    let answer = engine
        .query(&Query::new(QueryKind::DelegationGrant, GRANT), NOW)
        .unwrap()
        .unwrap();
    assert_eq!(answer.get("grant"), Some(grant));
    assert!(
        engine
            .query(
                &Query::new(
                    QueryKind::DelegationGrant,
                    "urn:missionweaveprotocol:grant:none"
                ),
                NOW
            )
            .unwrap()
            .is_none()
    );
    assert_eq!(
        events[0]
            .pointer("/aggregateRevision")
            .unwrap()
            .as_number()
            .unwrap()
            .as_u64(),
        Some(1)
    );
}

#[test]
fn only_the_current_coordinator_issues_a_grant() {
    let f = fixture();
    let engine = f.active();
    make_member(&f, &engine, DELEGATE, "work_delegate");
    f.ok(&engine, &f.authorize(W1, &[]), NOW);
    let payload = grant_payload(GRANT, W1, 25, 2, "");
    // Another Agent carrying the current epoch.
    let by_other = f.command(
        "membership.grant_delegation",
        DELEGATE,
        r#""coordinatorEpoch": 1"#,
        &payload,
    );
    let e = f.refused(&engine, &by_other, NOW, WireCode::AuthForbidden);
    assert_eq!(reason(&e), "not_current_coordinator");
    // The Coordinator with a stale (future) epoch.
    f.refused(
        &engine,
        &f.by_coordinator("membership.grant_delegation", 2, &payload),
        NOW,
        WireCode::AuthStaleCoordinator,
    );
    assert!(stored_value(&engine, GRANT_KIND, GRANT).is_none());
}

#[test]
fn the_grantee_must_hold_an_active_work_delegate_membership() {
    let f = fixture();
    let engine = f.active();
    f.ok(&engine, &f.authorize(W1, &[]), NOW);
    let payload = grant_payload(GRANT, W1, 25, 2, "");
    // No Membership at all.
    f.refused(
        &engine,
        &grant_command(&f, &payload),
        NOW,
        WireCode::MembershipRequired,
    );
    // A `worker`, not a `work_delegate`: the role alone decides eligibility (§9.1).
    make_member(&f, &engine, DELEGATE, "worker");
    let e = f.refused(
        &engine,
        &grant_command(&f, &payload),
        NOW,
        WireCode::MembershipRequired,
    );
    assert_eq!(reason(&e), "delegation_membership");
    // As a `work_delegate` (epoch 2) the same Grant is issued, bound to epoch 2.
    make_member(&f, &engine, DELEGATE, "work_delegate");
    let events = f.ok(&engine, &grant_command(&f, &payload), NOW);
    assert_eq!(
        events[0]
            .pointer("/payload/grant/granteeMembershipEpoch")
            .unwrap()
            .as_number()
            .unwrap()
            .as_u64(),
        Some(2)
    );
}

#[test]
fn the_target_must_exist_and_be_live_at_issuance() {
    let f = fixture();
    let engine = f.active();
    make_member(&f, &engine, DELEGATE, "work_delegate");
    let e = f.refused(
        &engine,
        &grant_command(&f, &grant_payload(GRANT, W1, 25, 2, "")),
        NOW,
        WireCode::AuthForbidden,
    );
    assert_eq!(reason(&e), "delegation_target_missing");
    f.ok(&engine, &f.authorize(W1, &[]), NOW);
    f.ok(
        &engine,
        &f.command(
            "work.cancel",
            OWNER,
            "",
            &format!(r#"{{"workItemId":"{W1}","reason":"not needed"}}"#),
        ),
        NOW,
    );
    let e = f.refused(
        &engine,
        &grant_command(&f, &grant_payload(GRANT, W1, 25, 2, "")),
        NOW,
        WireCode::AuthForbidden,
    );
    assert_eq!(reason(&e), "delegation_target_closed");
    f.ok(&engine, &f.authorize(W2, &[]), NOW);
    f.ok(
        &engine,
        &grant_command(&f, &grant_payload(GRANT, W2, 25, 2, "")),
        NOW,
    );
}

#[test]
fn malformed_grants_are_refused_with_their_codes() {
    let f = fixture();
    let engine = f.active();
    make_member(&f, &engine, DELEGATE, "work_delegate");
    f.ok(&engine, &f.authorize(W1, &[]), NOW);
    // §9.1: ceilings for all six dimensions.
    let five =
        grant_payload(GRANT, W1, 25, 2, "").replace(r#""externalSideEffectLimit":0"#, r#""x":0"#);
    let five = five.replace(r#","x":0"#, "");
    f.refused(
        &engine,
        &grant_command(&f, &five),
        NOW,
        WireCode::SchemaValidationFailed,
    );
    // No allowed capability.
    let none = grant_payload(GRANT, W1, 25, 2, "")
        .replace(r#"[{"id":"text.summarise","version":"1.0.0"}]"#, "[]");
    f.refused(
        &engine,
        &grant_command(&f, &none),
        NOW,
        WireCode::SchemaValidationFailed,
    );
    // Expiry not after the grant time.
    let expired = grant_payload(GRANT, W1, 25, 2, "").replace(EXPIRES, NOW_TEXT);
    let e = f.refused(
        &engine,
        &grant_command(&f, &expired),
        NOW,
        WireCode::InvalidCommand,
    );
    assert_eq!(reason(&e), "malformed_grant");
    // Missing member.
    let missing = grant_payload(GRANT, W1, 25, 2, "").replace(r#""maxDescendantDepth":2,"#, "");
    f.refused(
        &engine,
        &grant_command(&f, &missing),
        NOW,
        WireCode::InvalidCommand,
    );
    assert!(stored_value(&engine, GRANT_KIND, GRANT).is_none());
    // The well-formed Grant; the same Grant ID again is refused, and `expectedRevision`.
    f.ok(
        &engine,
        &grant_command(&f, &grant_payload(GRANT, W1, 25, 2, "")),
        NOW,
    );
    f.refused(
        &engine,
        &grant_command(&f, &grant_payload(GRANT, W1, 25, 2, "")),
        NOW,
        WireCode::InvalidStateTransition,
    );
    let stale = f.command(
        "membership.grant_delegation",
        COORDINATOR,
        r#""coordinatorEpoch": 1, "expectedRevision": 1"#,
        &grant_payload("urn:missionweaveprotocol:grant:g2", W1, 25, 2, ""),
    );
    f.refused(&engine, &stale, NOW, WireCode::RevisionConflict);
}

#[test]
fn a_grant_deeper_than_organization_policy_is_rate_limited() {
    let f = fixture();
    let engine = f.active();
    make_member(&f, &engine, DELEGATE, "work_delegate");
    f.ok(&engine, &f.authorize(W1, &[]), NOW);
    let e = f.refused(
        &engine,
        &grant_command(&f, &grant_payload(GRANT, W1, 25, 4, "")),
        NOW,
        WireCode::RateLimited,
    );
    assert_eq!(reason(&e), "delegation_depth");
    f.ok(
        &engine,
        &grant_command(&f, &grant_payload(GRANT, W1, 25, 3, "")),
        NOW,
    );
}

// ---- use -----------------------------------------------------------------------------------

#[test]
fn the_grantee_offers_the_root_and_authorizes_a_linked_descendant() {
    let f = fixture();
    let engine = granted(&f, 2);
    let events = f.ok(
        &engine,
        &delegated_authorize(&f, DELEGATE, W2, Some(W1), GRANT, &contract(&[])),
        NOW,
    );
    assert_eq!(text(&events[0], "/kind"), "work.authorized");
    assert_eq!(text(&events[0], "/payload/parentWorkItemId"), W1);
    assert_eq!(text(&events[0], "/payload/delegationGrantId"), GRANT);
    assert_eq!(item_state(&engine, W2), "open");
    let (_, link) = stored_value(&engine, LINK_KIND, W2).unwrap();
    assert_eq!(text(&link, "/parentWorkItemId"), W1);
    assert_eq!(text(&link, "/delegationGrantId"), GRANT);
    let events = f.ok(&engine, &delegated_offer(&f, DELEGATE, W1, GRANT), NOW);
    assert_eq!(text(&events[0], "/kind"), "work.offer.created");
    assert_eq!(text(&events[0], "/payload/delegationGrantId"), GRANT);
    // The offered descendant too.
    f.ok(&engine, &delegated_offer(&f, DELEGATE, W2, GRANT), NOW);
    assert_eq!(item_state(&engine, W2), "offered");
    assert_eq!(uses(&engine), vec![W2.to_owned(), W1.to_owned()]);
}

#[test]
fn a_bare_work_delegate_or_an_unknown_grant_authorizes_nothing() {
    let f = fixture();
    let engine = granted(&f, 2);
    // Without citing a Grant, the grantee is no Coordinator.
    let bare = f.command(
        "work.authorize",
        DELEGATE,
        "",
        &format!(
            r#"{{"workItemId":"{W2}","conversationId":"{CONVERSATION}","contract":{},"parentWorkItemId":"{W1}"}}"#,
            contract(&[])
        ),
    );
    f.refused(&engine, &bare, NOW, WireCode::AuthStaleCoordinator);
    // A forged Grant ID.
    let forged = delegated_authorize(
        &f,
        DELEGATE,
        W2,
        Some(W1),
        "urn:missionweaveprotocol:grant:forged",
        &contract(&[]),
    );
    let e = f.refused(&engine, &forged, NOW, WireCode::AuthForbidden);
    assert_eq!(reason(&e), "unknown_delegation_grant");
    assert!(stored_value(&engine, LINK_KIND, W2).is_none());
    assert!(uses(&engine).is_empty());
}

#[test]
fn grants_are_non_transferable() {
    let f = fixture();
    let engine = granted(&f, 2);
    let by_coordinator = delegated_authorize(&f, COORDINATOR, W2, Some(W1), GRANT, &contract(&[]));
    let e = f.refused(&engine, &by_coordinator, NOW, WireCode::AuthForbidden);
    assert_eq!(reason(&e), "delegation_not_grantee");
    // The grantee still can.
    f.ok(
        &engine,
        &delegated_authorize(&f, DELEGATE, W2, Some(W1), GRANT, &contract(&[])),
        NOW,
    );
}

#[test]
fn the_subtree_bounds_the_scope() {
    let f = fixture();
    let engine = granted(&f, 2);
    // A root outside the Grant's subtree.
    f.ok(&engine, &f.authorize(W3, &[]), NOW);
    let outside = delegated_authorize(&f, DELEGATE, W2, Some(W3), GRANT, &contract(&[]));
    let e = f.refused(&engine, &outside, NOW, WireCode::AuthForbidden);
    assert_eq!(reason(&e), "delegation_scope");
    let e = f.refused(
        &engine,
        &delegated_offer(&f, DELEGATE, W3, GRANT),
        NOW,
        WireCode::AuthForbidden,
    );
    assert_eq!(reason(&e), "delegation_scope");
    // A new WorkItem must be linked explicitly.
    let unlinked = delegated_authorize(&f, DELEGATE, W2, None, GRANT, &contract(&[]));
    let e = f.refused(&engine, &unlinked, NOW, WireCode::AuthForbidden);
    assert_eq!(reason(&e), "delegation_scope");
    // A descendant linked by the Coordinator is inside the subtree.
    let linked = f.by_coordinator(
        "work.authorize",
        1,
        &format!(
            r#"{{"workItemId":"{W4}","conversationId":"{CONVERSATION}","contract":{},"parentWorkItemId":"{W1}"}}"#,
            contract(&[])
        ),
    );
    f.ok(&engine, &linked, NOW);
    f.ok(&engine, &delegated_offer(&f, DELEGATE, W4, GRANT), NOW);
    // A parent that is no WorkItem of the Mission.
    let unknown = delegated_authorize(
        &f,
        DELEGATE,
        W2,
        Some("urn:missionweaveprotocol:work:none"),
        GRANT,
        &contract(&[]),
    );
    f.refused(&engine, &unknown, NOW, WireCode::AuthForbidden);
}

#[test]
fn required_capabilities_must_be_allowed_at_their_minimum_version() {
    let f = fixture();
    let engine = granted(&f, 2);
    // The Grant allows text.summarise from 1.0.0 on: a contract asking for less is refused.
    let older = contract_with(
        r#""requiredCapabilities":[{"id":"text.summarise","version":"1.0.0"}]"#,
        r#""requiredCapabilities":[{"id":"text.summarise","version":"0.9.0"}]"#,
    );
    let e = f.refused(
        &engine,
        &delegated_authorize(&f, DELEGATE, W2, Some(W1), GRANT, &older),
        NOW,
        WireCode::AuthForbidden,
    );
    assert_eq!(reason(&e), "delegation_capability");
    let other = contract_with(
        r#""requiredCapabilities":[{"id":"text.summarise","version":"1.0.0"}]"#,
        r#""requiredCapabilities":[{"id":"code.execute","version":"1.0.0"}]"#,
    );
    f.refused(
        &engine,
        &delegated_authorize(&f, DELEGATE, W2, Some(W1), GRANT, &other),
        NOW,
        WireCode::AuthForbidden,
    );
    let patch = contract_with(
        r#""requiredCapabilities":[{"id":"text.summarise","version":"1.0.0"}]"#,
        r#""requiredCapabilities":[{"id":"text.summarise","version":"2.0.0"}]"#,
    );
    f.ok(
        &engine,
        &delegated_authorize(&f, DELEGATE, W2, Some(W1), GRANT, &patch),
        NOW,
    );
}

#[test]
fn cumulative_budgets_stay_within_every_ceiling() {
    let f = fixture();
    // 25 tool calls; each contract asks for 10.
    let engine = granted(&f, 2);
    f.ok(
        &engine,
        &delegated_authorize(&f, DELEGATE, W2, Some(W1), GRANT, &contract(&[])),
        NOW,
    );
    f.ok(&engine, &delegated_offer(&f, DELEGATE, W1, GRANT), NOW);
    // Re-offering charges nothing again.
    assert_eq!(uses(&engine).len(), 2);
    let e = f.refused(
        &engine,
        &delegated_authorize(&f, DELEGATE, W3, Some(W1), GRANT, &contract(&[])),
        NOW,
        WireCode::BudgetExceeded,
    );
    assert_eq!(reason(&e), "delegation_budget");
    let small = contract_with(
        r#""budget":{"toolCallLimit":10}"#,
        r#""budget":{"toolCallLimit":5}"#,
    );
    f.ok(
        &engine,
        &delegated_authorize(&f, DELEGATE, W3, Some(W1), GRANT, &small),
        NOW,
    );
    // A dimension the Grant sets to 0.
    let tokens = contract_with(
        r#""budget":{"toolCallLimit":10}"#,
        r#""budget":{"modelTokenLimit":1}"#,
    );
    f.refused(
        &engine,
        &delegated_authorize(&f, DELEGATE, W4, Some(W1), GRANT, &tokens),
        NOW,
        WireCode::BudgetExceeded,
    );
    assert_eq!(uses(&engine).len(), 3);
}

#[test]
fn descendant_depth_is_bounded_by_the_grant() {
    let f = fixture();
    let engine = granted(&f, 1);
    let small = contract_with(
        r#""budget":{"toolCallLimit":10}"#,
        r#""budget":{"toolCallLimit":1}"#,
    );
    f.ok(
        &engine,
        &delegated_authorize(&f, DELEGATE, W2, Some(W1), GRANT, &small),
        NOW,
    );
    let e = f.refused(
        &engine,
        &delegated_authorize(&f, DELEGATE, W3, Some(W2), GRANT, &small),
        NOW,
        WireCode::AuthForbidden,
    );
    assert_eq!(reason(&e), "delegation_depth");
}

#[test]
fn a_replaced_coordinator_fences_the_grant() {
    let f = fixture();
    let engine = granted(&f, 2);
    f.ok(
        &engine,
        &f.command(
            "mission.assign_coordinator",
            OWNER,
            "",
            &format!(
                r#"{{"agentId":"{COORDINATOR}","agentCardVersion":1,"leaseId":"urn:missionweaveprotocol:lease:coordinator-2"}}"#
            ),
        ),
        NOW,
    );
    let e = f.refused(
        &engine,
        &delegated_authorize(&f, DELEGATE, W2, Some(W1), GRANT, &contract(&[])),
        NOW,
        WireCode::AuthStaleCoordinator,
    );
    assert_eq!(reason(&e), "delegation_coordinator_epoch");
}

#[test]
fn a_changed_membership_invalidates_the_grant_and_reactivation_does_not_revive_it() {
    let f = fixture();
    let engine = granted(&f, 2);
    make_member(&f, &engine, DELEGATE, "work_delegate");
    // The grantee now carries its new epoch 2; the Grant was bound to epoch 1.
    let unsigned = f.unsigned(
        "work.authorize",
        DELEGATE,
        &f.action(),
        "",
        &format!(
            r#"{{"workItemId":"{W2}","conversationId":"{CONVERSATION}","contract":{},"parentWorkItemId":"{W1}","delegationGrantId":"{GRANT}"}}"#,
            contract(&[])
        ),
    );
    let text = String::from_utf8(json::canonical_bytes(&unsigned).unwrap()).unwrap();
    let text = text.replace(r#""membershipEpoch":1"#, r#""membershipEpoch":2"#);
    let command = f.verified(DELEGATE, &json::parse(text.as_bytes()).unwrap());
    let e = f.refused(&engine, &command, NOW, WireCode::MembershipStale);
    assert_eq!(reason(&e), "delegation_membership_epoch");
}

#[test]
fn an_expired_grant_or_a_closed_target_authorizes_nothing() {
    let f = fixture();
    let engine = granted(&f, 2);
    let late = UnixMillis(NOW.0 + 3_600_000);
    let e = f.refused(
        &engine,
        &delegated_offer(&f, DELEGATE, W1, GRANT),
        late,
        WireCode::AuthForbidden,
    );
    assert_eq!(reason(&e), "delegation_expired");
    // Just before expiry it still works.
    f.ok(
        &engine,
        &delegated_authorize(&f, DELEGATE, W2, Some(W1), GRANT, &contract(&[])),
        UnixMillis(late.0 - 1),
    );
    f.ok(
        &engine,
        &f.command(
            "work.cancel",
            OWNER,
            "",
            &format!(r#"{{"workItemId":"{W1}","reason":"descoped"}}"#),
        ),
        NOW,
    );
    let e = f.refused(
        &engine,
        &delegated_offer(&f, DELEGATE, W2, GRANT),
        NOW,
        WireCode::AuthForbidden,
    );
    assert_eq!(reason(&e), "delegation_target_closed");
}

#[test]
fn a_duplicate_delegated_command_returns_its_first_event_and_charges_once() {
    let f = fixture();
    let engine = granted(&f, 2);
    let command = delegated_authorize(&f, DELEGATE, W2, Some(W1), GRANT, &contract(&[]));
    let first = engine.perform(&command, NOW).unwrap();
    let again = engine.perform(&command, NOW).unwrap();
    assert!(again.duplicate);
    assert_eq!(first.events[0].body, again.events[0].body);
    assert_eq!(uses(&engine), vec![W2.to_owned()]);
}
