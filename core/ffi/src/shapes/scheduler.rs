//! The Scheduler's shapes (§10.3, §11.1–§11.4): policy, offers, transitions in; decisions,
//! actions, disclosures and statistics out. Absent policy and offer members take the core's
//! defaults; the core checks every range the type does not (`scheduler::priority`, weights).

use std::collections::{BTreeMap, HashMap, HashSet};

use missionweaveprotocol_kernel::scheduler::{
    self, AdmissionDecision, CheckpointRef, Eligibility, GroupPolicy, ScheduleAction,
    ScheduleDisclosure, SchedulerPolicy, Transition, WorkOffer,
};
use serde::{Deserialize, Serialize};
#[cfg(test)]
use ts_rs::TS;

use super::Res;
use super::common::{CapabilityArg, Millis, capability_refs};
use super::unique::UniqueMap;
use crate::envelope::Failure;

/// One group's share: weight 1..=1 000 000 (default 1), optional slot quota.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(test, derive(TS), ts(optional_fields = nullable))]
pub struct GroupPolicyInput {
    pub weight: Option<u32>,
    pub slot_quota: Option<u32>,
}

impl From<GroupPolicyInput> for GroupPolicy {
    fn from(g: GroupPolicyInput) -> Self {
        Self {
            weight: g.weight.unwrap_or(1),
            slot_quota: g.slot_quota,
        }
    }
}

/// The Scheduler's policy; every member is optional (the core's defaults).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(test, derive(TS), ts(optional_fields = nullable))]
pub struct SchedulerPolicyInput {
    pub capacity_slots: Option<u32>,
    #[cfg_attr(test, ts(as = "Option<HashMap<String, GroupPolicyInput>>"))]
    pub groups: Option<UniqueMap<GroupPolicyInput>>,
    pub default_group: Option<GroupPolicyInput>,
    /// `null`: every capability is supported.
    pub supported_capabilities: Option<Vec<CapabilityArg>>,
    /// `null`: every group is allowed.
    pub allowed_groups: Option<Vec<String>>,
    pub max_work_items: Option<u32>,
    pub max_work_items_per_group: Option<u32>,
    pub decline_infeasible_deadlines: Option<bool>,
    pub priority_step_ms: Option<u32>,
    pub deadline_horizon_ms: Option<u32>,
    pub fairness_lag_slots: Option<u32>,
    pub preemption_margin: Option<u8>,
    pub default_estimate_ms: Option<u32>,
}

impl From<SchedulerPolicyInput> for SchedulerPolicy {
    fn from(p: SchedulerPolicyInput) -> Self {
        let d = SchedulerPolicy::default();
        let groups: BTreeMap<String, GroupPolicyInput> = p.groups.map(|g| g.0).unwrap_or_default();
        Self {
            capacity_slots: p.capacity_slots.unwrap_or(d.capacity_slots),
            groups: groups
                .into_iter()
                .map(|(id, g)| (id, g.into()))
                .collect::<HashMap<_, _>>(),
            default_group: p.default_group.map_or(d.default_group, Into::into),
            supported_capabilities: p.supported_capabilities.map(capability_refs),
            allowed_groups: p
                .allowed_groups
                .map(|g| g.into_iter().collect::<HashSet<_>>()),
            max_work_items: p.max_work_items.unwrap_or(d.max_work_items),
            max_work_items_per_group: p
                .max_work_items_per_group
                .unwrap_or(d.max_work_items_per_group),
            decline_infeasible_deadlines: p
                .decline_infeasible_deadlines
                .unwrap_or(d.decline_infeasible_deadlines),
            priority_step_ms: p.priority_step_ms.unwrap_or(d.priority_step_ms),
            deadline_horizon_ms: p.deadline_horizon_ms.unwrap_or(d.deadline_horizon_ms),
            fairness_lag_slots: p.fairness_lag_slots.unwrap_or(d.fairness_lag_slots),
            // The reference's `fairness_weight` (a lag below one slot) is Python's only.
            fairness_lag_pass: None,
            preemption_margin: p.preemption_margin.unwrap_or(d.preemption_margin),
            default_estimate_ms: p.default_estimate_ms.unwrap_or(d.default_estimate_ms),
        }
    }
}

/// The offer's admission gates (each default `true`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(test, derive(TS), ts(optional_fields = nullable))]
pub struct EligibilityInput {
    pub authorized: Option<bool>,
    pub dependencies_ready: Option<bool>,
    pub budget_available: Option<bool>,
}

