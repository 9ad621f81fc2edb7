//! The store seam of the authoritative core: per-aggregate persistence, sans-IO (§4.6, §4.7,
//! §15, §16, §7.4).
//!
//! The engine never stores one whole-state document (the reference's O(state) design,
//! `reference-python.md` §7 gap 7). It stores:
//!
//! - one append-only Event log per Group with contiguous sequences from 1 (§4.7, §15.2):
//!   [`Transaction::append`] names the sequence it expects to be next; anything else is a typed
//!   [`StoreError::SequenceConflict`] and nothing is written;
//! - aggregates (Mission, WorkItem, Membership, lease, budget account, …) by
//!   [`AggregateKey`] `(kind, id)`, each with its own revision for optimistic concurrency
//!   (§15.3): a write names the revision it read, a mismatch is `REVISION_CONFLICT`;
//! - deduplication receipts by `(actor, Action ID)` holding the verified signing hash and the
//!   first Event's reference (§15.1): same hash → the first result again, different hash →
//!   `ACTION_ID_COLLISION`.
//!
//! Stored values are opaque bytes (canonical JSON) plus the few metadata a backend indexes, so
//! SQLite or PostgreSQL store them without knowing engine types.
//!
//! A [`Transaction`] is a write set: the engine reads, decides, fills a transaction with every
//! write of one Command and every revision its decision depended on, and hands it to
//! [`Store::commit`]. Commit validates all of it and applies all of it, or nothing
//! (`docs/store.md` says why the seam is synchronous and optimistic).
//!
//! The rules a commit checks are written once ([`commit_rules::validate`] over a backend's
//! [`CommitView`]), and so are the rules of a replay page ([`read_rules::PagePlan`]): every
//! backend answers the same write set and the same cursor with the same result.
//!
//! Every backend must pass the shared test suite unchanged (`store::suite`,
//! `store_test_suite!`, behind the `testing` feature: test builds only).
//!
//! ```
//! use missionweaveprotocol::{DescribeError, WireCode};
//! use missionweaveprotocol_engine::store::{
//!     AggregateKey, EventRecord, EventRef, InMemoryStore, Receipt, ReceiptKey, Store, Transaction,
//! };
//!
//! let store = InMemoryStore::new();
//! let key = ReceiptKey::new("agent", "urn:agent:a", "action-1");
//! assert_eq!(store.dedup(&key, "sha256:aa").unwrap(), None); // a new Command
//! let next = store.head("g").unwrap().next_sequence; // 1
//! let mut tx = Transaction::new();
//! tx.record_receipt(
//!     key.clone(),
//!     Receipt {
//!         signing_hash: "sha256:aa".into(),
//!         first_event: EventRef { event_id: "e1".into(), position: Some(("g".into(), next)) },
//!     },
//! )
//! .append("g", EventRecord::new(next, "e1", &b"{}"[..]))
//! .put(AggregateKey::new("work_item", "w"), 0, b"{}"[..].into());
//! store.commit(tx).unwrap();
//!
//! // The same Action ID with other signed content collides (§15.1).
//! let e = store.dedup(&key, "sha256:bb").unwrap_err();
//! assert_eq!(e.wire_code(), WireCode::ActionIdCollision);
//! // A stale revision is refused and nothing is written (§15.3).
//! let mut tx = Transaction::new();
//! tx.append("g", EventRecord::new(2, "e2", &b"{}"[..]))
//!     .put(AggregateKey::new("work_item", "w"), 0, b"{}"[..].into());
//! assert_eq!(store.commit(tx).unwrap_err().wire_code(), WireCode::RevisionConflict);
//! assert_eq!(store.replay("g", 0, 10).unwrap().events.len(), 1);
//! ```

