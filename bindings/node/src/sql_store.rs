//! Durable stores by URL behind the JavaScript `SQLStore`, `SQLiteStore` and `PostgreSQLStore`:
//! conversions only. The URL rules and the open/close life cycle are `missionweaveprotocol-store-open`
//! (`StoreUrl`, `ManagedStore`), the same the Python package uses. `initialize` and `close` are
//! napi `AsyncTask`s: opening a database, migrating its schema and closing it (a SQLite
//! checkpoint) run on the libuv thread pool, never on the event loop. Construction never throws:
//! a refused URL is reported by `status()`, like every constructor of this addon.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use missionweaveprotocol_ffi::authority_core::StoreHandle;
use missionweaveprotocol_ffi::{Failure, Obj, finish};
use missionweaveprotocol_store_open::{ManagedStore, SharedStore, StoreUrl};
use napi::bindgen_prelude::{AsyncTask, Either};
use napi::{Env, Task};
use napi_derive::napi;

use crate::freed;

const OK_NULL: &str = r#"{"ok":null}"#;

/// A store named by a URL, a SQLite path or a PostgreSQL URL; `Err` holds the refusal (or
/// freed) envelope.
#[napi]
#[derive(Debug)]
pub struct SqlStore(Result<Arc<ManagedStore>, String>);

impl SqlStore {
    fn of(parsed: Result<StoreUrl, missionweaveprotocol_store_open::StoreUrlError>) -> Self {
        Self(
            parsed
                .map(|url| Arc::new(ManagedStore::new(url)))
                .map_err(|e| finish(Err(Failure::error(&e)))),
        )
    }

    /// The store's URL (`None` once freed).
    pub(crate) fn url(&self) -> Option<&missionweaveprotocol_store_open::StoreUrl> {
        self.0.as_ref().ok().map(|store| store.url())
    }

    /// The open store for a core, or the lifecycle error's envelope (`ArgumentError`:
    /// `store-not-initialized`, `store-closed`).
    pub(crate) fn handle(&self) -> Result<StoreHandle, String> {
        let store = self.0.as_ref().map_err(Clone::clone)?;
        store
            .ensure_open()
            .map_err(|e| finish(Err(Failure::error(&e))))?;
        Ok(StoreHandle::shared(Arc::clone(store) as SharedStore))
    }

    fn task(&self, call: StoreCall) -> Either<AsyncTask<StoreTask>, String> {
        match &self.0 {
            Ok(store) => Either::A(AsyncTask::new(StoreTask {
                store: Arc::clone(store),
                call,
            })),
            Err(envelope) => Either::B(envelope.clone()),
        }
    }
}

#[napi]
impl SqlStore {
    /// A store named by a `sqlite://` or `postgresql://` URL; `sqlStoreSqlite` and
    /// `sqlStorePostgresql` take a SQLite path or a PostgreSQL URL only.
    #[napi(constructor, catch_unwind)]
    pub fn new(url: String) -> Self {
        Self::of(StoreUrl::parse(&url))
    }

    /// `{"ok":null}`, or the refusal of the URL.
    #[napi(catch_unwind)]
    pub fn status(&self) -> String {
        match &self.0 {
            Ok(_) => OK_NULL.to_owned(),
            Err(envelope) => envelope.clone(),
        }
    }

    /// `{dialectName, url, open}` (`url` with its password masked).
    #[napi(catch_unwind)]
    pub fn info(&self) -> String {
        match &self.0 {
            Ok(store) => finish(Ok(Obj::new()
                .str("dialectName", store.url().dialect_name())
                .str("url", store.url().masked())
                .bool("open", store.is_open())
                .build())),
            Err(envelope) => envelope.clone(),
        }
    }

    /// Opens the database and migrates its schema on the libuv pool: a Promise of the envelope.
    #[napi(catch_unwind)]
    pub fn initialize(&self) -> Either<AsyncTask<StoreTask>, String> {
        self.task(StoreCall::Initialize)
    }

    /// Releases the connection on the libuv pool (idempotent): a Promise of the envelope.
    #[napi(catch_unwind)]
    pub fn close(&self) -> Either<AsyncTask<StoreTask>, String> {
        self.task(StoreCall::Close)
    }

    /// Drops this object's reference now (cores built over the store keep theirs). Idempotent.
    #[napi(catch_unwind)]
    pub fn free(&mut self) {
        self.0 = Err(freed("SQLStore"));
    }
}

/// The embedded store: one SQLite file (`:memory:`: a private in-memory database).
#[napi(catch_unwind)]
pub fn sql_store_sqlite(path: String) -> SqlStore {
    SqlStore::of(StoreUrl::sqlite_path(&path))
}

/// A PostgreSQL server (`postgresql://` or `postgres://` URL only).
#[napi(catch_unwind)]
pub fn sql_store_postgresql(url: String) -> SqlStore {
    SqlStore::of(StoreUrl::parse_postgresql(&url))
}

/// One life-cycle call of a store, run on a libuv worker thread.
#[derive(Debug)]
pub struct StoreTask {
    store: Arc<ManagedStore>,
    call: StoreCall,
}

#[derive(Debug, Clone, Copy)]
enum StoreCall {
    Initialize,
    Close,
}

impl Task for StoreTask {
    type Output = String;
    type JsValue = String;

    fn compute(&mut self) -> napi::Result<String> {
        let store = &self.store;
        let call = self.call;
        catch_unwind(AssertUnwindSafe(|| match call {
            StoreCall::Initialize => match store.initialize() {
                Ok(()) => OK_NULL.to_owned(),
                Err(e) => finish(Err(Failure::error(&e))),
            },
            StoreCall::Close => {
                store.close();
                OK_NULL.to_owned()
            }
        }))
        .map_err(|_| napi::Error::from_reason("the store panicked (a bug); nothing was returned"))
    }

    fn resolve(&mut self, _env: Env, output: String) -> napi::Result<String> {
        Ok(output)
    }
}
