//! What every PostgreSQL test shares: the server's URL (`MWP_POSTGRES_URL`, or a private
//! cluster started here with `scripts/pg-cluster.sh start`: the tests never skip), and stores
//! each in a fresh schema of their own, dropped afterwards, so tests run in parallel on one
//! server.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use missionweaveprotocol_engine::store::{
    Aggregate, AggregateKey, GroupHead, Read, ReadValue, Receipt, ReceiptKey, ReplayPage,
    SnapshotPointer, Store, StoreError, Transaction,
};
use missionweaveprotocol_store_postgres::{PostgresOptions, PostgresStore};

/// The server's URL.
pub fn url() -> &'static str {
    missionweaveprotocol_store_postgres::test_server::url()
}

/// A schema name no other test uses.
pub fn fresh_schema() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!(
        "mwp_test_{}_{nanos}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// A raw connection with `schema` first on the search path (to look at or damage rows).
pub fn raw(schema: &str) -> postgres::Client {
    let mut client = postgres::Client::connect(url(), postgres::NoTls).unwrap();
    client
        .batch_execute(&format!("SET search_path = \"{schema}\""))
        .unwrap();
    client
}

/// A store in a fresh schema, dropped with it.
#[derive(Debug)]
pub struct TestStore {
    pub store: PostgresStore,
}

impl TestStore {
    pub fn new() -> Self {
        Self::with(PostgresOptions::default())
    }

    pub fn with(options: PostgresOptions) -> Self {
        let store = PostgresStore::connect_with(url(), options.schema(fresh_schema())).unwrap();
        Self { store }
    }

    /// Another store (its own connections, as another process would have) on the same schema.
    pub fn another(&self) -> PostgresStore {
        PostgresStore::connect_with(
            url(),
            PostgresOptions::default().schema(self.store.schema()),
        )
        .unwrap()
    }

    pub fn raw(&self) -> postgres::Client {
        raw(self.store.schema())
    }
}

impl Drop for TestStore {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            self.store.drop_schema().unwrap();
        }
    }
}

impl Store for TestStore {
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
    fn read_many(&self, reads: &[Read]) -> Result<Vec<ReadValue>, StoreError> {
        self.store.read_many(reads)
    }
    fn batches_reads(&self) -> bool {
        self.store.batches_reads()
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
