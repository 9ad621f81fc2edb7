//! [`GroupReplay`]: the sans-IO reconcile of one Group (§16, digest 2.11), step by step.
//!
//! Per Event: route by Group, then by sequence: `sequence ≤ cursor` is a duplicate (dropped,
//! but an Event ID already remembered must keep its position); `sequence == cursor + 1` is new
//! (projected, its offers admitted, staged); anything later is a gap (refused, the cursor never
//! moves over it). Staged Events commit in batches: the inbox rows, the new cursor and the
//! Scheduler snapshot go to the store in one atomic [`ReplayBatch`], so a crash leaves either
//! the whole batch or none of it, and the Scheduler the store holds always matches its cursor.
//! (The reference commits per Event and saves the Scheduler separately from the cursor; a crash
//! between the two lost or doubled admissions.)
//!
//! When a step fails, the Events staged before it stay staged, and the Scheduler is put back to
//! exactly what those Events made of it (the Scheduler as it was before the batch's first
//! admission, with the staged offers admitted again at their own instants: admission is
//! deterministic). The caller commits them, so a failure never discards good progress, and the
//! failing Event is replayed by the next reconcile.

use std::collections::HashMap;
use std::sync::Arc;

use super::error::{LocalStoreError, LocalStoreErrorKind, ReplayError};
use super::traits::AgentLocalStore;
use super::types::{
    EventProjection, GroupReplayResult, InboxRow, ReplayAdmission, ReplayBatch, ReplaySnapshot,
};
use missionweaveprotocol_kernel::scheduler::{AdmissionReason, Scheduler, WorkOffer};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

fn error_sequence(error: &ReplayError) -> u64 {
    match error {
        ReplayError::EventMoved { sequence, .. } => *sequence,
        _ => u64::MAX,
    }
}

/// What [`GroupReplay::check`] decided about one Event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventCheck {
    /// `sequence == cursor + 1`: project it and [`apply`](GroupReplay::apply) it.
    New,
    /// Already processed: drop it (counted).
    Duplicate,
}

#[derive(Debug)]
struct Staged {
    row: InboxRow,
    offers: Vec<WorkOffer>,
    now: UnixMillis,
    /// `admissions.len()` after this Event.
    admissions_end: usize,
}

/// The reconcile of one Group for one Agent.
#[derive(Debug)]
pub struct GroupReplay {
    agent_id: Arc<str>,
    group_id: Arc<str>,
    start_cursor: u64,
    /// The store's cursor.
    committed: u64,
    /// The cursor with the staged Events.
    cursor: u64,
    staged: Vec<Staged>,
    staged_ids: HashMap<Arc<str>, u64>,
    /// The Scheduler before the staged batch's first admission (`None`: the batch admitted
    /// nothing, the Scheduler is as committed).
    baseline: Option<Scheduler>,
    applied: u64,
    duplicates: u64,
    admissions: Vec<ReplayAdmission>,
    /// `admissions.len()` when the last staged Event was applied.
    staged_admissions: usize,
    /// `admissions.len()` at the last commit.
    committed_admissions: usize,
    snapshots: Vec<String>,
}

impl GroupReplay {
    /// Starts at the store's cursor of `agent_id` in `group_id`.
    pub fn begin(
        store: &(impl AgentLocalStore + ?Sized),
        agent_id: &str,
        group_id: &str,
    ) -> Result<Self, ReplayError> {
        if agent_id.is_empty() {
            return Err(ReplayError::InvalidArgument("agent_id"));
        }
        if group_id.is_empty() {
            return Err(ReplayError::InvalidArgument("group_id"));
        }
        let cursor = store.cursor(agent_id, group_id)?;
        Ok(Self {
            agent_id: Arc::from(agent_id),
            group_id: Arc::from(group_id),
            start_cursor: cursor,
            committed: cursor,
            cursor,
            staged: Vec::new(),
            staged_ids: HashMap::new(),
            baseline: None,
            applied: 0,
            duplicates: 0,
            admissions: Vec::new(),
            staged_admissions: 0,
            committed_admissions: 0,
            snapshots: Vec::new(),
        })
    }