/// One unit of work offered to the Scheduler.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(test, derive(TS), ts(optional_fields = nullable))]
pub struct WorkOfferInput {
    #[cfg_attr(test, ts(optional = false))]
    pub work_id: String,
    #[cfg_attr(test, ts(optional = false))]
    pub group_id: String,
    /// Organization priority class, -100..100 (default 0; the core checks the range).
    #[cfg_attr(test, ts(type = "number | null", optional))]
    pub priority: Option<i64>,
    #[cfg_attr(test, ts(type = "TimeInput | null", optional))]
    pub deadline: Option<Millis>,
    pub estimated_duration_ms: Option<u32>,
    pub slots: Option<u16>,
    pub required_capabilities: Option<Vec<CapabilityArg>>,
    pub preemptible: Option<bool>,
    pub eligibility: Option<EligibilityInput>,
}

impl WorkOfferInput {
    pub fn into_offer(self) -> Res<WorkOffer> {
        WorkOffer::check_ids(&self.work_id, &self.group_id).map_err(|e| Failure::error(&e))?;
        let e = self.eligibility.unwrap_or_default();
        Ok(WorkOffer {
            work_id: self.work_id,
            group_id: self.group_id,
            priority: scheduler::priority(self.priority.unwrap_or(0))
                .map_err(|e| Failure::error(&e))?,
            deadline: self.deadline.map(|m| m.0),
            estimated_duration_ms: self.estimated_duration_ms.unwrap_or(0),
            slots: self.slots.unwrap_or(1),
            required_capabilities: capability_refs(self.required_capabilities.unwrap_or_default()),
            preemptible: self.preemptible.unwrap_or(true),
            eligibility: Eligibility {
                authorized: e.authorized.unwrap_or(true),
                dependencies_ready: e.dependencies_ready.unwrap_or(true),
                budget_available: e.budget_available.unwrap_or(true),
            },
        })
    }
}

/// A checkpoint the Worker saved (`durable` and `safe` default `true`).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(test, derive(TS), ts(optional_fields = nullable))]
pub struct CheckpointInput {
    #[cfg_attr(test, ts(optional = false))]
    pub checkpoint_id: String,
    pub durable: Option<bool>,
    pub safe: Option<bool>,
}

impl From<CheckpointInput> for CheckpointRef {
    fn from(c: CheckpointInput) -> Self {
        Self {
            checkpoint_id: c.checkpoint_id,
            durable: c.durable.unwrap_or(true),
            safe: c.safe.unwrap_or(true),
        }
    }
}

/// The six kinds of Worker report, in the core's snake_case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(test, derive(TS))]
pub enum TransitionKindName {
    CheckpointSaved,
    PreemptionDeclined,
    Blocked,
    Released,
    Completed,
    Failed,
}

/// A Worker report about the current run. `checkpoint` is required by `checkpoint_saved` and
/// `blocked`, `reason` by `blocked`; `retryAt` belongs to `blocked` only.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(test, derive(TS), ts(optional_fields = nullable))]
pub struct TransitionInput {
    #[cfg_attr(test, ts(optional = false))]
    pub kind: TransitionKindName,
    #[cfg_attr(test, ts(optional = false))]
    pub generation: u32,
    pub checkpoint: Option<CheckpointInput>,
    #[cfg_attr(test, ts(type = "TimeInput | null", optional))]
    pub retry_at: Option<Millis>,
    pub reason: Option<String>,
}

impl TransitionInput {
    pub fn into_transition(self) -> Res<Transition> {
        use TransitionKindName as K;
        let required = |member: &str| {
            Failure::error(&missionweaveprotocol::ArgumentError::new(
                format!("transition.{member}"),
                "required",
            ))
        };
        let generation = self.generation;
        let (checkpoint, retry_at, reason) = (self.checkpoint, self.retry_at, self.reason);
        let extra = match self.kind {
            K::Blocked => None,
            K::CheckpointSaved if retry_at.is_some() => Some("retryAt"),
            K::CheckpointSaved if reason.is_some() => Some("reason"),
            K::CheckpointSaved => None,
            _ if checkpoint.is_some() => Some("checkpoint"),
            _ if retry_at.is_some() => Some("retryAt"),
            _ if reason.is_some() => Some("reason"),
            _ => None,
        };
        if let Some(member) = extra {
            return Err(Failure::error(&missionweaveprotocol::ArgumentError::new(
                "transition",
                format!("unknown member {member:?} for this kind"),
            )));
        }
        Ok(match self.kind {
            K::CheckpointSaved => Transition::CheckpointSaved {
                generation,
                checkpoint: checkpoint.ok_or_else(|| required("checkpoint"))?.into(),
            },
            K::PreemptionDeclined => Transition::PreemptionDeclined { generation },
            K::Blocked => Transition::Blocked {
                generation,
                checkpoint: checkpoint.ok_or_else(|| required("checkpoint"))?.into(),
                retry_at: retry_at.map(|m| m.0),
                reason: reason.ok_or_else(|| required("reason"))?,
            },
            K::Released => Transition::Released { generation },
            K::Completed => Transition::Completed { generation },
            K::Failed => Transition::Failed { generation },
        })
    }
}

