//! Replay and Agent-local store errors (§16, §19), each with its §19 wire code and a stable
//! reason slug.

use core::fmt;

use missionweaveprotocol::{DescribeError, ErrorClass, Fields, WireCode};

use missionweaveprotocol_kernel::scheduler::SchedulerError;

/// What went wrong in an Agent-local store (reference `LocalStoreError`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LocalStoreErrorKind {
    /// An empty identifier or an otherwise unusable argument.
    InvalidArgument,
    /// An Event ID already remembered at another `(group, sequence)`, or a position already
    /// held by another Event ID (§16: an Event keeps its position).
    EventPositionCollision,
    /// An outbox Action ID reused with different content (§15.1).
    ActionCollision,
    /// A Group context older than (or as old as, but different from) the stored one.
    StaleRevision,
    /// A checkpoint ID reused with different content (checkpoints are immutable).
    CheckpointCollision,
    /// A replay batch started from another cursor than the stored one (another replay moved
    /// it): nothing was written.
    CursorConflict,
    /// Stored bytes that do not decode (a corrupted or foreign database).
    Corrupt,
    /// The storage backend failed (I/O, locking); nothing of the operation was written.
    Backend,
}

impl LocalStoreErrorKind {
    /// The stable reason slug.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::InvalidArgument => "invalid_argument",
            Self::EventPositionCollision => "event_position_collision",
            Self::ActionCollision => "action_collision",
            Self::StaleRevision => "stale_revision",
            Self::CheckpointCollision => "checkpoint_collision",
            Self::CursorConflict => "cursor_conflict",
            Self::Corrupt => "corrupt",
            Self::Backend => "backend",
        }
    }

    /// The §19 wire code.
    pub const fn code(self) -> WireCode {
        match self {
            Self::InvalidArgument => WireCode::InvalidCommand,
            // The authority sent one Event at two positions: a core invariant is broken (§16).
            Self::EventPositionCollision => WireCode::ProtocolViolation,
            Self::ActionCollision | Self::CheckpointCollision => WireCode::ActionIdCollision,
            Self::StaleRevision | Self::CursorConflict => WireCode::RevisionConflict,
            Self::Corrupt | Self::Backend => WireCode::InternalError,
        }
    }
}

/// An Agent-local store refused or failed an operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalStoreError {
    /// Which rule or failure.
    pub kind: LocalStoreErrorKind,
    /// A readable account.
    pub detail: String,
}

impl LocalStoreError {
    /// An error of `kind`.
    pub fn new(kind: LocalStoreErrorKind, detail: impl Into<String>) -> Self {
        Self {
            kind,
            detail: detail.into(),
        }
    }

    /// The §19 wire code.
    pub const fn code(&self) -> WireCode {
        self.kind.code()
    }

    /// The stable reason slug.
    pub const fn reason(&self) -> &'static str {
        self.kind.as_str()
    }

    /// An empty identifier named `argument`.
    pub fn empty(argument: &str) -> Self {
        Self::new(
            LocalStoreErrorKind::InvalidArgument,
            format!("{argument} must not be empty"),
        )
    }
}

impl fmt::Display for LocalStoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.detail)
    }
}

impl std::error::Error for LocalStoreError {}

/// The reference's exception family of a [`ReplayError`] (`ReplayGroupError`,
/// `ReplaySequenceError`, `ReplayProjectionError`, or the base `ReplayError`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReplayErrorFamily {
    /// Base class only (source, store, scheduler restore).
    Replay,
    /// A Group identifier problem.
    Group,
    /// A sequence or position problem.
    Sequence,
    /// A projection problem.
    Projection,
}

