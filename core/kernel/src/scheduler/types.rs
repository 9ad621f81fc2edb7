//! Inputs, outputs, policy and errors of the Worker-local Scheduler (§10.3, §11.1–§11.4).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use missionweaveprotocol::{ArgumentError, WireCode};

use crate::capability_version::CapabilityRef;
use crate::unix_millis::UnixMillis;

/// Organization priority class bounds (reference: −100..=100).
pub const MIN_PRIORITY: i8 = -100;
/// Upper bound of the priority class.
pub const MAX_PRIORITY: i8 = 100;
/// The priority rule every binding applies to every priority it is given (offers,
/// re-prioritization): an integer in `MIN_PRIORITY..=MAX_PRIORITY`, else
/// [`SchedulerError::InvalidArgument`]`("priority")`.
pub fn priority(value: i64) -> Result<i8, SchedulerError> {
    i8::try_from(value)
        .ok()
        .filter(|p| (MIN_PRIORITY..=MAX_PRIORITY).contains(p))
        .ok_or(SchedulerError::InvalidArgument("priority"))
}

/// Largest Group weight accepted.
pub const MAX_WEIGHT: u32 = 1_000_000;

/// One slot-dispatch of a weight-1 Group in the stride scheduler's pass arithmetic: a dispatch
/// of `s` slots advances its Group's pass by `s · (PASS_UNIT / weight)`, so lags and passes
/// are exact to 2^-40 of a slot.
pub const PASS_UNIT: u128 = 1 << 40;

/// Largest cross-Group lag, in pass units: [`u32::MAX`] slots, the range of
/// [`SchedulerPolicy::fairness_lag_slots`].
pub const MAX_FAIRNESS_LAG_PASS: u128 = u32::MAX as u128 * PASS_UNIT;

/// A WorkItem offered to this Worker's Scheduler (content-free: no goal, no data).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkOffer {
    /// WorkItem ID.
    pub work_id: String,
    /// Group whose queue it joins.
    pub group_id: String,
    /// Organization priority class, −100..=100 (escalated only by policy or MissionOwner, §11.1).
    pub priority: i8,
    /// Contract deadline.
    pub deadline: Option<UnixMillis>,
    /// Estimated duration in ms (0 = use the policy default).
    pub estimated_duration_ms: u32,
    /// Execution slots it needs at once (≥ 1).
    pub slots: u16,
    /// Required capabilities with minimum versions.
    pub required_capabilities: Vec<CapabilityRef>,
    /// Whether it may be asked to yield at a safe checkpoint (§11.3).
    pub preemptible: bool,
    /// Admission facts decided elsewhere (authorization, dependencies, budget; §10.3).
    pub eligibility: Eligibility,
}

impl WorkOffer {
    /// The identifier rule every binding applies before an offer reaches the Scheduler: a
    /// WorkItem and its Group are named (§10.3), so an empty ID is API misuse
    /// ([`ArgumentError`], argument `work_id` or `group_id`), not an identifier collision.
    pub fn check_ids(work_id: &str, group_id: &str) -> Result<(), ArgumentError> {
        if work_id.is_empty() {
            return Err(ArgumentError::new(
                "work_id",
                "a WorkItem ID must not be empty",
            ));
        }
        if group_id.is_empty() {
            return Err(ArgumentError::new(
                "group_id",
                "a Group ID must not be empty",
            ));
        }
        Ok(())
    }

    /// [`WorkOffer::new`] after [`WorkOffer::check_ids`].
    pub fn try_new(work_id: &str, group_id: &str) -> Result<Self, ArgumentError> {
        Self::check_ids(work_id, group_id)?;
        Ok(Self::new(work_id, group_id))
    }

    /// A one-slot, priority-0, preemptible offer with no deadline or capability requirement.
    pub fn new(work_id: &str, group_id: &str) -> Self {
        WorkOffer {
            work_id: work_id.to_owned(),
            group_id: group_id.to_owned(),
            priority: 0,
            deadline: None,
            estimated_duration_ms: 0,
            slots: 1,
            required_capabilities: Vec::new(),
            preemptible: true,
            eligibility: Eligibility::default(),
        }
    }
}

