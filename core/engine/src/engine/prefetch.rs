//! A Command's likely reads, gathered into one `Store::read_many` before the decision, for
//! backends where each read is a round trip (`Store::batches_reads`; `store::read_many`
//! says why this is as safe as reading one by one).
//!
//! The likely reads come from the envelope alone, before any handler runs: the receipt
//! (§15.1), the Group and its head (§15.2), the Agent's Session Epoch (§6.3) and Membership
//! (§8) when the Command is fenced by them, the WorkItem it names, and for `mission.create*`
//! the Mission ID it claims. A read the decision makes that is not among them goes to the
//! store as before; a prefetched value the decision never asks for is only a wasted row.

use missionweaveprotocol::PrincipalType;

use crate::ingress::VerifiedCommand;
use crate::membership::aggregate::membership_key;
use crate::mission::aggregate::{GROUP_KIND, MISSION_KIND};
use crate::organization::session::session_key;
use crate::store::{
    Aggregate, AggregateKey, DecodedCache, GroupHead, Read, ReadValue, Receipt, ReceiptKey,
    ReplayPage, SnapshotPointer, Store, StoreError, Transaction, check_answers,
};

/// The reads a decision on `command` will probably make, in one list.
pub(crate) fn likely_reads(command: &VerifiedCommand) -> Vec<Read> {
    let mut reads = Vec::with_capacity(6);
    reads.push(Read::Receipt(command.receipt_key()));
    let actor = command.actor();
    if actor.kind == PrincipalType::Agent && command.session_epoch().is_some() {
        reads.push(Read::Aggregate(session_key(&actor.id)));
    }
    if let Some(group) = command.group_id() {
        reads.push(Read::Aggregate(AggregateKey::new(GROUP_KIND, group)));
        if command.membership_epoch().is_some() {
            reads.push(Read::Aggregate(membership_key(group, actor)));
        }
        reads.push(Read::Head(group.to_owned()));
    }
    if let Some(item) = command.work_item_id() {
        reads.push(Read::Aggregate(AggregateKey::new(
            crate::work::document::AGGREGATE_KIND,
            item,
        )));
    }
    if command.kind().starts_with("mission.create")
        && let Some(mission) = command
            .payload()
            .get("missionId")
            .and_then(missionweaveprotocol::json::Value::as_str)
    {
        reads.push(Read::Aggregate(AggregateKey::new(MISSION_KIND, mission)));
    }
    reads
}

/// A store view answering the prefetched reads from memory and everything else from the
/// store. Used for one decision only: a retry after contention reads fresh state.
pub(crate) struct Prefetched<'a> {
    store: &'a dyn Store,
    receipts: Vec<(ReceiptKey, Option<Receipt>)>,
    aggregates: Vec<(AggregateKey, Option<Aggregate>)>,
    heads: Vec<(String, GroupHead)>,
}

impl<'a> Prefetched<'a> {
    /// A view over `store`: with `command`'s likely reads answered at once when the store
    /// batches reads, else an empty view that passes every read through.
    pub(crate) fn load(
        store: &'a dyn Store,
        command: &VerifiedCommand,
    ) -> Result<Self, StoreError> {
        let mut view = Self {
            store,
            receipts: Vec::new(),
            aggregates: Vec::new(),
            heads: Vec::new(),
        };
        if !store.batches_reads() {
            return Ok(view);
        }
        let reads = likely_reads(command);
        let answers = store.read_many(&reads)?;
        check_answers(&reads, &answers)?;
        for (read, answer) in reads.into_iter().zip(answers) {
            match (read, answer) {
                (Read::Receipt(key), ReadValue::Receipt(value)) => view.receipts.push((key, value)),
                (Read::Aggregate(key), ReadValue::Aggregate(value)) => {
                    view.aggregates.push((key, value));
                }
                (Read::Head(group), ReadValue::Head(head)) => view.heads.push((group, head)),
                // `check_answers` matched every pair.
                _ => {}
            }
        }
        Ok(view)
    }
}

impl Store for Prefetched<'_> {
    fn commit(&self, tx: Transaction) -> Result<(), StoreError> {
        self.store.commit(tx)
    }

    fn commit_many(&self, txs: Vec<Transaction>) -> Vec<Result<(), StoreError>> {
        self.store.commit_many(txs)
    }

    fn aggregate(&self, key: &AggregateKey) -> Result<Option<Aggregate>, StoreError> {
        match self.aggregates.iter().find(|(k, _)| k == key) {
            Some((_, value)) => Ok(value.clone()),
            None => self.store.aggregate(key),
        }
    }

    fn list(&self, kind: &str, id_prefix: &str) -> Result<Vec<(String, Aggregate)>, StoreError> {
        self.store.list(kind, id_prefix)
    }

    fn receipt(&self, key: &ReceiptKey) -> Result<Option<Receipt>, StoreError> {
        match self.receipts.iter().find(|(k, _)| k == key) {
            Some((_, value)) => Ok(value.clone()),
            None => self.store.receipt(key),
        }
    }

    fn dedup(&self, key: &ReceiptKey, signing_hash: &str) -> Result<Option<Receipt>, StoreError> {
        match self.receipts.iter().find(|(k, _)| k == key) {
            Some((_, None)) => Ok(None),
            Some((_, Some(receipt))) if receipt.signing_hash == signing_hash => {
                Ok(Some(receipt.clone()))
            }
            Some((_, Some(_))) => Err(StoreError::ActionIdCollision { key: key.clone() }),
            // Not prefetched: the store's own `dedup` (it may override the default).
            None => self.store.dedup(key, signing_hash),
        }
    }

    fn head(&self, group: &str) -> Result<GroupHead, StoreError> {
        match self.heads.iter().find(|(g, _)| g == group) {
            Some((_, head)) => Ok(head.clone()),
            None => self.store.head(group),
        }
    }

    fn replay(
        &self,
        group: &str,
        after_sequence: u64,
        limit: usize,
    ) -> Result<ReplayPage, StoreError> {
        self.store.replay(group, after_sequence, limit)
    }

    fn decoded_cache(&self) -> Option<&DecodedCache> {
        self.store.decoded_cache()
    }

    fn archive_before(
        &self,
        group: &str,
        before: u64,
        snapshot: SnapshotPointer,
    ) -> Result<(), StoreError> {
        self.store.archive_before(group, before, snapshot)
    }
}
