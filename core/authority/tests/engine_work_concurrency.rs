//! Concurrent `work.accept_offer` on one offer round through one engine and one `InMemoryStore`
//! (§10.3 "the first valid acceptance wins", §15.2): exactly one winner, every other attempt a
//! typed refusal, the Group log contiguous and verified, nothing half-applied.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_work_fixture.rs"]
mod fixture;

use fixture::*;
use missionweaveprotocol::{DescribeError, WireCode};
use missionweaveprotocol_authority::ingress::VerifiedCommand;

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
