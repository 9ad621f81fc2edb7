//! The in-memory store: one mutex over per-aggregate maps, Send + Sync, no I/O (wasm32 too).
//!
//! A commit validates the whole write set against committed state before it changes anything
//! (`commit_rules::validate`, the rules every backend shares), so a refused commit leaves
//! nothing behind and a poisoned lock (a panic elsewhere while it was held) never exposes a
//! half-applied transaction: the guard is recovered.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::commit_rules::{self, CommitView};
use super::read_rules::{self, PagePlan};
use crate::store::seam::Store;
use crate::store::{
    aggregate::{Aggregate, AggregateKey},
    decoded::DecodedCache,
    error::StoreError,
    event_log::{EventRecord, GroupHead, ReplayPage, SnapshotPointer},
    integrity::StoreOptions,
    receipt::{Receipt, ReceiptKey},
    transaction::{Transaction, TransactionParts},
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
        commit_rules::validate(self, &tx)?;
        self.apply(tx);
        Ok(())
    }
}

/// Committed state answers the commit rules directly (nothing to load, nothing can fail); a
/// receipt is cloned only when one exists, which refuses the commit.
impl<'t> CommitView<'t> for State {
    fn receipt(&mut self, key: &'t ReceiptKey) -> Result<Option<Receipt>, StoreError> {
        Ok(self.receipts.get(key).cloned())
    }

    fn next_sequence(&mut self, group: &'t str) -> Result<u64, StoreError> {
        Ok(State::next_sequence(self, group))
    }

    fn revision(&mut self, key: &'t AggregateKey) -> Result<u64, StoreError> {
        Ok(State::revision(self, key))
    }
}

impl InMemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty store opened with `options`, as a durable backend would be (a host passes one
    /// configuration to whichever backend it runs). Nothing of this store is at rest: no row
    /// can be changed, removed or rolled back behind its back, only through its own commits,
    /// so it keeps no authenticators and the integrity key (`StoreOptions::integrity_key`)
    /// protects nothing here: the options are accepted and nothing of the key is kept.
    pub fn with_options(options: &StoreOptions) -> Self {
        let _ = options;
        Self::new()
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
            .map_or_else(read_rules::absent_head, GroupLog::head))
    }

    fn replay(
        &self,
        group: &str,
        after_sequence: u64,
        limit: usize,
    ) -> Result<ReplayPage, StoreError> {
        read_rules::check_limit(limit)?;
        let state = self.state();
        let Some(log) = state.groups.get(group) else {
            return Ok(read_rules::absent_page());
        };
        let plan = PagePlan::new(
            group,
            after_sequence,
            limit,
            log.first_online,
            log.next_sequence(),
            log.snapshot.as_ref(),
        )?;
        // The plan lies within the online log: `events[0]` holds `first_online`.
        let len = log.events.len();
        let start = usize::try_from(plan.start - log.first_online)
            .unwrap_or(usize::MAX)
            .min(len);
        let end = start
            .saturating_add(usize::try_from(plan.count).unwrap_or(usize::MAX))
            .min(len);
        Ok(plan.page(log.events.range(start..end).cloned().collect()))
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
        let log = state.groups.get_mut(group);
        let (first_online, next_sequence) = log
            .as_ref()
            .map_or((1, 1), |log| (log.first_online, log.next_sequence()));
        let fence = commit_rules::check_archive(group, before, first_online, next_sequence);
        // The fence refuses every boundary of a Group without a log (1, 1), so a log is there
        // whenever it passes.
        let Some(log) = log.filter(|_| fence.is_ok()) else {
            return fence;
        };
        let archived = usize::try_from(before - first_online).unwrap_or(usize::MAX);
        log.events.drain(..archived.min(log.events.len()));
        log.events.shrink_to_fit();
        log.first_online = before;
        log.snapshot = Some(snapshot);
        Ok(())
    }
}
