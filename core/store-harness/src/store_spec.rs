//! Store specs: which authoritative store a worker process opens. ONE function,
//! [`open_store_with`] (and [`open_store`], its unbatched form), turns a spec into a shared
//! store, so adding a backend is one match arm.
//!
//! - `sqlite:PATH`: [`SqliteStore::open`] on the file at `PATH` (created if missing; WAL,
//!   `synchronous=FULL`, a 5 s busy timeout so processes sharing the file wait for its write
//!   lock instead of failing, `docs/store.md`);
//! - `postgresql://…` / `postgres://…`: [`PostgresStore::connect_with`] on that URL. Two query
//!   parameters belong to the harness and are taken out before the URL reaches the client:
//!   `schema=NAME` (the store's tables live in schema `NAME`, created if missing: every test
//!   and benchmark run names a fresh one, so runs share one server without seeing each other)
//!   `pool_size=N` (connections per process, default [`DEFAULT_POSTGRES_POOL`]) and
//!   `batch_reads=false` (one round trip per read, to measure what batching saves). Every
//!   other parameter (`connect_timeout`, `application_name`, …) goes to the client as is.
//!
//! [`Batching::GroupCommit`] wraps the store in [`GroupCommit`], so the concurrent submitters
//! of one process share durable transactions (`docs/store.md`, "Group commit and
//! concurrency"); [`Batching::PerCommand`] commits each Command on its own (for comparison).

use std::sync::Arc;

use missionweaveprotocol_engine::store::{GroupCommit, GroupCommitStats, Store};
use missionweaveprotocol_store_postgres::{PostgresOptions, PostgresStore};
use missionweaveprotocol_store_sqlite::SqliteStore;

use crate::error::HarnessError;

/// A store shared by the threads of one process.
pub type SharedStore = Arc<dyn Store + Send + Sync>;

/// Connections per process when a PostgreSQL spec names no `pool_size`: half of the 32
/// submitter threads the race and the benchmark run (with group commit one connection at a
/// time commits; the others serve the engine's reads), so 3 processes need 48 of the
/// server's default 100 connections.
pub const DEFAULT_POSTGRES_POOL: usize = 16;

/// PostgreSQL limits identifiers to 63 bytes (longer ones are silently truncated).
const MAX_SCHEMA_LEN: usize = 63;

/// A parsed store spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreSpec {
    /// A SQLite file.
    Sqlite(String),
    /// A PostgreSQL database.
    Postgres(PostgresSpec),
}

/// A PostgreSQL spec: the client's URL and the harness's own parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostgresSpec {
    /// The URL without `schema`, `pool_size` and `batch_reads`.
    pub url: String,
    /// The store's schema (`schema=NAME`); `None`: the connection's current schema.
    pub schema: Option<String>,
    /// Connections kept open at most (`pool_size=N`).
    pub pool_size: usize,
    /// Batched reads (`batch_reads=true|false`, default true; `PostgresOptions::batch_reads`).
    pub batch_reads: bool,
}

impl PostgresSpec {
    /// Parses a `postgresql://` / `postgres://` URL, taking out `schema` and `pool_size`.
    pub fn parse(spec: &str) -> Result<Self, HarnessError> {
        let (base, query) = spec.split_once('?').unwrap_or((spec, ""));
        let mut kept = Vec::new();
        let mut schema = None;
        let mut pool_size = None;
        let mut batch_reads = None;
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            match key {
                "schema" => {
                    if schema.replace(parse_schema(value)?).is_some() {
                        return Err(HarnessError::argument("store", "schema= given twice"));
                    }
                }
                "pool_size" => {
                    let size = value
                        .parse::<usize>()
                        .ok()
                        .filter(|n| *n > 0)
                        .ok_or_else(|| {
                            HarnessError::argument(
                                "store",
                                format!("pool_size={value:?} is not a positive integer"),
                            )
                        })?;
                    if pool_size.replace(size).is_some() {
                        return Err(HarnessError::argument("store", "pool_size= given twice"));
                    }
                }
                "batch_reads" => {
                    let batch = match value {
                        "true" => true,
                        "false" => false,
                        _ => {
                            return Err(HarnessError::argument(
                                "store",
                                format!("batch_reads={value:?} is not true or false"),
                            ));
                        }
                    };
                    if batch_reads.replace(batch).is_some() {
                        return Err(HarnessError::argument("store", "batch_reads= given twice"));
                    }
                }
                _ => kept.push(pair),
            }
        }
        let url = if kept.is_empty() {
            base.to_owned()
        } else {
            format!("{base}?{}", kept.join("&"))
        };
        Ok(Self {
            url,
            schema,
            pool_size: pool_size.unwrap_or(DEFAULT_POSTGRES_POOL),
            batch_reads: batch_reads.unwrap_or(true),
        })
    }

    fn options(&self) -> PostgresOptions {
        let options = PostgresOptions::default()
            .pool_size(self.pool_size)
            .batch_reads(self.batch_reads);
        match &self.schema {
            Some(schema) => options.schema(schema.clone()),
            None => options,
        }
    }
}

