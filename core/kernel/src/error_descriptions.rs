//! Readable messages and [`DescribeError`] for the authority layer's errors (§9.1, §11, §12).
//!
//! The messages are written here once; every binding shows them unchanged. Reason slugs are
//! snake_case, as the reference runtime's vocabularies in this layer are (`DelegationViolationKind`,
//! `RetrySchedule.reason`).

use core::fmt;

use missionweaveprotocol::json::ParseError;
use missionweaveprotocol::{DescribeError, ErrorClass, Fields, Stage, WireCode};

use crate::budget::{AccountId, AccountKind, BudgetError};
use crate::delegation::DelegationViolation;
use crate::lease::{LeaseDocumentError, LeaseError};
use crate::retry::RetryError;
use crate::scheduler::SchedulerError;
use crate::snapshot_json::SnapshotFormatError;

// ---- leases (§11.3) -----------------------------------------------------------------------

impl LeaseError {
    /// The stable reason slug.
    pub const fn reason(&self) -> &'static str {
        match self {
            Self::InvalidField(_) => "invalid_field",
            Self::InvalidWindow => "invalid_window",
            Self::Expired => "expired",
            Self::Closed(_) => "closed",
            Self::ClosureConflict => "closure_conflict",
            Self::NonMonotonicRenewal => "non_monotonic_renewal",
            Self::NotExtending => "not_extending",
            Self::StaleLease => "stale_lease",
            Self::StaleOwnership => "stale_ownership",
            Self::StaleSession => "stale_session",
            Self::StaleCoordinator => "stale_coordinator",
            Self::WrongHolder => "wrong_holder",
            Self::UnrenderableTimestamp => "unrenderable_timestamp",
        }
    }
}

impl fmt::Display for LeaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidField(field) => write!(f, "invalid {field}"),
            Self::InvalidWindow => f.write_str(
                "the instants do not satisfy issuedAt ≤ startsAt < expiresAt (or a deadline lies \
                 outside the window, or the time is before the lease starts)",
            ),
            Self::Expired => f.write_str("the lease has expired"),
            Self::Closed(state) => write!(f, "the lease is already {}", state.as_str()),
            Self::ClosureConflict => {
                f.write_str("the lease is already closed differently; closure is immutable")
            }
            Self::NonMonotonicRenewal => f.write_str(
                "a renewal must be strictly after the previous one and not before the start",
            ),
            Self::NotExtending => f.write_str(
                "a renewal must strictly extend expiresAt and stay within the grace bound",
            ),
            Self::StaleLease => f.write_str("the Command cites another Lease ID"),
            Self::StaleOwnership => f.write_str("the Command's Ownership Epoch is fenced"),
            Self::StaleSession => f.write_str("the Command's Session Epoch is fenced"),
            Self::StaleCoordinator => f.write_str("the Command's Coordinator Epoch is fenced"),
            Self::WrongHolder => f.write_str("the acting Agent does not hold the lease"),
            Self::UnrenderableTimestamp => f.write_str("a timestamp lies outside years 0001-9999"),
        }
    }
}

impl std::error::Error for LeaseError {}

impl DescribeError for LeaseError {
    fn class(&self) -> ErrorClass {
        ErrorClass::Lease
    }
    fn wire_code(&self) -> WireCode {
        self.code()
    }
    fn reason(&self) -> &str {
        LeaseError::reason(self)
    }
    fn fields(&self) -> Fields {
        match self {
            Self::InvalidField(field) => Fields::new().text("field", *field),
            Self::Closed(state) => Fields::new().text("state", state.as_str()),
            _ => Fields::new(),
        }
    }
}

