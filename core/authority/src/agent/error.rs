//! Agent runtime errors, each with its §19 wire code.

use missionweaveprotocol::WireCode;

/// Why the Agent runtime refused (reference `agent.py` exceptions plus argument errors).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AgentError {
    /// A session is already active (`ActiveSessionError`): one runtime, one session (§6.3).
    ActiveSession {
        /// The active session's epoch.
        active_epoch: u64,
    },
    /// The offered Session Epoch is not above the last one (`StaleSessionEpochError`, §6.3).
    StaleSessionEpoch {
        /// The epoch offered.
        offered: u64,
        /// The highest epoch already used.
        last: u64,
    },
    /// The session is closed or was never this runtime's active one (`ClosedSessionError`).
    ClosedSession {
        /// The session's ID.
        session_id: String,
    },
    /// A Group context or credential set with a revision not above the installed one
    /// (`StaleContextError`).
    StaleContext {
        /// The Group.
        group_id: String,
        /// The revision offered.
        offered: u64,
        /// The installed revision.
        current: u64,
    },
    /// The dispatch is not a run the Scheduler has running (wrong generation, unknown or not
    /// running work, or a Group other than the one the work was admitted under).
    NotDispatched {
        /// The WorkItem named by the dispatch.
        work_id: String,
    },
    /// A malformed argument (the name says which).
    InvalidArgument(&'static str),
}

impl AgentError {
    /// The §19 wire code.
    pub const fn code(&self) -> WireCode {
        match self {
            Self::ActiveSession { .. } | Self::NotDispatched { .. } => {
                WireCode::InvalidStateTransition
            }
            Self::StaleSessionEpoch { .. } => WireCode::AuthStaleSession,
            Self::ClosedSession { .. } => WireCode::AuthRequired,
            Self::StaleContext { .. } => WireCode::RevisionConflict,
            Self::InvalidArgument(_) => WireCode::InvalidCommand,
        }
    }

    /// The reference exception family: `active_session`, `stale_session_epoch`,
    /// `closed_session`, `stale_context`, `not_dispatched`, `invalid_argument`.
    pub const fn kind(&self) -> &'static str {
        match self {
            Self::ActiveSession { .. } => "active_session",
            Self::StaleSessionEpoch { .. } => "stale_session_epoch",
            Self::ClosedSession { .. } => "closed_session",
            Self::StaleContext { .. } => "stale_context",
            Self::NotDispatched { .. } => "not_dispatched",
            Self::InvalidArgument(_) => "invalid_argument",
        }
    }
}

impl core::fmt::Display for AgentError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::ActiveSession { active_epoch } => {
                write!(f, "session epoch {active_epoch} is still active")
            }
            Self::StaleSessionEpoch { offered, last } => write!(
                f,
                "session epoch {offered} is stale: epochs must exceed {last}"
            ),
            Self::ClosedSession { session_id } => write!(f, "session {session_id} is closed"),
            Self::StaleContext {
                group_id,
                offered,
                current,
            } => write!(
                f,
                "revision {offered} for Group {group_id} is stale: revision {current} is installed"
            ),
            Self::NotDispatched { work_id } => {
                write!(f, "{work_id} is not a running dispatch of this Scheduler")
            }
            Self::InvalidArgument(name) => write!(f, "invalid argument: {name}"),
        }
    }
}

impl std::error::Error for AgentError {}