/// A schema name: 1–63 ASCII letters, digits and `_`, not starting with a digit (a plain
/// identifier: the same name in a URL, a log line and `psql`, no quoting or escaping).
fn parse_schema(name: &str) -> Result<String, HarnessError> {
    let plain = !name.is_empty()
        && name.len() <= MAX_SCHEMA_LEN
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        Ok(name.to_owned())
    } else {
        Err(HarnessError::argument(
            "store",
            format!(
                "schema={name:?}: 1-{MAX_SCHEMA_LEN} ASCII letters, digits or _, not starting with a digit"
            ),
        ))
    }
}

impl StoreSpec {
    /// Parses `sqlite:PATH` or a `postgresql://` / `postgres://` URL.
    pub fn parse(spec: &str) -> Result<Self, HarnessError> {
        if let Some(path) = spec.strip_prefix("sqlite:") {
            if path.is_empty() {
                return Err(HarnessError::argument(
                    "store",
                    "sqlite: needs a file path (sqlite:PATH)",
                ));
            }
            return Ok(Self::Sqlite(path.to_owned()));
        }
        if spec.starts_with("postgresql://") || spec.starts_with("postgres://") {
            return Ok(Self::Postgres(PostgresSpec::parse(spec)?));
        }
        Err(HarnessError::argument(
            "store",
            format!("{spec:?} is not a store spec (sqlite:PATH or postgresql://…)"),
        ))
    }
}

/// How the commits of one process's threads reach the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Batching {
    /// Each `commit` is its own durable transaction.
    PerCommand,
    /// Concurrent `commit`s share durable transactions ([`GroupCommit`]).
    GroupCommit,
}

impl Batching {
    /// `on` or `off` (the worker's `--group-commit`).
    pub fn parse(flag: &str) -> Result<Self, HarnessError> {
        match flag {
            "on" => Ok(Self::GroupCommit),
            "off" => Ok(Self::PerCommand),
            other => Err(HarnessError::argument(
                "--group-commit",
                format!("{other:?} is neither on nor off"),
            )),
        }
    }
}

/// An opened store, and its group commit when it has one (for its counters).
#[derive(Clone)]
pub struct OpenedStore {
    /// The store to build cores on.
    pub store: SharedStore,
    group_commit: Option<Arc<GroupCommit<SharedStore>>>,
}

impl OpenedStore {
    /// The group commit's counters, `None` when each Command commits on its own.
    pub fn group_commit_stats(&self) -> Option<GroupCommitStats> {
        self.group_commit.as_ref().map(|g| g.stats())
    }
}

impl std::fmt::Debug for OpenedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenedStore")
            .field("group_commit", &self.group_commit_stats())
            .finish_non_exhaustive()
    }
}

/// Opens the store `spec` names, batched as `batching` says.
pub fn open_store_with(spec: &str, batching: Batching) -> Result<OpenedStore, HarnessError> {
    let store: SharedStore = match StoreSpec::parse(spec)? {
        StoreSpec::Sqlite(path) => Arc::new(SqliteStore::open(path)?),
        StoreSpec::Postgres(pg) => Arc::new(PostgresStore::connect_with(&pg.url, pg.options())?),
    };
    Ok(match batching {
        Batching::PerCommand => OpenedStore {
            store,
            group_commit: None,
        },
        Batching::GroupCommit => {
            let grouped = Arc::new(GroupCommit::new(store));
            OpenedStore {
                store: grouped.clone(),
                group_commit: Some(grouped),
            }
        }
    })
}

/// Opens the store `spec` names, each commit on its own (one submitter: the stream, the
/// setup, the checks).
pub fn open_store(spec: &str) -> Result<SharedStore, HarnessError> {
    Ok(open_store_with(spec, Batching::PerCommand)?.store)
}

/// Drops what a PostgreSQL spec's `schema=` holds (the end of a test or a benchmark run);
/// nothing for a SQLite spec (its file goes with its directory) or a spec without a schema
/// (the harness never drops a schema it was not told to own).
pub fn drop_store(spec: &str) -> Result<(), HarnessError> {
    match StoreSpec::parse(spec)? {
        StoreSpec::Postgres(pg) if pg.schema.is_some() => {
            let store = PostgresStore::connect_with(&pg.url, pg.options().pool_size(1))?;
            Ok(store.drop_schema()?)
        }
        _ => Ok(()),
    }
}
