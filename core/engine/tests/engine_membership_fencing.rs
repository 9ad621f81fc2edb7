//! Membership Epoch fencing (§8, §15.1, digest 2.7): a Group-scoped Command whose
//! `membershipEpoch` is not the sender's current one, or whose Membership has ended, is
//! `MEMBERSHIP_STALE` and appends nothing, whatever its kind; the current epoch passes. And two
//! engines fed the same Membership Commands emit byte-identical Events.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_membership_fixture.rs"]
mod members;

use members::*;
use missionweaveprotocol::{DescribeError, FieldValue, WireCode};
use missionweaveprotocol_engine::ingress::VerifiedCommand;
use missionweaveprotocol_engine::store::{EventRecord, Store};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// Moves the owner's Membership to epoch 2 (the owner changes its own scopes).
fn owner_at_epoch_2(f: &Fixture, engine: &TestEngine) {
    f.ok(
        engine,
        &f.command(
            "membership.change",
            OWNER,
            "",
            &change_payload(&human(OWNER), "mission_owner", ""),
        ),
        NOW,
    );
    assert_eq!(membership(engine, &human(OWNER)).unwrap().epoch(), 2);
}

#[test]
fn a_human_command_with_the_old_epoch_is_stale_and_the_current_one_passes() {
    let f = fixture();
    let engine = f.active();
    owner_at_epoch_2(&f, &engine);
    let cancel = r#"{"reason": "no longer needed"}"#;
    for old in [1, 3] {
        let e = f.refused(
            &engine,
            &with_epoch(&f, "mission.cancel", OWNER, "", cancel, old),
            NOW,
            WireCode::MembershipStale,
        );
        assert_eq!(e.reason(), "stale_membership_epoch");
        assert_eq!(
            e.fields().get("presented_membership_epoch"),
            Some(&FieldValue::Integer(i64::try_from(old).unwrap()))
        );
        assert_eq!(
            e.fields().get("current_membership_epoch"),
            Some(&FieldValue::Integer(2))
        );
    }
    assert_eq!(state(&engine, MISSION).0, "active");
    f.ok(
        &engine,
        &with_epoch(&f, "mission.cancel", OWNER, "", cancel, 2),
        NOW,
    );
    assert_eq!(state(&engine, MISSION).0, "cancelled");
}

