//! The Scheduler state machine: admission, selection, dispatch, transitions (§10.3, §11.1–§11.4).
//!
//! Data layout (≤ 300 bytes per queued item): a slab of compact entries indexed by `u32`, one
//! `HashMap<Arc<str>, u32>` from WorkItem ID to slab index (the ID string is shared with the
//! entry), and per Group a binary min-heap of `(key, ticket, index)`. Group IDs and capability
//! requirements are interned. Heap entries made obsolete by cancellation or reprioritisation
//! are skipped lazily (each entry carries the ticket it was queued under) and compacted when
//! they outnumber live ones, so every operation stays O(log n) amortised.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap, HashSet};
use std::sync::Arc;

use super::types::{
    AdmissionDecision, AdmissionReason, CheckpointRef, Dispatch, GroupPolicy,
    MAX_FAIRNESS_LAG_PASS, MAX_PRIORITY, MAX_WEIGHT, MIN_PRIORITY, PASS_UNIT, PreemptRequest,
    ScheduleAction, SchedulerError, SchedulerPolicy, Transition, WorkOffer, WorkState,
};
use crate::capability_version::CapabilityRef;
use crate::unix_millis::UnixMillis;

const NO_DEADLINE: i64 = i64::MAX;

/// Compact per-item record.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub(crate) id: Arc<str>,
    pub(crate) caps: Box<[u32]>,
    pub(crate) detail: Option<Box<Detail>>,
    /// Ready: queue key. Blocked with a timer: the retry time. Otherwise unused.
    pub(crate) key: i64,
    /// Ready: when it became ready. Running: when it was dispatched.
    pub(crate) since: i64,
    pub(crate) deadline: i64,
    pub(crate) ticket: u64,
    pub(crate) estimate_ms: u32,
    pub(crate) group: u32,
    pub(crate) generation: u32,
    pub(crate) slots: u16,
    pub(crate) priority: i8,
    pub(crate) state: WorkState,
    pub(crate) preemptible: bool,
}

/// Rarely present data, boxed to keep [`Entry`] small.
#[derive(Clone, Debug, Default)]
pub(crate) struct Detail {
    pub(crate) checkpoint: Option<CheckpointRef>,
    pub(crate) blocked_reason: Option<String>,
    pub(crate) retry_at: Option<i64>,
}

type QKey = Reverse<(i64, u64, u32)>;

#[derive(Clone, Debug)]
pub(crate) struct GroupState {
    pub(crate) id: Arc<str>,
    pub(crate) policy: GroupPolicy,
    pub(crate) heap: BinaryHeap<QKey>,
    pub(crate) ready: u32,
    pub(crate) ready_slots: u64,
    pub(crate) ready_estimate_ms: u64,
    pub(crate) live: u32,
    pub(crate) running_slots: u32,
    pub(crate) pass: u128,
    /// `(key, ticket)` of the head as inserted in the eligible sets, when eligible.
    pub(crate) listed: Option<(i64, u64)>,
}

