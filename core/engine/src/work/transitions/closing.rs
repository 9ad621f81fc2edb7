//! Rows 13–14: `work.fail` and `work.cancel` from `open`, `offered`, `queued`, `active`,
//! `blocked` or `submitted`. Both revoke every live lease (§11.3 "cancellation and failure
//! revoke it") and withdraw pending offers, so nobody can start or complete the item after.

use missionweaveprotocol::json::Value;

use super::{check_reason, event, require_state, strings, touch};
use crate::work::error::WorkError;
use crate::work::fencing::{WorkClaim, check_epoch, check_execution_claim, close_leases};
use crate::work::state::{OfferStatus, Transition, WorkItem, WorkItemState};
use missionweaveprotocol_kernel::lease::LeaseState;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

const CLOSABLE: [WorkItemState; 6] = [
    WorkItemState::Open,
    WorkItemState::Offered,
    WorkItemState::Queued,
    WorkItemState::Active,
    WorkItemState::Blocked,
    WorkItemState::Submitted,
];

fn withdraw_offers(item: &mut WorkItem) {
    for offer in &mut item.offers {
        if offer.status == OfferStatus::Pending {
            offer.status = OfferStatus::Withdrawn;
        }
    }
}

/// `work.fail` input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailInput {
    /// Why.
    pub reason: String,
    /// Failure Evidence IDs (≥ 1, §11.4 "emits `work.failed` with Evidence").
    pub evidence_ids: Vec<String>,
    /// A Worker-reported failure cites its current Execution Lease (§11.3); `None` for a
    /// Coordinator-reported one.
    pub claim: Option<WorkClaim>,
}

/// Row 13: → `failed`. Control returns to the Coordinator, which may re-offer (row 3).
pub fn fail(
    item: &WorkItem,
    input: FailInput,
    now: UnixMillis,
) -> Result<Transition<WorkItem>, WorkError> {
    if let Some(claim) = &input.claim {
        check_epoch(item, claim)?;
    }
    require_state(item, "work.fail", &CLOSABLE)?;
    if let Some(claim) = &input.claim {
        // Only the executing owner reports its own failure under its lease.
        require_state(item, "work.fail", &[WorkItemState::Active])?;
        check_execution_claim(item, claim, now)?;
    }
    check_reason("reason", &input.reason)?;
    if input.evidence_ids.is_empty() {
        return Err(WorkError::InvalidInput(
            "evidenceIds",
            "failure Evidence is required",
        ));
    }
    let mut next = item.clone();
    close_leases(&mut next, now, LeaseState::Revoked, "work failed")?;
    withdraw_offers(&mut next);
    next.failure = Some((input.reason.clone(), input.evidence_ids.clone()));
    next.state = WorkItemState::Failed;
    touch(&mut next, now);
    let failed = event(
        "work.failed",
        &next,
        [
            ("reason", Value::string(input.reason.as_str())),
            ("evidenceIds", strings(&input.evidence_ids)),
            ("previousState", Value::string(item.state.as_str())),
        ],
    );
    Ok(Transition {
        state: next,
        events: vec![failed],
    })
}

/// `work.cancel` input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CancelInput {
    /// Why.
    pub reason: String,
}

/// Row 14: → `cancelled` (terminal). Cleanup policy is the engine's (Artifacts stay).
pub fn cancel(
    item: &WorkItem,
    input: CancelInput,
    now: UnixMillis,
) -> Result<Transition<WorkItem>, WorkError> {
    require_state(item, "work.cancel", &CLOSABLE)?;
    check_reason("reason", &input.reason)?;
    let mut next = item.clone();
    close_leases(&mut next, now, LeaseState::Revoked, "work cancelled")?;
    withdraw_offers(&mut next);
    next.cancel_reason = Some(input.reason.clone());
    next.state = WorkItemState::Cancelled;
    touch(&mut next, now);
    let cancelled = event(
        "work.cancelled",
        &next,
        [
            ("reason", Value::string(input.reason.as_str())),
            ("previousState", Value::string(item.state.as_str())),
        ],
    );
    Ok(Transition {
        state: next,
        events: vec![cancelled],
    })
}

/// How the WorkItem's Mission ended (row 18).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MissionEnd {
    /// `mission.fail` (or a propagated child failure policy).
    Failed,
    /// `mission.cancel` / `mission.terminate`.
    Cancelled,
}

/// Row 18: parent Mission failure or cancellation → `failed` or `cancelled` for an unfinished
/// WorkItem (`open`, `offered`, `queued`, `active`, `blocked`, `submitted`). Leases are revoked
/// and pending offers withdrawn; the Event says the Mission caused it. The engine calls this for
/// each such WorkItem of the Mission and skips the others (they refuse with
/// `INVALID_STATE_TRANSITION`).
pub fn propagate_mission_end(
    item: &WorkItem,
    end: MissionEnd,
    reason: &str,
    now: UnixMillis,
) -> Result<Transition<WorkItem>, WorkError> {
    let command = match end {
        MissionEnd::Failed => "mission.fail",
        MissionEnd::Cancelled => "mission.cancel",
    };
    require_state(item, command, &CLOSABLE)?;
    check_reason("reason", reason)?;
    let mut next = item.clone();
    let (lease_reason, state, kind) = match end {
        MissionEnd::Failed => ("mission failed", WorkItemState::Failed, "work.failed"),
        MissionEnd::Cancelled => (
            "mission cancelled",
            WorkItemState::Cancelled,
            "work.cancelled",
        ),
    };
    close_leases(&mut next, now, LeaseState::Revoked, lease_reason)?;
    withdraw_offers(&mut next);
    match end {
        MissionEnd::Failed => next.failure = Some((reason.to_owned(), Vec::new())),
        MissionEnd::Cancelled => next.cancel_reason = Some(reason.to_owned()),
    }
    next.state = state;
    touch(&mut next, now);
    let ended = event(
        kind,
        &next,
        [
            ("reason", Value::string(reason)),
            ("previousState", Value::string(item.state.as_str())),
            ("cause", Value::string(command)),
        ],
    );
    Ok(Transition {
        state: next,
        events: vec![ended],
    })
}
