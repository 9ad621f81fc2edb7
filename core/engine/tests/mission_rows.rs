//! Every Mission row of §7.1 (digest 2.1) with its positive and negative evidence; every Event
//! seen passes the six-stage verifier and event.schema.json (`Fixture::checked`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol::schema::SchemaCatalog;
use missionweaveprotocol::{DescribeError, WireCode};

// ---- none --mission.create--> active -----------------------------------------------------

#[test]
fn create_allocates_the_mission_and_its_group() {
    let f = fixture();
    let engine = f.engine();
    let events = f.ok(&engine, &f.create(), NOW);
    assert_eq!(events.len(), 1);
    let e = &events[0];
    assert_eq!(text(e, "/kind"), "mission.created");
    assert_eq!(text(e, "/groupId"), GROUP);
    assert_eq!(
        e.pointer("/sequence")
            .unwrap()
            .as_number()
            .unwrap()
            .as_u64(),
        Some(1)
    );
    assert_eq!(
        e.pointer("/aggregateRevision")
            .unwrap()
            .as_number()
            .unwrap()
            .as_u64(),
        Some(1)
    );
    // The Event carries the schema-valid Mission and Group documents.
    let mission = e.pointer("/payload/mission").unwrap();
    SchemaCatalog::embedded()
        .validate("mission", mission)
        .unwrap();
    SchemaCatalog::embedded()
        .validate("group", e.pointer("/payload/group").unwrap())
        .unwrap();
    assert_eq!(text(mission, "/missionOwner/id"), OWNER);
    assert_eq!(text(mission, "/state"), "active");
    assert_eq!(text(mission, "/createdAt"), text(e, "/occurredAt"));
    assert_eq!(state(&engine, MISSION), ("active".into(), 1));
    let m = engine.mission(MISSION).unwrap().unwrap();
    // The stored aggregate keeps the definition apart; joined back it is the whole document.
    let whole = missionweaveprotocol_engine::mission::full_document(engine.store(), &m).unwrap();
    SchemaCatalog::embedded()
        .validate("mission", &whole)
        .unwrap();
    assert_eq!(
        missionweaveprotocol::json::canonical_bytes(&whole).unwrap(),
        missionweaveprotocol::json::canonical_bytes(mission).unwrap()
    );
    assert!(m.document().get("objective").is_none());
    assert_eq!(m.coordinator().coordinator_epoch, 1);
    assert_eq!(m.coordinator().agent_id, COORDINATOR);
}

#[test]
fn create_refuses_an_existing_mission_or_group() {
    let f = fixture();
    let engine = f.active();
    // Same Mission ID, other Group is impossible here (the envelope Group exists): the Group.
    let again = f.command("mission.create", OWNER, "", &f.create_payload(MISSION, ""));
    let e = f.refused(&engine, &again, NOW, WireCode::InvalidStateTransition);
    assert_eq!(e.reason(), "invalid_state_transition");
    // Another Mission ID in the same Group: one Mission, one Group (§4.1).
    let other = f.command(
        "mission.create",
        OWNER,
        "",
        &f.create_payload("urn:missionweaveprotocol:mission:other", ""),
    );
    f.refused(&engine, &other, NOW, WireCode::InvalidStateTransition);
}

