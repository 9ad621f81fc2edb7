//! The Worker-local weighted-fair Scheduler (§10.3, §11.1–§11.4), its inputs, decisions and
//! snapshot.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use missionweaveprotocol::ArgumentError;
use missionweaveprotocol::json::{self, canonical_bytes};
use missionweaveprotocol_kernel::scheduler::reference::{
    self, EffortBand, OwnFieldsGiven, ReferenceSchedulerPolicy, WrittenNumber,
};
use missionweaveprotocol_kernel::scheduler::{
    self, AdmissionDecision as CoreDecision, CheckpointRef as CoreCheckpoint, Eligibility,
    GroupPolicy, ScheduleAction, ScheduleDisclosure as CoreDisclosure, Scheduler as CoreScheduler,
    SchedulerPolicy as CorePolicy, SchedulerSnapshot as CoreSnapshot, Transition,
    WorkOffer as CoreOffer, WorkState,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyMapping, PyString, PyTuple};

use crate::convert::{self, typed};
use crate::errors;
use crate::instant::{millis_arg, opt_datetime, opt_millis_arg, timedelta_micros, to_datetime};
use crate::resources::{capabilities_arg, capabilities_tuple};
use crate::values::PyEnum;

fn u32_arg(py: Python<'_>, value: &Bound<'_, PyAny>, what: &str) -> PyResult<u32> {
    Ok(convert::uint_arg(py, value, what, u64::from(u32::MAX))? as u32)
}

fn opt_u32(
    py: Python<'_>,
    value: Option<&Bound<'_, PyAny>>,
    what: &str,
    default: u32,
) -> PyResult<u32> {
    match convert::present(value) {
        Some(v) => u32_arg(py, v, what),
        None => Ok(default),
    }
}

fn opt_bool(
    py: Python<'_>,
    value: Option<&Bound<'_, PyAny>>,
    what: &str,
    default: bool,
) -> PyResult<bool> {
    match convert::present(value) {
        Some(v) => convert::bool_arg(py, v, what),
        None => Ok(default),
    }
}

/// Any integer crosses; the range is the core's rule ([`scheduler::priority`]).
fn priority_arg(py: Python<'_>, value: &Bound<'_, PyAny>, what: &str) -> PyResult<i8> {
    let value = convert::int_arg(py, value, what, i64::MIN, i64::MAX)?;
    scheduler::priority(value).map_err(|e| errors::scheduler_error(py, &e))
}

/// `GroupSchedulingPolicy(weight=1, slot_quota=None)`: a Group's fair-share weight
/// (1..=1,000,000, the core's range) and the most slots it may hold at once (`0` disables the Group).
#[pyclass(module = "missionweaveprotocol._native", frozen, eq, hash)]
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GroupSchedulingPolicy {
    inner: GroupPolicy,
}

#[pymethods]
impl GroupSchedulingPolicy {
    #[new]
    #[pyo3(signature = (weight=None, slot_quota=None))]
    fn py_new(
        py: Python<'_>,
        weight: Option<&Bound<'_, PyAny>>,
        slot_quota: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let weight = match convert::present(weight) {
            Some(v) => u32_arg(py, v, "weight")?,
            None => 1,
        };
        let inner = GroupPolicy {
            weight,
            slot_quota: convert::present(slot_quota)
                .map(|v| u32_arg(py, v, "slot_quota"))
                .transpose()?,
        };
        // The weight range (1..=MAX_WEIGHT) is the core's rule, applied when a Scheduler takes
        // the policy. It is checked here through the core, so that the value object is
        // refused at construction (as the reference's frozen dataclass is) with the core's own
        // error (`INVALID_COMMAND`, `invalid_argument`, field `weight`), not a copy of the rule.
        CoreScheduler::new(CorePolicy {
            default_group: inner,
            ..CorePolicy::default()
        })
        .map_err(|e| errors::scheduler_error(py, &e))?;
        Ok(Self { inner })
    }

    #[getter]
    fn weight(&self) -> u32 {
        self.inner.weight
    }
    #[getter]
    fn slot_quota(&self) -> Option<u32> {
        self.inner.slot_quota
    }

    fn __repr__(&self) -> String {
        format!(
            "GroupSchedulingPolicy(weight={}, slot_quota={:?})",
            self.inner.weight, self.inner.slot_quota
        )
    }
}

/// `SchedulerPolicy(*, capacity_slots=1, groups=None, default_group=None,
/// supported_capabilities=None, allowed_groups=None, max_work_items=10000,
/// max_work_items_per_group=1000, decline_infeasible_deadlines=False, priority_step_ms=3000,
/// deadline_horizon_ms=600000, fairness_lag_slots=1, preemption_margin=50,
/// default_estimate_ms=60000, fairness_lag_pass=None)` (`fairness_lag_pass`: the lag in
/// 2^-40 slots the reference's `fairness_weight` maps to, `scheduler_reference_policy`).
#[pyclass(module = "missionweaveprotocol._native", frozen, eq)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedulerPolicy {
    inner: CorePolicy,
}

