//! Why a human control operation could not be built (`reference-python.md` §1.6: the
//! reference raises `ValueError`). Class [`ErrorClass::Argument`], so every binding shows the
//! reference's `ValueError` family (Python `InvalidInputError`, JavaScript `ArgumentError`)
//! without a table of its own.

use missionweaveprotocol::{DescribeError, ErrorClass, Fields, WireCode};

/// A refused control operation: nothing was signed or performed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ControlError {
    /// The operation name is not one of the seven.
    UnknownOperation(String),
    /// A required argument or projection is absent.
    Missing {
        /// The argument (`args.feedback`, `mission`, …).
        name: String,
    },
    /// An argument or projection member has the wrong type or shape.
    Invalid {
        /// The argument.
        name: String,
        /// What it must be.
        expected: &'static str,
    },
    /// `request_changes` / `approve` while the Mission awaits no approval (the reference's
    /// "nothing submitted" `ValueError`; §7.3: an Approval binds a submitted revision).
    NothingSubmitted {
        /// The Mission.
        mission_id: String,
        /// Its state.
        state: String,
    },
    /// `create` without a budget (§12: budgets are mandatory; the reference allowed none).
    BudgetRequired,
    /// `create` with an empty Definition of Done (`mission.schema.json`: at least one).
    EmptyDefinitionOfDone,
}

impl ControlError {
    pub(crate) fn missing(name: impl Into<String>) -> Self {
        Self::Missing { name: name.into() }
    }

    pub(crate) fn invalid(name: impl Into<String>, expected: &'static str) -> Self {
        Self::Invalid {
            name: name.into(),
            expected,
        }
    }
}

impl core::fmt::Display for ControlError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::UnknownOperation(name) => write!(
                f,
                "unknown control operation {name:?} (create, direct, request_changes, approve, \
                 approve_execution, cancel, replace_coordinator)"
            ),
            Self::Missing { name } => write!(f, "{name} is required"),
            Self::Invalid { name, expected } => write!(f, "{name} must be {expected}"),
            Self::NothingSubmitted { mission_id, state } => write!(
                f,
                "Mission {mission_id} has nothing submitted for approval (state {state})"
            ),
            Self::BudgetRequired => {
                f.write_str("a Mission needs a budget (§12: budgets are mandatory)")
            }
            Self::EmptyDefinitionOfDone => {
                f.write_str("the Definition of Done needs at least one criterion")
            }
        }
    }
}

impl std::error::Error for ControlError {}

impl DescribeError for ControlError {
    fn class(&self) -> ErrorClass {
        ErrorClass::Argument
    }

    fn wire_code(&self) -> WireCode {
        match self {
            Self::NothingSubmitted { .. } => WireCode::InvalidStateTransition,
            _ => WireCode::InvalidCommand,
        }
    }

    fn reason(&self) -> &str {
        match self {
            Self::UnknownOperation(_) => "unknown_operation",
            Self::Missing { .. } => "missing_argument",
            Self::Invalid { .. } => "invalid_argument",
            Self::NothingSubmitted { .. } => "nothing_submitted",
            Self::BudgetRequired => "budget_required",
            Self::EmptyDefinitionOfDone => "empty_definition_of_done",
        }
    }

    fn fields(&self) -> Fields {
        let f = Fields::new();
        match self {
            Self::UnknownOperation(name) => f.text("operation", name.as_str()),
            Self::Missing { name } | Self::Invalid { name, .. } => {
                f.text("argument", name.as_str())
            }
            Self::NothingSubmitted { mission_id, state } => f
                .text("mission_id", mission_id.as_str())
                .text("state", state.as_str()),
            Self::BudgetRequired | Self::EmptyDefinitionOfDone => f,
        }
    }
}