/// A lease document that cannot be read back describes itself as the error it wraps: a parse
/// error, a schema issue, or the lease rule it breaks.
impl DescribeError for LeaseDocumentError {
    fn class(&self) -> ErrorClass {
        match self {
            Self::Parse(e) => e.class(),
            Self::Schema(e) => e.class(),
            Self::Precision(_) | Self::Inconsistent(_) => ErrorClass::Lease,
        }
    }
    fn wire_code(&self) -> WireCode {
        self.code()
    }
    fn reason(&self) -> &str {
        match self {
            Self::Parse(e) => DescribeError::reason(e),
            Self::Schema(e) => DescribeError::reason(e),
            Self::Precision(_) => "invalid_field",
            Self::Inconsistent(e) => LeaseError::reason(e),
        }
    }
    fn stage(&self) -> Option<Stage> {
        match self {
            Self::Parse(e) => e.stage(),
            Self::Schema(e) => e.stage(),
            _ => None,
        }
    }
    fn fields(&self) -> Fields {
        match self {
            Self::Parse(e) => <ParseError as DescribeError>::fields(e),
            Self::Schema(e) => e.fields(),
            Self::Precision(field) => Fields::new().text("field", *field),
            Self::Inconsistent(e) => e.fields(),
        }
    }
}

// ---- the budget ledger (§12) --------------------------------------------------------------

impl AccountKind {
    const fn title(self) -> &'static str {
        match self {
            Self::Mission => "Mission",
            Self::WorkItem => "WorkItem",
        }
    }
}

missionweaveprotocol::spelling!(AccountKind {
    Mission => "mission",
    WorkItem => "work_item",
});

impl BudgetError {
    /// The stable reason slug.
    pub const fn reason(&self) -> &'static str {
        match self {
            Self::Exceeded { .. } => "exceeded",
            Self::AllocationExceeded { .. } => "allocation_exceeded",
            Self::UnknownAccount(_) => "unknown_account",
            Self::Duplicate(_) => "duplicate",
            Self::CrossMissionParent(_) => "cross_mission_parent",
            Self::Currency(_) => "currency",
            Self::UnsafeInteger(_) => "unsafe_integer",
            Self::ZeroDelta => "zero_delta",
            Self::Malformed(_) => "malformed_budget",
            Self::Cycle(_) => "cycle",
            Self::CorruptTotals(_) => "corrupt_totals",
        }
    }

    /// The account the error is about, if any.
    pub fn account(&self) -> Option<&AccountId> {
        match self {
            Self::Exceeded { account, .. } => Some(account),
            Self::AllocationExceeded { parent, .. } => Some(parent),
            Self::UnknownAccount(a)
            | Self::Duplicate(a)
            | Self::CrossMissionParent(a)
            | Self::Currency(a)
            | Self::Malformed(a)
            | Self::Cycle(a)
            | Self::CorruptTotals(a) => Some(a),
            Self::UnsafeInteger(_) | Self::ZeroDelta => None,
        }
    }
}

impl fmt::Display for BudgetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Exceeded { account, dimension } => write!(
                f,
                "charging would exceed the {} limit of {} {:?}",
                dimension.as_str(),
                account.kind.title(),
                account.id
            ),
            Self::AllocationExceeded { parent, dimension } => write!(
                f,
                "the {} limit does not fit in what {} {:?} has left unreserved",
                dimension.as_str(),
                parent.kind.title(),
                parent.id
            ),
            Self::UnknownAccount(a) => write!(f, "no {} {:?}", a.kind.title(), a.id),
            Self::Duplicate(a) => {
                write!(f, "{} {:?} is already registered", a.kind.title(), a.id)
            }
            Self::CrossMissionParent(a) => write!(
                f,
                "the parent WorkItem of {:?} belongs to another Mission",
                a.id
            ),
            Self::Currency(a) => write!(
                f,
                "{} {:?}: a financial limit needs a currency, and a child Mission must use its \
                 parent's",
                a.kind.title(),
                a.id
            ),
            Self::UnsafeInteger(d) => write!(f, "{} exceeds 2^53 - 1", d.as_str()),
            Self::ZeroDelta => f.write_str("a usage record must carry a nonzero delta"),
            Self::Malformed(a) => write!(
                f,
                "the budget of {} {:?} cannot be read exactly (financial limits count whole \
                 micro-units, other limits whole units)",
                a.kind.title(),
                a.id
            ),
            Self::Cycle(a) => write!(
                f,
                "the snapshot's parent links form a cycle through {:?}",
                a.id
            ),
            Self::CorruptTotals(a) => {
                write!(f, "the snapshot's totals are inconsistent at {:?}", a.id)
            }
        }
    }
}

impl std::error::Error for BudgetError {}

