//! Several point reads in one call (`Store::read_many`), for backends where every call is a
//! round trip to a server.
//!
//! A Command's decision reads its receipt (§15.1), a few aggregates and its Group's head
//! (§15.2). On PostgreSQL each of those is a network round trip, and the round trips — not the
//! decision — dominate the cost of a Command. The engine names what it will probably read
//! before deciding ([`Store::batches_reads`]); the backend answers all of it at once, and the
//! decision then reads from that answer (`engine::prefetch`).
//!
//! Reads are not locked: every revision and sequence the decision relied on is named in its
//! transaction and re-checked at commit, so answers taken together, a moment before the
//! decision, are exactly as safe as answers taken one by one during it.

use crate::store::seam::Store;
use crate::store::{
    aggregate::{Aggregate, AggregateKey},
    error::StoreError,
    event_log::GroupHead,
    receipt::{Receipt, ReceiptKey},
};

/// One point read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Read {
    /// [`Store::receipt`].
    Receipt(ReceiptKey),
    /// [`Store::aggregate`].
    Aggregate(AggregateKey),
    /// [`Store::head`].
    Head(String),
}

/// The answer to one [`Read`], of the same variant.
#[derive(Debug, Clone, PartialEq)]
pub enum ReadValue {
    /// The receipt recorded for the key, if any.
    Receipt(Option<Receipt>),
    /// The aggregate stored at the key, if any.
    Aggregate(Option<Aggregate>),
    /// Where the Group's log stands.
    Head(GroupHead),
}

/// The default `read_many`: each read with its own call, answers in the order asked.
pub fn read_each<S: Store + ?Sized>(
    store: &S,
    reads: &[Read],
) -> Result<Vec<ReadValue>, StoreError> {
    reads
        .iter()
        .map(|read| {
            Ok(match read {
                Read::Receipt(key) => ReadValue::Receipt(store.receipt(key)?),
                Read::Aggregate(key) => ReadValue::Aggregate(store.aggregate(key)?),
                Read::Head(group) => ReadValue::Head(store.head(group)?),
            })
        })
        .collect()
}

/// Checks that a backend answered every read with the matching variant, in order: a
/// backend's mistake becomes a typed error, never a decision on the wrong value.
pub fn check_answers(reads: &[Read], answers: &[ReadValue]) -> Result<(), StoreError> {
    let matching = reads.len() == answers.len()
        && reads.iter().zip(answers).all(|pair| {
            matches!(
                pair,
                (Read::Receipt(_), ReadValue::Receipt(_))
                    | (Read::Aggregate(_), ReadValue::Aggregate(_))
                    | (Read::Head(_), ReadValue::Head(_))
            )
        });
    match matching {
        true => Ok(()),
        false => Err(StoreError::Backend {
            detail: format!(
                "read_many answered {} values of the wrong kinds for {} reads",
                answers.len(),
                reads.len()
            ),
        }),
    }
}
