//! The store reads of the WorkItem Commands: the WorkItem, the Work Proposal, a Mission's
//! WorkItems (for the dependency graph and row 18) and the states of a WorkItem's dependencies.

use std::collections::BTreeMap;

use crate::engine::EngineError;
use crate::store::{AggregateKey, Store};
use crate::work::{AGGREGATE_KIND, WorkError, WorkItem, WorkItemState, WorkProposal};

fn corrupt(key: &AggregateKey, e: &WorkError) -> EngineError {
    EngineError::Corrupt {
        key: key.clone(),
        detail: e.to_string(),
    }
}

/// The stored WorkItem under `key` with its store revision.
pub(crate) fn read_item(
    store: &dyn Store,
    key: &AggregateKey,
) -> Result<Option<(u64, WorkItem)>, EngineError> {
    match store.aggregate(key)? {
        None => Ok(None),
        Some(stored) => WorkItem::from_json(&stored.value)
            .map(|item| Some((stored.revision, item)))
            .map_err(|e| corrupt(key, &e)),
    }
}

pub(crate) fn read_proposal(
    store: &dyn Store,
    key: &AggregateKey,
) -> Result<Option<(u64, WorkProposal)>, EngineError> {
    match store.aggregate(key)? {
        None => Ok(None),
        Some(stored) => WorkProposal::from_json(&stored.value)
            .map(|p| Some((stored.revision, p)))
            .map_err(|e| corrupt(key, &e)),
    }
}

/// The WorkItems of `mission_id`, in ID order, with their store revisions.
pub(crate) fn mission_items(
    store: &dyn Store,
    mission_id: &str,
) -> Result<Vec<(u64, WorkItem)>, EngineError> {
    let mut items = Vec::new();
    for (id, stored) in store.list(AGGREGATE_KIND, "")? {
        let item = WorkItem::from_json(&stored.value)
            .map_err(|e| corrupt(&AggregateKey::new(AGGREGATE_KIND, &id), &e))?;
        if item.mission_id == mission_id {
            items.push((stored.revision, item));
        }
    }
    Ok(items)
}

/// The current state of each dependency of `item` (§10.4; `work.start` needs them `verified`).
pub(crate) fn dependency_states(
    store: &dyn Store,
    item: &WorkItem,
) -> Result<BTreeMap<String, WorkItemState>, EngineError> {
    let mut states = BTreeMap::new();
    for dependency in item.contract.dependencies() {
        let key = AggregateKey::new(AGGREGATE_KIND, dependency);
        if let Some((_, dep)) = read_item(store, &key)? {
            states.insert(dependency.clone(), dep.state);
        }
    }
    Ok(states)
}
