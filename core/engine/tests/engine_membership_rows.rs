//! The Membership rows of digest 2.7 through the engine: `mission.create` opens the
//! MissionOwner's and Coordinator's Memberships (§8); `membership.change` creates (`active` or
//! `provisional`) and changes (`active`, epoch + 1); `membership.end` ends; an ended Membership
//! refuses every further change. Who may send them, and each refusal's §19 code. Every Event
//! is verified by the six-stage verifier (Event profile) and `event.schema.json`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_membership_fixture.rs"]
mod members;

use members::*;
use missionweaveprotocol::json::Value;
use missionweaveprotocol::schema::SchemaCatalog;
use missionweaveprotocol::{DescribeError, FieldValue, WireCode};
use missionweaveprotocol_engine::membership::{INITIAL_SCOPE, MembershipState};

fn schema_valid(m: &missionweaveprotocol_engine::membership::Membership) {
    SchemaCatalog::embedded()
        .validate("membership", &m.to_value())
        .unwrap();
}

#[test]
fn mission_create_opens_the_owner_and_coordinator_memberships() {
    let f = fixture();
    let engine = f.active();
    for (who, role) in [
        (human(OWNER), "mission_owner"),
        (agent(COORDINATOR), "coordinator"),
    ] {
        let m = membership(&engine, &who).unwrap();
        schema_valid(&m);
        assert_eq!(m.state(), MembershipState::Active);
        assert_eq!((m.epoch(), m.role(), m.revision()), (1, role, 1));
        // §8: complete visibility.
        assert_eq!(
            m.to_value()
                .get("visibilityStartSequence")
                .and_then(Value::as_number)
                .and_then(|n| n.as_u64()),
            Some(0)
        );
        assert_eq!(
            m.to_value().pointer("/scopes/0").and_then(Value::as_str),
            Some(INITIAL_SCOPE)
        );
    }
    // Nobody else is a member.
    assert!(membership(&engine, &agent(OTHER_AGENT)).is_none());
    assert!(membership(&engine, &human(OTHER_HUMAN)).is_none());
}

#[test]
fn a_refused_mission_create_opens_no_membership() {
    let f = fixture();
    let engine = f.active();
    // The same Mission again: refused, and no Membership of another Group appears.
    f.refused(&engine, &f.create(), NOW, WireCode::InvalidStateTransition);
    let m = membership(&engine, &human(OWNER)).unwrap();
    assert_eq!(m.revision(), 1);
}

