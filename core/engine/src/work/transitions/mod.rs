//! One pure decision function per WorkItem Command kind (§10.2, digest 2.2: the 14 rows other
//! than 6 and 15–17).
//!
//! | row | Command | module |
//! | --- | --- | --- |
//! | 1 | `work.propose` | [`create`] |
//! | 2 | `work.authorize` | [`create`] |
//! | 3 | `work.offer` | [`crate::work::offers`] |
//! | 4 | `work.accept_offer` | [`crate::work::offers`] |
//! | 5 | offer expiry (no Command, no Event) | [`crate::work::offers`] |
//! | 7 | `work.start` | [`execution`] |
//! | 8 | `work.checkpoint` | [`execution`] |
//! | 9 | `work.block` | [`execution`] |
//! | 10 | `work.unblock` | [`execution`] |
//! | 11 | `work.submit` | [`review`] |
//! | 12 | `work.accept_result` | [`review`] |
//! | 13 | `work.fail` | [`closing`] |
//! | 14 | `work.cancel` | [`closing`] |
//! | 18 | parent Mission failure or cancellation | [`closing::propagate_mission_end`] |
//! | — | Execution Lease renewal (`work.progressed`) | [`execution`] |
//! | — | dependency insertion (`work.contract.revised`) | [`revise`] |
//! | — | Session replacement (`…core.work_execution_lease_revoked`, §11.3) | [`session`] |
//!
//! Row 6 (`approval.grant_execution`) and rows 15–17 (child Missions) belong to part 2; the
//! start gate of row 6 is honoured here as an input (`StartInput::execution_approved`).

pub mod closing;
pub mod create;
pub mod execution;
pub mod review;
pub mod revise;
pub mod session;

use missionweaveprotocol::json::{Number, Object, Value};

use super::error::WorkError;
use super::state::{Actor, WorkEvent, WorkItem, WorkItemState};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// `INVALID_STATE_TRANSITION` unless `item` is in one of `allowed` (§10.2).
pub(crate) fn require_state(
    item: &WorkItem,
    command: &'static str,
    allowed: &[WorkItemState],
) -> Result<(), WorkError> {
    if allowed.contains(&item.state) {
        Ok(())
    } else {
        Err(WorkError::InvalidTransition {
            command,
            from: Some(item.state),
        })
    }
}

/// The next revision of `item` at `now` (§15.3: one accepted transition, one revision).
pub(crate) fn touch(item: &mut WorkItem, now: UnixMillis) {
    item.revision = item.revision.saturating_add(1);
    item.updated_at = now;
}

/// An RFC 3339 timestamp value.
pub(crate) fn timestamp(at: UnixMillis) -> Result<Value, WorkError> {
    at.to_rfc3339()
        .map(Value::string)
        .ok_or(WorkError::InvalidInput("time", "outside years 0001-9999"))
}

/// A safe-integer value.
pub(crate) fn integer(value: u64) -> Value {
    Value::Number(Number::from_u64(value))
}

/// A list of strings.
pub(crate) fn strings<'a>(items: impl IntoIterator<Item = &'a String>) -> Value {
    Value::Array(
        items
            .into_iter()
            .map(|s| Value::string(s.as_str()))
            .collect(),
    )
}

/// An `actor` object.
pub(crate) fn actor(actor: &Actor) -> Value {
    object([
        ("type", Value::string(actor.actor_type.as_str())),
        ("id", Value::string(actor.id.as_str())),
    ])
}

/// An object from members.
pub(crate) fn object<const N: usize>(members: [(&str, Value); N]) -> Value {
    let mut object = Object::new();
    for (name, value) in members {
        object.insert(name, value);
    }
    Value::Object(object)
}

/// An Event of `kind` whose payload starts with `workItemId` and holds `members`.
pub(crate) fn event<const N: usize>(
    kind: &'static str,
    item: &WorkItem,
    members: [(&str, Value); N],
) -> WorkEvent {
    let mut payload = Object::new();
    payload.insert("workItemId", Value::string(item.work_item_id.as_str()));
    payload.insert("revision", integer(item.revision));
    for (name, value) in members {
        payload.insert(name, value);
    }
    WorkEvent {
        kind,
        payload: Value::Object(payload),
    }
}

/// A non-blank reason of at most 2000 characters.
pub(crate) fn check_reason(field: &'static str, reason: &str) -> Result<(), WorkError> {
    if reason.trim().is_empty() || reason.chars().count() > 2000 {
        return Err(WorkError::InvalidInput(
            field,
            "must be 1-2000 characters, not blank",
        ));
    }
    Ok(())
}
