//! A read-through cache of aggregates for a store this process alone writes.
//!
//! Every Command reads the aggregates its decision depends on (the Group, its Mission, the
//! actor's Membership, the WorkItem, …). On a SQLite file each such read is a query on a
//! pooled read connection whose page cache every commit invalidates, so it copies pages from
//! the operating system and the engine parses the JSON again: measured on the server under
//! load, a third of a Command's CPU. When one process is the only writer of the store (the
//! server holds a lock file beside a SQLite database, `missionweaveprotocol-server`'s
//! `sqlite_lock`), every change passes through this process's `commit`, so the current
//! revision of an aggregate can be kept in memory and a read answered from it. The cached
//! blob is the same allocation on every hit, so the engine's [`DecodedCache`] hits as well
//! and nothing is parsed again.
//!
//! **Never** wrap a store other processes write (PostgreSQL shared by several servers): their
//! commits would not pass through here and reads would answer stale revisions. A stale read
//! cannot commit a wrong decision (every revision read is re-checked at commit, §15.3) but
//! would refuse Commands as conflicts forever.
//!
//! Consistency with concurrent readers and writers of this process:
//! - a commit that returned `Ok` puts every aggregate it wrote at its new revision (a
//!   revision never moves back: an entry with a higher one is kept);
//! - a miss reads the store and keeps the answer only if no commit touched the key's stripe
//!   since the read began (a per-stripe generation, bumped by every commit and never evicted),
//!   so an answer read before a concurrent commit can never replace that commit's value;
//! - a commit that failed drops what it meant to write (whether a failed durable commit was
//!   applied is unknown; the next read asks the store).
//!
//! What the cache does not change: aggregates read from the store are checked by the store's
//! integrity scheme when first read; a row edited on disk behind the process's back is seen
//! only after that row leaves the cache (docs/store.md, "Data at rest"). Lists, receipts,
//! heads and replays always read the store.
//!
//! Bound: [`STRIPES`] stripes of at most [`ENTRIES_PER_STRIPE`] aggregates and a share of the
//! byte budget each (first in, first out): by default [`BYTES_PER_STRIPE`] each, 64 MiB of
//! values in all ([`ExclusiveCache::with_budget`] sets another).

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::aggregate::{Aggregate, AggregateKey};
use super::decoded::DecodedCache;
use super::error::StoreError;
use super::event_log::{GroupHead, ReplayPage, SnapshotPointer};
use super::read_many::{Read, ReadValue, read_each};
use super::receipt::{Receipt, ReceiptKey};
use super::seam::Store;
use super::transaction::Transaction;

/// Lock stripes (and independent FIFO regions) of the cache.
pub const STRIPES: usize = 16;
/// Aggregates kept per stripe.
pub const ENTRIES_PER_STRIPE: usize = 4_096;
/// Bytes of aggregate values kept per stripe (4 MiB: 64 MiB in all).
pub const BYTES_PER_STRIPE: usize = 4 << 20;

struct Stripe {
    map: HashMap<AggregateKey, Aggregate>,
    /// Insertion order of the keys in `map` (each once), oldest first.
    order: VecDeque<AggregateKey>,
    /// Bytes of the values in `map`.
    bytes: usize,
    /// Bumped by every commit that writes (or failed to write) a key of this stripe.
    generation: u64,
    /// The most bytes of values this stripe keeps.
    budget: usize,
}

impl Stripe {
    /// Keeps `aggregate` at `key` unless a higher revision is kept already; evicts the oldest
    /// entries beyond the bounds. A value larger than a whole stripe is not kept.
    fn put(&mut self, key: &AggregateKey, aggregate: Aggregate) {
        let size = aggregate.value.len();
        if size > self.budget {
            self.remove(key);
            return;
        }
        if let Some(kept) = self.map.get_mut(key) {
            if kept.revision <= aggregate.revision {
                self.bytes = self.bytes - kept.value.len() + size;
                *kept = aggregate;
            }
        } else {
            self.bytes += size;
            self.map.insert(key.clone(), aggregate);
            self.order.push_back(key.clone());
        }
        while self.map.len() > ENTRIES_PER_STRIPE || self.bytes > self.budget {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            if let Some(gone) = self.map.remove(&oldest) {
                self.bytes -= gone.value.len();
            }
        }
    }

    fn remove(&mut self, key: &AggregateKey) {
        if let Some(gone) = self.map.remove(key) {
            self.bytes -= gone.value.len();
            self.order.retain(|k| k != key);
        }
    }
}

/// `S` with its aggregates cached (see the module documentation). Only for a store no other
/// process writes.
pub struct ExclusiveCache<S> {
    inner: S,
    stripes: Vec<Mutex<Stripe>>,
    decoded: DecodedCache,
}