#[test]
fn the_owner_adds_an_active_member() {
    let f = fixture();
    let engine = f.active();
    let worker = agent(OTHER_AGENT);
    let events = f.ok(
        &engine,
        &f.command(
            "membership.change",
            OWNER,
            "",
            &change_payload(&worker, "worker", r#", "visibilityStartSequence": 1"#),
        ),
        NOW,
    );
    assert_eq!(text(&events[0], "/kind"), "membership.changed");
    assert_eq!(text(&events[0], "/payload/membership/state"), "active");
    assert_eq!(int(&events[0], "/payload/membership/membershipEpoch"), 1);
    assert_eq!(int(&events[0], "/aggregateRevision"), 1);
    assert!(
        events[0]
            .pointer("/payload/previousMembershipEpoch")
            .is_none()
    );
    let m = membership(&engine, &worker).unwrap();
    schema_valid(&m);
    assert_eq!(
        (m.state(), m.epoch(), m.role()),
        (MembershipState::Active, 1, "worker")
    );
    assert_eq!(
        m.to_value(),
        *events[0].pointer("/payload/membership").unwrap()
    );
}

#[test]
fn the_coordinator_grants_a_provisional_membership_with_its_context() {
    let f = fixture();
    let engine = f.active();
    let worker = agent(OTHER_AGENT);
    let provisional = r#", "provisional": true,
        "contextPackageId": "urn:missionweaveprotocol:context:1",
        "provisionalExpiresAt": "2026-07-15T10:30:00Z""#;
    let events = f.ok(
        &engine,
        &f.command(
            "membership.change",
            COORDINATOR,
            "",
            &change_payload(&worker, "worker", provisional),
        ),
        NOW,
    );
    assert_eq!(text(&events[0], "/payload/membership/state"), "provisional");
    let m = membership(&engine, &worker).unwrap();
    schema_valid(&m);
    assert_eq!(m.state(), MembershipState::Provisional);
    // `provisional → active` is the Worker's offer acceptance, not a membership.change.
    f.refused(
        &engine,
        &f.command(
            "membership.change",
            COORDINATOR,
            "",
            &change_payload(&worker, "reviewer", ""),
        ),
        NOW,
        WireCode::InvalidStateTransition,
    );
}

#[test]
fn a_provisional_membership_needs_its_context_package() {
    let f = fixture();
    let engine = f.active();
    // Vector `membership-provisional-without-context`.
    let e = f.refused(
        &engine,
        &f.command(
            "membership.change",
            COORDINATOR,
            "",
            &change_payload(
                &agent(OTHER_AGENT),
                "worker",
                r#", "provisional": true, "provisionalExpiresAt": "2026-07-15T10:30:00Z""#,
            ),
        ),
        NOW,
        WireCode::InvalidCommand,
    );
    assert!(e.to_string().contains("contextPackageId"));
    assert!(membership(&engine, &agent(OTHER_AGENT)).is_none());
}

#[test]
fn changing_an_active_membership_increments_its_epoch() {
    let f = fixture();
    let engine = f.active();
    let worker = agent(OTHER_AGENT);
    f.ok(
        &engine,
        &f.command(
            "membership.change",
            OWNER,
            "",
            &change_payload(&worker, "worker", ""),
        ),
        NOW,
    );
    let events = f.ok(
        &engine,
        &f.command(
            "membership.change",
            COORDINATOR,
            r#""coordinatorEpoch": 1, "expectedRevision": 1"#,
            &change_payload(&worker, "reviewer", ""),
        ),
        NOW,
    );
    assert_eq!(int(&events[0], "/payload/membership/membershipEpoch"), 2);
    assert_eq!(int(&events[0], "/payload/previousMembershipEpoch"), 1);
    assert_eq!(int(&events[0], "/aggregateRevision"), 2);
    let m = membership(&engine, &worker).unwrap();
    schema_valid(&m);
    assert_eq!((m.epoch(), m.role(), m.revision()), (2, "reviewer", 2));
}

#[test]
fn a_stale_expected_revision_is_a_revision_conflict() {
    let f = fixture();
    let engine = f.active();
    let owner = human(OWNER);
    let e = f.refused(
        &engine,
        &f.command(
            "membership.change",
            OWNER,
            r#""expectedRevision": 0"#,
            &change_payload(&owner, "mission_owner", ""),
        ),
        NOW,
        WireCode::RevisionConflict,
    );
    assert_eq!(
        e.fields().get("current_revision"),
        Some(&FieldValue::Integer(1))
    );
    assert_eq!(membership(&engine, &owner).unwrap().epoch(), 1);
}

#[test]
fn owner_and_coordinator_memberships_keep_complete_visibility() {
    let f = fixture();
    let engine = f.active();
    f.refused(
        &engine,
        &f.command(
            "membership.change",
            OWNER,
            "",
            &change_payload(
                &agent(OTHER_AGENT),
                "coordinator",
                r#", "visibilityStartSequence": 3"#,
            ),
        ),
        NOW,
        WireCode::InvalidCommand,
    );
}

#[test]
fn a_membership_that_breaks_its_schema_is_refused() {
    let f = fixture();
    let engine = f.active();
    // `scopes` items are lower-case tokens.
    f.refused(
        &engine,
        &f.command(
            "membership.change",
            OWNER,
            "",
            r#"{"member": {"type": "agent", "id": "urn:missionweaveprotocol:agent:reviewer"},
               "role": "worker", "scopes": ["Not A Scope"]}"#,
        ),
        NOW,
        WireCode::SchemaValidationFailed,
    );
    // An unknown role.
    f.refused(
        &engine,
        &f.command(
            "membership.change",
            OWNER,
            "",
            &change_payload(&agent(OTHER_AGENT), "emperor", ""),
        ),
        NOW,
        WireCode::SchemaValidationFailed,
    );
    // No member.
    f.refused(
        &engine,
        &f.command(
            "membership.change",
            OWNER,
            "",
            r#"{"role": "worker", "scopes": ["a"]}"#,
        ),
        NOW,
        WireCode::InvalidCommand,
    );
}

#[test]
fn only_the_owner_or_the_current_coordinator_may_change_memberships() {
    let f = fixture();
    let engine = f.active();
    let target = change_payload(&human(OTHER_HUMAN), "observer", "");
    for actor in [OTHER_HUMAN, OTHER_AGENT, SERVICE] {
        let e = f.refused(
            &engine,
            &f.command("membership.change", actor, "", &target),
            NOW,
            WireCode::AuthForbidden,
        );
        assert_eq!(e.reason(), "not_owner_or_coordinator");
        f.refused(
            &engine,
            &f.command(
                "membership.end",
                actor,
                "",
                &end_payload(&agent(COORDINATOR)),
            ),
            NOW,
            WireCode::AuthForbidden,
        );
    }
    // The Coordinator with a stale Coordinator Epoch.
    f.refused(
        &engine,
        &f.by_coordinator("membership.change", 2, &target),
        NOW,
        WireCode::AuthStaleCoordinator,
    );
    assert!(membership(&engine, &human(OTHER_HUMAN)).is_none());
}

#[test]
fn membership_commands_need_an_existing_group() {
    let f = fixture();
    let engine = f.engine();
    f.refused(
        &engine,
        &f.command(
            "membership.change",
            OWNER,
            "",
            &change_payload(&agent(OTHER_AGENT), "worker", ""),
        ),
        NOW,
        WireCode::GroupNotFound,
    );
}

