//! The authoritative store on PostgreSQL: a durable backend of the engine's store seam
//! (`missionweaveprotocol_engine::store`, `docs/store.md`, §4.6, §4.7, §15, §16, §7.4)
//! that engines in several processes share, which is how a deployment grows past one machine.
//!
//! [`PostgresStore`] keeps the SQLite store's per-aggregate schema (`schema.rs`): one Event log
//! per Group keyed by `(group_id, sequence)`, aggregates by `(kind, id)` with their revision,
//! receipts by `(actor_type, actor_id, action_id)`, plus the integrity columns of
//! `store::integrity` (each Event's chain hash, each aggregate's checksum, the chain hash before
//! each Group's first online Event), checked on every read: damaged rows are
//! [`StoreError::Corrupt`], never served.
//!
//! A commit validates the whole write set exactly as the in-memory store does and applies it
//! or nothing, with the same [`StoreError`] variants, under transaction-scoped advisory locks
//! on every key it names, taken in one sorted order (`locks.rs`, `docs/store.md`: why not
//! `SERIALIZABLE`, why not row locks alone). `synchronous_commit` is on: a commit that
//! returned `Ok` is in the server's flushed WAL.
//!
//! Calls run on a small pool of connections (`pool.rs`), so readers do not wait behind a
//! commit. The store is `Send + Sync`; share it by reference or `Arc`.
//!
//! ```no_run
//! use missionweaveprotocol_engine::store::{AggregateKey, EventRecord, Store, Transaction};
//! use missionweaveprotocol_store_postgres::PostgresStore;
//!
//! let store = PostgresStore::connect("postgresql://mwp@127.0.0.1:5432/mwp").unwrap();
//! let mut tx = Transaction::new();
//! tx.append("g", EventRecord::new(1, "e1", &b"{}"[..]))
//!     .put(AggregateKey::new("mission", "m"), 0, b"{}"[..].into());
//! store.commit(tx).unwrap();
//! assert_eq!(store.head("g").unwrap().next_sequence, 2);
//! ```

mod commit;
mod convert;
mod locks;
mod plans;
mod pool;
mod read;
mod read_many;
mod schema;
mod seal;
mod sql;
mod stalled_holder;
#[doc(hidden)]
pub mod test_server;

use std::str::FromStr;
use std::time::Duration;

use missionweaveprotocol_engine::store::{
    Aggregate, AggregateKey, GroupHead, Integrity, IntegrityKey, Read, ReadValue, Receipt,
    ReceiptKey, ReplayPage, SnapshotPointer, Store, StoreError, StoreOptions, Transaction,
};

pub use schema::SCHEMA_VERSION;

use convert::backend;
use pool::Pool;

/// How long connecting waits when the URL names no `connect_timeout`.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The default [`PostgresOptions::idle_in_transaction_timeout`].
pub const IDLE_IN_TRANSACTION_TIMEOUT: Duration = Duration::from_secs(10);

/// How a [`PostgresStore`] connects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostgresOptions {
    /// Connections kept open at most (at least 1). Default 4.
    pub pool_size: usize,
    /// The schema holding the store's tables, created if missing and put first on each
    /// connection's `search_path`; `None` uses the connection's current schema (normally
    /// `public`). One schema per store lets tests share one server, each on its own store.
    pub schema: Option<String>,
    /// Whether the engine reads a Command's likely receipt, aggregates and head in one round
    /// trip (`Store::read_many`) instead of one round trip each. Default true; false only to
    /// measure what it saves (`scripts/bench-stores.sh`).
    pub batch_reads: bool,
    /// How long one of the store's sessions may sit idle inside a transaction before the
    /// server ends it (`idle_in_transaction_session_timeout`), releasing its commit's locks.
    /// A commit never idles between its statements for more than a client-side validation, so
    /// only a stopped or hung process reaches it; until then, commits to the keys it locked
    /// wait. Default 10 s; `None` keeps the server's setting (normally no limit).
    pub idle_in_transaction_timeout: Option<Duration>,
    /// What every backend takes: the integrity key authenticating every row
    /// ([`StoreOptions::integrity_key`], none by default) and whether an unkeyed store adopts
    /// it. Every process sharing one store must open it with the same key.
    pub store: StoreOptions,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        Self {
            pool_size: 4,
            schema: None,
            batch_reads: true,
            idle_in_transaction_timeout: Some(IDLE_IN_TRANSACTION_TIMEOUT),
            store: StoreOptions::default(),
        }
    }
}

impl PostgresOptions {
    /// These options with `schema` as the store's schema.
    pub fn schema(mut self, schema: impl Into<String>) -> Self {
        self.schema = Some(schema.into());
        self
    }

    /// These options with `size` connections at most.
    pub fn pool_size(mut self, size: usize) -> Self {
        self.pool_size = size;
        self
    }

    /// These options with another idle-in-transaction limit
    /// ([`idle_in_transaction_timeout`](Self::idle_in_transaction_timeout)).
    pub fn idle_in_transaction_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.idle_in_transaction_timeout = timeout;
        self
    }

    /// These options with batched reads on or off ([`batch_reads`](Self::batch_reads)).
    pub fn batch_reads(mut self, batch: bool) -> Self {
        self.batch_reads = batch;
        self
    }

    /// These options with `key` authenticating every row ([`store`](Self::store)).
    pub fn integrity_key(mut self, key: IntegrityKey) -> Self {
        self.store.integrity_key = Some(key);
        self
    }

    /// These options with other [`StoreOptions`] (the key, and whether to adopt it).
    pub fn store_options(mut self, store: StoreOptions) -> Self {
        self.store = store;
        self
    }
}

