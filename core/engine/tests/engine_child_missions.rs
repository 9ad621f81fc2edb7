//! Parent and child Missions (§14) through the engine: `mission.create_child` (§7.1 row 3,
//! §10.2 row 15), a child's approval (row 16) and failure (row 17) acting on the parent
//! WorkItem, the ownership fence, the §14 subset rules and depth guardrail, and the cascades
//! (parent cancellation / failure down the tree deepest first, declared child-failure
//! propagation up the tree), each in one atomic commit — checked with an injected conflict in
//! the middle of the transaction. Every Event is verified (six stages + `event.schema.json`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_work_fixture.rs"]
mod engine_work_fixture;

use engine_work_fixture::*;
use missionweaveprotocol::json::Value;
use missionweaveprotocol::{DescribeError, WireCode};
use missionweaveprotocol_engine::engine::Engine;
use missionweaveprotocol_engine::error::EngineError;
use missionweaveprotocol_engine::events::{EventIssuer, SequentialEventIds};
use missionweaveprotocol_engine::ingress::VerifiedCommand;
use missionweaveprotocol_engine::store::{
    Aggregate, AggregateKey, GroupHead, InMemoryStore, Receipt, ReceiptKey, ReplayPage,
    SnapshotPointer, Store, StoreError, Transaction,
};
use missionweaveprotocol_engine::work::WorkItem;
use std::sync::atomic::{AtomicBool, Ordering};

const CHILD: &str = "urn:missionweaveprotocol:mission:close-books-ledger";
const CHILD_GROUP: &str = "urn:missionweaveprotocol:group:finance-ledger";
const GRANDCHILD: &str = "urn:missionweaveprotocol:mission:close-books-ledger-fx";
const GRANDCHILD_GROUP: &str = "urn:missionweaveprotocol:group:finance-ledger-fx";
const CW1: &str = "urn:missionweaveprotocol:work:ledger-fx";
/// The child's Coordinator (the parent's is `COORDINATOR`, the child's MissionOwner).
const CHILD_COORDINATOR: &str = OTHER_AGENT;

/// A Command in `group` (the fixture's Commands are all in `GROUP`).
fn in_group(
    f: &Fixture,
    kind: &str,
    actor: &str,
    group: &str,
    extra: &str,
    payload: &str,
) -> VerifiedCommand {
    let mut unsigned = f.unsigned(kind, actor, &f.action(), extra, payload);
    if let Value::Object(o) = &mut unsigned {
        o.insert("groupId", Value::string(group));
    }
    f.verified(actor, &unsigned)
}

/// The `mission.create_child` payload for `mission`/`group` from `item`, with `extra` members.
fn child_payload(item: &str, mission: &str, group: &str, coordinator: &str, extra: &str) -> String {
    format!(
        r#"{{"parentWorkItemId": "{item}", "missionId": "{mission}", "groupId": "{group}",
        "objective": "Reconcile the ledger in depth",
        "definitionOfDone": [{{"criterionId": "ledger-reconciled", "description": "Reconciled",
          "evidenceRequired": ["reviewer_assessment"]}}],
        "budget": {{"toolCallLimit": 5}}, "deadline": "2026-07-31T00:00:00Z",
        "approvalPolicy": {{"finalHumanApproval": false, "highRiskExecutionApproval": true}},
        "coordinator": {{"agentId": "{coordinator}", "agentCardVersion": 1,
          "leaseId": "urn:missionweaveprotocol:lease:{}"}},
        "mainConversationId": "urn:missionweaveprotocol:conversation:{}"{extra}}}"#,
        mission.rsplit(':').next().unwrap(),
        mission.rsplit(':').next().unwrap()
    )
}

/// `mission.create_child` by the parent Coordinator on `W1` with `extra` payload members.
fn create_child(f: &Fixture, extra: &str) -> VerifiedCommand {
    f.by_coordinator(
        "mission.create_child",
        1,
        &child_payload(W1, CHILD, CHILD_GROUP, CHILD_COORDINATOR, extra),
    )
}

fn log(f: &Fixture, engine: &TestEngine, group: &str) -> Vec<Value> {
    let page = engine.replay(group, 0, 10_000).unwrap();
    for (i, record) in page.events.iter().enumerate() {
        assert_eq!(record.sequence, i as u64 + 1, "the Group log is contiguous");
    }
    page.events.iter().map(|r| f.check_event(r)).collect()
}

fn head(engine: &TestEngine, group: &str) -> u64 {
    engine.store().head(group).unwrap().last_sequence()
}

fn mission_state(engine: &TestEngine, mission: &str) -> String {
    state(engine, mission).0
}

