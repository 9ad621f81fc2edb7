//! What several SQLite test files share: a file store in a temporary directory of its own.
#![allow(dead_code, clippy::unwrap_used)]

use missionweaveprotocol_engine::store::{
    Aggregate, AggregateKey, GroupHead, Receipt, ReceiptKey, ReplayPage, SnapshotPointer, Store,
    StoreError, Transaction,
};
use missionweaveprotocol_store_sqlite::SqliteStore;

/// A store in a file of its own temporary directory, removed with it.
#[derive(Debug)]
pub struct TempFileStore {
    store: SqliteStore,
    _dir: tempfile::TempDir,
}

impl TempFileStore {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path().join("store.sqlite")).unwrap();
        Self { store, _dir: dir }
    }
}

impl Store for TempFileStore {
    fn commit(&self, tx: Transaction) -> Result<(), StoreError> {
        self.store.commit(tx)
    }
    fn commit_many(&self, txs: Vec<Transaction>) -> Vec<Result<(), StoreError>> {
        self.store.commit_many(txs)
    }
    fn aggregate(&self, key: &AggregateKey) -> Result<Option<Aggregate>, StoreError> {
        self.store.aggregate(key)
    }
    fn list(&self, kind: &str, id_prefix: &str) -> Result<Vec<(String, Aggregate)>, StoreError> {
        self.store.list(kind, id_prefix)
    }
    fn receipt(&self, key: &ReceiptKey) -> Result<Option<Receipt>, StoreError> {
        self.store.receipt(key)
    }
    fn head(&self, group: &str) -> Result<GroupHead, StoreError> {
        self.store.head(group)
    }
    fn authenticates_events(&self) -> bool {
        self.store.authenticates_events()
    }
    fn replay(&self, group: &str, after: u64, limit: usize) -> Result<ReplayPage, StoreError> {
        self.store.replay(group, after, limit)
    }
    fn archive_before(
        &self,
        group: &str,
        before: u64,
        snapshot: SnapshotPointer,
    ) -> Result<(), StoreError> {
        self.store.archive_before(group, before, snapshot)
    }
}
