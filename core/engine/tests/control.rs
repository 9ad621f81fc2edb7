//! The human control interface (`control`, `reference-python.md` §1.6): each operation's
//! unsigned Command, signed with the MissionOwner's key, is accepted by the engine; each refusal
//! rule of the interface has its negative case.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_work_fixture.rs"]
mod engine_work_fixture;

use engine_work_fixture::*;
use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol::schema::SchemaCatalog;
use missionweaveprotocol::{
    DescribeError, ErrorClass, Principal, PrincipalType, SignedDocumentCodec, SignedDocumentKind,
    WireCode,
};
use missionweaveprotocol_engine::control::{self, ControlError};
use missionweaveprotocol_engine::engine::{Query, QueryKind};
use missionweaveprotocol_engine::ingress::VerifiedCommand;

const NEW_MISSION: &str = "urn:missionweaveprotocol:mission:audit";
const NEW_GROUP: &str = "urn:missionweaveprotocol:group:audit";
const RESOURCE: &str = "urn:missionweaveprotocol:resource:prod-app";

fn owner() -> Principal {
    Principal::new(PrincipalType::Human, OWNER)
}

fn parse(text: &str) -> Value {
    json::parse(text.as_bytes()).unwrap()
}

/// The request for `operation` with the projections the bindings query for it.
fn request(f: &Fixture, engine: &TestEngine, operation: &str, args: &str) -> Value {
    let mut r = json::Object::new();
    r.insert("operation", Value::string(operation));
    r.insert("humanId", Value::string(OWNER));
    r.insert("actionId", Value::string(f.action()));
    r.insert("issuedAt", Value::string(NOW_TEXT));
    r.insert("args", parse(args));
    if let Some(mission) = engine.mission(MISSION).unwrap() {
        r.insert("mission", mission.document());
        let group = engine
            .query(&Query::new(QueryKind::Group, GROUP), NOW)
            .unwrap()
            .unwrap();
        r.insert("group", group);
        if let Some(m) = engine.membership(GROUP, &owner()).unwrap() {
            r.insert("membership", m.to_value());
        }
        r.insert("events", Value::Array(whole_log(f, engine)));
    }
    Value::Object(r)
}

fn build(f: &Fixture, engine: &TestEngine, operation: &str, args: &str) -> Value {
    control::build(&request(f, engine, operation, args))
        .unwrap_or_else(|e| panic!("{operation}: {e}"))
}

fn refusal(f: &Fixture, engine: &TestEngine, operation: &str, args: &str) -> ControlError {
    match control::build(&request(f, engine, operation, args)) {
        Ok(command) => panic!("{operation} built {command:?}"),
        Err(e) => {
            assert_eq!(e.class(), ErrorClass::Argument);
            e
        }
    }
}

/// Signs with the MissionOwner's key and passes ingress (schema, six stages).
fn signed(f: &Fixture, unsigned: &Value) -> VerifiedCommand {
    f.verified(OWNER, unsigned)
}

fn kind_of(events: &[Value]) -> &str {
    events[0].get("kind").and_then(Value::as_str).unwrap()
}

fn mission_state(engine: &TestEngine) -> String {
    state(engine, MISSION).0
}

fn create_args(mission: &str, group: &str, extra: &str) -> String {
    format!(
        r#"{{"missionId": "{mission}", "groupId": "{group}", "coordinatorId": "{COORDINATOR}",
        "title": "Close the books", "objective": "Close the July books",
        "definitionOfDone": ["The ledger balances",
          {{"criterionId": "tested", "description": "tests pass", "evidenceRequired": ["deterministic_test"]}}],
        "deadline": "2026-08-01T00:00:00Z", "budget": {{"toolCallLimit": 100}},
        "permissions": ["ledger.read"]{extra}}}"#
    )
}

/// An engine with the Mission created through `control` (the MissionOwner's Command).
fn created(f: &Fixture) -> TestEngine {
    let engine = f.engine();
    let command = build(f, &engine, "create", &create_args(MISSION, GROUP, ""));
    let events = f.ok(&engine, &signed(f, &command), NOW);
    assert_eq!(kind_of(&events), "mission.created");
    engine
}

