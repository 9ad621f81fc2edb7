//! §21: core payloads are closed. Every Command kind the engine implements has one member set
//! (`input::members::TABLE`); a member outside it — a typo, a capability token — is refused
//! `SCHEMA_VALIDATION_FAILED` (`unknown_payload_member`, naming the kind and the member) before
//! anything is read, and nothing is applied. Each family: a typo'd member refused naming it, and
//! a Command carrying the kind's full member set accepted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_work_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol::json::{self, Number, Object, Value};
use missionweaveprotocol::{DescribeError, FieldValue, WireCode};
use missionweaveprotocol_engine::EngineError;
use missionweaveprotocol_engine::input::members::{self, Nested, TABLE};

fn field(error: &EngineError, name: &str) -> String {
    match error.fields().iter().find(|(n, _)| *n == name) {
        Some((_, FieldValue::Text(t))) => t.clone(),
        other => panic!("no text field {name}: {other:?}"),
    }
}

/// The refusal names the kind, the member and its pointer.
fn names(error: &EngineError, kind: &str, member: &str, pointer: &str) {
    assert_eq!(
        error.wire_code(),
        WireCode::SchemaValidationFailed,
        "{error}"
    );
    assert_eq!(error.reason(), "unknown_payload_member");
    assert_eq!(field(error, "command_kind"), kind);
    assert_eq!(field(error, "member"), member);
    assert_eq!(field(error, "pointer"), pointer);
    assert!(error.to_string().contains(pointer), "{error}");
}

// ---- the table -----------------------------------------------------------------------------

/// Every kind the engine's families handle, from their own lists.
fn implemented() -> Vec<&'static str> {
    use missionweaveprotocol_engine::*;
    let mut kinds: Vec<&str> = Vec::new();
    kinds.extend(mission::KINDS);
    kinds.extend(membership::KINDS);
    kinds.extend(message::KINDS);
    kinds.extend(work::KINDS);
    kinds.extend([
        artifact::PUBLISH,
        approval::GRANT_EXECUTION,
        delegation::GRANT_DELEGATION,
        cooperation_override::GRANT_COOPERATION_OVERRIDE,
        organization::SESSION_OPEN,
        organization::AGENT_CARD_REGISTER,
        archive::GROUP_ARCHIVE,
    ]);
    kinds
}

#[test]
fn the_table_lists_exactly_the_38_implemented_kinds_once() {
    let kinds = implemented();
    assert_eq!(kinds.len(), 38);
    assert_eq!(TABLE.len(), 38);
    for kind in &kinds {
        assert_eq!(
            TABLE.iter().filter(|k| k.kind == *kind).count(),
            1,
            "{kind} is listed once"
        );
    }
    for entry in TABLE {
        assert!(kinds.contains(&entry.kind), "{} is implemented", entry.kind);
        let mut names: Vec<&str> = entry.names().collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(
            names.len(),
            entry.members.len(),
            "{}: no duplicates",
            entry.kind
        );
    }
    assert!(members::payload_members("ext.acme.other.kind").is_none());
}

/// A value carrying every member a nested closure allows.
fn full_value(nested: Nested) -> Value {
    fn object(names: &[&str]) -> Value {
        let mut o = Object::new();
        for name in names {
            o.insert(name, Value::Number(Number::from_u64(1)));
        }
        Value::Object(o)
    }
    match nested {
        Nested::Open => Value::Number(Number::from_u64(1)),
        Nested::Object(names) => object(names),
        Nested::Items(names) => Value::Array(vec![object(names)]),
        Nested::Tagged(parts) => Value::Array(
            parts
                .iter()
                .map(|(tag, names)| {
                    let mut o = object(names);
                    if let Value::Object(o) = &mut o {
                        o.insert("type", Value::string(*tag));
                    }
                    o
                })
                .collect(),
        ),
    }
}

fn full_payload(kind: &str) -> Object {
    let entry = members::payload_members(kind).unwrap();
    let mut payload = Object::new();
    for m in entry.members {
        payload.insert(m.name, full_value(m.nested));
    }
    payload
}

