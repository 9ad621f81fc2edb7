//! Group commit (`store::GroupCommit`): the store suite unchanged, each write set atomic inside
//! a shared batch, results to their own callers, contiguous sequences under many submitters,
//! no lost wake-up, and a backend that answers the wrong number of results or panics
//! (issue 11, "Group commit"; §15.1–15.3).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use missionweaveprotocol::{DescribeError, WireCode};
use missionweaveprotocol_engine::store::suite::{event, online_sequences};
use missionweaveprotocol_engine::store::{
    Aggregate, AggregateKey, EventRecord, EventRef, GroupCommit, GroupHead, InMemoryStore, Receipt,
    ReceiptKey, ReplayPage, SnapshotPointer, Store, StoreError, Transaction,
};

mod suite {
    use super::{GroupCommit, InMemoryStore};

    missionweaveprotocol_engine::store_test_suite!(|| GroupCommit::new(InMemoryStore::new()));
}

/// Runs `f` on a thread and fails the test if it has not finished within `seconds` (a lost
/// wake-up shows as a hang, which must fail rather than stall the test run).
fn within<T: Send + 'static>(seconds: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(f());
    });
    receiver
        .recv_timeout(Duration::from_secs(seconds))
        .expect("group commit did not finish: a caller was never woken")
}

fn receipt(hash: &str, group: &str, sequence: u64) -> Receipt {
    Receipt {
        signing_hash: hash.to_owned(),
        first_event: EventRef {
            event_id: format!("{group}/event/{sequence}"),
            position: Some((group.to_owned(), sequence)),
        },
    }
}

/// A store whose `commit_many` records batch sizes and can be held shut, so a test decides
/// which write sets queue up together.
#[derive(Debug, Default)]
struct Gated {
    inner: InMemoryStore,
    batches: Mutex<Vec<usize>>,
    closed: Mutex<bool>,
    opened: Condvar,
    /// Set once a `commit_many` is waiting at the closed gate.
    waiting: AtomicBool,
}

impl Gated {
    fn closed() -> Self {
        Self {
            closed: Mutex::new(true),
            ..Self::default()
        }
    }

    fn open(&self) {
        *self.closed.lock().unwrap() = false;
        self.opened.notify_all();
    }
}