/// A replay stopped. Everything before the failing Event is committed (cursor, inbox rows and
/// Scheduler snapshot together); the failing Event and everything after it are not, so a later
/// reconcile replays them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplayError {
    /// An empty Agent or Group ID (`argument` names which).
    InvalidArgument(&'static str),
    /// The source returned an Event of another Group (§16: route by Group before sequence).
    WrongGroup {
        /// The Group being replayed.
        expected: String,
        /// The Event's Group.
        found: String,
        /// The Event.
        event_id: String,
    },
    /// A Group Event without a sequence (sequence 0): it cannot be ordered (§15.2).
    MissingSequence {
        /// The Group.
        group_id: String,
        /// The Event.
        event_id: String,
    },
    /// `sequence > cursor + 1`: the durable cursor never moves over a gap (§16).
    Gap {
        /// The Group.
        group_id: String,
        /// The cursor (last applied sequence).
        cursor: u64,
        /// The Event's sequence.
        sequence: u64,
        /// The Event.
        event_id: String,
    },
    /// An Event ID already known at another position (§16: dedup by Event ID).
    EventMoved {
        /// The Event.
        event_id: String,
        /// Where it was first seen.
        known_group: String,
        /// Its first sequence.
        known_sequence: u64,
        /// Where it arrived now.
        group_id: String,
        /// Its sequence now.
        sequence: u64,
    },
    /// A `CURSOR_TOO_OLD` snapshot that does not move the cursor forward.
    SnapshotBehindCursor {
        /// The Group.
        group_id: String,
        /// The cursor.
        cursor: u64,
        /// The snapshot's last sequence.
        through_sequence: u64,
    },
    /// A projected WorkOffer collides with an admitted one (same WorkItem ID, other content)
    /// or names no WorkItem/Group.
    Projection {
        /// The Event projected.
        event_id: String,
        /// The offer's WorkItem.
        work_id: String,
        /// Why.
        detail: String,
    },
    /// The projector itself failed.
    Projector {
        /// The Event projected.
        event_id: String,
        /// Its account.
        detail: String,
    },
    /// The replay source failed (`code` is what it reported, e.g. `BACKPRESSURE`).
    Source {
        /// The Group.
        group_id: String,
        /// The §19 code the source gave.
        code: WireCode,
        /// Its account.
        detail: String,
    },
    /// The local store failed or refused the batch (nothing of the batch was written).
    Store(LocalStoreError),
    /// The persisted Scheduler snapshot cannot be restored.
    Scheduler(SchedulerError),
}

impl ReplayError {
    /// The reference exception family.
    pub const fn family(&self) -> ReplayErrorFamily {
        match self {
            Self::InvalidArgument(_) | Self::WrongGroup { .. } => ReplayErrorFamily::Group,
            Self::MissingSequence { .. }
            | Self::Gap { .. }
            | Self::EventMoved { .. }
            | Self::SnapshotBehindCursor { .. } => ReplayErrorFamily::Sequence,
            Self::Projection { .. } | Self::Projector { .. } => ReplayErrorFamily::Projection,
            Self::Source { .. } | Self::Store(_) | Self::Scheduler(_) => ReplayErrorFamily::Replay,
        }
    }

    /// The §19 wire code.
    pub fn code(&self) -> WireCode {
        match self {
            Self::InvalidArgument(_) => WireCode::InvalidCommand,
            // The peer broke the §16 delivery invariants.
            Self::WrongGroup { .. }
            | Self::MissingSequence { .. }
            | Self::Gap { .. }
            | Self::EventMoved { .. }
            | Self::SnapshotBehindCursor { .. } => WireCode::ProtocolViolation,
            // The Worker's own state forbids admitting other content under an admitted ID.
            Self::Projection { .. } => WireCode::InvalidStateTransition,
            Self::Projector { .. } => WireCode::InternalError,
            Self::Source { code, .. } => *code,
            Self::Store(e) => e.code(),
            Self::Scheduler(e) => e.code(),
        }
    }

    /// The stable reason slug.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::InvalidArgument(_) => "invalid_argument",
            Self::WrongGroup { .. } => "wrong_group",
            Self::MissingSequence { .. } => "missing_sequence",
            Self::Gap { .. } => "sequence_gap",
            Self::EventMoved { .. } => "event_moved",
            Self::SnapshotBehindCursor { .. } => "snapshot_behind_cursor",
            Self::Projection { .. } => "projection_collision",
            Self::Projector { .. } => "projector_failed",
            Self::Source { .. } => "source_failed",
            Self::Store(e) => e.reason(),
            Self::Scheduler(e) => e.reason(),
        }
    }

    /// Whether an unchanged retry can succeed (§19).
    pub fn retryable(&self) -> bool {
        self.code().retryable()
    }
}

