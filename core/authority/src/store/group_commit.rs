//! Group commit across callers: concurrent [`Store::commit`]s become one
//! [`Store::commit_many`] batch (issue 11, "Group commit"; `docs/store.md`, "Group commit and
//! concurrency").
//!
//! A durable backend pays one fsync per durable transaction. Under concurrent submitters,
//! [`GroupCommit`] queues each caller's write set; the first caller that finds no batch in
//! flight becomes the leader, takes every queued write set (up to a maximum batch size), hands
//! them to the backend's `commit_many` (one durable transaction, a savepoint per write set) and
//! gives each caller its own result. Followers wait on a condition variable. A caller's
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

use std::collections::{HashMap, VecDeque};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use super::{
    Aggregate, AggregateKey, DecodedCache, GroupHead, Receipt, ReceiptKey, ReplayPage,
    SnapshotPointer, Store, StoreError, Transaction,
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
    /// Signalled when a batch's results are posted (followers take theirs, and one of the
    /// callers still queued becomes the next leader).
    done: Condvar,
}

#[derive(Debug, Default)]
struct Queue {
    /// Write sets waiting for a leader, in arrival order, each with its caller's ticket.
    pending: VecDeque<(u64, Transaction)>,
    next_ticket: u64,
    /// A leader is inside `commit_many`.
    leading: bool,
    /// Results posted by a leader, until their callers take them.
    results: HashMap<u64, Result<(), StoreError>>,
    stats: GroupCommitStats,
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
            done: Condvar::new(),
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

    /// Leads one batch: commits `batch` outside the lock and posts one result per ticket.
    fn lead(&self, batch: Vec<(u64, Transaction)>) {
        let (tickets, txs): (Vec<u64>, Vec<Transaction>) = batch.into_iter().unzip();
        // Posts the results and hands leadership back even if the backend panics, so the
        // followers of this batch get an error instead of waiting forever.
        let mut posting = Posting {
            owner: self,
            tickets,
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
    tickets: Vec<u64>,
    results: Option<Vec<Result<(), StoreError>>>,
}

impl<S> Drop for Posting<'_, S> {
    fn drop(&mut self) {
        let results = self.results.take().unwrap_or_else(|| {
            let failure = StoreError::Backend {
                detail: "group commit: the store panicked during the batch".to_owned(),
            };
            vec![Err(failure); self.tickets.len()]
        });
        let mut queue = self
            .owner
            .queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let size = self.tickets.len() as u64;
        queue.stats.batches += 1;
        queue.stats.transactions += size;
        queue.stats.largest_batch = queue.stats.largest_batch.max(size);
        queue.results.extend(self.tickets.drain(..).zip(results));
        queue.leading = false;
        drop(queue);
        // Every waiter re-checks: its result may be posted, or it may lead the next batch.
        self.owner.done.notify_all();
    }
}

impl<S: Store> Store for GroupCommit<S> {
    fn commit(&self, tx: Transaction) -> Result<(), StoreError> {
        if tx.is_empty() {
            // Nothing to check or write: no batch to wait for.
            return self.inner.commit(tx);
        }
        let mut queue = self.queue();
        let ticket = queue.next_ticket;
        queue.next_ticket += 1;
        queue.pending.push_back((ticket, tx));
        loop {
            if let Some(result) = queue.results.remove(&ticket) {
                return result;
            }
            if !queue.leading && !queue.pending.is_empty() {
                // No batch in flight: this caller leads the next one (which holds its own
                // write set unless more than `max_batch` were queued before it; then it
                // leads again after this one).
                queue.leading = true;
                let take = queue.pending.len().min(self.max_batch);
                let batch: Vec<(u64, Transaction)> = queue.pending.drain(..take).collect();
                drop(queue);
                self.lead(batch);
                queue = self.queue();
                continue;
            }
            // A leader is committing: its `Posting` notifies after posting, under the same
            // lock this wait releases, so the wake-up cannot be missed.
            queue = self
                .done
                .wait(queue)
                .unwrap_or_else(PoisonError::into_inner);
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
