//! The authoritative store on SQLite: a durable backend of the engine's store seam
//! (`missionweaveprotocol_engine::store`, `docs/store.md`, §4.6, §4.7, §15, §16, §7.4).
//!
//! [`SqliteStore`] keeps the same per-aggregate shape as the in-memory reference: one Event
//! log per Group keyed by `(group_id, sequence)`, aggregates by `(kind, id)` with their
//! revision, receipts by `(actor_type, actor_id, action_id)` (`schema.rs`). A commit is one
//! `BEGIN IMMEDIATE` SQLite transaction that validates the whole write set exactly as the
//! in-memory store does, then applies it, or rolls back: all or nothing, the same
//! [`StoreError`] variants. A file store runs in WAL mode with `synchronous=FULL`, so a
//! commit that returned `Ok` is on disk.
//!
//! A file store has one writer connection behind a `Mutex` (commits are serialized, as SQLite
//! allows one writer) and a small pool of read connections ([`SqliteOptions::readers`],
//! default [`default_readers()`]): WAL readers see the last committed state and never wait
//! behind a commit's fsync. `:memory:` keeps one shared connection (an in-memory database
//! belongs to its connection). Wrap the store in
//! [`GroupCommit`](missionweaveprotocol_engine::store::GroupCommit) so that concurrent
//! commits share one durable transaction (`docs/store.md`, "Group commit and concurrency").
//!
//! ```
//! use missionweaveprotocol_engine::store::{AggregateKey, EventRecord, Store, Transaction};
//! use missionweaveprotocol_store_sqlite::SqliteStore;
//!
//! let store = SqliteStore::in_memory().unwrap();
//! let mut tx = Transaction::new();
//! tx.append("g", EventRecord::new(1, "e1", &b"{}"[..]))
//!     .put(AggregateKey::new("mission", "m"), 0, b"{}"[..].into());
//! store.commit(tx).unwrap();
//! assert_eq!(store.head("g").unwrap().next_sequence, 2);
//! ```

pub mod agent_local;
mod commit;
mod convert;
mod migrations;
mod pool;
mod read;
mod schema;
mod seal;
mod wal;

use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};

use missionweaveprotocol_engine::store::{
    Aggregate, AggregateKey, GroupHead, Integrity, Receipt, ReceiptKey, ReplayPage,
    SnapshotPointer, Store, StoreError, StoreOptions, Transaction, read_rules,
};
use rusqlite::Connection;

pub use agent_local::SqliteAgentStore;
pub use schema::SCHEMA_VERSION;

use convert::backend;
use pool::ReadPool;

/// How long a commit waits for another connection's (another process's) write lock before
/// it fails with a backend error.
pub(crate) const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Read connections a file store opens unless told otherwise: one per core the process may
/// use, from 1 to 8. Each reader keeps its own page cache, which every commit invalidates in
/// part; readers beyond the cores only add cache misses (64 submitters on 2 cores: 2 readers
/// ≈ 6,200 Commands/s and 0.51–0.55 × the raw floor, 8 readers ≈ 5,100–5,700 and 0.48–0.49;
/// `docs/store.md`).
pub fn default_readers() -> usize {
    std::thread::available_parallelism()
        .map_or(2, std::num::NonZeroUsize::get)
        .clamp(1, 8)
}

/// The writer connection's page cache unless told otherwise: 64 MiB.
pub const DEFAULT_WRITER_CACHE_KIB: u32 = 65_536;

/// The page size of a new database unless told otherwise: 16 KiB.
///
/// SQLite's default is 4 KiB. A table B-tree keeps at most about a quarter of a page of a row
/// locally: with 4 KiB pages every Event over ≈ 1 KB spilled into an overflow page of its own
/// (most of it empty). With 16 KiB pages an Event up to ≈ 4 KB and every aggregate of the
/// benchmark stay in their leaf, so a commit writes, fsyncs and checkpoints fewer pages and a
/// replay reads ≈ 14 Events per `pread` (`docs/store-sqlite.md`).
pub const DEFAULT_PAGE_SIZE: u32 = 16_384;

/// Sets the page size of a database that holds nothing yet (SQLite ignores it otherwise).
fn set_page_size(conn: &Connection, page_size: u32) -> Result<(), StoreError> {
    if !(512..=65_536).contains(&page_size) || !page_size.is_power_of_two() {
        return Err(StoreError::InvalidArgument {
            argument: "page_size",
            detail: format!("{page_size} is not a power of two from 512 to 65536"),
        });
    }
    conn.execute_batch(&format!("PRAGMA page_size={page_size};"))
        .map_err(backend)
}

