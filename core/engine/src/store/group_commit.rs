//! Group commit across callers: concurrent [`Store::commit`]s become one
//! [`Store::commit_many`] batch (issue 11, "Group commit"; `docs/store.md`, "Group commit and
//! concurrency").
//!
//! A durable backend pays one fsync per durable transaction. Under concurrent submitters,
//! [`GroupCommit`] queues each caller's write set; the first caller that finds no batch in
//! flight becomes the leader, takes every queued write set (up to a maximum batch size), hands
//! them to the backend's `commit_many` (one durable transaction, a savepoint per write set) and
//! gives each caller its own result, then hands the lead to the first caller still queued.
//! Followers wait each on their own condition variable. A caller's
//! `commit` returns only after the `commit_many` holding its write set returned, so `Ok` still
//! means durable (§15.1: the receipt, the Events and the revisions together).
//!
//! Each write set keeps its own atomicity: the backend validates and applies it on its own
//! (receipts, appends, revisions, in that order), so a refused Command in a batch never affects
//! another (a later one sees the earlier ones' effects, exactly as if they had been committed
//! one after the other in queue order).
//!
//! Reads, `commit_many` and `archive_before` go straight to the backend: batching helps only
//! the commits that would otherwise each wait for their own fsync. The std `Mutex` and
//! `Condvar` compile on wasm32, where nothing runs concurrently: there every batch has one
//! write set.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use crate::store::seam::Store;
use crate::store::{
    aggregate::{Aggregate, AggregateKey},
    decoded::DecodedCache,
    error::StoreError,
    event_log::{GroupHead, ReplayPage, SnapshotPointer},
    read_many::{Read, ReadValue},
    receipt::{Receipt, ReceiptKey},
    transaction::Transaction,
};

/// The default largest batch: large enough that 64 submitters share a few fsyncs, small
/// enough that one batch's savepoints stay a short write transaction.
pub const DEFAULT_MAX_BATCH: usize = 256;

/// Counters of a [`GroupCommit`] since it was built.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GroupCommitStats {
    /// `commit_many` calls the leaders made.
    pub batches: u64,
    /// Write sets committed through them.
    pub transactions: u64,
    /// The largest batch so far.
    pub largest_batch: u64,
}

impl GroupCommitStats {
    /// Write sets per batch (0 before the first batch).
    pub fn mean_batch(&self) -> f64 {
        if self.batches == 0 {
            0.0
        } else {
            self.transactions as f64 / self.batches as f64
        }
    }
}

/// A [`Store`] that turns concurrent `commit`s into `commit_many` batches of the store `S`.
#[derive(Debug)]
pub struct GroupCommit<S> {
    inner: S,
    max_batch: usize,
    queue: Mutex<Queue>,
}

#[derive(Debug, Default)]
struct Queue {
    /// Write sets waiting for a leader, in arrival order, each with its caller's slot.
    pending: VecDeque<(Arc<Slot>, Transaction)>,
    /// A leader is inside `commit_many`, or the lead was handed to the front of `pending`.
    leading: bool,
    stats: GroupCommitStats,
}

/// Where one caller waits, on its own condition variable: only the callers of a finished batch
/// and the next leader are woken, never every waiter.
#[derive(Debug, Default)]
struct Slot {
    state: Mutex<SlotState>,
    wake: Condvar,
}

#[derive(Debug, Default)]
struct SlotState {
    /// The caller's result, once its batch's `commit_many` returned.
    result: Option<Result<(), StoreError>>,
    /// The caller leads the next batch (its write set is at the front of the queue).
    lead: bool,
}

impl Slot {
    fn state(&self) -> MutexGuard<'_, SlotState> {
        // Only `Option`/`bool` writes happen under the lock.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn post(&self, result: Result<(), StoreError>) {
        self.state().result = Some(result);
        self.wake.notify_one();
    }

    fn hand_lead(&self) {
        self.state().lead = true;
        self.wake.notify_one();
    }
}

impl<S: Store> GroupCommit<S> {
    /// Group commit over `inner` with batches of at most [`DEFAULT_MAX_BATCH`].
    pub fn new(inner: S) -> Self {
        Self::with_max_batch(inner, DEFAULT_MAX_BATCH)
    }

    /// Group commit over `inner` with batches of at most `max_batch` write sets (at least 1).
    pub fn with_max_batch(inner: S, max_batch: usize) -> Self {
        Self {
            inner,
            max_batch: max_batch.max(1),
            queue: Mutex::new(Queue::default()),
        }
    }

    /// The store the batches are committed to.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// The largest batch.
    pub fn max_batch(&self) -> usize {
        self.max_batch
    }

    /// Batches and write sets so far.
    pub fn stats(&self) -> GroupCommitStats {
        self.queue().stats
    }

    /// Write sets queued for the next batch (not yet handed to the store).
    pub fn queued(&self) -> usize {
        self.queue().pending.len()
    }

