//! Scheduler snapshot, exact restore, and rebuild after a restart (§11.1 "durable local
//! projections … rebuildable").
//!
//! A snapshot keeps every queue key, ticket and Group pass, so [`Scheduler::restore`] makes
//! exactly the decisions the original would have made. [`Scheduler::rebuild_after_restart`]
//! additionally applies what a lost runtime means (§11.3 replacement Session): items that were
//! running resume from a durable safe checkpoint if they have one, otherwise they wait blocked
//! (`runtime_session_lost`) until explicitly unblocked, because restarting from scratch could
//! repeat side effects.

use std::cmp::Reverse;
use std::collections::HashSet;
use std::sync::Arc;

use super::core::{Detail, Entry, Scheduler, validate_policy};
use super::types::{
    CheckpointRef, Eligibility, MAX_PRIORITY, MIN_PRIORITY, SchedulerError, SchedulerPolicy,
    WorkOffer, WorkState,
};
use crate::unix_millis::{MAX_RFC3339_MILLIS, MIN_RFC3339_MILLIS, UnixMillis};

/// Current snapshot format version.
pub const SNAPSHOT_VERSION: u32 = 1;
/// Blocked reason recorded for running work whose runtime was lost without a safe checkpoint.
pub const RUNTIME_SESSION_LOST: &str = "runtime_session_lost";

/// One Group's persisted fairness state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupRecord {
    /// Group ID.
    pub group_id: String,
    /// Stride pass (virtual finish time).
    pub pass: u128,
}

/// One item's persisted state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueRecord {
    /// The admitted offer (eligibility is always the all-true default once admitted).
    pub offer: WorkOffer,
    /// State.
    pub state: WorkState,
    /// Queue key (Ready).
    pub key: i64,
    /// Ticket (queue tie-breaker and staleness marker).
    pub ticket: u64,
    /// Ready since (Ready) or dispatched at (Running/Preempting).
    pub since: UnixMillis,
    /// Run generation.
    pub generation: u32,
    /// Last durable safe checkpoint.
    pub checkpoint: Option<CheckpointRef>,
    /// Automatic retry time (Blocked).
    pub retry_at: Option<UnixMillis>,
    /// Required resolution (Blocked).
    pub blocked_reason: Option<String>,
}

/// Everything needed to restore a Scheduler.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedulerSnapshot {
    /// [`SNAPSHOT_VERSION`].
    pub version: u32,
    /// Groups in interning order (ties between equal passes break by this order).
    pub groups: Vec<GroupRecord>,
    /// Non-terminal items.
    pub records: Vec<QueueRecord>,
    /// Terminal WorkItem IDs still remembered.
    pub terminal: Vec<String>,
    /// Global virtual time.
    pub virtual_time: u128,
    /// Next ticket.
    pub next_ticket: u64,
}

impl Scheduler {
    /// A full snapshot; O(n).
    pub fn snapshot(&self) -> SchedulerSnapshot {
        let groups = self
            .groups
            .iter()
            .map(|g| GroupRecord {
                group_id: g.id.to_string(),
                pass: g.pass,
            })
            .collect();
        let records = self
            .entries
            .iter()
            .flatten()
            .map(|e| {
                let detail = e.detail.as_deref();
                QueueRecord {
                    offer: WorkOffer {
                        work_id: e.id.to_string(),
                        group_id: self.groups[e.group as usize].id.to_string(),
                        priority: e.priority,
                        deadline: (e.deadline != i64::MAX).then_some(UnixMillis(e.deadline)),
                        estimated_duration_ms: e.estimate_ms,
                        slots: e.slots,
                        required_capabilities: e
                            .caps
                            .iter()
                            .filter_map(|c| self.caps.get(*c as usize).cloned())
                            .collect(),
                        preemptible: e.preemptible,
                        eligibility: Eligibility::default(),
                    },
                    state: e.state,
                    key: e.key,
                    ticket: e.ticket,
                    since: UnixMillis(e.since),
                    generation: e.generation,
                    checkpoint: detail.and_then(|d| d.checkpoint.clone()),
                    retry_at: detail.and_then(|d| d.retry_at).map(UnixMillis),
                    blocked_reason: detail.and_then(|d| d.blocked_reason.clone()),
                }
            })
            .collect();
        let mut terminal: Vec<String> = self.terminal.iter().map(|s| s.to_string()).collect();
        terminal.sort_unstable();
        SchedulerSnapshot {
            version: SNAPSHOT_VERSION,
            groups,
            records,
            terminal,
            virtual_time: self.virtual_time,
            next_ticket: self.next_ticket,
        }
    }