/// The Worker-local Scheduler. See the module docs of [`crate::scheduler`] for the fairness
/// and starvation guarantees.
///
/// The Worker admits offers, asks [`schedule`](Scheduler::schedule) what to start at an
/// instant, and reports each run's outcome with [`apply`](Scheduler::apply):
///
/// ```
/// use missionweaveprotocol_kernel::scheduler::{
///     AdmissionReason, ScheduleAction, Scheduler, SchedulerPolicy, Transition, WorkOffer,
/// };
/// use missionweaveprotocol_kernel::unix_millis::UnixMillis;
///
/// let now = UnixMillis::from_secs(1_784_107_800);
/// let mut scheduler = Scheduler::new(SchedulerPolicy { capacity_slots: 1, ..Default::default() })?;
/// let offer = WorkOffer::new("urn:missionweaveprotocol:work-item:a", "urn:missionweaveprotocol:group:g");
/// assert_eq!(scheduler.admit(&offer, now).reason, AdmissionReason::Accepted);
/// // The same offer again is an idempotent duplicate, not a second item.
/// assert_eq!(scheduler.admit(&offer, now).reason, AdmissionReason::Duplicate);
/// scheduler.admit(&WorkOffer::new("urn:missionweaveprotocol:work-item:b", "urn:missionweaveprotocol:group:g"), now);
///
/// // One slot: one dispatch now, the other item waits.
/// let actions = scheduler.schedule(now);
/// let [ScheduleAction::Dispatch(first)] = actions.as_slice() else { panic!("{actions:?}") };
/// assert_eq!(&*first.work_id, "urn:missionweaveprotocol:work-item:a");
/// assert!(scheduler.schedule(now).is_empty());
///
/// // A report about another run is refused with its §19 code; the current run completes.
/// let stale = Transition::Completed { generation: first.generation + 1 };
/// let error = scheduler.apply(&first.work_id, stale, now).unwrap_err();
/// assert_eq!(error.code().as_str(), "WORK_LEASE_EXPIRED");
/// scheduler.apply(&first.work_id, Transition::Completed { generation: first.generation }, now)?;
/// assert!(matches!(scheduler.schedule(now).as_slice(), [ScheduleAction::Dispatch(next)]
///     if &*next.work_id == "urn:missionweaveprotocol:work-item:b"));
/// # Ok::<(), missionweaveprotocol_kernel::scheduler::SchedulerError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Scheduler {
    pub(crate) policy: SchedulerPolicy,
    pub(crate) entries: Vec<Option<Entry>>,
    pub(crate) free: Vec<u32>,
    pub(crate) index: HashMap<Arc<str>, u32>,
    pub(crate) terminal: HashSet<Arc<str>>,
    pub(crate) groups: Vec<GroupState>,
    pub(crate) group_index: HashMap<Arc<str>, u32>,
    pub(crate) caps: Vec<CapabilityRef>,
    pub(crate) cap_index: HashMap<(String, String), u32>,
    pub(crate) by_pass: BTreeSet<(u128, u32)>,
    pub(crate) by_head: BTreeSet<(i64, u64, u32)>,
    pub(crate) running: BTreeSet<(i8, Reverse<u64>, u32)>,
    pub(crate) timers: BinaryHeap<Reverse<(i64, u64, u32)>>,
    pub(crate) used_slots: u32,
    pub(crate) live: u32,
    pub(crate) virtual_time: u128,
    pub(crate) next_ticket: u64,
    pub(crate) pending_preemption: Option<u32>,
    /// Sum of the weights of listed (eligible) Groups, for disclosure.
    pub(crate) listed_weight: u64,
}

impl Scheduler {
    /// An empty Scheduler; fails on an unusable policy.
    pub fn new(policy: SchedulerPolicy) -> Result<Self, SchedulerError> {
        validate_policy(&policy)?;
        Ok(Scheduler {
            policy,
            entries: Vec::new(),
            free: Vec::new(),
            index: HashMap::new(),
            terminal: HashSet::new(),
            groups: Vec::new(),
            group_index: HashMap::new(),
            caps: Vec::new(),
            cap_index: HashMap::new(),
            by_pass: BTreeSet::new(),
            by_head: BTreeSet::new(),
            running: BTreeSet::new(),
            timers: BinaryHeap::new(),
            used_slots: 0,
            live: 0,
            virtual_time: 0,
            next_ticket: 0,
            pending_preemption: None,
            listed_weight: 0,
        })
    }

    /// The policy in force.
    pub fn policy(&self) -> &SchedulerPolicy {
        &self.policy
    }

    /// Slots currently held by running or preempting items.
    pub fn used_slots(&self) -> u32 {
        self.used_slots
    }

    /// Declared capacity.
    pub fn capacity_slots(&self) -> u32 {
        self.policy.capacity_slots
    }

    /// Non-terminal items (ready, running, preempting, blocked).
    pub fn len(&self) -> usize {
        self.live as usize
    }

    /// True when no non-terminal item exists.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// The state of a non-terminal item.
    pub fn state(&self, work_id: &str) -> Option<WorkState> {
        self.entry_idx(work_id).map(|i| self.entry(i).state)
    }

    /// The current run generation of a non-terminal item.
    pub fn generation(&self, work_id: &str) -> Option<u32> {
        self.entry_idx(work_id).map(|i| self.entry(i).generation)
    }

    /// True when the item completed, failed or was cancelled here (until [`Self::forget`]).
    pub fn is_terminal(&self, work_id: &str) -> bool {
        self.terminal.contains(work_id)
    }

    /// Drops the memory of a terminal item once the Group log makes it unnecessary.
    pub fn forget(&mut self, work_id: &str) -> bool {
        self.terminal.remove(work_id)
    }

    /// Presence changed the current capacity (§11.1). Running work is never interrupted: if
    /// capacity drops below the slots in use, nothing is dispatched until enough complete.
    pub fn set_capacity(&mut self, capacity_slots: u32) -> Result<(), SchedulerError> {
        if capacity_slots == 0 {
            return Err(SchedulerError::InvalidArgument("capacity_slots"));
        }
        self.policy.capacity_slots = capacity_slots;
        Ok(())
    }

