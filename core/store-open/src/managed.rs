//! The life cycle of a store named by URL, shared by the Python and Node `SQLStore`: created
//! (URL checked, nothing opened) → `initialize` (opens the database, runs the schema
//! migrations) → `close` (drops the connection). The reference's `SQLStore` has the same three
//! steps (`reference-python.md` §1.14; `RuntimeError` when used before `initialize`).
//!
//! A [`ManagedStore`] is itself a [`Store`]: a core built over it keeps working until `close`,
//! then every call is a typed [`StoreError::NotOpen`] (`store_closed`, not retryable: the Core's
//! `store_failure` family) — a core never keeps a closed database alive. Calls already running when `close` is called finish on the
//! connection they hold; the connection is dropped when the last of them returns.

use core::fmt;
use std::sync::{Arc, PoisonError, RwLock};

use missionweaveprotocol::{DescribeError, ErrorClass, Fields, WireCode};
use missionweaveprotocol_engine::store::{
    Aggregate, AggregateKey, GroupHead, Read, ReadValue, Receipt, ReceiptKey, ReplayPage,
    SnapshotPointer, Store, StoreError, StoreOptions, Transaction,
};

use crate::{SharedStore, StoreUrl, open_with};

enum State {
    Created,
    Open(SharedStore),
    Closed,
}

/// A store named by a [`StoreUrl`], opened by [`initialize`](Self::initialize) and released by
/// [`close`](Self::close).
pub struct ManagedStore {
    url: StoreUrl,
    /// What the store is opened with (the integrity key: never shown).
    options: StoreOptions,
    state: RwLock<State>,
}

impl fmt::Debug for ManagedStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &*self.state.read().unwrap_or_else(PoisonError::into_inner) {
            State::Created => "created",
            State::Open(_) => "open",
            State::Closed => "closed",
        };
        f.debug_struct("ManagedStore")
            .field("url", &self.url)
            .field("keyed", &self.options.integrity_key.is_some())
            .field("state", &state)
            .finish()
    }
}

impl ManagedStore {
    /// A store for `url`, not opened yet.
    pub fn new(url: StoreUrl) -> Self {
        Self::with_options(url, StoreOptions::default())
    }

    /// A store for `url` to be opened with `options` (an integrity key, `crate::open_with`),
    /// not opened yet.
    pub fn with_options(url: StoreUrl, options: StoreOptions) -> Self {
        Self {
            url,
            options,
            state: RwLock::new(State::Created),
        }
    }

    /// The URL (its [`masked`](StoreUrl::masked) form is safe to show).
    pub fn url(&self) -> &StoreUrl {
        &self.url
    }

    /// Opens the database and brings its schema to the current version (blocking: bindings
    /// call it off their event loop, without the GIL). Idempotent while open; a closed store
    /// stays closed ([`LifecycleError::Closed`]: make a new one).
    pub fn initialize(&self) -> Result<(), LifecycleError> {
        // The write lock is held while opening: a concurrent `initialize` waits and then finds
        // the store open, so the database is opened once.
        let mut state = self.state.write().unwrap_or_else(PoisonError::into_inner);
        match *state {
            State::Open(_) => Ok(()),
            State::Closed => Err(LifecycleError::Closed),
            State::Created => {
                *state =
                    State::Open(open_with(&self.url, &self.options).map_err(LifecycleError::Open)?);
                Ok(())
            }
        }
    }

    /// Releases this store's connection (idempotent). Returns whether it was open. A store never
    /// initialized is closed too: it can no longer be opened.
    pub fn close(&self) -> bool {
        let previous = {
            let mut state = self.state.write().unwrap_or_else(PoisonError::into_inner);
            core::mem::replace(&mut *state, State::Closed)
        };
        // The connection (if no call holds it) is dropped here, outside the lock.
        matches!(previous, State::Open(_))
    }

    /// Whether the store is open.
    pub fn is_open(&self) -> bool {
        matches!(
            *self.state.read().unwrap_or_else(PoisonError::into_inner),
            State::Open(_)
        )
    }

    /// Checks that the store is open (for a binding about to build a core over it).
    pub fn ensure_open(&self) -> Result<(), LifecycleError> {
        self.opened().map(drop).map_err(|_| self.state_error())
    }

