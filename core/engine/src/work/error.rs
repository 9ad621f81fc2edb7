//! [`WorkError`]: why a WorkItem decision was refused, with its §19 code and a stable reason slug.

use core::fmt;

use missionweaveprotocol::schema::SchemaIssue;
use missionweaveprotocol::{DescribeError, ErrorClass, Fields, WireCode};

use super::state::WorkItemState;
use missionweaveprotocol_kernel::lease::LeaseError;

/// Why a WorkItem Command was refused. Nothing of the transition is applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorkError {
    /// §10.2: the table has no row for this Command from this state.
    InvalidTransition {
        /// The Command kind.
        command: &'static str,
        /// The current state (`None`: no WorkItem).
        from: Option<WorkItemState>,
    },
    /// The aggregate already exists (`work.authorize` of a known ID, a reused proposal).
    AlreadyExists(&'static str),
    /// §10.2 `work.offer`: the current owner's lease is still live.
    LiveOwner,
    /// §10.1: a required Work Contract field is missing or empty (the field says which).
    ContractIncomplete(&'static str),
    /// The Work Contract does not conform to `work-contract.schema.json`.
    ContractSchema(SchemaIssue),
    /// A Command input is well-formed but semantically invalid (field, why).
    InvalidInput(&'static str, &'static str),
    /// §10.2 "offer expiry": the offer is past `expiresAt`.
    OfferExpired,
    /// §10.3: another candidate won exclusive ownership.
    AlreadyOwned,
    /// The acting Agent holds no offer for this WorkItem.
    NotOffered,
    /// The acting Agent is not the owner.
    NotOwner,
    /// §4.5, §11.5: the Command's Ownership Epoch is fenced.
    StaleOwnership {
        /// The epoch the Command carries.
        claimed: u64,
        /// The current epoch.
        current: u64,
    },
    /// A lease refused the claim or the operation (§11.3).
    Lease(LeaseError),
    /// §12: execution approval required by the contract is not granted.
    ApprovalRequired,
    /// §10.4: a dependency is not `verified` yet (its ID).
    DependencyNotReady(String),
    /// §10.4: the dependency is not a known WorkItem of the graph (its ID).
    UnknownDependency(String),
    /// §10.4: inserting the edge would close a cycle (the cycle's path).
    DependencyCycle(Vec<String>),
    /// §13.2: no submitted Evidence maps to this acceptance criterion.
    CriterionNotCovered(String),
    /// §13.2: review found a required Evidence type without a passing result (criterion, type).
    CriterionNotSatisfied(String, String),
    /// Evidence names another WorkItem or an unknown criterion (its ID).
    EvidenceMismatch(String),
    /// A stored aggregate document is malformed (the member says where).
    Document(&'static str),
}

impl WorkError {
    /// The §19 wire code.
    pub fn code(&self) -> WireCode {
        match self {
            Self::InvalidTransition { .. } | Self::AlreadyExists(_) | Self::LiveOwner => {
                WireCode::InvalidStateTransition
            }
            Self::ContractIncomplete(_) => WireCode::WorkContractIncomplete,
            Self::ContractSchema(_) | Self::Document(_) => WireCode::SchemaValidationFailed,
            Self::InvalidInput(..)
            | Self::DependencyNotReady(_)
            | Self::UnknownDependency(_)
            | Self::DependencyCycle(_)
            | Self::CriterionNotCovered(_)
            | Self::CriterionNotSatisfied(..)
            | Self::EvidenceMismatch(_) => WireCode::InvalidCommand,
            Self::OfferExpired => WireCode::WorkOfferExpired,
            Self::AlreadyOwned => WireCode::WorkAlreadyOwned,
            Self::NotOffered | Self::NotOwner => WireCode::AuthForbidden,
            Self::StaleOwnership { .. } => WireCode::WorkStaleOwnership,
            Self::Lease(error) => error.code(),
            Self::ApprovalRequired => WireCode::ApprovalRequired,
        }
    }

    /// The stable reason slug (snake_case, like the rest of this layer).
    pub fn reason(&self) -> &'static str {
        match self {
            Self::InvalidTransition { .. } => "invalid_transition",
            Self::AlreadyExists(_) => "already_exists",
            Self::LiveOwner => "owner_live",
            Self::ContractIncomplete(_) => "contract_incomplete",
            Self::ContractSchema(_) => "contract_schema",
            Self::InvalidInput(..) => "invalid_input",
            Self::OfferExpired => "offer_expired",
            Self::AlreadyOwned => "already_owned",
            Self::NotOffered => "not_offered",
            Self::NotOwner => "not_owner",
            Self::StaleOwnership { .. } => "stale_ownership",
            Self::Lease(error) => error.reason(),
            Self::ApprovalRequired => "execution_approval_required",
            Self::DependencyNotReady(_) => "dependency_not_ready",
            Self::UnknownDependency(_) => "unknown_dependency",
            Self::DependencyCycle(_) => "dependency_cycle",
            Self::CriterionNotCovered(_) => "criterion_not_covered",
            Self::CriterionNotSatisfied(..) => "criterion_not_satisfied",
            Self::EvidenceMismatch(_) => "evidence_mismatch",
            Self::Document(_) => "invalid_document",
        }
    }
}

impl From<LeaseError> for WorkError {
    fn from(error: LeaseError) -> Self {
        Self::Lease(error)
    }
}

impl fmt::Display for WorkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidTransition { command, from } => match from {
                Some(state) => write!(
                    f,
                    "{command} is not permitted from state {}",
                    state.as_str()
                ),
                None => write!(f, "{command} is not permitted: no such WorkItem"),
            },
            Self::AlreadyExists(what) => write!(f, "the {what} already exists"),
            Self::LiveOwner => {
                f.write_str("the WorkItem has a live owner; it cannot be re-offered")
            }
            Self::ContractIncomplete(field) => {
                write!(f, "the Work Contract lacks required information: {field}")
            }
            Self::ContractSchema(issue) => write!(f, "the Work Contract is invalid: {issue}"),
            Self::InvalidInput(field, why) => write!(f, "invalid {field}: {why}"),
            Self::OfferExpired => f.write_str("the offer has expired"),
            Self::AlreadyOwned => f.write_str("another candidate won exclusive ownership"),
            Self::NotOffered => f.write_str("the acting Agent holds no offer for this WorkItem"),
            Self::NotOwner => f.write_str("the acting Agent does not own this WorkItem"),
            Self::StaleOwnership { claimed, current } => write!(
                f,
                "Ownership Epoch {claimed} is fenced; the current epoch is {current}"
            ),
            Self::Lease(error) => error.fmt(f),
            Self::ApprovalRequired => {
                f.write_str("the Work Contract requires an execution approval that is not granted")
            }
            Self::DependencyNotReady(id) => write!(f, "dependency {id} is not verified yet"),
            Self::UnknownDependency(id) => write!(f, "dependency {id} is not a known WorkItem"),
            Self::DependencyCycle(path) => {
                write!(
                    f,
                    "the dependency would close a cycle: {}",
                    path.join(" -> ")
                )
            }
            Self::CriterionNotCovered(id) => {
                write!(f, "no submitted Evidence maps to acceptance criterion {id}")
            }
            Self::CriterionNotSatisfied(id, kind) => {
                write!(f, "acceptance criterion {id} lacks passing {kind} Evidence")
            }
            Self::EvidenceMismatch(id) => write!(
                f,
                "Evidence {id} names another WorkItem or an unknown acceptance criterion"
            ),
            Self::Document(member) => write!(f, "malformed WorkItem document at {member}"),
        }
    }
}

