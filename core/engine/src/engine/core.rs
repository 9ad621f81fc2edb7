//! [`Engine`]: dedup, read, decide, sign, commit — retried on contention (§15.1–15.3).

use std::sync::Mutex;

use missionweaveprotocol::crypto::Signer;
use missionweaveprotocol::json::Value;

use super::controls;
use super::dispatch;
use super::prefetch::Prefetched;
use crate::decision::Decision;
use crate::error::EngineError;
use crate::events::{EventIdSource, EventIssuer};
use crate::ingress::VerifiedCommand;
use crate::mission::aggregate::{MISSION_KIND, Mission};
use crate::organization::ORGANIZATION_EVENT_KIND;
use crate::store::{
    AggregateKey, Blob, EventRecord, Receipt, ReceiptKey, ReplayPage, Store, StoreError,
    Transaction,
};
use missionweaveprotocol_kernel::cooperation::CooperationLimits;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// Event IDs drawn for one decision.
struct Drawn(std::vec::IntoIter<String>);

impl EventIdSource for Drawn {
    fn next_event_id(&mut self) -> String {
        // Exactly one ID was drawn per planned Event; an empty ID would fail signing (schema).
        self.0.next().unwrap_or_default()
    }
}

/// How many times a decision is retried when concurrent commits invalidate its reads.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 16;

/// What `perform` returns: the Command's Events as stored (canonical signed bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Performed {
    /// The Events, in Group order. For a duplicate, the first Event of the original
    /// application (§15.1: "MUST return the original receipt"). An Organization-scoped Event
    /// (`…session_opened`, `…agent_card_registered`) has no Group position: its record's
    /// `sequence` is 0.
    pub events: Vec<EventRecord>,
    /// The Group of the first Event; empty when the first Event is Organization-scoped.
    pub group_id: String,
    /// `true` when the Command had already been applied and nothing new was appended.
    pub duplicate: bool,
}

/// The authoritative engine over a store `S`, signing Events with `G` and naming them from
/// `I`. Sans-IO: time is an argument; the store is the only state.
///
/// Several threads may share one engine (`&Engine`; the ID source sits behind a mutex held only
/// to draw IDs): Commands of one Group are serialized by the store's sequence check (§15.2),
/// and a decision whose reads changed is re-made ([`DEFAULT_MAX_ATTEMPTS`] times at most).
#[derive(Debug)]
pub struct Engine<S, G, I> {
    store: S,
    issuer: EventIssuer<G>,
    ids: Mutex<I>,
    max_attempts: u32,
    cooperation: CooperationLimits,
    offline_limits: missionweaveprotocol_kernel::offline::OfflineLimits,
    lanes: GroupLanes,
}

/// Striped locks serializing, within one engine, the decide-and-commit of Commands addressed to
/// one Group (§15.2: one ordered log per Group). Without them, threads sharing the engine race
/// on the Group's next sequence: the loser re-decides, and under a steady stream (a batch
/// drained on two threads, a server's connections) it can lose every attempt and refuse a
/// valid Command (`Contended`). Commands of other Groups take other stripes (a collision only
/// serializes two Groups' commits); the store's sequence check stays the rule across processes.
#[derive(Debug)]
struct GroupLanes([Mutex<()>; LANES]);

impl Default for GroupLanes {
    fn default() -> Self {
        Self(std::array::from_fn(|_| Mutex::new(())))
    }
}

const LANES: usize = 64;

impl GroupLanes {
    fn enter(&self, group_id: Option<&str>) -> Option<std::sync::MutexGuard<'_, ()>> {
        // FNV-1a: a fixed hash (no per-process seed needed: the stripes hold no data).
        let group = group_id?;
        let hash = group.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
        let lane = &self.0[(hash % LANES as u64) as usize];
        // A poisoned stripe only means another Command panicked mid-decision; it guards no
        // data, so the lane stays usable.
        Some(
            lane.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }
}

impl<S: Store, G: Signer, I: EventIdSource> Engine<S, G, I> {
    /// An engine over `store`, signing with `issuer`, taking Event IDs from `ids`.
    pub fn new(store: S, issuer: EventIssuer<G>, ids: I) -> Self {
        Self {
            store,
            issuer,
            ids: Mutex::new(ids),
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            cooperation: CooperationLimits::default(),
            offline_limits: crate::work::offline::reconcile::DEFAULT_CORE_LIMITS,
            lanes: GroupLanes::default(),
        }
    }

    /// The same engine with other §20 cooperation limits (default: the reference's).
    pub fn with_cooperation_limits(mut self, limits: CooperationLimits) -> Self {
        self.cooperation = limits;
        self
    }

    /// The same engine with other Core-side §11.5 offline bounds (per historical lease).
    pub fn with_offline_limits(
        mut self,
        limits: missionweaveprotocol_kernel::offline::OfflineLimits,
    ) -> Self {
        self.offline_limits = limits;
        self
    }

    /// The §20 cooperation limits in force.
    pub fn cooperation_limits(&self) -> &CooperationLimits {
        &self.cooperation
    }