#[pymethods]
impl SchedulerPolicy {
    #[new]
    #[pyo3(signature = (*, capacity_slots=None, groups=None, default_group=None, supported_capabilities=None, allowed_groups=None, max_work_items=None, max_work_items_per_group=None, decline_infeasible_deadlines=None, priority_step_ms=None, deadline_horizon_ms=None, fairness_lag_slots=None, preemption_margin=None, default_estimate_ms=None, fairness_lag_pass=None))]
    #[allow(clippy::too_many_arguments)]
    fn py_new(
        py: Python<'_>,
        capacity_slots: Option<&Bound<'_, PyAny>>,
        groups: Option<&Bound<'_, PyAny>>,
        default_group: Option<&Bound<'_, PyAny>>,
        supported_capabilities: Option<&Bound<'_, PyAny>>,
        allowed_groups: Option<&Bound<'_, PyAny>>,
        max_work_items: Option<&Bound<'_, PyAny>>,
        max_work_items_per_group: Option<&Bound<'_, PyAny>>,
        decline_infeasible_deadlines: Option<&Bound<'_, PyAny>>,
        priority_step_ms: Option<&Bound<'_, PyAny>>,
        deadline_horizon_ms: Option<&Bound<'_, PyAny>>,
        fairness_lag_slots: Option<&Bound<'_, PyAny>>,
        preemption_margin: Option<&Bound<'_, PyAny>>,
        default_estimate_ms: Option<&Bound<'_, PyAny>>,
        fairness_lag_pass: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let d = CorePolicy::default();
        let mut group_map = HashMap::new();
        if let Some(groups) = convert::present(groups) {
            for (k, v) in convert::mapping_items(py, groups, "groups")? {
                let id = convert::str_arg(py, &k, "group id")?.into_owned();
                let gp = typed::<GroupSchedulingPolicy>(
                    py,
                    &v,
                    "groups values",
                    "GroupSchedulingPolicy",
                )?;
                group_map.insert(id, gp.get().inner);
            }
        }
        let policy = CorePolicy {
            capacity_slots: opt_u32(py, capacity_slots, "capacity_slots", d.capacity_slots)?,
            groups: group_map,
            default_group: match convert::present(default_group) {
                Some(v) => {
                    typed::<GroupSchedulingPolicy>(py, v, "default_group", "GroupSchedulingPolicy")?
                        .get()
                        .inner
                }
                None => d.default_group,
            },
            supported_capabilities: convert::present(supported_capabilities)
                .map(|v| capabilities_arg(py, v, "supported_capabilities"))
                .transpose()?,
            allowed_groups: convert::present(allowed_groups)
                .map(|v| {
                    convert::str_list_arg(py, v, "allowed_groups")
                        .map(|l| l.into_iter().collect::<HashSet<String>>())
                })
                .transpose()?,
            max_work_items: opt_u32(py, max_work_items, "max_work_items", d.max_work_items)?,
            max_work_items_per_group: opt_u32(
                py,
                max_work_items_per_group,
                "max_work_items_per_group",
                d.max_work_items_per_group,
            )?,
            decline_infeasible_deadlines: opt_bool(
                py,
                decline_infeasible_deadlines,
                "decline_infeasible_deadlines",
                d.decline_infeasible_deadlines,
            )?,
            priority_step_ms: opt_u32(
                py,
                priority_step_ms,
                "priority_step_ms",
                d.priority_step_ms,
            )?,
            deadline_horizon_ms: opt_u32(
                py,
                deadline_horizon_ms,
                "deadline_horizon_ms",
                d.deadline_horizon_ms,
            )?,
            fairness_lag_slots: opt_u32(
                py,
                fairness_lag_slots,
                "fairness_lag_slots",
                d.fairness_lag_slots,
            )?,
            fairness_lag_pass: convert::present(fairness_lag_pass)
                .map(|v| {
                    v.extract::<u128>()
                        .ok()
                        .filter(|_| !v.is_instance_of::<pyo3::types::PyBool>())
                        .ok_or_else(|| {
                            errors::invalid_input(
                                py,
                                "fairness_lag_pass must be a non-negative int",
                            )
                        })
                })
                .transpose()?,
            preemption_margin: match convert::present(preemption_margin) {
                Some(v) => convert::uint_arg(py, v, "preemption_margin", u64::from(u8::MAX))? as u8,
                None => d.preemption_margin,
            },
            default_estimate_ms: opt_u32(
                py,
                default_estimate_ms,
                "default_estimate_ms",
                d.default_estimate_ms,
            )?,
        };
        // The core's own policy validation, so a bad policy fails here and not at first use.
        CoreScheduler::new(policy.clone()).map_err(|e| errors::scheduler_error(py, &e))?;
        Ok(Self { inner: policy })
    }

    #[getter]
    fn capacity_slots(&self) -> u32 {
        self.inner.capacity_slots
    }
    #[getter]
    fn groups<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (k, v) in &self.inner.groups {
            dict.set_item(k, GroupSchedulingPolicy { inner: *v })?;
        }
        Ok(dict)
    }
    #[getter]
    fn default_group(&self) -> GroupSchedulingPolicy {
        GroupSchedulingPolicy {
            inner: self.inner.default_group,
        }
    }
    #[getter]
    fn supported_capabilities<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        self.inner
            .supported_capabilities
            .as_deref()
            .map(|c| capabilities_tuple(py, c))
            .transpose()
    }
    #[getter]
    fn allowed_groups(&self) -> Option<Vec<String>> {
        self.inner.allowed_groups.as_ref().map(|g| {
            let mut v: Vec<String> = g.iter().cloned().collect();
            v.sort();
            v
        })
    }
    #[getter]
    fn max_work_items(&self) -> u32 {
        self.inner.max_work_items
    }
    #[getter]
    fn max_work_items_per_group(&self) -> u32 {
        self.inner.max_work_items_per_group
    }
    #[getter]
    fn decline_infeasible_deadlines(&self) -> bool {
        self.inner.decline_infeasible_deadlines
    }
    #[getter]
    fn priority_step_ms(&self) -> u32 {
        self.inner.priority_step_ms
    }
    #[getter]
    fn deadline_horizon_ms(&self) -> u32 {
        self.inner.deadline_horizon_ms
    }
    #[getter]
    fn fairness_lag_slots(&self) -> u32 {
        self.inner.fairness_lag_slots
    }
    #[getter]
    fn fairness_lag_pass(&self) -> Option<u128> {
        self.inner.fairness_lag_pass
    }
    #[getter]
    fn preemption_margin(&self) -> u8 {
        self.inner.preemption_margin
    }
    #[getter]
    fn default_estimate_ms(&self) -> u32 {
        self.inner.default_estimate_ms
    }

    /// H (ms): the largest head start priority or deadline can give an item within its Group.
    fn horizon_ms(&self) -> i64 {
        self.inner.horizon_ms()
    }

    fn __repr__(&self) -> String {
        format!(
            "SchedulerPolicy(capacity_slots={}, groups={})",
            self.inner.capacity_slots,
            self.inner.groups.len()
        )
    }
}

fn policy_arg(py: Python<'_>, value: Option<&Bound<'_, PyAny>>) -> PyResult<CorePolicy> {
    match convert::present(value) {
        Some(v) => Ok(
            typed::<SchedulerPolicy>(py, v, "policy", "SchedulerPolicy")?
                .get()
                .inner
                .clone(),
        ),
        None => Ok(CorePolicy::default()),
    }
}

/// `WorkOffer(work_id, group_id, *, organizational_priority=0, deadline=None,
/// estimated_duration_ms=0, slots=1, required_capabilities=(), preemptible=True,
/// authorized=True, dependencies_ready=True, budget_available=True)`: a content-free offer.
/// The last three are the §10.3 admission facts decided elsewhere.
#[pyclass(module = "missionweaveprotocol._native", frozen, eq)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkOffer {
    inner: CoreOffer,
}

