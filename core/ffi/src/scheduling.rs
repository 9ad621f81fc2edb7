//! The Worker-local Scheduler through JavaScript. The handle owns one core [`Scheduler`];
//! `schedule` and `apply` have direct entry points (the dispatch loop's hot path), everything
//! else goes through [`SchedulerHandle::call`] with a JSON argument array. Offers, policies and
//! transitions are read strictly; actions, decisions and disclosures are written in camelCase
//! with times in Unix milliseconds.

use std::collections::{HashMap, HashSet};

use missionweaveprotocol::json::Value;
use missionweaveprotocol_authority::scheduler::{
    self, AdmissionDecision, CheckpointRef, Eligibility, GroupPolicy, MAX_WEIGHT, ScheduleAction,
    Scheduler, SchedulerError, SchedulerPolicy, SchedulerSnapshot, Transition, WorkOffer,
};
use missionweaveprotocol_authority::unix_millis::UnixMillis;

use crate::args::{Args, Reader, Res};
use crate::authority::{ms, num, opt_ms, snapshot_failure, snapshot_text, unknown_method};
use crate::envelope::{Failure, Obj, escape_into, finish};

fn scheduler_failure(e: &SchedulerError) -> Failure {
    Failure::error(e)
}

fn group_policy(value: &Value, path: &str) -> Res<GroupPolicy> {
    let mut r = Reader::new(value, path)?;
    let policy = GroupPolicy {
        weight: r.uint_or("weight", u64::from(MAX_WEIGHT), 1)? as u32,
        slot_quota: r
            .opt("slotQuota")
            .map(|v| crate::args::uint(v, &format!("{path}.slotQuota"), u64::from(u32::MAX)))
            .transpose()?
            .map(|q| q as u32),
    };
    r.finish()?;
    Ok(policy)
}

/// `SchedulerPolicy` from its camelCase object; absent members take the core's defaults.
fn policy(value: &Value) -> Res<SchedulerPolicy> {
    let d = SchedulerPolicy::default();
    if matches!(value, Value::Null) {
        return Ok(d);
    }
    let mut r = Reader::new(value, "policy")?;
    let u32_max = u64::from(u32::MAX);
    let mut groups = HashMap::new();
    if let Some(map) = r.opt("groups") {
        for (id, g) in Reader::new(map, "policy.groups")?.entries() {
            let gp = group_policy(g, &format!("policy.groups[{id:?}]"))?;
            groups.insert(id, gp);
        }
    }
    let supported_capabilities = match r.opt("supportedCapabilities") {
        Some(v) => Some(crate::args::capabilities(
            crate::args::array(v, "policy.supportedCapabilities")?,
            "policy.supportedCapabilities",
        )?),
        None => None,
    };
    let allowed_groups = match r.opt("allowedGroups") {
        Some(v) => Some(
            crate::args::array(v, "policy.allowedGroups")?
                .iter()
                .enumerate()
                .map(|(i, g)| {
                    crate::args::string(g, &format!("policy.allowedGroups[{i}]")).map(str::to_owned)
                })
                .collect::<Res<HashSet<String>>>()?,
        ),
        None => None,
    };
    let default_group = match r.opt("defaultGroup") {
        Some(v) => group_policy(v, "policy.defaultGroup")?,
        None => d.default_group,
    };
    let p = SchedulerPolicy {
        capacity_slots: r.uint_or("capacitySlots", u32_max, u64::from(d.capacity_slots))? as u32,
        groups,
        default_group,
        supported_capabilities,
        allowed_groups,
        max_work_items: r.uint_or("maxWorkItems", u32_max, u64::from(d.max_work_items))? as u32,
        max_work_items_per_group: r.uint_or(
            "maxWorkItemsPerGroup",
            u32_max,
            u64::from(d.max_work_items_per_group),
        )? as u32,
        decline_infeasible_deadlines: r
            .bool_or("declineInfeasibleDeadlines", d.decline_infeasible_deadlines)?,
        priority_step_ms: r.uint_or("priorityStepMs", u32_max, u64::from(d.priority_step_ms))?
            as u32,
        deadline_horizon_ms: r.uint_or(
            "deadlineHorizonMs",
            u32_max,
            u64::from(d.deadline_horizon_ms),
        )? as u32,
        fairness_lag_slots: r.uint_or(
            "fairnessLagSlots",
            u32_max,
            u64::from(d.fairness_lag_slots),
        )? as u32,
        preemption_margin: r.uint_or("preemptionMargin", 255, u64::from(d.preemption_margin))?
            as u8,
        default_estimate_ms: r.uint_or(
            "defaultEstimateMs",
            u32_max,
            u64::from(d.default_estimate_ms),
        )? as u32,
    };
    r.finish()?;
    Ok(p)
}

