//! A small pool of connections, each with the store's statements prepared once, so that
//! concurrent readers do not wait behind a commit's round trips and `fsync`.
//!
//! A connection is taken for one store call and given back afterwards; one found closed (the
//! server went away) is dropped and replaced by a fresh one on a later call. Waiting for a free
//! connection blocks the calling thread (the seam is synchronous, `docs/store.md`).

use std::ops::{Deref, DerefMut};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use missionweaveprotocol_engine::store::StoreError;
use postgres::{Client, NoTls, Statement};

use crate::convert::backend;
use crate::schema::quote;
use crate::sql;

/// How the store's sessions plan: every statement is a lookup by key (keys travel as arrays,
/// `sql.rs`), so each is planned once, generically, as index lookups.
///
/// Without this, a prepared statement's plan is chosen when the tables are small — a new
/// store's are empty — and kept: the server switches to the generic plan after five
/// executions, and for an empty table that plan joins the `unnest`ed keys to the table with a
/// hash join over a sequential scan (`EXPLAIN` on a fresh schema shows it). The cost of every
/// read and commit then grew with the table: 3 × 32 submitters ran at 0.3–0.6 × the rate of
/// the same statements planned as index lookups (`scripts/bench-stores.sh`). Before the
/// switch, custom plans are made at every execution, about 1 ms of server CPU for
/// `READ_MANY`, 15 times its execution. Sequential scans, hash and merge joins are only
/// discouraged (`enable_* = off` adds a large cost), so a statement with no index path still
/// runs.
pub(crate) const PLANNING: &str = "SET plan_cache_mode = force_generic_plan; \
     SET enable_seqscan = off; SET enable_hashjoin = off; SET enable_mergejoin = off;";

/// One connection and its prepared statements.
pub(crate) struct Conn {
    pub(crate) client: Client,
    pub(crate) statements: Statements,
}

/// The statements every call runs, prepared once per connection (a statement by text would
/// cost a second round trip per call).
pub(crate) struct Statements {
    pub(crate) lock: Statement,
    pub(crate) load_receipts: Statement,
    pub(crate) load_heads: Statement,
    pub(crate) load_aggregates: Statement,
    pub(crate) apply: Statement,
    pub(crate) aggregate: Statement,
    pub(crate) list: Statement,
    pub(crate) list_bounded: Statement,
    pub(crate) receipt: Statement,
    pub(crate) head: Statement,
    pub(crate) read_many: Statement,
    pub(crate) replay: Statement,
}

impl Statements {
    fn prepare(client: &mut Client) -> Result<Self, postgres::Error> {
        Ok(Self {
            lock: client.prepare(sql::LOCK)?,
            load_receipts: client.prepare(sql::LOAD_RECEIPTS)?,
            load_heads: client.prepare(sql::LOAD_HEADS)?,
            load_aggregates: client.prepare(sql::LOAD_AGGREGATES)?,
            apply: client.prepare(sql::APPLY)?,
            aggregate: client.prepare(sql::AGGREGATE)?,
            list: client.prepare(sql::LIST)?,
            list_bounded: client.prepare(sql::LIST_BOUNDED)?,
            receipt: client.prepare(sql::RECEIPT)?,
            head: client.prepare(sql::HEAD)?,
            read_many: client.prepare(sql::READ_MANY)?,
            replay: client.prepare(sql::REPLAY)?,
        })
    }
}

/// Connections to one database and schema.
pub(crate) struct Pool {
    config: postgres::Config,
    schema: Option<String>,
    idle_in_transaction_timeout: Option<std::time::Duration>,
    size: usize,
    state: Mutex<PoolState>,
    freed: Condvar,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.state();
        f.debug_struct("Pool")
            .field("schema", &self.schema)
            .field("size", &self.size)
            .field("open", &state.open)
            .field("idle", &state.idle.len())
            .finish()
    }
}

struct PoolState {
    idle: Vec<Conn>,
    /// Connections open, idle or taken.
    open: usize,
}

