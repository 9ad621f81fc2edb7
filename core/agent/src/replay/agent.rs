//! [`AgentReplay`]: reconcile Groups from a [`ReplaySource`] through an [`EventProjector`] into
//! an [`AgentLocalStore`] and the Worker's [`Scheduler`] (reference `AgentReplay`).

use std::collections::{BTreeMap, HashSet};

use super::error::ReplayError;
use super::group::{EventCheck, GroupReplay};
use super::traits::{AgentLocalStore, EventProjector, ReplaySource};
use super::types::{GroupReplayResult, SourcePage};
use missionweaveprotocol_kernel::scheduler::{Scheduler, SchedulerPolicy};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// Events per atomic commit unless told otherwise: large enough that one fsync serves
/// thousands of Events, small enough that a batch's inbox rows stay a few hundred KiB.
pub const DEFAULT_BATCH_EVENTS: usize = 4_096;

/// Events per commit for a Scheduler of `scheduled` items: `batch_events`, and at least four
/// per Scheduler item, because a commit that admitted anything writes the whole Scheduler
/// snapshot (O(items)); this keeps its cost per Event bounded. Every replay driver (this one,
/// the Python and Node ones) commits when its staged Events reach it.
pub fn batch_limit(batch_events: usize, scheduled: usize) -> usize {
    batch_events.max(scheduled.saturating_mul(4))
}

/// One Agent's replay: its store and its Scheduler.
#[derive(Debug)]
pub struct AgentReplay<S> {
    agent_id: String,
    store: S,
    scheduler: Scheduler,
    batch_events: usize,
}

impl<S: AgentLocalStore> AgentReplay<S> {
    /// A replay admitting into `scheduler` (reference `scheduler=`).
    pub fn new(agent_id: &str, store: S, scheduler: Scheduler) -> Result<Self, ReplayError> {
        if agent_id.is_empty() {
            return Err(ReplayError::InvalidArgument("agent_id"));
        }
        Ok(Self {
            agent_id: agent_id.to_owned(),
            store,
            scheduler,
            batch_events: DEFAULT_BATCH_EVENTS,
        })
    }

    /// A replay whose Scheduler is rebuilt from the store's snapshot after a restart (running
    /// work resumes from a safe checkpoint or waits blocked, §11.3), or a new one under
    /// `policy` when the store holds none (reference `scheduler_policy=`).
    pub fn open(
        agent_id: &str,
        store: S,
        policy: SchedulerPolicy,
        now: UnixMillis,
    ) -> Result<Self, ReplayError> {
        if agent_id.is_empty() {
            return Err(ReplayError::InvalidArgument("agent_id"));
        }
        let scheduler = match store.load_scheduler(agent_id)? {
            Some(snapshot) => Scheduler::rebuild_after_restart(policy, &snapshot, now),
            None => Scheduler::new(policy),
        }
        .map_err(ReplayError::Scheduler)?;
        Self::new(agent_id, store, scheduler)
    }

    /// Events per atomic commit (at least 1).
    pub fn with_batch_events(mut self, events: usize) -> Self {
        self.batch_events = events.max(1);
        self
    }

    /// The Agent.
    pub fn agent_id(&self) -> &str {
        &self.agent_id
    }

    /// The Worker's Scheduler.
    pub fn scheduler(&self) -> &Scheduler {
        &self.scheduler
    }

    /// The Worker's Scheduler, to dispatch and report on.
    pub fn scheduler_mut(&mut self) -> &mut Scheduler {
        &mut self.scheduler
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// Gives the store and the Scheduler back.
    pub fn into_parts(self) -> (S, Scheduler) {
        (self.store, self.scheduler)
    }

    /// Reconciles each Group (duplicates in `groups` once, in order) at `now`: asks the source
    /// after the durable cursor, page after page until a page brings nothing new; restores a
    /// `CURSOR_TOO_OLD` snapshot and continues after it. On a failure, what was processed
    /// before the failing Event is committed and the error returned; the Groups before it are
    /// complete.
    pub fn reconcile<'g, R, P>(
        &mut self,
        groups: impl IntoIterator<Item = &'g str>,
        source: &mut R,
        projector: &mut P,
        now: UnixMillis,
    ) -> Result<BTreeMap<String, GroupReplayResult>, ReplayError>
    where
        R: ReplaySource + ?Sized,
        P: EventProjector + ?Sized,
    {
        let mut seen = HashSet::new();
        let mut results = BTreeMap::new();
        for group in groups {
            if !seen.insert(group) {
                continue;
            }
            let result = self.reconcile_group(group, source, projector, now)?;
            results.insert(group.to_owned(), result);
        }
        Ok(results)
    }