mod aggregate;
pub mod commit_rules;
pub(crate) mod decoded;
pub(crate) mod error;
mod event_log;
mod group_commit;
pub mod integrity;
mod memory;
mod read_many;
pub mod read_rules;
mod receipt;
// The shared store test suite: compiled only for the tests of the crates that enable
// `testing` in their dev-dependencies, never into a release build.
#[cfg(feature = "testing")]
#[doc(hidden)]
pub mod suite;
mod transaction;

pub use aggregate::{Aggregate, AggregateKey};
pub use commit_rules::{CommitView, WriteSetKeys};
pub use decoded::DecodedCache;
pub use error::StoreError;
pub use event_log::{EventRecord, GroupHead, ReplayPage, SnapshotPointer};
pub use group_commit::{DEFAULT_MAX_BATCH, GroupCommit, GroupCommitStats};
pub use memory::InMemoryStore;
pub use read_many::{Read, ReadValue, check_answers, read_each};
pub use receipt::{EventRef, Receipt, ReceiptKey};
pub use transaction::{AggregateWrite, Transaction, TransactionParts};

use std::sync::Arc;

/// Opaque stored bytes (canonical JSON): shared, so that replay hands out Events without
/// copying them.
pub type Blob = Arc<[u8]>;

/// The authoritative store contract. Synchronous and free of I/O types: the core is sans-IO
/// and builds for wasm32; async hosts call it from a blocking task (`docs/store.md`).
///
/// Reads see committed state only. Consistency of a decision comes from the transaction: every
/// revision and sequence the decision relied on is named in it and re-checked at commit.
pub trait Store {
    /// Validates and applies every write of `tx` atomically: all or nothing (§15.1, §15.3).
    ///
    /// Checks, in this order: receipts (an Action already applied wins over any other
    /// conflict), Group appends, aggregate writes. The first failure is returned and nothing
    /// of `tx` is visible afterwards.
    fn commit(&self, tx: Transaction) -> Result<(), StoreError>;

    /// Group commit: applies several transactions in order, each keeping its own atomicity
    /// (a later one sees the earlier ones' effects). A durable backend writes them in one
    /// durable transaction; the default commits them one by one.
    fn commit_many(&self, txs: Vec<Transaction>) -> Vec<Result<(), StoreError>> {
        txs.into_iter().map(|tx| self.commit(tx)).collect()
    }

    /// The aggregate stored at `key`, if any.
    fn aggregate(&self, key: &AggregateKey) -> Result<Option<Aggregate>, StoreError>;

    /// Every aggregate of `kind` whose ID starts with `id_prefix`, in ID byte order.
    fn list(&self, kind: &str, id_prefix: &str) -> Result<Vec<(String, Aggregate)>, StoreError>;

    /// The receipt recorded for `key`, if any.
    fn receipt(&self, key: &ReceiptKey) -> Result<Option<Receipt>, StoreError>;

    /// Idempotency (§15.1): `Ok(None)` when `key` is new, `Ok(Some(receipt))` when the same
    /// signed content was already applied (answer with its first Event again), and
    /// [`StoreError::ActionIdCollision`] when the Action ID was used with other content.
    fn dedup(&self, key: &ReceiptKey, signing_hash: &str) -> Result<Option<Receipt>, StoreError> {
        match self.receipt(key)? {
            None => Ok(None),
            Some(receipt) if receipt.signing_hash == signing_hash => Ok(Some(receipt)),
            Some(_) => Err(StoreError::ActionIdCollision { key: key.clone() }),
        }
    }

    /// Where `group`'s log stands: the next sequence to append and what was archived.
    fn head(&self, group: &str) -> Result<GroupHead, StoreError>;

    /// Several point reads at once, answered in the order asked with the matching
    /// [`ReadValue`] variant ([`read_many`](self::read_many) module docs). Default: one call
    /// per read ([`read_each`]).
    fn read_many(&self, reads: &[Read]) -> Result<Vec<ReadValue>, StoreError> {
        read_each(self, reads)
    }