fn offer(value: &Value, path: &str) -> Res<WorkOffer> {
    let mut r = Reader::new(value, path)?;
    let eligibility = match r.opt("eligibility") {
        Some(v) => {
            let mut e = Reader::new(v, &format!("{path}.eligibility"))?;
            let out = Eligibility {
                authorized: e.bool_or("authorized", true)?,
                dependencies_ready: e.bool_or("dependenciesReady", true)?,
                budget_available: e.bool_or("budgetAvailable", true)?,
            };
            e.finish()?;
            out
        }
        None => Eligibility::default(),
    };
    let o = WorkOffer {
        work_id: r.string("workId")?.to_owned(),
        group_id: r.string("groupId")?.to_owned(),
        priority: scheduler::priority(r.int_or("priority", 0)?).map_err(|e| Failure::error(&e))?,
        deadline: r.opt_millis("deadline")?,
        estimated_duration_ms: r.uint_or("estimatedDurationMs", u64::from(u32::MAX), 0)? as u32,
        slots: r.uint_or("slots", u64::from(u16::MAX), 1)? as u16,
        required_capabilities: r.capabilities("requiredCapabilities")?,
        preemptible: r.bool_or("preemptible", true)?,
        eligibility,
    };
    r.finish()?;
    Ok(o)
}

fn checkpoint(value: &Value, path: &str) -> Res<CheckpointRef> {
    let mut r = Reader::new(value, path)?;
    let c = CheckpointRef {
        checkpoint_id: r.string("checkpointId")?.to_owned(),
        durable: r.bool_or("durable", true)?,
        safe: r.bool_or("safe", true)?,
    };
    r.finish()?;
    Ok(c)
}

/// `{kind, generation, checkpoint?, retryAt?, reason?}` with the core's snake_case kinds.
fn transition(value: &Value) -> Res<Transition> {
    let mut r = Reader::new(value, "transition")?;
    let kind = r.string("kind")?;
    let generation = r.uint("generation", u64::from(u32::MAX))? as u32;
    let t = match kind {
        "checkpoint_saved" => Transition::CheckpointSaved {
            generation,
            checkpoint: checkpoint(r.req("checkpoint")?, "transition.checkpoint")?,
        },
        "preemption_declined" => Transition::PreemptionDeclined { generation },
        "blocked" => Transition::Blocked {
            generation,
            checkpoint: checkpoint(r.req("checkpoint")?, "transition.checkpoint")?,
            retry_at: r.opt_millis("retryAt")?,
            reason: r.string("reason")?.to_owned(),
        },
        "released" => Transition::Released { generation },
        "completed" => Transition::Completed { generation },
        "failed" => Transition::Failed { generation },
        other => {
            return Err(Failure::argument(format!(
                "transition.kind: {other:?} (expected checkpoint_saved, preemption_declined, blocked, released, completed or failed)"
            )));
        }
    };
    r.finish()?;
    Ok(t)
}

fn decision_value(work_id: &str, d: AdmissionDecision) -> Value {
    Obj::new()
        .str("workId", work_id)
        .bool("accepted", d.accepted)
        .str("reason", d.reason.as_str())
        .opt_str("declineReason", d.reason.category().map(|c| c.as_str()))
        .build()
}

/// Hot-path results are written directly as `{"ok":[…]}` (no value tree, no key sorting); the
/// wrapper parses them with `JSON.parse`, so they need not be canonical.
fn write_str(out: &mut String, name: &str, value: &str) {
    out.push('"');
    out.push_str(name);
    out.push_str("\":");
    escape_into(out, value);
}

