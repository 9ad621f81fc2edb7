//! The engine's batched reads (`engine::prefetch`, `Store::read_many`): over a store that
//! batches reads, a Command's likely reads take one call, the Events are byte-identical to
//! the unbatched engine's, idempotency and collisions behave the same (§15.1), and a retry
//! after contention decides on fresh state, never on the prefetched answers (§15.2, §15.3).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Mutex;

use missionweaveprotocol::{DescribeError, WireCode};
use missionweaveprotocol_engine::store::suite::appends;
use missionweaveprotocol_engine::store::suite::engine::{
    GROUP, MISSION, NOW, create, create_in, engine, keys,
};
use missionweaveprotocol_engine::store::{
    Aggregate, AggregateKey, GroupHead, InMemoryStore, Read, ReadValue, Receipt, ReceiptKey,
    ReplayPage, SnapshotPointer, Store, StoreError, Transaction,
};

/// An in-memory store that says it batches reads, logs every call, and can commit a
/// competing transaction just before the next commit.
#[derive(Default)]
struct Batching {
    inner: InMemoryStore,
    batches: bool,
    calls: Mutex<Vec<&'static str>>,
    sneak: Mutex<Option<Transaction>>,
}

impl Batching {
    fn new(batches: bool) -> Self {
        Self {
            batches,
            ..Self::default()
        }
    }

    fn log(&self, call: &'static str) {
        self.calls.lock().unwrap().push(call);
    }

    fn take_calls(&self) -> Vec<&'static str> {
        std::mem::take(&mut *self.calls.lock().unwrap())
    }
}

impl Store for Batching {
    fn commit(&self, tx: Transaction) -> Result<(), StoreError> {
        self.log("commit");
        if let Some(first) = self.sneak.lock().unwrap().take() {
            self.inner.commit(first).unwrap();
        }
        self.inner.commit(tx)
    }
    fn aggregate(&self, key: &AggregateKey) -> Result<Option<Aggregate>, StoreError> {
        self.log("aggregate");
        self.inner.aggregate(key)
    }
    fn list(&self, kind: &str, id_prefix: &str) -> Result<Vec<(String, Aggregate)>, StoreError> {
        self.log("list");
        self.inner.list(kind, id_prefix)
    }
    fn receipt(&self, key: &ReceiptKey) -> Result<Option<Receipt>, StoreError> {
        self.log("receipt");
        self.inner.receipt(key)
    }
    fn head(&self, group: &str) -> Result<GroupHead, StoreError> {
        self.log("head");
        self.inner.head(group)
    }
    fn read_many(&self, reads: &[Read]) -> Result<Vec<ReadValue>, StoreError> {
        self.log("read_many");
        self.inner.read_many(reads)
    }
    fn batches_reads(&self) -> bool {
        self.batches
    }
    fn replay(&self, group: &str, after: u64, limit: usize) -> Result<ReplayPage, StoreError> {
        self.log("replay");
        self.inner.replay(group, after, limit)
    }
    fn archive_before(
        &self,
        group: &str,
        before: u64,
        snapshot: SnapshotPointer,
    ) -> Result<(), StoreError> {
        self.inner.archive_before(group, before, snapshot)
    }
}

#[test]
fn a_batching_store_answers_a_commands_reads_in_one_call() {
    let keys = keys();
    let store = Batching::new(true);
    let engine = engine(&keys, &store, "urn:missionweaveprotocol:event:");
    engine.perform(&create(&keys), NOW).unwrap();
    // The receipt, the Group, the Mission ID and the head: one call, then the commit.
    assert_eq!(store.take_calls(), ["read_many", "commit"]);

    let unbatched = Batching::new(false);
    let engine = engine_over(&keys, &unbatched);
    engine.perform(&create(&keys), NOW).unwrap();
    let calls = unbatched.take_calls();
    assert!(!calls.contains(&"read_many"), "{calls:?}");
    assert_eq!(
        calls.iter().filter(|c| **c != "commit").count(),
        4,
        "{calls:?}"
    );
}

fn engine_over<'s>(
    keys: &missionweaveprotocol_engine::store::suite::engine::Keys,
    store: &'s Batching,
) -> missionweaveprotocol_engine::engine::Engine<
    &'s Batching,
    missionweaveprotocol::crypto::SigningKey,
    missionweaveprotocol_engine::events::SequentialEventIds,
> {
    engine(keys, store, "urn:missionweaveprotocol:event:")
}

