//! Execution Approvals through the engine (§12, §10.2 rows 6 and 7, CONTEXT "Execution
//! Approval"): `approval.grant_execution` → `approval.execution.granted`, and the `work.start`
//! gate. Every rule positive and negative; every refusal appends and stores nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_work_fixture.rs"]
mod engine_work_fixture;

use engine_work_fixture::*;
use missionweaveprotocol::WireCode;
use missionweaveprotocol::json::Value;
use missionweaveprotocol_engine::approval::{
    EXECUTION_APPROVAL_KIND, ExecutionApproval, WORK_ITEM_APPROVAL_KIND,
};
use missionweaveprotocol_engine::ingress::VerifiedCommand;
use missionweaveprotocol_engine::store::Store;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

const RESOURCE: &str = "urn:missionweaveprotocol:resource:prod-app";
const OTHER_RESOURCE: &str = "urn:missionweaveprotocol:resource:ledger-db";
const APPROVAL: &str = "urn:missionweaveprotocol:approval:exec-1";
const SECOND: u64 = 1_000;

fn at(ms: u64) -> UnixMillis {
    NOW.saturating_add_ms(ms)
}

/// A Work Contract that requires human execution approval and allows the high-risk
/// `production.deploy` and the ordinary `repo.read` on [`RESOURCE`], and `db.read` on
/// [`OTHER_RESOURCE`].
fn gated_contract() -> String {
    contract(&[])
        .replace(
            r#""allowedResources":[]"#,
            &format!(
                r#""allowedResources":[{{"resource":"{RESOURCE}","operations":["repo.read","production.deploy"]}},{{"resource":"{OTHER_RESOURCE}","operations":["db.read"]}}]"#
            ),
        )
        .replace(
            r#""sideEffectRisk":"none","executionApproval":"not_required""#,
            r#""sideEffectRisk":"high_risk","executionApproval":"human_required""#,
        )
}