    /// Restores exactly: same queues, passes and running set, so the same inputs give the same
    /// decisions. Every invariant the Scheduler keeps is checked, and a failure names the JSON
    /// Pointer of the offending member ([`SchedulerError::CorruptSnapshot`]): the version, unique
    /// non-empty IDs and tickets, known Groups, valid offers, instants within the §2 timestamp
    /// range (years 0001–9999), running slots within `capacity_slots`, and at most one pending
    /// preemption.
    pub fn restore(
        policy: SchedulerPolicy,
        snapshot: &SchedulerSnapshot,
    ) -> Result<Scheduler, SchedulerError> {
        validate_policy(&policy)?;
        if snapshot.version != SNAPSHOT_VERSION {
            return Err(corrupt("/version", "unsupported version"));
        }
        let mut s = Scheduler::new(policy)?;
        for (i, g) in snapshot.groups.iter().enumerate() {
            if g.group_id.is_empty() {
                return Err(corrupt(format!("/groups/{i}/groupId"), "empty group id"));
            }
            if s.group_index.contains_key(g.group_id.as_str()) {
                return Err(corrupt(format!("/groups/{i}/groupId"), "duplicate group"));
            }
            let gi = s.intern_group(&g.group_id);
            s.groups[gi as usize].pass = g.pass;
        }
        s.virtual_time = snapshot.virtual_time;
        s.next_ticket = snapshot.next_ticket;
        let mut tickets = HashSet::with_capacity(snapshot.records.len());
        for (i, r) in snapshot.records.iter().enumerate() {
            s.restore_record(r, &format!("/records/{i}"), &mut tickets)?;
        }
        for (i, id) in snapshot.terminal.iter().enumerate() {
            if id.is_empty() {
                return Err(corrupt(format!("/terminal/{i}"), "empty work id"));
            }
            if s.index.contains_key(id.as_str()) {
                return Err(corrupt(
                    format!("/terminal/{i}"),
                    "terminal item also queued",
                ));
            }
            s.terminal.insert(Arc::from(id.as_str()));
        }
        for g in 0..s.groups.len() as u32 {
            s.refresh_with(g, false);
        }
        Ok(s)
    }

    fn restore_record(
        &mut self,
        r: &QueueRecord,
        path: &str,
        tickets: &mut HashSet<u64>,
    ) -> Result<(), SchedulerError> {
        let at = |member: &str| format!("{path}/{member}");
        let o = &r.offer;
        if o.work_id.is_empty() {
            return Err(corrupt(at("offer/workId"), "empty work id"));
        }
        if self.index.contains_key(o.work_id.as_str()) {
            return Err(corrupt(at("offer/workId"), "duplicate work id"));
        }
        if r.ticket >= self.next_ticket || !tickets.insert(r.ticket) {
            return Err(corrupt(at("ticket"), "ticket out of order or duplicated"));
        }
        if o.slots == 0 {
            return Err(corrupt(
                at("offer/slots"),
                "an offer needs at least one slot",
            ));
        }
        if !(MIN_PRIORITY..=MAX_PRIORITY).contains(&o.priority) {
            return Err(corrupt(at("offer/priority"), "priority out of range"));
        }
        let Some(&group) = self.group_index.get(o.group_id.as_str()) else {
            return Err(corrupt(at("offer/groupId"), "unknown group"));
        };
        if r.checkpoint.as_ref().is_some_and(|c| !c.is_resumable()) {
            return Err(corrupt(at("checkpoint"), "unsafe checkpoint recorded"));
        }
        // §2: every instant the Scheduler keeps must be expressible as a wire timestamp, or a
        // later disclosure or lease could not render it.
        check_instant(r.since, &at("since"))?;
        if let Some(d) = o.deadline {
            check_instant(d, &at("offer/deadline"))?;
        }
        if let Some(t) = r.retry_at {
            check_instant(t, &at("retryAt"))?;
        }
        let slots = u32::from(o.slots);
        if matches!(r.state, WorkState::Running | WorkState::Preempting) {
            let used = self.used_slots.saturating_add(slots);
            if used > self.policy.capacity_slots {
                return Err(corrupt(at("offer/slots"), "running slots exceed capacity"));
            }
            if r.state == WorkState::Preempting && self.pending_preemption.is_some() {
                return Err(corrupt(at("state"), "two pending preemptions"));
            }
        }
        let caps = self.intern_caps(&o.required_capabilities);
        let detail = if r.checkpoint.is_some() || r.retry_at.is_some() || r.blocked_reason.is_some()
        {
            Some(Box::new(Detail {
                checkpoint: r.checkpoint.clone(),
                blocked_reason: r.blocked_reason.clone(),
                retry_at: r.retry_at.map(|t| t.0),
            }))
        } else {
            None
        };
        let id: Arc<str> = Arc::from(o.work_id.as_str());
        let idx = self.alloc(Entry {
            id: id.clone(),
            caps,
            detail,
            key: r.key,
            since: r.since.0,
            deadline: o.deadline.map_or(i64::MAX, |d| d.0),
            ticket: r.ticket,
            estimate_ms: o.estimated_duration_ms,
            group,
            generation: r.generation,
            slots: o.slots,
            priority: o.priority,
            state: r.state,
            preemptible: o.preemptible,
        });
        self.index.insert(id, idx);
        self.live += 1;
        self.groups[group as usize].live += 1;
        match r.state {
            WorkState::Ready => {
                let est = u64::from(self.estimate_of(o.estimated_duration_ms));
                let g = &mut self.groups[group as usize];
                g.heap.push(Reverse((r.key, r.ticket, idx)));
                g.ready += 1;
                g.ready_slots += u64::from(o.slots);
                g.ready_estimate_ms += est;
            }
            WorkState::Running | WorkState::Preempting => {
                self.used_slots += slots;
                self.groups[group as usize].running_slots += slots;
                if r.state == WorkState::Preempting {
                    self.pending_preemption = Some(idx);
                } else if o.preemptible {
                    self.running.insert((o.priority, Reverse(r.ticket), idx));
                }
            }
            WorkState::Blocked => {
                if let Some(at) = r.retry_at {
                    self.timers.push(Reverse((at.0, r.ticket, idx)));
                }
            }
        }
        Ok(())
    }

