//! §10.2 row 18: a Mission's cancellation or termination moves its unfinished WorkItems to
//! `cancelled` / `failed` in the same transaction, one Event each after the Mission's; finished
//! WorkItems stay as they are.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_work_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol::WireCode;
use missionweaveprotocol::json::Value;

const W3: &str = "urn:missionweaveprotocol:work:archive";
const W4: &str = "urn:missionweaveprotocol:work:audit";

/// W1 verified, W2 active, W3 open, W4 failed.
fn mixed(f: &Fixture) -> TestEngine {
    let engine = f.active();
    f.verified_item(&engine, W1);
    f.active_item(&engine, W2);
    f.ok(&engine, &f.authorize(W3, &[]), NOW);
    f.ok(&engine, &f.authorize(W4, &[]), NOW);
    let fail = f.by_coordinator(
        "work.fail",
        1,
        &format!(
            r#"{{"workItemId":"{W4}","reason":"no data","evidenceIds":["urn:missionweaveprotocol:evidence:f4"]}}"#
        ),
    );
    f.ok(&engine, &fail, NOW);
    engine
}

#[test]
fn mission_cancel_cancels_unfinished_work_items_only() {
    let f = fixture();
    let engine = mixed(&f);
    let before = [W1, W2, W3, W4].map(|w| stored(&engine, w).0);
    let cancel = f.command(
        "mission.cancel",
        OWNER,
        "",
        r#"{"reason": "budget withdrawn"}"#,
    );
    let events = f.ok(&engine, &cancel, NOW);
    assert_eq!(
        kinds(&events),
        ["mission.cancelled", "work.cancelled", "work.cancelled"]
    );
    // In WorkItem ID order (archive < report), each with its own WorkItem and revision.
    let ids: Vec<&str> = events[1..]
        .iter()
        .map(|e| e.get("workItemId").and_then(Value::as_str).unwrap())
        .collect();
    assert_eq!(ids, [W3, W2]);
    assert_eq!(item_state(&engine, W1), "verified");
    assert_eq!(item_state(&engine, W2), "cancelled");
    assert_eq!(item_state(&engine, W3), "cancelled");
    assert_eq!(item_state(&engine, W4), "failed");
    let after = [W1, W2, W3, W4].map(|w| stored(&engine, w).0);
    assert_eq!(after, [before[0], before[1] + 1, before[2] + 1, before[3]]);
    // The active item's Execution Lease is closed.
    let (_, w2) = stored(&engine, W2);
    assert_eq!(
        w2.execution_lease.unwrap().state().as_str(),
        "revoked",
        "row 18 revokes the live Execution Lease"
    );
    whole_log(&f, &engine);
    // A terminal Mission accepts no more work.
    f.refused(
        &engine,
        &f.authorize("urn:missionweaveprotocol:work:late", &[]),
        NOW,
        WireCode::InvalidStateTransition,
    );
}

#[test]
fn mission_terminate_fails_unfinished_work_items() {
    let f = fixture();
    let engine = mixed(&f);
    let terminate = f.by_coordinator("mission.terminate", 1, r#"{"reason": "source gone"}"#);
    let events = f.ok(&engine, &terminate, NOW);
    assert_eq!(
        kinds(&events),
        ["mission.terminated", "work.failed", "work.failed"]
    );
    assert_eq!(item_state(&engine, W1), "verified");
    assert_eq!(item_state(&engine, W2), "failed");
    assert_eq!(item_state(&engine, W3), "failed");
    whole_log(&f, &engine);
}

#[test]
fn a_refused_mission_cancel_touches_no_work_item() {
    let f = fixture();
    let engine = mixed(&f);
    let before = [W1, W2, W3, W4].map(|w| stored(&engine, w));
    // The Coordinator must not cancel (§7.1).
    let cancel = f.by_coordinator("mission.cancel", 1, r#"{"reason": "x"}"#);
    f.refused(&engine, &cancel, NOW, WireCode::AuthForbidden);
    assert_eq!([W1, W2, W3, W4].map(|w| stored(&engine, w)), before);
}

#[test]
fn propagation_is_deterministic_across_engines() {
    let f = fixture();
    let (a, b) = (f.engine(), f.engine());
    // Each Command is built once (from engine a's state) and fed to both engines.
    let both = |c: &missionweaveprotocol_engine::ingress::VerifiedCommand| {
        assert_eq!(a.perform(c, NOW).unwrap(), b.perform(c, NOW).unwrap());
    };
    both(&f.create());
    for w in [W1, W2] {
        both(&f.authorize(w, &[]));
        both(&f.offer(w, &[WORKER], "r1"));
        both(&f.accept(WORKER, w));
    }
    let (epoch, lease) = ownership(&a, W2);
    assert_eq!(ownership(&b, W2), (epoch, lease.clone()));
    both(&f.by_worker("work.start", WORKER, W2, epoch, &lease, ""));
    both(&f.by_coordinator("mission.terminate", 1, r#"{"reason": "source gone"}"#));
    assert_eq!(
        a.replay(GROUP, 0, 1000).unwrap(),
        b.replay(GROUP, 0, 1000).unwrap()
    );
    for w in [W1, W2] {
        assert_eq!(stored(&a, w), stored(&b, w));
        assert_eq!(item_state(&a, w), "failed");
    }
}