    fn state_error(&self) -> LifecycleError {
        match *self.state.read().unwrap_or_else(PoisonError::into_inner) {
            State::Closed => LifecycleError::Closed,
            _ => LifecycleError::NotInitialized,
        }
    }

    /// The open backend, shared with the caller for one call.
    fn opened(&self) -> Result<SharedStore, StoreError> {
        match &*self.state.read().unwrap_or_else(PoisonError::into_inner) {
            State::Open(store) => Ok(Arc::clone(store)),
            State::Created => Err(StoreError::NotOpen { closed: false }),
            State::Closed => Err(StoreError::NotOpen { closed: true }),
        }
    }
}

impl Store for ManagedStore {
    fn commit(&self, tx: Transaction) -> Result<(), StoreError> {
        self.opened()?.commit(tx)
    }

    fn commit_many(&self, txs: Vec<Transaction>) -> Vec<Result<(), StoreError>> {
        match self.opened() {
            Ok(store) => store.commit_many(txs),
            Err(e) => txs.iter().map(|_| Err(e.clone())).collect(),
        }
    }

    fn aggregate(&self, key: &AggregateKey) -> Result<Option<Aggregate>, StoreError> {
        self.opened()?.aggregate(key)
    }

    fn list(&self, kind: &str, id_prefix: &str) -> Result<Vec<(String, Aggregate)>, StoreError> {
        self.opened()?.list(kind, id_prefix)
    }

    fn receipt(&self, key: &ReceiptKey) -> Result<Option<Receipt>, StoreError> {
        self.opened()?.receipt(key)
    }

    fn dedup(&self, key: &ReceiptKey, signing_hash: &str) -> Result<Option<Receipt>, StoreError> {
        self.opened()?.dedup(key, signing_hash)
    }

    fn head(&self, group: &str) -> Result<GroupHead, StoreError> {
        self.opened()?.head(group)
    }

    fn read_many(&self, reads: &[Read]) -> Result<Vec<ReadValue>, StoreError> {
        self.opened()?.read_many(reads)
    }

    fn batches_reads(&self) -> bool {
        self.opened().is_ok_and(|store| store.batches_reads())
    }

    fn authenticates_events(&self) -> bool {
        self.opened()
            .is_ok_and(|store| store.authenticates_events())
    }

    fn replay(
        &self,
        group: &str,
        after_sequence: u64,
        limit: usize,
    ) -> Result<ReplayPage, StoreError> {
        self.opened()?.replay(group, after_sequence, limit)
    }

    // `decoded_cache` keeps its default (none): the memo would have to outlive the call's
    // handle on the backend, and the durable backends read fresh bytes on every call anyway.

    fn archive_before(
        &self,
        group: &str,
        before: u64,
        snapshot: SnapshotPointer,
    ) -> Result<(), StoreError> {
        self.opened()?.archive_before(group, before, snapshot)
    }
}

/// A store used outside its life cycle, or a database that would not open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LifecycleError {
    /// Used before `initialize` (the reference raises `RuntimeError`).
    NotInitialized,
    /// Used, or initialized again, after `close`.
    Closed,
    /// Opening the database or migrating its schema failed.
    Open(StoreError),
}

impl fmt::Display for LifecycleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotInitialized => f.write_str(
                "the store is not initialized: await store.initialize() before using it",
            ),
            Self::Closed => f.write_str("the store was closed: make a new store to open it again"),
            Self::Open(e) => write!(f, "the store could not be opened: {e}"),
        }
    }
}

impl std::error::Error for LifecycleError {}

impl DescribeError for LifecycleError {
    fn class(&self) -> ErrorClass {
        match self {
            // API misuse, like an argument error (the object is used out of order).
            Self::NotInitialized | Self::Closed => ErrorClass::Argument,
            Self::Open(e) => e.class(),
        }
    }

    fn wire_code(&self) -> WireCode {
        match self {
            Self::NotInitialized | Self::Closed => WireCode::ProtocolViolation,
            Self::Open(e) => e.wire_code(),
        }
    }

    fn reason(&self) -> &str {
        match self {
            Self::NotInitialized => "store-not-initialized",
            Self::Closed => "store-closed",
            Self::Open(e) => e.reason(),
        }
    }

    fn fields(&self) -> Fields {
        match self {
            Self::NotInitialized | Self::Closed => Fields::new().text("argument", "store"),
            Self::Open(e) => e.fields(),
        }
    }
}
