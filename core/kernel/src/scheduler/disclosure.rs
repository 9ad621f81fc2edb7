//! Scheduling disclosure (§11.2): estimated start window, completion, confidence, capacity
//! status and calculation time for one item.
//!
//! The estimate is computed only from the item's own Group (its queued work, weight and quota)
//! and from Worker-wide aggregates (capacity, free slots, total weight of Groups with work). It
//! never reads another Group's items, so it cannot reveal their names, content, assignments or
//! queue positions. It is O(1).

use super::core::Scheduler;
use super::types::WorkState;
use crate::unix_millis::UnixMillis;

/// How much to trust an estimate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Confidence {
    /// Running, or next in line with a free slot.
    High,
    /// Little queued ahead.
    Medium,
    /// Long queue, blocked, or waiting on an unknown blocker.
    Low,
}

missionweaveprotocol::spelling!(Confidence {
    High => "high",
    Medium => "medium",
    Low => "low",
});

/// Worker capacity as disclosed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CapacityStatus {
    /// Enough free slots for this item now.
    Available,
    /// Some free slots, fewer than this item needs.
    Constrained,
    /// No free slot.
    Saturated,
}

missionweaveprotocol::spelling!(CapacityStatus {
    Available => "available",
    Constrained => "constrained",
    Saturated => "saturated",
});

/// A §11.2 disclosure for one item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleDisclosure {
    /// Scheduler state of the item.
    pub state: WorkState,
    /// Earliest expected start (`None` while blocked without a retry time).
    pub earliest_start: Option<UnixMillis>,
    /// Latest expected start.
    pub latest_start: Option<UnixMillis>,
    /// Expected completion (from the latest start).
    pub estimated_completion: Option<UnixMillis>,
    /// Confidence.
    pub confidence: Confidence,
    /// Capacity status.
    pub capacity_status: CapacityStatus,
    /// Calculation time.
    pub calculated_at: UnixMillis,
}

impl Scheduler {
    /// The disclosure for a non-terminal item at `now`, or `None` if unknown here.
    pub fn disclose(&self, work_id: &str, now: UnixMillis) -> Option<ScheduleDisclosure> {
        let idx = self.entry_idx(work_id)?;
        let e = self.entry(idx);
        let g = &self.groups[e.group as usize];
        let own_ms = u64::from(self.estimate_of(e.estimate_ms));
        let capacity = self.policy.capacity_slots;
        let free = capacity.saturating_sub(self.used_slots);
        let capacity_status = if free >= u32::from(e.slots) {
            CapacityStatus::Available
        } else if free > 0 {
            CapacityStatus::Constrained
        } else {
            CapacityStatus::Saturated
        };
        let mut out = ScheduleDisclosure {
            state: e.state,
            earliest_start: None,
            latest_start: None,
            estimated_completion: None,
            confidence: Confidence::Low,
            capacity_status,
            calculated_at: now,
        };
        match e.state {
            WorkState::Running | WorkState::Preempting => {
                let started = UnixMillis(e.since);
                out.earliest_start = Some(started);
                out.latest_start = Some(started);
                out.estimated_completion = Some(started.saturating_add_ms(own_ms).max(now));
                out.confidence = Confidence::High;
            }
            WorkState::Blocked => {
                let retry = e.detail.as_ref().and_then(|d| d.retry_at);
                if let Some(at) = retry {
                    let start = UnixMillis(at).max(now);
                    out.earliest_start = Some(start);
                    out.latest_start = Some(start);
                    out.estimated_completion = Some(start.saturating_add_ms(own_ms));
                }
            }
            WorkState::Ready => {
                // The Group's share of slots: its weight over the weights of Groups with ready
                // work (an aggregate), capped by its quota; never less than one slot.
                let weight = u64::from(g.policy.weight);
                let total_weight = self.listed_weight.max(weight);
                let mut share = u64::from(capacity) * weight / total_weight;
                if let Some(q) = g.policy.slot_quota {
                    share = share.min(u64::from(q));
                }
                let share = share.max(1);
                // Pessimistic: everything else queued in this Group goes first, and what runs
                // now runs its full estimate.
                let ahead_ms = g.ready_estimate_ms.saturating_sub(own_ms);
                let running_ms = u64::from(g.running_slots) * own_ms;
                let wait = (ahead_ms + running_ms).div_ceil(share);
                let is_head = g.heap.peek().is_some_and(|r| r.0.2 == idx);
                let earliest = if is_head && capacity_status == CapacityStatus::Available {
                    now
                } else {
                    now.saturating_add_ms(own_ms.min(wait))
                };
                let latest = now.saturating_add_ms(wait);
                out.earliest_start = Some(earliest);
                out.latest_start = Some(latest.max(earliest));
                out.estimated_completion = Some(latest.max(earliest).saturating_add_ms(own_ms));
                out.confidence = if is_head && capacity_status == CapacityStatus::Available {
                    Confidence::High
                } else if u64::from(g.ready) <= u64::from(capacity) {
                    Confidence::Medium
                } else {
                    Confidence::Low
                };
            }
        }
        Some(out)
    }
}
