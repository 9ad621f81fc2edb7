//! The write set of one Command: committed atomically or not at all (§15.1, §15.3).

use crate::store::aggregate::AggregateKey;
use crate::store::blob::Blob;
use crate::store::{
    event_log::EventRecord,
    receipt::{Receipt, ReceiptKey},
};

/// One aggregate write or check, with the revision the decision read (§15.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AggregateWrite {
    /// The aggregate.
    pub key: AggregateKey,
    /// The revision the decision read: 0 when it found the aggregate absent.
    pub expected_revision: u64,
    /// The new canonical JSON bytes (revision `expected_revision + 1`), or `None` for a check
    /// only: the decision depended on this revision but does not change the aggregate.
    pub value: Option<Blob>,
}

/// Every write of one Command. Writes are applied in the order they were added; a later write
/// to the same Group or aggregate sees the earlier one (two appends to one Group carry
/// consecutive sequences; a second write to one aggregate expects the first one's revision).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Transaction {
    receipts: Vec<(ReceiptKey, Receipt)>,
    appends: Vec<(String, EventRecord)>,
    writes: Vec<AggregateWrite>,
}

impl Transaction {
    /// An empty transaction (committing it changes nothing).
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends `event` to `group`'s log; `event.sequence` is the sequence the decision expects
    /// to be next (§15.2: contiguous from 1, no gap, no duplicate).
    pub fn append(&mut self, group: &str, event: EventRecord) -> &mut Self {
        self.appends.push((group.to_owned(), event));
        self
    }

    /// Writes `value` as the next revision of `key`, expecting `expected_revision` (0: the
    /// aggregate must not exist yet).
    pub fn put(&mut self, key: AggregateKey, expected_revision: u64, value: Blob) -> &mut Self {
        self.writes.push(AggregateWrite {
            key,
            expected_revision,
            value: Some(value),
        });
        self
    }

    /// Requires `key` to still be at `expected_revision` at commit without writing it (the
    /// decision read it: a Membership, a lease, …; §15.3 compare-and-set).
    pub fn check(&mut self, key: AggregateKey, expected_revision: u64) -> &mut Self {
        self.writes.push(AggregateWrite {
            key,
            expected_revision,
            value: None,
        });
        self
    }

    /// Records the deduplication receipt of the Command (§15.1). Commit refuses it when a
    /// receipt for `key` exists already.
    pub fn record_receipt(&mut self, key: ReceiptKey, receipt: Receipt) -> &mut Self {
        self.receipts.push((key, receipt));
        self
    }

    /// The receipts, in order.
    pub fn receipts(&self) -> &[(ReceiptKey, Receipt)] {
        &self.receipts
    }

    /// The Group appends `(group, event)`, in order.
    pub fn appends(&self) -> &[(String, EventRecord)] {
        &self.appends
    }

    /// The aggregate writes and checks, in order.
    pub fn writes(&self) -> &[AggregateWrite] {
        &self.writes
    }

    /// Nothing to write or check?
    pub fn is_empty(&self) -> bool {
        self.receipts.is_empty() && self.appends.is_empty() && self.writes.is_empty()
    }

    /// The parts, for a backend that moves them into storage.
    pub fn into_parts(self) -> TransactionParts {
        TransactionParts {
            receipts: self.receipts,
            appends: self.appends,
            writes: self.writes,
        }
    }
}

/// A transaction taken apart ([`Transaction::into_parts`]), each list in the order written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TransactionParts {
    /// The receipts.
    pub receipts: Vec<(ReceiptKey, Receipt)>,
    /// The Group appends `(group, event)`.
    pub appends: Vec<(String, EventRecord)>,
    /// The aggregate writes and checks.
    pub writes: Vec<AggregateWrite>,
}
