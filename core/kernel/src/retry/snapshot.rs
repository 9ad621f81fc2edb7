//! [`RetrySnapshot`]: a [`RetryController`]'s whole state as a versioned JSON document, so a
//! Worker restart keeps the attempts made, the cost charged and the attempt in flight
//! (§11.4: retries stay bounded across restarts; the in-flight attempt's idempotency key is
//! presented again, never a new one).
//!
//! The JSON form is strict (every member present, no unknown member, exact integers) and
//! carries `integrity` = `sha256:` of the RFC 8785 form of the other members, so accidental
//! corruption or an edit that forgets to recompute it is refused. It is local persisted state,
//! not a signed document: `integrity` is a checksum, not a MAC. [`RetryController::restore`]
//! then checks the state is one a controller can reach (attempts within the policy, usage within
//! the budget, a consistent in-flight attempt).

use missionweaveprotocol::WireCode;
use missionweaveprotocol::json::{Object, Value, canonical_bytes, parse_state, sha256_prefixed};

use super::{Backoff, RetryController, RetryError, RetryPolicy, RetryReason};
use crate::resources::{MAX_SAFE_INTEGER, Resources};
use crate::snapshot_json::{Reader, SnapshotFormatError, num_i, num_u, resources_to_value};
use crate::unix_millis::UnixMillis;

/// The snapshot format version this build writes and reads.
pub const RETRY_SNAPSHOT_VERSION: u64 = 1;

/// Why a snapshot was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RetrySnapshotError {
    /// The document does not have the snapshot's shape (path and message).
    Format(SnapshotFormatError),
    /// Another format version.
    UnsupportedVersion(u64),
    /// `integrity` does not match the content.
    IntegrityMismatch,
    /// Well formed, but no controller can be in this state (what is inconsistent).
    Inconsistent(&'static str),
    /// The policy or identifiers are invalid (as for `RetryController::new`).
    Invalid(RetryError),
}

impl RetrySnapshotError {
    /// The §19 wire code: a bad local snapshot is an internal fault.
    pub const fn code(&self) -> WireCode {
        WireCode::InternalError
    }

    /// A stable snake_case name.
    pub const fn kind(&self) -> &'static str {
        match self {
            Self::Format(_) => "format",
            Self::UnsupportedVersion(_) => "unsupported_version",
            Self::IntegrityMismatch => "integrity_mismatch",
            Self::Inconsistent(_) => "inconsistent",
            Self::Invalid(_) => "invalid",
        }
    }
}

impl core::fmt::Display for RetrySnapshotError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Format(e) => write!(f, "retry snapshot {}: {}", e.path, e.message),
            Self::UnsupportedVersion(v) => write!(
                f,
                "retry snapshot version {v} is not supported (expected {RETRY_SNAPSHOT_VERSION})"
            ),
            Self::IntegrityMismatch => f.write_str("retry snapshot integrity does not match"),
            Self::Inconsistent(what) => write!(f, "inconsistent retry snapshot: {what}"),
            Self::Invalid(e) => write!(f, "invalid retry snapshot: {e:?}"),
        }
    }
}

impl std::error::Error for RetrySnapshotError {}

impl From<SnapshotFormatError> for RetrySnapshotError {
    fn from(e: SnapshotFormatError) -> Self {
        Self::Format(e)
    }
}

/// The attempt running when the snapshot was taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CurrentAttempt {
    /// Its logical operation.
    pub logical_operation_id: String,
    /// When it started.
    pub started_at: UnixMillis,
}

/// A [`RetryController`]'s complete state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetrySnapshot {
    /// The policy.
    pub policy: RetryPolicy,
    /// The contract deadline.
    pub deadline: Option<UnixMillis>,
    /// The cost budget.
    pub cost_budget: Resources,
    /// Mission.
    pub mission_id: String,
    /// WorkItem.
    pub work_item_id: String,
    /// Ownership Epoch.
    pub ownership_epoch: u64,
    /// Attempts started.
    pub attempts: u32,
    /// Cost charged.
    pub usage: Resources,
    /// Earliest start of the next attempt (backoff).
    pub next_start: Option<UnixMillis>,
    /// The final reason once the loop ended.
    pub finished: Option<RetryReason>,
    /// The attempt in flight.
    pub current: Option<CurrentAttempt>,
}

fn backoff_name(b: Backoff) -> &'static str {
    match b {
        Backoff::None => "none",
        Backoff::Fixed => "fixed",
        Backoff::Exponential => "exponential",
    }
}