impl<S> std::fmt::Debug for ExclusiveCache<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExclusiveCache")
            .field("aggregates", &self.len())
            .finish_non_exhaustive()
    }
}

impl<S> ExclusiveCache<S> {
    /// Caches the aggregates of `inner`, which no other process may write, with the default
    /// budget (`STRIPES * BYTES_PER_STRIPE` bytes of values).
    pub fn new(inner: S) -> Self {
        Self::with_budget(inner, STRIPES * BYTES_PER_STRIPE)
    }

    /// [`new`](Self::new) keeping at most `bytes` bytes of values (0: nothing is kept, every
    /// read goes to the store).
    pub fn with_budget(inner: S, bytes: usize) -> Self {
        let budget = bytes / STRIPES;
        Self {
            inner,
            stripes: (0..STRIPES)
                .map(|_| {
                    Mutex::new(Stripe {
                        map: HashMap::new(),
                        order: VecDeque::new(),
                        bytes: 0,
                        generation: 0,
                        budget,
                    })
                })
                .collect(),
            decoded: DecodedCache::new(),
        }
    }

    /// The store behind the cache.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// Aggregates kept now.
    pub fn len(&self) -> usize {
        self.stripes.iter().map(|s| lock(s).map.len()).sum()
    }

    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of aggregate values kept now (at most `STRIPES * BYTES_PER_STRIPE`).
    pub fn bytes(&self) -> usize {
        self.stripes.iter().map(|s| lock(s).bytes).sum()
    }

    fn stripe(&self, key: &AggregateKey) -> MutexGuard<'_, Stripe> {
        let mut hasher = DefaultHasher::new();
        key.hash(&mut hasher);
        // The modulo keeps the index below STRIPES, so the cast cannot truncate.
        #[allow(clippy::cast_possible_truncation)]
        let index = (hasher.finish() % STRIPES as u64) as usize;
        lock(&self.stripes[index])
    }

    /// After `tx` was committed (`ok`) or refused: the new revisions kept, or the keys
    /// dropped; every stripe written bumps its generation.
    fn settle(&self, tx_writes: Vec<(AggregateKey, Aggregate)>, ok: bool) {
        for (key, written) in tx_writes {
            let mut stripe = self.stripe(&key);
            stripe.generation += 1;
            if ok {
                stripe.put(&key, written);
            } else {
                stripe.remove(&key);
            }
        }
    }
}

fn lock(stripe: &Mutex<Stripe>) -> MutexGuard<'_, Stripe> {
    // Every mutation leaves `map`, `order` and `bytes` consistent before it can panic.
    stripe.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The aggregates `tx` writes, at the revisions they get if it commits.
fn writes_of(tx: &Transaction) -> Vec<(AggregateKey, Aggregate)> {
    tx.writes()
        .iter()
        .filter_map(|w| {
            let value = w.value.as_ref()?;
            let aggregate = Aggregate {
                revision: w.expected_revision + 1,
                value: std::sync::Arc::clone(value),
            };
            Some((w.key.clone(), aggregate))
        })
        .collect()
}

impl<S: Store> Store for ExclusiveCache<S> {
    fn commit(&self, tx: Transaction) -> Result<(), StoreError> {
        let writes = writes_of(&tx);
        let result = self.inner.commit(tx);
        self.settle(writes, result.is_ok());
        result
    }

    fn commit_many(&self, txs: Vec<Transaction>) -> Vec<Result<(), StoreError>> {
        let writes: Vec<_> = txs.iter().map(writes_of).collect();
        let results = self.inner.commit_many(txs);
        for (writes, result) in writes.into_iter().zip(&results) {
            self.settle(writes, result.is_ok());
        }
        results
    }

    fn aggregate(&self, key: &AggregateKey) -> Result<Option<Aggregate>, StoreError> {
        let generation = {
            let stripe = self.stripe(key);
            if let Some(kept) = stripe.map.get(key) {
                return Ok(Some(kept.clone()));
            }
            stripe.generation
        };
        let read = self.inner.aggregate(key)?;
        if let Some(aggregate) = &read {
            let mut stripe = self.stripe(key);
            // A commit of this stripe since the read began may have written a newer revision
            // (kept or already evicted): the answer is returned but not kept.
            if stripe.generation == generation {
                stripe.put(key, aggregate.clone());
            }
        }
        Ok(read)
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
        // Aggregates through the cache; a backend that batches round trips (not one this
        // cache is meant for) keeps its batching.
        if self.inner.batches_reads() {
            self.inner.read_many(reads)
        } else {
            read_each(self, reads)
        }
    }

    fn batches_reads(&self) -> bool {
        self.inner.batches_reads()
    }

    // Replays always read the store, which checks every Event row.
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
        Some(&self.decoded)
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