    /// The Group.
    pub fn group_id(&self) -> &str {
        &self.group_id
    }

    /// The cursor including staged Events (what to ask the source after).
    pub fn cursor(&self) -> u64 {
        self.cursor
    }

    /// The store's cursor.
    pub fn committed_cursor(&self) -> u64 {
        self.committed
    }

    /// Events staged and not yet committed.
    pub fn staged(&self) -> usize {
        self.staged.len()
    }

    /// Admission decisions recorded so far (committed and staged).
    pub fn admission_count(&self) -> usize {
        self.admissions.len()
    }

    /// The admission decisions recorded after the first `count` (see
    /// [`admission_count`](Self::admission_count)).
    pub fn admissions_since(&self, count: usize) -> &[ReplayAdmission] {
        &self.admissions[count.min(self.admissions.len())..]
    }

    /// Routes and orders one Event (§16): [`EventCheck::New`] when it must be projected and
    /// applied next, [`EventCheck::Duplicate`] when it was processed already; a wrong Group,
    /// a gap or a moved Event ID is an error.
    pub fn check(
        &mut self,
        store: &(impl AgentLocalStore + ?Sized),
        event_id: &str,
        group_id: &str,
        sequence: u64,
    ) -> Result<EventCheck, ReplayError> {
        if group_id != &*self.group_id {
            return Err(ReplayError::WrongGroup {
                expected: self.group_id.to_string(),
                found: group_id.to_owned(),
                event_id: event_id.to_owned(),
            });
        }
        if sequence == 0 {
            return Err(ReplayError::MissingSequence {
                group_id: group_id.to_owned(),
                event_id: event_id.to_owned(),
            });
        }
        if sequence > self.cursor.saturating_add(1) {
            return Err(ReplayError::Gap {
                group_id: group_id.to_owned(),
                cursor: self.cursor,
                sequence,
                event_id: event_id.to_owned(),
            });
        }
        // A new Event's ID is checked against the store when its batch commits (the insert
        // of its inbox row finds an ID remembered elsewhere, `recover`), saving one lookup per
        // Event; a duplicate's here, before it is dropped.
        let known = match self.staged_ids.get(event_id) {
            Some(&s) => Some((self.group_id.to_string(), s)),
            None if sequence <= self.cursor => store
                .event_position(&self.agent_id, event_id)?
                .map(|p| (p.group_id, p.sequence)),
            None => None,
        };
        if let Some((known_group, known_sequence)) = known
            && (known_group != group_id || known_sequence != sequence)
        {
            return Err(ReplayError::EventMoved {
                event_id: event_id.to_owned(),
                known_group,
                known_sequence,
                group_id: group_id.to_owned(),
                sequence,
            });
        }
        if sequence <= self.cursor {
            self.duplicates += 1;
            return Ok(EventCheck::Duplicate);
        }
        Ok(EventCheck::New)
    }

