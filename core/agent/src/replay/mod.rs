//! Durable Agent-side replay into local projections (§16, digest 2.11; reference `replay.py`).
//!
//! An Agent keeps, per Group, a durable cursor (the last sequence it processed), an inbox of
//! the Event IDs it processed with their positions, and its Scheduler. [`AgentReplay`] asks a
//! [`ReplaySource`] for the Events after the cursor, checks each one ([`GroupReplay::check`]:
//! right Group, `sequence == cursor + 1`, an Event ID never moves), lets an
//! [`EventProjector`] turn it into WorkOffers, admits them to the [`Scheduler`], and commits
//! inbox rows, cursor and Scheduler snapshot together in batches
//! ([`AgentLocalStore::commit_replay`]). After a crash the store holds a whole number of
//! batches, so nothing is applied twice and nothing is lost.
//!
//! `CURSOR_TOO_OLD` (§16): the source answers [`SourcePage::CursorTooOld`] with a snapshot it
//! verified and projected ([`ReplaySnapshot`]); the replay admits the snapshot's offers, moves
//! the cursor to the snapshot's last sequence in one commit, and asks again after it.
//!
//! [`MemoryAgentStore`] is the in-memory store; the SQLite one is
//! `missionweaveprotocol_store_sqlite::SqliteAgentStore`. Both pass the same conformance suite
//! (`replay::suite`, `agent_store_test_suite!`, behind the `testing` feature).
//!
//! [`Scheduler`]: missionweaveprotocol_kernel::scheduler::Scheduler

mod agent;
mod core_source;
mod error;
mod group;
mod memory;
// The shared Agent-local store conformance suite: compiled only for the tests of the crates
// that enable `testing` in their dev-dependencies, never into a release build.
#[cfg(feature = "testing")]
#[doc(hidden)]
pub mod suite;
mod traits;
mod types;

pub use agent::{AgentReplay, DEFAULT_BATCH_EVENTS, batch_limit};
pub use core_source::CoreReplaySource;
pub use error::{LocalStoreError, LocalStoreErrorKind, ReplayError, ReplayErrorFamily};
pub use group::{EventCheck, GroupReplay};
pub use memory::MemoryAgentStore;
pub use traits::{AgentLocalStore, EventProjector, ReplaySource, SourceError};
pub use types::{
    EventPosition, EventProjection, GroupReplayResult, InboxRow, ReplayAdmission, ReplayBatch,
    ReplayEvent, ReplaySnapshot, SourcePage,
};
