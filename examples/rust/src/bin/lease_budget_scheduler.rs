//! Bounded authority in one Worker: the scheduler picks work, each run holds an Execution
//! Lease, and every step is charged to a hierarchical budget.
//!
//! ```text
//! cargo run --release -p missionweaveprotocol-examples --bin lease_budget_scheduler
//! ```
//!
//! Everything is sans-IO: time is an argument (`UnixMillis`), so the whole scenario is
//! reproducible. Errors carry their §19 wire code (`code()`).

use std::process::ExitCode;

use missionweaveprotocol_kernel::budget::{AccountKind, BudgetError, BudgetLedger};
use missionweaveprotocol_kernel::lease::{Lease, LeaseBinding, LeaseClaim, LeaseWindow};
use missionweaveprotocol_kernel::resources::{Dimension, Resources};
use missionweaveprotocol_kernel::scheduler::{
    GroupPolicy, ScheduleAction, Scheduler, SchedulerPolicy, Transition, WorkOffer,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

const MISSION: &str = "urn:missionweaveprotocol:mission:quarterly-report";
const WORKER: &str = "urn:missionweaveprotocol:agent:worker-1";
const SESSION_EPOCH: u64 = 3;
const LEASE_MS: u64 = 60_000;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Model tokens and tool calls, the two dimensions this example spends.
fn spend(tokens: u64, tool_calls: u64) -> Resources {
    Resources::ZERO
        .with(Dimension::ModelTokens, tokens)
        .with(Dimension::ToolCalls, tool_calls)
}

fn run() -> Result<(), String> {
    let start = UnixMillis::from_secs(1_784_107_800); // 2026-07-15T09:30:00Z
    // The MissionOwner's limits; each WorkItem's limits are reserved against the Mission (§12).
    let mut ledger = BudgetLedger::new();
    ledger
        .register_mission(MISSION, None, spend(10_000, 20))
        .map_err(|e| e.to_string())?;
    let work = [
        (
            "urn:missionweaveprotocol:work-item:gather",
            "urn:missionweaveprotocol:group:research",
            spend(4_000, 8),
        ),
        (
            "urn:missionweaveprotocol:work-item:draft",
            "urn:missionweaveprotocol:group:research",
            spend(3_000, 6),
        ),
        (
            "urn:missionweaveprotocol:work-item:publish",
            "urn:missionweaveprotocol:group:ops",
            spend(3_000, 6),
        ),
    ];
    for (work_id, _, limit) in &work {
        ledger
            .register_work_item(work_id, MISSION, None, *limit)
            .map_err(|e| e.to_string())?;
    }
    // Asking for more than the Mission has left unreserved is refused up front.
    let refused = ledger
        .register_work_item(
            "urn:missionweaveprotocol:work-item:extra",
            MISSION,
            None,
            spend(2_000, 0),
        )
        .err()
        .ok_or("an over-allocation was accepted")?;
    println!("over-allocation refused: {}", refused.code());

    // The Worker: two slots, the research Group weighted 2:1 over ops (§11.1).
    let mut policy = SchedulerPolicy {
        capacity_slots: 2,
        ..SchedulerPolicy::default()
    };
    policy.groups.insert(
        "urn:missionweaveprotocol:group:research".into(),
        GroupPolicy {
            weight: 2,
            slot_quota: None,
        },
    );
    let mut scheduler = Scheduler::new(policy).map_err(|e| e.to_string())?;
    for (work_id, group, _) in &work {
        let decision = scheduler.admit(&WorkOffer::new(work_id, group), start);
        println!("admit {work_id}: {:?}", decision.reason);
    }

    let mut now = start;
    let mut ownership_epoch = 0;
    let mut completed = 0;
    while completed < work.len() {
        let actions = scheduler.schedule(now);
        if actions.is_empty() {
            return Err("nothing to dispatch".into());
        }
        for action in actions {
            let ScheduleAction::Dispatch(dispatch) = action else {
                continue;
            };
            // The authority issues an Execution Lease bound to this run (§11.3).
            ownership_epoch += 1;
            let mut lease = Lease::execution(
                LeaseBinding {
                    lease_id: format!("urn:missionweaveprotocol:lease:{}", dispatch.run_id()),
                    mission_id: MISSION.into(),
                    group_id: dispatch.group_id.to_string(),
                    holder_agent_id: WORKER.into(),
                    session_epoch: SESSION_EPOCH,
                },
                &dispatch.work_id,
                ownership_epoch,
                LeaseWindow {
                    issued_at: now,
                    starts_at: now,
                    expires_at: now.saturating_add_ms(LEASE_MS),
                },
            )
            .map_err(|e| e.to_string())?;
            let lease_id = lease.lease_id().to_owned();
            let claim = LeaseClaim {
                agent_id: WORKER,
                lease_id: &lease_id,
                session_epoch: SESSION_EPOCH,
                ownership_epoch: Some(ownership_epoch),
                coordinator_epoch: None,
            };
            // Each step: the Command must cite the live lease, then the spend is charged to
            // the WorkItem and the Mission together, or not at all.
            let mut outcome = Transition::Completed {
                generation: dispatch.generation,
            };
            for step in 1..=3 {
                now = now.saturating_add_ms(10_000);
                lease.check_claim(&claim, now).map_err(|e| e.to_string())?;
                let charge = if dispatch.work_id.ends_with("draft") && step == 3 {
                    spend(1_500, 1) // one step too many: over the WorkItem's token limit
                } else {
                    spend(1_000, 2)
                };
                match ledger.consume(&dispatch.work_id, &charge) {
                    Ok(usage) => println!(
                        "{} step {step}: {} tokens used",
                        dispatch.work_id,
                        usage.get(Dimension::ModelTokens)
                    ),
                    Err(error @ BudgetError::Exceeded { .. }) => {
                        println!("{} step {step}: {}", dispatch.work_id, error.code());
                        outcome = Transition::Failed {
                            generation: dispatch.generation,
                        };
                        break;
                    }
                    Err(error) => return Err(error.to_string()),
                }
                if step == 2 {
                    let expires = lease.window().expires_at.saturating_add_ms(LEASE_MS);
                    lease.renew(now, expires).map_err(|e| e.to_string())?;
                }
            }
            // A delayed Command from an older Session is fenced (§6.3).
            let stale = LeaseClaim {
                session_epoch: SESSION_EPOCH - 1,
                ..claim
            };
            let fenced = lease
                .check_claim(&stale, now)
                .err()
                .ok_or("a stale claim passed")?;
            println!(
                "{}: stale session fenced with {}",
                dispatch.work_id,
                fenced.code()
            );
            // Submission releases the lease; a failure revokes it (§11.3).
            if matches!(outcome, Transition::Failed { .. }) {
                lease.revoke(now, "budget exceeded")
            } else {
                lease.release(now, "submitted")
            }
            .map_err(|e| e.to_string())?;
            scheduler
                .apply(&dispatch.work_id, outcome, now)
                .map_err(|e| e.to_string())?;
            completed += 1;
        }
    }
    let used = ledger
        .usage(AccountKind::Mission, MISSION)
        .map_err(|e| e.to_string())?;
    let remaining = ledger
        .remaining(AccountKind::Mission, MISSION)
        .map_err(|e| e.to_string())?;
    println!(
        "mission: {} tokens and {} tool calls used, {} tokens left",
        used.get(Dimension::ModelTokens),
        used.get(Dimension::ToolCalls),
        remaining.get(Dimension::ModelTokens)
    );
    Ok(())
}