impl RetrySnapshot {
    fn content(&self) -> Object {
        let mut policy = Object::new();
        policy.insert("maxAttempts", num_u(u64::from(self.policy.max_attempts)));
        policy.insert("backoff", Value::string(backoff_name(self.policy.backoff)));
        policy.insert("initialDelayMs", num_u(self.policy.initial_delay_ms));
        policy.insert("maxDelayMs", num_u(self.policy.max_delay_ms));
        policy.insert(
            "retryableFailures",
            Value::Array(
                self.policy
                    .retryable_failures
                    .iter()
                    .map(Value::string)
                    .collect(),
            ),
        );
        let mut o = Object::new();
        o.insert("version", num_u(RETRY_SNAPSHOT_VERSION));
        o.insert("policy", Value::Object(policy));
        o.insert(
            "deadline",
            self.deadline.map_or(Value::Null, |d| num_i(d.0)),
        );
        o.insert("costBudget", resources_to_value(&self.cost_budget));
        o.insert("missionId", Value::string(&self.mission_id));
        o.insert("workItemId", Value::string(&self.work_item_id));
        o.insert("ownershipEpoch", num_u(self.ownership_epoch));
        o.insert("attempts", num_u(u64::from(self.attempts)));
        o.insert("usage", resources_to_value(&self.usage));
        o.insert(
            "nextStart",
            self.next_start.map_or(Value::Null, |d| num_i(d.0)),
        );
        o.insert(
            "finished",
            self.finished
                .map_or(Value::Null, |r| Value::string(r.as_str())),
        );
        o.insert(
            "currentAttempt",
            match &self.current {
                None => Value::Null,
                Some(c) => {
                    let mut a = Object::new();
                    a.insert("logicalOperationId", Value::string(&c.logical_operation_id));
                    a.insert("startedAt", num_i(c.started_at.0));
                    Value::Object(a)
                }
            },
        );
        o
    }

    fn integrity(content: &Object) -> String {
        // Strings, safe integers and nulls always canonicalize.
        canonical_bytes(&Value::Object(content.clone()))
            .map(|bytes| sha256_prefixed(&bytes))
            .unwrap_or_default()
    }

    /// The JSON form (camelCase members, `version`, `integrity`).
    pub fn to_value(&self) -> Value {
        let mut o = self.content();
        let integrity = Self::integrity(&o);
        o.insert("integrity", Value::string(integrity));
        Value::Object(o)
    }

    /// The RFC 8785 bytes of [`to_value`](Self::to_value).
    pub fn to_json_bytes(&self) -> Vec<u8> {
        canonical_bytes(&self.to_value()).unwrap_or_default()
    }

    /// Reads the JSON form strictly and checks version and integrity (not consistency: see
    /// [`RetryController::restore`]).
    pub fn from_value(value: &Value) -> Result<Self, RetrySnapshotError> {
        let mut r = Reader::new(value, "")?;
        let version = r.uint("version", MAX_SAFE_INTEGER)?;
        if version != RETRY_SNAPSHOT_VERSION {
            return Err(RetrySnapshotError::UnsupportedVersion(version));
        }
        let policy_value = r.req("policy")?;
        let mut p = Reader::new(policy_value, "/policy")?;
        let max_attempts = p.uint("maxAttempts", u64::from(u32::MAX))? as u32;
        let backoff_path = p.at("backoff");
        let backoff = match p.string("backoff")?.as_str() {
            "none" => Backoff::None,
            "fixed" => Backoff::Fixed,
            "exponential" => Backoff::Exponential,
            _ => {
                return Err(SnapshotFormatError {
                    path: backoff_path,
                    message: "expected none, fixed or exponential".into(),
                }
                .into());
            }
        };
        let initial_delay_ms = p.uint("initialDelayMs", MAX_SAFE_INTEGER)?;
        let max_delay_ms = p.uint("maxDelayMs", MAX_SAFE_INTEGER)?;
        let failures_path = p.at("retryableFailures");
        let mut retryable_failures = Vec::new();
        for (i, item) in p.array("retryableFailures")?.iter().enumerate() {
            retryable_failures.push(crate::snapshot_json::as_string(
                item,
                &format!("{failures_path}/{i}"),
            )?);
        }
        p.finish()?;
        let current = match r.opt("currentAttempt") {
            None => None,
            Some(v) => {
                let mut a = Reader::new(v, "/currentAttempt")?;
                let c = CurrentAttempt {
                    logical_operation_id: a.string("logicalOperationId")?,
                    started_at: UnixMillis(a.int("startedAt")?),
                };
                a.finish()?;
                Some(c)
            }
        };
        let finished_path = r.at("finished");
        let finished = match r.opt_string("finished")? {
            None => None,
            Some(text) => Some(
                RetryReason::parse(&text).ok_or_else(|| SnapshotFormatError {
                    path: finished_path,
                    message: "not a retry reason".into(),
                })?,
            ),
        };
        let snapshot = RetrySnapshot {
            policy: RetryPolicy {
                max_attempts,
                backoff,
                initial_delay_ms,
                max_delay_ms,
                retryable_failures,
            },
            deadline: r.opt_int("deadline")?.map(UnixMillis),
            cost_budget: r.resources("costBudget")?,
            mission_id: r.string("missionId")?,
            work_item_id: r.string("workItemId")?,
            ownership_epoch: r.uint("ownershipEpoch", MAX_SAFE_INTEGER)?,
            attempts: r.uint("attempts", u64::from(u32::MAX))? as u32,
            usage: r.resources("usage")?,
            next_start: r.opt_int("nextStart")?.map(UnixMillis),
            finished,
            current,
        };
        let integrity = r.string("integrity")?;
        r.finish()?;
        if integrity != Self::integrity(&snapshot.content()) {
            return Err(RetrySnapshotError::IntegrityMismatch);
        }
        Ok(snapshot)
    }