/// The authoritative store in a PostgreSQL database.
#[derive(Debug)]
pub struct PostgresStore {
    pool: Pool,
    /// The schema the tables live in: part of every lock ID (locks are per database).
    namespace: String,
    /// [`PostgresOptions::batch_reads`].
    batch_reads: bool,
    /// The scheme every row is authenticated with (`store::integrity`).
    integrity: Integrity,
}

impl PostgresStore {
    /// Connects to the database at `url` (`postgresql://user@host:port/database`, or
    /// key=value form; TLS is not supported) with default options, creating or migrating the
    /// schema. Refuses a database written by a newer schema version than [`SCHEMA_VERSION`].
    pub fn connect(url: &str) -> Result<Self, StoreError> {
        Self::connect_with(url, PostgresOptions::default())
    }

    /// Connects with `options` (pool size, schema).
    pub fn connect_with(url: &str, options: PostgresOptions) -> Result<Self, StoreError> {
        let mut config =
            postgres::Config::from_str(url).map_err(|e| StoreError::InvalidArgument {
                argument: "url",
                detail: e.to_string(),
            })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if let Some(schema) = &options.schema {
            convert::text("schema", schema)?;
        }
        let pool = Pool::new(config, &options);
        let mut client = pool.session()?;
        let namespace = match &options.schema {
            Some(schema) => schema.clone(),
            None => client
                .query_one("SELECT current_schema()", &[])
                .and_then(|row| row.try_get::<_, Option<String>>(0))
                .map_err(backend)?
                .ok_or_else(|| StoreError::Backend {
                    detail: "no schema on the search_path to create the store in".to_owned(),
                })?,
        };
        let integrity = schema::migrate(
            &mut client,
            options.schema.as_deref(),
            &namespace,
            &options.store,
        )?;
        pool.adopt(client)?;
        Ok(Self {
            pool,
            namespace,
            batch_reads: options.batch_reads,
            integrity,
        })
    }

    /// The schema the store's tables live in.
    pub fn schema(&self) -> &str {
        &self.namespace
    }

    /// Whether every row is authenticated under an integrity key.
    pub fn is_keyed(&self) -> bool {
        self.integrity.is_keyed()
    }

    /// Drops the store's schema with everything in it (tests: each test's own schema). The
    /// store is unusable afterwards.
    pub fn drop_schema(&self) -> Result<(), StoreError> {
        let mut conn = self.pool.get()?;
        conn.client
            .batch_execute(&format!(
                "DROP SCHEMA IF EXISTS {} CASCADE",
                schema::quote(&self.namespace)
            ))
            .map_err(backend)
    }
}

impl Store for PostgresStore {
    fn commit(&self, tx: Transaction) -> Result<(), StoreError> {
        if tx.is_empty() {
            // Nothing to check or write: no round trip.
            return Ok(());
        }
        commit::check_arguments(&tx)?;
        commit::commit(
            &mut *self.pool.get()?,
            &self.namespace,
            &self.integrity,
            &tx,
        )
    }

    fn commit_many(&self, txs: Vec<Transaction>) -> Vec<Result<(), StoreError>> {
        let mut results: Vec<Option<Result<(), StoreError>>> = txs
            .iter()
            .map(|tx| {
                if tx.is_empty() {
                    Some(Ok(()))
                } else {
                    commit::check_arguments(tx).err().map(Err)
                }
            })
            .collect();
        let live: Vec<&Transaction> = txs
            .iter()
            .zip(&results)
            .filter(|(_, r)| r.is_none())
            .map(|(tx, _)| tx)
            .collect();
        if !live.is_empty() {
            let outcomes = match self.pool.get() {
                Ok(mut conn) => {
                    commit::commit_many(&mut conn, &self.namespace, &self.integrity, &live)
                }
                Err(e) => live.iter().map(|_| Err(e.clone())).collect(),
            };
            let mut outcomes = outcomes.into_iter();
            for slot in results.iter_mut().filter(|r| r.is_none()) {
                *slot = outcomes.next();
            }
        }
        results.into_iter().map(|r| r.unwrap_or(Ok(()))).collect()
    }

    fn aggregate(&self, key: &AggregateKey) -> Result<Option<Aggregate>, StoreError> {
        read::aggregate(&mut *self.pool.get()?, &self.integrity, key)
    }

    fn list(&self, kind: &str, id_prefix: &str) -> Result<Vec<(String, Aggregate)>, StoreError> {
        read::list(&mut *self.pool.get()?, &self.integrity, kind, id_prefix)
    }

    fn receipt(&self, key: &ReceiptKey) -> Result<Option<Receipt>, StoreError> {
        read::receipt(&mut *self.pool.get()?, &self.integrity, key)
    }

    fn head(&self, group: &str) -> Result<GroupHead, StoreError> {
        read::head(&mut *self.pool.get()?, &self.integrity, group)
    }

    fn read_many(&self, reads: &[Read]) -> Result<Vec<ReadValue>, StoreError> {
        read_many::read_many(&mut *self.pool.get()?, &self.integrity, reads)
    }

    /// Every read is a round trip: the engine gathers a Command's likely reads into one.
    fn batches_reads(&self) -> bool {
        self.batch_reads
    }

    fn replay(
        &self,
        group: &str,
        after_sequence: u64,
        limit: usize,
    ) -> Result<ReplayPage, StoreError> {
        read::replay(
            &mut *self.pool.get()?,
            &self.integrity,
            group,
            after_sequence,
            limit,
        )
    }

    fn archive_before(
        &self,
        group: &str,
        before: u64,
        snapshot: SnapshotPointer,
    ) -> Result<(), StoreError> {
        commit::archive_before(
            &mut *self.pool.get()?,
            &self.namespace,
            &self.integrity,
            group,
            before,
            &snapshot,
        )
    }
}