/// How a file store is opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqliteOptions {
    /// Read connections beside the writer. 0: reads share the writer connection (and wait
    /// behind its commits), as one connection would.
    pub readers: usize,
    /// The writer connection's page cache, KiB (SQLite's default is 2,000). The writer's cache
    /// stays valid across its own commits, so a larger one keeps the B-tree pages that
    /// validation and inserts touch in memory as the store grows; read connections keep the
    /// default (WAL readers drop their cache whenever the database changed).
    pub writer_cache_kib: u32,
    /// The page size, bytes, of a database this open creates (a power of two from 512 to
    /// 65,536; default [`DEFAULT_PAGE_SIZE`]). An existing file keeps its own.
    pub page_size: u32,
    /// What every backend takes: the integrity key authenticating every row
    /// ([`StoreOptions::integrity_key`], none by default) and whether an unkeyed file adopts it.
    pub store: StoreOptions,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        Self {
            readers: default_readers(),
            writer_cache_kib: DEFAULT_WRITER_CACHE_KIB,
            page_size: DEFAULT_PAGE_SIZE,
            store: StoreOptions::default(),
        }
    }
}

/// The authoritative store in one SQLite database (a file, or memory for tests).
#[derive(Debug)]
pub struct SqliteStore {
    /// The writer (and, without a pool, the only) connection, serialized: a rolled-back or
    /// never-begun transaction leaves it clean, so a poisoned lock is recovered.
    conn: Mutex<Connection>,
    /// Read connections of a file store; `None` in memory or with `readers: 0`.
    readers: Option<ReadPool>,
    /// The scheme every row is authenticated with (`store::integrity`).
    integrity: Integrity,
    /// Every Event authenticated under the key since it was written (`seal::events_authenticated`).
    events_authenticated: bool,
}

impl SqliteStore {
    /// Opens (creating if needed) the store in the file at `path`: WAL journal,
    /// `synchronous=FULL` (a commit is durable when it returns), [`default_readers()`] read
    /// connections. Refuses a database written by a newer schema version than
    /// [`SCHEMA_VERSION`].
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open_with(path, &SqliteOptions::default())
    }

    /// [`open`](Self::open) with other [`SqliteOptions`].
    pub fn open_with(path: impl AsRef<Path>, options: &SqliteOptions) -> Result<Self, StoreError> {
        let path = path.as_ref();
        let conn = Connection::open(path).map_err(backend)?;
        // A concurrent process holding the write lock (also while switching to WAL or
        // creating the schema) is waited for, not failed at once.
        conn.busy_timeout(BUSY_TIMEOUT).map_err(backend)?;
        // Before WAL and the schema: only a new, empty database takes it (an existing file
        // keeps the page size it was created with).
        set_page_size(&conn, options.page_size)?;
        // `journal_mode` answers with the mode in force; anything but WAL is a refusal. A busy
        // answer is retried: the switch of a new file does not wait for another process's
        // lock by itself (`wal.rs`).
        let mode = wal::enable(&conn, BUSY_TIMEOUT).map_err(backend)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Backend {
                detail: format!("SQLite refused WAL journal mode (answered {mode})"),
            });
        }
        // Negative: a size in KiB rather than in pages.
        conn.execute_batch(&format!("PRAGMA cache_size=-{};", options.writer_cache_kib))
            .map_err(backend)?;
        let mut store = Self::with_connection(conn, &options.store)?;
        // After the schema exists: readers never create or migrate anything.
        if options.readers > 0 {
            store.readers = Some(ReadPool::open(path, options.readers)?);
        }
        Ok(store)
    }

    /// A store in a private in-memory database (tests, ephemeral hosts): nothing survives it.
    /// One connection serves reads and commits.
    pub fn in_memory() -> Result<Self, StoreError> {
        Self::in_memory_with(&StoreOptions::default())
    }

    /// [`in_memory`](Self::in_memory) with `options` (an integrity key: rows are authenticated
    /// as in a file).
    pub fn in_memory_with(options: &StoreOptions) -> Result<Self, StoreError> {
        let conn = Connection::open_in_memory().map_err(backend)?;
        set_page_size(&conn, DEFAULT_PAGE_SIZE)?;
        Self::with_connection(conn, options)
    }

    /// Whether every row is authenticated under an integrity key.
    pub fn is_keyed(&self) -> bool {
        self.integrity.is_keyed()
    }

    /// The database's page size in bytes ([`SqliteOptions::page_size`] when it was created).
    pub fn page_size(&self) -> Result<u32, StoreError> {
        self.conn()
            .query_row("PRAGMA page_size", [], |row| row.get(0))
            .map_err(backend)
    }

    fn with_connection(conn: Connection, options: &StoreOptions) -> Result<Self, StoreError> {
        // temp_store=MEMORY: the statement journal of `commit_many`'s savepoints (pages a
        // write set changes that earlier write sets of the batch changed already) stays in
        // memory instead of a temporary file written on every savepoint.
        conn.execute_batch(
            "PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON; PRAGMA temp_store=MEMORY;",
        )
        .map_err(backend)?;
        read::plan_once(&conn)?;
        let integrity = schema::migrate(&conn, options)?;
        let events_authenticated = seal::events_authenticated(&conn, &integrity)?;
        Ok(Self {
            conn: Mutex::new(conn),
            readers: None,
            integrity,
            events_authenticated,
        })
    }

    /// Read connections beside the writer (0: reads use the writer connection).
    pub fn read_connections(&self) -> usize {
        self.readers.as_ref().map_or(0, ReadPool::size)
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        // Every write runs in a SQLite transaction that rolls back when dropped (also while
        // unwinding), so the connection behind a poisoned lock holds committed state only.
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs a single-statement `read` on a pooled read connection, or on the writer
    /// connection when there is no pool.
    fn read<T>(
        &self,
        read: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        match &self.readers {
            Some(pool) => pool.read(false, read),
            None => read(&self.conn()),
        }
    }

    /// Runs a `read` of several statements on one snapshot: a pooled connection inside one
    /// read transaction, or the writer connection under its lock (nothing commits between
    /// two statements then).
    fn read_snapshot<T>(
        &self,
        read: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        match &self.readers {
            Some(pool) => pool.read(true, read),
            None => read(&self.conn()),
        }
    }
}