    /// The same engine with another retry bound (at least 1).
    pub fn with_max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts.max(1);
        self
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The Event issuer.
    pub fn issuer(&self) -> &EventIssuer<G> {
        &self.issuer
    }

    /// Applies one verified Command at `now`: validate, decide, append its Event(s) and write
    /// its aggregates atomically, or refuse with a §19 code and change nothing (§15.1).
    pub fn perform(
        &self,
        command: &VerifiedCommand,
        now: UnixMillis,
    ) -> Result<Performed, EngineError> {
        self.perform_verified(command, now, None)
    }

    /// [`perform`](Self::perform) with the signed document the Command's payload carries,
    /// already verified by the caller (`perform_with_resolver`): the `artifact.publish`
    /// manifest or the `…agent_card_register` Agent Card. `None` for every other kind.
    pub(crate) fn perform_verified(
        &self,
        command: &VerifiedCommand,
        now: UnixMillis,
        manifest: Option<&Value>,
    ) -> Result<Performed, EngineError> {
        // §21: a payload member the kind does not define is refused before anything is read.
        crate::input::members::check(command.kind(), command.payload())?;
        let receipt_key = command.receipt_key();
        // The first decision reads through a view that answered the Command's likely reads
        // in one round trip when the backend batches reads (`engine::prefetch`).
        let prefetched = Prefetched::load(&self.store, command)?;
        // (a) Idempotency (§15.1): same signing hash → the original Event, no new transition;
        // another hash → ACTION_ID_COLLISION (from the store).
        if let Some(receipt) = prefetched.dedup(&receipt_key, command.signing_hash())? {
            return self.original(&receipt);
        }
        // §18: a transition depending on an unknown critical extension is refused. The engine
        // implements one: the §11.5 offline binding, on reversible kinds.
        crate::work::offline::screen(command)?;
        let _lane = self.lanes.enter(command.group_id());
        for attempt in 0..self.max_attempts {
            // A retry after contention reads fresh state, never the prefetched answers.
            let reads: &dyn Store = match attempt {
                0 => &prefetched,
                _ => &self.store,
            };
            // (b) + (c): read what the kind needs, decide purely; §20: the policy limits
            // governing this kind, on the decision's own reads.
            let decided = dispatch::decide(reads, command, manifest, now)
                .and_then(|decision| {
                    controls::apply(reads, &self.cooperation, command, decision, now)
                })
                .and_then(|decision| {
                    // §11.5: a rebased offline checkpoint is reconciled in the same decision.
                    let limits = &self.offline_limits;
                    crate::work::offline::reconcile(reads, limits, command, decision, now)
                });
            let decision = match decided {
                Ok(decision) => decision,
                Err(refusal) => return self.refused(&receipt_key, command, refusal),
            };
            // (d): sign at the Group's next sequences and commit everything at once.
            let (tx, group_id, events) = self.transaction(reads, command, decision, now)?;
            match self.store.commit(tx) {
                Ok(()) => {
                    return Ok(Performed {
                        events,
                        group_id,
                        duplicate: false,
                    });
                }
                // A concurrent commit of the same signed Command won: answer with its Event.
                Err(StoreError::AlreadyApplied { receipt, .. }) => return self.original(&receipt),
                Err(e) if e.is_contention() => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(EngineError::Contended {
            attempts: self.max_attempts,
        })
    }

    fn transaction(
        &self,
        reads: &dyn Store,
        command: &VerifiedCommand,
        decision: Decision,
        now: UnixMillis,
    ) -> Result<(Transaction, String, Vec<EventRecord>), EngineError> {
        let mut tx = Transaction::new();
        let mut records = Vec::with_capacity(decision.events.len());
        let mut first_ref = None;
        let mut group_id = String::new();
        // Next sequence per Group touched, in first-touch order (a Command may append to two
        // Groups; §4.7 promises no cross-Group atomicity, the store gives it anyway).
        let mut heads: Vec<(String, u64)> = Vec::new();
        // Draw the IDs under the lock, sign outside it: signing dominates the cost of a
        // Command, and Commands of different Groups must not queue behind each other.
        let mut ids = {
            let mut source = self
                .ids
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let drawn: Vec<String> = (0..decision.events.len())
                .map(|_| source.next_event_id())
                .collect();
            Drawn(drawn.into_iter())
        };
        // The decision is consumed: each draft's payload moves into its Event (no copy).
        for planned in decision.events {
            let Some(planned_group) = &planned.group_id else {
                // Organization-scoped (§15.2): no position; stored under its Event ID, whose
                // absence the write checks (revision 0), so an Event ID is never reused.
                let signed = self.issuer.issue_owned(planned.draft, &mut ids, now)?;
                if first_ref.is_none() {
                    first_ref = Some(signed.event_ref());
                }
                let bytes = Blob::from(signed.bytes());
                tx.put(
                    AggregateKey::new(ORGANIZATION_EVENT_KIND, signed.event_id()),
                    0,
                    bytes.clone(),
                );
                records.push(EventRecord::new(0, signed.event_id(), bytes));
                continue;
            };
            let slot = match heads.iter().position(|(g, _)| g == planned_group) {
                Some(slot) => slot,
                None => {
                    let head = reads.head(planned_group)?;
                    heads.push((planned_group.clone(), head.next_sequence));
                    heads.len() - 1
                }
            };
            let next = &mut heads[slot].1;
            let draft = planned
                .draft
                .at(planned_group, *next, planned.aggregate_revision);
            *next += 1;
            let signed = self.issuer.issue_owned(draft, &mut ids, now)?;
            if first_ref.is_none() {
                first_ref = Some(signed.event_ref());
                group_id = planned_group.clone();
            }
            // Every planned Group Event has a position, so it has a record.
            if let Some(record) = signed.to_record() {
                tx.append(planned_group, record.clone());
                records.push(record);
            }
        }
        let first_event = first_ref.ok_or_else(|| {
            EngineError::invalid("no_transition", "the Command produced no Event")
        })?;
        for write in decision.writes {
            match write.value {
                Some(value) => tx.put(write.key, write.read_revision, value),
                None => tx.check(write.key, write.read_revision),
            };
        }
        tx.record_receipt(
            command.receipt_key(),
            Receipt {
                signing_hash: command.signing_hash().to_owned(),
                first_event,
            },
        );
        Ok((tx, group_id, records))
    }

    /// The first Event of an applied Command, from its receipt: a Group Event from its Group
    /// log, an Organization-scoped Event from the aggregate stored under its Event ID.
    /// A refusal of the decision, unless the same signed Command was applied concurrently
    /// between the receipt check and the decision's reads: the decision then saw the Command's
    /// own effects (a Mission that "already exists", an offer already taken) and §15.1 wants
    /// the first result again, not a refusal. Only refusals pay for the second receipt read.
    fn refused(
        &self,
        receipt_key: &ReceiptKey,
        command: &VerifiedCommand,
        refusal: EngineError,
    ) -> Result<Performed, EngineError> {
        match self.store.dedup(receipt_key, command.signing_hash())? {
            Some(receipt) => self.original(&receipt),
            None => Err(refusal),
        }
    }

    fn original(&self, receipt: &Receipt) -> Result<Performed, EngineError> {
        let Some((group, sequence)) = &receipt.first_event.position else {
            let key = AggregateKey::new(ORGANIZATION_EVENT_KIND, &receipt.first_event.event_id);
            let stored = self
                .store
                .aggregate(&key)?
                .ok_or_else(|| EngineError::Corrupt {
                    key: key.clone(),
                    detail: "the receipt names an Organization-scoped Event that is not stored"
                        .into(),
                })?;
            return Ok(Performed {
                events: vec![EventRecord::new(0, &key.id, stored.value)],
                group_id: String::new(),
                duplicate: true,
            });
        };
        let page = self.store.replay(group, sequence - 1, 1)?;
        Ok(Performed {
            events: page.events,
            group_id: group.clone(),
            duplicate: true,
        })
    }

    /// The Mission projection of Mission `mission_id` (reference `QueryKind.MISSION`), or
    /// `None` if there is none.
    pub fn mission(&self, mission_id: &str) -> Result<Option<Mission>, EngineError> {
        let key = AggregateKey::new(MISSION_KIND, mission_id);
        match self.store.aggregate(&key)? {
            None => Ok(None),
            Some(stored) => Mission::from_stored(&key, &stored).map(Some),
        }
    }

    /// The Membership of `member` in `group_id` (reference `QueryKind.MEMBERSHIP`, §8), or
    /// `None` if there is none.
    pub fn membership(
        &self,
        group_id: &str,
        member: &missionweaveprotocol::Principal,
    ) -> Result<Option<crate::membership::aggregate::Membership>, EngineError> {
        crate::membership::Membership::read(&self.store, group_id, member)
    }

    /// The Agent's current Session Epoch (reference `QueryKind.SESSION_EPOCH`, §6.3), or `None`
    /// if no session was ever opened for it.
    pub fn session_epoch(&self, agent_id: &str) -> Result<Option<u64>, EngineError> {
        Ok(crate::organization::session::read_epoch(&self.store, agent_id)?.map(|(_, e)| e))
    }

    /// The Agent's registered signed Agent Card (reference `QueryKind.AGENT_CARD`), or `None`.
    pub fn agent_card(&self, agent_id: &str) -> Result<Option<Value>, EngineError> {
        Ok(crate::organization::agent_card::read_card(&self.store, agent_id)?.map(|(_, c)| c))
    }

    /// Up to `limit` Events of `group` after sequence `after`, in order, with a continuation
    /// (§16). An unknown Group is `GROUP_NOT_FOUND` (§17.2); archived history is
    /// `CURSOR_TOO_OLD` with the snapshot pointer.
    pub fn replay(&self, group: &str, after: u64, limit: usize) -> Result<ReplayPage, EngineError> {
        let known = self
            .store
            .aggregate(&AggregateKey::new(
                crate::mission::aggregate::GROUP_KIND,
                group,
            ))?
            .is_some();
        if !known {
            return Err(EngineError::GroupNotFound {
                group: group.to_owned(),
            });
        }
        Ok(self.store.replay(group, after, limit)?)
    }
}