    /// Changes one Group's weight or quota; takes effect immediately.
    pub fn set_group_policy(
        &mut self,
        group_id: &str,
        policy: GroupPolicy,
    ) -> Result<(), SchedulerError> {
        validate_group(&policy)?;
        self.policy.groups.insert(group_id.to_owned(), policy);
        if let Some(&g) = self.group_index.get(group_id) {
            let gs = &mut self.groups[g as usize];
            if gs.listed.is_some() {
                self.listed_weight =
                    self.listed_weight - u64::from(gs.policy.weight) + u64::from(policy.weight);
            }
            gs.policy = policy;
            self.refresh(g);
        }
        Ok(())
    }

    pub(crate) fn entry(&self, idx: u32) -> &Entry {
        // Slab indices handed out by this struct always point at occupied slots.
        match self.entries.get(idx as usize) {
            Some(Some(e)) => e,
            _ => unreachable_entry(),
        }
    }

    pub(crate) fn entry_mut(&mut self, idx: u32) -> &mut Entry {
        match self.entries.get_mut(idx as usize) {
            Some(Some(e)) => e,
            _ => unreachable_entry(),
        }
    }

    /// The Group and the run generation the Scheduler recorded for `work_id` (the Group comes
    /// from the Scheduler's own record, never from a caller: §11.2 isolation), if it knows the
    /// item.
    pub fn run_of(&self, work_id: &str) -> Option<(&str, u32)> {
        let entry = self.entry(self.entry_idx(work_id)?);
        let group = self.groups.get(entry.group as usize)?;
        Some((&group.id, entry.generation))
    }

    pub(crate) fn entry_idx(&self, work_id: &str) -> Option<u32> {
        self.index.get(work_id).copied()
    }

    pub(crate) fn intern_group(&mut self, group_id: &str) -> u32 {
        if let Some(&g) = self.group_index.get(group_id) {
            return g;
        }
        let id: Arc<str> = Arc::from(group_id);
        let g = self.groups.len() as u32;
        self.groups.push(GroupState {
            id: id.clone(),
            policy: self.policy.group(group_id),
            heap: BinaryHeap::new(),
            ready: 0,
            ready_slots: 0,
            ready_estimate_ms: 0,
            live: 0,
            running_slots: 0,
            pass: 0,
            listed: None,
        });
        self.group_index.insert(id, g);
        g
    }

    pub(crate) fn intern_caps(&mut self, reqs: &[CapabilityRef]) -> Box<[u32]> {
        reqs.iter()
            .map(|c| {
                let key = (c.id.clone(), c.version.as_str().to_owned());
                if let Some(&i) = self.cap_index.get(&key) {
                    return i;
                }
                let i = self.caps.len() as u32;
                self.caps.push(c.clone());
                self.cap_index.insert(key, i);
                i
            })
            .collect()
    }

    fn caps_equal(&self, interned: &[u32], reqs: &[CapabilityRef]) -> bool {
        interned.len() == reqs.len()
            && interned
                .iter()
                .zip(reqs)
                .all(|(i, r)| self.caps.get(*i as usize) == Some(r))
    }

    fn supports(&self, reqs: &[CapabilityRef]) -> bool {
        match &self.policy.supported_capabilities {
            None => true,
            Some(offered) => reqs.iter().all(|r| {
                offered
                    .iter()
                    .any(|o| o.id == r.id && o.version.satisfies(&r.version))
            }),
        }
    }

    /// Admission control (§10.3): accept only what the Worker can credibly commit to.
    pub fn admit(&mut self, offer: &WorkOffer, now: UnixMillis) -> AdmissionDecision {
        let reason = self.admission_reason(offer, now);
        if reason == AdmissionReason::Accepted {
            self.insert(offer, now);
        }
        AdmissionDecision {
            accepted: reason.is_accepted(),
            reason,
        }
    }

