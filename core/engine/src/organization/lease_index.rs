//! The per-Agent index of WorkItems on which the Agent may hold an active lease, so that a
//! Session replacement finds the leases to revoke (§11.3) without scanning every WorkItem.
//!
//! Stored under kind [`AGENT_LEASES_KIND`], ID = Agent ID, value
//! `{"agentId": …, "workItemIds": [sorted, distinct]}`.
//!
//! **Invariant**: every WorkItem whose owner holds a lease recorded `active` is listed in the
//! owner's index. The index may list more (a lease that lapsed, an item whose lease was closed
//! by a Mission's closure): a Session replacement skips those and drops them. It is maintained
//! by every WorkItem Command on an owned item ([`track`], called by `work`): the item's
//! Agent index is written when the item enters or leaves it, and otherwise checked at commit,
//! so a Session replacement that drops an entry concurrently makes the Command decide again.
//! Bounded: an entry leaves when its item's lease closes through a WorkItem Command or at the
//! next Session replacement; between them the index holds at most the items the Agent accepted.

use std::collections::BTreeSet;

use missionweaveprotocol::json::{Object, Value};

use super::{AGENT_LEASES_KIND, blob, read_value};
use crate::decision::Decision;
use crate::error::EngineError;
use crate::store::{AggregateKey, Store};
use crate::work::state::WorkItem;
use missionweaveprotocol_kernel::lease::LeaseState;

/// One Agent's index as read: its revision (0: absent) and the listed WorkItem IDs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LeaseIndex {
    pub key: AggregateKey,
    pub revision: u64,
    pub items: BTreeSet<String>,
}

impl LeaseIndex {
    /// Reads `agent_id`'s index.
    pub fn read(store: &dyn Store, agent_id: &str) -> Result<Self, EngineError> {
        let key = AggregateKey::new(AGENT_LEASES_KIND, agent_id);
        let Some((revision, value)) = read_value(store, &key)? else {
            return Ok(Self {
                key,
                revision: 0,
                items: BTreeSet::new(),
            });
        };
        let items = value
            .get("workItemIds")
            .and_then(Value::as_array)
            .map(|ids| {
                ids.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .ok_or_else(|| EngineError::Corrupt {
                key: key.clone(),
                detail: "workItemIds is missing".into(),
            })?;
        Ok(Self {
            key,
            revision,
            items,
        })
    }

    /// Adds the write of `items` (the new listing) over the revision read.
    pub fn write(
        &self,
        decision: Decision,
        items: &BTreeSet<String>,
    ) -> Result<Decision, EngineError> {
        let mut o = Object::new();
        o.insert("agentId", Value::string(self.key.id.as_str()));
        o.insert(
            "workItemIds",
            Value::Array(items.iter().map(|i| Value::string(i.as_str())).collect()),
        );
        let value = blob(&self.key, &Value::Object(o))?;
        Ok(decision.put(self.key.clone(), self.revision, value))
    }
}

/// Whether `item`'s owner holds a lease still recorded `active` (ownership, blocked or
/// Execution Lease).
pub(crate) fn holds_active_lease(item: &WorkItem) -> Option<&str> {
    let owner = item.owner.as_ref()?;
    let active = [&item.ownership_lease, &item.execution_lease]
        .into_iter()
        .flatten()
        .any(|lease| {
            lease.state() == LeaseState::Active && lease.binding().holder_agent_id == owner.agent_id
        });
    active.then_some(owner.agent_id.as_str())
}

/// Keeps the invariant for one WorkItem write: `after` is the item as the decision writes it.
/// Its owner's index gains the item when the owner holds an active lease on it and loses it
/// when not; still listed and still held, the index revision is checked at commit.
pub(crate) fn track(
    store: &dyn Store,
    decision: Decision,
    after: &WorkItem,
) -> Result<Decision, EngineError> {
    let Some(owner) = after.owner.as_ref() else {
        return Ok(decision);
    };
    let index = LeaseIndex::read(store, &owner.agent_id)?;
    let listed = index.items.contains(&after.work_item_id);
    let holds = holds_active_lease(after).is_some();
    match (listed, holds) {
        // Relies on the entry: a concurrent Session replacement must not drop it unseen.
        (true, true) => return Ok(decision.check(index.key.clone(), index.revision)),
        (false, false) => return Ok(decision),
        _ => {}
    }
    let mut items = index.items.clone();
    if holds {
        items.insert(after.work_item_id.clone());
    } else {
        items.remove(&after.work_item_id);
    }
    index.write(decision, &items)
}
