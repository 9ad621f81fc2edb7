//! Concurrent `work.accept_offer` on one offer round through one engine and one `InMemoryStore`
//! (§10.3 "the first valid acceptance wins", §15.2): exactly one winner, every other attempt a
//! typed refusal, the Group log contiguous and verified, nothing half-applied.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_work_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol::{DescribeError, WireCode};
use missionweaveprotocol_engine::ingress::VerifiedCommand;

const THREADS: usize = 8;

fn race(engine: &TestEngine, commands: &[VerifiedCommand]) -> Vec<Result<(), WireCode>> {
    std::thread::scope(|s| {
        let handles: Vec<_> = commands
            .iter()
            .map(|c| {
                s.spawn(move || {
                    engine
                        .perform(c, NOW)
                        .map(|p| assert!(!p.duplicate))
                        .map_err(|e| e.wire_code())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn concurrent_acceptances_have_exactly_one_winner() {
    for round in 0..4 {
        let f = fixture();
        let engine = f.active();
        f.ok(&engine, &f.authorize(W1, &[]), NOW);
        // Two candidates (§10.3 bounded set): both Agents race with several Commands each.
        f.ok(&engine, &f.offer(W1, &[WORKER, COORDINATOR], "r1"), NOW);
        let before = last_sequence(&engine);
        let commands: Vec<VerifiedCommand> = (0..THREADS)
            .map(|i| {
                let agent = if (i + round) % 2 == 0 {
                    WORKER
                } else {
                    COORDINATOR
                };
                f.accept(agent, W1)
            })
            .collect();
        let outcomes = race(&engine, &commands);
        let winners = outcomes.iter().filter(|o| o.is_ok()).count();
        assert_eq!(winners, 1, "exactly one acceptance wins: {outcomes:?}");
        for outcome in &outcomes {
            if let Err(code) = outcome {
                assert!(
                    matches!(
                        code,
                        WireCode::WorkAlreadyOwned | WireCode::InvalidStateTransition
                    ),
                    "a loser gets a typed refusal, not {code:?}"
                );
            }
        }
        // One Event appended, the item at revision 3 with epoch 1.
        assert_eq!(last_sequence(&engine), before + 1);
        let (revision, item) = stored(&engine, W1);
        assert_eq!((revision, item.state.as_str()), (3, "queued"));
        assert_eq!(item.owner.as_ref().unwrap().ownership_epoch, 1);
        let log = whole_log(&f, &engine);
        assert_eq!(kinds(&log).last().unwrap(), "work.offer.accepted");
    }
}

#[test]
fn one_attempt_only_losers_are_contended_or_refused_and_nothing_is_half_applied() {
    let f = fixture();
    let engine = f.engine().with_max_attempts(1);
    f.ok(&engine, &f.create(), NOW);
    f.ok(&engine, &f.authorize(W1, &[]), NOW);
    f.ok(&engine, &f.offer(W1, &[WORKER], "r1"), NOW);
    let commands: Vec<VerifiedCommand> = (0..THREADS).map(|_| f.accept(WORKER, W1)).collect();
    let outcomes = std::thread::scope(|s| {
        let handles: Vec<_> = commands
            .iter()
            .map(|c| s.spawn(|| engine.perform(c, NOW)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect::<Vec<_>>()
    });
    let winners = outcomes.iter().filter(|o| o.is_ok()).count();
    assert_eq!(winners, 1);
    for e in outcomes.iter().filter_map(|o| o.as_ref().err()) {
        match e.wire_code() {
            WireCode::InternalError => assert!(e.retryable(), "contention is retryable"),
            WireCode::InvalidStateTransition => {}
            other => panic!("unexpected refusal {other:?}"),
        }
    }
    assert_eq!(stored(&engine, W1).0, 3);
    whole_log(&f, &engine);
}

#[test]
fn mission_cancel_racing_worker_commands_leaves_no_work_item_running() {
    for round in 0..4 {
        let f = fixture();
        let engine = f.active();
        f.queued(&engine, W1);
        f.ok(&engine, &f.authorize(W2, &[]), NOW);
        f.ok(&engine, &f.offer(W2, &[WORKER], "r1"), NOW);
        let (epoch, lease) = ownership(&engine, W1);
        let mut commands = vec![
            f.by_worker("work.start", WORKER, W1, epoch, &lease, ""),
            f.accept(WORKER, W2),
        ];
        commands.insert(
            round % 3,
            f.command("mission.cancel", OWNER, "", r#"{"reason": "stop"}"#),
        );
        let outcomes = race(&engine, &commands);
        // The cancellation always applies (every Mission state before it is non-terminal);
        // a Worker Command either committed before it (and was then propagated) or is refused
        // on the terminal Mission.
        for (command, outcome) in commands.iter().zip(&outcomes) {
            match (command.kind(), outcome) {
                ("mission.cancel", Ok(())) => {}
                (_, Ok(())) | (_, Err(WireCode::InvalidStateTransition)) => {}
                (kind, other) => panic!("{kind}: {other:?}"),
            }
        }
        assert_eq!(state(&engine, MISSION).0, "cancelled");
        assert_eq!(item_state(&engine, W1), "cancelled");
        assert_eq!(item_state(&engine, W2), "cancelled");
        whole_log(&f, &engine);
    }
}