    /// Whether the engine should gather a Command's likely reads into one
    /// [`read_many`](Store::read_many) before deciding: true for a backend whose every call is
    /// a round trip (PostgreSQL). Default: false (each read is a cheap local call, and reading
    /// something the decision then does not need would be waste).
    fn batches_reads(&self) -> bool {
        false
    }

    /// Up to `limit` Events of `group` with sequences after `after_sequence`, in order (§16).
    /// [`ReplayPage::continuation`] is the cursor for the next page while more follow.
    /// A cursor before the online log answers [`StoreError::CursorTooOld`] with the snapshot
    /// pointer (§16). A `limit` of 0 is an argument error.
    fn replay(
        &self,
        group: &str,
        after_sequence: u64,
        limit: usize,
    ) -> Result<ReplayPage, StoreError>;

    /// The backend's memo of decoded aggregates, if it keeps one ([`DecodedCache`]: bounded,
    /// hit only by the very blob it decoded). The in-memory store keeps one; a backend that
    /// reads fresh bytes on every call gains nothing from it. Default: none.
    fn decoded_cache(&self) -> Option<&DecodedCache> {
        None
    }

    /// Archival (§7.4, §16): Events of `group` before `before` leave the online log; later
    /// replays from before them answer `CURSOR_TOO_OLD` with `snapshot`, whose
    /// `throughSequence` is `before - 1`. `before` must advance the archive and may not pass
    /// the head (`before <= next sequence`). Sequences are never reused.
    fn archive_before(
        &self,
        group: &str,
        before: u64,
        snapshot: SnapshotPointer,
    ) -> Result<(), StoreError>;
}

/// Forwards every method (the provided ones too, so a backend's `commit_many` and `dedup`
/// overrides stay in force) to the store behind a shared pointer.
macro_rules! forward_store {
    ($($pointer:ty),+) => {$(
        impl<T: Store + ?Sized> Store for $pointer {
            fn commit(&self, tx: Transaction) -> Result<(), StoreError> {
                (**self).commit(tx)
            }
            fn commit_many(&self, txs: Vec<Transaction>) -> Vec<Result<(), StoreError>> {
                (**self).commit_many(txs)
            }
            fn aggregate(&self, key: &AggregateKey) -> Result<Option<Aggregate>, StoreError> {
                (**self).aggregate(key)
            }
            fn list(
                &self,
                kind: &str,
                id_prefix: &str,
            ) -> Result<Vec<(String, Aggregate)>, StoreError> {
                (**self).list(kind, id_prefix)
            }
            fn receipt(&self, key: &ReceiptKey) -> Result<Option<Receipt>, StoreError> {
                (**self).receipt(key)
            }
            fn dedup(
                &self,
                key: &ReceiptKey,
                signing_hash: &str,
            ) -> Result<Option<Receipt>, StoreError> {
                (**self).dedup(key, signing_hash)
            }
            fn head(&self, group: &str) -> Result<GroupHead, StoreError> {
                (**self).head(group)
            }
            fn read_many(&self, reads: &[Read]) -> Result<Vec<ReadValue>, StoreError> {
                (**self).read_many(reads)
            }
            fn batches_reads(&self) -> bool {
                (**self).batches_reads()
            }
            fn replay(
                &self,
                group: &str,
                after_sequence: u64,
                limit: usize,
            ) -> Result<ReplayPage, StoreError> {
                (**self).replay(group, after_sequence, limit)
            }
            fn archive_before(
                &self,
                group: &str,
                before: u64,
                snapshot: SnapshotPointer,
            ) -> Result<(), StoreError> {
                (**self).archive_before(group, before, snapshot)
            }
            fn decoded_cache(&self) -> Option<&DecodedCache> {
                (**self).decoded_cache()
            }
        }
    )+};
}

// Several engines (e.g. one per core, or a membership engine beside the Mission engine) share
// one store: `Engine<&InMemoryStore, …>` or `Engine<Arc<dyn Store + Send + Sync>, …>`.
forward_store!(&T, Arc<T>);
