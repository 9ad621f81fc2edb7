//! The JSON form of [`BudgetLedgerSnapshot`] (camelCase members, strict reading).

use missionweaveprotocol::json::{Object, Value};

use super::{BudgetLedgerSnapshot, MissionBudgetState, WorkItemBudgetState};
use crate::resources::Currency;
use crate::snapshot_json::{Reader, Result, fail, num_u, resources_to_value};

/// Version of the budget snapshot's JSON form.
pub const BUDGET_SNAPSHOT_VERSION: u64 = 1;

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