/// Admission facts the Scheduler cannot know by itself (§10.3 "authorization eligibility,
/// dependencies and budgets").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Eligibility {
    /// Authorization eligibility holds (capability token obtainable, approvals met).
    pub authorized: bool,
    /// Declared dependencies satisfy the dependency policy (§10.4).
    pub dependencies_ready: bool,
    /// Remaining budget covers the contract.
    pub budget_available: bool,
}

impl Default for Eligibility {
    fn default() -> Self {
        Eligibility {
            authorized: true,
            dependencies_ready: true,
            budget_available: true,
        }
    }
}

/// Per-Group policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GroupPolicy {
    /// Fair-share weight, 1..=[`MAX_WEIGHT`].
    pub weight: u32,
    /// Maximum slots the Group may hold at once (`Some(0)` disables the Group).
    pub slot_quota: Option<u32>,
}

impl Default for GroupPolicy {
    fn default() -> Self {
        GroupPolicy {
            weight: 1,
            slot_quota: None,
        }
    }
}

/// Scheduler policy. Defaults follow the reference where it has one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedulerPolicy {
    /// Declared execution slots (Agent Card maximum concurrency, §11.1).
    pub capacity_slots: u32,
    /// Per-Group overrides.
    pub groups: HashMap<String, GroupPolicy>,
    /// Policy for Groups not listed.
    pub default_group: GroupPolicy,
    /// Capabilities this Worker offers (`None` = no check).
    pub supported_capabilities: Option<Vec<CapabilityRef>>,
    /// Groups this Worker serves (`None` = all).
    pub allowed_groups: Option<HashSet<String>>,
    /// Maximum non-terminal items in total.
    pub max_work_items: u32,
    /// Maximum non-terminal items per Group.
    pub max_work_items_per_group: u32,
    /// Also decline offers whose deadline cannot be met from now (not only already expired).
    pub decline_infeasible_deadlines: bool,
    /// Waiting time one priority point is worth (aging rate), in ms.
    pub priority_step_ms: u32,
    /// How long before its latest start a deadline begins to pull an item forward, in ms.
    pub deadline_horizon_ms: u32,
    /// Cross-Group lag, in slot-dispatches of a weight-1 Group, within which the best head
    /// (priority, deadline, age) may go before the most-behind Group.
    pub fairness_lag_slots: u32,
    /// The same lag in pass units ([`PASS_UNIT`] per slot), for lags that are not whole slots
    /// (the reference's `fairness_weight`, [`super::reference`]); `Some` replaces
    /// `fairness_lag_slots`. At most [`MAX_FAIRNESS_LAG_PASS`].
    pub fairness_lag_pass: Option<u128>,
    /// Priority points by which a waiting item must outrank a running one to request
    /// preemption.
    pub preemption_margin: u8,
    /// Duration assumed when an offer has no estimate, in ms.
    pub default_estimate_ms: u32,
}

impl Default for SchedulerPolicy {
    fn default() -> Self {
        SchedulerPolicy {
            capacity_slots: 1,
            groups: HashMap::new(),
            default_group: GroupPolicy::default(),
            supported_capabilities: None,
            allowed_groups: None,
            max_work_items: 10_000,
            max_work_items_per_group: 1_000,
            decline_infeasible_deadlines: false,
            priority_step_ms: 3_000,
            deadline_horizon_ms: 600_000,
            fairness_lag_slots: 1,
            fairness_lag_pass: None,
            preemption_margin: 50,
            default_estimate_ms: 60_000,
        }
    }
}

impl SchedulerPolicy {
    /// The cross-Group lag in force, in pass units.
    pub fn fairness_lag(&self) -> u128 {
        self.fairness_lag_pass
            .unwrap_or(u128::from(self.fairness_lag_slots) * PASS_UNIT)
    }