    /// Restores, then treats every running item's runtime as lost (§11.3, §11.5): slots are
    /// freed; work with a durable safe checkpoint is requeued at `now`, other work is blocked
    /// with [`RUNTIME_SESSION_LOST`].
    pub fn rebuild_after_restart(
        policy: SchedulerPolicy,
        snapshot: &SchedulerSnapshot,
        now: UnixMillis,
    ) -> Result<Scheduler, SchedulerError> {
        let mut s = Scheduler::restore(policy, snapshot)?;
        let active: Vec<u32> = (0..s.entries.len() as u32)
            .filter(|i| {
                matches!(s.entries.get(*i as usize), Some(Some(e))
                    if matches!(e.state, WorkState::Running | WorkState::Preempting))
            })
            .collect();
        for idx in active {
            s.release_slots(idx);
            let resumable = s
                .entry(idx)
                .detail
                .as_ref()
                .is_some_and(|d| d.checkpoint.is_some());
            if resumable {
                s.make_ready(idx, now.0);
            } else {
                s.block(idx, None, RUNTIME_SESSION_LOST.to_owned());
            }
        }
        Ok(s)
    }
}

impl Scheduler {
    /// A Scheduler holding `offers`, each admitted at `now` in order: the reference's
    /// `Scheduler.rebuild(offers)` (§1.12 of the reference's API). An offer the Scheduler
    /// declines (an ID already admitted with other content, a full Worker, an unsupported
    /// capability, …) refuses the whole rebuild with [`SchedulerError::OfferDeclined`]: a
    /// rebuild never loses work silently. An offer repeated with identical content is
    /// idempotent, as for [`admit`](Scheduler::admit). No offers at all refuse the rebuild
    /// with [`SchedulerError::NoOffers`] (an argument error naming `source`): a rebuild that
    /// restores nothing is a caller's mistake (issue 22, item 8), and an empty Scheduler is
    /// [`Scheduler::new`].
    pub fn from_offers<'a>(
        policy: SchedulerPolicy,
        offers: impl IntoIterator<Item = &'a WorkOffer>,
        now: UnixMillis,
    ) -> Result<Scheduler, SchedulerError> {
        let mut offers = offers.into_iter().peekable();
        if offers.peek().is_none() {
            return Err(SchedulerError::NoOffers);
        }
        let mut s = Scheduler::new(policy)?;
        for offer in offers {
            let decision = s.admit(offer, now);
            if !decision.accepted {
                return Err(SchedulerError::OfferDeclined {
                    work_id: offer.work_id.to_string(),
                    reason: decision.reason,
                });
            }
        }
        Ok(s)
    }
}

fn corrupt(path: impl Into<String>, problem: &'static str) -> SchedulerError {
    SchedulerError::CorruptSnapshot {
        path: path.into(),
        problem,
    }
}

/// An instant the §2 timestamp profile can express (0001-01-01 to 9999-12-31, UTC).
fn check_instant(t: UnixMillis, path: &str) -> Result<(), SchedulerError> {
    if (MIN_RFC3339_MILLIS..=MAX_RFC3339_MILLIS).contains(&t.0) {
        Ok(())
    } else {
        Err(corrupt(
            path,
            "instant outside the timestamp range (years 0001-9999)",
        ))
    }
}
