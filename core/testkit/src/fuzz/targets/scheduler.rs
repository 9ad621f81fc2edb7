//! Target `scheduler`: a persisted Worker scheduler (`SchedulerSnapshot::from_value`, then
//! `Scheduler::restore` and `Scheduler::rebuild_after_restart`).
//!
//! Oracles: no panic; errors are typed with a §19 code; an accepted snapshot round-trips (the
//! restored scheduler's snapshot, through JSON text, restores to the same snapshot); a restored
//! scheduler can be driven (`schedule`, `disclose`) without a panic.

use missionweaveprotocol::WireCode;
use missionweaveprotocol::json::{canonical_bytes, parse_state};
use missionweaveprotocol_kernel::scheduler::{
    CheckpointRef, ScheduleAction, Scheduler, SchedulerPolicy, SchedulerSnapshot, Transition,
    WorkOffer,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

use super::super::{OracleFailure, Outcome, Rng, Target, Verdict, first_difference, typed_error};
use super::{mutate_json_or_bytes, parse_stage};

const CODES: &[WireCode] = &[
    WireCode::ProtocolViolation,
    WireCode::InternalError,
    WireCode::InvalidCommand,
    WireCode::InvalidStateTransition,
];

const T0: i64 = 1_767_225_600_000;

/// The scheduler target (fixed policy: three slots, defaults otherwise).
#[derive(Debug, Clone, Copy, Default)]
pub struct SchedulerTarget;

fn policy() -> SchedulerPolicy {
    SchedulerPolicy {
        capacity_slots: 3,
        ..SchedulerPolicy::default()
    }
}

fn seed(busy: bool) -> Option<Vec<u8>> {
    let mut s = Scheduler::new(policy()).ok()?;
    for i in 0..if busy { 8i64 } else { 2 } {
        let mut o = WorkOffer::new(&format!("w{i}"), &format!("g{}", i % 3));
        o.priority = ((i * 37) % 201 - 100) as i8;
        if i % 4 == 0 {
            o.deadline = Some(UnixMillis(T0 + 3_600_000 + i));
        }
        o.preemptible = i % 5 != 0;
        s.admit(&o, UnixMillis(T0 + i));
    }
    let ids: Vec<String> = s
        .schedule(UnixMillis(T0 + 20))
        .iter()
        .filter_map(|a| match a {
            ScheduleAction::Dispatch(d) => Some(d.work_id.to_string()),
            ScheduleAction::Preempt(_) => None,
        })
        .collect();
    if busy && ids.len() >= 2 {
        let blocked = Transition::Blocked {
            generation: 1,
            checkpoint: CheckpointRef {
                checkpoint_id: "ck-0".into(),
                durable: true,
                safe: true,
            },
            retry_at: Some(UnixMillis(T0 + 5_000)),
            reason: "waiting for input".into(),
        };
        s.apply(&ids[0], blocked, UnixMillis(T0 + 21)).ok()?;
        s.apply(
            &ids[1],
            Transition::Completed { generation: 1 },
            UnixMillis(T0 + 22),
        )
        .ok()?;
    }
    canonical_bytes(&s.snapshot().to_value()).ok()
}

fn through_text(snapshot: &SchedulerSnapshot) -> Result<SchedulerSnapshot, String> {
    let text = canonical_bytes(&snapshot.to_value()).map_err(|e| e.to_string())?;
    let value = parse_state(&text).map_err(|e| e.to_string())?;
    let read = SchedulerSnapshot::from_value(&value).map_err(|e| format!("{e:?}"))?;
    Ok(Scheduler::restore(policy(), &read)
        .map_err(|e| format!("{e:?}"))?
        .snapshot())
}

impl Target for SchedulerTarget {
    fn name(&self) -> &'static str {
        "scheduler"
    }

    fn memory_factor(&self) -> f64 {
        // a scheduler snapshot is read into an owned tree, then restored into queues.
        48.0
    }

    fn buckets(&self) -> &'static [&'static str] {
        &["1-parse", "2-format", "3-invariants", "accepted"]
    }

    fn seeds(&self) -> Vec<Vec<u8>> {
        [seed(false), seed(true)].into_iter().flatten().collect()
    }

    fn mutate(&self, rng: &mut Rng, base: &[u8]) -> Vec<u8> {
        mutate_json_or_bytes(rng, base, 85)
    }

    fn execute(&self, input: &[u8]) -> Verdict {
        let value = match parse_stage("scheduler parse", input, CODES)? {
            Ok(value) => value,
            Err(refused) => return Ok(refused),
        };
        let snapshot = match SchedulerSnapshot::from_value(&value) {
            Ok(snapshot) => snapshot,
            Err(error) => {
                typed_error("scheduler format", &error, CODES)?;
                let path: Vec<&str> = error
                    .path
                    .split('/')
                    .filter(|s| s.parse::<usize>().is_err())
                    .collect();
                return Ok(Outcome {
                    bucket: 1,
                    signal: format!("format:{}", path.join("/")),
                });
            }
        };
        let mut scheduler = match Scheduler::restore(policy(), &snapshot) {
            Ok(scheduler) => scheduler,
            Err(error) => {
                let reason = typed_error("scheduler restore", &error, CODES)?;
                return Ok(Outcome {
                    bucket: 2,
                    signal: format!("restore:{reason}"),
                });
            }
        };
        let first = scheduler.snapshot();
        let again = through_text(&first).map_err(|e| {
            OracleFailure(format!(
                "a restored scheduler does not restore from its own snapshot: {e}"
            ))
        })?;
        if again != first {
            return Err(OracleFailure(format!(
                "scheduler round trip changed the state: {}",
                first_difference(&first, &again)
            )));
        }
        let now = UnixMillis(T0 + 10_000);
        if let Err(error) = Scheduler::rebuild_after_restart(policy(), &snapshot, now) {
            typed_error("scheduler rebuild", &error, CODES)?;
        }
        for record in &snapshot.records {
            let _ = scheduler.disclose(&record.offer.work_id, now);
        }
        let _ = scheduler.schedule(now);
        Ok(Outcome {
            bucket: 3,
            signal: format!("accepted:{}", snapshot.records.len().min(4)),
        })
    }
}