#[test]
fn every_kinds_full_member_set_passes_and_any_other_member_is_refused() {
    for entry in TABLE {
        let payload = full_payload(entry.kind);
        members::check(entry.kind, &Value::Object(payload.clone()))
            .unwrap_or_else(|e| panic!("{}: the full set is refused: {e}", entry.kind));
        for typo in ["extra", "workItemID", "authorization", "Reason"] {
            let mut wrong = payload.clone();
            wrong.insert(typo, Value::Bool(true));
            let e = members::check(entry.kind, &Value::Object(wrong)).unwrap_err();
            names(&e, entry.kind, typo, &format!("/payload/{typo}"));
        }
    }
}

#[test]
fn every_nested_closure_refuses_an_extra_member() {
    let mut closures = 0;
    for entry in TABLE {
        for m in entry.members {
            let mut value = full_value(m.nested);
            let pointer = match (&mut value, m.nested) {
                (_, Nested::Open) => continue,
                (Value::Object(o), Nested::Object(_)) => {
                    o.insert("extraMember", Value::Bool(true));
                    format!("/payload/{}/extraMember", m.name)
                }
                (Value::Array(items), _) => {
                    let last = items.len() - 1;
                    if let Value::Object(o) = &mut items[last] {
                        o.insert("extraMember", Value::Bool(true));
                    }
                    format!("/payload/{}/{last}/extraMember", m.name)
                }
                _ => unreachable!(),
            };
            let mut payload = full_payload(entry.kind);
            payload.insert(m.name, value);
            let e = members::check(entry.kind, &Value::Object(payload)).unwrap_err();
            names(&e, entry.kind, "extraMember", &pointer);
            closures += 1;
        }
    }
    assert!(closures >= 25, "{closures} nested closures");
}

