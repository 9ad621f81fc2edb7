//! Store errors, each with its §19 wire code, stable reason slug, readable message and fields.

use core::fmt;

use missionweaveprotocol::{DescribeError, ErrorClass, Fields, WireCode};

use crate::store::{
    aggregate::AggregateKey,
    event_log::SnapshotPointer,
    receipt::{Receipt, ReceiptKey},
};

/// The class store errors report until `ErrorClass` has a store family of its own: the
/// persistence-related family that exists today. Argument errors report `Argument`.
const STORE_CLASS: ErrorClass = ErrorClass::Snapshot;

/// Why the store refused a call. A refused commit leaves nothing behind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// An append did not carry the Group's next sequence (§15.2: no gap, no duplicate).
    SequenceConflict {
        /// The Group.
        group: String,
        /// The sequence the append carried.
        expected: u64,
        /// The sequence the Group's next Event must carry.
        next: u64,
    },
    /// An aggregate is not at the revision the decision read (§15.3).
    RevisionConflict {
        /// The aggregate.
        key: AggregateKey,
        /// The revision the write expected (0: absent).
        expected: u64,
        /// The current revision (0: absent).
        current: u64,
    },
    /// The Action ID was already used with different signed content (§15.1).
    ActionIdCollision {
        /// The idempotency key.
        key: ReceiptKey,
    },
    /// The same signed content was applied by a concurrent commit first (§15.1): answer with
    /// `receipt`'s first Event, append nothing.
    AlreadyApplied {
        /// The idempotency key.
        key: ReceiptKey,
        /// The receipt of the first application.
        receipt: Box<Receipt>,
    },
    /// The replay cursor lies before the online log (§16): restore the snapshot, then replay
    /// after `first_online - 1`.
    CursorTooOld {
        /// The Group.
        group: String,
        /// The cursor asked for.
        after_sequence: u64,
        /// The first sequence still online.
        first_online: u64,
        /// The signed snapshot covering everything before `first_online`.
        snapshot: SnapshotPointer,
    },
    /// An archive boundary that does not advance the archive or passes the head (§7.4).
    ArchiveOutOfRange {
        /// The Group.
        group: String,
        /// The boundary asked for.
        before: u64,
        /// The first sequence still online.
        first_online: u64,
        /// The Group's next sequence.
        next_sequence: u64,
    },
    /// An argument outside its range (a replay limit of 0, an append at sequence 0).
    InvalidArgument {
        /// The argument.
        argument: &'static str,
        /// What is wrong with it.
        detail: String,
    },
    /// Stored data failed its integrity check when read (a changed Event body, a broken hash
    /// chain, a revision that does not match its checksum, a missing sequence): the row is
    /// never served. Nothing was committed by the call that found it.
    Corrupt {
        /// What was being read: `event`, `aggregate`, `receipt`, `group`.
        what: &'static str,
        /// Which row (Group and sequence, or aggregate kind and ID).
        locator: String,
        /// What failed (a hash mismatch, a gap).
        detail: String,
    },
    /// The store was opened with an integrity key it was not sealed with: a keyed store
    /// without its key or with another one, or an unkeyed store with a key it was not told to
    /// adopt (`store::integrity`, `StoreOptions`). Nothing was read or written. The detail
    /// never holds key material.
    IntegrityKeyRefused {
        /// What does not match.
        detail: String,
    },
    /// The backend failed; nothing was committed. Transient (a busy database, a lost
    /// connection, a full disk, an I/O error): an unchanged retry can succeed.
    Backend {
        /// What failed (never shown on the wire beyond the code).
        detail: String,
    },
    /// The store is not open: its owner closed it, or it was never opened. Nothing was
    /// committed, and an unchanged retry fails the same way (only a new store reopens the
    /// database).
    NotOpen {
        /// Closed (`store_closed`), rather than never opened (`store_not_initialized`).
        closed: bool,
    },
}

impl StoreError {
    /// A conflict with a concurrent writer: re-read and decide again (the engine retries; the
    /// store never half-applies).
    pub const fn is_contention(&self) -> bool {
        matches!(
            self,
            Self::SequenceConflict { .. }
                | Self::RevisionConflict { .. }
                | Self::AlreadyApplied { .. }
        )
    }

