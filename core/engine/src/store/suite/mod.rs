//! The store test suite every backend must pass unchanged (§4.6–4.8, §15, §16, §7.4).
//!
//! Each case is a generic function over [`Store`] that panics on a broken rule; the
//! [`store_test_suite!`](crate::store_test_suite) macro turns all of them into `#[test]`s for
//! one backend:
//!
//! ```
//! use missionweaveprotocol_engine::store::InMemoryStore;
//!
//! missionweaveprotocol_engine::store_test_suite!(InMemoryStore::new);
//! # fn main() {}
//! ```
//!
//! A case receives a fresh, empty store. Test code: assertions are the point here.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::{DescribeError, FieldValue, WireCode};

use super::{
    AggregateKey, Blob, EventRecord, EventRef, Receipt, ReceiptKey, SnapshotPointer, Store,
    StoreError, Transaction,
};

/// The canonical bytes of a small test Event.
pub fn event_body(group: &str, sequence: u64, event_id: &str) -> Blob {
    format!(r#"{{"eventId":"{event_id}","groupId":"{group}","sequence":{sequence}}}"#)
        .into_bytes()
        .into()
}

/// A test Event for `group` at `sequence`.
pub fn event(group: &str, sequence: u64) -> EventRecord {
    let id = format!("{group}/event/{sequence}");
    EventRecord::new(sequence, &id, event_body(group, sequence, &id))
}

/// A transaction appending Events `first..first + count` to `group`.
pub fn appends(group: &str, first: u64, count: u64) -> Transaction {
    let mut tx = Transaction::new();
    for i in 0..count {
        tx.append(group, event(group, first + i));
    }
    tx
}

fn blob(text: &str) -> Blob {
    text.as_bytes().into()
}

fn receipt(hash: &str, group: &str, sequence: u64) -> Receipt {
    Receipt {
        signing_hash: hash.to_owned(),
        first_event: EventRef {
            event_id: format!("{group}/event/{sequence}"),
            position: Some((group.to_owned(), sequence)),
        },
    }
}

/// Every sequence of `group`'s online log, replayed page by page.
pub fn online_sequences<S: Store + ?Sized>(store: &S, group: &str) -> Vec<u64> {
    let mut after = store.head(group).unwrap().first_online - 1;
    let mut sequences = Vec::new();
    loop {
        let page = store.replay(group, after, 7).unwrap();
        sequences.extend(page.events.iter().map(|e| e.sequence));
        match page.continuation {
            Some(next) => after = next,
            None => return sequences,
        }
    }
}

fn assert_describes(e: &StoreError, code: WireCode, reason: &str) {
    assert_eq!(e.wire_code(), code, "{e}");
    assert_eq!(DescribeError::reason(e), reason, "{e}");
    let message = e.to_string();
    assert!(
        !message.is_empty() && !message.contains("{ "),
        "{message:?}"
    );
}

fn field(e: &StoreError, name: &str) -> FieldValue {
    e.fields()
        .get(name)
        .cloned()
        .unwrap_or_else(|| panic!("{e}: no field {name}"))
}

mod aggregates;
mod atomicity;
#[cfg(not(target_arch = "wasm32"))]
mod concurrency;
pub mod engine;
mod event_log;
mod read_many;
mod receipts;
pub mod tampering;

pub use aggregates::*;
pub use atomicity::*;
#[cfg(not(target_arch = "wasm32"))]
pub use concurrency::*;
pub use event_log::*;
pub use read_many::*;
pub use receipts::*;

/// Defines one `#[test]` per suite case for the backend built by `$make` (a closure returning
/// a fresh, empty store). Exported only with the `testing` feature, like the cases it names.
#[cfg(feature = "testing")]
#[macro_export]
macro_rules! store_test_suite {
    ($make:expr) => {
        $crate::store_test_suite!(@cases $make;
            sequences_start_at_one_and_stay_contiguous,
            append_at_wrong_sequence_is_refused_and_writes_nothing,
            aggregate_revisions_advance_by_one,
            stale_revision_is_refused,
            checked_revision_guards_the_decision,
            writes_in_one_transaction_chain,
            transaction_is_atomic,
            empty_transaction_changes_nothing,
            dedup_same_hash_returns_the_first_receipt,
            dedup_different_hash_is_a_collision,
            organization_scoped_events_commit_atomically,
            replay_pages_with_continuation,
            archived_history_answers_cursor_too_old,
            groups_are_independent,
            commit_many_keeps_each_transaction_atomic,
            list_by_kind_and_prefix,
            read_many_answers_as_single_reads,
        );
        #[cfg(not(target_arch = "wasm32"))]
        #[test]
        fn concurrent_appends_stay_contiguous() {
            $crate::store::suite::concurrent_appends_stay_contiguous(&($make)());
        }
    };
    (@cases $make:expr; $($case:ident),* $(,)?) => {
        $(
            #[test]
            fn $case() {
                $crate::store::suite::$case(&($make)());
            }
        )*
    };
}
