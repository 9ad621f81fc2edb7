//! "Stale" means any epoch or revision but the current one, older **and** newer: a fencing
//! check that only compared one way (`>` for `!=`) would let a client that missed an update
//! through. For every fence the engine applies — Coordinator Epoch (§7.2), Ownership Epoch
//! (§4.5, §11.3), Session Epoch (§6.3), Membership Epoch (§8) and `expectedRevision` (§15.3) —
//! the current value is advanced past 1 first, so a valid older value exists, and then both the
//! older (current − 1) and the newer (current + 1) value are refused with nothing appended;
//! the current value applies.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_work_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol::{DescribeError, FieldValue, WireCode};
use missionweaveprotocol_engine::ingress::VerifiedCommand;
use missionweaveprotocol_engine::store::Store;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

const CHILD: &str = "urn:missionweaveprotocol:mission:close-books-ledger";
const CHILD_GROUP: &str = "urn:missionweaveprotocol:group:finance-ledger";

/// Re-appoints `COORDINATOR` under a new lease: Coordinator Epoch 1 → 2.
fn advance_coordinator_epoch(f: &Fixture, engine: &TestEngine) {
    f.ok(
        engine,
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
    let m = engine.mission(MISSION).unwrap().unwrap();
    assert_eq!(m.coordinator().coordinator_epoch, 2);
}

/// Every Coordinator-fenced kind, with a payload that would apply at the current epoch.
fn coordinator_kinds() -> Vec<(&'static str, String)> {
    vec![
        (
            "mission.renew_coordinator",
            r#"{"leaseSeconds": 120}"#.to_owned(),
        ),
        (
            "mission.submit_for_approval",
            format!(r#"{{"artifactHashes": ["{HASH_A}"]}}"#),
        ),
        (
            "mission.terminate",
            r#"{"reason": "no longer needed"}"#.to_owned(),
        ),
        (
            "mission.create_child",
            format!(
                r#"{{"parentWorkItemId": "{W1}", "missionId": "{CHILD}", "groupId": "{CHILD_GROUP}",
                "objective": "Reconcile the ledger in depth",
                "definitionOfDone": [{{"criterionId": "ledger-reconciled", "description": "Reconciled",
                  "evidenceRequired": ["reviewer_assessment"]}}],
                "budget": {{"toolCallLimit": 5}}, "deadline": "2026-07-31T00:00:00Z",
                "approvalPolicy": {{"finalHumanApproval": false, "highRiskExecutionApproval": true}},
                "coordinator": {{"agentId": "{WORKER}", "agentCardVersion": 1,
                  "leaseId": "urn:missionweaveprotocol:lease:child"}},
                "mainConversationId": "urn:missionweaveprotocol:conversation:child"}}"#
            ),
        ),
        (
            "membership.change",
            format!(
                r#"{{"member": {{"type": "agent", "id": "{WORKER}"}}, "role": "worker", "scopes": ["work"]}}"#
            ),
        ),
        (
            "work.authorize",
            format!(
                r#"{{"workItemId":"{W2}","conversationId":"{CONVERSATION}","contract":{}}}"#,
                contract(&[])
            ),
        ),
        (
            "work.offer",
            format!(
                r#"{{"workItemId":"{W1}","candidates":[{{"offerId":"urn:missionweaveprotocol:offer:x","agentId":"{WORKER}","agentCardVersion":1}}],"selectionBasis":{}}}"#,
                selection_basis()
            ),
        ),
        (
            "ext.missionweaveprotocol.core.work_dependency_add",
            format!(
                r#"{{"workItemId":"{W1}","dependencyId":"urn:missionweaveprotocol:work:dep"}}"#
            ),
        ),
        (
            "work.cancel",
            format!(r#"{{"workItemId":"{W1}","reason":"not needed"}}"#),
        ),
    ]
}

#[test]
fn an_older_and_a_newer_coordinator_epoch_are_fenced_on_every_coordinator_kind() {
    for (kind, payload) in coordinator_kinds() {
        let f = fixture();
        let engine = f.active();
        f.ok(&engine, &f.authorize(W1, &[]), NOW);
        f.ok(
            &engine,
            &f.authorize("urn:missionweaveprotocol:work:dep", &[]),
            NOW,
        );
        advance_coordinator_epoch(&f, &engine);
        let revision = engine.mission(MISSION).unwrap().unwrap().revision();
        let w1 = stored(&engine, W1).0;
        for presented in [1, 3] {
            let e = f.refused(
                &engine,
                &f.by_coordinator(kind, presented, &payload),
                NOW,
                WireCode::AuthStaleCoordinator,
            );
            assert_eq!(
                e.fields().get("presented_coordinator_epoch"),
                Some(&FieldValue::Integer(presented as i64)),
                "{kind}"
            );
            assert_eq!(
                e.fields().get("current_coordinator_epoch"),
                Some(&FieldValue::Integer(2)),
                "{kind}"
            );
            assert_eq!(
                engine.mission(MISSION).unwrap().unwrap().revision(),
                revision,
                "{kind}"
            );
            assert_eq!(stored(&engine, W1).0, w1, "{kind}");
        }
        f.ok(&engine, &f.by_coordinator(kind, 2, &payload), NOW);
    }
}

/// `W1` queued under Ownership Epoch 2: the first owner's one-second ownership lease lapsed
/// and the Coordinator offered it again (§10.3 reassignment).
fn queued_at_ownership_epoch_2(f: &Fixture, engine: &TestEngine) -> UnixMillis {
    f.ok(engine, &f.authorize(W1, &[]), NOW);
    f.ok(engine, &f.offer(W1, &[WORKER], "r1"), NOW);
    let accept = |at: UnixMillis| {
        f.ok(
            engine,
            &f.command(
                "work.accept_offer",
                WORKER,
                "",
                &format!(
                    r#"{{"workItemId":"{W1}","capabilityPins":[{{"id":"text.summarise","version":"1.2.0"}}],"leaseSeconds":1}}"#
                ),
            ),
            at,
        );
    };
    accept(NOW);
    let later = UnixMillis(NOW.0 + 2_000);
    f.ok(engine, &f.offer(W1, &[WORKER], "r2"), later);
    accept(later);
    assert_eq!(ownership(engine, W1).0, 2);
    later
}

#[test]
fn an_older_and_a_newer_ownership_epoch_are_fenced_on_every_owner_kind() {
    let f = fixture();
    let engine = f.active();
    let now = queued_at_ownership_epoch_2(&f, &engine);
    let check = |kind: &str, lease: &str, members: &str| {
        let (revision, item) = stored(&engine, W1);
        for presented in [1, 3] {
            let e = f.refused(
                &engine,
                &f.by_worker(kind, WORKER, W1, presented, lease, members),
                now,
                WireCode::WorkStaleOwnership,
            );
            assert_eq!(e.reason(), "stale_ownership", "{kind}");
            let (after, same) = stored(&engine, W1);
            assert_eq!((after, same.state), (revision, item.state), "{kind}");
        }
    };
    let (_, lease) = ownership(&engine, W1);
    check("work.start", &lease, "");
    f.ok(
        &engine,
        &f.by_worker("work.start", WORKER, W1, 2, &lease, ""),
        now,
    );
    let (_, exec) = execution(&engine, W1);
    check(
        "ext.missionweaveprotocol.core.work_execution_lease_renew",
        &exec,
        r#""leaseSeconds":600"#,
    );
    check(
        "ext.missionweaveprotocol.core.resource_usage_record",
        &exec,
        r#""usageDelta":{"toolCalls":1}"#,
    );
    check("work.checkpoint", &exec, Fixture::checkpoint_members());
    check(
        "work.block",
        &exec,
        &format!(r#""reason":"waiting",{}"#, Fixture::checkpoint_members()),
    );
    check(
        "work.fail",
        &exec,
        r#""reason":"down","evidenceIds":["urn:missionweaveprotocol:evidence:e"]"#,
    );
    // (A submission cites published content first: publish it under the current epoch.)
    let publish = f.publish_command(&engine, W1);
    f.checked(
        &engine
            .perform_with_resolver(&publish, now, &f.registry)
            .unwrap(),
    );
    check("work.submit", &exec, &Fixture::submit_members(W1));
    // The current epoch applies.
    f.ok(
        &engine,
        &f.by_worker(
            "ext.missionweaveprotocol.core.resource_usage_record",
            WORKER,
            W1,
            2,
            &exec,
            r#""usageDelta":{"toolCalls":1}"#,
        ),
        now,
    );
}

#[test]
fn an_older_and_a_newer_session_epoch_are_fenced() {
    let f = fixture();
    let engine = f.active();
    f.ok(&engine, &f.session_open(COORDINATOR), NOW);
    assert_eq!(engine.session_epoch(COORDINATOR).unwrap(), Some(2));
    let renew = || f.by_coordinator("mission.renew_coordinator", 1, r#"{"leaseSeconds": 120}"#);
    for presented in [1, 3] {
        f.use_session_epoch(presented);
        let e = f.refused(&engine, &renew(), NOW, WireCode::AuthStaleSession);
        assert_eq!(
            e.fields().get("presented_session_epoch"),
            Some(&FieldValue::Integer(presented as i64))
        );
        assert_eq!(engine.mission(MISSION).unwrap().unwrap().revision(), 1);
    }
    f.use_session_epoch(2);
    f.ok(&engine, &renew(), NOW);
}

#[test]
fn an_older_and_a_newer_membership_epoch_are_fenced() {
    let f = fixture();
    let engine = f.active();
    // The Worker's Membership is added (epoch 1), then changed (epoch 2).
    for role in ["worker", "reviewer"] {
        f.ok(
            &engine,
            &f.command(
                "membership.change",
                OWNER,
                "",
                &format!(
                    r#"{{"member": {{"type": "agent", "id": "{WORKER}"}}, "role": "{role}", "scopes": ["work"]}}"#
                ),
            ),
            NOW,
        );
    }
    let post = |epoch: u64| {
        let unsigned = f.unsigned(
            "message.post",
            WORKER,
            &f.action(),
            "",
            r#"{"messageId": "urn:missionweaveprotocol:message:m1",
            "conversationId": "urn:missionweaveprotocol:conversation:finance-main",
            "content": [{"type": "text", "text": "ready"}]}"#,
        );
        let text = String::from_utf8(json::canonical_bytes(&unsigned).unwrap()).unwrap();
        assert!(text.contains(r#""membershipEpoch":1"#));
        let text = text.replace(
            r#""membershipEpoch":1"#,
            &format!(r#""membershipEpoch":{epoch}"#),
        );
        f.verified(WORKER, &json::parse(text.as_bytes()).unwrap())
    };
    for presented in [1, 3] {
        let e = f.refused(&engine, &post(presented), NOW, WireCode::MembershipStale);
        assert_eq!(e.reason(), "stale_membership_epoch");
        assert_eq!(
            e.fields().get("presented_membership_epoch"),
            Some(&FieldValue::Integer(presented as i64))
        );
    }
    f.ok(&engine, &post(2), NOW);
}

fn with_expected_revision(
    f: &Fixture,
    actor: &str,
    unsigned: Value,
    revision: u64,
) -> VerifiedCommand {
    let mut unsigned = unsigned;
    if let Value::Object(o) = &mut unsigned {
        o.insert(
            "expectedRevision",
            json::parse(revision.to_string().as_bytes()).unwrap(),
        );
    }
    f.verified(actor, &unsigned)
}

#[test]
fn an_older_and_a_newer_expected_revision_are_refused_on_memberships_and_sessions() {
    let f = fixture();
    let engine = f.active();
    // The Worker's Membership at revision 2 (added, then changed).
    let change = |role: &str| {
        f.unsigned(
            "membership.change",
            OWNER,
            &f.action(),
            "",
            &format!(
                r#"{{"member": {{"type": "agent", "id": "{WORKER}"}}, "role": "{role}", "scopes": ["work"]}}"#
            ),
        )
    };
    f.ok(&engine, &f.verified(OWNER, &change("worker")), NOW);
    f.ok(&engine, &f.verified(OWNER, &change("reviewer")), NOW);
    let key = missionweaveprotocol_engine::membership::membership_key(
        GROUP,
        &missionweaveprotocol::Principal::new(missionweaveprotocol::PrincipalType::Agent, WORKER),
    );
    let current = engine.store().aggregate(&key).unwrap().map(|a| a.revision);
    for wrong in [1, 3] {
        let e = f.refused(
            &engine,
            &with_expected_revision(&f, OWNER, change("worker"), wrong),
            NOW,
            WireCode::RevisionConflict,
        );
        assert_eq!(
            e.fields().get("current_revision"),
            Some(&FieldValue::Integer(2))
        );
    }
    assert_eq!(
        engine.store().aggregate(&key).unwrap().map(|a| a.revision),
        current
    );
    f.ok(
        &engine,
        &with_expected_revision(&f, OWNER, change("worker"), 2),
        NOW,
    );
    // The Worker's Session at revision 1 (= its epoch): 0 and 2 are refused.
    let open = |revision: u64| {
        with_expected_revision(
            &f,
            SERVICE,
            f.unsigned_service(
                "ext.missionweaveprotocol.identity.session_open",
                &f.action(),
                &format!(r#"{{"agentId": "{WORKER}"}}"#),
            ),
            revision,
        )
    };
    for wrong in [0, 2] {
        let e = engine.perform(&open(wrong), NOW).unwrap_err();
        assert_eq!(e.wire_code(), WireCode::RevisionConflict, "{e}");
        assert_eq!(engine.session_epoch(WORKER).unwrap(), Some(1));
    }
    f.ok(&engine, &open(1), NOW);
    assert_eq!(engine.session_epoch(WORKER).unwrap(), Some(2));
}
