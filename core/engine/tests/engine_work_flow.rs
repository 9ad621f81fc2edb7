//! WorkItem Commands through the engine (§10.2): the happy path, each Event verified (six-stage
//! verifier, Event profile, and `event.schema.json`), and the refusals the engine adds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_work_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol::json::Value;
use missionweaveprotocol::{DescribeError, WireCode};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

#[test]
fn happy_path_create_to_accept_result() {
    let f = fixture();
    let engine = f.active();
    let proposal = f.command(
        "work.propose",
        WORKER,
        "",
        &format!(
            r#"{{"proposalId":"urn:missionweaveprotocol:proposal:p1","contract":{}}}"#,
            contract(&[])
        ),
    );
    f.ok(&engine, &proposal, NOW);
    let authorize = f.by_coordinator(
        "work.authorize",
        1,
        &format!(
            r#"{{"workItemId":"{W1}","conversationId":"{CONVERSATION}","proposalId":"urn:missionweaveprotocol:proposal:p1"}}"#
        ),
    );
    let events = f.ok(&engine, &authorize, NOW);
    assert_eq!(
        events[0].get("workItemId").and_then(Value::as_str),
        Some(W1)
    );
    assert_eq!(item_state(&engine, W1), "open");
    f.ok(&engine, &f.offer(W1, &[WORKER], "r1"), NOW);
    assert_eq!(item_state(&engine, W1), "offered");
    f.ok(&engine, &f.accept(WORKER, W1), NOW);
    assert_eq!(item_state(&engine, W1), "queued");
    let (epoch, lease) = ownership(&engine, W1);
    assert_eq!(epoch, 1);
    f.ok(
        &engine,
        &f.by_worker("work.start", WORKER, W1, epoch, &lease, ""),
        NOW,
    );
    let (_, exec) = execution(&engine, W1);
    f.ok(
        &engine,
        &f.by_worker(
            "ext.missionweaveprotocol.core.work_execution_lease_renew",
            WORKER,
            W1,
            epoch,
            &exec,
            r#""leaseSeconds":600"#,
        ),
        NOW,
    );
    f.ok(
        &engine,
        &f.by_worker(
            "work.checkpoint",
            WORKER,
            W1,
            epoch,
            &exec,
            Fixture::checkpoint_members(),
        ),
        NOW,
    );
    assert_eq!(item_state(&engine, W1), "queued");
    let (_, lease) = ownership(&engine, W1);
    f.ok(
        &engine,
        &f.by_worker("work.start", WORKER, W1, epoch, &lease, ""),
        NOW,
    );
    let (_, exec) = execution(&engine, W1);
    f.publish_artifact(&engine, W1);
    f.ok(
        &engine,
        &f.by_worker(
            "work.submit",
            WORKER,
            W1,
            epoch,
            &exec,
            &Fixture::submit_members(W1),
        ),
        NOW,
    );
    assert_eq!(item_state(&engine, W1), "submitted");
    f.ok(&engine, &f.accept_result(W1), NOW);
    let (revision, item) = stored(&engine, W1);
    assert_eq!(item.state.as_str(), "verified");
    assert_eq!(
        item.revision, revision,
        "the document revision is the store revision"
    );

    let log = whole_log(&f, &engine);
    assert_eq!(
        kinds(&log),
        [
            "mission.created",
            "work.proposed",
            "work.authorized",
            "work.offer.created",
            "work.offer.accepted",
            "work.started",
            "work.progressed",
            "work.checkpointed",
            "work.started",
            "artifact.published",
            "work.submitted",
            "work.result.accepted",
        ]
    );
    // Each WorkItem Event carries the WorkItem's revision after the change (§15.2); the
    // Artifact's Event carries the Artifact's (1).
    let revisions: Vec<u64> = log[2..]
        .iter()
        .filter(|e| e.get("kind").and_then(Value::as_str) != Some("artifact.published"))
        .map(|e| {
            e.get("aggregateRevision")
                .and_then(Value::as_number)
                .unwrap()
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(revisions, (1..=9).collect::<Vec<u64>>());
}

#[test]
fn block_unblock_fail_cancel_and_dependency_rows() {
    let f = fixture();
    let engine = f.active();
    f.active_item(&engine, W1);
    let (epoch, exec) = execution(&engine, W1);
    f.ok(
        &engine,
        &f.by_worker(
            "work.block",
            WORKER,
            W1,
            epoch,
            &exec,
            &format!(
                r#""reason":"needs the bank statement",{}"#,
                Fixture::checkpoint_members()
            ),
        ),
        NOW,
    );
    assert_eq!(item_state(&engine, W1), "blocked");
    let unblock = f.by_coordinator("work.unblock", 1, &format!(r#"{{"workItemId":"{W1}"}}"#));
    f.ok(&engine, &unblock, NOW);
    assert_eq!(item_state(&engine, W1), "queued");
    // A Coordinator-reported failure (no claim), then a re-offer raises the epoch.
    let fail = f.by_coordinator(
        "work.fail",
        1,
        &format!(
            r#"{{"workItemId":"{W1}","reason":"source data unavailable","evidenceIds":["urn:missionweaveprotocol:evidence:f1"]}}"#
        ),
    );
    f.ok(&engine, &fail, NOW);
    assert_eq!(item_state(&engine, W1), "failed");
    // Dependency insertion on a failed item, then W1's start needs W2 verified.
    f.ok(&engine, &f.authorize(W2, &[]), NOW);
    let revise = f.by_coordinator(
        "ext.missionweaveprotocol.core.work_dependency_add",
        1,
        &format!(r#"{{"workItemId":"{W1}","dependencyId":"{W2}"}}"#),
    );
    f.ok(&engine, &revise, NOW);
    // The reverse edge closes a cycle.
    let cycle = f.by_coordinator(
        "ext.missionweaveprotocol.core.work_dependency_add",
        1,
        &format!(r#"{{"workItemId":"{W2}","dependencyId":"{W1}"}}"#),
    );
    f.refused(&engine, &cycle, NOW, WireCode::InvalidCommand);
    f.ok(&engine, &f.offer(W1, &[WORKER], "r2"), NOW);
    f.ok(&engine, &f.accept(WORKER, W1), NOW);
    let (epoch, lease) = ownership(&engine, W1);
    assert_eq!(epoch, 2, "a new acceptance is a new Ownership Epoch");
    let start = f.by_worker("work.start", WORKER, W1, epoch, &lease, "");
    f.refused(&engine, &start, NOW, WireCode::InvalidCommand);
    // Cancel by the MissionOwner.
    let cancel = f.command(
        "work.cancel",
        OWNER,
        "",
        &format!(r#"{{"workItemId":"{W1}","reason":"no longer needed"}}"#),
    );
    f.ok(&engine, &cancel, NOW);
    assert_eq!(item_state(&engine, W1), "cancelled");
    whole_log(&f, &engine);
}

#[test]
fn wrong_state_is_refused() {
    let f = fixture();
    let engine = f.active();
    f.ok(&engine, &f.authorize(W1, &[]), NOW);
    // accept_offer before any offer, accept_result on an open item.
    f.refused(
        &engine,
        &f.accept(WORKER, W1),
        NOW,
        WireCode::InvalidStateTransition,
    );
    f.refused(
        &engine,
        &f.accept_result(W1),
        NOW,
        WireCode::InvalidStateTransition,
    );
    // An unknown WorkItem.
    f.refused(
        &engine,
        &f.offer(W2, &[WORKER], "x"),
        NOW,
        WireCode::InvalidStateTransition,
    );
    // A second authorize of the same ID.
    let again = f.authorize(W1, &[]);
    assert!(engine.perform(&again, NOW).is_err());
    assert_eq!(item_state(&engine, W1), "open");
}

#[test]
fn stale_ownership_epoch_is_fenced() {
    let f = fixture();
    let engine = f.active();
    f.queued(&engine, W1);
    let (epoch, lease) = ownership(&engine, W1);
    let stale = f.by_worker("work.start", WORKER, W1, epoch + 1, &lease, "");
    f.refused(&engine, &stale, NOW, WireCode::WorkStaleOwnership);
    let stale = f.by_worker("work.start", WORKER, W1, epoch - 1, &lease, "");
    f.refused(&engine, &stale, NOW, WireCode::WorkStaleOwnership);
    assert_eq!(item_state(&engine, W1), "queued");
    f.ok(
        &engine,
        &f.by_worker("work.start", WORKER, W1, epoch, &lease, ""),
        NOW,
    );
}

#[test]
fn expected_revision_is_checked_against_the_work_item() {
    let f = fixture();
    let engine = f.active();
    f.ok(&engine, &f.authorize(W1, &[]), NOW);
    let offer = |revision: u64| {
        f.command(
            "work.offer",
            COORDINATOR,
            &format!(r#""coordinatorEpoch": 1, "expectedRevision": {revision}"#),
            &format!(
                r#"{{"workItemId":"{W1}","candidates":[{{"offerId":"urn:missionweaveprotocol:offer:x","agentId":"{WORKER}","agentCardVersion":1}}],"selectionBasis":{}}}"#,
                selection_basis()
            ),
        )
    };
    let error = f.refused(&engine, &offer(2), NOW, WireCode::RevisionConflict);
    assert!(error.to_string().contains("revision 1"), "{error}");
    // §15.3: a stale (older) revision is refused just as a future one is.
    let error = f.refused(&engine, &offer(0), NOW, WireCode::RevisionConflict);
    assert!(error.to_string().contains("revision 1"), "{error}");
    f.ok(&engine, &offer(1), NOW);
    assert_eq!(stored(&engine, W1).0, 2);
}

/// §15.3 on a WorkItem several revisions in: `expectedRevision` = current − 1 (the revision
/// before the last transition, what a client that missed one Event sends) and current + 1 are
/// both `REVISION_CONFLICT`, nothing applied; the current one applies.
#[test]
fn a_stale_or_future_expected_revision_is_refused_on_an_existing_work_item() {
    let f = fixture();
    let engine = f.active();
    f.queued(&engine, W1);
    let (current, _) = stored(&engine, W1);
    assert!(current >= 3, "authorize, offer, accept: revision {current}");
    let (epoch, lease) = ownership(&engine, W1);
    let start = |revision: u64| {
        f.command(
            "work.start",
            WORKER,
            &format!(r#""expectedRevision": {revision}"#),
            &format!(r#"{{"workItemId":"{W1}","ownershipEpoch":{epoch},"leaseId":"{lease}"}}"#),
        )
    };
    for wrong in [current - 1, current + 1] {
        let error = f.refused(&engine, &start(wrong), NOW, WireCode::RevisionConflict);
        assert!(
            error.to_string().contains(&format!("revision {current}")),
            "{error}"
        );
        assert_eq!(stored(&engine, W1).0, current);
        assert_eq!(item_state(&engine, W1), "queued");
    }
    f.ok(&engine, &start(current), NOW);
    assert_eq!(item_state(&engine, W1), "active");
}

#[test]
fn roles_are_enforced() {
    let f = fixture();
    let engine = f.active();
    // Coordinator-only kinds: a human, another Agent, a stale Coordinator Epoch.
    let by_owner = f.command(
        "work.authorize",
        OWNER,
        "",
        &format!(
            r#"{{"workItemId":"{W1}","conversationId":"{CONVERSATION}","contract":{}}}"#,
            contract(&[])
        ),
    );
    f.refused(&engine, &by_owner, NOW, WireCode::AuthForbidden);
    let by_agent = f.command(
        "work.authorize",
        WORKER,
        r#""coordinatorEpoch": 1"#,
        &format!(
            r#"{{"workItemId":"{W1}","conversationId":"{CONVERSATION}","contract":{}}}"#,
            contract(&[])
        ),
    );
    f.refused(&engine, &by_agent, NOW, WireCode::AuthForbidden);
    let stale = f.by_coordinator(
        "work.authorize",
        2,
        &format!(
            r#"{{"workItemId":"{W1}","conversationId":"{CONVERSATION}","contract":{}}}"#,
            contract(&[])
        ),
    );
    f.refused(&engine, &stale, NOW, WireCode::AuthStaleCoordinator);
    f.queued(&engine, W1);
    let (epoch, lease) = ownership(&engine, W1);
    // Owner-only kinds: another Agent with the right epoch and lease, a human.
    let non_owner = f.by_worker("work.start", COORDINATOR, W1, epoch, &lease, "");
    f.refused(&engine, &non_owner, NOW, WireCode::AuthForbidden);
    let human = f.by_worker("work.start", OWNER, W1, epoch, &lease, "");
    f.refused(&engine, &human, NOW, WireCode::AuthForbidden);
    // work.cancel by another human is not the MissionOwner's.
    let cancel = f.command(
        "work.cancel",
        OTHER_HUMAN,
        "",
        &format!(r#"{{"workItemId":"{W1}","reason":"no"}}"#),
    );
    f.refused(&engine, &cancel, NOW, WireCode::AuthForbidden);
    // A service (Organization policy) may cancel; the Coordinator too.
    let by_service = f.command(
        "work.cancel",
        SERVICE,
        "",
        &format!(r#"{{"workItemId":"{W1}","reason":"policy"}}"#),
    );
    let engine2 = f.active();
    f.queued(&engine2, W1);
    f.ok(&engine2, &by_service, NOW);
    assert_eq!(item_state(&engine2, W1), "cancelled");
    assert_eq!(item_state(&engine, W1), "queued");
}

#[test]
fn two_engines_emit_identical_logs_and_items() {
    let f = fixture();
    let a = f.engine();
    let b = f.engine();
    let mut commands = vec![
        f.create(),
        f.authorize(W1, &[]),
        f.offer(W1, &[WORKER], "r1"),
        f.accept(WORKER, W1),
    ];
    for c in &commands {
        let x = a.perform(c, NOW).unwrap();
        let y = b.perform(c, NOW).unwrap();
        assert_eq!(x, y);
    }
    // The granted lease IDs are the same, so the Worker's next Commands apply to both.
    let (epoch, lease) = ownership(&a, W1);
    assert_eq!((epoch, lease.clone()), ownership(&b, W1));
    commands.clear();
    commands.push(f.by_worker("work.start", WORKER, W1, epoch, &lease, ""));
    for c in &commands {
        assert_eq!(a.perform(c, NOW).unwrap(), b.perform(c, NOW).unwrap());
    }
    let (_, exec) = execution(&a, W1);
    let publish = f.publish_command(&a, W1);
    assert_eq!(
        a.perform_with_resolver(&publish, NOW, &f.registry).unwrap(),
        b.perform_with_resolver(&publish, NOW, &f.registry).unwrap()
    );
    let next = [
        f.by_worker(
            "work.submit",
            WORKER,
            W1,
            epoch,
            &exec,
            &Fixture::submit_members(W1),
        ),
        f.accept_result(W1),
    ];
    for c in &next {
        assert_eq!(a.perform(c, NOW).unwrap(), b.perform(c, NOW).unwrap());
    }
    assert_eq!(
        a.replay(GROUP, 0, 100).unwrap(),
        b.replay(GROUP, 0, 100).unwrap()
    );
    assert_eq!(stored(&a, W1), stored(&b, W1));
    assert_eq!(item_state(&a, W1), "verified");
}

/// §11.3 through the engine: an Execution Lease renewal must strictly extend the lease
/// (the kernel's `Lease::renew`, `not_extending`): a renewal to the same expiry or an earlier
/// one is refused with nothing applied; a longer one applies.
#[test]
fn an_execution_lease_renewal_must_strictly_extend_the_lease() {
    let f = fixture();
    let engine = f.active();
    f.active_item(&engine, W1);
    let (epoch, exec) = execution(&engine, W1);
    let renew = |seconds: u64| {
        f.by_worker(
            "ext.missionweaveprotocol.core.work_execution_lease_renew",
            WORKER,
            W1,
            epoch,
            &exec,
            &format!(r#""leaseSeconds":{seconds}"#),
        )
    };
    let expiry = |engine: &TestEngine| {
        stored(engine, W1)
            .1
            .execution_lease
            .unwrap()
            .window()
            .expires_at
    };
    let granted = expiry(&engine);
    // Started at NOW with the default 300 s: renewing at NOW to NOW + 300 s extends nothing,
    // and at NOW + 50 s to NOW + 250 s shortens it.
    for (seconds, at) in [(300, NOW), (200, UnixMillis(NOW.0 + 50_000))] {
        let before = last_sequence(&engine);
        let error = engine.perform(&renew(seconds), at).unwrap_err();
        assert_eq!(error.reason(), "not_extending", "{error}");
        assert_eq!(last_sequence(&engine), before, "nothing appended");
        assert_eq!(expiry(&engine), granted, "the lease is unchanged");
    }
    f.ok(&engine, &renew(301), NOW);
    assert_eq!(expiry(&engine), UnixMillis(granted.0 + 1_000));
}