    /// Applies one Event [`check`](Self::check) called new: admits its projection's offers at
    /// `now` and stages its inbox row and the cursor. An offer that collides with an admitted
    /// one (same WorkItem, other content) is a [`ReplayError::Projection`]; the Scheduler is
    /// then put back to what the staged Events made of it.
    pub fn apply(
        &mut self,
        scheduler: &mut Scheduler,
        event_id: &str,
        sequence: u64,
        projection: Option<EventProjection>,
        now: UnixMillis,
    ) -> Result<(), ReplayError> {
        if sequence != self.cursor.saturating_add(1) {
            return Err(ReplayError::Gap {
                group_id: self.group_id.to_string(),
                cursor: self.cursor,
                sequence,
                event_id: event_id.to_owned(),
            });
        }
        let offers = projection.map(|p| p.work_offers).unwrap_or_default();
        if !offers.is_empty() && self.baseline.is_none() {
            self.baseline = Some(scheduler.clone());
        }
        for offer in &offers {
            let refusal = if let Err(e) = WorkOffer::check_ids(&offer.work_id, &offer.group_id) {
                Some(e.to_string())
            } else {
                let decision = scheduler.admit(offer, now);
                self.admissions.push(ReplayAdmission {
                    work_id: offer.work_id.clone(),
                    decision,
                });
                (decision.reason == AdmissionReason::IdentifierCollision).then(|| {
                    "another offer with this WorkItem ID and other content was admitted".to_owned()
                })
            };
            if let Some(detail) = refusal {
                self.roll_back(scheduler);
                return Err(ReplayError::Projection {
                    event_id: event_id.to_owned(),
                    work_id: offer.work_id.clone(),
                    detail,
                });
            }
        }
        let id: Arc<str> = Arc::from(event_id);
        self.staged_ids.insert(id.clone(), sequence);
        self.staged.push(Staged {
            row: InboxRow {
                event_id: id,
                sequence,
            },
            offers,
            now,
            admissions_end: self.admissions.len(),
        });
        self.staged_admissions = self.admissions.len();
        self.cursor = sequence;
        Ok(())
    }

    /// Puts the Scheduler back to the baseline with the staged offers admitted again, and
    /// drops the admissions of the failed step.
    fn roll_back(&mut self, scheduler: &mut Scheduler) {
        self.admissions.truncate(self.staged_admissions);
        if let Some(baseline) = &self.baseline {
            *scheduler = baseline.clone();
            for staged in &self.staged {
                for offer in &staged.offers {
                    scheduler.admit(offer, staged.now);
                }
            }
        }
    }

    /// Commits the staged Events: inbox rows, cursor and (when the batch admitted anything)
    /// the Scheduler snapshot, atomically. If the store refuses, nothing of the batch stays:
    /// the Scheduler returns to its baseline and the cursor to the store's.
    pub fn commit(
        &mut self,
        store: &(impl AgentLocalStore + ?Sized),
        scheduler: &mut Scheduler,
    ) -> Result<(), ReplayError> {
        if self.staged.is_empty() {
            return Ok(());
        }
        self.write(store, scheduler, None)
    }

    fn write(
        &mut self,
        store: &(impl AgentLocalStore + ?Sized),
        scheduler: &mut Scheduler,
        snapshot_hash: Option<&str>,
    ) -> Result<(), ReplayError> {
        let rows: Vec<InboxRow> = self.staged.iter().map(|s| s.row.clone()).collect();
        let snapshot = self.baseline.as_ref().map(|_| scheduler.snapshot());
        let batch = ReplayBatch {
            agent_id: &self.agent_id,
            group_id: &self.group_id,
            from_cursor: self.committed,
            to_cursor: self.cursor,
            events: &rows,
            scheduler: snapshot.as_ref(),
            snapshot_hash,
        };
        match store.commit_replay(&batch) {
            Ok(()) => {
                self.applied += rows.len() as u64;
                self.committed = self.cursor;
                self.staged.clear();
                self.staged_ids.clear();
                self.baseline = None;
                self.staged_admissions = self.admissions.len();
                self.committed_admissions = self.admissions.len();
                Ok(())
            }
            Err(e) if e.kind == LocalStoreErrorKind::EventPositionCollision && !rows.is_empty() => {
                Err(self.recover(store, scheduler, e))
            }
            Err(e) => {
                self.discard(scheduler);
                Err(e.into())
            }
        }
    }