#[test]
fn batched_and_unbatched_engines_emit_the_same_bytes_and_refusals() {
    let keys = keys();
    let other_group = "urn:missionweaveprotocol:group:payroll";
    let other_mission = "urn:missionweaveprotocol:mission:payroll";
    let commands = [
        create(&keys),
        // A duplicate: the first Event again, nothing appended.
        create(&keys),
        // The same Action ID with other content: ACTION_ID_COLLISION.
        create_in(
            &keys,
            GROUP,
            other_mission,
            "0b6d1c1e-6f0a-4b7e-9a53-2f1f0c9e7d11",
        ),
        // The Mission ID taken, another Action: refused by the decision.
        create_in(
            &keys,
            other_group,
            MISSION,
            "1b6d1c1e-6f0a-4b7e-9a53-2f1f0c9e7d11",
        ),
        create_in(
            &keys,
            other_group,
            other_mission,
            "2b6d1c1e-6f0a-4b7e-9a53-2f1f0c9e7d11",
        ),
    ];
    let outcome = |batches: bool| {
        let store = Batching::new(batches);
        let engine = engine_over(&keys, &store);
        commands
            .iter()
            .map(|command| match engine.perform(command, NOW) {
                Ok(done) => Ok((
                    done.duplicate,
                    done.events
                        .iter()
                        .map(|e| (e.sequence, e.body.to_vec()))
                        .collect::<Vec<_>>(),
                )),
                Err(e) => Err((e.wire_code(), DescribeError::reason(&e).to_owned())),
            })
            .collect::<Vec<_>>()
    };
    let batched = outcome(true);
    assert_eq!(batched, outcome(false));
    assert!(matches!(&batched[0], Ok((false, events)) if events.len() == 1));
    assert_eq!(batched[1], Ok((true, batched[0].clone().unwrap().1)));
    assert_eq!(
        batched[2].clone().unwrap_err().0,
        WireCode::ActionIdCollision
    );
    assert!(batched[3].is_err());
    assert!(matches!(&batched[4], Ok((false, _))));
}

#[test]
fn a_retry_after_contention_reads_fresh_state() {
    let keys = keys();
    let store = Batching::new(true);
    // Another writer appends to the Group between the prefetch and the commit: the first
    // commit fails on the sequence; the retry must read the new head, not the prefetched one.
    *store.sneak.lock().unwrap() = Some(appends(GROUP, 1, 1));
    let engine = engine_over(&keys, &store);
    let done = engine.perform(&create(&keys), NOW).unwrap();
    assert_eq!(done.events[0].sequence, 2);
    assert_eq!(
        store.take_calls(),
        [
            "read_many",
            "commit",
            "aggregate",
            "aggregate",
            "head",
            "commit"
        ]
    );
    assert_eq!(store.inner.head(GROUP).unwrap().next_sequence, 3);
}

/// A backend that answers `read_many` with the wrong number or kinds of values gets a typed
/// store error, never a decision on a wrong value.
#[test]
fn a_backend_answering_the_wrong_reads_is_a_store_error() {
    struct Wrong(InMemoryStore);
    impl Store for Wrong {
        fn commit(&self, tx: Transaction) -> Result<(), StoreError> {
            self.0.commit(tx)
        }
        fn aggregate(&self, key: &AggregateKey) -> Result<Option<Aggregate>, StoreError> {
            self.0.aggregate(key)
        }
        fn list(&self, kind: &str, prefix: &str) -> Result<Vec<(String, Aggregate)>, StoreError> {
            self.0.list(kind, prefix)
        }
        fn receipt(&self, key: &ReceiptKey) -> Result<Option<Receipt>, StoreError> {
            self.0.receipt(key)
        }
        fn head(&self, group: &str) -> Result<GroupHead, StoreError> {
            self.0.head(group)
        }
        fn read_many(&self, reads: &[Read]) -> Result<Vec<ReadValue>, StoreError> {
            Ok(reads.iter().map(|_| ReadValue::Receipt(None)).collect())
        }
        fn batches_reads(&self) -> bool {
            true
        }
        fn replay(&self, group: &str, after: u64, limit: usize) -> Result<ReplayPage, StoreError> {
            self.0.replay(group, after, limit)
        }
        fn archive_before(
            &self,
            group: &str,
            before: u64,
            snapshot: SnapshotPointer,
        ) -> Result<(), StoreError> {
            self.0.archive_before(group, before, snapshot)
        }
    }
    let keys = keys();
    let store = Wrong(InMemoryStore::new());
    let e = engine(&keys, &store, "e:")
        .perform(&create(&keys), NOW)
        .unwrap_err();
    assert_eq!(e.wire_code(), WireCode::InternalError, "{e}");
    assert_eq!(store.0.head(GROUP).unwrap().next_sequence, 1);
}