#[pymethods]
impl WorkOffer {
    #[new]
    #[pyo3(signature = (work_id, group_id, *, organizational_priority=None, deadline=None, estimated_duration_ms=None, slots=None, required_capabilities=None, preemptible=None, authorized=None, dependencies_ready=None, budget_available=None))]
    #[allow(clippy::too_many_arguments)]
    fn py_new(
        py: Python<'_>,
        work_id: &Bound<'_, PyAny>,
        group_id: &Bound<'_, PyAny>,
        organizational_priority: Option<&Bound<'_, PyAny>>,
        deadline: Option<&Bound<'_, PyAny>>,
        estimated_duration_ms: Option<&Bound<'_, PyAny>>,
        slots: Option<&Bound<'_, PyAny>>,
        required_capabilities: Option<&Bound<'_, PyAny>>,
        preemptible: Option<&Bound<'_, PyAny>>,
        authorized: Option<&Bound<'_, PyAny>>,
        dependencies_ready: Option<&Bound<'_, PyAny>>,
        budget_available: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mut offer = CoreOffer::try_new(
            &convert::str_arg(py, work_id, "work_id")?,
            &convert::str_arg(py, group_id, "group_id")?,
        )
        .map_err(|e| errors::describe(py, &e))?;
        if let Some(p) = convert::present(organizational_priority) {
            offer.priority = priority_arg(py, p, "organizational_priority")?;
        }
        offer.deadline = opt_millis_arg(py, deadline, "deadline")?;
        offer.estimated_duration_ms =
            opt_u32(py, estimated_duration_ms, "estimated_duration_ms", 0)?;
        if let Some(s) = convert::present(slots) {
            offer.slots = convert::uint_arg(py, s, "slots", u64::from(u16::MAX))? as u16;
        }
        if let Some(c) = convert::present(required_capabilities) {
            offer.required_capabilities = capabilities_arg(py, c, "required_capabilities")?;
        }
        offer.preemptible = opt_bool(py, preemptible, "preemptible", true)?;
        offer.eligibility = Eligibility {
            authorized: opt_bool(py, authorized, "authorized", true)?,
            dependencies_ready: opt_bool(py, dependencies_ready, "dependencies_ready", true)?,
            budget_available: opt_bool(py, budget_available, "budget_available", true)?,
        };
        Ok(Self { inner: offer })
    }

    #[getter]
    fn work_id(&self) -> &str {
        &self.inner.work_id
    }
    #[getter]
    fn group_id(&self) -> &str {
        &self.inner.group_id
    }
    #[getter]
    fn organizational_priority(&self) -> i8 {
        self.inner.priority
    }
    #[getter]
    fn deadline<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        opt_datetime(py, self.inner.deadline)
    }
    #[getter]
    fn estimated_duration_ms(&self) -> u32 {
        self.inner.estimated_duration_ms
    }
    #[getter]
    fn slots(&self) -> u16 {
        self.inner.slots
    }
    #[getter]
    fn required_capabilities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        capabilities_tuple(py, &self.inner.required_capabilities)
    }
    #[getter]
    fn preemptible(&self) -> bool {
        self.inner.preemptible
    }
    #[getter]
    fn authorized(&self) -> bool {
        self.inner.eligibility.authorized
    }
    #[getter]
    fn dependencies_ready(&self) -> bool {
        self.inner.eligibility.dependencies_ready
    }
    #[getter]
    fn budget_available(&self) -> bool {
        self.inner.eligibility.budget_available
    }

    fn __repr__(&self) -> String {
        format!(
            "WorkOffer(work_id={:?}, group_id={:?}, organizational_priority={})",
            self.inner.work_id, self.inner.group_id, self.inner.priority
        )
    }
}

/// `CheckpointRef(checkpoint_id, *, durable=True, safe=True, work_id=None, group_id=None,
/// run_id=None, created_at=None)`: a checkpoint the Worker reports; only a durable and safe
/// one releases a slot or is resumed from. The last four are the reference's record fields
/// (which item and run it checkpoints, when): kept as given and compared, read by no rule (the
/// Scheduler checks the transition's own `work_id` and `run_id`).
#[pyclass(module = "missionweaveprotocol._native", frozen, eq, hash)]
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CheckpointRef {
    inner: CoreCheckpoint,
    work_id: Option<String>,
    group_id: Option<String>,
    run_id: Option<String>,
    created_at: Option<UnixMillis>,
}

impl CheckpointRef {
    fn of(inner: CoreCheckpoint) -> Self {
        Self {
            inner,
            work_id: None,
            group_id: None,
            run_id: None,
            created_at: None,
        }
    }
}

fn opt_str(
    py: Python<'_>,
    value: Option<&Bound<'_, PyAny>>,
    what: &str,
) -> PyResult<Option<String>> {
    match value {
        Some(v) if !v.is_none() => Ok(Some(convert::str_arg(py, v, what)?.into_owned())),
        _ => Ok(None),
    }
}

#[pymethods]
impl CheckpointRef {
    #[new]
    #[pyo3(signature = (checkpoint_id, *, durable=None, safe=None, work_id=None, group_id=None, run_id=None, created_at=None))]
    #[allow(clippy::too_many_arguments)]
    fn py_new(
        py: Python<'_>,
        checkpoint_id: &Bound<'_, PyAny>,
        durable: Option<&Bound<'_, PyAny>>,
        safe: Option<&Bound<'_, PyAny>>,
        work_id: Option<&Bound<'_, PyAny>>,
        group_id: Option<&Bound<'_, PyAny>>,
        run_id: Option<&Bound<'_, PyAny>>,
        created_at: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Ok(Self {
            inner: CoreCheckpoint {
                checkpoint_id: convert::str_arg(py, checkpoint_id, "checkpoint_id")?.into_owned(),
                durable: opt_bool(py, durable, "durable", true)?,
                safe: opt_bool(py, safe, "safe", true)?,
            },
            work_id: opt_str(py, work_id, "work_id")?,
            group_id: opt_str(py, group_id, "group_id")?,
            run_id: opt_str(py, run_id, "run_id")?,
            created_at: opt_millis_arg(py, created_at, "created_at")?,
        })
    }

    #[getter]
    fn checkpoint_id(&self) -> &str {
        &self.inner.checkpoint_id
    }
    #[getter]
    fn durable(&self) -> bool {
        self.inner.durable
    }
    #[getter]
    fn safe(&self) -> bool {
        self.inner.safe
    }
    #[getter]
    fn work_id(&self) -> Option<&str> {
        self.work_id.as_deref()
    }
    #[getter]
    fn group_id(&self) -> Option<&str> {
        self.group_id.as_deref()
    }
    #[getter]
    fn run_id(&self) -> Option<&str> {
        self.run_id.as_deref()
    }
    #[getter]
    fn created_at<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        opt_datetime(py, self.created_at)
    }

    fn __repr__(&self) -> String {
        format!(
            "CheckpointRef({:?}, durable={}, safe={})",
            self.inner.checkpoint_id,
            if self.inner.durable { "True" } else { "False" },
            if self.inner.safe { "True" } else { "False" }
        )
    }
}

/// The result of `Scheduler.admit`: whether the Worker commits to the item and why.
#[pyclass(module = "missionweaveprotocol._native", frozen, eq)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdmissionDecision {
    inner: CoreDecision,
    work_id: String,
}

