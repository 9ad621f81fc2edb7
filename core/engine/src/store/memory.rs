//! The in-memory store: one mutex over per-aggregate maps, Send + Sync, no I/O (wasm32 too).
//!
//! A commit validates the whole write set against committed state before it changes anything,
//! so a refused commit leaves nothing behind and a poisoned lock (a panic elsewhere while it
//! was held) never exposes a half-applied transaction: the guard is recovered.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::{
    Aggregate, AggregateKey, DecodedCache, EventRecord, GroupHead, Receipt, ReceiptKey, ReplayPage,
    SnapshotPointer, Store, StoreError, Transaction, TransactionParts,
};

/// The authoritative store in memory: Event logs per Group, aggregates by `(kind, id)`,
/// receipts by `(actor, Action ID)`. The cost of a commit grows with its own writes, never
/// with history. Share it between engines and threads by reference or `Arc`.
#[derive(Debug, Default)]
pub struct InMemoryStore {
    state: Mutex<State>,
    /// Decoded aggregates (bounded, `store/decoded.rs`).
    decoded: DecodedCache,
}

#[derive(Debug, Default)]
struct State {
    groups: HashMap<String, GroupLog>,
    aggregates: BTreeMap<AggregateKey, Aggregate>,
    receipts: HashMap<ReceiptKey, Receipt>,
}

#[derive(Debug)]
struct GroupLog {
    /// The sequence of `events[0]` (1 until something is archived).
    first_online: u64,
    snapshot: Option<SnapshotPointer>,
    events: VecDeque<EventRecord>,
}

impl GroupLog {
    fn new() -> Self {
        Self {
            first_online: 1,
            snapshot: None,
            events: VecDeque::new(),
        }
    }

    fn next_sequence(&self) -> u64 {
        self.first_online + self.events.len() as u64
    }

    fn head(&self) -> GroupHead {
        GroupHead {
            next_sequence: self.next_sequence(),
            first_online: self.first_online,
            snapshot: self.snapshot.clone(),
        }
    }
}

impl State {
    fn next_sequence(&self, group: &str) -> u64 {
        self.groups.get(group).map_or(1, GroupLog::next_sequence)
    }

    fn revision(&self, key: &AggregateKey) -> u64 {
        self.aggregates.get(key).map_or(0, |a| a.revision)
    }

    /// Every check of the commit, against committed state plus the transaction's own earlier
    /// writes; nothing is changed.
    fn validate(&self, tx: &Transaction) -> Result<(), StoreError> {
        let mut recorded: HashMap<&ReceiptKey, &Receipt> = HashMap::new();
        for (key, receipt) in tx.receipts() {
            let existing = self
                .receipts
                .get(key)
                .or_else(|| recorded.get(key).copied());
            if let Some(existing) = existing {
                return Err(receipt_conflict(key, existing, receipt));
            }
            recorded.insert(key, receipt);
        }
        let mut next: HashMap<&str, u64> = HashMap::new();
        for (group, event) in tx.appends() {
            let expected = next
                .entry(group.as_str())
                .or_insert_with(|| self.next_sequence(group));
            if event.sequence != *expected {
                return Err(StoreError::SequenceConflict {
                    group: group.clone(),
                    expected: event.sequence,
                    next: *expected,
                });
            }
            *expected += 1;
        }
        let mut revisions: HashMap<&AggregateKey, u64> = HashMap::new();
        for write in tx.writes() {
            let current = revisions
                .entry(&write.key)
                .or_insert_with(|| self.revision(&write.key));
            if write.expected_revision != *current {
                return Err(StoreError::RevisionConflict {
                    key: write.key.clone(),
                    expected: write.expected_revision,
                    current: *current,
                });
            }
            if write.value.is_some() {
                *current += 1;
            }
        }
        Ok(())
    }

    /// Applies a validated transaction.
    fn apply(&mut self, tx: Transaction) {
        let TransactionParts {
            receipts,
            appends,
            writes,
        } = tx.into_parts();
        self.receipts.extend(receipts);
        for (group, event) in appends {
            self.groups
                .entry(group)
                .or_insert_with(GroupLog::new)
                .events
                .push_back(event);
        }
        for write in writes {
            if let Some(value) = write.value {
                let revision = write.expected_revision + 1;
                let aggregate = Aggregate { revision, value };
                match self.aggregates.get_mut(&write.key) {
                    Some(slot) => *slot = aggregate,
                    None => {
                        // A new key stays for good: keep no spare capacity (the engine moves
                        // its keys in, some built by `format!`).
                        let mut key = write.key;
                        key.kind.shrink_to_fit();
                        key.id.shrink_to_fit();
                        self.aggregates.insert(key, aggregate);
                    }
                }
            }
        }
    }

