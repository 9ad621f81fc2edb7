//! What the PostgreSQL tests of this crate share: the server's URL (`MWP_POSTGRES_URL`, or a
//! private cluster started here with `scripts/pg-cluster.sh start`: the tests never skip), and
//! a fresh database per test, dropped afterwards, so cases run in parallel on one server and
//! each store opened by URL (`open`, which uses the database's current schema) starts empty.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use missionweaveprotocol_engine::store::{
    Aggregate, AggregateKey, DecodedCache, GroupHead, Read, ReadValue, Receipt, ReceiptKey,
    ReplayPage, SnapshotPointer, Store, StoreError, Transaction,
};
use missionweaveprotocol_store_open::{SharedStore, StoreUrl, open};

/// The server's URL (`postgresql://user@host:port/database`).
pub fn server_url() -> &'static str {
    missionweaveprotocol_store_postgres::test_server::url()
}

/// `url` naming `database` instead of its own (the query, if any, kept).
pub fn with_database(url: &str, database: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let (scheme, rest) = base.split_once("://").expect("a URL");
    let authority = rest
        .split_once('/')
        .map_or(rest, |(authority, _)| authority);
    let mut out = format!("{scheme}://{authority}/{database}");
    if let Some(query) = query {
        out.push('?');
        out.push_str(query);
    }
    out
}

/// A database created for one test and dropped (connections and all) when this is dropped.
#[derive(Debug)]
pub struct FreshDatabase {
    name: String,
}

impl FreshDatabase {
    pub fn new() -> Self {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let name = format!(
            "mwp_stores_{}_{nanos}_{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        admin()
            .batch_execute(&format!("CREATE DATABASE \"{name}\""))
            .unwrap();
        Self { name }
    }

    /// The libpq URL of this database.
    pub fn url(&self) -> String {
        with_database(server_url(), &self.name)
    }

    /// This database's URL with `scheme` (e.g. `postgresql+asyncpg`) in place of libpq's.
    pub fn url_as(&self, scheme: &str) -> String {
        let url = self.url();
        let (_, rest) = url.split_once("://").unwrap();
        format!("{scheme}://{rest}")
    }

    /// A store opened by URL (`open`) on this database.
    pub fn open(&self) -> SharedStore {
        open(&StoreUrl::parse(&self.url()).unwrap()).unwrap()
    }
}

impl Drop for FreshDatabase {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            // FORCE: a pool's connections may still be closing.
            admin()
                .batch_execute(&format!(
                    "DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)",
                    self.name
                ))
                .unwrap();
        }
    }
}

fn admin() -> postgres::Client {
    postgres::Client::connect(server_url(), postgres::NoTls).unwrap()
}

/// A store opened by URL on a database of its own (the store test suite's cases).
pub struct FreshStore {
    // Dropped first: the store's connections close before the database is dropped.
    store: SharedStore,
    _database: FreshDatabase,
}

impl FreshStore {
    pub fn new() -> Self {
        let database = FreshDatabase::new();
        Self {
            store: database.open(),
            _database: database,
        }
    }
}

impl Store for FreshStore {
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
    fn dedup(&self, key: &ReceiptKey, signing_hash: &str) -> Result<Option<Receipt>, StoreError> {
        self.store.dedup(key, signing_hash)
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
    fn replay(
        &self,
        group: &str,
        after_sequence: u64,
        limit: usize,
    ) -> Result<ReplayPage, StoreError> {
        self.store.replay(group, after_sequence, limit)
    }
    fn archive_before(
        &self,
        group: &str,
        before: u64,
        snapshot: SnapshotPointer,
    ) -> Result<(), StoreError> {
        self.store.archive_before(group, before, snapshot)
    }
    fn decoded_cache(&self) -> Option<&DecodedCache> {
        self.store.decoded_cache()
    }
}