#[pymethods]
impl AdmissionDecision {
    #[getter]
    fn accepted(&self) -> bool {
        self.inner.accepted
    }
    #[getter]
    fn reason<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        PyEnum::AdmissionReason.member(py, self.inner.reason.as_str())
    }
    #[getter]
    fn work_id(&self) -> &str {
        &self.work_id
    }
    /// The coarse §10.3 decline category (`declineReason`), or `None` when accepted.
    #[getter]
    fn decline_category(&self) -> Option<&'static str> {
        self.inner.reason.category().map(|c| c.as_str())
    }

    fn __repr__(&self) -> String {
        format!(
            "AdmissionDecision(accepted={}, reason={:?}, work_id={:?})",
            if self.inner.accepted { "True" } else { "False" },
            self.inner.reason.as_str(),
            self.work_id
        )
    }
}

/// Start this item in a slot. `run_id` is `"<work_id>:<generation>"`.
#[pyclass(module = "missionweaveprotocol._native", frozen, eq)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dispatch {
    work_id: Arc<str>,
    group_id: Arc<str>,
    #[pyo3(get)]
    generation: u32,
    #[pyo3(get)]
    slots: u16,
    resume_from: Option<CoreCheckpoint>,
}

#[pymethods]
impl Dispatch {
    #[getter]
    fn work_id(&self) -> &str {
        &self.work_id
    }
    #[getter]
    fn group_id(&self) -> &str {
        &self.group_id
    }
    #[getter]
    fn resume_from(&self) -> Option<CheckpointRef> {
        self.resume_from.clone().map(CheckpointRef::of)
    }
    #[getter]
    fn run_id(&self) -> String {
        format!("{}:{}", self.work_id, self.generation)
    }

    fn __repr__(&self) -> String {
        format!(
            "Dispatch(work_id={:?}, group_id={:?}, generation={}, slots={})",
            self.work_id.as_ref(),
            self.group_id.as_ref(),
            self.generation,
            self.slots
        )
    }
}

/// Ask this running item to reach a safe checkpoint and yield (cooperative preemption).
#[pyclass(module = "missionweaveprotocol._native", frozen, eq)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preempt {
    work_id: Arc<str>,
    group_id: Arc<str>,
    #[pyo3(get)]
    generation: u32,
    checkpoint: Option<CoreCheckpoint>,
}

#[pymethods]
impl Preempt {
    #[getter]
    fn work_id(&self) -> &str {
        &self.work_id
    }
    #[getter]
    fn group_id(&self) -> &str {
        &self.group_id
    }
    #[getter]
    fn run_id(&self) -> String {
        format!("{}:{}", self.work_id, self.generation)
    }
    /// The run's last durable, safe checkpoint, or `None` (§11.3: the request comes first).
    #[getter]
    fn checkpoint(&self) -> Option<CheckpointRef> {
        self.checkpoint.clone().map(CheckpointRef::of)
    }

    fn __repr__(&self) -> String {
        format!(
            "Preempt(work_id={:?}, group_id={:?}, generation={})",
            self.work_id.as_ref(),
            self.group_id.as_ref(),
            self.generation
        )
    }
}

/// `WorkTransition(work_id, kind, *, generation, checkpoint=None, retry_at=None, reason=None)`:
/// a Worker report about the current run (`generation` from its `Dispatch`). Kinds:
/// `checkpoint_saved` (needs `checkpoint`), `preemption_declined`, `blocked` (needs
/// `checkpoint` and `reason`; `retry_at` optional), `released`, `completed`, `failed`.
#[pyclass(module = "missionweaveprotocol._native", frozen, eq)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkTransition {
    #[pyo3(get)]
    work_id: String,
    inner: Transition,
}

#[pymethods]
impl WorkTransition {
    #[new]
    #[pyo3(signature = (work_id, kind, *, generation, checkpoint=None, retry_at=None, reason=None))]
    fn py_new(
        py: Python<'_>,
        work_id: &Bound<'_, PyAny>,
        kind: &Bound<'_, PyAny>,
        generation: &Bound<'_, PyAny>,
        checkpoint: Option<&Bound<'_, PyAny>>,
        retry_at: Option<&Bound<'_, PyAny>>,
        reason: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let work_id = convert::str_arg(py, work_id, "work_id")?.into_owned();
        let kind = convert::str_arg(py, kind, "kind")?;
        let generation = u32_arg(py, generation, "generation")?;
        let checkpoint = convert::present(checkpoint)
            .map(|c| {
                typed::<CheckpointRef>(py, c, "checkpoint", "CheckpointRef")
                    .map(|c| c.get().inner.clone())
            })
            .transpose()?;
        let retry_at = opt_millis_arg(py, retry_at, "retry_at")?;
        let reason = convert::opt_str_arg(py, reason, "reason")?;
        let needs =
            |what: &str| errors::invalid_input(py, format!("a {kind} transition needs {what}"));
        let extra = |ok: bool| {
            if ok {
                Ok(())
            } else {
                Err(errors::invalid_input(
                    py,
                    format!("a {kind} transition takes no checkpoint, retry_at or reason"),
                ))
            }
        };
        let bare = checkpoint.is_none() && retry_at.is_none() && reason.is_none();
        let inner = match kind.as_ref() {
            "checkpoint_saved" => {
                extra(retry_at.is_none() && reason.is_none())?;
                Transition::CheckpointSaved {
                    generation,
                    checkpoint: checkpoint.ok_or_else(|| needs("a checkpoint"))?,
                }
            }
            "blocked" => Transition::Blocked {
                generation,
                checkpoint: checkpoint.ok_or_else(|| needs("a checkpoint"))?,
                retry_at,
                reason: reason.ok_or_else(|| needs("a reason"))?,
            },
            "preemption_declined" => {
                extra(bare)?;
                Transition::PreemptionDeclined { generation }
            }
            "released" => {
                extra(bare)?;
                Transition::Released { generation }
            }
            "completed" => {
                extra(bare)?;
                Transition::Completed { generation }
            }
            "failed" => {
                extra(bare)?;
                Transition::Failed { generation }
            }
            other => {
                return Err(errors::invalid_input(
                    py,
                    format!("kind must be a TransitionKind, not {other:?}"),
                ));
            }
        };
        Ok(Self { work_id, inner })
    }

    #[getter]
    fn kind(&self) -> &'static str {
        match self.inner {
            Transition::CheckpointSaved { .. } => "checkpoint_saved",
            Transition::PreemptionDeclined { .. } => "preemption_declined",
            Transition::Blocked { .. } => "blocked",
            Transition::Released { .. } => "released",
            Transition::Completed { .. } => "completed",
            Transition::Failed { .. } => "failed",
        }
    }
    #[getter]
    fn generation(&self) -> u32 {
        self.inner.generation()
    }

    fn __repr__(&self) -> String {
        format!(
            "WorkTransition({:?}, {:?}, generation={})",
            self.work_id,
            self.kind(),
            self.inner.generation()
        )
    }
}