// ---- answers -------------------------------------------------------------------------------

/// The admission decision for one offer.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(TS))]
pub struct AdmissionDecisionAnswer<'a> {
    pub work_id: &'a str,
    pub accepted: bool,
    #[cfg_attr(test, ts(type = "AdmissionReasonName"))]
    pub reason: &'static str,
    #[cfg_attr(test, ts(type = "DeclineReasonName | null"))]
    pub decline_reason: Option<&'static str>,
}

impl<'a> AdmissionDecisionAnswer<'a> {
    pub fn new(work_id: &'a str, d: AdmissionDecision) -> Self {
        Self {
            work_id,
            accepted: d.accepted,
            reason: d.reason.as_str(),
            decline_reason: d.reason.category().map(|c| c.as_str()),
        }
    }
}

/// A checkpoint as the Scheduler holds it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(TS))]
pub struct CheckpointAnswer<'a> {
    pub checkpoint_id: &'a str,
    pub durable: bool,
    pub safe: bool,
}

/// One decision of `schedule`: `dispatch` (with `slots`, `resumeFrom`) or `preempt`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(TS), ts(optional_fields))]
pub struct ScheduleActionAnswer<'a> {
    #[serde(rename = "type")]
    #[cfg_attr(test, ts(optional = false, type = "'dispatch' | 'preempt'"))]
    pub kind: &'static str,
    #[cfg_attr(test, ts(optional = false))]
    pub work_id: &'a str,
    #[cfg_attr(test, ts(optional = false))]
    pub group_id: &'a str,
    #[cfg_attr(test, ts(optional = false))]
    pub generation: u32,
    /// `workId:generation`.
    #[cfg_attr(test, ts(optional = false))]
    pub run_id: String,
    /// Dispatch only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slots: Option<u16>,
    /// Dispatch only: the checkpoint to resume from, or `null`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume_from: Option<Option<CheckpointAnswer<'a>>>,
}

impl<'a> ScheduleActionAnswer<'a> {
    pub fn new(action: &'a ScheduleAction) -> Self {
        let (kind, work_id, group_id, generation) = match action {
            ScheduleAction::Dispatch(d) => ("dispatch", &d.work_id, &d.group_id, d.generation),
            ScheduleAction::Preempt(p) => ("preempt", &p.work_id, &p.group_id, p.generation),
        };
        let (slots, resume_from) = match action {
            ScheduleAction::Dispatch(d) => (
                Some(d.slots),
                Some(d.resume_from.as_ref().map(|c| CheckpointAnswer {
                    checkpoint_id: &c.checkpoint_id,
                    durable: c.durable,
                    safe: c.safe,
                })),
            ),
            ScheduleAction::Preempt(_) => (None, None),
        };
        Self {
            kind,
            work_id,
            group_id,
            generation,
            run_id: format!("{work_id}:{generation}"),
            slots,
            resume_from,
        }
    }
}

/// What the Scheduler discloses about one WorkItem (§11.4); times in Unix milliseconds.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(TS))]
pub struct ScheduleDisclosureAnswer {
    #[cfg_attr(test, ts(type = "WorkStateName"))]
    pub state: &'static str,
    pub earliest_start: Option<Millis>,
    pub latest_start: Option<Millis>,
    pub estimated_completion: Option<Millis>,
    #[cfg_attr(test, ts(type = "'high' | 'medium' | 'low'"))]
    pub confidence: &'static str,
    #[cfg_attr(test, ts(type = "'available' | 'constrained' | 'saturated'"))]
    pub capacity_status: &'static str,
    pub calculated_at: Millis,
}

impl From<ScheduleDisclosure> for ScheduleDisclosureAnswer {
    fn from(d: ScheduleDisclosure) -> Self {
        Self {
            state: d.state.as_str(),
            earliest_start: d.earliest_start.map(Millis),
            latest_start: d.latest_start.map(Millis),
            estimated_completion: d.estimated_completion.map(Millis),
            confidence: d.confidence.as_str(),
            capacity_status: d.capacity_status.as_str(),
            calculated_at: Millis(d.calculated_at),
        }
    }
}

/// Occupancy figures.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(TS))]
pub struct SchedulerStatsAnswer {
    pub size: u32,
    pub used_slots: u32,
    pub capacity_slots: u32,
    pub horizon_ms: u64,
}