impl DescribeError for BudgetError {
    fn class(&self) -> ErrorClass {
        match self {
            Self::Exceeded { .. } | Self::AllocationExceeded { .. } => ErrorClass::BudgetExceeded,
            _ => ErrorClass::Budget,
        }
    }
    fn wire_code(&self) -> WireCode {
        self.code()
    }
    fn reason(&self) -> &str {
        BudgetError::reason(self)
    }
    fn fields(&self) -> Fields {
        let dimension = match self {
            Self::Exceeded { dimension, .. } | Self::AllocationExceeded { dimension, .. } => {
                Some(dimension.as_str())
            }
            Self::UnsafeInteger(d) => Some(d.as_str()),
            _ => None,
        };
        let fields = Fields::new().opt_text("dimension", dimension);
        match self.account() {
            Some(a) => fields.account("account", a.kind.as_str(), &a.id),
            None => fields,
        }
    }
}

// ---- Delegation Grants (§9.1) -------------------------------------------------------------

impl fmt::Display for DelegationViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DelegationViolation {}

impl DescribeError for DelegationViolation {
    fn class(&self) -> ErrorClass {
        ErrorClass::Delegation
    }
    fn wire_code(&self) -> WireCode {
        self.code()
    }
    /// The reference's `DelegationViolationKind` value.
    fn reason(&self) -> &str {
        self.kind.as_str()
    }
    fn fields(&self) -> Fields {
        Fields::new()
            .text("kind", self.kind.as_str())
            .opt_text("dimension", self.dimension.map(|d| d.as_str()))
            .flag("invalidates", self.kind.invalidates())
    }
}

// ---- retries (§11.4) ----------------------------------------------------------------------

impl RetryError {
    /// The stable reason slug (for a finished loop, the reason it finished).
    pub const fn reason(&self) -> &'static str {
        match self {
            Self::InvalidArgument(_) => "invalid_argument",
            Self::AttemptInFlight => "attempt_in_flight",
            Self::NoAttemptInFlight => "no_attempt_in_flight",
            Self::Finished(reason) => reason.as_str(),
            Self::BackoffPending(_) => "backoff_pending",
            Self::DeadlineExhausted => "deadline_exhausted",
            Self::BudgetExceeded(_) => "budget_exceeded",
        }
    }

    /// True when the retry loop is over for good (the reference's `RetryExhausted`).
    pub const fn exhausted(&self) -> bool {
        match self {
            Self::Finished(reason) => reason.is_failure(),
            Self::DeadlineExhausted => true,
            _ => false,
        }
    }
}

impl fmt::Display for RetryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidArgument(field) => write!(f, "invalid {field}"),
            Self::AttemptInFlight => f.write_str("an attempt is already running"),
            Self::NoAttemptInFlight => f.write_str("no attempt is running"),
            Self::Finished(reason) => write!(f, "the retry loop ended: {}", reason.as_str()),
            Self::BackoffPending(at) => write!(f, "the next attempt may start at {at}"),
            Self::DeadlineExhausted => f.write_str("the contract deadline has passed"),
            Self::BudgetExceeded(d) => {
                write!(f, "charging would exceed the {} cost budget", d.as_str())
            }
        }
    }
}

impl std::error::Error for RetryError {}

impl DescribeError for RetryError {
    fn class(&self) -> ErrorClass {
        if self.exhausted() {
            ErrorClass::RetryExhausted
        } else {
            ErrorClass::Policy
        }
    }
    fn wire_code(&self) -> WireCode {
        self.code()
    }
    fn reason(&self) -> &str {
        RetryError::reason(self)
    }
    fn fields(&self) -> Fields {
        match self {
            Self::InvalidArgument(field) => Fields::new().text("field", *field),
            Self::Finished(reason) => Fields::new().text("finished_reason", reason.as_str()),
            Self::BackoffPending(at) => Fields::new().integer("retry_at", at.0),
            Self::BudgetExceeded(d) => Fields::new().text("dimension", d.as_str()),
            _ => Fields::new(),
        }
    }
}

// ---- the Scheduler (§11.1) ----------------------------------------------------------------