/// `item` authorized with [`gated_contract`], offered and accepted with a one-hour ownership
/// lease: `queued`, owned by `WORKER` at Ownership Epoch 1. The Coordinator's lease is renewed
/// for an hour too, so later steps may let time pass.
fn gated_queued(f: &Fixture, engine: &TestEngine, item: &str) {
    f.ok(
        engine,
        &f.by_coordinator("mission.renew_coordinator", 1, r#"{"leaseSeconds": 3600}"#),
        NOW,
    );
    f.ok(
        engine,
        &f.by_coordinator(
            "work.authorize",
            1,
            &format!(
                r#"{{"workItemId":"{item}","conversationId":"{CONVERSATION}","contract":{}}}"#,
                gated_contract()
            ),
        ),
        NOW,
    );
    f.ok(engine, &f.offer(item, &[WORKER], "r1"), NOW);
    accept(f, engine, item, 3600, NOW);
}

fn accept(f: &Fixture, engine: &TestEngine, item: &str, seconds: u64, now: UnixMillis) {
    f.ok(
        engine,
        &f.command(
            "work.accept_offer",
            WORKER,
            "",
            &format!(
                r#"{{"workItemId":"{item}","capabilityPins":[{{"id":"text.summarise","version":"1.2.0"}}],"leaseSeconds":{seconds}}}"#
            ),
        ),
        now,
    );
}

/// The `approval.grant_execution` payload members for `item` at `epoch`, plus `members`.
fn grant_payload(id: &str, item: &str, epoch: u64, members: &str) -> String {
    let members = if members.is_empty() {
        format!(r#""operations":["production.deploy"],"resources":["{RESOURCE}"]"#)
    } else {
        members.to_owned()
    };
    format!(r#"{{"approvalId":"{id}","workItemId":"{item}","ownershipEpoch":{epoch},{members}}}"#)
}

fn grant(
    f: &Fixture,
    actor: &str,
    id: &str,
    item: &str,
    epoch: u64,
    members: &str,
) -> VerifiedCommand {
    f.command(
        "approval.grant_execution",
        actor,
        "",
        &grant_payload(id, item, epoch, members),
    )
}

fn start(f: &Fixture, engine: &TestEngine, item: &str) -> VerifiedCommand {
    let (epoch, lease) = ownership(engine, item);
    f.by_worker("work.start", WORKER, item, epoch, &lease, "")
}

fn stored_approval(engine: &TestEngine, id: &str) -> Option<ExecutionApproval> {
    engine
        .store()
        .aggregate(&ExecutionApproval::key(id))
        .unwrap()
        .map(|a| ExecutionApproval::from_stored(&a.value).unwrap())
}

fn nothing_stored(engine: &TestEngine) {
    assert!(
        engine
            .store()
            .list(EXECUTION_APPROVAL_KIND, "")
            .unwrap()
            .is_empty()
    );
    assert!(
        engine
            .store()
            .list(WORK_ITEM_APPROVAL_KIND, "")
            .unwrap()
            .is_empty()
    );
}

#[test]
fn the_mission_owner_grants_and_the_gated_work_starts() {
    let f = fixture();
    let engine = f.active();
    gated_queued(&f, &engine, W1);
    let (revision_before, _) = stored(&engine, W1);
    // Without an approval the contract's gate holds (§12, `APPROVAL_REQUIRED`).
    let error = f.refused(
        &engine,
        &start(&f, &engine, W1),
        NOW,
        WireCode::ApprovalRequired,
    );
    assert_eq!(
        missionweaveprotocol::DescribeError::reason(&error),
        "execution_approval_required"
    );

    let events = f.ok(
        &engine,
        &grant(
            &f,
            OWNER,
            APPROVAL,
            W1,
            1,
            &format!(
                r#""operations":["production.deploy","repo.read"],"resources":["{RESOURCE}"],"budget":{{"toolCallLimit":5}},"expiresInSeconds":600,"comments":"release window""#
            ),
        ),
        NOW,
    );
    assert_eq!(events.len(), 1);
    let event = &events[0];
    assert_eq!(text(event, "/kind"), "approval.execution.granted");
    assert_eq!(text(event, "/workItemId"), W1);
    assert_eq!(
        event
            .pointer("/aggregateRevision")
            .and_then(Value::as_number)
            .and_then(|n| n.as_u64()),
        Some(1)
    );
    let p = payload_of(event);
    assert_eq!(text(p, "/approvalId"), APPROVAL);
    assert_eq!(text(p, "/kind"), "work_execution");
    assert_eq!(text(p, "/missionId"), MISSION);
    assert_eq!(text(p, "/groupId"), GROUP);
    assert_eq!(
        p.pointer("/ownershipEpoch")
            .and_then(Value::as_number)
            .and_then(|n| n.as_u64()),
        Some(1)
    );
    assert_eq!(text(p, "/approver/type"), "human");
    assert_eq!(text(p, "/approver/id"), OWNER);
    assert_eq!(text(p, "/approvedAt"), "2026-07-15T09:30:00.000Z");
    assert_eq!(text(p, "/expiresAt"), "2026-07-15T09:40:00.000Z");
    assert_eq!(text(p, "/comments"), "release window");
    // Row 6: `queued` → `queued`; the WorkItem itself is not rewritten.
    assert_eq!(item_state(&engine, W1), "queued");
    assert_eq!(stored(&engine, W1).0, revision_before);
    let approval = stored_approval(&engine, APPROVAL).unwrap();
    assert_eq!(approval.ownership_epoch, 1);
    assert_eq!(approval.expires_at, at(600 * SECOND));
    assert_eq!(approval.approver.id, OWNER);
    // The gate is satisfied: row 7 applies.
    let events = f.ok(&engine, &start(&f, &engine, W1), at(SECOND));
    assert_eq!(text(&events[0], "/kind"), "work.started");
    assert_eq!(item_state(&engine, W1), "active");
    // The log stays contiguous and verified.
    whole_log(&f, &engine);
}

#[test]
fn a_contract_without_an_approval_requirement_starts_without_one() {
    let f = fixture();
    let engine = f.active();
    f.queued(&engine, W1);
    f.ok(&engine, &start(&f, &engine, W1), NOW);
    assert_eq!(item_state(&engine, W1), "active");
    nothing_stored(&engine);
}

#[test]
fn only_the_accountable_human_approves() {
    let f = fixture();
    let engine = f.active();
    gated_queued(&f, &engine, W1);
    // An Agent (even the Coordinator) cannot sign a human decision.
    let e = f.refused(
        &engine,
        &grant(&f, COORDINATOR, APPROVAL, W1, 1, ""),
        NOW,
        WireCode::AuthForbidden,
    );
    assert_eq!(
        missionweaveprotocol::DescribeError::reason(&e),
        "human_only"
    );
    // Another human is not the MissionOwner.
    let e = f.refused(
        &engine,
        &grant(&f, OTHER_HUMAN, APPROVAL, W1, 1, ""),
        NOW,
        WireCode::AuthForbidden,
    );
    assert_eq!(
        missionweaveprotocol::DescribeError::reason(&e),
        "not_accountable_human"
    );
    nothing_stored(&engine);
    f.refused(
        &engine,
        &start(&f, &engine, W1),
        NOW,
        WireCode::ApprovalRequired,
    );
    // The MissionOwner does.
    f.ok(&engine, &grant(&f, OWNER, APPROVAL, W1, 1, ""), NOW);
    assert!(stored_approval(&engine, APPROVAL).is_some());
}

#[test]
fn the_approval_binds_the_current_ownership_epoch() {
    let f = fixture();
    let engine = f.active();
    gated_queued(&f, &engine, W1);
    for stale in [0, 2] {
        f.refused(
            &engine,
            &grant(&f, OWNER, APPROVAL, W1, stale, ""),
            NOW,
            WireCode::WorkStaleOwnership,
        );
    }
    nothing_stored(&engine);
    f.ok(&engine, &grant(&f, OWNER, APPROVAL, W1, 1, ""), NOW);
}

#[test]
fn an_approval_for_an_earlier_owner_does_not_open_the_gate() {
    let f = fixture();
    let engine = f.active();
    f.ok(
        &engine,
        &f.by_coordinator("mission.renew_coordinator", 1, r#"{"leaseSeconds": 3600}"#),
        NOW,
    );
    f.ok(
        &engine,
        &f.by_coordinator(
            "work.authorize",
            1,
            &format!(
                r#"{{"workItemId":"{W1}","conversationId":"{CONVERSATION}","contract":{}}}"#,
                gated_contract()
            ),
        ),
        NOW,
    );
    f.ok(&engine, &f.offer(W1, &[WORKER], "r1"), NOW);
    // A one-minute ownership lease; the approval lasts an hour.
    accept(&f, &engine, W1, 60, NOW);
    f.ok(
        &engine,
        &grant(
            &f,
            OWNER,
            APPROVAL,
            W1,
            1,
            &format!(
                r#""operations":["production.deploy"],"resources":["{RESOURCE}"],"expiresInSeconds":3600"#
            ),
        ),
        NOW,
    );
    // The ownership lapses; the item is re-offered and accepted: Ownership Epoch 2.
    let later = at(61 * SECOND);
    f.ok(&engine, &f.offer(W1, &[WORKER], "r2"), later);
    accept(&f, &engine, W1, 3600, later);
    assert_eq!(ownership(&engine, W1).0, 2);
    f.refused(
        &engine,
        &start(&f, &engine, W1),
        later,
        WireCode::ApprovalRequired,
    );
    // An approval for epoch 1 is now stale; one for epoch 2 opens the gate.
    f.refused(
        &engine,
        &grant(
            &f,
            OWNER,
            "urn:missionweaveprotocol:approval:exec-2",
            W1,
            1,
            "",
        ),
        later,
        WireCode::WorkStaleOwnership,
    );
    f.ok(
        &engine,
        &grant(
            &f,
            OWNER,
            "urn:missionweaveprotocol:approval:exec-2",
            W1,
            2,
            "",
        ),
        later,
    );
    f.ok(&engine, &start(&f, &engine, W1), later);
}

#[test]
fn an_expired_approval_does_not_open_the_gate() {
    let f = fixture();
    let engine = f.active();
    gated_queued(&f, &engine, W1);
    f.ok(
        &engine,
        &grant(
            &f,
            OWNER,
            APPROVAL,
            W1,
            1,
            &format!(
                r#""operations":["production.deploy"],"resources":["{RESOURCE}"],"expiresInSeconds":60"#
            ),
        ),
        NOW,
    );
    // At its expiry instant it no longer holds (expiry is exclusive).
    f.refused(
        &engine,
        &start(&f, &engine, W1),
        at(60 * SECOND),
        WireCode::ApprovalRequired,
    );
    f.ok(&engine, &start(&f, &engine, W1), at(59 * SECOND));
}

#[test]
fn an_approval_must_cover_the_contracts_high_risk_operations() {
    let f = fixture();
    let engine = f.active();
    gated_queued(&f, &engine, W1);
    // Approves only the ordinary read: the deploy stays unapproved.
    f.ok(
        &engine,
        &grant(
            &f,
            OWNER,
            APPROVAL,
            W1,
            1,
            &format!(r#""operations":["repo.read"],"resources":["{RESOURCE}"]"#),
        ),
        NOW,
    );
    f.refused(
        &engine,
        &start(&f, &engine, W1),
        NOW,
        WireCode::ApprovalRequired,
    );
    // The deploy and the database read on both resources: covers the high-risk scope.
    f.ok(
        &engine,
        &grant(
            &f,
            OWNER,
            "urn:missionweaveprotocol:approval:exec-2",
            W1,
            1,
            &format!(r#""operations":["production.deploy","db.read"],"resources":["{RESOURCE}","{OTHER_RESOURCE}"]"#),
        ),
        NOW,
    );
    f.ok(&engine, &start(&f, &engine, W1), NOW);
}

#[test]
fn an_approval_for_another_work_item_does_not_open_the_gate() {
    let f = fixture();
    let engine = f.active();
    gated_queued(&f, &engine, W1);
    f.ok(
        &engine,
        &f.by_coordinator(
            "work.authorize",
            1,
            &format!(
                r#"{{"workItemId":"{W2}","conversationId":"{CONVERSATION}","contract":{}}}"#,
                gated_contract()
            ),
        ),
        NOW,
    );
    f.ok(&engine, &f.offer(W2, &[WORKER], "r2"), NOW);
    accept(&f, &engine, W2, 3600, NOW);
    f.ok(&engine, &grant(&f, OWNER, APPROVAL, W2, 1, ""), NOW);
    f.refused(
        &engine,
        &start(&f, &engine, W1),
        NOW,
        WireCode::ApprovalRequired,
    );
    f.ok(&engine, &start(&f, &engine, W2), NOW);
}

#[test]
fn the_approval_cannot_exceed_the_work_contract() {
    let f = fixture();
    let engine = f.active();
    gated_queued(&f, &engine, W1);
    let cases = [
        // An operation the contract does not allow.
        (
            format!(r#""operations":["payment.send"],"resources":["{RESOURCE}"]"#),
            WireCode::InvalidCommand,
            "operation_not_in_contract",
        ),
        // An allowed operation, but not on the approved resource.
        (
            format!(r#""operations":["db.read"],"resources":["{RESOURCE}"]"#),
            WireCode::InvalidCommand,
            "operation_not_in_contract",
        ),
        // A resource the contract does not allow.
        (
            r#""operations":["production.deploy"],"resources":["urn:missionweaveprotocol:resource:other"]"#.to_owned(),
            WireCode::InvalidCommand,
            "resource_not_in_contract",
        ),
        // A budget above the WorkItem's allocation (toolCallLimit 10).
        (
            r#""operations":["production.deploy"],"budget":{"toolCallLimit":11}"#.to_owned(),
            WireCode::BudgetExceeded,
            "allocation_exceeded",
        ),
        // Malformed members.
        (
            r#""operations":[]"#.to_owned(),
            WireCode::InvalidCommand,
            "empty_operations",
        ),
        (
            r#""operations":["production.deploy","production.deploy"]"#.to_owned(),
            WireCode::InvalidCommand,
            "duplicate_member",
        ),
        (
            r#""operations":["production.deploy"],"expiresInSeconds":0"#.to_owned(),
            WireCode::InvalidCommand,
            "expiry_out_of_range",
        ),
        (
            r#""operations":["production.deploy"],"budget":5"#.to_owned(),
            WireCode::InvalidCommand,
            "invalid_member",
        ),
    ];
    for (members, code, reason) in cases {
        let e = f.refused(
            &engine,
            &grant(&f, OWNER, APPROVAL, W1, 1, &members),
            NOW,
            code,
        );
        assert_eq!(
            missionweaveprotocol::DescribeError::reason(&e),
            reason,
            "{members}"
        );
    }
    nothing_stored(&engine);
    // Within the contract and the allocation, but naming no resource: granted (the operation
    // is allowed on some contract resource), yet it does not cover the deploy resource, so the
    // gate stays shut (the Authorization Service reads it the same way).
    f.ok(
        &engine,
        &grant(
            &f,
            OWNER,
            APPROVAL,
            W1,
            1,
            r#""operations":["production.deploy"],"budget":{"toolCallLimit":10}"#,
        ),
        NOW,
    );
    f.refused(
        &engine,
        &start(&f, &engine, W1),
        NOW,
        WireCode::ApprovalRequired,
    );
    f.ok(
        &engine,
        &grant(
            &f,
            OWNER,
            "urn:missionweaveprotocol:approval:exec-2",
            W1,
            1,
            &format!(
                r#""operations":["production.deploy"],"resources":["{RESOURCE}"],"budget":{{"toolCallLimit":10}}"#
            ),
        ),
        NOW,
    );
    f.ok(&engine, &start(&f, &engine, W1), NOW);
}

#[test]
fn only_a_queued_work_item_of_this_mission_is_approved() {
    let f = fixture();
    let engine = f.active();
    // Unknown WorkItem.
    f.refused(
        &engine,
        &grant(&f, OWNER, APPROVAL, W1, 1, ""),
        NOW,
        WireCode::InvalidStateTransition,
    );
    // `open`: no owner yet.
    f.ok(
        &engine,
        &f.by_coordinator(
            "work.authorize",
            1,
            &format!(
                r#"{{"workItemId":"{W1}","conversationId":"{CONVERSATION}","contract":{}}}"#,
                gated_contract()
            ),
        ),
        NOW,
    );
    f.refused(
        &engine,
        &grant(&f, OWNER, APPROVAL, W1, 1, ""),
        NOW,
        WireCode::InvalidStateTransition,
    );
    f.ok(&engine, &f.offer(W1, &[WORKER], "r1"), NOW);
    accept(&f, &engine, W1, 3600, NOW);
    f.ok(&engine, &grant(&f, OWNER, APPROVAL, W1, 1, ""), NOW);
    f.ok(&engine, &start(&f, &engine, W1), NOW);
    // `active`: row 6 is `queued` only.
    f.refused(
        &engine,
        &grant(
            &f,
            OWNER,
            "urn:missionweaveprotocol:approval:exec-2",
            W1,
            1,
            "",
        ),
        NOW,
        WireCode::InvalidStateTransition,
    );
}

#[test]
fn approval_ids_are_unique_and_duplicates_answer_the_original_event() {
    let f = fixture();
    let engine = f.active();
    gated_queued(&f, &engine, W1);
    let command = grant(&f, OWNER, APPROVAL, W1, 1, "");
    let first = engine.perform(&command, NOW).unwrap();
    let again = engine.perform(&command, NOW).unwrap();
    assert!(again.duplicate);
    assert_eq!(again.events[0].body, first.events[0].body);
    // The same Approval ID under another Action ID is refused.
    let e = f.refused(
        &engine,
        &grant(&f, OWNER, APPROVAL, W1, 1, ""),
        NOW,
        WireCode::InvalidStateTransition,
    );
    assert_eq!(
        missionweaveprotocol::DescribeError::reason(&e),
        "invalid_state_transition"
    );
}

#[test]
fn expected_revision_names_the_work_item() {
    let f = fixture();
    let engine = f.active();
    gated_queued(&f, &engine, W1);
    let (revision, _) = stored(&engine, W1);
    f.refused(
        &engine,
        &f.command(
            "approval.grant_execution",
            OWNER,
            &format!(r#""expectedRevision": {}"#, revision + 1),
            &grant_payload(APPROVAL, W1, 1, ""),
        ),
        NOW,
        WireCode::RevisionConflict,
    );
    f.ok(
        &engine,
        &f.command(
            "approval.grant_execution",
            OWNER,
            &format!(r#""expectedRevision": {revision}"#),
            &grant_payload(APPROVAL, W1, 1, ""),
        ),
        NOW,
    );
}

#[test]
fn a_terminal_mission_accepts_no_approval() {
    let f = fixture();
    let engine = f.active();
    gated_queued(&f, &engine, W1);
    f.ok(
        &engine,
        &f.command("mission.cancel", OWNER, "", r#"{"reason": "stop"}"#),
        NOW,
    );
    f.refused(
        &engine,
        &grant(&f, OWNER, APPROVAL, W1, 1, ""),
        NOW,
        WireCode::InvalidStateTransition,
    );
    nothing_stored(&engine);
}