#[test]
fn a_member_name_is_escaped_in_the_pointer_and_kinds_outside_the_table_pass() {
    let payload = json::parse(br#"{"reason": "x", "a/b~c": 1}"#).unwrap();
    let e = members::check("mission.cancel", &payload).unwrap_err();
    names(&e, "mission.cancel", "a/b~c", "/payload/a~1b~0c");
    members::check("ext.acme.other.kind", &payload).unwrap();
    // A payload that is not an object is ingress' schema check's, not this table's.
    members::check("mission.cancel", &Value::Null).unwrap();
}

// ---- Mission kinds ----------------------------------------------------------------------------

#[test]
fn mission_a_typo_is_refused_naming_it_and_nothing_is_created() {
    let f = fixture();
    let engine = f.engine();
    let payload = f.create_payload(MISSION, r#", "coordinatorLeaseSecond": 600"#);
    let e = f.refused(
        &engine,
        &f.command("mission.create", OWNER, "", &payload),
        NOW,
        WireCode::SchemaValidationFailed,
    );
    names(
        &e,
        "mission.create",
        "coordinatorLeaseSecond",
        "/payload/coordinatorLeaseSecond",
    );
    assert!(engine.mission(MISSION).unwrap().is_none());
    // Inside the Coordinator reference (the engine rebuilds it, so nothing else would see it).
    let nested = f.create_payload(MISSION, "").replace(
        r#""leaseId": "urn"#,
        r#""coordinatorEpoch": 7, "leaseId": "urn"#,
    );
    let e = f.refused(
        &engine,
        &f.command("mission.create", OWNER, "", &nested),
        NOW,
        WireCode::SchemaValidationFailed,
    );
    names(
        &e,
        "mission.create",
        "coordinatorEpoch",
        "/payload/coordinator/coordinatorEpoch",
    );
    // A root Mission has no `parent` (that is `mission.create_child`).
    let parent = f.create_payload(
        MISSION,
        r#", "parent": {"missionId": "urn:missionweaveprotocol:mission:p", "workItemId": "urn:missionweaveprotocol:work:p", "depth": 1}"#,
    );
    let e = f.refused(
        &engine,
        &f.command("mission.create", OWNER, "", &parent),
        NOW,
        WireCode::SchemaValidationFailed,
    );
    names(&e, "mission.create", "parent", "/payload/parent");
    // And on an existing Mission: a typo'd `reason`.
    let engine = f.active();
    let e = f.refused(
        &engine,
        &f.command(
            "mission.cancel",
            OWNER,
            "",
            r#"{"reasons": "no longer needed"}"#,
        ),
        NOW,
        WireCode::SchemaValidationFailed,
    );
    names(&e, "mission.cancel", "reasons", "/payload/reasons");
    assert_eq!(state(&engine, MISSION), ("active".to_owned(), 1));
}

#[test]
fn mission_kinds_with_their_full_member_sets_are_accepted() {
    let f = fixture();
    let engine = f.engine();
    let full = f.create_payload(
        MISSION,
        &format!(
            r#", "groupId": "{GROUP}", "coordinatorLeaseSeconds": 600,
            "pinnedProfiles": [{{"profileUri": "https://example.org/profiles/finance", "majorVersion": 1}}]"#
        ),
    );
    f.ok(&engine, &f.command("mission.create", OWNER, "", &full), NOW);
    f.ok(
        &engine,
        &f.by_coordinator("mission.renew_coordinator", 1, r#"{"leaseSeconds": 600}"#),
        NOW,
    );
    f.ok(&engine, &f.submit(1), NOW);
    let revision = state(&engine, MISSION).1;
    f.ok(
        &engine,
        &f.command(
            "mission.request_changes",
            OWNER,
            "",
            &format!(r#"{{"missionRevision": {revision}, "feedback": "add the totals"}}"#),
        ),
        NOW,
    );
    f.ok(&engine, &f.submit(1), NOW);
    let revision = state(&engine, MISSION).1;
    f.ok(
        &engine,
        &f.command(
            "mission.approve",
            OWNER,
            "",
            &format!(
                r#"{{"approvalId": "urn:missionweaveprotocol:approval:1", "missionRevision": {revision},
                "artifactHashes": ["{HASH_A}", "{HASH_B}"], "acceptancePolicyVersion": "1.0.0",
                "comments": "fine"}}"#
            ),
        ),
        NOW,
    );
    assert_eq!(state(&engine, MISSION).0, "approved");
}

// ---- Membership kinds -----------------------------------------------------------------------

#[test]
fn membership_a_typo_and_an_extra_actor_member_are_refused() {
    let f = fixture();
    let engine = f.active();
    let e = f.refused(
        &engine,
        &f.command(
            "membership.change",
            OWNER,
            "",
            &format!(
                r#"{{"member": {{"type": "agent", "id": "{WORKER}"}}, "role": "worker",
                "scopes": ["work"], "visibilityStart": 0}}"#
            ),
        ),
        NOW,
        WireCode::SchemaValidationFailed,
    );
    names(
        &e,
        "membership.change",
        "visibilityStart",
        "/payload/visibilityStart",
    );
    let e = f.refused(
        &engine,
        &f.command(
            "membership.end",
            OWNER,
            "",
            &format!(r#"{{"member": {{"type": "agent", "id": "{WORKER}", "epoch": 1}}}}"#),
        ),
        NOW,
        WireCode::SchemaValidationFailed,
    );
    names(&e, "membership.end", "epoch", "/payload/member/epoch");
}

#[test]
fn membership_kinds_with_their_full_member_sets_are_accepted() {
    let f = fixture();
    let engine = f.active();
    f.ok(
        &engine,
        &f.command(
            "membership.change",
            OWNER,
            "",
            &format!(
                r#"{{"member": {{"type": "agent", "id": "{WORKER}"}}, "role": "worker",
                "scopes": ["work"], "visibilityStartSequence": 0, "provisional": true,
                "contextPackageId": "urn:missionweaveprotocol:context:1",
                "provisionalExpiresAt": "2026-07-15T10:30:00Z"}}"#
            ),
        ),
        NOW,
    );
    f.ok(
        &engine,
        &f.command(
            "membership.end",
            OWNER,
            "",
            &format!(r#"{{"member": {{"type": "agent", "id": "{WORKER}"}}}}"#),
        ),
        NOW,
    );
}

// ---- WorkItem kinds (and the usage record) ----------------------------------------------------

