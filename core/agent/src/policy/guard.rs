//! [`PolicyGuard`]: the local §20 runaway controls (the reference's `PolicyGuard` and
//! `CooperationLimits`): delegation depth, queued and active WorkItems, unresolved
//! clarification rounds, and Message / proposal / clarification rates per principal and Group
//! per minute. Refusals are `RATE_LIMITED` ("policy rate or recursion threshold was reached",
//! §19); rate refusals carry `retryAfterMs`.
//!
//! Memory is bounded: each (kind, principal, Group) key keeps at most `limit` timestamps of
//! the last minute (older ones are dropped on every check), and at most
//! [`CooperationLimits::maximum_tracked_keys`] keys are kept. When a new key arrives at the
//! bound, keys whose whole window has passed are evicted first; if every tracked key is still
//! inside its minute, the new key is refused (`RATE_LIMITED`, `rate_tracker_full`, retry after
//! the oldest window ends): a flood of fresh principals cannot reset anyone's count by eviction.
//! The bound is `maximum_tracked_keys × max(rate limits) × 8` bytes of timestamps plus the keys.

use std::collections::{HashMap, VecDeque};

use missionweaveprotocol::WireCode;

use super::error::PolicyError;
use super::token::check_id;
use missionweaveprotocol_engine::work::scope::is_high_risk_operation;
pub use missionweaveprotocol_kernel::cooperation::CooperationLimits;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The rate window (§20 "per minute").
pub const WINDOW_MS: i64 = 60_000;

/// What a rate limit counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RateKind {
    /// `message.post`.
    Message,
    /// `work.propose`.
    Proposal,
    /// Clarification requests.
    Clarification,
}

impl RateKind {
    /// The policy name in refusals.
    pub const fn policy(self) -> &'static str {
        match self {
            Self::Message => "message_rate",
            Self::Proposal => "proposal_rate",
            Self::Clarification => "clarification_rate",
        }
    }
}

/// How an operation may proceed (§12 "low-risk work MAY proceed automatically").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActionClass {
    /// No approval needed.
    Automatic,
    /// A human Execution Approval is needed first.
    HumanApprovalRequired,
}

impl ActionClass {
    /// The reference's spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Automatic => "automatic",
            Self::HumanApprovalRequired => "human_approval_required",
        }
    }
}

type RateKey = (RateKind, String, String);

/// The local guard. Not internally locked: hosts that share it wrap it in a mutex.
#[derive(Clone, Debug, Default)]
pub struct PolicyGuard {
    limits: CooperationLimits,
    windows: HashMap<RateKey, VecDeque<i64>>,
}

fn threshold(policy: &'static str, message: String, value: u64, limit: u32) -> PolicyError {
    PolicyError::new(WireCode::RateLimited, "threshold_reached", message)
        .with_text("policy", policy)
        .with_integer("value", value)
        .with_integer("limit", u64::from(limit))
}

impl PolicyGuard {
    /// A guard with `limits`.
    pub fn new(limits: CooperationLimits) -> Result<Self, PolicyError> {
        if limits.maximum_tracked_keys == 0 {
            return Err(PolicyError::invalid(
                "maximum_tracked_keys",
                "maximum_tracked_keys must be at least 1",
            ));
        }
        Ok(Self {
            limits,
            windows: HashMap::new(),
        })
    }

    /// The limits.
    pub fn limits(&self) -> &CooperationLimits {
        &self.limits
    }

    /// How many rate keys are tracked now (for the memory bound).
    pub fn tracked_keys(&self) -> usize {
        self.windows.len()
    }

    /// Refuses a delegation `depth` above the maximum.
    pub fn check_delegation_depth(&self, depth: u64) -> Result<(), PolicyError> {
        let Some(limit) = self.limits.maximum_delegation_depth else {
            return Ok(());
        };
        if depth > u64::from(limit) {
            return Err(threshold(
                "delegation_depth",
                format!("delegation depth {depth} exceeds {limit}"),
                depth,
                limit,
            ));
        }
        Ok(())
    }

    /// Refuses more `queued` or `active` WorkItems than allowed.
    pub fn check_queue(&self, queued: u64, active: u64) -> Result<(), PolicyError> {
        if let Some(limit) = self.limits.maximum_queued_work_items
            && queued > u64::from(limit)
        {
            return Err(threshold(
                "queued_work_items",
                format!("{queued} queued WorkItems exceed {limit}"),
                queued,
                limit,
            ));
        }
        if let Some(limit) = self.limits.maximum_active_work_items
            && active > u64::from(limit)
        {
            return Err(threshold(
                "active_work_items",
                format!("{active} active WorkItems exceed {limit}"),
                active,
                limit,
            ));
        }
        Ok(())
    }

