//! JSON forms of the persisted snapshots: [`BudgetLedgerSnapshot`] and [`SchedulerSnapshot`].
//!
//! Bindings and stores persist these as ordinary JSON objects (camelCase members, like the
//! reference's snapshot models). Reading is strict: every required member must be present with
//! the right type, unknown members are rejected, and integers must be exact. A well-formed
//! document can still describe an inconsistent ledger or queue; [`BudgetLedger::rebuild`] and
//! [`Scheduler::restore`] check that.
//!
//! Integers are exact JSON numbers except the Scheduler's 128-bit stride passes
//! (`pass`, `virtualTime`), which are decimal strings because they exceed 2^53.
//!
//! [`BudgetLedger::rebuild`]: crate::budget::BudgetLedger::rebuild
//! [`Scheduler::restore`]: crate::scheduler::Scheduler::restore

use core::fmt;

use crate::budget::{BudgetLedgerSnapshot, MissionBudgetState, WorkItemBudgetState};
use crate::capability_version::CapabilityRef;
use crate::json::{Number, Object, Value};
use crate::resources::{Currency, Dimension, MAX_SAFE_INTEGER, Resources};
use crate::scheduler::{
    CheckpointRef, Eligibility, GroupRecord, QueueRecord, SchedulerSnapshot, WorkOffer, WorkState,
};
use crate::unix_millis::UnixMillis;

/// Version of the budget snapshot's JSON form.
pub const BUDGET_SNAPSHOT_VERSION: u64 = 1;

/// A snapshot document that does not have the expected shape. `path` is a JSON Pointer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotFormatError {
    /// Where (JSON Pointer into the document).
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl SnapshotFormatError {
    /// The §19 wire code: a snapshot is local persisted state, so a bad one is an internal fault.
    pub const fn code(&self) -> &'static str {
        "INTERNAL_ERROR"
    }
}

impl fmt::Display for SnapshotFormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed snapshot at {:?}: {}", self.path, self.message)
    }
}

impl std::error::Error for SnapshotFormatError {}

type Result<T> = core::result::Result<T, SnapshotFormatError>;

fn fail<T>(path: &str, message: impl Into<String>) -> Result<T> {
    Err(SnapshotFormatError {
        path: path.to_owned(),
        message: message.into(),
    })
}

/// Strict reader over one JSON object: tracks which members were read and rejects the rest.
struct Reader<'a> {
    object: &'a Object,
    path: String,
    seen: Vec<&'static str>,
}

impl<'a> Reader<'a> {
    fn new(value: &'a Value, path: &str) -> Result<Self> {
        match value.as_object() {
            Some(object) => Ok(Reader {
                object,
                path: path.to_owned(),
                seen: Vec::new(),
            }),
            None => fail(
                path,
                format!("expected an object, found {}", value.type_name()),
            ),
        }
    }

    fn at(&self, name: &str) -> String {
        format!("{}/{name}", self.path)
    }

