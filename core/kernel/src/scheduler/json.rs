//! The JSON form of [`SchedulerSnapshot`] (passes and the virtual time as decimal strings).

use missionweaveprotocol::json::{Object, Value};

use crate::capability_version::CapabilityRef;
use crate::scheduler::{
    snapshot::{GroupRecord, QueueRecord, SchedulerSnapshot},
    types::{CheckpointRef, Eligibility, WorkOffer, WorkState},
};
use crate::snapshot_json::{Reader, Result, as_string, fail, num_i, num_u};
use crate::unix_millis::UnixMillis;

fn state_from_str(text: &str) -> Option<WorkState> {
    WorkState::parse(text)
}

fn offer_to_value(offer: &WorkOffer) -> Value {
    let mut o = Object::new();
    o.insert("workId", Value::string(&offer.work_id));
    o.insert("groupId", Value::string(&offer.group_id));
    o.insert("priority", num_i(i64::from(offer.priority)));
    if let Some(d) = offer.deadline {
        o.insert("deadline", num_i(d.0));
    }
    o.insert(
        "estimatedDurationMs",
        num_u(u64::from(offer.estimated_duration_ms)),
    );
    o.insert("slots", num_u(u64::from(offer.slots)));
    let caps = offer
        .required_capabilities
        .iter()
        .map(|c| {
            let mut o = Object::new();
            o.insert("id", Value::string(&c.id));
            o.insert("version", Value::string(c.version.as_str()));
            Value::Object(o)
        })
        .collect();
    o.insert("requiredCapabilities", Value::Array(caps));
    o.insert("preemptible", Value::Bool(offer.preemptible));
    Value::Object(o)
}

fn offer_from_value(value: &Value, path: &str) -> Result<WorkOffer> {
    let mut r = Reader::new(value, path)?;
    let priority_path = r.at("priority");
    let priority = i8::try_from(r.int("priority")?)
        .or_else(|_| fail(&priority_path, "priority out of range"))?;
    let mut caps = Vec::new();
    let caps_path = r.at("requiredCapabilities");
    for (i, item) in r.array("requiredCapabilities")?.iter().enumerate() {
        let mut c = Reader::new(item, &format!("{caps_path}/{i}"))?;
        let id = c.string("id")?;
        let version = c.string("version")?;
        match CapabilityRef::new(&id, &version) {
            Some(cap) => caps.push(cap),
            None => return fail(&c.at("version"), "not a semantic version"),
        }
        c.finish()?;
    }
    let offer = WorkOffer {
        work_id: r.string("workId")?,
        group_id: r.string("groupId")?,
        priority,
        deadline: r.opt_int("deadline")?.map(UnixMillis),
        estimated_duration_ms: r.uint("estimatedDurationMs", u64::from(u32::MAX))? as u32,
        slots: r.uint("slots", u64::from(u16::MAX))? as u16,
        required_capabilities: caps,
        preemptible: r.boolean("preemptible")?,
        eligibility: Eligibility::default(),
    };
    r.finish()?;
    Ok(offer)
}

fn record_to_value(rec: &QueueRecord) -> Value {
    let mut o = Object::new();
    o.insert("offer", offer_to_value(&rec.offer));
    o.insert("state", Value::string(rec.state.as_str()));
    o.insert("key", num_i(rec.key));
    o.insert("ticket", num_u(rec.ticket));
    o.insert("since", num_i(rec.since.0));
    o.insert("generation", num_u(u64::from(rec.generation)));
    if let Some(c) = &rec.checkpoint {
        let mut co = Object::new();
        co.insert("checkpointId", Value::string(&c.checkpoint_id));
        co.insert("durable", Value::Bool(c.durable));
        co.insert("safe", Value::Bool(c.safe));
        o.insert("checkpoint", Value::Object(co));
    }
    if let Some(at) = rec.retry_at {
        o.insert("retryAt", num_i(at.0));
    }
    if let Some(reason) = &rec.blocked_reason {
        o.insert("blockedReason", Value::string(reason));
    }
    Value::Object(o)
}

fn record_from_value(value: &Value, path: &str) -> Result<QueueRecord> {
    let mut r = Reader::new(value, path)?;
    let offer_path = r.at("offer");
    let offer = offer_from_value(r.req("offer")?, &offer_path)?;
    let state_path = r.at("state");
    let Some(state) = state_from_str(&r.string("state")?) else {
        return fail(&state_path, "unknown state");
    };
    let checkpoint = match r.opt("checkpoint") {
        Some(v) => {
            let mut c = Reader::new(v, &r.at("checkpoint"))?;
            let cp = CheckpointRef {
                checkpoint_id: c.string("checkpointId")?,
                durable: c.boolean("durable")?,
                safe: c.boolean("safe")?,
            };
            c.finish()?;
            Some(cp)
        }
        None => None,
    };
    let rec = QueueRecord {
        offer,
        state,
        key: r.int("key")?,
        ticket: r.uint("ticket", i64::MAX as u64)?,
        since: UnixMillis(r.int("since")?),
        generation: r.uint("generation", u64::from(u32::MAX))? as u32,
        checkpoint,
        retry_at: r.opt_int("retryAt")?.map(UnixMillis),
        blocked_reason: r.opt_string("blockedReason")?,
    };
    r.finish()?;
    Ok(rec)
}

impl SchedulerSnapshot {
    /// The JSON form (passes and the virtual time as decimal strings).
    pub fn to_value(&self) -> Value {
        let groups = self
            .groups
            .iter()
            .map(|g| {
                let mut o = Object::new();
                o.insert("groupId", Value::string(&g.group_id));
                o.insert("pass", Value::string(g.pass.to_string()));
                Value::Object(o)
            })
            .collect();
        let mut o = Object::new();
        o.insert("version", num_u(u64::from(self.version)));
        o.insert("groups", Value::Array(groups));
        o.insert(
            "records",
            Value::Array(self.records.iter().map(record_to_value).collect()),
        );
        o.insert(
            "terminal",
            Value::Array(self.terminal.iter().map(Value::string).collect()),
        );
        o.insert("virtualTime", Value::string(self.virtual_time.to_string()));
        o.insert("nextTicket", num_u(self.next_ticket));
        Value::Object(o)
    }

    /// Reads the JSON form strictly (the version is checked by `Scheduler::restore`).
    pub fn from_value(value: &Value) -> Result<Self> {
        let mut r = Reader::new(value, "")?;
        let version = r.uint("version", u64::from(u32::MAX))? as u32;
        let mut groups = Vec::new();
        for (i, item) in r.array("groups")?.iter().enumerate() {
            let mut g = Reader::new(item, &format!("/groups/{i}"))?;
            groups.push(GroupRecord {
                group_id: g.string("groupId")?,
                pass: g.big("pass")?,
            });
            g.finish()?;
        }
        let mut records = Vec::new();
        for (i, item) in r.array("records")?.iter().enumerate() {
            records.push(record_from_value(item, &format!("/records/{i}"))?);
        }
        let mut terminal = Vec::new();
        for (i, item) in r.array("terminal")?.iter().enumerate() {
            terminal.push(as_string(item, &format!("/terminal/{i}"))?);
        }
        let snap = SchedulerSnapshot {
            version,
            groups,
            records,
            terminal,
            virtual_time: r.big("virtualTime")?,
            next_ticket: r.uint("nextTicket", i64::MAX as u64)?,
        };
        r.finish()?;
        Ok(snap)
    }
}
