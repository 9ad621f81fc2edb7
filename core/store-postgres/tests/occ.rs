//! Optimistic concurrency across connections: stores with connections of their own on one
//! schema (as engines in separate processes are) racing the same append, the same Action ID,
//! the same aggregate, and a write skew over absent aggregates; group commits racing single
//! commits. Exactly one of each conflicting pair wins, every time, and the log stays
//! contiguous.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Barrier;

use common::TestStore;
use missionweaveprotocol_engine::store::suite::{event, event_body, online_sequences};
use missionweaveprotocol_engine::store::{
    AggregateKey, EventRecord, EventRef, Receipt, ReceiptKey, Store, StoreError, Transaction,
};
use missionweaveprotocol_store_postgres::PostgresStore;

const ROUNDS: u64 = 40;

/// Runs `make(i)` on each store at once (released together by a barrier).
fn race<F>(stores: &[&PostgresStore], make: F) -> Vec<Result<(), StoreError>>
where
    F: Fn(usize) -> Transaction + Sync,
{
    let barrier = Barrier::new(stores.len());
    std::thread::scope(|scope| {
        let handles: Vec<_> = stores
            .iter()
            .enumerate()
            .map(|(i, store)| {
                let (barrier, make) = (&barrier, &make);
                scope.spawn(move || {
                    let tx = make(i);
                    barrier.wait();
                    store.commit(tx)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn two_stores_racing_the_same_append_have_exactly_one_winner() {
    let base = TestStore::new();
    let other = base.another();
    let stores = [&base.store, &other];
    for round in 1..=ROUNDS {
        let results = race(&stores, |i| {
            let id = format!("s{i}/{round}");
            let mut tx = Transaction::new();
            tx.append(
                "g",
                EventRecord::new(round, &id, event_body("g", round, &id)),
            );
            tx
        });
        assert_eq!(
            results.iter().filter(|r| r.is_ok()).count(),
            1,
            "{results:?}"
        );
        for r in results.iter().filter_map(|r| r.as_ref().err()) {
            assert!(
                matches!(r, StoreError::SequenceConflict { next, .. } if *next == round + 1),
                "{r:?}"
            );
        }
    }
    assert_eq!(
        online_sequences(&base, "g"),
        (1..=ROUNDS).collect::<Vec<_>>()
    );
}

#[test]
fn two_stores_racing_one_action_id_apply_it_once() {
    let base = TestStore::new();
    let other = base.another();
    let stores = [&base.store, &other];
    for round in 1..=ROUNDS {
        let key = ReceiptKey::new("agent", "a", format!("action-{round}"));
        let group = format!("g{round}");
        let results = race(&stores, |_| {
            let mut tx = Transaction::new();
            tx.record_receipt(
                key.clone(),
                Receipt {
                    signing_hash: "sha256:same".into(),
                    first_event: EventRef {
                        event_id: format!("{group}/event/1"),
                        position: Some((group.clone(), 1)),
                    },
                },
            )
            .append(&group, event(&group, 1));
            tx
        });
        assert_eq!(
            results.iter().filter(|r| r.is_ok()).count(),
            1,
            "{results:?}"
        );
        assert!(
            results
                .iter()
                .all(|r| matches!(r, Ok(()) | Err(StoreError::AlreadyApplied { .. }))),
            "{results:?}"
        );
        assert_eq!(online_sequences(&base, &group), vec![1]);
        // Other signed content under the same Action ID collides.
        let mut tx = Transaction::new();
        tx.record_receipt(
            key.clone(),
            Receipt {
                signing_hash: "sha256:other".into(),
                first_event: EventRef {
                    event_id: "x".into(),
                    position: None,
                },
            },
        );
        assert!(matches!(
            other.commit(tx),
            Err(StoreError::ActionIdCollision { .. })
        ));
    }
}

#[test]
fn two_stores_racing_one_aggregate_revision_have_exactly_one_winner() {
    let base = TestStore::new();
    let other = base.another();
    let stores = [&base.store, &other];
    let key = AggregateKey::new("work_item", "offer");
    for round in 0..ROUNDS {
        let results = race(&stores, |i| {
            let mut tx = Transaction::new();
            tx.put(
                key.clone(),
                round,
                format!("{{\"by\":{i}}}").into_bytes().into(),
            );
            tx
        });
        assert_eq!(
            results.iter().filter(|r| r.is_ok()).count(),
            1,
            "{results:?}"
        );
        for r in results.iter().filter_map(|r| r.as_ref().err()) {
            assert!(
                matches!(r, StoreError::RevisionConflict { current, .. } if *current == round + 1),
                "{r:?}"
            );
        }
    }
    assert_eq!(base.aggregate(&key).unwrap().unwrap().revision, ROUNDS);
}

/// Each decision read the other's aggregate absent and creates its own: run one after the
/// other, the second would see the first's; so at most one may commit (no write skew).
#[test]
fn checks_of_absent_aggregates_prevent_write_skew() {
    let base = TestStore::new();
    let other = base.another();
    let stores = [&base.store, &other];
    for round in 0..ROUNDS {
        let keys = [
            AggregateKey::new("seat", format!("a{round}")),
            AggregateKey::new("seat", format!("b{round}")),
        ];
        let results = race(&stores, |i| {
            let mut tx = Transaction::new();
            tx.check(keys[1 - i].clone(), 0)
                .put(keys[i].clone(), 0, b"{}"[..].into());
            tx
        });
        assert_eq!(
            results.iter().filter(|r| r.is_ok()).count(),
            1,
            "{results:?}"
        );
    }
}

#[test]
fn group_commits_and_single_commits_from_several_stores_keep_one_contiguous_log() {
    let base = TestStore::new();
    let stores: Vec<PostgresStore> = (0..3).map(|_| base.another()).collect();
    const EACH: u64 = 30;
    std::thread::scope(|scope| {
        for (s, store) in stores.iter().enumerate() {
            for t in 0..2 {
                scope.spawn(move || {
                    let mut done = 0;
                    while done < EACH {
                        let next = store.head("g").unwrap().next_sequence;
                        let id = |k: u64| format!("s{s}t{t}/{}", done + k);
                        let result = if t == 0 {
                            let mut tx = Transaction::new();
                            tx.append(
                                "g",
                                EventRecord::new(next, &id(0), event_body("g", next, &id(0))),
                            );
                            vec![store.commit(tx)]
                        } else {
                            // Two write sets in one group commit: the second follows the first.
                            let txs = (0..2)
                                .map(|k| {
                                    let mut tx = Transaction::new();
                                    let sequence = next + k;
                                    tx.append(
                                        "g",
                                        EventRecord::new(
                                            sequence,
                                            &id(k),
                                            event_body("g", sequence, &id(k)),
                                        ),
                                    );
                                    tx
                                })
                                .collect();
                            store.commit_many(txs)
                        };
                        for r in result {
                            match r {
                                Ok(()) => done += 1,
                                Err(e) if e.is_contention() => break,
                                Err(e) => panic!("{e}"),
                            }
                        }
                    }
                });
            }
        }
    });
    let sequences = online_sequences(&base, "g");
    assert_eq!(sequences, (1..=sequences.len() as u64).collect::<Vec<_>>());
    assert!(sequences.len() as u64 >= 6 * EACH, "{}", sequences.len());
}
