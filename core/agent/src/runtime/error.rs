//! Agent runtime errors, each with its §19 wire code.

use missionweaveprotocol::{DescribeError, ErrorClass, Fields, WireCode};

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

/// An epoch or revision as a structured field (they stay JSON safe integers).
fn int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// The one description every binding converts: the reference's four session and context
/// exceptions (`ActiveSessionError`, `StaleSessionEpochError`, `ClosedSessionError`,
/// `StaleContextError`, Python `RuntimeError`s) have a class each; argument and dispatch
/// refusals are `ErrorClass::Agent` (Python `AgentError`, a `ValueError`). The reason is
/// [`AgentError::kind`].
impl DescribeError for AgentError {
    fn class(&self) -> ErrorClass {
        match self {
            Self::ActiveSession { .. } => ErrorClass::ActiveSession,
            Self::StaleSessionEpoch { .. } => ErrorClass::StaleSessionEpoch,
            Self::ClosedSession { .. } => ErrorClass::ClosedSession,
            Self::StaleContext { .. } => ErrorClass::StaleContext,
            Self::NotDispatched { .. } | Self::InvalidArgument(_) => ErrorClass::Agent,
        }
    }

    fn wire_code(&self) -> WireCode {
        self.code()
    }

    fn reason(&self) -> &str {
        self.kind()
    }

    fn fields(&self) -> Fields {
        match self {
            Self::ActiveSession { active_epoch } => {
                Fields::new().integer("active_epoch", int(*active_epoch))
            }
            Self::StaleSessionEpoch { offered, last } => Fields::new()
                .integer("offered", int(*offered))
                .integer("last", int(*last)),
            Self::ClosedSession { session_id } => Fields::new().text("session_id", session_id),
            Self::StaleContext {
                group_id,
                offered,
                current,
            } => Fields::new()
                .text("group_id", group_id)
                .integer("offered", int(*offered))
                .integer("current", int(*current)),
            Self::NotDispatched { work_id } => Fields::new().text("work_id", work_id),
            Self::InvalidArgument(name) => Fields::new().text("argument", *name),
        }
    }
}

#[cfg(test)]
mod tests {
    use missionweaveprotocol::{DescribeError, ErrorClass, FieldValue};

    use super::AgentError;

    #[test]
    fn session_refusals_have_their_reference_class() {
        let cases = [
            (
                AgentError::ActiveSession { active_epoch: 2 },
                ErrorClass::ActiveSession,
                "ActiveSessionError",
            ),
            (
                AgentError::StaleSessionEpoch {
                    offered: 1,
                    last: 3,
                },
                ErrorClass::StaleSessionEpoch,
                "StaleSessionEpochError",
            ),
            (
                AgentError::ClosedSession {
                    session_id: "s".into(),
                },
                ErrorClass::ClosedSession,
                "ClosedSessionError",
            ),
            (
                AgentError::StaleContext {
                    group_id: "g".into(),
                    offered: 1,
                    current: 1,
                },
                ErrorClass::StaleContext,
                "StaleContextError",
            ),
        ];
        for (error, class, python) in cases {
            let described: &dyn DescribeError = &error;
            assert_eq!(described.class(), class);
            assert_eq!(class.python_name(), python);
            assert_eq!(class.js_name(), python);
            assert_eq!(described.wire_code(), error.code());
            assert_eq!(described.reason(), error.kind());
            assert_eq!(described.detail(), error.to_string());
            assert!(!described.fields().is_empty());
        }
    }

    #[test]
    fn argument_and_dispatch_refusals_are_the_agent_class() {
        let error = AgentError::NotDispatched {
            work_id: "w".into(),
        };
        let described: &dyn DescribeError = &error;
        assert_eq!(described.class(), ErrorClass::Agent);
        assert_ne!(described.class(), ErrorClass::ActiveSession);
        assert_eq!(
            described.fields().get("work_id"),
            Some(&FieldValue::Text("w".into()))
        );
        let error = AgentError::InvalidArgument("agent_id");
        assert_eq!(DescribeError::class(&error), ErrorClass::Agent);
        assert_eq!(DescribeError::reason(&error), "invalid_argument");
        assert_eq!(ErrorClass::parse("agent"), Some(ErrorClass::Agent));
    }
}
