//! The per-Group Event log: records, replay pages and archival (§15.2, §16, §7.4).

use std::sync::Arc;

use crate::store::blob::Blob;

/// One stored Event: its Group sequence, its Event ID and its canonical signed JSON bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRecord {
    /// The Group sequence (contiguous from 1).
    pub sequence: u64,
    /// The Event ID.
    pub event_id: Arc<str>,
    /// The signed Event's canonical JSON bytes.
    pub body: Blob,
}

impl EventRecord {
    /// A record for `body` at `sequence`.
    pub fn new(sequence: u64, event_id: &str, body: impl Into<Blob>) -> Self {
        Self {
            sequence,
            event_id: Arc::from(event_id),
            body: body.into(),
        }
    }
}

/// Where a signed Group Snapshot is (§7.4, §16): the hash a `CURSOR_TOO_OLD` error carries as
/// `snapshotArtifactHash`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotPointer {
    /// The snapshot Artifact's hash (`sha256:…`).
    pub artifact_hash: String,
}

/// Where a Group's log stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupHead {
    /// The sequence the next append must carry (1 for a Group without Events).
    pub next_sequence: u64,
    /// The first sequence still in the online log (1 when nothing was archived).
    pub first_online: u64,
    /// The snapshot covering everything before `first_online`, once archived.
    pub snapshot: Option<SnapshotPointer>,
}

impl GroupHead {
    /// The last appended sequence (0 for a Group without Events).
    pub fn last_sequence(&self) -> u64 {
        self.next_sequence - 1
    }
}

/// One page of a replay (§16).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayPage {
    /// The Events, in sequence order, each after the requested cursor.
    pub events: Vec<EventRecord>,
    /// The cursor to ask for the next page with, while Events follow this page; `None` once
    /// the page reaches the head.
    pub continuation: Option<u64>,
    /// The last sequence of the Group when the page was read.
    pub last_sequence: u64,
}