impl Store for Gated {
    fn commit(&self, tx: Transaction) -> Result<(), StoreError> {
        self.inner.commit(tx)
    }
    fn commit_many(&self, txs: Vec<Transaction>) -> Vec<Result<(), StoreError>> {
        let mut closed = self.closed.lock().unwrap();
        while *closed {
            self.waiting.store(true, Ordering::SeqCst);
            closed = self.opened.wait(closed).unwrap();
        }
        drop(closed);
        self.batches.lock().unwrap().push(txs.len());
        self.inner.commit_many(txs)
    }
    fn aggregate(&self, key: &AggregateKey) -> Result<Option<Aggregate>, StoreError> {
        self.inner.aggregate(key)
    }
    fn list(&self, kind: &str, id_prefix: &str) -> Result<Vec<(String, Aggregate)>, StoreError> {
        self.inner.list(kind, id_prefix)
    }
    fn receipt(&self, key: &ReceiptKey) -> Result<Option<Receipt>, StoreError> {
        self.inner.receipt(key)
    }
    fn head(&self, group: &str) -> Result<GroupHead, StoreError> {
        self.inner.head(group)
    }
    fn replay(&self, group: &str, after: u64, limit: usize) -> Result<ReplayPage, StoreError> {
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

/// Waits until the leader of the first batch is held at the gate and `queued` write sets wait
/// behind it.
fn wait_for_queue(store: &GroupCommit<Gated>, queued: usize) {
    for _ in 0..2_000 {
        if store.inner().waiting.load(Ordering::SeqCst) && store.queued() == queued {
            return;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    panic!(
        "expected {queued} queued write sets, found {}",
        store.queued()
    );
}

/// One batch mixing a revision conflict, an Action ID collision, an already-applied receipt,
/// a sequence conflict and good write sets: the good ones land, each bad one gets its own
/// typed error and leaves nothing of itself (§15.1, §15.2, §15.3).
#[test]
fn one_failing_command_never_affects_another_in_the_batch() {
    let store = GroupCommit::new(Gated::closed());
    // Committed before the batch: aggregate `a` at revision 1, a receipt with hash h1, and
    // Group `seq` at sequence 1.
    let applied = ReceiptKey::new("agent", "urn:agent:a", "action-1");
    let mut setup = Transaction::new();
    setup
        .put(AggregateKey::new("mission", "a"), 0, b"{}"[..].into())
        .record_receipt(applied.clone(), receipt("sha256:h1", "seq", 1))
        .append("seq", event("seq", 1));
    store.inner().inner.commit(setup).unwrap();

    let good_1 = {
        let mut tx = Transaction::new();
        tx.record_receipt(
            ReceiptKey::new("agent", "urn:agent:a", "good-1"),
            receipt("sha256:g1", "g1", 1),
        )
        .append("g1", event("g1", 1))
        .put(
            AggregateKey::new("mission", "x"),
            0,
            b"{\"x\":1}"[..].into(),
        );
        tx
    };
    let good_2 = {
        let mut tx = Transaction::new();
        tx.append("g2", event("g2", 1))
            .check(AggregateKey::new("mission", "a"), 1);
        tx
    };
    let stale_revision = {
        let mut tx = Transaction::new();
        tx.record_receipt(
            ReceiptKey::new("agent", "urn:agent:a", "stale"),
            receipt("sha256:s", "bad-r", 1),
        )
        .append("bad-r", event("bad-r", 1))
        .put(AggregateKey::new("mission", "y"), 0, b"{}"[..].into())
        .put(AggregateKey::new("mission", "a"), 0, b"{}"[..].into());
        tx
    };
    let collision = {
        let mut tx = Transaction::new();
        tx.record_receipt(applied.clone(), receipt("sha256:h2", "bad-c", 1))
            .append("bad-c", event("bad-c", 1))
            .put(AggregateKey::new("mission", "z"), 0, b"{}"[..].into());
        tx
    };
    let already = {
        let mut tx = Transaction::new();
        tx.record_receipt(applied.clone(), receipt("sha256:h1", "bad-d", 1))
            .append("bad-d", event("bad-d", 1));
        tx
    };
    let gap = {
        let mut tx = Transaction::new();
        tx.append("bad-s", event("bad-s", 1))
            .append("seq", event("seq", 5));
        tx
    };

    std::thread::scope(|scope| {
        // The first caller leads a batch held at the gate; the six others queue behind it.
        let blocker = scope.spawn(|| store.commit(good_tx("blocker")));
        for _ in 0..2_000 {
            if store.inner().waiting.load(Ordering::SeqCst) {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let handles: Vec<_> = [good_1, good_2, stale_revision, collision, already, gap]
            .into_iter()
            .map(|tx| scope.spawn(|| store.commit(tx)))
            .collect();
        wait_for_queue(&store, 6);
        store.inner().open();
        blocker.join().unwrap().unwrap();
        let results: Vec<Result<(), StoreError>> =
            handles.into_iter().map(|h| h.join().unwrap()).collect();

        assert_eq!(*store.inner().batches.lock().unwrap(), vec![1, 6]);
        assert!(results[0].is_ok(), "{:?}", results[0]);
        assert!(results[1].is_ok(), "{:?}", results[1]);
        match &results[2] {
            Err(
                e @ StoreError::RevisionConflict {
                    key,
                    expected: 0,
                    current: 1,
                },
            ) => {
                assert_eq!(key, &AggregateKey::new("mission", "a"));
                assert_eq!(e.wire_code(), WireCode::RevisionConflict);
            }
            other => panic!("stale revision: {other:?}"),
        }
        match &results[3] {
            Err(e @ StoreError::ActionIdCollision { key }) => {
                assert_eq!(key, &applied);
                assert_eq!(e.wire_code(), WireCode::ActionIdCollision);
            }
            other => panic!("collision: {other:?}"),
        }
        match &results[4] {
            Err(StoreError::AlreadyApplied { receipt, .. }) => {
                assert_eq!(receipt.signing_hash, "sha256:h1");
            }
            other => panic!("already applied: {other:?}"),
        }
        assert!(
            matches!(
                &results[5],
                Err(StoreError::SequenceConflict { group, expected: 5, next: 2 }) if group == "seq"
            ),
            "{:?}",
            results[5]
        );
    });

    // The good ones landed, whole.
    assert_eq!(online_sequences(&store, "g1"), vec![1]);
    assert_eq!(online_sequences(&store, "g2"), vec![1]);
    assert_eq!(
        store
            .aggregate(&AggregateKey::new("mission", "x"))
            .unwrap()
            .unwrap()
            .revision,
        1
    );
    assert!(
        store
            .receipt(&ReceiptKey::new("agent", "urn:agent:a", "good-1"))
            .unwrap()
            .is_some()
    );
    // Nothing of the refused ones: no Events, no aggregates, no receipts, no revision moved.
    for group in ["bad-r", "bad-c", "bad-d", "bad-s"] {
        assert_eq!(store.head(group).unwrap().next_sequence, 1, "{group}");
    }
    assert_eq!(online_sequences(&store, "seq"), vec![1]);
    for id in ["y", "z"] {
        assert_eq!(
            store.aggregate(&AggregateKey::new("mission", id)).unwrap(),
            None
        );
    }
    assert_eq!(
        store
            .aggregate(&AggregateKey::new("mission", "a"))
            .unwrap()
            .unwrap()
            .revision,
        1
    );
    assert!(
        store
            .receipt(&ReceiptKey::new("agent", "urn:agent:a", "stale"))
            .unwrap()
            .is_none()
    );
    assert_eq!(
        store.receipt(&applied).unwrap().unwrap().signing_hash,
        "sha256:h1"
    );
    let stats = store.stats();
    assert_eq!((stats.batches, stats.transactions), (2, 7));
}

fn good_tx(group: &str) -> Transaction {
    let mut tx = Transaction::new();
    tx.append(group, event(group, 1));
    tx
}

/// N threads × M commits to one shared Group (re-reading the head after a conflict, as the
/// engine does) and to a Group of their own: every commit lands once, both kinds of log stay
/// contiguous, each thread's Events keep its order (§4.7, §15.2).
#[test]
fn many_submitters_leave_contiguous_sequences() {
    const THREADS: u64 = 16;
    const EACH: u64 = 40;
    let store: &'static GroupCommit<InMemoryStore> =
        Box::leak(Box::new(GroupCommit::new(InMemoryStore::new())));
    within(60, move || {
        std::thread::scope(|scope| {
            for thread in 0..THREADS {
                scope.spawn(move || {
                    let own = format!("own-{thread}");
                    for i in 0..EACH {
                        let mut tx = Transaction::new();
                        tx.append(&own, event(&own, i + 1));
                        store.commit(tx).unwrap();
                        loop {
                            let next = store.head("shared").unwrap().next_sequence;
                            let id = format!("t{thread}/{i}");
                            let mut tx = Transaction::new();
                            tx.append("shared", EventRecord::new(next, &id, &b"{}"[..]));
                            match store.commit(tx) {
                                Ok(()) => break,
                                Err(e) if e.is_contention() => continue,
                                Err(e) => panic!("{e}"),
                            }
                        }
                    }
                });
            }
        });
    });
    let shared = online_sequences(store, "shared");
    assert_eq!(shared, (1..=THREADS * EACH).collect::<Vec<_>>());
    for thread in 0..THREADS {
        assert_eq!(
            online_sequences(store, &format!("own-{thread}")),
            (1..=EACH).collect::<Vec<_>>()
        );
    }
    let mut ids = Vec::new();
    let mut after = 0;
    loop {
        let page = store.replay("shared", after, 100).unwrap();
        ids.extend(page.events.iter().map(|e| e.event_id.to_string()));
        match page.continuation {
            Some(next) => after = next,
            None => break,
        }
    }
    for thread in 0..THREADS {
        let mine: Vec<&String> = ids
            .iter()
            .filter(|id| id.starts_with(&format!("t{thread}/")))
            .collect();
        let expected: Vec<String> = (0..EACH).map(|i| format!("t{thread}/{i}")).collect();
        assert_eq!(mine, expected.iter().collect::<Vec<_>>());
    }
    let stats = store.stats();
    assert!(stats.transactions >= THREADS * EACH * 2, "{stats:?}");
    assert!(stats.largest_batch as usize <= store.max_batch());
}

/// Every caller gets its own result: threads alternate a write set that must succeed with one
/// that must fail on a revision only that thread knows; each failure names the caller's own
/// aggregate and expected revision.
#[test]
fn results_go_to_their_own_callers() {
    const THREADS: u64 = 24;
    const EACH: u64 = 30;
    let store: &'static GroupCommit<InMemoryStore> = Box::leak(Box::new(
        GroupCommit::with_max_batch(InMemoryStore::new(), 5),
    ));
    within(60, move || {
        std::thread::scope(|scope| {
            for thread in 0..THREADS {
                scope.spawn(move || {
                    let key = AggregateKey::new("counter", format!("c{thread}"));
                    for i in 0..EACH {
                        let mut good = Transaction::new();
                        good.put(key.clone(), i, format!("{i}").into_bytes().into());
                        store.commit(good).unwrap();
                        // Expects a revision this thread's counter has not reached.
                        let wrong = 1_000 + thread * 100 + i;
                        let mut bad = Transaction::new();
                        bad.put(key.clone(), wrong, b"x"[..].into());
                        match store.commit(bad) {
                            Err(StoreError::RevisionConflict {
                                key: got,
                                expected,
                                current,
                            }) => {
                                assert_eq!(got, key);
                                assert_eq!(expected, wrong);
                                assert_eq!(current, i + 1);
                            }
                            other => panic!("thread {thread}: {other:?}"),
                        }
                    }
                });
            }
        });
    });
    for thread in 0..THREADS {
        let counter = store
            .aggregate(&AggregateKey::new("counter", format!("c{thread}")))
            .unwrap()
            .unwrap();
        assert_eq!(counter.revision, EACH);
    }
    assert!(store.stats().largest_batch <= 5);
}

/// Many threads, tiny batches (so a leader often leads batches that do not hold its own write
/// set and hands over leadership many times): every caller returns, none waits forever.
#[test]
fn no_caller_is_left_waiting() {
    const THREADS: u64 = 64;
    const EACH: u64 = 60;
    for max_batch in [1, 3, 64] {
        let store: &'static GroupCommit<InMemoryStore> = Box::leak(Box::new(
            GroupCommit::with_max_batch(InMemoryStore::new(), max_batch),
        ));
        within(60, move || {
            std::thread::scope(|scope| {
                for thread in 0..THREADS {
                    scope.spawn(move || {
                        let group = format!("g{thread}");
                        for i in 1..=EACH {
                            let mut tx = Transaction::new();
                            tx.append(&group, event(&group, i));
                            store.commit(tx).unwrap();
                        }
                    });
                }
            });
        });
        assert_eq!(store.queued(), 0);
        assert_eq!(store.stats().transactions, THREADS * EACH);
        for thread in 0..THREADS {
            assert_eq!(
                store.head(&format!("g{thread}")).unwrap().next_sequence,
                EACH + 1
            );
        }
    }
}

/// A backend answering `commit_many` with too few or too many results, or panicking.
#[derive(Debug, Default)]
struct Faulty {
    inner: InMemoryStore,
    /// Results to add (positive) or drop (negative) from every answer.
    skew: i64,
    panics: AtomicBool,
}

impl Store for Faulty {
    fn commit(&self, tx: Transaction) -> Result<(), StoreError> {
        self.inner.commit(tx)
    }
    fn commit_many(&self, txs: Vec<Transaction>) -> Vec<Result<(), StoreError>> {
        if self.panics.swap(false, Ordering::SeqCst) {
            panic!("backend failure for the test");
        }
        let mut results = self.inner.commit_many(txs);
        if self.skew < 0 {
            results.truncate(
                results
                    .len()
                    .saturating_sub(self.skew.unsigned_abs() as usize),
            );
        } else {
            results.extend((0..self.skew).map(|_| Ok(())));
        }
        results
    }
    fn aggregate(&self, key: &AggregateKey) -> Result<Option<Aggregate>, StoreError> {
        self.inner.aggregate(key)
    }
    fn list(&self, kind: &str, id_prefix: &str) -> Result<Vec<(String, Aggregate)>, StoreError> {
        self.inner.list(kind, id_prefix)
    }
    fn receipt(&self, key: &ReceiptKey) -> Result<Option<Receipt>, StoreError> {
        self.inner.receipt(key)
    }
    fn head(&self, group: &str) -> Result<GroupHead, StoreError> {
        self.inner.head(group)
    }
    fn replay(&self, group: &str, after: u64, limit: usize) -> Result<ReplayPage, StoreError> {
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
fn a_wrong_number_of_results_is_a_backend_error_for_every_caller() {
    for skew in [-1, 2] {
        let store: &'static GroupCommit<Faulty> = Box::leak(Box::new(GroupCommit::new(Faulty {
            skew,
            ..Faulty::default()
        })));
        let results = within(30, move || {
            std::thread::scope(|scope| {
                let handles: Vec<_> = (0..8)
                    .map(|t| scope.spawn(move || store.commit(good_tx(&format!("g{t}")))))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap())
                    .collect::<Vec<_>>()
            })
        });
        for result in results {
            let e = result.unwrap_err();
            assert!(matches!(e, StoreError::Backend { .. }), "{e:?}");
            assert_eq!(e.wire_code(), WireCode::InternalError);
        }
    }
}

