//! WorkItem refusals through the engine that depend on time, duplicates and payloads: offer
//! expiry (§10.2 row 5), a lapsed Execution Lease (§11.3), the loser of a finished race
//! (§10.3), the same signed Command twice (§15.1), malformed payloads (§15.1), Worker-reported
//! failure with its claim (§11.4), and the Mission rebuilt from a log full of WorkItem Events.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_work_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol::json::Value;
use missionweaveprotocol::{DescribeError, WireCode};
use missionweaveprotocol_engine::mission;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

fn later(seconds: i64) -> UnixMillis {
    UnixMillis(NOW.0 + seconds * 1000)
}

#[test]
fn acceptance_at_or_after_offer_expiry_is_refused() {
    let f = fixture();
    let engine = f.active();
    f.ok(&engine, &f.authorize(W1, &[]), NOW);
    f.ok(&engine, &f.offer(W1, &[WORKER], "r1"), NOW);
    // Default offer lifetime: 300 s (`offerExpiresInSeconds`).
    f.refused(
        &engine,
        &f.accept(WORKER, W1),
        later(300),
        WireCode::WorkOfferExpired,
    );
    assert_eq!(
        item_state(&engine, W1),
        "offered",
        "expiry changes nothing (row 5)"
    );
    f.ok(&engine, &f.accept(WORKER, W1), later(299));
}

#[test]
fn a_lapsed_execution_lease_authorizes_nothing() {
    let f = fixture();
    let engine = f.active();
    f.active_item(&engine, W1);
    f.publish_artifact(&engine, W1);
    let (epoch, exec) = execution(&engine, W1);
    let submit = f.by_worker(
        "work.submit",
        WORKER,
        W1,
        epoch,
        &exec,
        &Fixture::submit_members(W1),
    );
    f.refused(&engine, &submit, later(300), WireCode::WorkLeaseExpired);
    assert_eq!(item_state(&engine, W1), "active");
    // A wrong lease ID with the current epoch is refused too.
    let wrong = f.by_worker(
        "work.submit",
        WORKER,
        W1,
        epoch,
        "urn:missionweaveprotocol:lease:other",
        &Fixture::submit_members(W1),
    );
    assert!(engine.perform(&wrong, NOW).is_err());
    f.ok(&engine, &submit, later(299));
}

#[test]
fn the_loser_of_a_finished_race_learns_it_lost() {
    let f = fixture();
    let engine = f.active();
    f.ok(&engine, &f.authorize(W1, &[]), NOW);
    f.ok(&engine, &f.offer(W1, &[WORKER, COORDINATOR], "r1"), NOW);
    f.ok(&engine, &f.accept(COORDINATOR, W1), NOW);
    f.refused(
        &engine,
        &f.accept(WORKER, W1),
        NOW,
        WireCode::WorkAlreadyOwned,
    );
    // An Agent with no offer at all.
    let mut none = f.offer(W2, &[WORKER], "x");
    f.ok(&engine, &f.authorize(W2, &[]), NOW);
    f.ok(&engine, &none, NOW);
    none = f.accept(COORDINATOR, W2);
    f.refused(&engine, &none, NOW, WireCode::AuthForbidden);
}

#[test]
fn the_same_signed_command_applies_once() {
    let f = fixture();
    let engine = f.active();
    let authorize = f.authorize(W1, &[]);
    let first = engine.perform(&authorize, NOW).unwrap();
    let again = engine.perform(&authorize, NOW).unwrap();
    assert!(again.duplicate);
    assert_eq!(again.events, first.events);
    assert_eq!(stored(&engine, W1).0, 1);
    assert_eq!(last_sequence(&engine), 2);
}