impl From<LocalStoreError> for ReplayError {
    fn from(e: LocalStoreError) -> Self {
        Self::Store(e)
    }
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidArgument(argument) => write!(f, "{argument} must not be empty"),
            Self::WrongGroup {
                expected,
                found,
                event_id,
            } => write!(
                f,
                "Event {event_id:?} belongs to Group {found:?}, not to the replayed Group {expected:?}"
            ),
            Self::MissingSequence { group_id, event_id } => write!(
                f,
                "Event {event_id:?} of Group {group_id:?} carries no Group sequence"
            ),
            Self::Gap {
                group_id,
                cursor,
                sequence,
                event_id,
            } => write!(
                f,
                "Event {event_id:?} of Group {group_id:?} has sequence {sequence}; the cursor is \
                 {cursor}, so sequence {} is missing",
                cursor + 1
            ),
            Self::EventMoved {
                event_id,
                known_group,
                known_sequence,
                group_id,
                sequence,
            } => write!(
                f,
                "Event {event_id:?} was seen at {known_group:?}#{known_sequence} and now arrives \
                 at {group_id:?}#{sequence}"
            ),
            Self::SnapshotBehindCursor {
                group_id,
                cursor,
                through_sequence,
            } => write!(
                f,
                "the snapshot of Group {group_id:?} ends at sequence {through_sequence}, not \
                 after the cursor {cursor}"
            ),
            Self::Projection {
                event_id,
                work_id,
                detail,
            } => write!(
                f,
                "the projection of Event {event_id:?} offers WorkItem {work_id:?}: {detail}"
            ),
            Self::Projector { event_id, detail } => {
                write!(f, "projecting Event {event_id:?} failed: {detail}")
            }
            Self::Source {
                group_id, detail, ..
            } => write!(f, "replaying Group {group_id:?} failed: {detail}"),
            Self::Store(e) => write!(f, "local store: {e}"),
            Self::Scheduler(e) => write!(f, "Scheduler snapshot: {e}"),
        }
    }
}

impl std::error::Error for ReplayError {}

/// `ErrorClass::LocalStore`: Python `LocalStoreError` (a `ValueError` as the reference's),
/// JavaScript `LocalStoreError`.
impl DescribeError for LocalStoreError {
    fn class(&self) -> ErrorClass {
        ErrorClass::LocalStore
    }

    fn wire_code(&self) -> WireCode {
        self.code()
    }

    fn reason(&self) -> &str {
        LocalStoreError::reason(self)
    }
}

impl ReplayErrorFamily {
    /// The exception class of this family.
    pub const fn class(self) -> ErrorClass {
        match self {
            Self::Replay => ErrorClass::Replay,
            Self::Group => ErrorClass::ReplayGroup,
            Self::Sequence => ErrorClass::ReplaySequence,
            Self::Projection => ErrorClass::ReplayProjection,
        }
    }
}

fn int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// The reference family's class (`ReplayGroupError`, `ReplaySequenceError`,
/// `ReplayProjectionError`, base `ReplayError`); a store refusal or a Scheduler snapshot that
/// cannot be restored is described by the error inside it (`LocalStoreError`,
/// `SchedulerError`), as the reference raises them.
impl DescribeError for ReplayError {
    fn class(&self) -> ErrorClass {
        match self {
            Self::Store(e) => e.class(),
            Self::Scheduler(e) => e.class(),
            _ => self.family().class(),
        }
    }

    fn wire_code(&self) -> WireCode {
        self.code()
    }

    fn reason(&self) -> &str {
        ReplayError::reason(self)
    }

    fn detail(&self) -> String {
        match self {
            Self::Store(e) => e.detail(),
            Self::Scheduler(e) => e.detail(),
            _ => self.to_string(),
        }
    }