impl std::error::Error for WorkError {}

impl DescribeError for WorkError {
    fn class(&self) -> ErrorClass {
        // There is no WorkItem class in `ErrorClass` yet (core/protocol is outside this slice):
        // lease and epoch fencing report as `Lease`, everything else as `SchedulerState`
        // ("a call does not fit the WorkItem's state").
        match self {
            Self::Lease(_) | Self::StaleOwnership { .. } => ErrorClass::Lease,
            Self::ContractSchema(_) | Self::Document(_) => ErrorClass::Schema,
            _ => ErrorClass::SchedulerState,
        }
    }
    fn wire_code(&self) -> WireCode {
        self.code()
    }
    fn reason(&self) -> &str {
        WorkError::reason(self)
    }
    fn fields(&self) -> Fields {
        match self {
            Self::InvalidTransition { command, from } => Fields::new()
                .text("command", *command)
                .opt_text("state", from.map(WorkItemState::as_str)),
            Self::AlreadyExists(what) => Fields::new().text("aggregate", *what),
            Self::ContractIncomplete(field) | Self::InvalidInput(field, _) => {
                Fields::new().text("field", *field)
            }
            Self::ContractSchema(issue) => Fields::new().text("path", issue.instance_path.clone()),
            Self::StaleOwnership { claimed, current } => Fields::new()
                .integer("claimed_epoch", i64::try_from(*claimed).unwrap_or(i64::MAX))
                .integer("current_epoch", i64::try_from(*current).unwrap_or(i64::MAX)),
            Self::Lease(error) => error.fields(),
            Self::DependencyNotReady(id)
            | Self::UnknownDependency(id)
            | Self::EvidenceMismatch(id) => Fields::new().text("id", id.clone()),
            Self::DependencyCycle(path) => Fields::new().text("cycle", path.join(" -> ")),
            Self::CriterionNotCovered(id) => Fields::new().text("criterion", id.clone()),
            Self::CriterionNotSatisfied(id, kind) => Fields::new()
                .text("criterion", id.clone())
                .text("evidence_type", kind.clone()),
            Self::Document(member) => Fields::new().text("member", *member),
            _ => Fields::new(),
        }
    }
}
