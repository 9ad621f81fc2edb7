//! [`HarnessError`]: every failure of the harness (a bad store spec or argument, a refusal of
//! the store or the core, a failed consistency check), each with its §19 wire code through
//! [`DescribeError`].

use core::fmt;

use missionweaveprotocol::{DescribeError, ErrorClass, WireCode};
use missionweaveprotocol_engine::service::CoreError;
use missionweaveprotocol_engine::store::StoreError;

/// Why a harness call failed.
#[derive(Debug, Clone)]
pub enum HarnessError {
    /// An argument (store spec, command-line value) the harness cannot use.
    InvalidArgument {
        /// The argument.
        argument: String,
        /// What is wrong with it.
        detail: String,
    },
    /// The store refused a call.
    Store(StoreError),
    /// The core refused a Command or a query.
    Core(Box<CoreError>),
    /// The core refused this Command (`kind` and Action ID) with `error`.
    Refused {
        /// `<kind> <actionId>`.
        command: String,
        /// The refusal.
        error: Box<CoreError>,
    },
    /// The workload could not be built (a key, the Registry, a signature).
    Workload {
        /// What failed.
        detail: String,
    },
    /// Local I/O outside the store failed (the worker's stdout, the barrier directory).
    Io {
        /// What was being written or read.
        what: String,
        /// The operating system's error.
        detail: String,
    },
    /// A consistency check of a store failed: what the store holds is not what the
    /// Commands performed imply (a missing Event, a gap, a half-applied Command, …).
    Check {
        /// What does not hold.
        detail: String,
    },
}

impl HarnessError {
    /// An [`InvalidArgument`](Self::InvalidArgument).
    pub fn argument(argument: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::InvalidArgument {
            argument: argument.into(),
            detail: detail.into(),
        }
    }

    /// A [`Workload`](Self::Workload) failure.
    pub fn workload(detail: impl Into<String>) -> Self {
        Self::Workload {
            detail: detail.into(),
        }
    }

    /// An [`Io`](Self::Io) failure.
    pub fn io(what: impl Into<String>, error: &std::io::Error) -> Self {
        Self::Io {
            what: what.into(),
            detail: error.to_string(),
        }
    }

    /// A failed [`Check`](Self::Check).
    pub fn check(detail: impl Into<String>) -> Self {
        Self::Check {
            detail: detail.into(),
        }
    }

    /// Whether an unchanged retry can succeed (§19; e.g. `contended`).
    pub fn is_retryable(&self) -> bool {
        DescribeError::retryable(self)
    }
}

impl fmt::Display for HarnessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidArgument { argument, detail } => write!(f, "{argument}: {detail}"),
            Self::Store(e) => write!(f, "store: {e}"),
            Self::Core(e) => write!(f, "core: {} ({})", e.wire_code, e.detail),
            Self::Refused { command, error } => {
                write!(
                    f,
                    "{command} refused: {} ({})",
                    error.wire_code, error.detail
                )
            }
            Self::Workload { detail } => write!(f, "workload: {detail}"),
            Self::Io { what, detail } => write!(f, "{what}: {detail}"),
            Self::Check { detail } => write!(f, "check failed: {detail}"),
        }
    }
}

impl std::error::Error for HarnessError {}

impl DescribeError for HarnessError {
    fn class(&self) -> ErrorClass {
        match self {
            Self::InvalidArgument { .. } => ErrorClass::Argument,
            Self::Store(e) => e.class(),
            Self::Core(e) | Self::Refused { error: e, .. } => e.class(),
            Self::Workload { .. } => ErrorClass::Signing,
            // The persistence family (the store's own class until a store class exists).
            Self::Io { .. } | Self::Check { .. } => ErrorClass::Snapshot,
        }
    }

    fn wire_code(&self) -> WireCode {
        match self {
            Self::InvalidArgument { .. } => WireCode::ProtocolViolation,
            Self::Store(e) => e.wire_code(),
            Self::Core(e) | Self::Refused { error: e, .. } => e.wire_code,
            Self::Workload { .. } | Self::Io { .. } | Self::Check { .. } => WireCode::InternalError,
        }
    }

    fn reason(&self) -> &str {
        match self {
            Self::InvalidArgument { .. } => "invalid_argument",
            Self::Store(e) => e.reason(),
            Self::Core(e) | Self::Refused { error: e, .. } => &e.reason,
            Self::Workload { .. } => "workload",
            Self::Io { .. } => "io",
            Self::Check { .. } => "check_failed",
        }
    }

    fn retryable(&self) -> bool {
        match self {
            Self::Store(e) => e.retryable(),
            Self::Core(e) | Self::Refused { error: e, .. } => e.retryable,
            // A bad argument or a failed check stays so.
            _ => false,
        }
    }
}

impl From<StoreError> for HarnessError {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}

impl From<CoreError> for HarnessError {
    fn from(e: CoreError) -> Self {
        Self::Core(Box::new(e))
    }
}
