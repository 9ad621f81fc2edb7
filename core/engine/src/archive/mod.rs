//! Retention and archival of a Group (§7.4, §15.2, §16; digest 2.8 and 2.11).
//!
//! `ext.missionweaveprotocol.core.group_archive` (an Organization-owned service Command) carries
//! a signed Group Snapshot (`group-snapshot.schema.json`, a normative signed document, §6.4
//! profile `group-snapshot`: protected time `/createdAt`, signer `/createdBy`). The engine
//! accepts it only when:
//!
//! 1. the snapshot passes the six-stage verifier against the Registry and its creator is the
//!    snapshot authority, the Group Authority whose key signs the Group's Events (§6.4 "a Group
//!    Snapshot creator MUST be an authorized archival service"; `Engine::perform_archive`);
//! 2. the sender is a service (§15.2 "Organization-owned"), the Group exists and is `active`,
//!    and its Mission is terminal (`approved`, `cancelled` or `failed`, §7.1): the history is
//!    final ([`decide`]);
//! 3. the snapshot is of this Group and covers exactly its Events `1..head`: `throughSequence`
//!    is the head and `eventIds` are the log's Event IDs in order.
//!
//! It then appends `group.snapshot.created` and `group.archived` atomically (§15.2), stores the
//! snapshot (kind [`SNAPSHOT_KIND`], ID = Group ID) and the archived Group document, and moves
//! Events `1..=throughSequence` out of the online log ([`Store::archive_before`]): a later
//! replay from before them answers `CURSOR_TOO_OLD` with the snapshot's hash (§16), and
//! `missionweaveprotocol_agent::replay::CoreReplaySource` hands the verified snapshot to an Agent's replay, which resumes after
//! it. Every later Command of the Group is refused ([`fence`]): `INVALID_STATE_TRANSITION`.
//!
//! [`Store::archive_before`]: crate::store::Store::archive_before

pub(crate) mod decide;
pub(crate) mod fence;
pub(crate) mod snapshot;

pub use snapshot::{ArchivedSnapshot, SnapshotDraft, group_event_ids, read_snapshot};

/// The archival Command (digest A.3, Organization-owned).
pub const GROUP_ARCHIVE: &str = "ext.missionweaveprotocol.core.group_archive";
/// The first Event of an archival: the signed snapshot is part of the history.
pub const SNAPSHOT_CREATED: &str = "group.snapshot.created";
/// The second Event: the Group is `archived` (digest 2.8).
pub const GROUP_ARCHIVED: &str = "group.archived";
/// The store kind of a Group's archive snapshot (ID = Group ID, value = the signed snapshot's
/// canonical bytes).
pub const SNAPSHOT_KIND: &str = "group_snapshot";

/// Whether `kind` is the archival Command.
pub fn handles(kind: &str) -> bool {
    kind == GROUP_ARCHIVE
}