#[test]
fn an_agent_command_with_the_old_epoch_is_stale_and_the_current_one_passes() {
    let f = fixture();
    let engine = f.active();
    // The owner changes the Coordinator's Membership: epoch 2.
    f.ok(
        &engine,
        &f.command(
            "membership.change",
            OWNER,
            "",
            &change_payload(&agent(COORDINATOR), "coordinator", ""),
        ),
        NOW,
    );
    let submit = format!(r#"{{"artifactHashes": ["{HASH_A}"]}}"#);
    f.refused(
        &engine,
        &with_epoch(
            &f,
            "mission.submit_for_approval",
            COORDINATOR,
            r#""coordinatorEpoch": 1"#,
            &submit,
            1,
        ),
        NOW,
        WireCode::MembershipStale,
    );
    f.ok(
        &engine,
        &with_epoch(
            &f,
            "mission.submit_for_approval",
            COORDINATOR,
            r#""coordinatorEpoch": 1"#,
            &submit,
            2,
        ),
        NOW,
    );
    assert_eq!(state(&engine, MISSION).0, "awaiting_approval");
}

#[test]
fn membership_commands_themselves_are_fenced() {
    let f = fixture();
    let engine = f.active();
    owner_at_epoch_2(&f, &engine);
    let add = change_payload(&agent(OTHER_AGENT), "worker", "");
    f.refused(
        &engine,
        &with_epoch(&f, "membership.change", OWNER, "", &add, 1),
        NOW,
        WireCode::MembershipStale,
    );
    assert!(membership(&engine, &agent(OTHER_AGENT)).is_none());
    f.ok(
        &engine,
        &with_epoch(&f, "membership.change", OWNER, "", &add, 2),
        NOW,
    );
}

#[test]
fn an_ended_membership_is_stale_for_every_kind() {
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
    // While active, its epoch passes the fence and the kind's own rule answers.
    let cancel = r#"{"reason": "mine"}"#;
    f.refused(
        &engine,
        &f.command("mission.cancel", OTHER_AGENT, "", cancel),
        NOW,
        WireCode::AuthForbidden,
    );
    f.ok(
        &engine,
        &f.command("membership.end", OWNER, "", &end_payload(&worker)),
        NOW,
    );
    // Ended: refused at the fence with the old epoch and with the new one alike.
    for epoch in [1, 2] {
        let e = f.refused(
            &engine,
            &with_epoch(&f, "mission.cancel", OTHER_AGENT, "", cancel, epoch),
            NOW,
            WireCode::MembershipStale,
        );
        assert_eq!(e.reason(), "membership_ended");
    }
}

#[test]
fn commands_without_a_membership_epoch_are_not_fenced() {
    let f = fixture();
    let engine = f.active();
    owner_at_epoch_2(&f, &engine);
    // An Organization-service Command carries no Membership Epoch (§15.1) and is authorized
    // by policy: mission.cancel by the control plane is the kind's own decision.
    f.ok(
        &engine,
        &f.command("mission.cancel", SERVICE, "", r#"{"reason": "policy"}"#),
        NOW,
    );
    assert_eq!(state(&engine, MISSION).0, "cancelled");
}

#[test]
fn a_duplicate_of_an_applied_command_still_returns_its_event_after_a_change() {
    let f = fixture();
    let engine = f.active();
    let submit = f.submit(1);
    let first = engine.perform(&submit, NOW).unwrap();
    f.checked(&first);
    f.ok(
        &engine,
        &f.command(
            "membership.change",
            OWNER,
            "",
            &change_payload(&agent(COORDINATOR), "coordinator", ""),
        ),
        NOW,
    );
    // §15.1: idempotency answers before fencing; the original Event, nothing appended.
    let again = engine.perform(&submit, NOW).unwrap();
    assert!(again.duplicate);
    assert_eq!(again.events, first.events);
}

fn script(f: &Fixture) -> Vec<(VerifiedCommand, UnixMillis)> {
    let at = |s: i64| UnixMillis(NOW.0 + s * 1000);
    let worker = agent(OTHER_AGENT);
    vec![
        (f.create(), at(0)),
        (
            f.command(
                "membership.change",
                OWNER,
                "",
                &change_payload(&worker, "worker", ""),
            ),
            at(1),
        ),
        (
            f.by_coordinator(
                "membership.change",
                1,
                &change_payload(&worker, "reviewer", ""),
            ),
            at(2),
        ),
        // Refused identically by both (stale Membership Epoch after the change).
        (
            f.command("mission.cancel", OTHER_AGENT, "", r#"{"reason": "x"}"#),
            at(3),
        ),
        (
            f.command("membership.end", OWNER, "", &end_payload(&worker)),
            at(4),
        ),
        (
            f.command("membership.end", OWNER, "", &end_payload(&worker)),
            at(5),
        ),
    ]
}

fn run(f: &Fixture, commands: &[(VerifiedCommand, UnixMillis)]) -> (Vec<String>, Vec<EventRecord>) {
    let engine = f.engine();
    let outcomes = commands
        .iter()
        .map(|(c, at)| match engine.perform(c, *at) {
            Ok(p) => {
                f.checked(&p);
                format!("ok {}", p.events.len())
            }
            Err(e) => format!("{} {}", e.wire_code().as_str(), e.reason()),
        })
        .collect();
    let log = engine.store().replay(GROUP, 0, 100).unwrap().events;
    (outcomes, log)
}

#[test]
fn two_engines_fed_the_same_membership_commands_agree_byte_for_byte() {
    let f = fixture();
    let commands = script(&f);
    let (a_outcomes, a_log) = run(&f, &commands);
    let (b_outcomes, b_log) = run(&f, &commands);
    assert_eq!(a_outcomes, b_outcomes);
    assert_eq!(a_log, b_log);
    assert_eq!(
        a_outcomes,
        [
            "ok 1",
            "ok 1",
            "ok 1",
            "MEMBERSHIP_STALE stale_membership_epoch",
            "ok 1",
            "INVALID_STATE_TRANSITION invalid_state_transition",
        ]
    );
    assert_eq!(a_log.len(), 4);
}

#[test]
fn a_fence_checks_the_membership_revision_at_commit() {
    use missionweaveprotocol_engine::decision::Decision;
    use missionweaveprotocol_engine::membership::{fence, membership_key};
    let f = fixture();
    let engine = f.active();
    let cancel = f.command("mission.cancel", OWNER, "", r#"{"reason": "x"}"#);
    let guard = fence(engine.store(), &cancel).unwrap().unwrap();
    let decision = guard.guard(Decision::default());
    assert_eq!(decision.writes.len(), 1);
    assert_eq!(decision.writes[0].key, membership_key(GROUP, &human(OWNER)));
    assert_eq!(
        (
            decision.writes[0].read_revision,
            decision.writes[0].value.is_none()
        ),
        (1, true)
    );
    // A sender without a Membership is not fenced (Worker JIT Memberships are not built).
    let other = f.command("mission.cancel", OTHER_HUMAN, "", r#"{"reason": "x"}"#);
    assert!(fence(engine.store(), &other).unwrap().is_none());
}

#[test]
fn racing_commands_of_the_old_epoch_never_commit_after_the_change() {
    let f = fixture();
    let engine = f.active();
    let change = f.command(
        "membership.change",
        OWNER,
        "",
        &change_payload(&human(OWNER), "mission_owner", ""),
    );
    let adds: Vec<VerifiedCommand> = (0..7)
        .map(|i| {
            let worker = agent(&format!("urn:missionweaveprotocol:agent:w{i}"));
            f.command(
                "membership.change",
                OWNER,
                "",
                &change_payload(&worker, "worker", ""),
            )
        })
        .collect();
    let outcomes: Vec<(String, Result<u64, WireCode>)> = std::thread::scope(|s| {
        let handles: Vec<_> = std::iter::once(&change)
            .chain(adds.iter())
            .map(|c| {
                let engine = &engine;
                s.spawn(move || {
                    let r = engine
                        .perform(c, NOW)
                        .map(|p| p.events[0].sequence)
                        .map_err(|e| e.wire_code());
                    (c.action_id().to_owned(), r)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let change_seq = outcomes[0].1.unwrap();
    for (action, outcome) in &outcomes[1..] {
        match outcome {
            Ok(seq) => assert!(
                *seq < change_seq,
                "{action} committed after the epoch moved"
            ),
            Err(code) => assert_eq!(*code, WireCode::MembershipStale, "{action}"),
        }
    }
    for record in engine.store().replay(GROUP, 0, 100).unwrap().events {
        f.check_event(&record);
    }
    assert_eq!(membership(&engine, &human(OWNER)).unwrap().epoch(), 2);
}
