//! Bounded retries and side-effect idempotency keys (§11.4, §10.1 retry policy, §12).
//!
//! A [`RetryController`] enforces the Work Contract's attempt, backoff, deadline and cost
//! budgets for one WorkItem under one Ownership Epoch. External attempts use a stable
//! idempotency key derived from Mission ID, WorkItem ID, Ownership Epoch and a logical
//! operation ID, so every retry of the same logical operation presents the same key (§11.4).

use crate::resources::{Dimension, MAX_SAFE_INTEGER, Resources};
use crate::unix_millis::UnixMillis;
use missionweaveprotocol::WireCode;
use missionweaveprotocol::json::{Number, Object, Value, canonical_bytes, sha256_prefixed};

mod snapshot;
pub use snapshot::{CurrentAttempt, RETRY_SNAPSHOT_VERSION, RetrySnapshot, RetrySnapshotError};

/// `retryPolicy.backoff` (`work-contract.schema.json`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backoff {
    /// Retry immediately.
    None,
    /// Wait `max_delay_ms` between attempts.
    Fixed,
    /// Wait `min(max_delay_ms, initial_delay_ms · 2^(n−1))` after the n-th failure.
    Exponential,
}

/// The contract's retry policy, with `maxDelay` already converted to milliseconds
/// (see [`parse_duration_ms`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Total attempts allowed, including the first (≥ 1).
    pub max_attempts: u32,
    /// Backoff shape.
    pub backoff: Backoff,
    /// First exponential delay; the contract has no such field, so callers usually take
    /// `min(1 s, max_delay_ms)`.
    pub initial_delay_ms: u64,
    /// Upper bound of any delay (`maxDelay`).
    pub max_delay_ms: u64,
    /// Failure codes that may be retried (`retryableFailures`); a coded failure outside this
    /// list is permanent.
    pub retryable_failures: Vec<String>,
}

impl RetryPolicy {
    /// Delay after the `failures`-th failed attempt (1-based).
    pub fn delay_after(&self, failures: u32) -> u64 {
        match self.backoff {
            Backoff::None => 0,
            Backoff::Fixed => self.max_delay_ms,
            Backoff::Exponential => {
                let shift = failures.saturating_sub(1).min(63);
                let factor = 1u64 << shift;
                self.initial_delay_ms
                    .saturating_mul(factor)
                    .min(self.max_delay_ms)
            }
        }
    }
}

/// Parses the schema's `duration` (`P[nD][T[nH][nM][n[.f]S]]`) into milliseconds; fractions
/// below a millisecond are rounded up so a delay is never shortened. `None` if malformed.
pub fn parse_duration_ms(text: &str) -> Option<u64> {
    let rest = text.strip_prefix('P')?;
    if rest.is_empty() {
        return None;
    }
    let (date, time) = match rest.split_once('T') {
        Some((d, t)) if !t.is_empty() && t.as_bytes()[0].is_ascii_digit() => (d, Some(t)),
        Some(_) => return None,
        None => (rest, None),
    };
    let mut total: u64 = 0;
    if !date.is_empty() {
        let days = date.strip_suffix('D')?;
        total = total.checked_add(digits(days)?.checked_mul(86_400_000)?)?;
    }
    if let Some(mut t) = time {
        for (unit, ms) in [('H', 3_600_000u64), ('M', 60_000)] {
            if let Some(pos) = t.find(unit) {
                total = total.checked_add(digits(&t[..pos])?.checked_mul(ms)?)?;
                t = &t[pos + 1..];
            }
        }
        if !t.is_empty() {
            let secs = t.strip_suffix('S')?;
            let (whole, frac) = match secs.split_once('.') {
                Some((w, f)) if !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()) => (w, f),
                Some(_) => return None,
                None => (secs, ""),
            };
            total = total.checked_add(digits(whole)?.checked_mul(1000)?)?;
            // First three fraction digits are milliseconds; any nonzero digit beyond rounds up.
            let mut frac_ms = 0u64;
            for (i, b) in frac.bytes().enumerate() {
                let d = u64::from(b - b'0');
                if i < 3 {
                    frac_ms = frac_ms * 10 + d;
                } else if d > 0 {
                    frac_ms += 1;
                    break;
                }
            }
            for _ in frac.len()..3 {
                frac_ms *= 10;
            }
            total = total.checked_add(frac_ms)?;
        }
    }
    Some(total)
}