    /// Parses JSON bytes, then [`from_value`](Self::from_value).
    pub fn from_json_bytes(bytes: &[u8]) -> Result<Self, RetrySnapshotError> {
        let value = parse_state(bytes).map_err(|e| {
            RetrySnapshotError::Format(SnapshotFormatError {
                path: String::new(),
                message: e.to_string(),
            })
        })?;
        Self::from_value(&value)
    }
}

impl RetryController {
    /// The controller's whole state (see [`RetrySnapshot`]).
    pub fn snapshot(&self) -> RetrySnapshot {
        RetrySnapshot {
            policy: self.policy.clone(),
            deadline: self.deadline,
            cost_budget: self.cost_budget,
            mission_id: self.mission_id.clone(),
            work_item_id: self.work_item_id.clone(),
            ownership_epoch: self.ownership_epoch,
            attempts: self.attempts,
            usage: self.usage,
            next_start: self.next_start,
            finished: self.finished,
            current: self.current.as_ref().map(|(op, at)| CurrentAttempt {
                logical_operation_id: op.clone(),
                started_at: *at,
            }),
        }
    }

    /// A controller in exactly the snapshot's state, after checking that state is reachable:
    /// the construction rules of [`RetryController::new`]; `attempts ≤ maxAttempts`;
    /// `usage ≤ costBudget`; an in-flight attempt only with `attempts ≥ 1`, an operation ID and
    /// no final reason; a final reason or a backoff only after an attempt.
    pub fn restore(snapshot: &RetrySnapshot) -> Result<Self, RetrySnapshotError> {
        let mut controller = RetryController::new(
            snapshot.policy.clone(),
            snapshot.deadline,
            snapshot.cost_budget,
            &snapshot.mission_id,
            &snapshot.work_item_id,
            snapshot.ownership_epoch,
        )
        .map_err(RetrySnapshotError::Invalid)?;
        let inconsistent = |what| Err(RetrySnapshotError::Inconsistent(what));
        if snapshot.attempts > snapshot.policy.max_attempts {
            return inconsistent("more attempts than the policy allows");
        }
        if snapshot
            .usage
            .first_exceeding(&snapshot.cost_budget)
            .is_some()
        {
            return inconsistent("usage exceeds the cost budget");
        }
        if let Some(current) = &snapshot.current {
            if snapshot.attempts == 0 {
                return inconsistent("an attempt in flight before any attempt started");
            }
            if snapshot.finished.is_some() {
                return inconsistent("an attempt in flight after the loop ended");
            }
            if current.logical_operation_id.is_empty() {
                return inconsistent("the attempt in flight has no operation");
            }
        }
        if snapshot.attempts == 0 && (snapshot.finished.is_some() || snapshot.next_start.is_some())
        {
            return inconsistent("a final reason or backoff before any attempt");
        }
        controller.attempts = snapshot.attempts;
        controller.usage = snapshot.usage;
        controller.next_start = snapshot.next_start;
        controller.finished = snapshot.finished;
        controller.in_flight = snapshot.current.is_some();
        controller.current = snapshot
            .current
            .as_ref()
            .map(|c| (c.logical_operation_id.clone(), c.started_at));
        Ok(controller)
    }

    /// The attempt in flight, if any: its logical operation and start (survives a restart
    /// through [`RetrySnapshot`]).
    pub fn current_attempt(&self) -> Option<(&str, UnixMillis)> {
        self.current.as_ref().map(|(op, at)| (op.as_str(), *at))
    }
}

impl missionweaveprotocol::DescribeError for RetrySnapshotError {
    fn class(&self) -> missionweaveprotocol::ErrorClass {
        missionweaveprotocol::ErrorClass::Snapshot
    }
    fn wire_code(&self) -> WireCode {
        self.code()
    }
    fn reason(&self) -> &str {
        self.kind()
    }
    fn fields(&self) -> missionweaveprotocol::Fields {
        match self {
            Self::Format(e) => missionweaveprotocol::Fields::new().text("path", e.path.as_str()),
            _ => missionweaveprotocol::Fields::new(),
        }
    }
}