    /// The policy of one Group.
    pub fn group(&self, group_id: &str) -> GroupPolicy {
        self.groups
            .get(group_id)
            .copied()
            .unwrap_or(self.default_group)
    }

    /// H: the largest head start (ms) priority or deadline can give an item over one that
    /// became ready at the same instant. Nothing that becomes ready more than H after an item
    /// can overtake it in its Group.
    pub fn horizon_ms(&self) -> i64 {
        let prio =
            i64::from(self.priority_step_ms) * i64::from(MAX_PRIORITY as i16 - MIN_PRIORITY as i16);
        prio.max(i64::from(self.deadline_horizon_ms))
    }
}

/// Fine admission reasons (reference names, plus the three §10.3 facts it lacked).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AdmissionReason {
    /// Admitted.
    Accepted,
    /// Already admitted with identical content (idempotent).
    Duplicate,
    /// Same WorkItem ID, different content.
    IdentifierCollision,
    /// The WorkItem already completed or was cancelled here.
    AlreadyTerminal,
    /// The Worker queue is full.
    WorkerFull,
    /// The Group queue is full.
    GroupFull,
    /// The Worker does not serve this Group.
    GroupNotAllowed,
    /// The Group's slot quota is zero.
    GroupQuotaDisabled,
    /// A required capability (at its version) is not offered.
    UnsupportedCapability,
    /// Needs more slots than the Worker or Group quota has.
    ExceedsCapacity,
    /// Deadline passed (or cannot be met, if the policy says so).
    DeadlineExpired,
    /// Not authorization-eligible.
    NotAuthorized,
    /// Dependencies are not satisfied.
    DependencyUnsatisfied,
    /// Remaining budget does not cover it.
    BudgetUnavailable,
}

/// Coarse decline categories (§10.3 structured reason; `offers[].declineReason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeclineCategory {
    /// Queue capacity or concurrency.
    Capacity,
    /// Deadline.
    Deadline,
    /// Capability availability.
    Capability,
    /// Authorization eligibility.
    Authorization,
    /// Dependencies.
    Dependency,
    /// Budgets.
    Budget,
    /// Anything else (identifier problems).
    Other,
}

impl DeclineCategory {
    /// Wire spelling (`declineReason`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Capacity => "capacity",
            Self::Deadline => "deadline",
            Self::Capability => "capability",
            Self::Authorization => "authorization",
            Self::Dependency => "dependency",
            Self::Budget => "budget",
            Self::Other => "other",
        }
    }
}

missionweaveprotocol::spelling!(AdmissionReason {
    Accepted => "accepted",
    Duplicate => "duplicate",
    IdentifierCollision => "identifier_collision",
    AlreadyTerminal => "already_terminal",
    WorkerFull => "worker_full",
    GroupFull => "group_full",
    GroupNotAllowed => "group_not_allowed",
    GroupQuotaDisabled => "group_quota_disabled",
    UnsupportedCapability => "unsupported_capability",
    ExceedsCapacity => "exceeds_capacity",
    DeadlineExpired => "deadline_expired",
    NotAuthorized => "not_authorized",
    DependencyUnsatisfied => "dependency_unsatisfied",
    BudgetUnavailable => "budget_unavailable",
});

impl AdmissionReason {
    /// True for `accepted` and `duplicate`.
    pub const fn is_accepted(self) -> bool {
        matches!(self, Self::Accepted | Self::Duplicate)
    }

    /// The coarse §10.3 category of a decline (`None` when accepted).
    pub const fn category(self) -> Option<DeclineCategory> {
        Some(match self {
            Self::Accepted | Self::Duplicate => return None,
            Self::WorkerFull
            | Self::GroupFull
            | Self::GroupQuotaDisabled
            | Self::ExceedsCapacity => DeclineCategory::Capacity,
            Self::GroupNotAllowed | Self::NotAuthorized => DeclineCategory::Authorization,
            Self::UnsupportedCapability => DeclineCategory::Capability,
            Self::DeadlineExpired => DeclineCategory::Deadline,
            Self::DependencyUnsatisfied => DeclineCategory::Dependency,
            Self::BudgetUnavailable => DeclineCategory::Budget,
            Self::IdentifierCollision | Self::AlreadyTerminal => DeclineCategory::Other,
        })
    }
}