    fn fields(&self) -> Fields {
        match self {
            Self::InvalidArgument(argument) => Fields::new().text("argument", *argument),
            Self::WrongGroup {
                expected,
                found,
                event_id,
            } => Fields::new()
                .text("group_id", expected)
                .text("event_group_id", found)
                .text("event_id", event_id),
            Self::MissingSequence { group_id, event_id } => Fields::new()
                .text("group_id", group_id)
                .text("event_id", event_id),
            Self::Gap {
                group_id,
                cursor,
                sequence,
                event_id,
            } => Fields::new()
                .text("group_id", group_id)
                .integer("cursor", int(*cursor))
                .integer("sequence", int(*sequence))
                .text("event_id", event_id),
            Self::EventMoved {
                event_id,
                group_id,
                sequence,
                ..
            } => Fields::new()
                .text("event_id", event_id)
                .text("group_id", group_id)
                .integer("sequence", int(*sequence)),
            Self::SnapshotBehindCursor {
                group_id, cursor, ..
            } => Fields::new()
                .text("group_id", group_id)
                .integer("cursor", int(*cursor)),
            Self::Projection {
                event_id, work_id, ..
            } => Fields::new()
                .text("event_id", event_id)
                .text("work_id", work_id),
            Self::Projector { event_id, .. } => Fields::new().text("event_id", event_id),
            Self::Source { group_id, .. } => Fields::new().text("group_id", group_id),
            Self::Store(e) => e.fields(),
            Self::Scheduler(e) => e.fields(),
        }
    }
}

#[cfg(test)]
mod tests {
    use missionweaveprotocol::{DescribeError, ErrorClass, WireCode};

    use super::{LocalStoreError, LocalStoreErrorKind, ReplayError};
    use missionweaveprotocol_kernel::scheduler::SchedulerError;

    #[test]
    fn replay_families_pick_their_class() {
        let gap = ReplayError::Gap {
            group_id: "g".into(),
            cursor: 1,
            sequence: 3,
            event_id: "e".into(),
        };
        assert_eq!(DescribeError::class(&gap), ErrorClass::ReplaySequence);
        assert_eq!(
            ErrorClass::ReplaySequence.python_name(),
            "ReplaySequenceError"
        );
        assert_eq!(DescribeError::wire_code(&gap), WireCode::ProtocolViolation);
        assert_eq!(DescribeError::reason(&gap), "sequence_gap");
        let wrong = ReplayError::InvalidArgument("group_id");
        assert_eq!(DescribeError::class(&wrong), ErrorClass::ReplayGroup);
        let source = ReplayError::Source {
            group_id: "g".into(),
            code: WireCode::Backpressure,
            detail: "busy".into(),
        };
        assert_eq!(DescribeError::class(&source), ErrorClass::Replay);
        assert_eq!(
            DescribeError::retryable(&source),
            WireCode::Backpressure.retryable()
        );
        let projection = ReplayError::Projector {
            event_id: "e".into(),
            detail: "x".into(),
        };
        assert_eq!(
            DescribeError::class(&projection),
            ErrorClass::ReplayProjection
        );
    }

    #[test]
    fn wrapped_errors_describe_themselves() {
        let store = LocalStoreError::new(LocalStoreErrorKind::CursorConflict, "moved");
        let described: &dyn DescribeError = &store;
        assert_eq!(described.class(), ErrorClass::LocalStore);
        assert_eq!(described.reason(), "cursor_conflict");
        assert_eq!(described.wire_code(), WireCode::RevisionConflict);
        let replay = ReplayError::Store(store.clone());
        assert_eq!(DescribeError::class(&replay), ErrorClass::LocalStore);
        assert_eq!(DescribeError::detail(&replay), "moved");
        let scheduler = SchedulerError::InvalidArgument("policy");
        let replay = ReplayError::Scheduler(scheduler.clone());
        assert_eq!(DescribeError::class(&replay), scheduler.class());
        assert_ne!(DescribeError::class(&replay), ErrorClass::Replay);
    }
}