/// An active Mission with `W1` open and a running child Mission of it (policy `policy`).
fn with_child(f: &Fixture, policy: &str) -> TestEngine {
    let engine = f.active();
    f.ok(&engine, &f.authorize(W1, &[]), NOW);
    f.ok(
        &engine,
        &create_child(f, &format!(r#", "failurePolicy": "{policy}""#)),
        NOW,
    );
    engine
}

/// `work.authorize` of `CW1` in the child Mission (by the child's Coordinator), with a budget
/// that fits the child's.
fn authorize_in_child_command(f: &Fixture) -> VerifiedCommand {
    let contract = contract(&[]).replace(r#""toolCallLimit":10"#, r#""toolCallLimit":2"#);
    in_group(
        f,
        "work.authorize",
        CHILD_COORDINATOR,
        CHILD_GROUP,
        r#""coordinatorEpoch": 1"#,
        &format!(
            r#"{{"workItemId":"{CW1}","conversationId":"{CONVERSATION}","contract":{contract}}}"#
        ),
    )
}

fn authorize_in_child(f: &Fixture, engine: &TestEngine) {
    f.ok(engine, &authorize_in_child_command(f), NOW);
}

/// A grandchild of `CW1` (owner: the child's Coordinator; Coordinator: `COORDINATOR`).
fn grandchild_command(f: &Fixture, policy: &str) -> VerifiedCommand {
    let payload = child_payload(
        CW1,
        GRANDCHILD,
        GRANDCHILD_GROUP,
        COORDINATOR,
        &format!(r#", "failurePolicy": "{policy}""#),
    )
    .replace(r#""toolCallLimit": 5"#, r#""toolCallLimit": 2"#);
    in_group(
        f,
        "mission.create_child",
        CHILD_COORDINATOR,
        CHILD_GROUP,
        r#""coordinatorEpoch": 1"#,
        &payload,
    )
}

fn create_grandchild(f: &Fixture, engine: &TestEngine, policy: &str) {
    f.ok(engine, &grandchild_command(f, policy), NOW);
}

fn terminate_child(f: &Fixture) -> VerifiedCommand {
    in_group(
        f,
        "mission.terminate",
        CHILD_COORDINATOR,
        CHILD_GROUP,
        r#""coordinatorEpoch": 1"#,
        r#"{"reason": "the ledger source is unavailable"}"#,
    )
}

fn submit_child(f: &Fixture, engine: &TestEngine) {
    f.ok(
        engine,
        &in_group(
            f,
            "mission.submit_for_approval",
            CHILD_COORDINATOR,
            CHILD_GROUP,
            r#""coordinatorEpoch": 1"#,
            &format!(r#"{{"artifactHashes": ["{HASH_A}"]}}"#),
        ),
        NOW,
    );
}

fn approve_child(f: &Fixture, actor: &str, hash: &str) -> VerifiedCommand {
    in_group(
        f,
        "mission.approve",
        actor,
        CHILD_GROUP,
        "",
        &format!(
            r#"{{"approvalId": "urn:missionweaveprotocol:approval:child-1", "missionRevision": 2,
            "artifactHashes": ["{hash}"]}}"#
        ),
    )
}

// ---- row 3 (§7.1) and row 15 (§10.2) ---------------------------------------------------------

#[test]
fn create_child_opens_a_linked_mission_in_its_own_group_and_blocks_the_open_item() {
    let f = fixture();
    let engine = f.active();
    f.ok(&engine, &f.authorize(W1, &[]), NOW);
    let events = f.ok(&engine, &create_child(&f, ""), NOW);
    assert_eq!(kinds(&events), ["mission.child.created", "mission.created"]);
    assert_eq!(text(&events[0], "/groupId"), GROUP);
    assert_eq!(text(&events[0], "/workItemId"), W1);
    assert_eq!(text(&events[0], "/payload/missionId"), CHILD);
    assert_eq!(text(&events[0], "/payload/state"), "blocked");
    assert_eq!(text(&events[0], "/payload/previousState"), "open");
    assert_eq!(
        text(&events[0], "/payload/failurePolicy"),
        "block_parent_work_item"
    );
    assert_eq!(text(&events[1], "/groupId"), CHILD_GROUP);
    assert_eq!(
        events[1]
            .get("sequence")
            .unwrap()
            .as_number()
            .unwrap()
            .as_u64(),
        Some(1)
    );

    // The child: active, owned by the Parent Coordinator (an Agent), linked to W1 at depth 1.
    let child = engine.mission(CHILD).unwrap().unwrap();
    assert_eq!(child.state().as_str(), "active");
    assert_eq!(child.owner().id, COORDINATOR);
    assert_eq!(child.coordinator().agent_id, CHILD_COORDINATOR);
    let doc = child.document();
    assert_eq!(text(&doc, "/parent/missionId"), MISSION);
    assert_eq!(text(&doc, "/parent/workItemId"), W1);
    assert_eq!(
        doc.pointer("/parent/depth")
            .unwrap()
            .as_number()
            .unwrap()
            .as_u64(),
        Some(1)
    );
    assert_eq!(child.group_id(), CHILD_GROUP);
    // The child Group's log rebuilds the child Mission.
    let rebuilt =
        missionweaveprotocol_engine::mission::rebuild(&log(&f, &engine, CHILD_GROUP)).unwrap();
    assert_eq!(rebuilt.unwrap().document(), child.document());

    // The parent WorkItem: blocked, its ownership held through the child's Coordinator.
    let (_, w) = stored(&engine, W1);
    assert_eq!(w.state.as_str(), "blocked");
    let owner = w.owner.unwrap();
    assert_eq!(owner.agent_id, CHILD_COORDINATOR);
    assert_eq!(owner.ownership_epoch, 1);
    // Both Memberships of the child Group exist.
    let coordinator = missionweaveprotocol::Principal::new(
        missionweaveprotocol::PrincipalType::Agent,
        COORDINATOR,
    );
    assert_eq!(
        engine
            .membership(CHILD_GROUP, &coordinator)
            .unwrap()
            .unwrap()
            .role(),
        "mission_owner"
    );
    assert_eq!(log(&f, &engine, GROUP).len() as u64, head(&engine, GROUP));
}

#[test]
fn create_child_fences_the_owner_of_a_queued_and_an_active_item() {
    let f = fixture();
    let engine = f.active();
    f.queued(&engine, W1);
    let (epoch, lease) = ownership(&engine, W1);
    f.ok(&engine, &create_child(&f, ""), NOW);
    let (_, w) = stored(&engine, W1);
    assert_eq!(w.owner.as_ref().unwrap().ownership_epoch, epoch + 1);
    assert_eq!(
        w.ownership_lease.as_ref().unwrap().state().as_str(),
        "revoked"
    );
    // The former owner's Commands are stale.
    f.refused(
        &engine,
        &f.by_worker("work.start", WORKER, W1, epoch, &lease, ""),
        NOW,
        WireCode::WorkStaleOwnership,
    );

    let engine = f.active();
    f.active_item(&engine, W1);
    let (epoch, lease) = execution(&engine, W1);
    let events = f.ok(&engine, &create_child(&f, ""), NOW);
    assert_eq!(text(&events[0], "/payload/previousState"), "active");
    let (_, w) = stored(&engine, W1);
    assert_eq!(
        w.execution_lease.as_ref().unwrap().state().as_str(),
        "revoked"
    );
    f.refused(
        &engine,
        &f.by_worker(
            "work.checkpoint",
            WORKER,
            W1,
            epoch,
            &lease,
            Fixture::checkpoint_members(),
        ),
        NOW,
        WireCode::WorkStaleOwnership,
    );
}

#[test]
fn while_the_child_runs_the_parent_item_accepts_no_work_command() {
    let f = fixture();
    let engine = with_child(&f, "block_parent_work_item");
    for command in [
        f.offer(W1, &[WORKER], "r2"),
        f.by_coordinator(
            "work.cancel",
            1,
            &format!(r#"{{"workItemId":"{W1}","reason":"no longer needed"}}"#),
        ),
        f.by_coordinator(
            "work.fail",
            1,
            &format!(
                r#"{{"workItemId":"{W1}","reason":"x","evidenceIds":["urn:missionweaveprotocol:evidence:x"]}}"#
            ),
        ),
        f.by_coordinator("work.unblock", 1, &format!(r#"{{"workItemId":"{W1}"}}"#)),
    ] {
        f.refused(&engine, &command, NOW, WireCode::InvalidStateTransition);
    }
    // A second child of the same WorkItem while the first runs.
    f.refused(
        &engine,
        &f.by_coordinator(
            "mission.create_child",
            1,
            &child_payload(W1, GRANDCHILD, GRANDCHILD_GROUP, CHILD_COORDINATOR, ""),
        ),
        NOW,
        WireCode::InvalidStateTransition,
    );
    assert_eq!(item_state(&engine, W1), "blocked");
}

#[test]
fn create_child_refusals_append_nothing() {
    let f = fixture();
    let engine = f.active();
    f.ok(&engine, &f.authorize(W1, &[]), NOW);
    let cases: Vec<(VerifiedCommand, WireCode)> = vec![
        // Not the current Coordinator Epoch.
        (
            f.by_coordinator(
                "mission.create_child",
                2,
                &child_payload(W1, CHILD, CHILD_GROUP, CHILD_COORDINATOR, ""),
            ),
            WireCode::AuthStaleCoordinator,
        ),
        // Unknown parent WorkItem.
        (
            f.by_coordinator(
                "mission.create_child",
                1,
                &child_payload(W2, CHILD, CHILD_GROUP, CHILD_COORDINATOR, ""),
            ),
            WireCode::InvalidCommand,
        ),
        // The child's Group must be new (§14 "its own Group").
        (
            f.by_coordinator(
                "mission.create_child",
                1,
                &child_payload(W1, CHILD, GROUP, CHILD_COORDINATOR, ""),
            ),
            WireCode::InvalidCommand,
        ),
        // The parent Mission's ID is taken.
        (
            f.by_coordinator(
                "mission.create_child",
                1,
                &child_payload(W1, MISSION, CHILD_GROUP, CHILD_COORDINATOR, ""),
            ),
            WireCode::InvalidStateTransition,
        ),
        // The child's Coordinator would be its own MissionOwner (§7.2).
        (
            f.by_coordinator(
                "mission.create_child",
                1,
                &child_payload(W1, CHILD, CHILD_GROUP, COORDINATOR, ""),
            ),
            WireCode::InvalidCommand,
        ),
        // Unknown failure policy.
        (
            create_child(&f, r#", "failurePolicy": "ignore""#),
            WireCode::InvalidCommand,
        ),
    ];
    for (command, code) in &cases {
        f.refused(&engine, command, NOW, *code);
    }
    let stale_revision = f.command(
        "mission.create_child",
        COORDINATOR,
        r#""coordinatorEpoch": 1, "expectedRevision": 7"#,
        &child_payload(W1, CHILD, CHILD_GROUP, CHILD_COORDINATOR, ""),
    );
    f.refused(&engine, &stale_revision, NOW, WireCode::RevisionConflict);
    assert_eq!(head(&engine, CHILD_GROUP), 0);
    assert!(engine.mission(CHILD).unwrap().is_none());
    assert_eq!(item_state(&engine, W1), "open");
    // The same Command with a valid payload then applies.
    f.ok(&engine, &create_child(&f, ""), NOW);
}

#[test]
fn create_child_needs_a_promotable_item_in_an_active_mission() {
    let f = fixture();
    let engine = f.active();
    f.submitted_item(&engine, W1);
    f.refused(
        &engine,
        &create_child(&f, ""),
        NOW,
        WireCode::InvalidStateTransition,
    );
    f.ok(&engine, &f.accept_result(W1), NOW);
    f.refused(
        &engine,
        &create_child(&f, ""),
        NOW,
        WireCode::InvalidStateTransition,
    );
    // A terminal parent Mission.
    let engine = f.active();
    f.ok(&engine, &f.authorize(W1, &[]), NOW);
    f.ok(
        &engine,
        &f.command("mission.cancel", OWNER, "", r#"{"reason": "stop"}"#),
        NOW,
    );
    f.refused(
        &engine,
        &create_child(&f, ""),
        NOW,
        WireCode::InvalidStateTransition,
    );
}

// ---- §14 subsets and depth ----------------------------------------------------------------------

#[test]
fn child_budget_deadline_and_permissions_must_fit_the_parent() {
    let f = fixture();
    let engine = f.active();
    f.ok(&engine, &f.authorize(W1, &[]), NOW);
    let over = |from: &str, to: &str| {
        f.by_coordinator(
            "mission.create_child",
            1,
            &child_payload(W1, CHILD, CHILD_GROUP, CHILD_COORDINATOR, "").replace(from, to),
        )
    };
    let cases = [
        // More than the parent WorkItem's toolCallLimit 10.
        (
            over(r#""toolCallLimit": 5"#, r#""toolCallLimit": 11"#),
            WireCode::BudgetExceeded,
        ),
        // A dimension the parent WorkItem does not grant.
        (
            over(r#""toolCallLimit": 5"#, r#""modelTokenLimit": 1"#),
            WireCode::BudgetExceeded,
        ),
        // Later than the parent Mission's deadline (2026-08-01).
        (
            over("2026-07-31T00:00:00Z", "2026-08-02T00:00:00Z"),
            WireCode::InvalidCommand,
        ),
        // Dropping the parent's high-risk execution approval.
        (
            over(
                r#""highRiskExecutionApproval": true"#,
                r#""highRiskExecutionApproval": false"#,
            ),
            WireCode::AuthForbidden,
        ),
    ];
    for (command, code) in &cases {
        f.refused(&engine, command, NOW, *code);
    }
    // Capabilities and resources beyond the parent contract's.
    let foreign_capability = create_child(
        &f,
        r#", "requiredCapabilities": [{"id": "code.execute", "version": "1.0.0"}]"#,
    );
    f.refused(&engine, &foreign_capability, NOW, WireCode::AuthForbidden);
    let foreign_resource = create_child(
        &f,
        r#", "allowedResources": [{"resourceType": "dataset", "resourceId": "urn:missionweaveprotocol:dataset:hr", "operations": ["read"]}]"#,
    );
    f.refused(&engine, &foreign_resource, NOW, WireCode::AuthForbidden);
    assert!(engine.mission(CHILD).unwrap().is_none());
    // Exactly the parent's budget, deadline and capabilities fit.
    let fitting = f.by_coordinator(
        "mission.create_child",
        1,
        &child_payload(
            W1,
            CHILD,
            CHILD_GROUP,
            CHILD_COORDINATOR,
            r#", "requiredCapabilities": [{"id":"text.summarise","version":"1.0.0"}], "allowedResources": []"#,
        )
        .replace(r#""toolCallLimit": 5"#, r#""toolCallLimit": 10"#)
        .replace("2026-07-31T00:00:00Z", "2026-08-01T00:00:00Z"),
    );
    let events = f.ok(&engine, &fitting, NOW);
    assert_eq!(
        text(&events[0], "/payload/requiredCapabilities/0/id"),
        "text.summarise"
    );
}

#[test]
fn child_budget_usage_rolls_up_to_the_parent_and_siblings_share_the_item_budget() {
    let f = fixture();
    let engine = with_child(&f, "block_parent_work_item");
    let account = |id: &str| {
        let stored = engine
            .store()
            .aggregate(&AggregateKey::new("budget_account", id))
            .unwrap()
            .unwrap();
        missionweaveprotocol::json::parse(&stored.value).unwrap()
    };
    let child = account(&format!("mission:{CHILD}"));
    assert_eq!(text(&child, "/parent/id"), W1);
    let item = account(&format!("work_item:{W1}"));
    assert_eq!(
        item.pointer("/reserved/toolCalls")
            .unwrap()
            .as_number()
            .unwrap()
            .as_u64(),
        Some(5)
    );
}

/// The usage of every account on the chain `CW1 → CHILD → W1 → MISSION`, in tool calls.
fn chain_usage(engine: &TestEngine) -> Vec<(String, u64)> {
    [
        format!("work_item:{CW1}"),
        format!("mission:{CHILD}"),
        format!("work_item:{W1}"),
        format!("mission:{MISSION}"),
    ]
    .into_iter()
    .map(|id| {
        let stored = engine
            .store()
            .aggregate(&AggregateKey::new("budget_account", &id))
            .unwrap()
            .unwrap_or_else(|| panic!("no account {id}"));
        let value = missionweaveprotocol::json::parse_state(&stored.value).unwrap();
        let calls = value
            .pointer("/usage/toolCalls")
            .and_then(|n| n.as_number()?.as_u64())
            .unwrap_or(0);
        (id, calls)
    })
    .collect()
}

/// A Worker Command of `COORDINATOR` on `CW1` in the child Group.
fn child_worker(
    f: &Fixture,
    engine: &TestEngine,
    kind: &str,
    lease: &str,
    members: &str,
) -> VerifiedCommand {
    let (_, item) = stored(engine, CW1);
    let epoch = item.owner.as_ref().map_or(0, |o| o.ownership_epoch);
    let lease_id = match lease {
        "ownership" => item.ownership_lease.as_ref().unwrap().lease_id().to_owned(),
        _ => item.execution_lease.as_ref().unwrap().lease_id().to_owned(),
    };
    in_group(
        f,
        kind,
        COORDINATOR,
        CHILD_GROUP,
        "",
        &format!(
            r#"{{"workItemId":"{CW1}","ownershipEpoch":{epoch},"leaseId":"{lease_id}"{members}}}"#
        ),
    )
}

/// §12, §14 through the engine (not the ledger alone): usage recorded in a child Mission's
/// WorkItem is charged to every ancestor account in one commit, and an overflow of an
/// *ancestor* — here the parent WorkItem `W1`, not the charged item itself — refuses the whole
/// record with nothing charged anywhere. (Kills the mutant of `budget::account::charge` that
/// checks only the WorkItem's own account.)
#[test]
fn an_ancestor_overflow_refuses_a_child_items_usage_and_charges_nothing() {
    let f = fixture();
    let engine = f.active();
    // W1 (limit 10 tool calls) records 9 while active, then becomes a child Mission (limit 5).
    f.active_item(&engine, W1);
    let (epoch, lease) = execution(&engine, W1);
    f.ok(
        &engine,
        &f.by_worker(
            "ext.missionweaveprotocol.core.resource_usage_record",
            WORKER,
            W1,
            epoch,
            &lease,
            r#""usageDelta":{"toolCalls":9}"#,
        ),
        NOW,
    );
    f.ok(&engine, &create_child(&f, ""), NOW);
    // The child's WorkItem CW1 (limit 2) is worked by COORDINATOR.
    authorize_in_child(&f, &engine);
    f.ok(
        &engine,
        &in_group(
            &f,
            "work.offer",
            CHILD_COORDINATOR,
            CHILD_GROUP,
            r#""coordinatorEpoch": 1"#,
            &format!(
                r#"{{"workItemId":"{CW1}","candidates":[{{"offerId":"urn:missionweaveprotocol:offer:c1","agentId":"{COORDINATOR}","agentCardVersion":1}}],"selectionBasis":{}}}"#,
                selection_basis()
            ),
        ),
        NOW,
    );
    f.ok(
        &engine,
        &in_group(
            &f,
            "work.accept_offer",
            COORDINATOR,
            CHILD_GROUP,
            "",
            &format!(
                r#"{{"workItemId":"{CW1}","capabilityPins":[{{"id":"text.summarise","version":"1.2.0"}}]}}"#
            ),
        ),
        NOW,
    );
    f.ok(
        &engine,
        &child_worker(&f, &engine, "work.start", "ownership", ""),
        NOW,
    );
    let before = chain_usage(&engine);
    assert_eq!(
        before.iter().map(|(_, c)| *c).collect::<Vec<_>>(),
        vec![0, 0, 9, 9]
    );
    let heads = (head(&engine, GROUP), head(&engine, CHILD_GROUP));
    // 2 fits CW1 (2) and CHILD (5) but not W1 (9 + 2 > 10): refused, nothing charged anywhere.
    let record = |calls: u64| {
        child_worker(
            &f,
            &engine,
            "ext.missionweaveprotocol.core.resource_usage_record",
            "execution",
            &format!(r#","usageDelta":{{"toolCalls":{calls}}}"#),
        )
    };
    let e = engine.perform(&record(2), NOW).unwrap_err();
    assert_eq!(e.wire_code(), WireCode::BudgetExceeded, "{e}");
    assert!(
        e.to_string().contains(W1),
        "the parent WorkItem's account overflows: {e}"
    );
    assert_eq!(chain_usage(&engine), before, "nothing charged anywhere");
    assert_eq!((head(&engine, GROUP), head(&engine, CHILD_GROUP)), heads);
    // 1 fits every account: charged on the whole chain with its one Event.
    f.ok(&engine, &record(1), NOW);
    assert_eq!(
        chain_usage(&engine)
            .iter()
            .map(|(_, c)| *c)
            .collect::<Vec<_>>(),
        vec![1, 1, 10, 10]
    );
}

#[test]
fn depth_beyond_the_default_maximum_is_rate_limited() {
    let f = fixture();
    let engine = f.active();
    f.ok(&engine, &f.authorize(W1, &[]), NOW);
    // Level 1 from the root, then each level from a WorkItem of the previous level.
    let mut parent_group = GROUP.to_owned();
    let mut parent_item = W1.to_owned();
    let mut owner = COORDINATOR;
    let max = missionweaveprotocol_engine::mission::DEFAULT_MAX_DEPTH;
    for depth in 1..=max + 1 {
        let coordinator = if owner == COORDINATOR {
            OTHER_AGENT
        } else {
            COORDINATOR
        };
        let mission = format!("urn:missionweaveprotocol:mission:level-{depth}");
        let group = format!("urn:missionweaveprotocol:group:level-{depth}");
        let create = in_group(
            &f,
            "mission.create_child",
            owner,
            &parent_group,
            r#""coordinatorEpoch": 1"#,
            &child_payload(&parent_item, &mission, &group, coordinator, "")
                .replace(r#""toolCallLimit": 5"#, r#""toolCallLimit": 2"#),
        );
        if depth > max {
            let e = engine.perform(&create, NOW).unwrap_err();
            assert_eq!(e.wire_code(), WireCode::RateLimited, "{e}");
            assert!(engine.mission(&mission).unwrap().is_none());
            break;
        }
        f.ok(&engine, &create, NOW);
        let item = format!("urn:missionweaveprotocol:work:level-{depth}");
        let contract = contract(&[]).replace(r#""toolCallLimit":10"#, r#""toolCallLimit":2"#);
        f.ok(
            &engine,
            &in_group(
                &f,
                "work.authorize",
                coordinator,
                &group,
                r#""coordinatorEpoch": 1"#,
                &format!(
                    r#"{{"workItemId":"{item}","conversationId":"{CONVERSATION}","contract":{contract}}}"#
                ),
            ),
            NOW,
        );
        parent_group = group;
        parent_item = item;
        owner = coordinator;
    }
}

// ---- row 16: approval ---------------------------------------------------------------------------

#[test]
fn the_approved_child_verifies_the_parent_item_with_its_artifacts_as_evidence() {
    let f = fixture();
    let engine = with_child(&f, "block_parent_work_item");
    submit_child(&f, &engine);
    let before = head(&engine, GROUP);
    let events = f.ok(&engine, &approve_child(&f, COORDINATOR, HASH_A), NOW);
    assert_eq!(kinds(&events), ["mission.approved", "work.result.accepted"]);
    assert_eq!(text(&events[1], "/groupId"), GROUP);
    assert_eq!(text(&events[1], "/workItemId"), W1);
    assert_eq!(text(&events[1], "/payload/cause"), "mission.approved");
    assert_eq!(text(&events[1], "/payload/childMissionId"), CHILD);
    assert_eq!(head(&engine, GROUP), before + 1);
    let (_, w) = stored(&engine, W1);
    assert_eq!(w.state.as_str(), "verified");
    let submission = w.submission.unwrap();
    assert_eq!(submission.artifact_hashes, [HASH_A]);
    assert_eq!(
        submission.evidence[0].evidence_id,
        "urn:missionweaveprotocol:approval:child-1"
    );
    assert_eq!(mission_state(&engine, CHILD), "approved");
    assert_eq!(mission_state(&engine, MISSION), "active");
}

#[test]
fn a_refused_child_approval_leaves_the_parent_item_blocked() {
    let f = fixture();
    let engine = with_child(&f, "block_parent_work_item");
    submit_child(&f, &engine);
    let parent_head = head(&engine, GROUP);
    // Another Artifact set, and an approver who is not the child's MissionOwner.
    for (command, code) in [
        (
            approve_child(&f, COORDINATOR, HASH_B),
            WireCode::InvalidCommand,
        ),
        (
            approve_child(&f, CHILD_COORDINATOR, HASH_A),
            WireCode::AuthForbidden,
        ),
    ] {
        let e = engine.perform(&command, NOW).unwrap_err();
        assert_eq!(e.wire_code(), code, "{e}");
    }
    assert_eq!(head(&engine, GROUP), parent_head);
    assert_eq!(item_state(&engine, W1), "blocked");
    assert_eq!(mission_state(&engine, CHILD), "awaiting_approval");
}

// ---- row 17: failure per the declared policy -----------------------------------------------------

#[test]
fn a_failed_child_blocks_the_parent_item_by_default_and_lifts_the_fence() {
    let f = fixture();
    let engine = with_child(&f, "block_parent_work_item");
    let events = f.ok(&engine, &terminate_child(&f), NOW);
    assert_eq!(kinds(&events), ["mission.terminated", "work.blocked"]);
    assert_eq!(text(&events[1], "/payload/state"), "blocked");
    assert_eq!(
        text(&events[1], "/payload/evidenceIds/0"),
        &format!("{CHILD}#failure")
    );
    assert_eq!(item_state(&engine, W1), "blocked");
    assert_eq!(mission_state(&engine, MISSION), "active");
    // The Parent Coordinator replans: re-offers the WorkItem (row 3, no live owner).
    f.ok(&engine, &f.offer(W1, &[WORKER], "r2"), NOW);
    assert_eq!(item_state(&engine, W1), "offered");
}

#[test]
fn a_failed_child_fails_the_parent_item_when_declared() {
    let f = fixture();
    let engine = with_child(&f, "fail_parent_work_item");
    f.ok(&engine, &f.authorize(W2, &[]), NOW);
    let events = f.ok(&engine, &terminate_child(&f), NOW);
    assert_eq!(kinds(&events), ["mission.terminated", "work.failed"]);
    assert_eq!(item_state(&engine, W1), "failed");
    assert_eq!(item_state(&engine, W2), "open");
    assert_eq!(mission_state(&engine, MISSION), "active");
}

#[test]
fn an_indispensable_child_fails_the_parent_mission_and_its_unfinished_work() {
    let f = fixture();
    let engine = with_child(&f, "fail_parent_mission");
    f.ok(&engine, &f.authorize(W2, &[]), NOW);
    let events = f.ok(&engine, &terminate_child(&f), NOW);
    assert_eq!(
        kinds(&events),
        [
            "mission.terminated",
            "work.failed",
            "mission.terminated",
            "work.failed"
        ]
    );
    assert_eq!(text(&events[2], "/groupId"), GROUP);
    assert_eq!(text(&events[2], "/payload/cause"), "child_mission_failed");
    assert_eq!(mission_state(&engine, MISSION), "failed");
    assert_eq!(item_state(&engine, W1), "failed");
    assert_eq!(item_state(&engine, W2), "failed");
    log(&f, &engine, GROUP);
    log(&f, &engine, CHILD_GROUP);
}

#[test]
fn only_the_child_coordinator_or_policy_terminates_the_child() {
    let f = fixture();
    let engine = with_child(&f, "fail_parent_mission");
    // The Parent Coordinator holds no Coordinator Epoch of the child (it is its owner).
    let by_parent = in_group(
        &f,
        "mission.terminate",
        COORDINATOR,
        CHILD_GROUP,
        r#""coordinatorEpoch": 1"#,
        r#"{"reason": "x"}"#,
    );
    let e = engine.perform(&by_parent, NOW).unwrap_err();
    assert_eq!(e.wire_code(), WireCode::AuthForbidden, "{e}");
    assert_eq!(mission_state(&engine, CHILD), "active");
    assert_eq!(mission_state(&engine, MISSION), "active");
    assert_eq!(item_state(&engine, W1), "blocked");
}

#[test]
fn declared_failure_propagates_recursively_up_the_tree() {
    let f = fixture();
    let engine = with_child(&f, "fail_parent_mission");
    authorize_in_child(&f, &engine);
    create_grandchild(&f, &engine, "fail_parent_mission");
    let grandchild_terminate = in_group(
        &f,
        "mission.terminate",
        COORDINATOR,
        GRANDCHILD_GROUP,
        r#""coordinatorEpoch": 1"#,
        r#"{"reason": "fx rates unavailable"}"#,
    );
    f.ok(&engine, &grandchild_terminate, NOW);
    assert_eq!(mission_state(&engine, GRANDCHILD), "failed");
    assert_eq!(mission_state(&engine, CHILD), "failed");
    assert_eq!(mission_state(&engine, MISSION), "failed");
    assert_eq!(item_state(&engine, CW1), "failed");
    assert_eq!(item_state(&engine, W1), "failed");

    // With a blocking policy in the middle, the propagation stops at the child's parent item.
    let f = fixture();
    let engine = with_child(&f, "block_parent_work_item");
    authorize_in_child(&f, &engine);
    create_grandchild(&f, &engine, "fail_parent_mission");
    let grandchild_terminate = in_group(
        &f,
        "mission.terminate",
        COORDINATOR,
        GRANDCHILD_GROUP,
        r#""coordinatorEpoch": 1"#,
        r#"{"reason": "fx rates unavailable"}"#,
    );
    f.ok(&engine, &grandchild_terminate, NOW);
    assert_eq!(mission_state(&engine, CHILD), "failed");
    assert_eq!(item_state(&engine, W1), "blocked");
    assert_eq!(mission_state(&engine, MISSION), "active");
}

// ---- cancellation ---------------------------------------------------------------------------------

#[test]
fn cancelling_the_root_cancels_every_descendant_deepest_first() {
    let f = fixture();
    let engine = with_child(&f, "block_parent_work_item");
    authorize_in_child(&f, &engine);
    create_grandchild(&f, &engine, "block_parent_work_item");
    let events = f.ok(
        &engine,
        &f.command(
            "mission.cancel",
            OWNER,
            "",
            r#"{"reason": "the books close later"}"#,
        ),
        NOW,
    );
    let cancelled: Vec<&str> = events
        .iter()
        .filter(|e| text(e, "/kind") == "mission.cancelled")
        .map(|e| text(e, "/payload/missionId"))
        .collect();
    assert_eq!(
        cancelled,
        [MISSION, GRANDCHILD, CHILD],
        "root first, then deepest first"
    );
    for mission in [MISSION, CHILD, GRANDCHILD] {
        assert_eq!(mission_state(&engine, mission), "cancelled");
    }
    assert_eq!(item_state(&engine, W1), "cancelled");
    assert_eq!(item_state(&engine, CW1), "cancelled");
    for group in [GROUP, CHILD_GROUP, GRANDCHILD_GROUP] {
        log(&f, &engine, group);
    }
    // A refused cancellation (not the owner) changes nothing anywhere.
    let f = fixture();
    let engine = with_child(&f, "block_parent_work_item");
    let heads = (head(&engine, GROUP), head(&engine, CHILD_GROUP));
    f.refused(
        &engine,
        &f.command("mission.cancel", OTHER_HUMAN, "", r#"{"reason": "x"}"#),
        NOW,
        WireCode::AuthForbidden,
    );
    assert_eq!((head(&engine, GROUP), head(&engine, CHILD_GROUP)), heads);
    assert_eq!(mission_state(&engine, CHILD), "active");
}

#[test]
fn a_failing_root_cancels_its_descendants() {
    let f = fixture();
    let engine = with_child(&f, "fail_parent_mission");
    let events = f.ok(
        &engine,
        &f.by_coordinator(
            "mission.terminate",
            1,
            r#"{"reason": "source system lost"}"#,
        ),
        NOW,
    );
    assert_eq!(
        kinds(&events),
        ["mission.terminated", "work.failed", "mission.cancelled"]
    );
    assert_eq!(mission_state(&engine, MISSION), "failed");
    assert_eq!(mission_state(&engine, CHILD), "cancelled");
    assert_eq!(item_state(&engine, W1), "failed");
}

#[test]
fn cancelling_a_child_leaves_the_parent_item_blocked_for_a_replacement_child() {
    let f = fixture();
    let engine = with_child(&f, "fail_parent_mission");
    let cancel = in_group(
        &f,
        "mission.cancel",
        COORDINATOR,
        CHILD_GROUP,
        "",
        r#"{"reason": "scope revised"}"#,
    );
    let events = f.ok(&engine, &cancel, NOW);
    assert_eq!(kinds(&events), ["mission.cancelled", "work.blocked"]);
    assert_eq!(text(&events[1], "/payload/cause"), "mission.cancelled");
    assert_eq!(mission_state(&engine, MISSION), "active");
    assert_eq!(item_state(&engine, W1), "blocked");
    // A replacement child of the same WorkItem (§14).
    let replacement = f.by_coordinator(
        "mission.create_child",
        1,
        &child_payload(W1, GRANDCHILD, GRANDCHILD_GROUP, CHILD_COORDINATOR, ""),
    );
    let events = f.ok(&engine, &replacement, NOW);
    assert_eq!(text(&events[0], "/payload/previousState"), "blocked");
    assert_eq!(stored(&engine, W1).1.owner.unwrap().ownership_epoch, 2);
    // The child's Coordinator must not cancel (§7.1).
    let by_coordinator = in_group(
        &f,
        "mission.cancel",
        CHILD_COORDINATOR,
        GRANDCHILD_GROUP,
        "",
        r#"{"reason": "x"}"#,
    );
    let e = engine.perform(&by_coordinator, NOW).unwrap_err();
    assert_eq!(e.wire_code(), WireCode::AuthForbidden);
}

// ---- atomicity with an injected failure -------------------------------------------------------------

/// A store that, once armed, just before committing the first transaction appending to
/// `poisoned` (the deepest Group), commits a rewrite of `victim` (same bytes, next revision) —
/// an aggregate that transaction depends on — so the real backend refuses the cascade's one
/// transaction after it was built over every Group.
struct Injecting {
    inner: InMemoryStore,
    poisoned: String,
    victim: AggregateKey,
    armed: AtomicBool,
}

impl Store for Injecting {
    fn commit(&self, tx: Transaction) -> Result<(), StoreError> {
        let touches = tx.appends().iter().any(|(g, _)| *g == self.poisoned);
        if touches && self.armed.swap(false, Ordering::SeqCst) {
            let current = self.inner.aggregate(&self.victim)?.unwrap();
            let mut bump = Transaction::new();
            bump.put(self.victim.clone(), current.revision, current.value.clone());
            self.inner.commit(bump)?;
        }
        self.inner.commit(tx)
    }
    fn aggregate(&self, key: &AggregateKey) -> Result<Option<Aggregate>, StoreError> {
        self.inner.aggregate(key)
    }
    fn list(&self, kind: &str, prefix: &str) -> Result<Vec<(String, Aggregate)>, StoreError> {
        self.inner.list(kind, prefix)
    }
    fn receipt(&self, key: &ReceiptKey) -> Result<Option<Receipt>, StoreError> {
        self.inner.receipt(key)
    }
    fn head(&self, group: &str) -> Result<GroupHead, StoreError> {
        self.inner.head(group)
    }
    fn replay(&self, group: &str, after: u64, limit: usize) -> Result<ReplayPage, StoreError> {
        self.inner.replay(group, after, limit)
    }
    fn archive_before(
        &self,
        group: &str,
        before: u64,
        snapshot: SnapshotPointer,
    ) -> Result<(), StoreError> {
        self.inner.archive_before(group, before, snapshot)
    }
}

#[test]
fn a_cascade_commits_all_of_its_groups_or_none() {
    let f = fixture();
    let store = Injecting {
        inner: InMemoryStore::new(),
        poisoned: GRANDCHILD_GROUP.to_owned(),
        // Checked by the cascade's transaction (the root's Group); bumped with its own bytes,
        // so the retry reads a consistent store.
        victim: AggregateKey::new("group", GROUP),
        armed: AtomicBool::new(false),
    };
    let engine = Engine::new(
        store,
        EventIssuer::new(authority(), f.authority_key.clone()),
        SequentialEventIds::new("urn:missionweaveprotocol:event:inject-"),
    )
    .with_max_attempts(1);
    f.open_sessions(&engine);
    for command in [
        f.create(),
        f.authorize(W1, &[]),
        create_child(&f, ""),
        authorize_in_child_command(&f),
        grandchild_command(&f, "block_parent_work_item"),
    ] {
        let performed = engine
            .perform(&command, NOW)
            .unwrap_or_else(|e| panic!("{} refused: {e}", command.kind()));
        f.checked(&performed);
    }
    let groups = [GROUP, CHILD_GROUP, GRANDCHILD_GROUP];
    let heads = |engine: &Engine<Injecting, _, _>| -> Vec<u64> {
        groups
            .iter()
            .map(|g| engine.store().head(g).unwrap().last_sequence())
            .collect()
    };
    let before = heads(&engine);
    let item = |engine: &Engine<Injecting, _, _>, id: &str| {
        let stored = engine
            .store()
            .aggregate(&AggregateKey::new("work_item", id))
            .unwrap()
            .unwrap();
        WorkItem::from_json(&stored.value)
            .unwrap()
            .state
            .as_str()
            .to_owned()
    };
    engine.store().armed.store(true, Ordering::SeqCst);
    let cancel = f.command(
        "mission.cancel",
        OWNER,
        "",
        r#"{"reason": "stop everything"}"#,
    );
    let error: EngineError = engine.perform(&cancel, NOW).unwrap_err();
    assert_eq!(error.wire_code(), WireCode::InternalError, "{error}");
    assert!(error.retryable(), "a lost race is retryable");
    // The conflict hit the store in the middle of the one transaction: nothing of the cascade
    // is visible in any Group or aggregate, and no receipt was recorded.
    assert_eq!(heads(&engine), before);
    for mission in [MISSION, CHILD, GRANDCHILD] {
        assert_eq!(
            engine.mission(mission).unwrap().unwrap().state().as_str(),
            "active"
        );
    }
    assert_eq!(item(&engine, W1), "blocked");
    assert_eq!(item(&engine, CW1), "blocked");
    assert!(
        engine
            .store()
            .receipt(&cancel.receipt_key())
            .unwrap()
            .is_none()
    );
    // The same Command applies in full once the conflict is gone, in every Group at once.
    let performed = engine.perform(&cancel, NOW).unwrap();
    f.checked(&performed);
    for mission in [MISSION, CHILD, GRANDCHILD] {
        assert_eq!(
            engine.mission(mission).unwrap().unwrap().state().as_str(),
            "cancelled"
        );
    }
    let after = heads(&engine);
    assert!(
        after.iter().zip(&before).all(|(a, b)| a > b),
        "{after:?} {before:?}"
    );
    assert_eq!(item(&engine, CW1), "cancelled");
}