#[test]
fn create_builds_an_accepted_mission_create() {
    let f = fixture();
    let engine = created(&f);
    let events = whole_log(&f, &engine);
    let mission = events[0].pointer("/payload/mission").unwrap();
    assert_eq!(
        mission
            .pointer("/definitionOfDone/0/criterionId")
            .and_then(Value::as_str),
        Some("criterion-1")
    );
    assert_eq!(
        mission
            .pointer("/coordinator/leaseId")
            .and_then(Value::as_str),
        Some(&*format!("{MISSION}:coordinator-lease:1"))
    );
    // The title and permissions travel in the noncritical extension, relayed into the Event.
    let ext = format!(
        "/extensions/{}/data/title",
        "urn:missionweaveprotocol:extension:human-control-create"
    );
    assert_eq!(
        events[0].pointer(&ext).and_then(Value::as_str),
        Some("Close the books")
    );
    assert_eq!(mission_state(&engine), "active");
}

#[test]
fn create_refuses_a_missing_budget_and_an_empty_definition_of_done() {
    let f = fixture();
    let engine = f.engine();
    let args =
        create_args(NEW_MISSION, NEW_GROUP, "").replace(r#""budget": {"toolCallLimit": 100},"#, "");
    let e = refusal(&f, &engine, "create", &args);
    assert_eq!(e, ControlError::BudgetRequired);
    assert_eq!(e.reason(), "budget_required");
    let args = create_args(NEW_MISSION, NEW_GROUP, "")
        .replace(r#""budget": {"toolCallLimit": 100}"#, r#""budget": null"#);
    assert_eq!(
        refusal(&f, &engine, "create", &args),
        ControlError::BudgetRequired
    );
    let args = format!(
        r#"{{"missionId": "{NEW_MISSION}", "groupId": "{NEW_GROUP}", "coordinatorId": "{COORDINATOR}",
        "title": "t", "objective": "o", "definitionOfDone": [], "deadline": "2026-08-01T00:00:00Z",
        "budget": {{"toolCallLimit": 1}}}}"#
    );
    assert_eq!(
        refusal(&f, &engine, "create", &args),
        ControlError::EmptyDefinitionOfDone
    );
    let e = refusal(&f, &engine, "create", r#"{"missionId": "urn:m:1"}"#);
    assert_eq!(
        (e.reason(), e.wire_code()),
        ("missing_argument", WireCode::InvalidCommand)
    );
    assert_eq!(
        refusal(&f, &engine, "launch", "{}"),
        ControlError::UnknownOperation("launch".into())
    );
}

#[test]
fn direct_posts_to_the_main_conversation_with_the_content_unchanged() {
    let f = fixture();
    let engine = created(&f);
    let content = format!("  {}  ", "x".repeat(600));
    let args = Value::Object({
        let mut a = json::Object::new();
        a.insert("content", Value::string(content.clone()));
        a
    });
    let mut r = request(&f, &engine, "direct", "{}");
    if let Value::Object(o) = &mut r {
        o.insert("args", args);
    }
    let command = control::build(&r).unwrap();
    assert_eq!(
        command
            .get("membershipEpoch")
            .and_then(|n| n.as_number()?.as_u64()),
        Some(1)
    );
    let events = f.ok(&engine, &signed(&f, &command), NOW);
    assert_eq!(kind_of(&events), "message.posted");
    // Gap 18 of the reference: no trimming, no 512-character cut.
    let text = events[0]
        .pointer("/payload/message/content/0/text")
        .and_then(Value::as_str);
    assert_eq!(text, Some(&*content));
    let e = refusal(&f, &engine, "direct", r#"{"content": 7}"#);
    assert_eq!(e.reason(), "invalid_argument");
    let e = refusal(
        &f,
        &engine,
        "direct",
        r#"{"content": "hi", "mentions": ["bob"]}"#,
    );
    assert_eq!(e.reason(), "invalid_argument");
}

#[test]
fn request_changes_and_approve_bind_the_submission_read_from_the_log() {
    let f = fixture();
    let engine = created(&f);
    // Nothing submitted: the reference's ValueError, decided before anything is signed.
    for op in ["request_changes", "approve"] {
        let e = refusal(&f, &engine, op, r#"{"feedback": "more"}"#);
        assert_eq!(e.reason(), "nothing_submitted", "{op}");
        assert_eq!(e.wire_code(), WireCode::InvalidStateTransition);
    }
    f.ok(&engine, &f.submit(1), NOW);
    // A renewal while awaiting approval moves the revision, not the submission.
    f.ok(
        &engine,
        &f.by_coordinator("mission.renew_coordinator", 1, "{}"),
        NOW,
    );
    let command = build(
        &f,
        &engine,
        "request_changes",
        r#"{"feedback": "add the notes"}"#,
    );
    assert_eq!(
        command
            .pointer("/payload/missionRevision")
            .and_then(|n| n.as_number()?.as_u64()),
        Some(2)
    );
    assert_eq!(
        command
            .get("expectedRevision")
            .and_then(|n| n.as_number()?.as_u64()),
        Some(3)
    );
    let events = f.ok(&engine, &signed(&f, &command), NOW);
    assert_eq!(kind_of(&events), "mission.changes_requested");
    assert_eq!(mission_state(&engine), "active");

    f.ok(&engine, &f.submit(1), NOW);
    let command = build(&f, &engine, "approve", r#"{"comments": "good"}"#);
    let mut hashes: Vec<&str> = command
        .pointer("/payload/artifactHashes")
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap())
        .collect();
    hashes.sort_unstable();
    assert_eq!(hashes, [HASH_A, HASH_B]);
    let events = f.ok(&engine, &signed(&f, &command), NOW);
    assert_eq!(kind_of(&events), "mission.approved");
    assert_eq!(mission_state(&engine), "approved");

    // The Approval Decision document, signed by the approver, verifies (Approval profile).
    let mut r = json::Object::new();
    r.insert("command", command.clone());
    r.insert("event", events[0].clone());
    r.insert(
        "mission",
        engine.mission(MISSION).unwrap().unwrap().document(),
    );
    let unsigned = control::approval_document(&Value::Object(r)).unwrap();
    let key = f
        .keys
        .iter()
        .find(|(p, _)| p.id == OWNER)
        .map(|(_, k)| k)
        .unwrap();
    let signed_approval = SignedDocumentCodec::new()
        .sign_and_verify(SignedDocumentKind::Approval, &unsigned, key, &f.registry)
        .unwrap()
        .0;
    let document = json::parse(&signed_approval.bytes).unwrap();
    SchemaCatalog::embedded()
        .validate("approval", &document)
        .unwrap();
    assert_eq!(
        document.get("kind").and_then(Value::as_str),
        Some("mission_final")
    );
    let e = control::approval_document(&parse(
        r#"{"command": {}, "event": {"kind": "x"}, "mission": {}}"#,
    ))
    .unwrap_err();
    assert_eq!(e.reason(), "invalid_argument");
}

#[test]
fn an_explicit_revision_or_artifact_set_is_sent_as_given_and_the_engine_judges_it() {
    let f = fixture();
    let engine = created(&f);
    f.ok(&engine, &f.submit(1), NOW);
    let command = build(
        &f,
        &engine,
        "approve",
        &format!(r#"{{"artifactHashes": ["{HASH_A}"]}}"#),
    );
    f.refused(
        &engine,
        &signed(&f, &command),
        NOW,
        WireCode::InvalidCommand,
    );
    let command = build(
        &f,
        &engine,
        "request_changes",
        r#"{"feedback": "x", "missionRevision": 9}"#,
    );
    f.refused(
        &engine,
        &signed(&f, &command),
        NOW,
        WireCode::RevisionConflict,
    );
}

#[test]
fn cancel_and_replace_coordinator_are_accepted_and_fence_by_revision() {
    let f = fixture();
    let engine = created(&f);
    let command = build(
        &f,
        &engine,
        "replace_coordinator",
        &format!(r#"{{"coordinatorId": "{WORKER}"}}"#),
    );
    assert_eq!(
        command.pointer("/payload/leaseId").and_then(Value::as_str),
        Some(&*format!("{MISSION}:coordinator-lease:2"))
    );
    let events = f.ok(&engine, &signed(&f, &command), NOW);
    assert_eq!(kind_of(&events), "mission.coordinator.assigned");
    let stale = build(&f, &engine, "cancel", r#"{"reason": "budget cut"}"#);
    // Another Command moves the Mission first: the cancel's expectedRevision is stale (§15.3).
    let again = build(
        &f,
        &engine,
        "replace_coordinator",
        &format!(r#"{{"coordinatorId": "{COORDINATOR}"}}"#),
    );
    f.ok(&engine, &signed(&f, &again), NOW);
    f.refused(
        &engine,
        &signed(&f, &stale),
        NOW,
        WireCode::RevisionConflict,
    );
    let command = build(&f, &engine, "cancel", r#"{"reason": "budget cut"}"#);
    let events = f.ok(&engine, &signed(&f, &command), NOW);
    assert_eq!(kind_of(&events), "mission.cancelled");
    let e = refusal(&f, &engine, "cancel", "{}");
    assert_eq!(
        e,
        ControlError::Missing {
            name: "args.reason".into()
        }
    );
}

#[test]
fn approve_execution_opens_the_start_gate() {
    let f = fixture();
    let engine = created(&f);
    let gated = contract(&[])
        .replace(r#""allowedResources":[]"#, &format!(r#""allowedResources":[{{"resource":"{RESOURCE}","operations":["production.deploy"]}}]"#))
        .replace(r#""sideEffectRisk":"none","executionApproval":"not_required""#, r#""sideEffectRisk":"high_risk","executionApproval":"human_required""#);
    f.ok(
        &engine,
        &f.by_coordinator(
            "work.authorize",
            1,
            &format!(
                r#"{{"workItemId":"{W1}","conversationId":"{CONVERSATION}","contract":{gated}}}"#
            ),
        ),
        NOW,
    );
    f.ok(&engine, &f.offer(W1, &[WORKER], "r1"), NOW);
    f.ok(&engine, &f.accept(WORKER, W1), NOW);
    let (epoch, lease) = ownership(&engine, W1);
    let start = || f.by_worker("work.start", WORKER, W1, epoch, &lease, "");
    f.refused(&engine, &start(), NOW, WireCode::ApprovalRequired);
    let args = format!(
        r#"{{"workItemId": "{W1}", "ownershipEpoch": {epoch}, "operations": ["production.deploy"], "resources": ["{RESOURCE}"]}}"#
    );
    let command = build(&f, &engine, "approve_execution", &args);
    let events = f.ok(&engine, &signed(&f, &command), NOW);
    assert_eq!(kind_of(&events), "approval.execution.granted");
    f.ok(&engine, &start(), NOW);
    let e = refusal(
        &f,
        &engine,
        "approve_execution",
        &format!(r#"{{"workItemId": "{W1}", "ownershipEpoch": 1}}"#),
    );
    assert_eq!(
        e,
        ControlError::Missing {
            name: "args.operations".into()
        }
    );
}

#[test]
fn the_signature_check_accepts_the_owners_key_only() {
    let f = fixture();
    let engine = created(&f);
    let command = build(&f, &engine, "cancel", r#"{"reason": "r"}"#);
    let key = |id: &str| {
        f.keys
            .iter()
            .find(|(p, _)| p.id == id)
            .map(|(_, k)| k.clone())
            .unwrap()
    };
    let owner_key = key(OWNER);
    let signed = SignedDocumentCodec::new()
        .sign(SignedDocumentKind::Command, &command, &owner_key)
        .unwrap();
    let document = json::parse(&signed.bytes).unwrap();
    assert!(control::verify_signature(
        &document,
        owner_key.key_id(),
        &owner_key.public_key_bytes()
    ));
    let other = key(OTHER_HUMAN);
    assert!(!control::verify_signature(
        &document,
        other.key_id(),
        &other.public_key_bytes()
    ));
    assert!(!control::verify_signature(
        &document,
        owner_key.key_id(),
        &other.public_key_bytes()
    ));
    let tampered = json::parse(
        &String::from_utf8(signed.bytes.clone())
            .unwrap()
            .replace("\"r\"", "\"s\"")
            .into_bytes(),
    )
    .unwrap();
    assert!(!control::verify_signature(
        &tampered,
        owner_key.key_id(),
        &owner_key.public_key_bytes()
    ));
    assert!(!control::verify_signature(
        &command,
        owner_key.key_id(),
        &owner_key.public_key_bytes()
    ));
}

#[test]
fn mission_operations_need_the_queried_mission_and_object_arguments() {
    let mut r = json::Object::new();
    r.insert("operation", Value::string("cancel"));
    r.insert("humanId", Value::string(OWNER));
    r.insert(
        "actionId",
        Value::string("urn:missionweaveprotocol:action:x"),
    );
    r.insert("issuedAt", Value::string(NOW_TEXT));
    r.insert("args", parse(r#"{"reason": "r"}"#));
    let e = control::build(&Value::Object(r.clone())).unwrap_err();
    assert_eq!(
        e,
        ControlError::Missing {
            name: "mission".into()
        }
    );
    r.insert("mission", Value::string("not a document"));
    let e = control::build(&Value::Object(r.clone())).unwrap_err();
    assert_eq!(
        (e.reason(), e.wire_code()),
        ("invalid_argument", WireCode::InvalidCommand)
    );
    r.insert("args", parse("[1]"));
    let e = control::build(&Value::Object(r)).unwrap_err();
    assert_eq!(
        e,
        ControlError::Invalid {
            name: "args".into(),
            expected: "an object"
        }
    );
    assert!(control::latest_submission(MISSION, &[]).is_none());
}

/// `control::view` from the Group's Events alone (the page's projections): the Mission and the
/// owner's Membership Epoch equal the Core's, and the Command built from them is the one built
/// from the queried projections; a log out of order or from another Group is refused.
#[test]
fn the_view_from_the_log_alone_builds_the_same_commands() {
    let f = fixture();
    let engine = created(&f);
    f.ok(&engine, &f.submit(1), NOW);
    let log = whole_log(&f, &engine);
    let view = control::view(OWNER, &log).unwrap();
    let mission = engine.mission(MISSION).unwrap().unwrap();
    assert_eq!(view.get("mission"), Some(&mission.document()));
    let membership = engine.membership(GROUP, &owner()).unwrap().unwrap();
    assert_eq!(
        view.pointer("/membership/membershipEpoch"),
        membership.to_value().get("membershipEpoch")
    );
    assert_eq!(
        view.pointer("/membership/state").and_then(Value::as_str),
        Some("active")
    );
    // The same Command from the view as from the queried projections.
    let queried = request(&f, &engine, "approve", r#"{"comments": "good"}"#);
    let mut from_log = queried.as_object().unwrap().clone();
    from_log.insert("mission", view.get("mission").unwrap().clone());
    from_log.insert("membership", view.get("membership").unwrap().clone());
    assert_eq!(
        control::build(&Value::Object(from_log)).unwrap(),
        control::build(&queried).unwrap()
    );
    // Someone else has no Membership; an empty log has no Mission.
    let stranger = control::view("urn:missionweaveprotocol:human:mallory", &log).unwrap();
    assert_eq!(stranger.get("membership"), Some(&Value::Null));
    let empty = control::view(OWNER, &[]).unwrap();
    assert_eq!(empty.get("mission"), Some(&Value::Null));
    // A log with an Event missing or out of order is refused, never half-read.
    let mut reordered = log.clone();
    reordered.swap(0, log.len() - 1);
    let e = control::view(OWNER, &reordered).unwrap_err();
    assert_eq!(e.reason(), "invalid_argument");
    let e = control::view(OWNER, &log[1..]).unwrap_err();
    assert_eq!(e.reason(), "invalid_argument");
}