fn write_action(out: &mut String, action: &ScheduleAction) {
    let (kind, work_id, group_id, generation) = match action {
        ScheduleAction::Dispatch(d) => ("dispatch", &d.work_id, &d.group_id, d.generation),
        ScheduleAction::Preempt(p) => ("preempt", &p.work_id, &p.group_id, p.generation),
    };
    out.push('{');
    write_str(out, "type", kind);
    out.push(',');
    write_str(out, "workId", work_id);
    out.push(',');
    write_str(out, "groupId", group_id);
    out.push_str(&format!(",\"generation\":{generation},"));
    write_str(out, "runId", &format!("{work_id}:{generation}"));
    if let ScheduleAction::Dispatch(d) = action {
        out.push_str(&format!(",\"slots\":{},\"resumeFrom\":", d.slots));
        match &d.resume_from {
            None => out.push_str("null"),
            Some(c) => {
                out.push('{');
                write_str(out, "checkpointId", &c.checkpoint_id);
                out.push_str(&format!(",\"durable\":{},\"safe\":{}}}", c.durable, c.safe));
            }
        }
    }
    out.push('}');
}

fn write_decision(out: &mut String, work_id: &str, d: AdmissionDecision) {
    out.push('{');
    write_str(out, "workId", work_id);
    out.push_str(&format!(",\"accepted\":{},", d.accepted));
    write_str(out, "reason", d.reason.as_str());
    match d.reason.category() {
        Some(c) => {
            out.push(',');
            write_str(out, "declineReason", c.as_str());
        }
        None => out.push_str(",\"declineReason\":null"),
    }
    out.push('}');
}

fn ok_array<T>(items: &[T], mut write: impl FnMut(&mut String, &T)) -> String {
    let mut out = String::with_capacity(16 + items.len() * 160);
    out.push_str("{\"ok\":[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write(&mut out, item);
    }
    out.push_str("]}");
    out
}

/// A time from the hot-path entry points (a JavaScript number).
fn now_of(now: f64) -> Res<UnixMillis> {
    if !now.is_finite() || now.fract() != 0.0 || now.abs() > 9_007_199_254_740_991.0 {
        return Err(Failure::argument(
            "now: expected integer milliseconds since the epoch",
        ));
    }
    Ok(UnixMillis(now as i64))
}

fn read_snapshot(a: &Args) -> Res<SchedulerSnapshot> {
    let doc = snapshot_text(a.str(0, "snapshot")?)?;
    SchedulerSnapshot::from_value(&doc).map_err(|e| snapshot_failure(&e))
}

/// One Worker-local Scheduler.
#[derive(Debug, Clone)]
pub struct SchedulerHandle(Scheduler);

impl SchedulerHandle {
    /// `mode`: `new` (`[policy]`), `restore` (`[snapshotText, policy]`, exact) or `rebuild`
    /// (`[snapshotText, policy, now]`, after a restart: running work resumes or blocks).
    pub fn new(mode: &str, args: &str) -> Res<Self> {
        let a = Args::parse(args)?;
        let fail = |e: SchedulerError| scheduler_failure(&e);
        match mode {
            "new" => Scheduler::new(policy(a.get(0))?).map(Self).map_err(fail),
            "restore" => {
                let snap = read_snapshot(&a)?;
                Scheduler::restore(policy(a.get(1))?, &snap)
                    .map(Self)
                    .map_err(fail)
            }
            "rebuild" => {
                let snap = read_snapshot(&a)?;
                Scheduler::rebuild_after_restart(policy(a.get(1))?, &snap, a.millis(2, "now")?)
                    .map(Self)
                    .map_err(fail)
            }
            other => Err(Failure::argument(format!(
                "unknown scheduler mode {other:?}"
            ))),
        }
    }

    /// `schedule(now)`: the actions due at `now`, as an envelope.
    pub fn schedule(&mut self, now: f64) -> String {
        match now_of(now) {
            Ok(now) => ok_array(&self.0.schedule(now), write_action),
            Err(failure) => finish(Err(failure)),
        }
    }