/// A §11.2 disclosure for one item, computed from its own Group and Worker-wide aggregates.
#[pyclass(module = "missionweaveprotocol._native", frozen, eq)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleDisclosure {
    inner: CoreDisclosure,
}

#[pymethods]
impl ScheduleDisclosure {
    #[getter]
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        PyEnum::WorkState.member(py, self.inner.state.as_str())
    }
    #[getter]
    fn earliest_start<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        opt_datetime(py, self.inner.earliest_start)
    }
    #[getter]
    fn latest_start<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        opt_datetime(py, self.inner.latest_start)
    }
    #[getter]
    fn estimated_completion<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        opt_datetime(py, self.inner.estimated_completion)
    }
    #[getter]
    fn confidence<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        PyEnum::Confidence.member(py, self.inner.confidence.as_str())
    }
    #[getter]
    fn capacity_status<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        PyEnum::CapacityStatus.member(py, self.inner.capacity_status.as_str())
    }
    #[getter]
    fn calculated_at<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_datetime(py, self.inner.calculated_at)
    }
}

/// `SchedulerSnapshot`: everything needed to restore a Scheduler. `to_dict()`/`from_dict()`
/// give its JSON form (passes as decimal strings, instants as Unix milliseconds).
#[pyclass(module = "missionweaveprotocol._native", frozen, eq)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedulerSnapshot {
    inner: CoreSnapshot,
}

#[pymethods]
impl SchedulerSnapshot {
    /// Reads the JSON form strictly (`SchedulerError` with kind `malformed_snapshot`).
    #[staticmethod]
    fn from_dict(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let value = convert::snapshot_mapping(py, data, "data", "a mapping (the snapshot's form)")?;
        CoreSnapshot::from_value(&value)
            .map(|inner| Self { inner })
            .map_err(|e| errors::scheduler_snapshot_error(py, &e))
    }

    /// Parses JSON text (strict parser) and reads it like `from_dict`.
    #[staticmethod]
    fn from_json(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<Self> {
        let bytes = convert::bytes_arg(py, text, "text", true)?;
        let value = json::parse(&bytes).map_err(|e| errors::parse_error(py, &e))?;
        CoreSnapshot::from_value(&value)
            .map(|inner| Self { inner })
            .map_err(|e| errors::scheduler_snapshot_error(py, &e))
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_python(py, &self.inner.to_value())
    }

    /// RFC 8785 canonical JSON text.
    fn to_json(&self, py: Python<'_>) -> PyResult<String> {
        let bytes =
            canonical_bytes(&self.inner.to_value()).map_err(|e| errors::canonical_error(py, &e))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    #[getter]
    fn version(&self) -> u32 {
        self.inner.version
    }

    /// The reference's `SchedulerSnapshot.records`: one entry per non-terminal item, in the
    /// snapshot's order, each as its JSON form (the `records` of `to_dict()`), as a tuple.
    #[getter]
    fn records<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
        let all = self.to_dict(py)?;
        let records = all.get_item("records")?;
        pyo3::types::PyTuple::new(py, records.try_iter()?.collect::<PyResult<Vec<_>>>()?)
    }

    /// Non-terminal items recorded.
    fn __len__(&self) -> usize {
        self.inner.records.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "SchedulerSnapshot(version={}, records={}, terminal={})",
            self.inner.version,
            self.inner.records.len(),
            self.inner.terminal.len()
        )
    }
}

fn state_str(s: WorkState) -> &'static str {
    s.as_str()
}

/// `Scheduler(policy=None)`: the Worker-local weighted-fair Scheduler. Every call that depends
/// on time takes `now` (a timezone-aware datetime). O(log n) per operation.
#[pyclass(module = "missionweaveprotocol._native")]
#[derive(Debug, Clone)]
pub struct Scheduler {
    inner: CoreScheduler,
}

impl Scheduler {
    /// The core Scheduler, for `agent.rs` (the Agent runtime reads its records).
    pub(crate) fn core(&self) -> &CoreScheduler {
        &self.inner
    }

    fn decide(&mut self, offer: &WorkOffer, now: UnixMillis) -> AdmissionDecision {
        AdmissionDecision {
            inner: self.inner.admit(&offer.inner, now),
            work_id: offer.inner.work_id.clone(),
        }
    }

    fn apply_one(
        &mut self,
        py: Python<'_>,
        transition: &WorkTransition,
        now: UnixMillis,
    ) -> PyResult<()> {
        self.inner
            .apply(&transition.work_id, transition.inner.clone(), now)
            .map_err(|e| errors::scheduler_error(py, &e))
    }
}

fn transition_arg<'a, 'py>(
    py: Python<'py>,
    value: &'a Bound<'py, PyAny>,
) -> PyResult<&'a WorkTransition> {
    Ok(typed::<WorkTransition>(py, value, "transition", "WorkTransition")?.get())
}

/// What `Scheduler.rebuild` was given.
enum RebuildSource {
    Snapshot(CoreSnapshot),
    Offers(Vec<CoreOffer>),
}

/// The source of `Scheduler.rebuild`, by its Python type: a `SchedulerSnapshot`, a mapping (the
/// snapshot's JSON form: a malformed one is `SnapshotError`), or an iterable of offers (not
/// text). Anything else is API misuse: `InvalidInputError` naming `source`, never a bare
/// `TypeError`.
fn rebuild_source(py: Python<'_>, source: &Bound<'_, PyAny>) -> PyResult<RebuildSource> {
    let misuse = |detail: String| errors::describe(py, &ArgumentError::new("source", detail));
    if let Ok(snapshot) = source.cast::<SchedulerSnapshot>() {
        return Ok(RebuildSource::Snapshot(snapshot.get().inner.clone()));
    }
    if source.cast::<PyMapping>().is_ok() {
        return SchedulerSnapshot::from_dict(py, source)
            .map(|snapshot| RebuildSource::Snapshot(snapshot.inner));
    }
    if source.is_instance_of::<PyString>()
        || source.is_instance_of::<PyBytes>()
        || source.is_instance_of::<PyByteArray>()
    {
        return Err(misuse(format!(
            "a {} is not a snapshot (SchedulerSnapshot.from_json reads JSON text) nor offers",
            convert::type_name(source)
        )));
    }
    let Ok(items) = source.try_iter() else {
        return Err(misuse(format!(
            "must be a SchedulerSnapshot, its mapping form or an iterable of WorkOffer, not {}",
            convert::type_name(source)
        )));
    };
    let mut offers = Vec::new();
    for item in items {
        offers.push(offer_item(py, &item?, "source items")?);
    }
    Ok(RebuildSource::Offers(offers))
}