/// The result of [`crate::scheduler::Scheduler::admit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdmissionDecision {
    /// Whether the Worker commits to the item.
    pub accepted: bool,
    /// Fine reason.
    pub reason: AdmissionReason,
}

/// Scheduler-local state of one item.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WorkState {
    /// In its Group queue.
    Ready,
    /// Holding slots.
    Running,
    /// Holding slots; preemption requested, waiting for a safe checkpoint.
    Preempting,
    /// Released its slot; waits for `unblock` or its retry time.
    Blocked,
}

missionweaveprotocol::spelling!(WorkState {
    Ready => "ready",
    Running => "running",
    Preempting => "preempting",
    Blocked => "blocked",
});

/// A checkpoint the Worker reports (§11.3 step 2–3, §11.4).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CheckpointRef {
    /// Checkpoint identifier (e.g. its Artifact hash).
    pub checkpoint_id: String,
    /// Persisted durably.
    pub durable: bool,
    /// Taken at a safe, idempotent point.
    pub safe: bool,
}

impl CheckpointRef {
    /// True when it is a valid resume point: durable and safe.
    pub fn is_resumable(&self) -> bool {
        self.durable && self.safe
    }
}

/// Worker reports about a running item. `generation` identifies the run (a stale run is
/// rejected, like an older Lease ID, §11.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transition {
    /// A checkpoint was saved. While preempting, a durable safe checkpoint completes the
    /// preemption (slot released, item requeued).
    CheckpointSaved {
        /// Run.
        generation: u32,
        /// The checkpoint.
        checkpoint: CheckpointRef,
    },
    /// The Worker could not reach a safe point now; it keeps running.
    PreemptionDeclined {
        /// Run.
        generation: u32,
    },
    /// Blocked: checkpoint taken, slot released (§11.4); returns when unblocked or at `retry_at`.
    Blocked {
        /// Run.
        generation: u32,
        /// The checkpoint taken before blocking (must be durable and safe).
        checkpoint: CheckpointRef,
        /// When to make it ready again automatically.
        retry_at: Option<UnixMillis>,
        /// Required resolution (opaque to the Scheduler).
        reason: String,
    },
    /// The Worker gave the slot back (e.g. lease revoked); resumes from its last checkpoint.
    Released {
        /// Run.
        generation: u32,
    },
    /// Submitted or otherwise finished.
    Completed {
        /// Run.
        generation: u32,
    },
    /// Failed permanently.
    Failed {
        /// Run.
        generation: u32,
    },
}

impl Transition {
    /// The run this report is about.
    pub fn generation(&self) -> u32 {
        match self {
            Transition::CheckpointSaved { generation, .. }
            | Transition::PreemptionDeclined { generation }
            | Transition::Blocked { generation, .. }
            | Transition::Released { generation }
            | Transition::Completed { generation }
            | Transition::Failed { generation } => *generation,
        }
    }
}

/// Start this item in a slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dispatch {
    /// WorkItem ID.
    pub work_id: Arc<str>,
    /// Its Group.
    pub group_id: Arc<str>,
    /// Run generation (1 for the first run).
    pub generation: u32,
    /// Slots it occupies.
    pub slots: u16,
    /// Checkpoint to resume from.
    pub resume_from: Option<CheckpointRef>,
}

impl Dispatch {
    /// Reference-style run id `"<work_id>:<generation>"`.
    pub fn run_id(&self) -> String {
        format!("{}:{}", self.work_id, self.generation)
    }

