//! Store specs: which authoritative store a worker process opens. ONE function,
//! [`open_store`], turns a spec into a shared store, so adding a backend is one match arm.
//!
//! - `sqlite:PATH`: [`SqliteStore::open`] on the file at `PATH` (created if missing; WAL,
//!   `synchronous=FULL`, a 5 s busy timeout so processes sharing the file wait for its write
//!   lock instead of failing, `docs/store.md`);
//! - `postgresql://…` / `postgres://…`: reserved for the PostgreSQL backend (issue 11); until
//!   it is merged it is the typed error [`HarnessError::BackendNotBuilt`].

use std::sync::Arc;

use missionweaveprotocol_authority::store::Store;
use missionweaveprotocol_store_sqlite::SqliteStore;

use crate::error::HarnessError;

/// A store shared by the threads of one process.
pub type SharedStore = Arc<dyn Store + Send + Sync>;

/// A parsed store spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreSpec {
    /// A SQLite file.
    Sqlite(String),
    /// A PostgreSQL connection URL.
    Postgres(String),
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
            return Ok(Self::Postgres(spec.to_owned()));
        }
        Err(HarnessError::argument(
            "store",
            format!("{spec:?} is not a store spec (sqlite:PATH or postgresql://…)"),
        ))
    }
}

/// Opens the store `spec` names.
pub fn open_store(spec: &str) -> Result<SharedStore, HarnessError> {
    match StoreSpec::parse(spec)? {
        StoreSpec::Sqlite(path) => Ok(Arc::new(SqliteStore::open(path)?)),
        // PostgreSQL: the lead wires the backend here once it is merged (issue 11), e.g.
        // `StoreSpec::Postgres(url) => Ok(Arc::new(PostgresStore::connect(&url)?)),`.
        StoreSpec::Postgres(_) => Err(HarnessError::BackendNotBuilt {
            scheme: "postgresql".to_owned(),
        }),
    }
}