/// One offer of a batch (`what` names it in errors): a native `WorkOffer`, or the package's
/// `scheduler.WorkOffer`, which holds its native offer as `_core`.
fn offer_item(py: Python<'_>, item: &Bound<'_, PyAny>, what: &str) -> PyResult<CoreOffer> {
    if let Ok(offer) = item.cast::<WorkOffer>() {
        return Ok(offer.get().inner.clone());
    }
    if let Ok(core) = item.getattr(pyo3::intern!(py, "_core"))
        && let Ok(offer) = core.cast::<WorkOffer>()
    {
        return Ok(offer.get().inner.clone());
    }
    Err(errors::describe(
        py,
        &ArgumentError::new(
            what,
            format!("must be a WorkOffer, not {}", convert::type_name(item)),
        ),
    ))
}

#[pymethods]
impl Scheduler {
    #[new]
    #[pyo3(signature = (policy=None))]
    fn py_new(py: Python<'_>, policy: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        CoreScheduler::new(policy_arg(py, policy)?)
            .map(|inner| Self { inner })
            .map_err(|e| errors::scheduler_error(py, &e))
    }

    /// The reference's `Scheduler.rebuild(source)`: from a `SchedulerSnapshot` (or its
    /// mapping form), or from offers (any iterable of `WorkOffer`).
    ///
    /// A snapshot with `exact` or without `now` is restored exactly (same queues, passes and
    /// running set); with `now`, the runtime is treated as lost (§11.3): running work resumes
    /// from a durable safe checkpoint if it has one, otherwise it waits blocked with reason
    /// `runtime_session_lost` until unblocked. Offers are admitted at `now` (required) in
    /// order; one the Scheduler declines refuses the rebuild (`SchedulerError`,
    /// `offer_declined`); none at all (the core's `SchedulerError::NoOffers`) and any other
    /// source (`None`, a number, JSON text) are `InvalidInputError` naming `source`.
    #[staticmethod]
    #[pyo3(signature = (source, policy=None, *, now=None, exact=false))]
    fn rebuild(
        py: Python<'_>,
        source: &Bound<'_, PyAny>,
        policy: Option<&Bound<'_, PyAny>>,
        now: Option<&Bound<'_, PyAny>>,
        exact: bool,
    ) -> PyResult<Self> {
        let source = rebuild_source(py, source)?;
        let policy = policy_arg(py, policy)?;
        let now = opt_millis_arg(py, now, "now")?;
        let result = match (source, now) {
            (RebuildSource::Snapshot(snap), Some(now)) if !exact => {
                CoreScheduler::rebuild_after_restart(policy, &snap, now)
            }
            (RebuildSource::Snapshot(snap), _) => CoreScheduler::restore(policy, &snap),
            (RebuildSource::Offers(offers), Some(now)) => {
                CoreScheduler::from_offers(policy, &offers, now)
            }
            (RebuildSource::Offers(_), None) => {
                return Err(errors::describe(
                    py,
                    &ArgumentError::new("now", "required to admit offers"),
                ));
            }
        };
        result
            .map(|inner| Self { inner })
            .map_err(|e| errors::scheduler_error(py, &e))
    }

    /// The policy in force.
    #[getter]
    fn policy(&self) -> SchedulerPolicy {
        SchedulerPolicy {
            inner: self.inner.policy().clone(),
        }
    }

    /// Slots held by running or preempting items.
    #[getter]
    fn used_slots(&self) -> u32 {
        self.inner.used_slots()
    }

    /// Declared capacity.
    #[getter]
    fn capacity_slots(&self) -> u32 {
        self.inner.capacity_slots()
    }

    /// Admission control (§10.3).
    #[pyo3(signature = (offer, *, now))]
    fn admit(
        &mut self,
        py: Python<'_>,
        offer: &Bound<'_, PyAny>,
        now: &Bound<'_, PyAny>,
    ) -> PyResult<AdmissionDecision> {
        let offer = typed::<WorkOffer>(py, offer, "offer", "WorkOffer")?.get();
        let now = millis_arg(py, now, "now")?;
        Ok(self.decide(offer, now))
    }

    /// Admits every offer at `now`, in order; one decision per offer.
    #[pyo3(signature = (offers, *, now))]
    fn admit_many(
        &mut self,
        py: Python<'_>,
        offers: &Bound<'_, PyAny>,
        now: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<AdmissionDecision>> {
        let now = millis_arg(py, now, "now")?;
        let mut out = Vec::new();
        for item in convert::iter_arg(py, offers, "offers")? {
            let offer = offer_item(py, &item?, "offers items")?;
            out.push(AdmissionDecision {
                work_id: offer.work_id.clone(),
                inner: self.inner.admit(&offer, now),
            });
        }
        Ok(out)
    }

    /// Every decision due at `now`: releases blocked items whose retry time came, fills free
    /// slots (`Dispatch`) and requests at most one cooperative preemption (`Preempt`).
    #[pyo3(signature = (*, now))]
    fn schedule<'py>(
        &mut self,
        py: Python<'py>,
        now: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let now = millis_arg(py, now, "now")?;
        let actions = self.inner.schedule(now);
        let list = PyList::empty(py);
        for a in actions {
            match a {
                ScheduleAction::Dispatch(d) => list.append(Dispatch {
                    work_id: d.work_id,
                    group_id: d.group_id,
                    generation: d.generation,
                    slots: d.slots,
                    resume_from: d.resume_from,
                })?,
                ScheduleAction::Preempt(p) => list.append(Preempt {
                    work_id: p.work_id,
                    group_id: p.group_id,
                    generation: p.generation,
                    checkpoint: p.checkpoint,
                })?,
            }
        }
        Ok(list.to_tuple())
    }

    /// Applies a Worker report about the current run at `now`.
    #[pyo3(signature = (transition, *, now))]
    fn apply(
        &mut self,
        py: Python<'_>,
        transition: &Bound<'_, PyAny>,
        now: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let t = transition_arg(py, transition)?;
        let now = millis_arg(py, now, "now")?;
        self.apply_one(py, t, now)
    }

    /// Applies reports in order at `now`; stops at the first failure (earlier ones stay
    /// applied).
    #[pyo3(signature = (transitions, *, now))]
    fn apply_many(
        &mut self,
        py: Python<'_>,
        transitions: &Bound<'_, PyAny>,
        now: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let now = millis_arg(py, now, "now")?;
        for item in convert::iter_arg(py, transitions, "transitions")? {
            let item = item?;
            let t = transition_arg(py, &item)?;
            self.apply_one(py, t, now)?;
        }
        Ok(())
    }

