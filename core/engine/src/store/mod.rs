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
//! SQLite or PostgreSQL store them without knowing engine types. A durable backend
//! authenticates every row it stores ([`integrity`]: a hash chain per Group, checksums of
//! aggregates, receipts and heads, HMAC-SHA256 under [`StoreOptions::integrity_key`] when one
//! is set) and records each Command's Action in the row of its first Event, so that a receipt
//! removed behind its back is reported instead of letting the Command apply twice.
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
mod blob;
pub mod commit_rules;
pub(crate) mod decoded;
pub(crate) mod error;
mod event_log;
mod exclusive_cache;
mod group_commit;
pub mod integrity;
mod memory;
mod read_many;
pub mod read_rules;
mod receipt;
mod seam;
// The shared store test suite: compiled only for the tests of the crates that enable
// `testing` in their dev-dependencies, never into a release build.
#[cfg(feature = "testing")]
#[doc(hidden)]
pub mod suite;
mod transaction;

pub use aggregate::{Aggregate, AggregateKey};
pub use blob::Blob;
pub use commit_rules::{CommitView, WriteSetKeys};
pub use decoded::DecodedCache;
pub use error::StoreError;
pub use event_log::{EventRecord, GroupHead, ReplayPage, SnapshotPointer};
pub use exclusive_cache::{BYTES_PER_STRIPE, ENTRIES_PER_STRIPE, ExclusiveCache, STRIPES};
pub use group_commit::{DEFAULT_MAX_BATCH, GroupCommit, GroupCommitStats};
pub use integrity::{Integrity, IntegrityKey, StoreOptions};
pub use memory::InMemoryStore;
pub use read_many::{Read, ReadValue, check_answers, read_each};
pub use receipt::{EventRef, Receipt, ReceiptKey};
pub use seam::Store;
pub use transaction::{AggregateWrite, Transaction, TransactionParts};