    fn opt(&mut self, name: &'static str) -> Option<&'a Value> {
        self.seen.push(name);
        self.object.get(name).filter(|v| !matches!(v, Value::Null))
    }

    fn req(&mut self, name: &'static str) -> Result<&'a Value> {
        match self.opt(name) {
            Some(v) => Ok(v),
            None => fail(&self.at(name), "required member missing"),
        }
    }

    fn string(&mut self, name: &'static str) -> Result<String> {
        let v = self.req(name)?;
        as_string(v, &self.at(name))
    }

    fn opt_string(&mut self, name: &'static str) -> Result<Option<String>> {
        match self.opt(name) {
            Some(v) => as_string(v, &self.at(name)).map(Some),
            None => Ok(None),
        }
    }

    fn int(&mut self, name: &'static str) -> Result<i64> {
        let v = self.req(name)?;
        as_i64(v, &self.at(name))
    }

    fn opt_int(&mut self, name: &'static str) -> Result<Option<i64>> {
        match self.opt(name) {
            Some(v) => as_i64(v, &self.at(name)).map(Some),
            None => Ok(None),
        }
    }

    fn uint(&mut self, name: &'static str, max: u64) -> Result<u64> {
        let path = self.at(name);
        let v = self.int(name)?;
        match u64::try_from(v) {
            Ok(u) if u <= max => Ok(u),
            _ => fail(&path, format!("expected an integer in 0..={max}")),
        }
    }

    fn boolean(&mut self, name: &'static str) -> Result<bool> {
        let path = self.at(name);
        match self.req(name)?.as_bool() {
            Some(b) => Ok(b),
            None => fail(&path, "expected a boolean"),
        }
    }

    fn big(&mut self, name: &'static str) -> Result<u128> {
        let path = self.at(name);
        let text = self.string(name)?;
        if text.is_empty()
            || (text.len() > 1 && text.starts_with('0'))
            || !text.bytes().all(|b| b.is_ascii_digit())
        {
            return fail(&path, "expected a decimal integer string");
        }
        text.parse()
            .or_else(|_| fail(&path, "integer out of the 128-bit range"))
    }

    fn array(&mut self, name: &'static str) -> Result<&'a [Value]> {
        let path = self.at(name);
        match self.req(name)?.as_array() {
            Some(items) => Ok(items),
            None => fail(&path, "expected an array"),
        }
    }

    fn resources(&mut self, name: &'static str) -> Result<Resources> {
        let path = self.at(name);
        resources_from_value(self.req(name)?, &path)
    }

    /// Rejects members that were never read.
    fn finish(self) -> Result<()> {
        for (key, _) in self.object.iter() {
            let known = key.as_str().is_some_and(|k| self.seen.contains(&k));
            if !known {
                return fail(
                    &self.path,
                    format!("unknown member {:?}", key.to_lossy().as_ref()),
                );
            }
        }
        Ok(())
    }
}

fn as_string(v: &Value, path: &str) -> Result<String> {
    match v.as_str() {
        Some(s) => Ok(s.to_owned()),
        None => fail(path, "expected a string"),
    }
}

fn as_i64(v: &Value, path: &str) -> Result<i64> {
    match v.as_number() {
        Some(n) if n.decimal().is_integer() => match n.as_i64() {
            Some(i) => Ok(i),
            None => fail(path, "integer out of the 64-bit range"),
        },
        _ => fail(path, "expected an integer"),
    }
}

fn num_u(v: u64) -> Value {
    Value::Number(Number::from_u64(v))
}

fn num_i(v: i64) -> Value {
    Value::Number(Number::from_i64(v))
}

/// The camelCase JSON member name of a dimension (the reference's `ResourceUsage` fields).
pub const fn dimension_member(d: Dimension) -> &'static str {
    match d {
        Dimension::Financial => "financialMicrounits",
        Dimension::ModelTokens => "modelTokens",
        Dimension::ToolCalls => "toolCalls",
        Dimension::ComputeSeconds => "computeSeconds",
        Dimension::WallClockSeconds => "wallClockSeconds",
        Dimension::ExternalSideEffects => "externalActions",
    }
}

/// `{"financialMicrounits": …, …}` with all six members.
pub fn resources_to_value(r: &Resources) -> Value {
    let mut o = Object::new();
    for d in Dimension::ALL {
        o.insert(dimension_member(d), num_u(r.get(d)));
    }
    Value::Object(o)
}

/// Reads all six members (each 0..=2^53 − 1); no others.
pub fn resources_from_value(value: &Value, path: &str) -> Result<Resources> {
    let mut r = Reader::new(value, path)?;
    let mut out = Resources::ZERO;
    for d in Dimension::ALL {
        out.set(d, r.uint(dimension_member(d), MAX_SAFE_INTEGER)?);
    }
    r.finish()?;
    Ok(out)
}

impl BudgetLedgerSnapshot {
    /// The JSON form (`{"version": 1, "missions": [...], "workItems": [...]}`).
    pub fn to_value(&self) -> Value {
        let missions = self
            .missions
            .iter()
            .map(|m| {
                let mut o = Object::new();
                o.insert("missionId", Value::string(&m.mission_id));
                if let Some(p) = &m.parent_work_item_id {
                    o.insert("parentWorkItemId", Value::string(p));
                }
                if let Some(c) = m.currency {
                    o.insert("currency", Value::string(c.as_str()));
                }
                o.insert("limit", resources_to_value(&m.limit));
                o.insert("usage", resources_to_value(&m.usage));
                Value::Object(o)
            })
            .collect();
        let work_items = self
            .work_items
            .iter()
            .map(|w| {
                let mut o = Object::new();
                o.insert("workItemId", Value::string(&w.work_item_id));
                o.insert("missionId", Value::string(&w.mission_id));
                if let Some(p) = &w.parent_work_item_id {
                    o.insert("parentWorkItemId", Value::string(p));
                }
                o.insert("limit", resources_to_value(&w.limit));
                o.insert("directUsage", resources_to_value(&w.direct_usage));
                o.insert("usage", resources_to_value(&w.usage));
                Value::Object(o)
            })
            .collect();
        let mut o = Object::new();
        o.insert("version", num_u(BUDGET_SNAPSHOT_VERSION));
        o.insert("missions", Value::Array(missions));
        o.insert("workItems", Value::Array(work_items));
        Value::Object(o)
    }

    /// Reads the JSON form strictly (shape only; consistency is `BudgetLedger::rebuild`'s job).
    pub fn from_value(value: &Value) -> Result<Self> {
        let mut r = Reader::new(value, "")?;
        if r.int("version")? != BUDGET_SNAPSHOT_VERSION as i64 {
            return fail("/version", "unsupported version");
        }
        let mut snap = BudgetLedgerSnapshot::default();
        for (i, item) in r.array("missions")?.iter().enumerate() {
            let mut m = Reader::new(item, &format!("/missions/{i}"))?;
            let currency = match m.opt_string("currency")? {
                Some(text) => match Currency::parse(&text) {
                    Some(c) => Some(c),
                    None => return fail(&m.at("currency"), "expected ^[A-Z]{3}$"),
                },
                None => None,
            };
            snap.missions.push(MissionBudgetState {
                mission_id: m.string("missionId")?,
                parent_work_item_id: m.opt_string("parentWorkItemId")?,
                currency,
                limit: m.resources("limit")?,
                usage: m.resources("usage")?,
            });
            m.finish()?;
        }
        for (i, item) in r.array("workItems")?.iter().enumerate() {
            let mut w = Reader::new(item, &format!("/workItems/{i}"))?;
            snap.work_items.push(WorkItemBudgetState {
                work_item_id: w.string("workItemId")?,
                mission_id: w.string("missionId")?,
                parent_work_item_id: w.opt_string("parentWorkItemId")?,
                limit: w.resources("limit")?,
                direct_usage: w.resources("directUsage")?,
                usage: w.resources("usage")?,
            });
            w.finish()?;
        }
        r.finish()?;
        Ok(snap)
    }
}

fn state_from_str(text: &str) -> Option<WorkState> {
    Some(match text {
        "ready" => WorkState::Ready,
        "running" => WorkState::Running,
        "preempting" => WorkState::Preempting,
        "blocked" => WorkState::Blocked,
        _ => return None,
    })
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::json::{canonical_bytes, parse};

    #[test]
    fn resources_round_trip_and_reject_bad_members() {
        let r = Resources::new(1, 2, 3, 4, 5, MAX_SAFE_INTEGER);
        assert_eq!(
            resources_from_value(&resources_to_value(&r), "").unwrap(),
            r
        );
        for bad in [
            r#"{"financialMicrounits":1}"#,
            r#"{"financialMicrounits":1,"modelTokens":0,"toolCalls":0,"computeSeconds":0,"wallClockSeconds":0,"externalActions":-1}"#,
            r#"{"financialMicrounits":1.5,"modelTokens":0,"toolCalls":0,"computeSeconds":0,"wallClockSeconds":0,"externalActions":0}"#,
            r#"{"financialMicrounits":9007199254740992,"modelTokens":0,"toolCalls":0,"computeSeconds":0,"wallClockSeconds":0,"externalActions":0}"#,
            r#"{"financialMicrounits":0,"modelTokens":0,"toolCalls":0,"computeSeconds":0,"wallClockSeconds":0,"externalActions":0,"x":0}"#,
            r#"[]"#,
        ] {
            assert!(
                resources_from_value(&parse(bad.as_bytes()).unwrap(), "").is_err(),
                "{bad}"
            );
        }
        // 1.0 is an exact integer.
        let one = r#"{"financialMicrounits":1.0,"modelTokens":0,"toolCalls":0,"computeSeconds":0,"wallClockSeconds":0,"externalActions":0}"#;
        assert_eq!(
            resources_from_value(&parse(one.as_bytes()).unwrap(), "")
                .unwrap()
                .get(Dimension::Financial),
            1
        );
    }

    #[test]
    fn errors_carry_a_json_pointer() {
        let doc =
            br#"{"version":1,"missions":[{"missionId":"m","limit":{},"usage":{}}],"workItems":[]}"#;
        let err = BudgetLedgerSnapshot::from_value(&parse(doc).unwrap()).unwrap_err();
        assert_eq!(err.path, "/missions/0/limit/financialMicrounits");
        assert_eq!(err.code(), "INTERNAL_ERROR");
        let doc = br#"{"version":2,"missions":[],"workItems":[]}"#;
        assert_eq!(
            BudgetLedgerSnapshot::from_value(&parse(doc).unwrap())
                .unwrap_err()
                .path,
            "/version"
        );
        // Canonical output is stable (members are strings and safe integers).
        let empty = BudgetLedgerSnapshot::default().to_value();
        assert_eq!(
            canonical_bytes(&empty).unwrap(),
            br#"{"missions":[],"version":1,"workItems":[]}"#
        );
    }
}