    /// Refuses more open clarification rounds than allowed.
    pub fn check_unresolved_clarifications(&self, unresolved: u64) -> Result<(), PolicyError> {
        let Some(limit) = self.limits.maximum_unresolved_clarifications else {
            return Ok(());
        };
        if unresolved > u64::from(limit) {
            return Err(threshold(
                "unresolved_clarifications",
                format!("{unresolved} unresolved clarifications exceed {limit}"),
                unresolved,
                limit,
            ));
        }
        Ok(())
    }

    /// Counts one Message by `principal_id` in `group_id` at `now`, or refuses it.
    pub fn check_message_rate(
        &mut self,
        principal_id: &str,
        group_id: &str,
        now: UnixMillis,
    ) -> Result<(), PolicyError> {
        self.check_rate(RateKind::Message, principal_id, group_id, now)
    }

    /// Counts one proposal, or refuses it.
    pub fn check_proposal_rate(
        &mut self,
        principal_id: &str,
        group_id: &str,
        now: UnixMillis,
    ) -> Result<(), PolicyError> {
        self.check_rate(RateKind::Proposal, principal_id, group_id, now)
    }

    /// Counts one clarification request, or refuses it.
    pub fn check_clarification_rate(
        &mut self,
        principal_id: &str,
        group_id: &str,
        now: UnixMillis,
    ) -> Result<(), PolicyError> {
        self.check_rate(RateKind::Clarification, principal_id, group_id, now)
    }

    fn limit_of(&self, kind: RateKind) -> Option<u32> {
        match kind {
            RateKind::Message => self.limits.maximum_message_rate_per_minute,
            RateKind::Proposal => self.limits.maximum_proposal_rate_per_minute,
            RateKind::Clarification => self.limits.maximum_clarification_rate_per_minute,
        }
    }

    /// Counts one action of `kind` in the sliding minute ending at `now`, or refuses it with
    /// `RATE_LIMITED` and the milliseconds until the oldest counted action leaves the window.
    /// A refused action is not counted. Time that goes backwards counts as `now` (no panic,
    /// no negative retry).
    pub fn check_rate(
        &mut self,
        kind: RateKind,
        principal_id: &str,
        group_id: &str,
        now: UnixMillis,
    ) -> Result<(), PolicyError> {
        check_id("principal_id", principal_id)?;
        check_id("group_id", group_id)?;
        let Some(limit) = self.limit_of(kind) else {
            // No limit: nothing is counted, so nothing is tracked either.
            return Ok(());
        };
        let since = now.0.saturating_sub(WINDOW_MS);
        let key: RateKey = (kind, principal_id.to_owned(), group_id.to_owned());
        if !self.windows.contains_key(&key) {
            if limit == 0 {
                return Err(PolicyError::rate_limited(kind.policy(), WINDOW_MS as u64));
            }
            if self.windows.len() >= self.limits.maximum_tracked_keys {
                self.evict_expired(since);
            }
            if self.windows.len() >= self.limits.maximum_tracked_keys {
                let oldest_end = self
                    .windows
                    .values()
                    .filter_map(|w| w.back())
                    .min()
                    .map_or(now.0, |t| t.saturating_add(WINDOW_MS));
                let wait = u64::try_from(oldest_end.saturating_sub(now.0))
                    .unwrap_or(0)
                    .max(1);
                return Err(PolicyError::rate_limited_as(
                    "rate_tracker_full",
                    kind.policy(),
                    wait,
                ));
            }
        }
        let window = self.windows.entry(key).or_default();
        while window.front().is_some_and(|t| *t <= since) {
            window.pop_front();
        }
        if window.len() >= limit as usize {
            let oldest = window.front().copied().unwrap_or(now.0);
            let wait = u64::try_from(oldest.saturating_add(WINDOW_MS).saturating_sub(now.0))
                .unwrap_or(0)
                .max(1);
            return Err(PolicyError::rate_limited(kind.policy(), wait));
        }
        // Monotonic per key even if the host clock steps back.
        let at = window.back().map_or(now.0, |last| now.0.max(*last));
        window.push_back(at);
        Ok(())
    }

    /// Drops every key whose newest action is at or before `since`.
    fn evict_expired(&mut self, since: i64) {
        self.windows
            .retain(|_, window| window.back().is_some_and(|t| *t > since));
    }

    /// `human_approval_required` for the high-risk prefixes (`production.`, `payment.`,
    /// `external.send`, `destructive.`), else `automatic`.
    pub fn classify_action(operation: &str) -> ActionClass {
        if is_high_risk_operation(operation) {
            ActionClass::HumanApprovalRequired
        } else {
            ActionClass::Automatic
        }
    }
}