    fn admission_reason(&self, offer: &WorkOffer, now: UnixMillis) -> AdmissionReason {
        use AdmissionReason as R;
        if let Some(idx) = self.entry_idx(&offer.work_id) {
            return if self.same_offer(idx, offer) {
                R::Duplicate
            } else {
                R::IdentifierCollision
            };
        }
        if self.terminal.contains(offer.work_id.as_str()) {
            return R::AlreadyTerminal;
        }
        if offer.work_id.is_empty() || offer.group_id.is_empty() {
            return R::IdentifierCollision;
        }
        if self
            .policy
            .allowed_groups
            .as_ref()
            .is_some_and(|allowed| !allowed.contains(&offer.group_id))
        {
            return R::GroupNotAllowed;
        }
        let group_policy = self
            .group_index
            .get(offer.group_id.as_str())
            .map(|g| self.groups[*g as usize].policy)
            .unwrap_or_else(|| self.policy.group(&offer.group_id));
        if group_policy.slot_quota == Some(0) {
            return R::GroupQuotaDisabled;
        }
        let slots = u32::from(offer.slots);
        if slots == 0
            || slots > self.policy.capacity_slots
            || group_policy.slot_quota.is_some_and(|q| slots > q)
            || !(MIN_PRIORITY..=MAX_PRIORITY).contains(&offer.priority)
        {
            return R::ExceedsCapacity;
        }
        if !self.supports(&offer.required_capabilities) {
            return R::UnsupportedCapability;
        }
        if let Some(deadline) = offer.deadline {
            let estimate = self.estimate_of(offer.estimated_duration_ms);
            if deadline <= now
                || (self.policy.decline_infeasible_deadlines
                    && now.saturating_add_ms(u64::from(estimate)) > deadline)
            {
                return R::DeadlineExpired;
            }
        }
        if !offer.eligibility.authorized {
            return R::NotAuthorized;
        }
        if !offer.eligibility.dependencies_ready {
            return R::DependencyUnsatisfied;
        }
        if !offer.eligibility.budget_available {
            return R::BudgetUnavailable;
        }
        if self.live >= self.policy.max_work_items {
            return R::WorkerFull;
        }
        let group_live = self
            .group_index
            .get(offer.group_id.as_str())
            .map_or(0, |g| self.groups[*g as usize].live);
        if group_live >= self.policy.max_work_items_per_group {
            return R::GroupFull;
        }
        R::Accepted
    }

    fn same_offer(&self, idx: u32, offer: &WorkOffer) -> bool {
        let e = self.entry(idx);
        *self.groups[e.group as usize].id == *offer.group_id
            && e.priority == offer.priority
            && e.deadline == offer.deadline.map_or(NO_DEADLINE, |d| d.0)
            && e.estimate_ms == offer.estimated_duration_ms
            && e.slots == offer.slots
            && e.preemptible == offer.preemptible
            && self.caps_equal(&e.caps, &offer.required_capabilities)
    }

    pub(crate) fn estimate_of(&self, estimate_ms: u32) -> u32 {
        if estimate_ms == 0 {
            self.policy.default_estimate_ms
        } else {
            estimate_ms
        }
    }

    fn insert(&mut self, offer: &WorkOffer, now: UnixMillis) {
        let group = self.intern_group(&offer.group_id);
        let caps = self.intern_caps(&offer.required_capabilities);
        let id: Arc<str> = Arc::from(offer.work_id.as_str());
        let entry = Entry {
            id: id.clone(),
            caps,
            detail: None,
            key: 0,
            since: now.0,
            deadline: offer.deadline.map_or(NO_DEADLINE, |d| d.0),
            ticket: 0,
            estimate_ms: offer.estimated_duration_ms,
            group,
            generation: 0,
            slots: offer.slots,
            priority: offer.priority,
            state: WorkState::Blocked,
            preemptible: offer.preemptible,
        };
        let idx = self.alloc(entry);
        self.index.insert(id, idx);
        self.live += 1;
        self.groups[group as usize].live += 1;
        self.make_ready(idx, now.0);
    }