#[test]
fn ending_a_membership_fences_it_and_refuses_further_change() {
    let f = fixture();
    let engine = f.active();
    let worker = agent(OTHER_AGENT);
    f.ok(
        &engine,
        &f.command(
            "membership.change",
            OWNER,
            "",
            &change_payload(&worker, "worker", ""),
        ),
        NOW,
    );
    let events = f.ok(
        &engine,
        &f.command("membership.end", COORDINATOR, "", &end_payload(&worker)),
        NOW,
    );
    assert_eq!(text(&events[0], "/kind"), "membership.ended");
    assert_eq!(text(&events[0], "/payload/membership/state"), "ended");
    assert_eq!(text(&events[0], "/payload/membership/endedAt"), NOW_TEXT_MS);
    let m = membership(&engine, &worker).unwrap();
    schema_valid(&m);
    assert_eq!((m.state(), m.epoch()), (MembershipState::Ended, 2));
    for command in [
        f.command(
            "membership.change",
            OWNER,
            "",
            &change_payload(&worker, "worker", ""),
        ),
        f.command("membership.end", OWNER, "", &end_payload(&worker)),
    ] {
        f.refused(&engine, &command, NOW, WireCode::InvalidStateTransition);
    }
    assert_eq!(membership(&engine, &worker).unwrap().revision(), 2);
}

const NOW_TEXT_MS: &str = "2026-07-15T09:30:00.000Z";

#[test]
fn a_provisional_membership_can_be_ended() {
    let f = fixture();
    let engine = f.active();
    let worker = agent(OTHER_AGENT);
    let provisional = r#", "provisional": true,
        "contextPackageId": "urn:missionweaveprotocol:context:1",
        "provisionalExpiresAt": "2026-07-15T10:30:00Z""#;
    f.ok(
        &engine,
        &f.command(
            "membership.change",
            COORDINATOR,
            "",
            &change_payload(&worker, "worker", provisional),
        ),
        NOW,
    );
    f.ok(
        &engine,
        &f.command("membership.end", OWNER, "", &end_payload(&worker)),
        NOW,
    );
    assert_eq!(
        membership(&engine, &worker).unwrap().state(),
        MembershipState::Ended
    );
}

#[test]
fn ending_needs_a_membership_and_never_ends_the_owners() {
    let f = fixture();
    let engine = f.active();
    let e = f.refused(
        &engine,
        &f.command(
            "membership.end",
            OWNER,
            "",
            &end_payload(&agent(OTHER_AGENT)),
        ),
        NOW,
        WireCode::MembershipRequired,
    );
    assert_eq!(e.reason(), "membership_required");
    f.refused(
        &engine,
        &f.command(
            "membership.end",
            COORDINATOR,
            "",
            &end_payload(&human(OWNER)),
        ),
        NOW,
        WireCode::AuthForbidden,
    );
    assert_eq!(
        membership(&engine, &human(OWNER)).unwrap().state(),
        MembershipState::Active
    );
}

/// `mission.create` derives each initial `membershipId` (`<groupId>#membership:<type>:<id>`):
/// a Group ID that is itself a valid ID (≤ 512 characters) can make it too long for
/// `common.schema.json#/$defs/id`, and the create is refused whole (SCHEMA_VALIDATION_FAILED);
/// one character shorter, both Memberships fit and the create is applied.
#[test]
fn mission_create_refuses_a_membership_id_outgrowing_the_id_limit() {
    let f = fixture();
    let longest_suffix = format!("#membership:human:{OWNER}")
        .len()
        .max(format!("#membership:agent:{COORDINATOR}").len());
    let prefix = "urn:missionweaveprotocol:group:";
    for (fits, group_len) in [(true, 512 - longest_suffix), (false, 513 - longest_suffix)] {
        let group = format!("{prefix}{}", "g".repeat(group_len - prefix.len()));
        assert_eq!(group.len(), group_len);
        let mut unsigned = f.unsigned(
            "mission.create",
            OWNER,
            &f.action(),
            "",
            &f.create_payload(MISSION, ""),
        );
        if let Value::Object(o) = &mut unsigned {
            o.insert("groupId", Value::string(group.as_str()));
        }
        let command = f.verified(OWNER, &unsigned);
        let engine = f.engine();
        match engine.perform(&command, NOW) {
            Ok(performed) => {
                assert!(fits, "a {group_len}-character Group ID was accepted");
                f.checked(&performed);
            }
            Err(e) => {
                assert!(!fits, "a {group_len}-character Group ID was refused: {e}");
                assert_eq!(e.wire_code(), WireCode::SchemaValidationFailed);
                assert!(e.to_string().contains("membership"), "{e}");
                assert!(engine.mission(MISSION).unwrap().is_none());
            }
        }
    }
}
