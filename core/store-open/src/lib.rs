//! Authoritative stores by URL, for the Python and Node bindings (`docs/store.md`, "Stores by
//! URL"): the one parser of store URLs ([`StoreUrl`]), the one opener ([`open`]) and the
//! open/close life cycle of a store the bindings hand to a core ([`ManagedStore`]).
//!
//! Every store a binding's core runs over is a [`SharedStore`]: the in-memory store, SQLite
//! (`missionweaveprotocol-store-sqlite`) and PostgreSQL (`missionweaveprotocol-store-postgres`)
//! are one more
//! `Arc<dyn Store + Send + Sync>`; nothing above this crate names a backend.
//!
//! ```
//! use missionweaveprotocol_engine::store::Store;
//! use missionweaveprotocol_store_open::{StoreUrl, open};
//!
//! let url = StoreUrl::parse("postgresql+asyncpg://app:secret@db.internal/mwp").unwrap();
//! assert_eq!(url.dialect_name(), "postgresql");
//! assert_eq!(url.masked(), "postgresql+asyncpg://app:***@db.internal/mwp");
//!
//! let store = open(&StoreUrl::parse("sqlite:///:memory:").unwrap()).unwrap();
//! assert_eq!(store.head("g").unwrap().next_sequence, 1);
//! ```

mod managed;
mod url;

use std::sync::Arc;

use missionweaveprotocol_engine::store::{GroupCommit, Store, StoreError, StoreOptions};
use missionweaveprotocol_store_postgres::{PostgresOptions, PostgresStore};
use missionweaveprotocol_store_sqlite::{SqliteOptions, SqliteStore};

pub use managed::{LifecycleError, ManagedStore};
pub use url::{Dialect, Location, StoreUrl, StoreUrlError, StoreUrlProblem};

/// Any authoritative store, shared between cores and threads.
pub type SharedStore = Arc<dyn Store + Send + Sync>;

/// Opens (creating if needed) the store `url` names and brings its schema to the current
/// version. Blocking: database I/O. SQLite `:memory:` is a private in-memory database; a SQLite
/// file runs in WAL mode and a commit that returned is on disk. A PostgreSQL URL connects to
/// its server (the driver suffix removed: `postgresql+asyncpg://…` is `postgresql://…` to libpq)
/// and creates or migrates the store's tables in the connection's current schema; a commit that
/// returned is in the server's flushed WAL. An unreachable server, a refused login or a missing
/// database is a [`StoreError::Backend`]; a URL libpq cannot read an
/// [`StoreError::InvalidArgument`].
pub fn open(url: &StoreUrl) -> Result<SharedStore, StoreError> {
    open_with(url, &StoreOptions::default())
}

/// [`open`] with `options`: the integrity key every row is authenticated with
/// ([`StoreOptions::integrity_key`]; `docs/store.md`, "Data at rest") and whether an unkeyed
/// store adopts it. The key travels beside the URL, never in it (URLs are logged and shown,
/// masked or not). A store sealed under a key refuses to open without it or with another one
/// ([`StoreError::IntegrityKeyRefused`]).
pub fn open_with(url: &StoreUrl, options: &StoreOptions) -> Result<SharedStore, StoreError> {
    open_store(url, options, None)
}

/// [`open_with`], a SQLite file this call creates getting pages of `sqlite_page_size` bytes
/// instead of the store's default (a power of two from 512 to 65,536; an existing file keeps
/// the size it was created with, and other URLs ignore it). The server creates its file with
/// smaller pages than the default: its commits are batches of a few small write sets, each
/// changing a handful of B-tree leaves, and every changed page is one WAL frame
/// (`docs/network.md`, "Load benchmark").
pub fn open_with_page_size(
    url: &StoreUrl,
    options: &StoreOptions,
    sqlite_page_size: u32,
) -> Result<SharedStore, StoreError> {
    open_store(url, options, Some(sqlite_page_size))
}

fn open_store(
    url: &StoreUrl,
    options: &StoreOptions,
    sqlite_page_size: Option<u32>,
) -> Result<SharedStore, StoreError> {
    match url.location() {
        Location::SqliteMemory => Ok(Arc::new(SqliteStore::in_memory_with(options)?)),
        // Durable backends batch concurrent commits (a Core shared by threads, or by awaited
        // calls on a binding's thread pool): one fsync or one server COMMIT per batch, each
        // Command still atomic and returned only once durable (`GroupCommit`).
        Location::SqliteFile(path) => {
            let defaults = SqliteOptions::default();
            let sqlite = SqliteOptions {
                store: options.clone(),
                page_size: sqlite_page_size.unwrap_or(defaults.page_size),
                ..defaults
            };
            Ok(Arc::new(GroupCommit::new(SqliteStore::open_with(
                path, &sqlite,
            )?)))
        }
        Location::Postgresql(libpq_url) => {
            Ok(Arc::new(GroupCommit::new(PostgresStore::connect_with(
                libpq_url,
                PostgresOptions::default().store_options(options.clone()),
            )?)))
        }
    }
}