#[test]
fn create_refuses_payloads_that_do_not_make_a_valid_mission() {
    let f = fixture();
    let engine = f.engine();
    // Missing member.
    let c = f.command(
        "mission.create",
        OWNER,
        "",
        r#"{"missionId": "urn:missionweaveprotocol:mission:x"}"#,
    );
    f.refused(&engine, &c, NOW, WireCode::InvalidCommand);
    // A root Mission needs finalHumanApproval true (mission.schema.json).
    let payload = f.create_payload(MISSION, "").replace(
        r#""finalHumanApproval": true"#,
        r#""finalHumanApproval": false"#,
    );
    let c = f.command("mission.create", OWNER, "", &payload);
    let e = f.refused(&engine, &c, NOW, WireCode::SchemaValidationFailed);
    assert_eq!(e.reason(), "schema_invalid");
    // A payload groupId other than the envelope's.
    let c = f.command(
        "mission.create",
        OWNER,
        "",
        &f.create_payload(
            MISSION,
            r#", "groupId": "urn:missionweaveprotocol:group:other""#,
        ),
    );
    assert_eq!(
        f.refused(&engine, &c, NOW, WireCode::InvalidCommand)
            .reason(),
        "group_mismatch"
    );
    // A lease duration out of range.
    let c = f.command(
        "mission.create",
        OWNER,
        "",
        &f.create_payload(MISSION, r#", "coordinatorLeaseSeconds": 0"#),
    );
    f.refused(&engine, &c, NOW, WireCode::InvalidCommand);
    assert!(engine.mission(MISSION).unwrap().is_none());
}

// ---- active --mission.submit_for_approval--> awaiting_approval ---------------------------

#[test]
fn submit_moves_active_to_awaiting_approval() {
    let f = fixture();
    let engine = f.active();
    let e = &f.ok(&engine, &f.submit(1), NOW)[0];
    assert_eq!(text(e, "/kind"), "mission.submitted_for_approval");
    assert_eq!(text(e, "/payload/state"), "awaiting_approval");
    assert_eq!(
        e.pointer("/payload/missionRevision")
            .unwrap()
            .as_number()
            .unwrap()
            .as_u64(),
        Some(2)
    );
    assert_eq!(state(&engine, MISSION), ("awaiting_approval".into(), 2));
}

#[test]
fn submit_is_refused_outside_active_and_without_artifacts() {
    let f = fixture();
    let engine = f.awaiting();
    f.refused(&engine, &f.submit(1), NOW, WireCode::InvalidStateTransition);
    let engine = f.active();
    let c = f.by_coordinator(
        "mission.submit_for_approval",
        1,
        r#"{"artifactHashes": []}"#,
    );
    f.refused(&engine, &c, NOW, WireCode::InvalidCommand);
    let c = f.by_coordinator(
        "mission.submit_for_approval",
        1,
        r#"{"artifactHashes": ["nope"]}"#,
    );
    f.refused(&engine, &c, NOW, WireCode::InvalidCommand);
    // Another Agent with the right epoch is not the Coordinator.
    let c = f.command(
        "mission.submit_for_approval",
        OTHER_AGENT,
        r#""coordinatorEpoch": 1"#,
        &format!(r#"{{"artifactHashes": ["{HASH_A}"]}}"#),
    );
    f.refused(&engine, &c, NOW, WireCode::AuthForbidden);
    assert_eq!(state(&engine, MISSION), ("active".into(), 1));
}

// ---- awaiting_approval --mission.approve--> approved ---------------------------------------

#[test]
fn approve_binds_the_submitted_revision_and_artifacts() {
    let f = fixture();
    let engine = f.awaiting();
    let e = &f.ok(&engine, &f.approve(2), NOW)[0];
    assert_eq!(text(e, "/kind"), "mission.approved");
    assert_eq!(
        text(e, "/payload/approvalId"),
        "urn:missionweaveprotocol:approval:1"
    );
    assert_eq!(state(&engine, MISSION), ("approved".into(), 3));
    // Terminal: never reopened (§7.1).
    f.refused(
        &engine,
        &f.approve(2),
        NOW,
        WireCode::InvalidStateTransition,
    );
    f.refused(&engine, &f.submit(1), NOW, WireCode::InvalidStateTransition);
}

#[test]
fn approve_is_refused_when_not_awaiting_or_not_bound_or_not_the_owner() {
    let f = fixture();
    let engine = f.active();
    f.refused(
        &engine,
        &f.approve(1),
        NOW,
        WireCode::InvalidStateTransition,
    );
    let engine = f.awaiting();
    // Another revision than the submitted one.
    let e = f.refused(&engine, &f.approve(1), NOW, WireCode::RevisionConflict);
    assert_eq!(e.reason(), "revision_conflict");
    // Another Artifact set.
    let c = f.command(
        "mission.approve",
        OWNER,
        "",
        &format!(r#"{{"approvalId": "urn:missionweaveprotocol:approval:2", "missionRevision": 2, "artifactHashes": ["{HASH_A}"]}}"#),
    );
    assert_eq!(
        f.refused(&engine, &c, NOW, WireCode::InvalidCommand)
            .reason(),
        "artifact_set_mismatch"
    );
    // Another human is not the MissionOwner.
    let c = f.command(
        "mission.approve",
        OTHER_HUMAN,
        "",
        &format!(r#"{{"approvalId": "urn:missionweaveprotocol:approval:3", "missionRevision": 2, "artifactHashes": ["{HASH_A}", "{HASH_B}"]}}"#),
    );
    assert_eq!(
        f.refused(&engine, &c, NOW, WireCode::AuthForbidden)
            .reason(),
        "not_mission_owner"
    );
    assert_eq!(state(&engine, MISSION), ("awaiting_approval".into(), 2));
}

// ---- awaiting_approval --mission.request_changes--> active ---------------------------------

fn request_changes(
    f: &Fixture,
    actor: &str,
    revision: u64,
) -> missionweaveprotocol_engine::ingress::VerifiedCommand {
    f.command(
        "mission.request_changes",
        actor,
        "",
        &format!(r#"{{"missionRevision": {revision}, "feedback": "Reconcile account 4711"}}"#),
    )
}

#[test]
fn request_changes_reopens_the_same_mission() {
    let f = fixture();
    let engine = f.awaiting();
    let e = &f.ok(&engine, &request_changes(&f, OWNER, 2), NOW)[0];
    assert_eq!(text(e, "/kind"), "mission.changes_requested");
    assert_eq!(state(&engine, MISSION), ("active".into(), 3));
    // The Coordinator may submit again; the new submission binds revision 4.
    f.ok(&engine, &f.submit(1), NOW);
    f.refused(&engine, &f.approve(2), NOW, WireCode::RevisionConflict);
    f.ok(&engine, &f.approve(4), NOW);
    // Replay holds every submission: nothing was deleted (§7.3).
    let kinds: Vec<String> = engine
        .replay(GROUP, 0, 100)
        .unwrap()
        .events
        .iter()
        .map(|r| text(&f.check_event(r), "/kind").to_owned())
        .collect();
    assert_eq!(
        kinds,
        [
            "mission.created",
            "mission.submitted_for_approval",
            "mission.changes_requested",
            "mission.submitted_for_approval",
            "mission.approved"
        ]
    );
}

#[test]
fn request_changes_is_refused_when_active_or_by_another_actor() {
    let f = fixture();
    let engine = f.active();
    f.refused(
        &engine,
        &request_changes(&f, OWNER, 1),
        NOW,
        WireCode::InvalidStateTransition,
    );
    let engine = f.awaiting();
    f.refused(
        &engine,
        &request_changes(&f, OTHER_HUMAN, 2),
        NOW,
        WireCode::AuthForbidden,
    );
    f.refused(
        &engine,
        &request_changes(&f, OWNER, 7),
        NOW,
        WireCode::RevisionConflict,
    );
    let c = f.command(
        "mission.request_changes",
        OWNER,
        "",
        r#"{"missionRevision": 2}"#,
    );
    f.refused(&engine, &c, NOW, WireCode::InvalidCommand);
}

// ---- non-terminal --mission.cancel--> cancelled --------------------------------------------

fn cancel(f: &Fixture, actor: &str) -> missionweaveprotocol_engine::ingress::VerifiedCommand {
    let extra = if actor == COORDINATOR {
        r#""coordinatorEpoch": 1"#
    } else {
        ""
    };
    f.command(
        "mission.cancel",
        actor,
        extra,
        r#"{"reason": "The quarter was restated"}"#,
    )
}

#[test]
fn cancel_from_both_non_terminal_states_by_owner_or_policy() {
    let f = fixture();
    let engine = f.active();
    let e = &f.ok(&engine, &cancel(&f, OWNER), NOW)[0];
    assert_eq!(text(e, "/kind"), "mission.cancelled");
    assert_eq!(text(e, "/payload/previousState"), "active");
    assert_eq!(state(&engine, MISSION), ("cancelled".into(), 2));
    let engine = f.awaiting();
    let e = &f.ok(&engine, &cancel(&f, SERVICE), NOW)[0];
    assert_eq!(text(e, "/payload/previousState"), "awaiting_approval");
    assert_eq!(state(&engine, MISSION), ("cancelled".into(), 3));
}

#[test]
fn cancel_is_refused_when_terminal_or_by_the_coordinator_or_a_stranger() {
    let f = fixture();
    let engine = f.active();
    let e = f.refused(
        &engine,
        &cancel(&f, COORDINATOR),
        NOW,
        WireCode::AuthForbidden,
    );
    assert_eq!(e.reason(), "coordinator_must_not_cancel");
    f.refused(
        &engine,
        &cancel(&f, OTHER_HUMAN),
        NOW,
        WireCode::AuthForbidden,
    );
    f.ok(&engine, &cancel(&f, OWNER), NOW);
    f.refused(
        &engine,
        &cancel(&f, OWNER),
        NOW,
        WireCode::InvalidStateTransition,
    );
    let engine = f.awaiting();
    f.ok(&engine, &f.approve(2), NOW);
    f.refused(
        &engine,
        &cancel(&f, SERVICE),
        NOW,
        WireCode::InvalidStateTransition,
    );
}

// ---- non-terminal --mission.terminate--> failed --------------------------------------------

fn terminate_by_coordinator(
    f: &Fixture,
    epoch: u64,
) -> missionweaveprotocol_engine::ingress::VerifiedCommand {
    f.by_coordinator(
        "mission.terminate",
        epoch,
        r#"{"reason": "Source system retired"}"#,
    )
}

#[test]
fn terminate_by_coordinator_or_policy_fails_the_mission() {
    let f = fixture();
    let engine = f.active();
    let e = &f.ok(&engine, &terminate_by_coordinator(&f, 1), NOW)[0];
    assert_eq!(text(e, "/kind"), "mission.terminated");
    assert_eq!(state(&engine, MISSION), ("failed".into(), 2));
    let engine = f.awaiting();
    let c = f.command("mission.terminate", SERVICE, "", r#"{"reason": "policy"}"#);
    f.ok(&engine, &c, NOW);
    assert_eq!(state(&engine, MISSION), ("failed".into(), 3));
}

#[test]
fn terminate_is_refused_when_terminal_stale_or_not_the_coordinator() {
    let f = fixture();
    let engine = f.active();
    let e = f.refused(
        &engine,
        &terminate_by_coordinator(&f, 2),
        NOW,
        WireCode::AuthStaleCoordinator,
    );
    assert_eq!(e.reason(), "stale_coordinator_epoch");
    let c = f.command(
        "mission.terminate",
        OTHER_AGENT,
        r#""coordinatorEpoch": 1"#,
        r#"{"reason": "x"}"#,
    );
    f.refused(&engine, &c, NOW, WireCode::AuthForbidden);
    let c = f.by_coordinator("mission.terminate", 1, "{}");
    f.refused(&engine, &c, NOW, WireCode::InvalidCommand);
    f.ok(&engine, &terminate_by_coordinator(&f, 1), NOW);
    f.refused(
        &engine,
        &terminate_by_coordinator(&f, 1),
        NOW,
        WireCode::InvalidStateTransition,
    );
}

// ---- none --mission.create_follow_up--> active ---------------------------------------------

const FOLLOW_UP: &str = "urn:missionweaveprotocol:mission:close-books-fix";
const FOLLOW_UP_GROUP: &str = "urn:missionweaveprotocol:group:finance-fix";

fn follow_up(f: &Fixture, actor: &str) -> missionweaveprotocol_engine::ingress::VerifiedCommand {
    let payload = f.create_payload(
        FOLLOW_UP,
        &format!(r#", "followUpToMissionId": "{MISSION}""#),
    );
    let unsigned = f.unsigned("mission.create_follow_up", actor, &f.action(), "", &payload);
    let text = missionweaveprotocol::json::canonical_bytes(&unsigned).unwrap();
    let text = String::from_utf8(text)
        .unwrap()
        .replace(GROUP, FOLLOW_UP_GROUP);
    f.verified(
        actor,
        &missionweaveprotocol::json::parse(text.as_bytes()).unwrap(),
    )
}

#[test]
fn follow_up_links_to_an_approved_mission_of_the_same_owner() {
    let f = fixture();
    let engine = f.awaiting();
    f.ok(&engine, &f.approve(2), NOW);
    let e = &f.ok(&engine, &follow_up(&f, OWNER), NOW)[0];
    assert_eq!(text(e, "/kind"), "mission.follow_up.created");
    assert_eq!(text(e, "/groupId"), FOLLOW_UP_GROUP);
    assert_eq!(text(e, "/payload/mission/followUpToMissionId"), MISSION);
    assert_eq!(
        e.pointer("/sequence")
            .unwrap()
            .as_number()
            .unwrap()
            .as_u64(),
        Some(1)
    );
    // The approved Mission is untouched (never rewritten, §7.1).
    assert_eq!(state(&engine, MISSION), ("approved".into(), 3));
    assert_eq!(state(&engine, FOLLOW_UP), ("active".into(), 1));
}

#[test]
fn follow_up_is_refused_unless_approved_same_owner_and_known() {
    let f = fixture();
    let engine = f.engine();
    let e = f.refused_in(&engine, &follow_up(&f, OWNER), WireCode::InvalidCommand);
    assert_eq!(e.reason(), "unknown_mission");
    let engine = f.active();
    f.refused_in(
        &engine,
        &follow_up(&f, OWNER),
        WireCode::InvalidStateTransition,
    );
    f.ok(&engine, &f.submit(1), NOW);
    f.ok(&engine, &f.approve(2), NOW);
    f.refused_in(
        &engine,
        &follow_up(&f, OTHER_HUMAN),
        WireCode::AuthForbidden,
    );
    assert!(engine.mission(FOLLOW_UP).unwrap().is_none());
}

trait RefusedIn {
    fn refused_in(
        &self,
        engine: &TestEngine,
        c: &missionweaveprotocol_engine::ingress::VerifiedCommand,
        code: WireCode,
    ) -> missionweaveprotocol_engine::error::EngineError;
}

impl RefusedIn for Fixture {
    /// A refusal in the follow-up's Group: nothing appended there.
    fn refused_in(
        &self,
        engine: &TestEngine,
        c: &missionweaveprotocol_engine::ingress::VerifiedCommand,
        code: WireCode,
    ) -> missionweaveprotocol_engine::error::EngineError {
        use missionweaveprotocol_engine::store::Store;
        let e = engine.perform(c, NOW).unwrap_err();
        assert_eq!(e.wire_code(), code, "{e}");
        assert_eq!(
            engine
                .store()
                .head(FOLLOW_UP_GROUP)
                .unwrap()
                .last_sequence(),
            0
        );
        e
    }
}

#[test]
fn create_with_expected_revision_zero_only() {
    // §15.3: a Mission being created is at revision 0 (absent).
    let f = fixture();
    let engine = f.engine();
    let c = f.command(
        "mission.create",
        OWNER,
        r#""expectedRevision": 3"#,
        &f.create_payload(MISSION, ""),
    );
    let e = f.refused(&engine, &c, NOW, WireCode::RevisionConflict);
    assert_eq!(
        e.to_string(),
        format!("mission {MISSION} is at revision 0, the Command expected 3")
    );
    let c = f.command(
        "mission.create",
        OWNER,
        r#""expectedRevision": 0"#,
        &f.create_payload(MISSION, ""),
    );
    f.ok(&engine, &c, NOW);
}

/// §15.3 on the Mission, independently of `engine_rules.rs`: on a Mission at revision 2, a
/// `mission.cancel` expecting revision 1 (stale: it missed the submission) or 3 (from the
/// future) is `REVISION_CONFLICT` and leaves the Mission as it was; expecting 2 applies.
#[test]
fn a_stale_or_future_mission_expected_revision_is_refused() {
    let f = fixture();
    let engine = f.awaiting();
    assert_eq!(state(&engine, MISSION), ("awaiting_approval".to_owned(), 2));
    let cancel = |revision: u64| {
        f.verified(
            OWNER,
            &f.unsigned(
                "mission.cancel",
                OWNER,
                &f.action(),
                &format!(r#""expectedRevision": {revision}"#),
                r#"{"reason": "the books are closed elsewhere"}"#,
            ),
        )
    };
    for wrong in [1, 3] {
        let e = f.refused(&engine, &cancel(wrong), NOW, WireCode::RevisionConflict);
        assert_eq!(e.reason(), "revision_conflict");
        assert_eq!(state(&engine, MISSION), ("awaiting_approval".to_owned(), 2));
    }
    f.ok(&engine, &cancel(2), NOW);
    assert_eq!(state(&engine, MISSION).0, "cancelled");
}