    /// The generation a reference-style run id names for `work_id` (the inverse of
    /// [`run_id`](Self::run_id)), or `None` when it is not `"<work_id>:<generation>"` with a
    /// decimal generation.
    pub fn run_generation(work_id: &str, run_id: &str) -> Option<u32> {
        let (prefix, number) = run_id.rsplit_once(':')?;
        if prefix != work_id || number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        number.parse().ok()
    }
}

/// Ask a running item to reach a safe checkpoint and yield (§11.3 step 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreemptRequest {
    /// WorkItem ID.
    pub work_id: Arc<str>,
    /// Its Group.
    pub group_id: Arc<str>,
    /// Run generation.
    pub generation: u32,
    /// The last durable, safe checkpoint the run holds (where it resumes if it yields now), or
    /// `None`: §11.3 requests preemption first and the Worker then reaches a safe checkpoint;
    /// the slot is only released by a reported one.
    pub checkpoint: Option<CheckpointRef>,
}

/// One decision of [`crate::scheduler::Scheduler::schedule`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScheduleAction {
    /// Start work.
    Dispatch(Dispatch),
    /// Request cooperative preemption.
    Preempt(PreemptRequest),
}

/// Scheduler errors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SchedulerError {
    /// No such non-terminal item.
    UnknownWork(String),
    /// The report names another run than the current one.
    StaleRun {
        /// Current generation.
        current: u32,
        /// Reported generation.
        reported: u32,
    },
    /// Not allowed in the item's current state.
    InvalidTransition(WorkState),
    /// A checkpoint that is not durable and safe cannot release a slot or be resumed from.
    UnsafeCheckpoint,
    /// Invalid argument or policy (the name says which).
    InvalidArgument(&'static str),
    /// A value of the reference runtime's policy that the core cannot take
    /// ([`reference`](crate::scheduler::reference)): `unsupported` when the core has no exact
    /// equivalent (reason `unsupported_policy`), else a malformed or conflicting value (reason
    /// `invalid_argument`).
    ReferencePolicy {
        /// The reference field.
        field: &'static str,
        /// Why.
        detail: String,
        /// No exact equivalent in the core (rather than a malformed value).
        unsupported: bool,
    },
    /// A rebuild from offers ([`Scheduler::from_offers`](crate::scheduler::Scheduler::from_offers))
    /// met an offer the Scheduler declines (an identifier collision, a full Worker, …): nothing
    /// is rebuilt, as the reference's `Scheduler.rebuild` refuses it (`ValueError`).
    OfferDeclined {
        /// The declined offer's WorkItem ID.
        work_id: String,
        /// Why it was declined.
        reason: AdmissionReason,
    },
    /// A rebuild from offers was given none: API misuse, not a rebuild (an empty Scheduler is
    /// [`Scheduler::new`](crate::scheduler::Scheduler::new)). Reported as the argument error
    /// every binding gives (`PROTOCOL_VIOLATION`, `invalid-argument`, argument `source`), like a
    /// source that is neither a snapshot nor offers, so that a rebuild that restores nothing
    /// (an empty list where a snapshot or the replayed offers were meant) is never taken for one.
    NoOffers,
    /// A snapshot cannot be restored: `path` (a JSON Pointer into the snapshot's JSON form,
    /// empty for the whole snapshot) says where, `problem` says why.
    CorruptSnapshot {
        /// Where (JSON Pointer into the snapshot's JSON form).
        path: String,
        /// Which invariant fails.
        problem: &'static str,
    },
}

impl SchedulerError {
    /// The §19 wire code.
    pub const fn code(&self) -> WireCode {
        match self {
            Self::UnknownWork(_)
            | Self::InvalidArgument(_)
            | Self::ReferencePolicy { .. }
            | Self::OfferDeclined { .. }
            | Self::UnsafeCheckpoint => WireCode::InvalidCommand,
            Self::StaleRun { .. } => WireCode::WorkLeaseExpired,
            Self::InvalidTransition(_) => WireCode::InvalidStateTransition,
            Self::CorruptSnapshot { .. } => WireCode::InternalError,
            Self::NoOffers => WireCode::ProtocolViolation,
        }
    }
}