#[test]
fn a_well_behaved_backend_is_not_reported_as_failing() {
    let store = GroupCommit::new(Faulty::default());
    store.commit(good_tx("g")).unwrap();
    assert_eq!(online_sequences(&store, "g"), vec![1]);
}

#[test]
fn a_panicking_backend_hands_leadership_back() {
    let store = GroupCommit::new(Faulty {
        panics: AtomicBool::new(true),
        ..Faulty::default()
    });
    let panicked =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| store.commit(good_tx("g"))));
    assert!(panicked.is_err());
    // The next caller leads a new batch instead of waiting for the dead leader.
    let store: &'static GroupCommit<Faulty> = Box::leak(Box::new(store));
    within(10, move || store.commit(good_tx("h"))).unwrap();
    assert_eq!(online_sequences(store, "h"), vec![1]);
    assert_eq!(store.head("g").unwrap().next_sequence, 1);
}

#[test]
fn an_empty_transaction_commits_without_a_batch() {
    let store = GroupCommit::new(InMemoryStore::new());
    store.commit(Transaction::new()).unwrap();
    assert_eq!(store.stats().batches, 0);
    store.commit(good_tx("g")).unwrap();
    assert_eq!(store.stats().batches, 1);
    assert_eq!(store.stats().mean_batch(), 1.0);
}

#[test]
fn group_commit_is_shareable_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<GroupCommit<InMemoryStore>>();
}