    fn queue(&self) -> MutexGuard<'_, Queue> {
        // The lock is never held across a call into the backend or user code, and every
        // update under it is a few field writes: a poisoned guard holds consistent state.
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Leads one batch: the queue's front (the leader's own write set is always there: the
    /// lead goes only to an empty queue's first caller or to the front) up to `max_batch`,
    /// committed outside every lock; then one result per caller and the lead handed on.
    fn lead(&self) {
        let batch: Vec<(Arc<Slot>, Transaction)> = {
            let mut queue = self.queue();
            let take = queue.pending.len().min(self.max_batch);
            queue.pending.drain(..take).collect()
        };
        let (slots, txs): (Vec<Arc<Slot>>, Vec<Transaction>) = batch.into_iter().unzip();
        // Posts the results and hands the lead on even if the backend panics, so the callers
        // of this batch get an error and the queued ones a leader instead of waiting forever.
        let mut posting = Posting {
            owner: self,
            slots,
            results: None,
        };
        let asked = txs.len();
        let results = self.inner.commit_many(txs);
        posting.results = Some(if results.len() == asked {
            results
        } else {
            // A backend that answers for other write sets than it was given cannot tell
            // which of them are durable: none is reported as applied.
            let failure = StoreError::Backend {
                detail: format!(
                    "group commit: the store answered {} results for {asked} transactions",
                    results.len()
                ),
            };
            vec![Err(failure); asked]
        });
    }
}

/// Posts a batch's results when dropped (also while unwinding from a panicking backend).
struct Posting<'a, S> {
    owner: &'a GroupCommit<S>,
    slots: Vec<Arc<Slot>>,
    results: Option<Vec<Result<(), StoreError>>>,
}

impl<S> Drop for Posting<'_, S> {
    fn drop(&mut self) {
        let results = self.results.take().unwrap_or_else(|| {
            let failure = StoreError::Backend {
                detail: "group commit: the store panicked during the batch".to_owned(),
            };
            vec![Err(failure); self.slots.len()]
        });
        // The next batch first: its leader starts while this batch's callers wake up.
        let next = {
            let mut queue = self
                .owner
                .queue
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let size = self.slots.len() as u64;
            queue.stats.batches += 1;
            queue.stats.transactions += size;
            queue.stats.largest_batch = queue.stats.largest_batch.max(size);
            let next = queue.pending.front().map(|(slot, _)| Arc::clone(slot));
            // With nobody queued the lead is free: the next caller takes it on arrival.
            queue.leading = next.is_some();
            next
        };
        if let Some(next) = next {
            next.hand_lead();
        }
        for (slot, result) in self.slots.drain(..).zip(results) {
            slot.post(result);
        }
    }
}

impl<S: Store> Store for GroupCommit<S> {
    fn commit(&self, tx: Transaction) -> Result<(), StoreError> {
        if tx.is_empty() {
            // Nothing to check or write: no batch to wait for.
            return self.inner.commit(tx);
        }
        let slot = Arc::new(Slot::default());
        let mut leads = {
            let mut queue = self.queue();
            queue.pending.push_back((Arc::clone(&slot), tx));
            // No batch in flight (and so nobody queued before this caller): it leads.
            !std::mem::replace(&mut queue.leading, true)
        };
        loop {
            if leads {
                self.lead();
            }
            // The state is only changed under the slot's lock, before its notification: a
            // result or the lead posted before this wait began is seen here, not missed.
            let mut state = slot.state();
            loop {
                if let Some(result) = state.result.take() {
                    return result;
                }
                if std::mem::take(&mut state.lead) {
                    leads = true;
                    break;
                }
                state = slot
                    .wake
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
            }
        }
    }

    fn commit_many(&self, txs: Vec<Transaction>) -> Vec<Result<(), StoreError>> {
        // Already a batch: one durable transaction of its own.
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

    fn dedup(&self, key: &ReceiptKey, signing_hash: &str) -> Result<Option<Receipt>, StoreError> {
        self.inner.dedup(key, signing_hash)
    }

    fn head(&self, group: &str) -> Result<GroupHead, StoreError> {
        self.inner.head(group)
    }

    fn read_many(&self, reads: &[Read]) -> Result<Vec<ReadValue>, StoreError> {
        self.inner.read_many(reads)
    }

    fn batches_reads(&self) -> bool {
        self.inner.batches_reads()
    }

    fn authenticates_events(&self) -> bool {
        self.inner.authenticates_events()
    }

    fn replay(
        &self,
        group: &str,
        after_sequence: u64,
        limit: usize,
    ) -> Result<ReplayPage, StoreError> {
        self.inner.replay(group, after_sequence, limit)
    }

    fn decoded_cache(&self) -> Option<&DecodedCache> {
        self.inner.decoded_cache()
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