    pub(crate) fn alloc(&mut self, entry: Entry) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.entries[i as usize] = Some(entry);
                i
            }
            None => {
                self.entries.push(Some(entry));
                (self.entries.len() - 1) as u32
            }
        }
    }

    /// Queue key: a "virtual ready time" that never depends on `now`, so aging needs no
    /// rescoring. Priority p buys `(p + 100) · step` ms of seniority; a deadline pulls the
    /// item forward once within `deadline_horizon` of its latest start; both are clamped to
    /// at most H = [`SchedulerPolicy::horizon_ms`] ahead of the ready time.
    pub(crate) fn queue_key(&self, e: &Entry, ready_at: i64) -> i64 {
        let horizon = self.policy.horizon_ms();
        let credit = (i64::from(e.priority) - i64::from(MIN_PRIORITY))
            * i64::from(self.policy.priority_step_ms);
        let mut key = ready_at.saturating_sub(credit);
        if e.deadline != NO_DEADLINE {
            let latest_start = e
                .deadline
                .saturating_sub(i64::from(self.estimate_of(e.estimate_ms)));
            key = key.min(latest_start.saturating_sub(i64::from(self.policy.deadline_horizon_ms)));
        }
        key.max(ready_at.saturating_sub(horizon))
    }

    fn take_ticket(&mut self) -> u64 {
        let t = self.next_ticket;
        self.next_ticket += 1;
        t
    }

    /// Puts an item into its Group queue with a fresh key computed from `ready_at`.
    pub(crate) fn make_ready(&mut self, idx: u32, ready_at: i64) {
        let ticket = self.take_ticket();
        let key = self.queue_key(self.entry(idx), ready_at);
        let (group, slots, est) = {
            let e = self.entry_mut(idx);
            e.state = WorkState::Ready;
            e.since = ready_at;
            e.key = key;
            e.ticket = ticket;
            (e.group, e.slots, e.estimate_ms)
        };
        let est = u64::from(self.estimate_of(est));
        self.push_ready(group, idx, key, ticket, slots, est);
    }

    pub(crate) fn push_ready(
        &mut self,
        group: u32,
        idx: u32,
        key: i64,
        ticket: u64,
        slots: u16,
        est: u64,
    ) {
        let g = &mut self.groups[group as usize];
        g.heap.push(Reverse((key, ticket, idx)));
        g.ready += 1;
        g.ready_slots += u64::from(slots);
        g.ready_estimate_ms += est;
        self.refresh(group);
    }

    /// Takes a Ready item out of the queue accounting (its heap entry becomes stale).
    fn unready(&mut self, idx: u32) {
        let (group, slots, est) = {
            let e = self.entry(idx);
            (e.group, e.slots, u64::from(self.estimate_of(e.estimate_ms)))
        };
        let g = &mut self.groups[group as usize];
        g.ready -= 1;
        g.ready_slots -= u64::from(slots);
        g.ready_estimate_ms -= est;
    }

    fn is_live_key(&self, k: &(i64, u64, u32)) -> bool {
        matches!(self.entries.get(k.2 as usize), Some(Some(e)) if e.state == WorkState::Ready && e.ticket == k.1)
    }

    /// Re-derives a Group's head and its membership in the eligible sets. Called after every
    /// change to the Group; O(log G + stale entries dropped).
    pub(crate) fn refresh(&mut self, group: u32) {
        self.refresh_with(group, true);
    }

    /// `bump`: a Group entering eligibility starts at the virtual time (no banked credit). A
    /// dispatch only momentarily unlists its Group and passes `false`.
    pub(crate) fn refresh_with(&mut self, group: u32, bump: bool) {
        let gi = group as usize;
        // Drop stale heads; compact when stale entries dominate (amortised O(1)).
        while let Some(Reverse(top)) = self.groups[gi].heap.peek().copied() {
            if self.is_live_key(&top) {
                break;
            }
            self.groups[gi].heap.pop();
        }
        if self.groups[gi].heap.len() > 2 * self.groups[gi].ready as usize + 32 {
            let heap = std::mem::take(&mut self.groups[gi].heap);
            let kept: Vec<QKey> = heap
                .into_vec()
                .into_iter()
                .filter(|Reverse(k)| self.is_live_key(k))
                .collect();
            self.groups[gi].heap = BinaryHeap::from(kept);
        }
        let head = self.groups[gi].heap.peek().map(|Reverse(k)| *k);
        let eligible = head.filter(|&(_, _, idx)| {
            let g = &self.groups[gi];
            let slots = u32::from(self.entry(idx).slots);
            g.policy
                .slot_quota
                .is_none_or(|q| g.running_slots + slots <= q)
        });
        let g = &self.groups[gi];
        let was = g.listed;
        let now_listed = eligible.map(|(k, t, _)| (k, t));
        if was == now_listed && was.is_some() {
            return;
        }
        let weight = u64::from(g.policy.weight);
        if let Some((k, t)) = was {
            self.by_pass.remove(&(g.pass, group));
            self.by_head.remove(&(k, t, group));
            self.listed_weight -= weight;
        }
        if let Some((k, t)) = now_listed {
            if was.is_none() && bump {
                // Entering eligibility: no credit is banked while idle or quota-blocked.
                let vt = self.virtual_time;
                let g = &mut self.groups[gi];
                g.pass = g.pass.max(vt);
            }
            let pass = self.groups[gi].pass;
            self.by_pass.insert((pass, group));
            self.by_head.insert((k, t, group));
            self.listed_weight += weight;
        }
        self.groups[gi].listed = now_listed;
    }

    /// The Group to serve next: the best head (priority, deadline, age) if its Group is within
    /// the policy's fairness lag of the most-behind Group's pass, else the most-behind Group.
    fn select(&self) -> Option<u32> {
        let &(min_pass, lagging) = self.by_pass.first()?;
        let &(_, _, best) = self.by_head.first()?;
        let lag = self.policy.fairness_lag();
        if self.groups[best as usize].pass <= min_pass.saturating_add(lag) {
            Some(best)
        } else {
            Some(lagging)
        }
    }

    fn free_slots(&self) -> u32 {
        self.policy.capacity_slots.saturating_sub(self.used_slots)
    }

    /// Makes every decision due at `now`: releases blocked items whose retry time came, fills
    /// free slots, and requests at most one cooperative preemption (§11.3).
    pub fn schedule(&mut self, now: UnixMillis) -> Vec<ScheduleAction> {
        self.release_due(now);
        let mut actions = Vec::new();
        let mut waiting = None;
        while let Some(group) = self.select() {
            let Some((_, _, idx)) = self.groups[group as usize]
                .listed
                .and_then(|_| self.groups[group as usize].heap.peek().map(|Reverse(k)| *k))
            else {
                break;
            };
            if u32::from(self.entry(idx).slots) > self.free_slots() {
                // Reserve: nothing overtakes the chosen head, so multi-slot work cannot starve.
                waiting = Some(idx);
                break;
            }
            actions.push(ScheduleAction::Dispatch(self.dispatch(group, idx, now)));
        }
        if let Some(head) = waiting
            && let Some(p) = self.preemption_for(head)
        {
            actions.push(ScheduleAction::Preempt(p));
        }
        actions
    }

    fn dispatch(&mut self, group: u32, idx: u32, now: UnixMillis) -> Dispatch {
        self.groups[group as usize].heap.pop();
        self.unready(idx);
        let pass = self.groups[group as usize].pass;
        self.virtual_time = self.virtual_time.max(pass);
        let (slots, priority, ticket) = {
            let e = self.entry_mut(idx);
            e.state = WorkState::Running;
            e.generation = e.generation.saturating_add(1);
            e.since = now.0;
            (e.slots, e.priority, e.ticket)
        };
        let weight = u128::from(self.groups[group as usize].policy.weight.max(1));
        let g = &mut self.groups[group as usize];
        g.running_slots += u32::from(slots);
        // Re-key the Group in `by_pass` with its new pass (refresh sees `listed` change).
        if let Some((k, t)) = g.listed.take() {
            self.by_pass.remove(&(pass, group));
            self.by_head.remove(&(k, t, group));
            self.listed_weight -= weight as u64;
        }
        let g = &mut self.groups[group as usize];
        g.pass = pass + u128::from(slots) * (PASS_UNIT / weight);
        self.used_slots += u32::from(slots);
        if self.entry(idx).preemptible {
            self.running.insert((priority, Reverse(ticket), idx));
        }
        let e = self.entry(idx);
        let d = Dispatch {
            work_id: e.id.clone(),
            group_id: self.groups[group as usize].id.clone(),
            generation: e.generation,
            slots,
            resume_from: e.detail.as_ref().and_then(|d| d.checkpoint.clone()),
        };
        self.refresh_with(group, false);
        d
    }

    /// A preemption request for the lowest-priority preemptible running item, if `head`
    /// outranks it by the policy margin and the freed slots would let `head` start.
    fn preemption_for(&mut self, head: u32) -> Option<PreemptRequest> {
        if self.pending_preemption.is_some() {
            return None;
        }
        let (head_priority, head_slots) = {
            let e = self.entry(head);
            (e.priority, u32::from(e.slots))
        };
        let &(prio, ticket, victim) = self.running.first()?;
        let margin = i16::from(self.policy.preemption_margin);
        let victim_slots = u32::from(self.entry(victim).slots);
        if i16::from(head_priority) < i16::from(prio) + margin
            || self.free_slots() + victim_slots < head_slots
        {
            return None;
        }
        self.running.remove(&(prio, ticket, victim));
        self.pending_preemption = Some(victim);
        self.entry_mut(victim).state = WorkState::Preempting;
        let e = self.entry(victim);
        Some(PreemptRequest {
            work_id: e.id.clone(),
            group_id: self.groups[e.group as usize].id.clone(),
            generation: e.generation,
            checkpoint: e.detail.as_ref().and_then(|d| d.checkpoint.clone()),
        })
    }

    fn release_due(&mut self, now: UnixMillis) {
        while let Some(&Reverse((at, ticket, idx))) = self.timers.peek() {
            if at > now.0 {
                break;
            }
            self.timers.pop();
            let due = matches!(self.entries.get(idx as usize), Some(Some(e))
                if e.state == WorkState::Blocked && e.ticket == ticket);
            if due {
                if let Some(d) = self.entry_mut(idx).detail.as_mut() {
                    d.retry_at = None;
                    d.blocked_reason = None;
                }
                self.make_ready(idx, at);
            }
        }
    }

    /// Releases the slots of a running or preempting item.
    pub(crate) fn release_slots(&mut self, idx: u32) {
        let (group, slots, prio, ticket) = {
            let e = self.entry(idx);
            (e.group, u32::from(e.slots), e.priority, e.ticket)
        };
        self.running.remove(&(prio, Reverse(ticket), idx));
        if self.pending_preemption == Some(idx) {
            self.pending_preemption = None;
        }
        self.used_slots -= slots;
        self.groups[group as usize].running_slots -= slots;
        self.refresh(group);
    }

    fn set_checkpoint(&mut self, idx: u32, checkpoint: CheckpointRef) {
        self.entry_mut(idx)
            .detail
            .get_or_insert_with(Box::default)
            .checkpoint = Some(checkpoint);
    }

    /// Applies a Worker report about the current run of `work_id` at `now`.
    pub fn apply(
        &mut self,
        work_id: &str,
        transition: Transition,
        now: UnixMillis,
    ) -> Result<(), SchedulerError> {
        let idx = self
            .entry_idx(work_id)
            .ok_or_else(|| SchedulerError::UnknownWork(work_id.to_owned()))?;
        let (state, generation) = {
            let e = self.entry(idx);
            (e.state, e.generation)
        };
        if !matches!(state, WorkState::Running | WorkState::Preempting) {
            return Err(SchedulerError::InvalidTransition(state));
        }
        if transition.generation() != generation {
            return Err(SchedulerError::StaleRun {
                current: generation,
                reported: transition.generation(),
            });
        }
        match transition {
            Transition::CheckpointSaved { checkpoint, .. } => {
                if !checkpoint.is_resumable() {
                    return Err(SchedulerError::UnsafeCheckpoint);
                }
                self.set_checkpoint(idx, checkpoint);
                if state == WorkState::Preempting {
                    // §11.3 steps 3–5: checkpoint emitted, slot released, item requeued.
                    self.release_slots(idx);
                    self.make_ready(idx, now.0);
                }
            }
            Transition::PreemptionDeclined { .. } => {
                if state != WorkState::Preempting {
                    return Err(SchedulerError::InvalidTransition(state));
                }
                self.pending_preemption = None;
                let e = self.entry_mut(idx);
                e.state = WorkState::Running;
                let key = (e.priority, Reverse(e.ticket), idx);
                if e.preemptible {
                    self.running.insert(key);
                }
            }
            Transition::Blocked {
                checkpoint,
                retry_at,
                reason,
                ..
            } => {
                if !checkpoint.is_resumable() {
                    return Err(SchedulerError::UnsafeCheckpoint);
                }
                self.set_checkpoint(idx, checkpoint);
                self.release_slots(idx);
                self.block(idx, retry_at, reason);
            }
            Transition::Released { .. } => {
                if state == WorkState::Preempting {
                    // Preemption must end in a safe checkpoint or an explicit decline.
                    return Err(SchedulerError::InvalidTransition(state));
                }
                self.release_slots(idx);
                self.make_ready(idx, now.0);
            }
            Transition::Completed { .. } | Transition::Failed { .. } => {
                self.release_slots(idx);
                self.remove(idx);
            }
        }
        Ok(())
    }

    pub(crate) fn block(&mut self, idx: u32, retry_at: Option<UnixMillis>, reason: String) {
        let ticket = self.take_ticket();
        let e = self.entry_mut(idx);
        e.state = WorkState::Blocked;
        e.ticket = ticket;
        let d = e.detail.get_or_insert_with(Box::default);
        d.blocked_reason = Some(reason);
        d.retry_at = retry_at.map(|t| t.0);
        if let Some(at) = retry_at {
            self.timers.push(Reverse((at.0, ticket, idx)));
        }
    }

    /// A blocker was resolved (`work.unblock`, §11.4): the item returns to its Group queue.
    pub fn unblock(&mut self, work_id: &str, now: UnixMillis) -> Result<(), SchedulerError> {
        let idx = self
            .entry_idx(work_id)
            .ok_or_else(|| SchedulerError::UnknownWork(work_id.to_owned()))?;
        let state = self.entry(idx).state;
        if state != WorkState::Blocked {
            return Err(SchedulerError::InvalidTransition(state));
        }
        if let Some(d) = self.entry_mut(idx).detail.as_mut() {
            d.retry_at = None;
            d.blocked_reason = None;
        }
        self.make_ready(idx, now.0);
        Ok(())
    }

    /// Cancellation from the Group log (§12): any state; running slots are freed at once
    /// because the authority revoked the lease.
    pub fn cancel(&mut self, work_id: &str) -> Result<(), SchedulerError> {
        let idx = self
            .entry_idx(work_id)
            .ok_or_else(|| SchedulerError::UnknownWork(work_id.to_owned()))?;
        match self.entry(idx).state {
            WorkState::Ready => self.unready(idx),
            WorkState::Running | WorkState::Preempting => self.release_slots(idx),
            WorkState::Blocked => {}
        }
        let group = self.entry(idx).group;
        self.remove(idx);
        // The removed item's heap entry is now stale; re-derive the head.
        self.refresh(group);
        Ok(())
    }

    /// Priority change (policy or MissionOwner escalation): reorders a queued item at once,
    /// keeping its age (§11.3 "Priority changes immediately reorder queued WorkItems").
    pub fn reprioritize(&mut self, work_id: &str, priority: i8) -> Result<(), SchedulerError> {
        let priority = super::types::priority(i64::from(priority))?;
        let idx = self
            .entry_idx(work_id)
            .ok_or_else(|| SchedulerError::UnknownWork(work_id.to_owned()))?;
        let (state, old, ticket) = {
            let e = self.entry(idx);
            (e.state, e.priority, e.ticket)
        };
        match state {
            WorkState::Ready => {
                self.unready(idx);
                let since = self.entry(idx).since;
                self.entry_mut(idx).priority = priority;
                self.make_ready(idx, since);
                let g = self.entry(idx).group;
                self.refresh(g);
            }
            WorkState::Running => {
                self.entry_mut(idx).priority = priority;
                if self.running.remove(&(old, Reverse(ticket), idx)) {
                    self.running.insert((priority, Reverse(ticket), idx));
                }
            }
            WorkState::Preempting | WorkState::Blocked => self.entry_mut(idx).priority = priority,
        }
        Ok(())
    }

    fn remove(&mut self, idx: u32) {
        let Some(e) = self.entries.get_mut(idx as usize).and_then(Option::take) else {
            return;
        };
        self.free.push(idx);
        self.index.remove(&e.id);
        self.live -= 1;
        self.groups[e.group as usize].live -= 1;
        self.terminal.insert(e.id);
    }
}