    /// A blocker was resolved (`work.unblock`): the item returns to its Group queue.
    #[pyo3(signature = (work_id, *, now))]
    fn unblock(
        &mut self,
        py: Python<'_>,
        work_id: &Bound<'_, PyAny>,
        now: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let id = convert::str_arg(py, work_id, "work_id")?;
        let now = millis_arg(py, now, "now")?;
        self.inner
            .unblock(&id, now)
            .map_err(|e| errors::scheduler_error(py, &e))
    }

    /// Cancellation from the Group log, in any state.
    fn cancel(&mut self, py: Python<'_>, work_id: &Bound<'_, PyAny>) -> PyResult<()> {
        let id = convert::str_arg(py, work_id, "work_id")?;
        self.inner
            .cancel(&id)
            .map_err(|e| errors::scheduler_error(py, &e))
    }

    /// Priority change (policy or MissionOwner escalation); reorders a queued item at once.
    fn reprioritize(
        &mut self,
        py: Python<'_>,
        work_id: &Bound<'_, PyAny>,
        organizational_priority: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let id = convert::str_arg(py, work_id, "work_id")?;
        let p = priority_arg(py, organizational_priority, "organizational_priority")?;
        self.inner
            .reprioritize(&id, p)
            .map_err(|e| errors::scheduler_error(py, &e))
    }

    /// Presence changed the capacity; running work is never interrupted.
    fn set_capacity(&mut self, py: Python<'_>, capacity_slots: &Bound<'_, PyAny>) -> PyResult<()> {
        let slots = u32_arg(py, capacity_slots, "capacity_slots")?;
        self.inner
            .set_capacity(slots)
            .map_err(|e| errors::scheduler_error(py, &e))
    }

    /// Changes one Group's weight or quota; takes effect immediately.
    fn set_group_policy(
        &mut self,
        py: Python<'_>,
        group_id: &Bound<'_, PyAny>,
        policy: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let id = convert::str_arg(py, group_id, "group_id")?;
        let p = typed::<GroupSchedulingPolicy>(py, policy, "policy", "GroupSchedulingPolicy")?
            .get()
            .inner;
        self.inner
            .set_group_policy(&id, p)
            .map_err(|e| errors::scheduler_error(py, &e))
    }

    /// The `WorkState` of a non-terminal item, else `None`.
    fn state<'py>(
        &self,
        py: Python<'py>,
        work_id: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let id = convert::str_arg(py, work_id, "work_id")?;
        self.inner
            .state(&id)
            .map(|s| PyEnum::WorkState.member(py, state_str(s)))
            .transpose()
    }

    /// The current run generation of a non-terminal item, else `None`.
    fn generation(&self, py: Python<'_>, work_id: &Bound<'_, PyAny>) -> PyResult<Option<u32>> {
        Ok(self
            .inner
            .generation(&convert::str_arg(py, work_id, "work_id")?))
    }

    /// True when the item completed, failed or was cancelled here (until `forget`).
    fn is_terminal(&self, py: Python<'_>, work_id: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self
            .inner
            .is_terminal(&convert::str_arg(py, work_id, "work_id")?))
    }

    /// Drops the memory of a terminal item.
    fn forget(&mut self, py: Python<'_>, work_id: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self
            .inner
            .forget(&convert::str_arg(py, work_id, "work_id")?))
    }

    /// The §11.2 disclosure for a non-terminal item at `now`, or `None`.
    #[pyo3(signature = (work_id, *, now))]
    fn disclose(
        &self,
        py: Python<'_>,
        work_id: &Bound<'_, PyAny>,
        now: &Bound<'_, PyAny>,
    ) -> PyResult<Option<ScheduleDisclosure>> {
        let id = convert::str_arg(py, work_id, "work_id")?;
        let now = millis_arg(py, now, "now")?;
        Ok(self
            .inner
            .disclose(&id, now)
            .map(|inner| ScheduleDisclosure { inner }))
    }

    /// A full snapshot.
    fn snapshot(&self) -> SchedulerSnapshot {
        SchedulerSnapshot {
            inner: self.inner.snapshot(),
        }
    }

    /// Non-terminal items.
    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "Scheduler(items={}, used_slots={}, capacity_slots={})",
            self.inner.len(),
            self.inner.used_slots(),
            self.inner.capacity_slots()
        )
    }
}

// Access for the Agent replay binding (`replay.rs`, `local_store.rs`): the replay admits into
// the very Scheduler the Python object holds, and the store saves its snapshots.
impl Scheduler {
    pub(crate) fn core_mut(&mut self) -> &mut CoreScheduler {
        &mut self.inner
    }
}

impl SchedulerSnapshot {
    pub(crate) fn core(&self) -> &CoreSnapshot {
        &self.inner
    }
    pub(crate) fn from_core(inner: CoreSnapshot) -> Self {
        Self { inner }
    }
}

impl WorkOffer {
    pub(crate) fn core(&self) -> &CoreOffer {
        &self.inner
    }
}

impl AdmissionDecision {
    pub(crate) fn from_core(inner: CoreDecision, work_id: String) -> Self {
        Self { inner, work_id }
    }
}

// ---- the reference's shapes (`missionweaveprotocol.scheduler`) -------------------------------
//
// Conversions only: the mapping and its refusals are `missionweaveprotocol_kernel::scheduler::
// reference`'s.

/// A Python number as written: an `int` exactly, a `float` by its shortest round-trip decimal
/// (`0.1` is one tenth). `None` for `bool`, a non-number or a non-finite float.
fn written_number(value: &Bound<'_, PyAny>) -> PyResult<Option<WrittenNumber>> {
    if convert::plain_int(value) {
        let exact = value.call_method0("__index__")?.str()?;
        return Ok(WrittenNumber::parse(&exact.to_string()));
    }
    if value.is_instance_of::<pyo3::types::PyFloat>() {
        let float: f64 = value.extract()?;
        return Ok(if float.is_finite() {
            WrittenNumber::parse(&format!("{float:e}"))
        } else {
            None
        });
    }
    Ok(None)
}

fn written_to_python<'py>(py: Python<'py>, value: WrittenNumber) -> PyResult<Bound<'py, PyAny>> {
    let float: f64 = value.to_string().parse().unwrap_or(f64::NAN);
    Ok(float.into_pyobject(py)?.into_any())
}

/// `scheduler_effort_duration_ms(band)`: the estimate of a reference effort band (its value):
/// `value × EFFORT_UNIT_MS` ms, `None` for `UNKNOWN` (the policy's default estimate).
#[pyfunction]
pub fn scheduler_effort_duration_ms(
    py: Python<'_>,
    band: &Bound<'_, PyAny>,
) -> PyResult<Option<u32>> {
    let value = convert::uint_arg(py, band, "band", u64::from(u32::MAX))?;
    EffortBand::from_value(value)
        .map(EffortBand::duration_ms)
        .ok_or_else(|| errors::invalid_input(py, format!("{value} is not an effort band")))
}