impl Store for SqliteStore {
    /// Keyed since creation (or since a key was adopted before any Event was stored): every
    /// Event row read is checked against its HMAC chain (`read::replay`).
    fn authenticates_events(&self) -> bool {
        self.events_authenticated
    }

    fn commit(&self, tx: Transaction) -> Result<(), StoreError> {
        commit::commit(&mut self.conn(), &self.integrity, &tx)
    }

    fn commit_many(&self, txs: Vec<Transaction>) -> Vec<Result<(), StoreError>> {
        commit::commit_many(&mut self.conn(), &self.integrity, &txs)
    }

    fn aggregate(&self, key: &AggregateKey) -> Result<Option<Aggregate>, StoreError> {
        self.read(|conn| read::aggregate(conn, &self.integrity, key))
    }

    fn list(&self, kind: &str, id_prefix: &str) -> Result<Vec<(String, Aggregate)>, StoreError> {
        self.read(|conn| read::list(conn, &self.integrity, kind, id_prefix))
    }

    /// The stored receipt (checked against its checksum), or none — unless the log records
    /// the Action, whose receipt was then removed: [`StoreError::Corrupt`], never "new". One
    /// statement, so one snapshot: a Command committed between two reads would otherwise look
    /// like an Event whose receipt was removed.
    fn receipt(&self, key: &ReceiptKey) -> Result<Option<Receipt>, StoreError> {
        self.read(|conn| read::receipt(conn, &self.integrity, key))
    }

    fn head(&self, group: &str) -> Result<GroupHead, StoreError> {
        // Three statements (the head row, then its last and next rows) on one snapshot: a
        // commit landing between them would look like a row past the head. (`group_state`
        // keeps its first statement open, which holds one read transaction anyway; the
        // explicit snapshot keeps that true if the reads are ever restructured.)
        Ok(self
            .read_snapshot(|conn| read::head(conn, &self.integrity, group))?
            .unwrap_or_else(read_rules::absent_head))
    }

    fn replay(
        &self,
        group: &str,
        after_sequence: u64,
        limit: usize,
    ) -> Result<ReplayPage, StoreError> {
        self.read_snapshot(|conn| read::replay(conn, &self.integrity, group, after_sequence, limit))
    }

    fn archive_before(
        &self,
        group: &str,
        before: u64,
        snapshot: SnapshotPointer,
    ) -> Result<(), StoreError> {
        commit::archive_before(&mut self.conn(), &self.integrity, group, before, &snapshot)
    }
}