    /// The reason slugs of the store's own failures (damaged data, a failing or closed
    /// backend), as opposed to its conflicts and refusals of the call: the `store_failure`
    /// family of the Core (`service::ErrorFamily::of`). All are `INTERNAL_ERROR`.
    pub const FAILURE_REASONS: [&'static str; 5] = [
        "store_corrupt",
        "integrity_key_refused",
        "backend_failure",
        "store_closed",
        "store_not_initialized",
    ];

    /// Whether this is one of the store's own failures ([`Self::FAILURE_REASONS`]).
    pub const fn is_failure(&self) -> bool {
        matches!(
            self,
            Self::Corrupt { .. }
                | Self::IntegrityKeyRefused { .. }
                | Self::Backend { .. }
                | Self::NotOpen { .. }
        )
    }

    /// The stable reason slug.
    pub const fn reason(&self) -> &'static str {
        match self {
            Self::SequenceConflict { .. } => "sequence_conflict",
            Self::RevisionConflict { .. } => "revision_conflict",
            Self::ActionIdCollision { .. } => "action_id_collision",
            Self::AlreadyApplied { .. } => "already_applied",
            Self::CursorTooOld { .. } => "cursor_too_old",
            Self::ArchiveOutOfRange { .. } => "archive_out_of_range",
            Self::InvalidArgument { .. } => "invalid_argument",
            Self::Corrupt { .. } => "store_corrupt",
            Self::IntegrityKeyRefused { .. } => "integrity_key_refused",
            Self::Backend { .. } => "backend_failure",
            Self::NotOpen { closed: true } => "store_closed",
            Self::NotOpen { closed: false } => "store_not_initialized",
        }
    }
}

pub(crate) fn int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// The fields of a revision conflict (§19 `expectedRevision`, `currentRevision`), shared by the
/// store's commit-time conflict and the engine's `expectedRevision` check.
pub(crate) fn revision_conflict_fields(key: &AggregateKey, expected: u64, current: u64) -> Fields {
    Fields::new()
        .text("aggregate_kind", key.kind.as_str())
        .text("aggregate_id", key.id.as_str())
        .integer("expected_revision", int(expected))
        .integer("current_revision", int(current))
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SequenceConflict {
                group,
                expected,
                next,
            } => write!(
                f,
                "Group {group} expects sequence {next} next, the append carried {expected}"
            ),
            Self::RevisionConflict {
                key,
                expected,
                current,
            } => write!(
                f,
                "{} {} is at revision {current}, the write expected {expected}",
                key.kind, key.id
            ),
            Self::ActionIdCollision { key } => write!(
                f,
                "Action ID {} of {} {} was already used with different content",
                key.action_id, key.actor_type, key.actor_id
            ),
            Self::AlreadyApplied { key, .. } => write!(
                f,
                "Action ID {} of {} {} was applied concurrently; its first result stands",
                key.action_id, key.actor_type, key.actor_id
            ),
            Self::CursorTooOld {
                group,
                after_sequence,
                first_online,
                ..
            } => write!(
                f,
                "Group {group} history before sequence {first_online} is archived; cursor \
                 {after_sequence} must resume from the snapshot"
            ),
            Self::ArchiveOutOfRange {
                group,
                before,
                first_online,
                next_sequence,
            } => write!(
                f,
                "Group {group} cannot archive before {before}: the boundary must lie after \
                 {first_online} and not after {next_sequence}"
            ),
            Self::InvalidArgument { argument, detail } => write!(f, "{argument}: {detail}"),
            Self::Corrupt {
                what,
                locator,
                detail,
            } => write!(
                f,
                "stored {what} {locator} failed its integrity check: {detail}"
            ),
            Self::IntegrityKeyRefused { detail } => {
                write!(f, "the store refused its integrity key: {detail}")
            }
            Self::Backend { detail } => write!(f, "the store failed: {detail}"),
            Self::NotOpen { closed: true } => {
                f.write_str("the store was closed: make a new store to open it again")
            }
            Self::NotOpen { closed: false } => {
                f.write_str("the store is not initialized: initialize() opens it")
            }
        }
    }
}