    /// `admitMany(offers, now)`: every offer is read first, so a malformed batch admits nothing.
    pub fn admit_many(&mut self, args: &str) -> String {
        let read = (|| {
            let a = Args::parse(args)?;
            let now = a.millis(1, "now")?;
            let items = crate::args::array(a.get(0), "offers")?;
            let offers = items
                .iter()
                .enumerate()
                .map(|(i, v)| offer(v, &format!("offers[{i}]")))
                .collect::<Res<Vec<_>>>()?;
            Ok((offers, now))
        })();
        match read {
            Ok((offers, now)) => {
                let s = &mut self.0;
                let decided: Vec<(&str, AdmissionDecision)> = offers
                    .iter()
                    .map(|o| (o.work_id.as_str(), s.admit(o, now)))
                    .collect();
                ok_array(&decided, |out, (id, d)| write_decision(out, id, *d))
            }
            Err(failure) => finish(Err(failure)),
        }
    }

    /// `apply(workId, transitionJson, now)`.
    pub fn apply(&mut self, work_id: &str, transition_json: &str, now: f64) -> String {
        finish((|| {
            let now = now_of(now)?;
            let value = snapshot_text(transition_json)?;
            self.0
                .apply(work_id, transition(&value)?, now)
                .map_err(|e| scheduler_failure(&e))?;
            Ok(Value::Null)
        })())
    }

    pub fn call(&mut self, method: &str, args: &str) -> Res<Value> {
        let a = Args::parse(args)?;
        let s = &mut self.0;
        let fail = |e: SchedulerError| scheduler_failure(&e);
        Ok(match method {
            "admit" => {
                let o = offer(a.get(0), "offer")?;
                decision_value(&o.work_id, s.admit(&o, a.millis(1, "now")?))
            }
            "apply" => {
                let t = transition(a.get(1))?;
                s.apply(a.str(0, "workId")?, t, a.millis(2, "now")?)
                    .map_err(fail)?;
                Value::Null
            }
            "unblock" => {
                s.unblock(a.str(0, "workId")?, a.millis(1, "now")?)
                    .map_err(fail)?;
                Value::Null
            }
            "cancel" => {
                s.cancel(a.str(0, "workId")?).map_err(fail)?;
                Value::Null
            }
            "reprioritize" => {
                let priority = scheduler::priority(a_int(&a, 1)?).map_err(fail)?;
                s.reprioritize(a.str(0, "workId")?, priority)
                    .map_err(fail)?;
                Value::Null
            }
            "setCapacity" => {
                s.set_capacity(a.uint(0, "capacitySlots", u64::from(u32::MAX))? as u32)
                    .map_err(fail)?;
                Value::Null
            }
            "setGroupPolicy" => {
                let gp = group_policy(a.get(1), "groupPolicy")?;
                s.set_group_policy(a.str(0, "groupId")?, gp).map_err(fail)?;
                Value::Null
            }
            "state" => s
                .state(a.str(0, "workId")?)
                .map_or(Value::Null, |st| Value::string(st.as_str())),
            "generation" => s
                .generation(a.str(0, "workId")?)
                .map_or(Value::Null, |g| num(u64::from(g))),
            "isTerminal" => Value::Bool(s.is_terminal(a.str(0, "workId")?)),
            "forget" => Value::Bool(s.forget(a.str(0, "workId")?)),
            "disclose" => match s.disclose(a.str(0, "workId")?, a.millis(1, "now")?) {
                None => Value::Null,
                Some(d) => Obj::new()
                    .str("state", d.state.as_str())
                    .value("earliestStart", opt_ms(d.earliest_start))
                    .value("latestStart", opt_ms(d.latest_start))
                    .value("estimatedCompletion", opt_ms(d.estimated_completion))
                    .str("confidence", d.confidence.as_str())
                    .str("capacityStatus", d.capacity_status.as_str())
                    .value("calculatedAt", ms(d.calculated_at))
                    .build(),
            },
            "stats" => Obj::new()
                .num("size", s.len() as u64)
                .num("usedSlots", u64::from(s.used_slots()))
                .num("capacitySlots", u64::from(s.capacity_slots()))
                .num("horizonMs", s.policy().horizon_ms().max(0) as u64)
                .build(),
            "snapshot" => s.snapshot().to_value(),
            other => return Err(unknown_method("Scheduler", other)),
        })
    }
}

fn a_int(a: &Args, index: usize) -> Res<i64> {
    match a
        .get(index)
        .as_number()
        .and_then(|n| n.decimal().is_integer().then(|| n.as_i64()).flatten())
    {
        Some(v) => Ok(v),
        None => Err(Failure::argument("priority: expected an integer")),
    }
}
