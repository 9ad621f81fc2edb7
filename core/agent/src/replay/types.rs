//! The values a replay reads and produces (§16).

use std::sync::Arc;

use missionweaveprotocol_engine::store::Blob;
use missionweaveprotocol_kernel::scheduler::{AdmissionDecision, SchedulerSnapshot, WorkOffer};

/// One Group Event as the Agent received it: its identity, its position, and its signed
/// bytes (empty when the host keeps the document itself, as the Python binding does). The
/// source is responsible for having verified it (§6.4); the replay only orders it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayEvent {
    /// The Event ID (the deduplication key, §16).
    pub event_id: Arc<str>,
    /// Its Group.
    pub group_id: Arc<str>,
    /// Its Group sequence (contiguous from 1, §15.2).
    pub sequence: u64,
    /// The signed Event's bytes.
    pub body: Blob,
}

impl ReplayEvent {
    /// An Event at `group_id`#`sequence`.
    pub fn new(event_id: &str, group_id: &str, sequence: u64, body: impl Into<Blob>) -> Self {
        Self {
            event_id: Arc::from(event_id),
            group_id: Arc::from(group_id),
            sequence,
            body: body.into(),
        }
    }
}

/// What one Event means for this Worker (reference `EventProjection`): the WorkOffers to admit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventProjection {
    /// Offers for the Worker's Scheduler, admitted in order.
    pub work_offers: Vec<WorkOffer>,
}

/// A signed Group snapshot a source restores from when the cursor is older than its online log
/// (§16 `CURSOR_TOO_OLD`, digest 2.11).
///
/// The source verifies the snapshot's hash and signature before returning it (§16: "the Agent
/// restores the snapshot, verifies its hash and signature") and projects it: `projection` holds
/// the offers live at `through_sequence`. Installing it admits those offers, sets the cursor to
/// `through_sequence` and records `artifact_hash`, in one atomic commit; the replay then asks
/// the source again after `through_sequence`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplaySnapshot {
    /// The snapshot Artifact's hash (`snapshotArtifactHash`).
    pub artifact_hash: String,
    /// The last Group sequence the snapshot covers.
    pub through_sequence: u64,
    /// The snapshot's meaning for this Worker.
    pub projection: EventProjection,
}

/// One answer of a [`ReplaySource`](super::ReplaySource).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourcePage {
    /// Events after the requested cursor, in sequence order (possibly with duplicates, §16).
    /// An empty page, or one without a new Event, ends the Group's replay.
    Events(Vec<ReplayEvent>),
    /// `CURSOR_TOO_OLD`: the position is no longer online; restore this snapshot.
    CursorTooOld(ReplaySnapshot),
}

/// One admission decision of a replay, with the WorkItem it is about (reference
/// `AdmissionDecision.work_id`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayAdmission {
    /// The WorkItem.
    pub work_id: String,
    /// The Scheduler's decision.
    pub decision: AdmissionDecision,
}

/// What reconciling one Group did (reference `GroupReplayResult`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupReplayResult {
    /// The Group.
    pub group_id: String,
    /// The durable cursor before.
    pub start_cursor: u64,
    /// The durable cursor after.
    pub end_cursor: u64,
    /// Events projected and committed.
    pub applied_events: u64,
    /// Events dropped as already processed.
    pub duplicate_events: u64,
    /// Every admission decision, in order.
    pub admissions: Vec<ReplayAdmission>,
    /// The snapshots restored (`CURSOR_TOO_OLD`), by Artifact hash.
    pub snapshots_restored: Vec<String>,
}

/// One inbox row: an Event processed at its position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboxRow {
    /// The Event ID.
    pub event_id: Arc<str>,
    /// Its Group sequence.
    pub sequence: u64,
}

/// One atomic replay commit: the store writes all of it or none of it.
///
/// The store checks that its cursor for `(agent_id, group_id)` is still `from_cursor`
/// ([`LocalStoreErrorKind::CursorConflict`](super::LocalStoreErrorKind::CursorConflict)
/// otherwise), records every inbox row at `group_id` (an Event ID already recorded at another
/// position, or a position held by another Event, is an
/// [`EventPositionCollision`](super::LocalStoreErrorKind::EventPositionCollision); the same
/// row again is accepted), sets the cursor to `to_cursor`, stores `scheduler` when present and
/// records `snapshot_hash` when present.
#[derive(Debug, Clone, Copy)]
pub struct ReplayBatch<'a> {
    /// The Agent.
    pub agent_id: &'a str,
    /// The Group.
    pub group_id: &'a str,
    /// The cursor the batch starts from.
    pub from_cursor: u64,
    /// The cursor after the batch (≥ `from_cursor`).
    pub to_cursor: u64,
    /// Events processed, in sequence order.
    pub events: &'a [InboxRow],
    /// The Scheduler after the batch, when the batch changed it.
    pub scheduler: Option<&'a SchedulerSnapshot>,
    /// The Artifact hash of a snapshot restored by this batch.
    pub snapshot_hash: Option<&'a str>,
}

/// Where an Event was processed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventPosition {
    /// Its Group.
    pub group_id: String,
    /// Its Group sequence.
    pub sequence: u64,
}
