//! The store test suite (`store::suite`) on SQLite: a private in-memory database and a
//! temporary file (WAL, `synchronous=FULL`), each case on a fresh store.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use missionweaveprotocol_authority::store::{
    Aggregate, AggregateKey, GroupHead, Receipt, ReceiptKey, ReplayPage, SnapshotPointer, Store,
    StoreError, Transaction,
};
use missionweaveprotocol_store_sqlite::SqliteStore;

mod in_memory {
    use super::SqliteStore;

    missionweaveprotocol_authority::store_test_suite!(|| SqliteStore::in_memory().unwrap());
}

/// A store in a file of its own temporary directory, removed with it.
#[derive(Debug)]
struct TempFileStore {
    store: SqliteStore,
    _dir: tempfile::TempDir,
}

impl TempFileStore {
    fn new() -> Self {
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

mod temp_file {
    use super::TempFileStore;

    missionweaveprotocol_authority::store_test_suite!(TempFileStore::new);
}

#[test]
fn the_sqlite_store_is_shareable_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<SqliteStore>();
}