    /// The store refused a batch because an Event ID in it is remembered at another position:
    /// finds the first such Event, commits the Events before it (the Scheduler back to exactly
    /// their offers) and reports it as [`ReplayError::EventMoved`]. Any other cause (a position
    /// held by another Event) drops the batch and reports the store's refusal.
    fn recover(
        &mut self,
        store: &(impl AgentLocalStore + ?Sized),
        scheduler: &mut Scheduler,
        refusal: LocalStoreError,
    ) -> ReplayError {
        let mut moved = None;
        for (i, staged) in self.staged.iter().enumerate() {
            match store.event_position(&self.agent_id, &staged.row.event_id) {
                Ok(Some(p))
                    if p.group_id != *self.group_id || p.sequence != staged.row.sequence =>
                {
                    moved = Some((i, p));
                    break;
                }
                Ok(_) => {}
                Err(e) => {
                    self.discard(scheduler);
                    return e.into();
                }
            }
        }
        let Some((i, known)) = moved else {
            self.discard(scheduler);
            return refusal.into();
        };
        let bad = &self.staged[i];
        let error = ReplayError::EventMoved {
            event_id: bad.row.event_id.to_string(),
            known_group: known.group_id,
            known_sequence: known.sequence,
            group_id: self.group_id.to_string(),
            sequence: bad.row.sequence,
        };
        self.staged.truncate(i);
        self.staged_ids.retain(|_, s| *s < error_sequence(&error));
        self.staged_admissions = self
            .staged
            .last()
            .map_or(self.committed_admissions, |s| s.admissions_end);
        self.cursor = self
            .staged
            .last()
            .map_or(self.committed, |s| s.row.sequence);
        self.roll_back(scheduler);
        if self.staged.is_empty() {
            self.discard(scheduler);
            return error;
        }
        match self.write(store, scheduler, None) {
            Ok(()) => error,
            Err(e) => e,
        }
    }

    /// Drops everything since the last commit: staged Events, their admissions, and the
    /// Scheduler back to its baseline.
    fn discard(&mut self, scheduler: &mut Scheduler) {
        self.staged.clear();
        self.staged_ids.clear();
        if let Some(baseline) = self.baseline.take() {
            *scheduler = baseline;
        }
        self.cursor = self.committed;
        self.admissions.truncate(self.committed_admissions);
        self.staged_admissions = self.committed_admissions;
    }

    /// Restores a `CURSOR_TOO_OLD` snapshot (§16): commits what is staged, then admits the
    /// snapshot's offers, moves the cursor to its `through_sequence` and records its hash, in
    /// one atomic commit. A snapshot not after the cursor is refused.
    pub fn install_snapshot(
        &mut self,
        store: &(impl AgentLocalStore + ?Sized),
        scheduler: &mut Scheduler,
        snapshot: ReplaySnapshot,
        now: UnixMillis,
    ) -> Result<(), ReplayError> {
        self.commit(store, scheduler)?;
        if snapshot.through_sequence <= self.cursor {
            return Err(ReplayError::SnapshotBehindCursor {
                group_id: self.group_id.to_string(),
                cursor: self.cursor,
                through_sequence: snapshot.through_sequence,
            });
        }
        let offers = snapshot.projection.work_offers;
        if !offers.is_empty() {
            self.baseline = Some(scheduler.clone());
        }
        for offer in &offers {
            let decision = scheduler.admit(offer, now);
            self.admissions.push(ReplayAdmission {
                work_id: offer.work_id.clone(),
                decision,
            });
            if decision.reason == AdmissionReason::IdentifierCollision {
                self.discard(scheduler);
                return Err(ReplayError::Projection {
                    event_id: snapshot.artifact_hash,
                    work_id: offer.work_id.clone(),
                    detail: "another offer with this WorkItem ID and other content was admitted"
                        .to_owned(),
                });
            }
        }
        self.cursor = snapshot.through_sequence;
        self.write(store, scheduler, Some(&snapshot.artifact_hash))?;
        self.snapshots.push(snapshot.artifact_hash);
        Ok(())
    }

    /// What the reconcile did so far (committed Events only).
    pub fn result(&self) -> GroupReplayResult {
        GroupReplayResult {
            group_id: self.group_id.to_string(),
            start_cursor: self.start_cursor,
            end_cursor: self.committed,
            applied_events: self.applied,
            duplicate_events: self.duplicates,
            admissions: self.admissions[..self.committed_admissions].to_vec(),
            snapshots_restored: self.snapshots.clone(),
        }
    }
}