#[test]
fn work_a_typo_is_refused_naming_it_and_the_item_is_unchanged() {
    let f = fixture();
    let engine = f.active();
    f.queued(&engine, W1);
    let (revision, _) = stored(&engine, W1);
    let (epoch, lease) = ownership(&engine, W1);
    let e = f.refused(
        &engine,
        &f.by_worker(
            "work.start",
            WORKER,
            W1,
            epoch,
            &lease,
            r#""leaseSecond":60"#,
        ),
        NOW,
        WireCode::SchemaValidationFailed,
    );
    names(&e, "work.start", "leaseSecond", "/payload/leaseSecond");
    assert_eq!(stored(&engine, W1).0, revision);
    assert_eq!(item_state(&engine, W1), "queued");
    // An offer candidate is closed too.
    f.ok(&engine, &f.authorize(W2, &[]), NOW);
    let offer = f.by_coordinator(
        "work.offer",
        1,
        &format!(
            r#"{{"workItemId":"{W2}","candidates":[{{"offerId":"urn:missionweaveprotocol:offer:x","agentId":"{WORKER}","agentCardVersion":1,"status":"accepted"}}],"selectionBasis":{}}}"#,
            selection_basis()
        ),
    );
    let e = f.refused(&engine, &offer, NOW, WireCode::SchemaValidationFailed);
    names(&e, "work.offer", "status", "/payload/candidates/0/status");
    assert_eq!(item_state(&engine, W2), "open");
}

#[test]
fn the_usage_record_refuses_a_typo_and_charges_nothing() {
    let f = fixture();
    let engine = f.active();
    f.active_item(&engine, W1);
    let (epoch, lease) = execution(&engine, W1);
    let record = f.by_worker(
        "ext.missionweaveprotocol.core.resource_usage_record",
        WORKER,
        W1,
        epoch,
        &lease,
        r#""usageDelta":{"toolCalls":1},"usageDeltas":{"toolCalls":1}"#,
    );
    let e = f.refused(&engine, &record, NOW, WireCode::SchemaValidationFailed);
    names(
        &e,
        "ext.missionweaveprotocol.core.resource_usage_record",
        "usageDeltas",
        "/payload/usageDeltas",
    );
}