#[cold]
fn unreachable_entry() -> ! {
    // Every index stored in the heaps, sets and map refers to an occupied slot; reaching this
    // is an internal bug, never a consequence of input.
    unreachable!("scheduler slab index invariant violated")
}

pub(crate) fn validate_group(policy: &GroupPolicy) -> Result<(), SchedulerError> {
    if policy.weight == 0 || policy.weight > MAX_WEIGHT {
        return Err(SchedulerError::InvalidArgument("weight"));
    }
    Ok(())
}

pub(crate) fn validate_policy(policy: &SchedulerPolicy) -> Result<(), SchedulerError> {
    if policy.capacity_slots == 0 {
        return Err(SchedulerError::InvalidArgument("capacity_slots"));
    }
    if policy
        .fairness_lag_pass
        .is_some_and(|lag| lag > MAX_FAIRNESS_LAG_PASS)
    {
        return Err(SchedulerError::InvalidArgument("fairness_lag_pass"));
    }
    validate_group(&policy.default_group)?;
    for g in policy.groups.values() {
        validate_group(g)?;
    }
    Ok(())
}

#[cfg(test)]
mod size_tests {
    #[test]
    fn entry_is_compact() {
        // Part of the ≤ 300 bytes per queued item budget (see examples/bench_scheduling.rs).
        let size = std::mem::size_of::<Option<super::Entry>>();
        eprintln!("Option<Entry> = {size} bytes");
        assert!(size <= 112, "{size}");
    }
}