impl SchedulerError {
    /// The stable reason slug.
    pub const fn reason(&self) -> &'static str {
        match self {
            Self::UnknownWork(_) => "unknown_work",
            Self::StaleRun { .. } => "stale_run",
            Self::InvalidTransition(_) => "invalid_transition",
            Self::UnsafeCheckpoint => "unsafe_checkpoint",
            Self::InvalidArgument(_) => "invalid_argument",
            Self::ReferencePolicy {
                unsupported: true, ..
            } => "unsupported_policy",
            Self::ReferencePolicy { .. } => "invalid_argument",
            Self::OfferDeclined { .. } => "offer_declined",
            Self::CorruptSnapshot { .. } => "corrupt_snapshot",
            // The reason of every binding's argument error (`ArgumentError`).
            Self::NoOffers => "invalid-argument",
        }
    }
}

impl fmt::Display for SchedulerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownWork(id) => {
                write!(f, "no non-terminal WorkItem {id:?} in this Scheduler")
            }
            Self::StaleRun { current, reported } => write!(
                f,
                "the report names run {reported}, the current run is {current}"
            ),
            Self::InvalidTransition(state) => {
                write!(f, "not allowed while the WorkItem is {}", state.as_str())
            }
            Self::UnsafeCheckpoint => f.write_str(
                "a checkpoint must be durable and safe to release a slot or resume from",
            ),
            Self::InvalidArgument(field) => write!(f, "invalid {field}"),
            Self::ReferencePolicy { detail, .. } => f.write_str(detail),
            Self::OfferDeclined { work_id, reason } => write!(
                f,
                "offer {work_id:?} was declined ({}): nothing was rebuilt",
                reason.as_str()
            ),
            Self::NoOffers => f.write_str(
                "source: no offers to rebuild from (a new Scheduler is empty; rebuild takes a \
                 snapshot or at least one WorkOffer)",
            ),
            Self::CorruptSnapshot { path, problem } if path.is_empty() => {
                write!(f, "the snapshot cannot be restored: {problem}")
            }
            Self::CorruptSnapshot { path, problem } => {
                write!(f, "the snapshot cannot be restored: {problem} at {path}")
            }
        }
    }
}

impl std::error::Error for SchedulerError {}

impl DescribeError for SchedulerError {
    fn class(&self) -> ErrorClass {
        match self {
            Self::UnknownWork(_) | Self::StaleRun { .. } | Self::InvalidTransition(_) => {
                ErrorClass::SchedulerState
            }
            // Local persisted state that cannot be restored (Python: also a SchedulerError).
            Self::CorruptSnapshot { .. } => ErrorClass::Snapshot,
            // API misuse, as a source that is neither a snapshot nor offers (`ArgumentError`).
            Self::NoOffers => ErrorClass::Argument,
            _ => ErrorClass::Scheduler,
        }
    }
    fn wire_code(&self) -> WireCode {
        self.code()
    }
    fn reason(&self) -> &str {
        SchedulerError::reason(self)
    }
    fn fields(&self) -> Fields {
        match self {
            Self::UnknownWork(id) => Fields::new().text("work_id", id),
            Self::StaleRun { current, reported } => Fields::new()
                .integer("current_generation", i64::from(*current))
                .integer("reported_generation", i64::from(*reported)),
            Self::InvalidTransition(state) => Fields::new().text("state", state.as_str()),
            Self::InvalidArgument(field) | Self::ReferencePolicy { field, .. } => {
                Fields::new().text("field", *field)
            }
            Self::CorruptSnapshot { path, .. } => Fields::new().text("path", path),
            Self::NoOffers => Fields::new().text("argument", "source"),
            Self::OfferDeclined { work_id, reason } => Fields::new()
                .text("work_id", work_id)
                .text("admission_reason", reason.as_str()),
            _ => Fields::new(),
        }
    }
}

// ---- snapshots ------------------------------------------------------------------------------

impl fmt::Display for SnapshotFormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed snapshot at {:?}: {}", self.path, self.message)
    }
}

impl std::error::Error for SnapshotFormatError {}

impl DescribeError for SnapshotFormatError {
    fn class(&self) -> ErrorClass {
        ErrorClass::Snapshot
    }
    /// A snapshot is local persisted state: a bad one is an internal fault.
    fn wire_code(&self) -> WireCode {
        self.code()
    }
    fn reason(&self) -> &str {
        "malformed_snapshot"
    }
    fn fields(&self) -> Fields {
        Fields::new().text("path", &self.path)
    }
}