impl Pool {
    pub(crate) fn new(config: postgres::Config, options: &crate::PostgresOptions) -> Self {
        Self {
            config,
            schema: options.schema.clone(),
            idle_in_transaction_timeout: options.idle_in_transaction_timeout,
            size: options.pool_size.max(1),
            state: Mutex::new(PoolState {
                idle: Vec::new(),
                open: 0,
            }),
            freed: Condvar::new(),
        }
    }

    fn state(&self) -> MutexGuard<'_, PoolState> {
        // The state is a list and a count, consistent after every statement.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new session: the store's schema first on the search path, durable commits
    /// (`synchronous_commit = on` whatever the server's default), [`PLANNING`], and the
    /// session ended by the server when it idles inside a transaction
    /// ([`PostgresOptions::idle_in_transaction_timeout`](crate::PostgresOptions)): a process
    /// that stops mid-commit (hung, paused, partitioned) holds that commit's advisory locks,
    /// and every commit to the same keys waits until they are released.
    pub(crate) fn session(&self) -> Result<Client, StoreError> {
        let mut client = self.config.connect(NoTls).map_err(backend)?;
        let mut setup = format!("SET synchronous_commit = on; {PLANNING}");
        if let Some(timeout) = self.idle_in_transaction_timeout {
            // At least 1 ms: 0 would disable the timeout.
            let ms = timeout.as_millis().clamp(1, i32::MAX as u128);
            setup.push_str(&format!(" SET idle_in_transaction_session_timeout = {ms};"));
        }
        if let Some(schema) = &self.schema {
            setup.push_str(&format!("SET search_path = {};", quote(schema)));
        }
        client.batch_execute(&setup).map_err(backend)?;
        Ok(client)
    }

    fn open(&self) -> Result<Conn, StoreError> {
        let mut client = self.session()?;
        let statements = Statements::prepare(&mut client).map_err(backend)?;
        Ok(Conn { client, statements })
    }

    /// A connection for one call: an idle one, a new one while fewer than the pool's size are
    /// open, or else the next one given back.
    pub(crate) fn get(&self) -> Result<Pooled<'_>, StoreError> {
        let mut state = self.state();
        loop {
            if let Some(conn) = state.idle.pop() {
                return Ok(Pooled {
                    pool: self,
                    conn: Some(conn),
                });
            }
            if state.open < self.size {
                state.open += 1;
                drop(state);
                return match self.open() {
                    Ok(conn) => Ok(Pooled {
                        pool: self,
                        conn: Some(conn),
                    }),
                    Err(e) => {
                        self.state().open -= 1;
                        self.freed.notify_one();
                        Err(e)
                    }
                };
            }
            state = self
                .freed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Adds an open connection (the one that ran the migrations) to the idle list.
    pub(crate) fn adopt(&self, mut client: Client) -> Result<(), StoreError> {
        let statements = Statements::prepare(&mut client).map_err(backend)?;
        let mut state = self.state();
        state.open += 1;
        state.idle.push(Conn { client, statements });
        Ok(())
    }
}

/// A connection taken from the pool, given back when dropped (or discarded if it closed).
pub(crate) struct Pooled<'p> {
    pool: &'p Pool,
    conn: Option<Conn>,
}

impl Deref for Pooled<'_> {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        // Always `Some` until `drop`.
        self.conn.as_ref().unwrap_or_else(|| unreachable!())
    }
}

impl DerefMut for Pooled<'_> {
    fn deref_mut(&mut self) -> &mut Conn {
        self.conn.as_mut().unwrap_or_else(|| unreachable!())
    }
}

impl Drop for Pooled<'_> {
    fn drop(&mut self) {
        let Some(conn) = self.conn.take() else {
            return;
        };
        let mut state = self.pool.state();
        if conn.client.is_closed() {
            state.open -= 1;
        } else {
            state.idle.push(conn);
        }
        drop(state);
        self.pool.freed.notify_one();
    }
}
