//! Aggregates stored by `(kind, id)` with a per-aggregate revision (§15.3).

use crate::store::blob::Blob;

/// Where an aggregate lives: its kind (`mission`, `work_item`, `membership`, …, chosen by the
/// engine, opaque to the store) and its ID within that kind.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AggregateKey {
    /// The aggregate kind.
    pub kind: String,
    /// The aggregate's ID within its kind.
    pub id: String,
}

impl AggregateKey {
    /// The key of aggregate `id` of `kind`.
    pub fn new(kind: impl Into<String>, id: impl Into<String>) -> Self {
        Self {
            kind: kind.into(),
            id: id.into(),
        }
    }
}

/// A stored aggregate: its current revision and its canonical JSON bytes.
///
/// Revisions start at 1 on creation and grow by exactly 1 per committed write; revision 0
/// means "absent" in a write's expectation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Aggregate {
    /// The current revision (≥ 1).
    pub revision: u64,
    /// The aggregate's canonical JSON bytes.
    pub value: Blob,
}