fn digits(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `"sha256:" + hex(SHA-256(RFC 8785 canonical JSON))` of
/// `{missionId, workItemId, ownershipEpoch, logicalOperationId}` — the WorkItem execution
/// idempotency key for external side effects (§11.4). `None` if the epoch is not a positive
/// safe integer.
pub fn idempotency_key(
    mission_id: &str,
    work_item_id: &str,
    ownership_epoch: u64,
    logical_operation_id: &str,
) -> Option<String> {
    if ownership_epoch == 0 || ownership_epoch > MAX_SAFE_INTEGER {
        return None;
    }
    let mut object = Object::new();
    object.insert("missionId", Value::string(mission_id));
    object.insert("workItemId", Value::string(work_item_id));
    object.insert(
        "ownershipEpoch",
        Value::Number(Number::from_u64(ownership_epoch)),
    );
    object.insert("logicalOperationId", Value::string(logical_operation_id));
    canonical_hash_of(object)
}

/// A deterministic per-attempt key derived from the idempotency key (§11.4 "or a
/// deterministic derived attempt key"): the canonical hash of `{attempt, idempotencyKey}`.
pub fn derived_attempt_key(idempotency_key: &str, attempt: u32) -> String {
    let mut object = Object::new();
    object.insert(
        "attempt",
        Value::Number(Number::from_u64(u64::from(attempt))),
    );
    object.insert("idempotencyKey", Value::string(idempotency_key));
    canonical_hash_of(object).unwrap_or_default()
}

/// `sha256:` of the RFC 8785 form; the members here are strings and safe integers, which
/// always canonicalize.
fn canonical_hash_of(object: Object) -> Option<String> {
    canonical_bytes(&Value::Object(object))
        .ok()
        .map(|bytes| sha256_prefixed(&bytes))
}

/// Why retrying stopped or continues (reference names plus `budget_exhausted`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RetryReason {
    /// The attempt succeeded.
    Completed,
    /// The failure is not retryable.
    PermanentFailure,
    /// No attempts are left.
    AttemptsExhausted,
    /// The next attempt could not start before the contract deadline.
    DeadlineExhausted,
    /// The cost budget is used up.
    BudgetExhausted,
    /// Another attempt is scheduled.
    RetryableFailure,
}

impl RetryReason {
    /// True when this ends the retry loop with `work.failed` (§11.4).
    pub const fn is_failure(self) -> bool {
        !matches!(self, RetryReason::Completed | RetryReason::RetryableFailure)
    }
}

missionweaveprotocol::spelling!(RetryReason {
    Completed => "completed",
    PermanentFailure => "permanent_failure",
    AttemptsExhausted => "attempts_exhausted",
    DeadlineExhausted => "deadline_exhausted",
    BudgetExhausted => "budget_exhausted",
    RetryableFailure => "retryable_failure",
});

/// Retry-controller errors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RetryError {
    /// Invalid construction argument (the name says which).
    InvalidArgument(&'static str),
    /// An attempt is already running.
    AttemptInFlight,
    /// `finish` without a running attempt.
    NoAttemptInFlight,
    /// The loop already ended with this reason.
    Finished(RetryReason),
    /// `begin` before the backoff delay elapsed.
    BackoffPending(UnixMillis),
    /// `begin` at or after the deadline.
    DeadlineExhausted,
    /// Charging would exceed the cost budget in this dimension; nothing was charged.
    BudgetExceeded(Dimension),
}

impl RetryError {
    /// The §19 wire code.
    pub const fn code(&self) -> WireCode {
        match self {
            RetryError::InvalidArgument(_) | RetryError::BackoffPending(_) => {
                WireCode::InvalidCommand
            }
            RetryError::BudgetExceeded(_) => WireCode::BudgetExceeded,
            _ => WireCode::InvalidStateTransition,
        }
    }
}

/// One started attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// 1-based attempt number.
    pub attempt_number: u32,
    /// The stable idempotency key of the logical operation (same for every retry).
    pub idempotency_key: String,
    /// Deterministic per-attempt key derived from it.
    pub attempt_key: String,
    /// When it started.
    pub started_at: UnixMillis,
}

