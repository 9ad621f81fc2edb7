//! The three seams of an Agent replay: where durable state lives ([`AgentLocalStore`]), where
//! Events come from ([`ReplaySource`]) and what they mean for this Worker ([`EventProjector`]).

use std::sync::Arc;

use missionweaveprotocol::WireCode;

use super::error::LocalStoreError;
use super::types::{EventPosition, EventProjection, ReplayBatch, ReplayEvent, SourcePage};
use missionweaveprotocol_kernel::scheduler::SchedulerSnapshot;

/// The Agent's durable local state a replay reads and commits (reference `SQLiteAgentStore`).
///
/// Never authoritative for Mission or Group truth: it only remembers how far this Agent has
/// processed each Group, which Events it processed where, and its Scheduler. Methods take
/// `&self`; implementations serialize internally.
///
/// Every write refuses an empty Agent, Event or Group ID with
/// [`LocalStoreErrorKind::InvalidArgument`](super::LocalStoreErrorKind::InvalidArgument) and
/// writes nothing. Every implementation passes the shared conformance suite
/// (`agent_store_test_suite!`, behind the crate's `testing` feature).
pub trait AgentLocalStore {
    /// The durable cursor (last processed sequence, 0 for none) of `agent_id` in `group_id`.
    fn cursor(&self, agent_id: &str, group_id: &str) -> Result<u64, LocalStoreError>;

    /// Where `event_id` was processed, if it was remembered with a position.
    fn event_position(
        &self,
        agent_id: &str,
        event_id: &str,
    ) -> Result<Option<EventPosition>, LocalStoreError>;

    /// Remembers one Event (reference `remember_event`): `false` if it was already known (at
    /// the same position, when one is given); an Event known at another position, or a
    /// position held by another Event, is an `EventPositionCollision`.
    fn remember_event(
        &self,
        agent_id: &str,
        event_id: &str,
        position: Option<(&str, u64)>,
    ) -> Result<bool, LocalStoreError>;

    /// The last Scheduler snapshot stored for `agent_id`.
    fn load_scheduler(&self, agent_id: &str) -> Result<Option<SchedulerSnapshot>, LocalStoreError>;

    /// Stores the Scheduler snapshot of `agent_id` (replacing the previous one).
    fn save_scheduler(
        &self,
        agent_id: &str,
        snapshot: &SchedulerSnapshot,
    ) -> Result<(), LocalStoreError>;

    /// Commits one replay batch atomically (see [`ReplayBatch`] for the rules).
    fn commit_replay(&self, batch: &ReplayBatch<'_>) -> Result<(), LocalStoreError>;
}

/// Forwards every method to the store behind a shared pointer (as `store::forward_store!`).
macro_rules! forward_agent_local_store {
    ($($pointer:ty),+) => {$(
        impl<T: AgentLocalStore + ?Sized> AgentLocalStore for $pointer {
            fn cursor(&self, agent_id: &str, group_id: &str) -> Result<u64, LocalStoreError> {
                (**self).cursor(agent_id, group_id)
            }
            fn event_position(
                &self,
                agent_id: &str,
                event_id: &str,
            ) -> Result<Option<EventPosition>, LocalStoreError> {
                (**self).event_position(agent_id, event_id)
            }
            fn remember_event(
                &self,
                agent_id: &str,
                event_id: &str,
                position: Option<(&str, u64)>,
            ) -> Result<bool, LocalStoreError> {
                (**self).remember_event(agent_id, event_id, position)
            }
            fn load_scheduler(
                &self,
                agent_id: &str,
            ) -> Result<Option<SchedulerSnapshot>, LocalStoreError> {
                (**self).load_scheduler(agent_id)
            }
            fn save_scheduler(
                &self,
                agent_id: &str,
                snapshot: &SchedulerSnapshot,
            ) -> Result<(), LocalStoreError> {
                (**self).save_scheduler(agent_id, snapshot)
            }
            fn commit_replay(&self, batch: &ReplayBatch<'_>) -> Result<(), LocalStoreError> {
                (**self).commit_replay(batch)
            }
        }
    )+};
}

forward_agent_local_store!(&T, Arc<T>);

/// A source failure, with the §19 code the source reported (`BACKPRESSURE`, `GROUP_NOT_FOUND`,
/// `MEMBERSHIP_REQUIRED`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceError {
    /// The §19 code.
    pub code: WireCode,
    /// A readable account.
    pub detail: String,
}

/// Where Events come from (reference `ReplaySource`): the Events of `group_id` after `after`,
/// possibly with duplicates, or `CURSOR_TOO_OLD` with a verified snapshot (§16). A source may
/// page: the replay asks again after each page until a page brings nothing new.
pub trait ReplaySource {
    /// One page after `after`.
    fn replay(&mut self, group_id: &str, after: u64) -> Result<SourcePage, SourceError>;
}

impl<F: FnMut(&str, u64) -> Result<SourcePage, SourceError>> ReplaySource for F {
    fn replay(&mut self, group_id: &str, after: u64) -> Result<SourcePage, SourceError> {
        self(group_id, after)
    }
}

/// What an Event means for this Worker (reference `EventProjector`): `None` for nothing.
pub trait EventProjector {
    /// Projects one new Event (never called for a duplicate).
    fn project(&mut self, event: &ReplayEvent) -> Result<Option<EventProjection>, String>;
}

impl<F: FnMut(&ReplayEvent) -> Result<Option<EventProjection>, String>> EventProjector for F {
    fn project(&mut self, event: &ReplayEvent) -> Result<Option<EventProjection>, String> {
        self(event)
    }
}
