//! What a client [`Session`](super::Session) hands its host, and its refusals.

use core::fmt;

use missionweaveprotocol::json::Value;
use missionweaveprotocol::wire::FrameError;

use crate::frames::ErrorBody;

/// The session token of `server_accept` (§6.3). Secret to the Agent: `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct SessionToken(pub(crate) String);

impl SessionToken {
    /// The token text (for the host's own use; never log it).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SessionToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SessionToken(<redacted>)")
    }
}

/// A verified Event handed to the host.
#[derive(Debug, Clone, PartialEq)]
pub struct DeliveredEvent {
    /// Its Group (`None` for an Organization-scoped Event, §15.2).
    pub group_id: Option<String>,
    /// Its Group sequence (0 when Organization-scoped).
    pub sequence: u64,
    /// Its Event ID.
    pub event_id: String,
    /// The signed Event exactly as received.
    pub bytes: Vec<u8>,
    /// The verified document.
    pub document: Value,
    /// `true`: the next Event of its Group in order; the Group's Cursor now is `sequence`,
    /// and the host may process it durably and acknowledge it. `false`: delivered outside the
    /// Group's order (a live attention Event past a gap the filter left, or an Event of a
    /// Group this session does not subscribe to): the host must not move its durable Cursor
    /// for it (§16).
    pub in_order: bool,
}

/// A sent Command, to match its outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandTicket {
    /// The `COMMAND` frame's ID (`relatedFrameId` of its error, if any).
    pub frame_id: String,
    /// The Command's Action ID (its Events carry it as `cause.id`).
    pub action_id: String,
}

/// What happened, for the host.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionEvent {
    /// `server_accept`: the session is open at this Session Epoch (§6.3); Agent Commands must
    /// carry it.
    Authenticated {
        /// The new Session Epoch.
        session_epoch: u64,
        /// The token.
        session_token: SessionToken,
        /// `expiresAt` of the token.
        expires_at: String,
    },
    /// The server refused the handshake; a new session is needed.
    HandshakeFailed(ErrorBody),
    /// A verified Event.
    Event(DeliveredEvent),
    /// A sent Command was applied: its first Event arrived (`cause.id` = its Action ID).
    CommandAccepted {
        /// The ticket.
        ticket: CommandTicket,
        /// The Event's ID.
        event_id: String,
        /// The Event's Group.
        group_id: Option<String>,
        /// The Event's sequence.
        sequence: u64,
    },
    /// A sent Command was refused (`relatedFrameId`); nothing was applied.
    CommandRefused {
        /// The ticket.
        ticket: CommandTicket,
        /// The error.
        error: ErrorBody,
    },
    /// No outcome within `ClientConfig::command_timeout_ms`.
    CommandTimedOut(CommandTicket),
    /// `CURSOR_TOO_OLD` (§16): restore the snapshot, verify it, subscribe after its
    /// `throughSequence`.
    CursorTooOld {
        /// The Group (no longer subscribed).
        group_id: String,
        /// The signed snapshot to restore.
        snapshot_artifact_hash: Option<String>,
    },
    /// A Group's out-of-order buffer is full: later Events are dropped until the gap fills;
    /// resubscribing from the Cursor brings them again.
    Gap {
        /// The Group.
        group_id: String,
        /// Its Cursor.
        cursor: u64,
    },
    /// An Event that failed verification or contradicts what was seen (an Event ID at two
    /// positions, two Events at one position): dropped.
    Rejected {
        /// Its Event ID, when readable.
        event_id: Option<String>,
        /// Why.
        reason: String,
    },
    /// Any other `ERROR` (a Group refused at subscription, `BACKPRESSURE`, …).
    Error(ErrorBody),
    /// The reply to one of our `PING`s.
    Pong {
        /// Our nonce.
        nonce: String,
    },
}

/// A call the session refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientError {
    /// The host's random source failed (frame IDs, nonces).
    RandomUnavailable,
    /// `start` was already called.
    AlreadyStarted,
    /// Not authenticated (yet, or the handshake failed).
    NotAuthenticated,
    /// A frame could not be built or the server sent one that is not a frame.
    Frame(FrameError),
    /// The server broke the protocol (a frame out of place).
    Protocol(String),
    /// The bytes are not a Command with an Action ID.
    NotACommand,
    /// `ClientConfig::max_pending_commands` Commands await an outcome.
    TooManyPendingCommands,
    /// An acknowledgement past the Group's contiguous Cursor (§16: never over a gap).
    AckBeyondCursor {
        /// The Group.
        group_id: String,
        /// Its Cursor.
        cursor: u64,
    },
    /// The Group is not subscribed by this session.
    UnknownGroup(String),
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::RandomUnavailable => f.write_str("no randomness available from the host"),
            Self::AlreadyStarted => f.write_str("the session was already started"),
            Self::NotAuthenticated => f.write_str("the session is not authenticated"),
            Self::Frame(error) => write!(f, "frame: {error}"),
            Self::Protocol(what) => write!(f, "the server broke the protocol: {what}"),
            Self::NotACommand => f.write_str("the bytes are not a Command with an actionId"),
            Self::TooManyPendingCommands => f.write_str("too many Commands await an outcome"),
            Self::AckBeyondCursor { group_id, cursor } => {
                write!(f, "cannot acknowledge {group_id} past its Cursor {cursor}")
            }
            Self::UnknownGroup(group) => write!(f, "{group} is not subscribed"),
        }
    }
}

impl std::error::Error for ClientError {}

impl From<FrameError> for ClientError {
    fn from(error: FrameError) -> Self {
        Self::Frame(error)
    }
}