#[test]
fn malformed_payloads_are_invalid_commands() {
    let f = fixture();
    let engine = f.active();
    // No workItemId, no contract, a bad exclusive flag, an unknown proposal.
    let cases = [
        format!(
            r#"{{"conversationId":"{CONVERSATION}","contract":{}}}"#,
            contract(&[])
        ),
        format!(r#"{{"workItemId":"{W1}","conversationId":"{CONVERSATION}"}}"#),
        format!(
            r#"{{"workItemId":"{W1}","conversationId":"{CONVERSATION}","exclusive":"yes","contract":{}}}"#,
            contract(&[])
        ),
        format!(
            r#"{{"workItemId":"{W1}","conversationId":"{CONVERSATION}","proposalId":"urn:missionweaveprotocol:proposal:none"}}"#
        ),
    ];
    for payload in &cases {
        let c = f.by_coordinator("work.authorize", 1, payload);
        let e = engine.perform(&c, NOW).unwrap_err();
        assert!(
            matches!(
                e.wire_code(),
                WireCode::InvalidCommand | WireCode::WorkContractIncomplete
            ),
            "{payload}: {e} ({})",
            e.wire_code()
        );
    }
    // A dependency on an unknown WorkItem.
    f.refused(
        &engine,
        &f.authorize(W1, &[W2]),
        NOW,
        WireCode::InvalidCommand,
    );
    assert_eq!(last_sequence(&engine), 1);
}

#[test]
fn a_worker_reported_failure_cites_its_execution_lease() {
    let f = fixture();
    let engine = f.active();
    f.active_item(&engine, W1);
    let (epoch, exec) = execution(&engine, W1);
    let members =
        r#""reason":"tool crashed","evidenceIds":["urn:missionweaveprotocol:evidence:f1"]"#;
    // A stale epoch is fenced before anything else.
    for stale in [epoch - 1, epoch + 1] {
        let stale = f.by_worker("work.fail", WORKER, W1, stale, &exec, members);
        f.refused(&engine, &stale, NOW, WireCode::WorkStaleOwnership);
    }
    // Without a claim (no leaseId) the Worker's failure is malformed.
    let bare = f.command(
        "work.fail",
        WORKER,
        "",
        &format!(r#"{{"workItemId":"{W1}",{members}}}"#),
    );
    f.refused(&engine, &bare, NOW, WireCode::InvalidCommand);
    let fail = f.by_worker("work.fail", WORKER, W1, epoch, &exec, members);
    let events = f.ok(&engine, &fail, NOW);
    assert_eq!(kinds(&events), ["work.failed"]);
    assert_eq!(item_state(&engine, W1), "failed");
}

#[test]
fn the_mission_rebuilds_from_a_log_with_work_item_events() {
    let f = fixture();
    let engine = f.active();
    f.verified_item(&engine, W1);
    f.active_item(&engine, W2);
    f.ok(
        &engine,
        &f.command("mission.cancel", OWNER, "", r#"{"reason": "done"}"#),
        NOW,
    );
    let log: Vec<Value> = whole_log(&f, &engine);
    let rebuilt = mission::rebuild(&log).unwrap().unwrap();
    let stored = engine.mission(MISSION).unwrap().unwrap();
    assert_eq!(rebuilt, stored);
    assert_eq!(stored.state().as_str(), "cancelled");
}

#[test]
fn a_submission_cites_only_content_published_for_its_work_item() {
    let f = fixture();
    let engine = f.active();
    f.active_item(&engine, W1);
    f.active_item(&engine, W2);
    let (epoch, exec) = execution(&engine, W1);
    let submit = f.by_worker(
        "work.submit",
        WORKER,
        W1,
        epoch,
        &exec,
        &Fixture::submit_members(W1),
    );
    // Nothing published yet.
    let error = f.refused(&engine, &submit, NOW, WireCode::InvalidCommand);
    assert_eq!(
        missionweaveprotocol::DescribeError::reason(&error),
        "artifact_not_published"
    );
    // The same bytes published for another WorkItem do not count for this one.
    f.publish_artifact(&engine, W2);
    f.refused(&engine, &submit, NOW, WireCode::InvalidCommand);
    assert_eq!(item_state(&engine, W1), "active");
    // Published for W1: the same signed submission applies (a refusal left no receipt).
    f.publish_artifact(&engine, W1);
    f.ok(&engine, &submit, NOW);
    assert_eq!(item_state(&engine, W1), "submitted");
}