#[test]
fn work_kinds_with_their_full_member_sets_are_accepted() {
    let f = fixture();
    let engine = f.active();
    // work.propose {proposalId, contract}; work.authorize with every member but the Grant
    // (`delegationGrantId`: tests/engine_delegation_grants.rs).
    let proposal = "urn:missionweaveprotocol:proposal:p1";
    f.ok(
        &engine,
        &f.by_coordinator(
            "work.propose",
            1,
            &format!(
                r#"{{"proposalId":"{proposal}","contract":{}}}"#,
                contract(&[])
            ),
        ),
        NOW,
    );
    f.ok(&engine, &f.authorize(W2, &[]), NOW);
    f.ok(
        &engine,
        &f.by_coordinator(
            "work.authorize",
            1,
            &format!(
                r#"{{"workItemId":"{W1}","conversationId":"{CONVERSATION}","contract":{},"proposalId":"{proposal}","exclusive":true,"parentWorkItemId":"{W2}"}}"#,
                contract(&[])
            ),
        ),
        NOW,
    );
    f.ok(
        &engine,
        &f.by_coordinator(
            "work.offer",
            1,
            &format!(
                r#"{{"workItemId":"{W1}","candidates":[{{"offerId":"urn:missionweaveprotocol:offer:1","agentId":"{WORKER}","agentCardVersion":1}}],"selectionBasis":{},"offerExpiresInSeconds":600}}"#,
                selection_basis()
            ),
        ),
        NOW,
    );
    f.ok(
        &engine,
        &f.command(
            "work.accept_offer",
            WORKER,
            "",
            &format!(
                r#"{{"workItemId":"{W1}","capabilityPins":[{{"id":"text.summarise","version":"1.2.0"}}],"leaseSeconds":600}}"#
            ),
        ),
        NOW,
    );
    let (epoch, lease) = ownership(&engine, W1);
    f.ok(
        &engine,
        &f.by_worker(
            "work.start",
            WORKER,
            W1,
            epoch,
            &lease,
            r#""leaseSeconds":600"#,
        ),
        NOW,
    );
    let (epoch, lease) = execution(&engine, W1);
    f.ok(
        &engine,
        &f.by_worker(
            "ext.missionweaveprotocol.core.work_execution_lease_renew",
            WORKER,
            W1,
            epoch,
            &lease,
            r#""leaseSeconds":900,"progress":{"currentPhase":"drafting","completedMilestones":["outline"],"nextCheckpoint":"draft","blockers":[],"updatedCompletionEstimate":"2026-07-15T11:00:00Z","evidenceIds":[]}"#,
        ),
        NOW,
    );
    f.ok(
        &engine,
        &f.by_worker(
            "ext.missionweaveprotocol.core.resource_usage_record",
            WORKER,
            W1,
            epoch,
            &lease,
            r#""usageDelta":{"toolCalls":1}"#,
        ),
        NOW,
    );
    f.ok(
        &engine,
        &f.by_worker(
            "work.block",
            WORKER,
            W1,
            epoch,
            &lease,
            &format!(
                r#""reason":"waiting for the bank","leaseSeconds":600,{}"#,
                Fixture::checkpoint_members()
            ),
        ),
        NOW,
    );
    f.ok(
        &engine,
        &f.by_coordinator(
            "work.unblock",
            1,
            &format!(r#"{{"workItemId":"{W1}","leaseSeconds":600}}"#),
        ),
        NOW,
    );
    let (epoch, lease) = ownership(&engine, W1);
    f.ok(
        &engine,
        &f.by_worker("work.start", WORKER, W1, epoch, &lease, ""),
        NOW,
    );
    let (epoch, lease) = execution(&engine, W1);
    f.ok(
        &engine,
        &f.by_worker(
            "work.checkpoint",
            WORKER,
            W1,
            epoch,
            &lease,
            &format!(r#""leaseSeconds":600,{}"#, Fixture::checkpoint_members()),
        ),
        NOW,
    );
    let (epoch, lease) = ownership(&engine, W1);
    f.ok(
        &engine,
        &f.by_worker("work.start", WORKER, W1, epoch, &lease, ""),
        NOW,
    );
    f.publish_artifact(&engine, W1);
    let (epoch, lease) = execution(&engine, W1);
    f.ok(
        &engine,
        &f.by_worker(
            "work.submit",
            WORKER,
            W1,
            epoch,
            &lease,
            &Fixture::submit_members(W1),
        ),
        NOW,
    );
    f.ok(&engine, &f.accept_result(W1), NOW);
    assert_eq!(item_state(&engine, W1), "verified");
    // The other rows' kinds: dependency insertion, the owner's failure report, cancellation.
    let w3 = "urn:missionweaveprotocol:work:audit";
    f.ok(&engine, &f.authorize(w3, &[]), NOW);
    f.ok(
        &engine,
        &f.by_coordinator(
            "ext.missionweaveprotocol.core.work_dependency_add",
            1,
            &format!(r#"{{"workItemId":"{w3}","dependencyId":"{W1}"}}"#),
        ),
        NOW,
    );
    f.ok(
        &engine,
        &f.by_coordinator(
            "work.cancel",
            1,
            &format!(r#"{{"workItemId":"{w3}","reason":"not needed"}}"#),
        ),
        NOW,
    );
    let w4 = "urn:missionweaveprotocol:work:fx";
    f.queued(&engine, w4);
    let (epoch, lease) = ownership(&engine, w4);
    f.ok(
        &engine,
        &f.by_worker("work.start", WORKER, w4, epoch, &lease, ""),
        NOW,
    );
    let (epoch, lease) = execution(&engine, w4);
    f.ok(
        &engine,
        &f.by_worker(
            "work.fail",
            WORKER,
            w4,
            epoch,
            &lease,
            r#""reason":"the bank is down","evidenceIds":["urn:missionweaveprotocol:evidence:outage"]"#,
        ),
        NOW,
    );
    assert_eq!(item_state(&engine, w4), "failed");
}

// ---- artifact.publish, approval.grant_execution, the Grants ----------------------------------

#[test]
fn artifact_publish_refuses_a_typo_before_verifying_the_manifest() {
    let f = fixture();
    let engine = f.active();
    f.active_item(&engine, W1);
    let publish = f.publish_command(&engine, W1);
    let mut unsigned = publish.document().clone();
    if let Value::Object(o) = &mut unsigned {
        o.remove("signature");
        if let Some(Value::Object(mut p)) = o.remove("payload") {
            p.insert("workItemID", Value::string(W1));
            o.insert("payload", Value::Object(p));
        }
    }
    let command = f.verified(WORKER, &unsigned);
    let before = last_sequence(&engine);
    let e = engine
        .perform_with_resolver(&command, NOW, &f.registry)
        .unwrap_err();
    names(&e, "artifact.publish", "workItemID", "/payload/workItemID");
    assert_eq!(last_sequence(&engine), before);
    // The full set {manifest, ownershipEpoch, leaseId} is the fixture's own publication.
    f.publish_artifact(&engine, W1);
}

#[test]
fn approval_grant_execution_refuses_a_typo_and_accepts_its_full_set() {
    let f = fixture();
    let engine = f.active();
    let resource = "urn:missionweaveprotocol:resource:prod";
    let gated = contract(&[])
        .replace(
            r#""allowedResources":[]"#,
            &format!(
                r#""allowedResources":[{{"resource":"{resource}","operations":["production.deploy"]}}]"#
            ),
        )
        .replace(
            r#""sideEffectRisk":"none","executionApproval":"not_required""#,
            r#""sideEffectRisk":"high_risk","executionApproval":"human_required""#,
        );
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
    let (epoch, _) = ownership(&engine, W1);
    let typo = format!(
        r#"{{"approvalId":"urn:missionweaveprotocol:approval:x","workItemId":"{W1}","ownershipEpoch":{epoch},"operations":["production.deploy"],"expiresInSecond":60}}"#
    );
    let e = f.refused(
        &engine,
        &f.command("approval.grant_execution", OWNER, "", &typo),
        NOW,
        WireCode::SchemaValidationFailed,
    );
    names(
        &e,
        "approval.grant_execution",
        "expiresInSecond",
        "/payload/expiresInSecond",
    );
    let budget = format!(
        r#"{{"approvalId":"urn:missionweaveprotocol:approval:x","workItemId":"{W1}","ownershipEpoch":{epoch},"operations":["production.deploy"],"budget":{{"toolCallLimit":5,"toolCalls":5}}}}"#
    );
    let e = f.refused(
        &engine,
        &f.command("approval.grant_execution", OWNER, "", &budget),
        NOW,
        WireCode::SchemaValidationFailed,
    );
    names(
        &e,
        "approval.grant_execution",
        "toolCalls",
        "/payload/budget/toolCalls",
    );
    let full = format!(
        r#"{{"approvalId":"urn:missionweaveprotocol:approval:x","workItemId":"{W1}","ownershipEpoch":{epoch},"operations":["production.deploy"],"resources":["urn:missionweaveprotocol:resource:prod"],"budget":{{"toolCallLimit":5}},"expiresInSeconds":600,"comments":"go"}}"#
    );
    f.ok(
        &engine,
        &f.command("approval.grant_execution", OWNER, "", &full),
        NOW,
    );
}

#[test]
fn the_grants_refuse_typos_and_extra_actor_members() {
    let f = fixture();
    let engine = f.active();
    f.ok(&engine, &f.authorize(W1, &[]), NOW);
    let e = f.refused(
        &engine,
        &f.by_coordinator(
            "membership.grant_delegation",
            1,
            &format!(
                r#"{{"grantId":"urn:missionweaveprotocol:grant:1","granteeAgentId":"{WORKER}","targetWorkItemId":"{W1}","allowedCapabilities":[],"budget":{{"toolCallLimit":1}},"maxDescendantDepth":1,"expiresAt":"2026-07-16T00:00:00Z","maxDepth":1}}"#
            ),
        ),
        NOW,
        WireCode::SchemaValidationFailed,
    );
    names(
        &e,
        "membership.grant_delegation",
        "maxDepth",
        "/payload/maxDepth",
    );
    let override_payload = |beneficiary: &str| {
        format!(
            r#"{{"grantId":"urn:missionweaveprotocol:override:1","policyName":"proposal_rate","beneficiary":{beneficiary},"targetCommandKind":"work.propose","targetActionId":"urn:missionweaveprotocol:action:x","reason":"month end","expiresAt":"2026-07-16T00:00:00Z"}}"#
        )
    };
    let e = f.refused(
        &engine,
        &f.command(
            "policy.grant_cooperation_override",
            OWNER,
            "",
            &override_payload(&format!(
                r#"{{"type":"agent","id":"{COORDINATOR}","role":"coordinator"}}"#
            )),
        ),
        NOW,
        WireCode::SchemaValidationFailed,
    );
    names(
        &e,
        "policy.grant_cooperation_override",
        "role",
        "/payload/beneficiary/role",
    );
    // The cooperation override's full set.
    f.ok(
        &engine,
        &f.command(
            "policy.grant_cooperation_override",
            OWNER,
            "",
            &override_payload(&format!(r#"{{"type":"agent","id":"{COORDINATOR}"}}"#)),
        ),
        NOW,
    );
}

// ---- Messages -------------------------------------------------------------------------------

#[test]
fn message_a_typo_and_an_extra_content_part_member_are_refused() {
    let f = fixture();
    let engine = f.active();
    let conversation = "urn:missionweaveprotocol:conversation:finance-main";
    let post = |rest: &str| {
        format!(
            r#"{{"messageId":"urn:missionweaveprotocol:message:1","conversationId":"{conversation}",{rest}}}"#
        )
    };
    let e = f.refused(
        &engine,
        &f.command(
            "message.post",
            COORDINATOR,
            "",
            &post(r#""content":[{"type":"text","text":"hi"}],"replyto":"urn:missionweaveprotocol:message:0""#),
        ),
        NOW,
        WireCode::SchemaValidationFailed,
    );
    names(&e, "message.post", "replyto", "/payload/replyto");
    let e = f.refused(
        &engine,
        &f.command(
            "message.post",
            COORDINATOR,
            "",
            &post(&format!(
                r#""content":[{{"type":"text","text":"hi"}},{{"type":"artifact_ref","artifactHash":"{HASH_A}","text":"see"}}]"#
            )),
        ),
        NOW,
        WireCode::SchemaValidationFailed,
    );
    names(&e, "message.post", "text", "/payload/content/1/text");
    f.ok(
        &engine,
        &f.command(
            "message.post",
            COORDINATOR,
            "",
            &post(&format!(
                r#""content":[{{"type":"text","text":"hi"}},{{"type":"artifact_ref","artifactHash":"{HASH_A}"}}],"mentions":[{{"type":"human","id":"{OWNER}"}}],"references":["urn:missionweaveprotocol:artifact:x"],"authority":false"#
            )),
        ),
        NOW,
    );
}

// ---- Organization-scoped service kinds and the archive ----------------------------------------

#[test]
fn the_service_kinds_refuse_a_typo() {
    let f = fixture();
    let engine = f.engine();
    let open = f.verified(
        SERVICE,
        &f.unsigned_service(
            "ext.missionweaveprotocol.identity.session_open",
            &f.action(),
            &format!(r#"{{"agentId": "{COORDINATOR}", "sessionEpoch": 9}}"#),
        ),
    );
    let e = engine.perform(&open, NOW).unwrap_err();
    names(
        &e,
        "ext.missionweaveprotocol.identity.session_open",
        "sessionEpoch",
        "/payload/sessionEpoch",
    );
    let register = f.verified(
        SERVICE,
        &f.unsigned_service(
            "ext.missionweaveprotocol.registry.agent_card_register",
            &f.action(),
            r#"{"agentCard": {}, "card": {}}"#,
        ),
    );
    let e = engine
        .perform_with_resolver(&register, NOW, &f.registry)
        .unwrap_err();
    names(
        &e,
        "ext.missionweaveprotocol.registry.agent_card_register",
        "card",
        "/payload/card",
    );
    // The full set of session_open is the fixture's own `{agentId}`: a replacement Session.
    f.ok(&engine, &f.session_open(COORDINATOR), NOW);
}

#[test]
fn group_archive_refuses_a_typo_before_verifying_the_snapshot() {
    let f = fixture();
    let engine = f.active();
    let archive = f.verified(
        SERVICE,
        &f.unsigned(
            "ext.missionweaveprotocol.core.group_archive",
            SERVICE,
            &f.action(),
            "",
            r#"{"snapshot": {}, "reason": "retention"}"#,
        ),
    );
    let before = last_sequence(&engine);
    let e = engine
        .perform_with_resolver(&archive, NOW, &f.registry)
        .unwrap_err();
    names(
        &e,
        "ext.missionweaveprotocol.core.group_archive",
        "reason",
        "/payload/reason",
    );
    assert_eq!(last_sequence(&engine), before);
}