    fn reconcile_group<R, P>(
        &mut self,
        group_id: &str,
        source: &mut R,
        projector: &mut P,
        now: UnixMillis,
    ) -> Result<GroupReplayResult, ReplayError>
    where
        R: ReplaySource + ?Sized,
        P: EventProjector + ?Sized,
    {
        let mut g = GroupReplay::begin(&self.store, &self.agent_id, group_id)?;
        loop {
            let page = source
                .replay(group_id, g.cursor())
                .map_err(|e| ReplayError::Source {
                    group_id: group_id.to_owned(),
                    code: e.code,
                    detail: e.detail,
                });
            let events = match page {
                Ok(SourcePage::CursorTooOld(snapshot)) => {
                    g.install_snapshot(&self.store, &mut self.scheduler, snapshot, now)?;
                    continue;
                }
                Ok(SourcePage::Events(events)) => events,
                Err(e) => {
                    let _ = g.commit(&self.store, &mut self.scheduler);
                    return Err(e);
                }
            };
            let mut new = 0usize;
            for event in &events {
                match self.step(&mut g, event, projector, now) {
                    Ok(true) => new += 1,
                    Ok(false) => {}
                    Err(e) => {
                        // Keep the progress before the failing Event (a commit error here is
                        // secondary to the one that stopped the replay).
                        let _ = g.commit(&self.store, &mut self.scheduler);
                        return Err(e);
                    }
                }
                if g.staged() >= self.batch_limit() {
                    g.commit(&self.store, &mut self.scheduler)?;
                }
            }
            if new == 0 {
                g.commit(&self.store, &mut self.scheduler)?;
                return Ok(g.result());
            }
        }
    }

    /// Events per commit ([`batch_limit`] of [`with_batch_events`](Self::with_batch_events)).
    /// Batches span source pages.
    fn batch_limit(&self) -> usize {
        batch_limit(self.batch_events, self.scheduler.len())
    }

    fn step<P: EventProjector + ?Sized>(
        &mut self,
        g: &mut GroupReplay,
        event: &super::types::ReplayEvent,
        projector: &mut P,
        now: UnixMillis,
    ) -> Result<bool, ReplayError> {
        match g.check(
            &self.store,
            &event.event_id,
            &event.group_id,
            event.sequence,
        )? {
            EventCheck::Duplicate => Ok(false),
            EventCheck::New => {
                let projection =
                    projector
                        .project(event)
                        .map_err(|detail| ReplayError::Projector {
                            event_id: event.event_id.to_string(),
                            detail,
                        })?;
                g.apply(
                    &mut self.scheduler,
                    &event.event_id,
                    event.sequence,
                    projection,
                    now,
                )?;
                Ok(true)
            }
        }
    }
}

#[cfg(test)]
mod batch_tests {
    use super::{DEFAULT_BATCH_EVENTS, batch_limit};

    #[test]
    fn a_batch_holds_at_least_four_events_per_scheduler_item() {
        assert_eq!(batch_limit(DEFAULT_BATCH_EVENTS, 0), DEFAULT_BATCH_EVENTS);
        assert_eq!(
            batch_limit(DEFAULT_BATCH_EVENTS, 1_024),
            DEFAULT_BATCH_EVENTS
        );
        assert_eq!(batch_limit(DEFAULT_BATCH_EVENTS, 1_025), 4_100);
        assert_eq!(batch_limit(1, usize::MAX), usize::MAX);
    }
}
