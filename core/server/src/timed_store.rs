//! [`TimedStore`]: the authoritative store with each call's latency recorded in the process
//! metrics (`mwp_store_latency_seconds`). Everything else is passed through unchanged.

use std::sync::Arc;
use std::time::Instant;

use missionweaveprotocol_engine::store::{
    Aggregate, AggregateKey, DecodedCache, GroupHead, Read, ReadValue, Receipt, ReceiptKey,
    ReplayPage, SnapshotPointer, Store, StoreError, Transaction,
};
use missionweaveprotocol_store_open::SharedStore;

use crate::metrics::{Metrics, StoreOp};

/// A store whose calls are timed.
#[derive(Clone)]
pub struct TimedStore {
    inner: SharedStore,
    metrics: Arc<Metrics>,
}

impl std::fmt::Debug for TimedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimedStore").finish_non_exhaustive()
    }
}

impl TimedStore {
    /// `inner`, timed into `metrics`.
    pub fn new(inner: SharedStore, metrics: Arc<Metrics>) -> Self {
        Self { inner, metrics }
    }

    fn timed<T>(&self, op: StoreOp, call: impl FnOnce(&dyn Store) -> T) -> T {
        let started = Instant::now();
        let out = call(&*self.inner);
        self.metrics.store(op).observe(started.elapsed());
        out
    }
}

impl Store for TimedStore {
    fn commit(&self, tx: Transaction) -> Result<(), StoreError> {
        self.timed(StoreOp::Commit, |s| s.commit(tx))
    }
    fn commit_many(&self, txs: Vec<Transaction>) -> Vec<Result<(), StoreError>> {
        self.timed(StoreOp::Commit, |s| s.commit_many(txs))
    }
    fn aggregate(&self, key: &AggregateKey) -> Result<Option<Aggregate>, StoreError> {
        self.timed(StoreOp::Read, |s| s.aggregate(key))
    }
    fn list(&self, kind: &str, id_prefix: &str) -> Result<Vec<(String, Aggregate)>, StoreError> {
        self.timed(StoreOp::Read, |s| s.list(kind, id_prefix))
    }
    fn receipt(&self, key: &ReceiptKey) -> Result<Option<Receipt>, StoreError> {
        self.timed(StoreOp::Read, |s| s.receipt(key))
    }
    fn dedup(&self, key: &ReceiptKey, signing_hash: &str) -> Result<Option<Receipt>, StoreError> {
        self.timed(StoreOp::Read, |s| s.dedup(key, signing_hash))
    }
    fn head(&self, group: &str) -> Result<GroupHead, StoreError> {
        self.timed(StoreOp::Head, |s| s.head(group))
    }
    fn read_many(&self, reads: &[Read]) -> Result<Vec<ReadValue>, StoreError> {
        self.timed(StoreOp::Read, |s| s.read_many(reads))
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
        self.timed(StoreOp::Replay, |s| s.replay(group, after_sequence, limit))
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
        self.timed(StoreOp::Commit, |s| {
            s.archive_before(group, before, snapshot)
        })
    }
}