/// The decision after an attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetrySchedule {
    /// Whether another attempt will follow.
    pub retry: bool,
    /// Earliest start of that attempt.
    pub retry_at: Option<UnixMillis>,
    /// Why.
    pub reason: RetryReason,
}

/// How an attempt ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttemptOutcome<'a> {
    /// Success.
    Succeeded,
    /// Failure; `code` is checked against `retryableFailures`.
    Failed {
        /// Failure code (`^[A-Z][A-Z0-9_]+$`), if classified.
        code: Option<&'a str>,
        /// The Worker's own judgement; `false` is always permanent.
        retryable: bool,
    },
}

/// Enforces one WorkItem's retry budgets (§11.4).
#[derive(Clone, Debug)]
pub struct RetryController {
    policy: RetryPolicy,
    deadline: Option<UnixMillis>,
    cost_budget: Resources,
    mission_id: String,
    work_item_id: String,
    ownership_epoch: u64,
    attempts: u32,
    usage: Resources,
    in_flight: bool,
    next_start: Option<UnixMillis>,
    finished: Option<RetryReason>,
    /// The running attempt's logical operation and start, kept for [`RetrySnapshot`] so a
    /// restarted Worker knows which external attempt (and idempotency key) was in flight.
    current: Option<(String, UnixMillis)>,
}

impl RetryController {
    /// A controller for one WorkItem under one Ownership Epoch. `cost_budget` caps the
    /// cumulative usage of all attempts (a zero dimension allows nothing).
    pub fn new(
        policy: RetryPolicy,
        deadline: Option<UnixMillis>,
        cost_budget: Resources,
        mission_id: &str,
        work_item_id: &str,
        ownership_epoch: u64,
    ) -> Result<Self, RetryError> {
        if policy.max_attempts == 0 {
            return Err(RetryError::InvalidArgument("maxAttempts"));
        }
        if ownership_epoch == 0 || ownership_epoch > MAX_SAFE_INTEGER {
            return Err(RetryError::InvalidArgument("ownershipEpoch"));
        }
        if mission_id.is_empty() || work_item_id.is_empty() {
            return Err(RetryError::InvalidArgument("id"));
        }
        if policy.initial_delay_ms > policy.max_delay_ms {
            return Err(RetryError::InvalidArgument("initialDelay"));
        }
        Ok(RetryController {
            policy,
            deadline,
            cost_budget,
            mission_id: mission_id.to_owned(),
            work_item_id: work_item_id.to_owned(),
            ownership_epoch,
            attempts: 0,
            usage: Resources::ZERO,
            in_flight: false,
            next_start: None,
            finished: None,
            current: None,
        })
    }

    /// Attempts started so far.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Cumulative cost charged so far.
    pub fn usage(&self) -> Resources {
        self.usage
    }

    /// The final reason once the loop ended.
    pub fn finished(&self) -> Option<RetryReason> {
        self.finished
    }

    /// This WorkItem's idempotency key for `logical_operation_id`.
    pub fn idempotency_key(&self, logical_operation_id: &str) -> String {
        // The epoch was validated in `new`, so the key always exists.
        idempotency_key(
            &self.mission_id,
            &self.work_item_id,
            self.ownership_epoch,
            logical_operation_id,
        )
        .unwrap_or_default()
    }

    /// Starts the next attempt at `now`.
    pub fn begin(
        &mut self,
        logical_operation_id: &str,
        now: UnixMillis,
    ) -> Result<Attempt, RetryError> {
        if let Some(reason) = self.finished {
            return Err(RetryError::Finished(reason));
        }
        if self.in_flight {
            return Err(RetryError::AttemptInFlight);
        }
        if self.attempts >= self.policy.max_attempts {
            return Err(RetryError::Finished(RetryReason::AttemptsExhausted));
        }
        if self.deadline.is_some_and(|d| now >= d) {
            return Err(RetryError::DeadlineExhausted);
        }
        if let Some(at) = self.next_start
            && now < at
        {
            return Err(RetryError::BackoffPending(at));
        }
        self.attempts += 1;
        self.in_flight = true;
        self.current = Some((logical_operation_id.to_owned(), now));
        let key = self.idempotency_key(logical_operation_id);
        Ok(Attempt {
            attempt_number: self.attempts,
            attempt_key: derived_attempt_key(&key, self.attempts),
            idempotency_key: key,
            started_at: now,
        })
    }