    fn commit(&mut self, tx: Transaction) -> Result<(), StoreError> {
        self.validate(&tx)?;
        self.apply(tx);
        Ok(())
    }
}

/// Same signed content → the first application stands; different → collision (§15.1).
fn receipt_conflict(key: &ReceiptKey, existing: &Receipt, new: &Receipt) -> StoreError {
    if existing.signing_hash == new.signing_hash {
        StoreError::AlreadyApplied {
            key: key.clone(),
            receipt: Box::new(existing.clone()),
        }
    } else {
        StoreError::ActionIdCollision { key: key.clone() }
    }
}

impl InMemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Commits validate before they mutate, so a poisoned guard holds consistent state.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Store for InMemoryStore {
    fn commit(&self, tx: Transaction) -> Result<(), StoreError> {
        self.state().commit(tx)
    }

    fn commit_many(&self, txs: Vec<Transaction>) -> Vec<Result<(), StoreError>> {
        let mut state = self.state();
        txs.into_iter().map(|tx| state.commit(tx)).collect()
    }

    fn aggregate(&self, key: &AggregateKey) -> Result<Option<Aggregate>, StoreError> {
        Ok(self.state().aggregates.get(key).cloned())
    }

    fn list(&self, kind: &str, id_prefix: &str) -> Result<Vec<(String, Aggregate)>, StoreError> {
        let start = AggregateKey::new(kind, id_prefix);
        Ok(self
            .state()
            .aggregates
            .range(start..)
            .take_while(|(key, _)| key.kind == kind && key.id.starts_with(id_prefix))
            .map(|(key, aggregate)| (key.id.clone(), aggregate.clone()))
            .collect())
    }

    fn receipt(&self, key: &ReceiptKey) -> Result<Option<Receipt>, StoreError> {
        Ok(self.state().receipts.get(key).cloned())
    }

    fn head(&self, group: &str) -> Result<GroupHead, StoreError> {
        Ok(self
            .state()
            .groups
            .get(group)
            .map_or_else(|| GroupLog::new().head(), GroupLog::head))
    }

    fn replay(
        &self,
        group: &str,
        after_sequence: u64,
        limit: usize,
    ) -> Result<ReplayPage, StoreError> {
        if limit == 0 {
            return Err(StoreError::InvalidArgument {
                argument: "limit",
                detail: "a replay page holds at least one Event".to_owned(),
            });
        }
        let state = self.state();
        let Some(log) = state.groups.get(group) else {
            return Ok(ReplayPage {
                events: Vec::new(),
                continuation: None,
                last_sequence: 0,
            });
        };
        let wanted = after_sequence.saturating_add(1);
        if let Some(snapshot) = log.snapshot.as_ref().filter(|_| wanted < log.first_online) {
            return Err(StoreError::CursorTooOld {
                group: group.to_owned(),
                after_sequence,
                first_online: log.first_online,
                snapshot: snapshot.clone(),
            });
        }
        let len = log.events.len();
        let start = usize::try_from(wanted.saturating_sub(log.first_online))
            .unwrap_or(usize::MAX)
            .min(len);
        let end = start.saturating_add(limit).min(len);
        let events: Vec<EventRecord> = log.events.range(start..end).cloned().collect();
        let continuation = (end < len).then(|| log.first_online + end as u64 - 1);
        Ok(ReplayPage {
            events,
            continuation,
            last_sequence: log.next_sequence() - 1,
        })
    }

    fn decoded_cache(&self) -> Option<&DecodedCache> {
        Some(&self.decoded)
    }

    fn archive_before(
        &self,
        group: &str,
        before: u64,
        snapshot: SnapshotPointer,
    ) -> Result<(), StoreError> {
        let mut state = self.state();
        let (first_online, next_sequence) = state
            .groups
            .get(group)
            .map_or((1, 1), |log| (log.first_online, log.next_sequence()));
        let Some(log) = state
            .groups
            .get_mut(group)
            .filter(|_| before > first_online && before <= next_sequence)
        else {
            return Err(StoreError::ArchiveOutOfRange {
                group: group.to_owned(),
                before,
                first_online,
                next_sequence,
            });
        };
        let archived = usize::try_from(before - first_online).unwrap_or(usize::MAX);
        log.events.drain(..archived.min(log.events.len()));
        log.events.shrink_to_fit();
        log.first_online = before;
        log.snapshot = Some(snapshot);
        Ok(())
    }
}