impl std::error::Error for StoreError {}

impl DescribeError for StoreError {
    fn class(&self) -> ErrorClass {
        match self {
            Self::ArchiveOutOfRange { .. } | Self::InvalidArgument { .. } => ErrorClass::Argument,
            _ => STORE_CLASS,
        }
    }

    fn wire_code(&self) -> WireCode {
        match self {
            // A Group log is the Group's own revision line: an append at a stale position is
            // the §15.3 conflict, with nothing applied.
            Self::SequenceConflict { .. } | Self::RevisionConflict { .. } => {
                WireCode::RevisionConflict
            }
            Self::ActionIdCollision { .. } => WireCode::ActionIdCollision,
            // This attempt accepted nothing; an unchanged retry returns the original receipt
            // (§15.1, §19), so the transient code is the honest one.
            // Damaged data at rest is the server's fault, never the caller's (§19).
            // A store opened with the wrong key is a deployment fault, never the caller's.
            Self::AlreadyApplied { .. }
            | Self::Backend { .. }
            | Self::Corrupt { .. }
            | Self::IntegrityKeyRefused { .. }
            | Self::NotOpen { .. } => WireCode::InternalError,
            Self::CursorTooOld { .. } => WireCode::CursorTooOld,
            Self::ArchiveOutOfRange { .. } | Self::InvalidArgument { .. } => {
                WireCode::ProtocolViolation
            }
        }
    }

    fn reason(&self) -> &str {
        StoreError::reason(self)
    }

    /// Damaged data at rest stays damaged: retrying the same read cannot succeed until an
    /// operator restores the row; nor can a store opened with the wrong integrity key, and a
    /// store that is not open stays so. The transient `INTERNAL_ERROR`s (a failing backend, a
    /// concurrent application) are retryable.
    fn retryable(&self) -> bool {
        !matches!(
            self,
            Self::Corrupt { .. } | Self::IntegrityKeyRefused { .. } | Self::NotOpen { .. }
        ) && self.wire_code().retryable()
    }

    fn fields(&self) -> Fields {
        match self {
            Self::SequenceConflict {
                group,
                expected,
                next,
            } => Fields::new()
                .text("group_id", group.as_str())
                .integer("expected_sequence", int(*expected))
                .integer("next_sequence", int(*next)),
            // §19 error fields `expectedRevision` and `currentRevision`.
            Self::RevisionConflict {
                key,
                expected,
                current,
            } => revision_conflict_fields(key, *expected, *current),
            Self::ActionIdCollision { key } | Self::AlreadyApplied { key, .. } => Fields::new()
                .text("actor_type", key.actor_type.as_str())
                .text("actor_id", key.actor_id.as_str())
                .text("action_id", key.action_id.as_str()),
            // §16: the error field `snapshotArtifactHash`.
            Self::CursorTooOld {
                group,
                after_sequence,
                first_online,
                snapshot,
            } => Fields::new()
                .text("group_id", group.as_str())
                .integer("after_sequence", int(*after_sequence))
                .integer("through_sequence", int(first_online.saturating_sub(1)))
                .text("snapshot_artifact_hash", snapshot.artifact_hash.as_str()),
            Self::ArchiveOutOfRange {
                group,
                before,
                first_online,
                next_sequence,
            } => Fields::new()
                .text("group_id", group.as_str())
                .integer("before", int(*before))
                .integer("first_online", int(*first_online))
                .integer("next_sequence", int(*next_sequence)),
            Self::InvalidArgument { argument, .. } => Fields::new().text("argument", *argument),
            Self::Corrupt { what, locator, .. } => Fields::new()
                .text("stored", *what)
                .text("locator", locator.as_str()),
            Self::IntegrityKeyRefused { .. } => Fields::new().text("argument", "integrity_key"),
            Self::Backend { .. } | Self::NotOpen { .. } => Fields::new(),
        }
    }
}