    /// Charges attempt cost atomically against the cost budget.
    pub fn consume(&mut self, delta: &Resources) -> Result<Resources, RetryError> {
        let next = self
            .usage
            .checked_add(delta)
            .map_err(RetryError::BudgetExceeded)?;
        if let Some(d) = next.first_exceeding(&self.cost_budget) {
            return Err(RetryError::BudgetExceeded(d));
        }
        self.usage = next;
        Ok(next)
    }

    fn budget_exhausted(&self) -> bool {
        // A dimension the work actually uses and that has no allowance left.
        Dimension::ALL
            .into_iter()
            .any(|d| self.usage.get(d) > 0 && self.usage.get(d) >= self.cost_budget.get(d))
    }

    /// Ends the running attempt at `now` and decides whether to retry.
    pub fn finish(
        &mut self,
        outcome: AttemptOutcome<'_>,
        now: UnixMillis,
    ) -> Result<RetrySchedule, RetryError> {
        if !self.in_flight {
            return Err(RetryError::NoAttemptInFlight);
        }
        self.in_flight = false;
        self.current = None;
        let stop = |this: &mut Self, reason| {
            this.finished = Some(reason);
            Ok(RetrySchedule {
                retry: false,
                retry_at: None,
                reason,
            })
        };
        let (code, retryable) = match outcome {
            AttemptOutcome::Succeeded => return stop(self, RetryReason::Completed),
            AttemptOutcome::Failed { code, retryable } => (code, retryable),
        };
        let listed = code.is_none_or(|c| self.policy.retryable_failures.iter().any(|r| r == c));
        if !retryable || !listed {
            return stop(self, RetryReason::PermanentFailure);
        }
        if self.attempts >= self.policy.max_attempts {
            return stop(self, RetryReason::AttemptsExhausted);
        }
        if self.budget_exhausted() {
            return stop(self, RetryReason::BudgetExhausted);
        }
        let retry_at = now.saturating_add_ms(self.policy.delay_after(self.attempts));
        if self.deadline.is_some_and(|d| retry_at >= d) {
            return stop(self, RetryReason::DeadlineExhausted);
        }
        self.next_start = Some(retry_at);
        Ok(RetrySchedule {
            retry: true,
            retry_at: Some(retry_at),
            reason: RetryReason::RetryableFailure,
        })
    }
}

impl RetryPolicy {
    /// Reads a Work Contract's `retryPolicy` object (`work-contract.schema.json`: exactly
    /// `maxAttempts` ≥ 1, `backoff`, `maxDelay` duration, unique `retryableFailures`). The
    /// contract has no initial delay, so exponential backoff starts at `min(1 s, maxDelay)`.
    /// `None` when the object does not have that shape.
    pub fn from_contract(value: &Value) -> Option<RetryPolicy> {
        let object = value.as_object()?;
        const MEMBERS: [&str; 4] = ["maxAttempts", "backoff", "maxDelay", "retryableFailures"];
        if object.len() != MEMBERS.len() || !MEMBERS.iter().all(|m| object.contains(m)) {
            return None;
        }
        let max_attempts = u32::try_from(object.get("maxAttempts")?.as_number()?.as_u64()?)
            .ok()
            .filter(|n| *n >= 1)?;
        let backoff = match object.get("backoff")?.as_str()? {
            "none" => Backoff::None,
            "fixed" => Backoff::Fixed,
            "exponential" => Backoff::Exponential,
            _ => return None,
        };
        let max_delay_ms = parse_duration_ms(object.get("maxDelay")?.as_str()?)?;
        let mut retryable_failures: Vec<String> = Vec::new();
        for item in object.get("retryableFailures")?.as_array()? {
            let code = item.as_str()?;
            let b = code.as_bytes();
            let shaped = (2..=128).contains(&b.len())
                && b[0].is_ascii_uppercase()
                && b[1..]
                    .iter()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_');
            if !shaped || retryable_failures.iter().any(|r| r == code) {
                return None;
            }
            retryable_failures.push(code.to_owned());
        }
        Some(RetryPolicy {
            max_attempts,
            backoff,
            initial_delay_ms: max_delay_ms.min(1_000),
            max_delay_ms,
            retryable_failures,
        })
    }
}
