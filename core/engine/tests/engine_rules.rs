//! Engine rules shared by every kind: idempotency (§15.1), optimistic concurrency on
//! `expectedRevision` (§15.3), critical extensions (§18), unknown kinds and Groups, replay
//! (§16). Every Event seen is verified by the fixture.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol::json::Value;
use missionweaveprotocol::{DescribeError, FieldValue, WireCode};
use missionweaveprotocol_engine::store::Store;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

#[test]
fn the_same_signed_command_returns_its_first_event_and_appends_nothing() {
    let f = fixture();
    let engine = f.engine();
    let create = f.create();
    let first = engine.perform(&create, NOW).unwrap();
    f.checked(&first);
    f.ok(&engine, &f.submit(1), NOW);
    // Retried later, after the Mission moved on: the original Event again, byte for byte.
    let again = engine.perform(&create, UnixMillis(NOW.0 + 60_000)).unwrap();
    assert!(again.duplicate);
    assert_eq!(again.events, first.events);
    f.checked(&again);
    assert_eq!(last_sequence(&engine), 2);
    assert_eq!(state(&engine, MISSION), ("awaiting_approval".into(), 2));
}

#[test]
fn the_same_action_id_with_other_content_collides() {
    let f = fixture();
    let engine = f.active();
    let action = f.action();
    let cancel = f.unsigned("mission.cancel", OWNER, &action, "", r#"{"reason": "a"}"#);
    f.ok(&engine, &f.verified(OWNER, &cancel), NOW);
    let other = f.unsigned("mission.cancel", OWNER, &action, "", r#"{"reason": "b"}"#);
    let e = f.refused(
        &engine,
        &f.verified(OWNER, &other),
        NOW,
        WireCode::ActionIdCollision,
    );
    assert_eq!(
        e.fields().get("action_id"),
        Some(&FieldValue::Text(action.clone()))
    );
    // The same Action ID of another actor is another key (§15.1: actor and Action ID).
    let by_service = f.unsigned("mission.cancel", SERVICE, &action, "", r#"{"reason": "b"}"#);
    f.refused(
        &engine,
        &f.verified(SERVICE, &by_service),
        NOW,
        WireCode::InvalidStateTransition,
    );
}

#[test]
fn a_refused_command_leaves_no_receipt() {
    let f = fixture();
    let engine = f.active();
    let action = f.action();
    // Refused: not awaiting approval. The same Action ID then applies once the state allows.
    let approve = f.unsigned(
        "mission.approve",
        OWNER,
        &action,
        "",
        &format!(r#"{{"approvalId": "urn:missionweaveprotocol:approval:1", "missionRevision": 2, "artifactHashes": ["{HASH_A}", "{HASH_B}"]}}"#),
    );
    let approve = f.verified(OWNER, &approve);
    f.refused(&engine, &approve, NOW, WireCode::InvalidStateTransition);
    assert!(
        engine
            .store()
            .receipt(&approve.receipt_key())
            .unwrap()
            .is_none()
    );
    f.ok(&engine, &f.submit(1), NOW);
    f.ok(&engine, &approve, NOW);
}

#[test]
fn expected_revision_must_match_the_mission_revision() {
    let f = fixture();
    let engine = f.active();
    let stale = f.by_coordinator(
        "mission.submit_for_approval",
        1,
        &format!(r#"{{"artifactHashes": ["{HASH_A}"]}}"#),
    );
    // Add expectedRevision: build it by hand (by_coordinator has no extra slot for it).
    let unsigned = f.unsigned(
        "mission.submit_for_approval",
        COORDINATOR,
        &f.action(),
        r#""coordinatorEpoch": 1, "expectedRevision": 5"#,
        &format!(r#"{{"artifactHashes": ["{HASH_A}"]}}"#),
    );
    let e = f.refused(
        &engine,
        &f.verified(COORDINATOR, &unsigned),
        NOW,
        WireCode::RevisionConflict,
    );
    assert_eq!(
        e.fields().get("expected_revision"),
        Some(&FieldValue::Integer(5))
    );
    // An older revision (0: before the Mission existed) is as stale as a newer one.
    let older = f.unsigned(
        "mission.submit_for_approval",
        COORDINATOR,
        &f.action(),
        r#""coordinatorEpoch": 1, "expectedRevision": 0"#,
        &format!(r#"{{"artifactHashes": ["{HASH_A}"]}}"#),
    );
    f.refused(
        &engine,
        &f.verified(COORDINATOR, &older),
        NOW,
        WireCode::RevisionConflict,
    );
    assert_eq!(
        e.fields().get("current_revision"),
        Some(&FieldValue::Integer(1))
    );
    let fresh = f.unsigned(
        "mission.submit_for_approval",
        COORDINATOR,
        &f.action(),
        r#""coordinatorEpoch": 1, "expectedRevision": 1"#,
        &format!(r#"{{"artifactHashes": ["{HASH_A}"]}}"#),
    );
    f.ok(&engine, &f.verified(COORDINATOR, &fresh), NOW);
    // The Command without expectedRevision is judged on state alone: now the wrong state.
    f.refused(&engine, &stale, NOW, WireCode::InvalidStateTransition);
}

#[test]
fn an_unknown_critical_extension_is_refused_and_noncritical_ones_are_relayed() {
    let f = fixture();
    let engine = f.active();
    let critical = f.command(
        "mission.cancel",
        OWNER,
        r#""extensions": {"urn:acme:extension:x": {"version": "1.0.0", "critical": true, "data": 1}}"#,
        r#"{"reason": "a"}"#,
    );
    let e = f.refused(&engine, &critical, NOW, WireCode::UnknownCriticalExtension);
    assert_eq!(
        e.fields().get("extension_id"),
        Some(&FieldValue::Text("urn:acme:extension:x".into()))
    );
    let noncritical = f.command(
        "mission.cancel",
        OWNER,
        r#""extensions": {"urn:acme:extension:y": {"version": "1.0.0", "critical": false, "data": {"k": [1, 2]}}}"#,
        r#"{"reason": "a"}"#,
    );
    let e = &f.ok(&engine, &noncritical, NOW)[0];
    assert_eq!(
        e.pointer("/extensions/urn:acme:extension:y/data/k")
            .and_then(Value::as_array)
            .map(<[Value]>::len),
        Some(2)
    );
}

#[test]
fn kinds_the_engine_does_not_implement_are_invalid_commands() {
    let f = fixture();
    let engine = f.active();
    // An extension kind no profile of the engine implements (every core kind is decided now).
    let c = f.by_coordinator(
        "ext.acme.ledger.reconcile",
        1,
        r#"{"missionId": "urn:missionweaveprotocol:mission:child"}"#,
    );
    assert_eq!(
        f.refused(&engine, &c, NOW, WireCode::InvalidCommand)
            .reason(),
        "unsupported_kind"
    );
}

#[test]
fn commands_on_an_unknown_group_are_group_not_found() {
    let f = fixture();
    let engine = f.engine();
    let e = f.refused(&engine, &f.submit(1), NOW, WireCode::GroupNotFound);
    assert_eq!(
        e.fields().get("group_id"),
        Some(&FieldValue::Text(GROUP.into()))
    );
    let e = engine.replay(GROUP, 0, 10).unwrap_err();
    assert_eq!(e.wire_code(), WireCode::GroupNotFound);
}

#[test]
fn replay_returns_the_events_in_order_with_continuation() {
    let f = fixture();
    let engine = f.active();
    for second in 1..=9 {
        let c = f.by_coordinator("mission.renew_coordinator", 1, "{}");
        f.ok(&engine, &c, UnixMillis(NOW.0 + second * 1000));
    }
    let mut after = 0;
    let mut seen = Vec::new();
    loop {
        let page = engine.replay(GROUP, after, 4).unwrap();
        assert_eq!(page.last_sequence, 10);
        for record in &page.events {
            let e = f.check_event(record);
            seen.push((record.sequence, text(&e, "/kind").to_owned()));
        }
        match page.continuation {
            Some(next) => after = next,
            None => break,
        }
    }
    assert_eq!(seen.len(), 10);
    assert!(
        seen.iter()
            .enumerate()
            .all(|(i, (s, _))| *s == i as u64 + 1)
    );
    assert_eq!(seen[0].1, "mission.created");
    assert!(
        seen[1..]
            .iter()
            .all(|(_, k)| k == "mission.coordinator.renewed")
    );
    // Each Event's aggregateRevision is the Mission revision it produced.
    let page = engine.replay(GROUP, 0, 100).unwrap();
    for record in &page.events {
        let e = f.check_event(record);
        assert_eq!(
            e.pointer("/aggregateRevision")
                .unwrap()
                .as_number()
                .unwrap()
                .as_u64(),
            Some(record.sequence)
        );
    }
    assert_eq!(
        engine.replay(GROUP, 0, 0).unwrap_err().wire_code(),
        WireCode::ProtocolViolation
    );
}

#[test]
fn engine_errors_describe_themselves() {
    let f = fixture();
    let engine = f.active();
    let e = f.refused(
        &engine,
        &f.approve(1),
        NOW,
        WireCode::InvalidStateTransition,
    );
    assert_eq!(
        e.fields().get("state"),
        Some(&FieldValue::Text("active".into()))
    );
    assert_eq!(
        e.fields().get("command_kind"),
        Some(&FieldValue::Text("mission.approve".into()))
    );
    assert!(!e.retryable());
    assert!(e.to_string().contains("does not accept mission.approve"));
}

#[test]
fn rebuilding_refuses_a_log_with_a_missing_event() {
    let f = fixture();
    let engine = f.awaiting();
    f.ok(&engine, &f.approve(2), NOW);
    let documents: Vec<Value> = engine
        .replay(GROUP, 0, 10)
        .unwrap()
        .events
        .iter()
        .map(|r| f.check_event(r))
        .collect();
    let whole = missionweaveprotocol_engine::mission::rebuild(&documents)
        .unwrap()
        .unwrap();
    assert_eq!(
        whole.to_blob().unwrap(),
        engine.mission(MISSION).unwrap().unwrap().to_blob().unwrap()
    );
    // Without the submission, the approval's aggregateRevision does not follow.
    let gap = [documents[0].clone(), documents[2].clone()];
    let e = missionweaveprotocol_engine::mission::rebuild(&gap).unwrap_err();
    assert_eq!(e.wire_code(), WireCode::InternalError);
    assert_eq!(e.reason(), "corrupt_aggregate");
    // Damaged state stays damaged: a store failure, not a conflict, and not retryable.
    assert!(!e.retryable());
    assert_eq!(
        missionweaveprotocol_engine::service::CoreError::describe(&e).family,
        missionweaveprotocol_engine::service::ErrorFamily::StoreFailure
    );
}
