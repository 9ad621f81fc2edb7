//! The store seam itself: the [`Store`] trait every backend implements (in memory, SQLite,
//! PostgreSQL) and the stored-bytes type. The module docs (`store/mod.rs`) say what is stored
//! and why.

use super::aggregate::{Aggregate, AggregateKey};
use super::decoded::DecodedCache;
use super::error::StoreError;
use super::event_log::{GroupHead, ReplayPage, SnapshotPointer};
use super::read_many::{Read, ReadValue, read_each};
use super::receipt::{Receipt, ReceiptKey};
use super::transaction::Transaction;
use std::sync::Arc;

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

    /// Whether every Event row this store serves was authenticated under a secret integrity
    /// key since it was written, and is checked against it on every read: a keyed store
    /// ([`StoreOptions::integrity_key`](super::StoreOptions::integrity_key)) created with its
    /// key, or that adopted it before holding any Event. Then no one without the key can
    /// change, move or plant an Event row unnoticed, and the Core serves the rows without
    /// re-verifying their Group Authority signatures (`service/served_events.rs`). Default:
    /// false (an unkeyed chain can be recomputed by whoever rewrites a row).
    fn authenticates_events(&self) -> bool {
        false
    }

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
            fn authenticates_events(&self) -> bool {
                (**self).authenticates_events()
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