/// `scheduler_group_policy(weight, slot_quota, priority_bias)`: the core's Group policy of the
/// reference's `GroupSchedulingPolicy`, or the core's refusal (`SchedulerError`).
#[pyfunction]
pub fn scheduler_group_policy(
    py: Python<'_>,
    weight: &Bound<'_, PyAny>,
    slot_quota: Option<&Bound<'_, PyAny>>,
    priority_bias: &Bound<'_, PyAny>,
) -> PyResult<GroupSchedulingPolicy> {
    let bias = if convert::plain_int(priority_bias) {
        priority_bias.extract::<i64>().ok()
    } else {
        None
    };
    let slot_quota = convert::present(slot_quota)
        .map(|v| u32_arg(py, v, "slot_quota"))
        .transpose()?;
    reference::reference_group_policy(written_number(weight)?, slot_quota, bias)
        .map(|inner| GroupSchedulingPolicy { inner })
        .map_err(|e| errors::scheduler_error(py, &e))
}

/// The reference's policy knobs with their defaults (`aging_interval`, `deadline_horizon` as
/// `timedelta`; the weights and `preemption_margin` as `float`).
#[pyfunction]
pub fn scheduler_reference_defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = ReferenceSchedulerPolicy::default();
    let out = PyDict::new(py);
    let timedelta = py.import("datetime")?.getattr("timedelta")?;
    for (name, micros) in [
        ("aging_interval", d.aging_interval_us),
        ("deadline_horizon", d.deadline_horizon_us),
    ] {
        let kwargs = PyDict::new(py);
        kwargs.set_item("microseconds", micros.unwrap_or_default())?;
        out.set_item(name, timedelta.call((), Some(&kwargs))?)?;
    }
    for (name, value) in [
        ("priority_weight", d.priority_weight),
        ("deadline_weight", d.deadline_weight),
        ("aging_weight", d.aging_weight),
        ("fairness_weight", d.fairness_weight),
        ("quota_pressure_weight", d.quota_pressure_weight),
        ("estimate_weight", d.estimate_weight),
        ("preemption_margin", d.preemption_margin),
    ] {
        if let Some(value) = value {
            out.set_item(name, written_to_python(py, value)?)?;
        }
    }
    Ok(out)
}

/// `scheduler_reference_policy(*, aging_interval, …, preemption_margin, priority_step_ms,
/// deadline_horizon_ms, preemption_margin_points, fairness_lag_slots)`: `(priority_step_ms,
/// deadline_horizon_ms, preemption_margin, fairness_lag_slots, fairness_lag_pass)` for the
/// core's `SchedulerPolicy` — what the reference knobs map to, else the own field as given — or
/// the core's refusal (`SchedulerError`).
#[pyfunction]
#[pyo3(signature = (*, aging_interval, deadline_horizon, priority_weight, deadline_weight, aging_weight, fairness_weight, quota_pressure_weight, estimate_weight, preemption_margin, priority_step_ms=None, deadline_horizon_ms=None, preemption_margin_points=None, fairness_lag_slots=None))]
#[allow(clippy::too_many_arguments)]
pub fn scheduler_reference_policy<'py>(
    py: Python<'py>,
    aging_interval: &Bound<'py, PyAny>,
    deadline_horizon: &Bound<'py, PyAny>,
    priority_weight: &Bound<'py, PyAny>,
    deadline_weight: &Bound<'py, PyAny>,
    aging_weight: &Bound<'py, PyAny>,
    fairness_weight: &Bound<'py, PyAny>,
    quota_pressure_weight: &Bound<'py, PyAny>,
    estimate_weight: &Bound<'py, PyAny>,
    preemption_margin: &Bound<'py, PyAny>,
    priority_step_ms: Option<&Bound<'py, PyAny>>,
    deadline_horizon_ms: Option<&Bound<'py, PyAny>>,
    preemption_margin_points: Option<&Bound<'py, PyAny>>,
    fairness_lag_slots: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyTuple>> {
    let knobs = ReferenceSchedulerPolicy {
        aging_interval_us: timedelta_micros(py, aging_interval)?,
        deadline_horizon_us: timedelta_micros(py, deadline_horizon)?,
        priority_weight: written_number(priority_weight)?,
        deadline_weight: written_number(deadline_weight)?,
        aging_weight: written_number(aging_weight)?,
        fairness_weight: written_number(fairness_weight)?,
        quota_pressure_weight: written_number(quota_pressure_weight)?,
        estimate_weight: written_number(estimate_weight)?,
        preemption_margin: written_number(preemption_margin)?,
    };
    let own = [
        priority_step_ms,
        deadline_horizon_ms,
        preemption_margin_points,
        fairness_lag_slots,
    ]
    .map(|v| convert::present(v).cloned());
    let given = OwnFieldsGiven {
        priority_step_ms: own[0].is_some(),
        deadline_horizon_ms: own[1].is_some(),
        preemption_margin_points: own[2].is_some(),
        fairness_lag_slots: own[3].is_some(),
    };
    let mapped = reference::map_reference_policy(&knobs, given)
        .map_err(|e| errors::scheduler_error(py, &e))?;
    let pick =
        |mapped: Option<u32>, own: &Option<Bound<'py, PyAny>>| -> PyResult<Bound<'py, PyAny>> {
            Ok(match (mapped, own) {
                (Some(v), _) => v.into_pyobject(py)?.into_any(),
                (None, Some(own)) => own.clone(),
                (None, None) => py.None().into_bound(py),
            })
        };
    PyTuple::new(
        py,
        [
            pick(mapped.priority_step_ms, &own[0])?,
            pick(mapped.deadline_horizon_ms, &own[1])?,
            pick(mapped.preemption_margin.map(u32::from), &own[2])?,
            pick(None, &own[3])?,
            match mapped.fairness_lag_pass {
                Some(lag) => lag.into_pyobject(py)?.into_any(),
                None => py.None().into_bound(py),
            },
        ],
    )
}

/// `scheduler_run_generation(work_id, run_id)`: the generation a reference-style run id
/// (`"<work_id>:<generation>"`, `Dispatch.run_id`) names, or `None`.
#[pyfunction]
pub fn scheduler_run_generation(work_id: &str, run_id: &str) -> Option<u32> {
    scheduler::Dispatch::run_generation(work_id, run_id)
}

pub fn register_reference(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("EFFORT_UNIT_MS", reference::EFFORT_UNIT_MS)?;
    m.add_function(wrap_pyfunction!(scheduler_effort_duration_ms, m)?)?;
    m.add_function(wrap_pyfunction!(scheduler_group_policy, m)?)?;
    m.add_function(wrap_pyfunction!(scheduler_reference_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(scheduler_reference_policy, m)?)?;
    m.add_function(wrap_pyfunction!(scheduler_run_generation, m)?)?;
    Ok(())
}
