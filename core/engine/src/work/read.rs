//! The store reads of the WorkItem Commands: the WorkItem, the Work Proposal, a Mission's
//! WorkItems (for the dependency graph and row 18) and the states of a WorkItem's dependencies.

use std::collections::{BTreeMap, BTreeSet};

use crate::budget::account::{BudgetAccount, account_key};
use crate::error::EngineError;
use crate::store::{AggregateKey, Blob, Store};
use crate::work::{
    document::AGGREGATE_KIND,
    error::WorkError,
    proposal::WorkProposal,
    state::{WorkItem, WorkItemState},
};
use missionweaveprotocol::json::{self, Object, Value};
use missionweaveprotocol_kernel::budget::AccountKind;

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

/// Store kind of the per-Mission WorkItem index: one empty row per WorkItem, ID
/// `"<missionId> <workItemId>"`. Listing a Mission's WorkItems is then a prefix range over its
/// own rows, never a scan of every WorkItem of every Mission (the reference's O(state) reads,
/// `reference-python.md` §7 item 7). Identifiers contain no whitespace (§2), so the space
/// cannot occur inside either part.
pub(crate) const INDEX_KIND: &str = "mission_work_item";

/// The value of `item`'s index row: `{"state": …, "owner": <agent ID>?}`, what the §20
/// queue controls count without reading the WorkItems themselves.
pub(crate) fn index_row(item: &WorkItem) -> Blob {
    let mut row = Object::new();
    row.insert("state", Value::string(item.state.as_str()));
    if let Some(owner) = &item.owner {
        row.insert("owner", Value::string(&owner.agent_id));
    }
    // Two strings: always canonicalizable.
    Blob::from(json::canonical_bytes(&Value::Object(row)).unwrap_or_default())
}

/// The index row of WorkItem `work_item_id` of Mission `mission_id`.
pub(crate) fn index_key(mission_id: &str, work_item_id: &str) -> AggregateKey {
    AggregateKey::new(INDEX_KIND, format!("{mission_id} {work_item_id}"))
}

/// The WorkItems of `mission_id`, in ID order, with their store revisions: O(the Mission's
/// WorkItems), whatever the rest of the store holds.
pub(crate) fn mission_items(
    store: &dyn Store,
    mission_id: &str,
) -> Result<Vec<(u64, WorkItem)>, EngineError> {
    let prefix = format!("{mission_id} ");
    let mut items = Vec::new();
    for (row, _) in store.list(INDEX_KIND, &prefix)? {
        let id = &row[prefix.len()..];
        let key = AggregateKey::new(AGGREGATE_KIND, id);
        match read_item(store, &key)? {
            Some((revision, item)) if item.mission_id == mission_id => items.push((revision, item)),
            _ => {
                return Err(EngineError::Corrupt {
                    key: AggregateKey::new(INDEX_KIND, row.as_str()),
                    detail: "the index names no WorkItem of this Mission".to_owned(),
                });
            }
        }
    }
    Ok(items)
}

/// The WorkItems of `mission_id` reachable from `roots` through dependencies (roots
/// included), each once: what a dependency check needs (§10.4). A new WorkItem cannot close a
/// cycle, and a new edge `item → d` closes one only through `d`'s dependencies, so the graph of
/// this closure decides exactly as the graph of the whole Mission would, in O(the closure).
/// Roots that are unknown or belong to another Mission are left out (the graph then reports
/// them as unknown dependencies).
pub(crate) fn dependency_closure(
    store: &dyn Store,
    mission_id: &str,
    roots: &[&str],
) -> Result<Vec<WorkItem>, EngineError> {
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut stack: Vec<String> = roots.iter().map(|r| (*r).to_owned()).collect();
    let mut items = Vec::new();
    while let Some(id) = stack.pop() {
        if !seen.insert(id.clone()) {
            continue;
        }
        let Some((_, item)) = read_item(store, &AggregateKey::new(AGGREGATE_KIND, &id))? else {
            continue;
        };
        if item.mission_id != mission_id {
            continue;
        }
        stack.extend(
            item.contract
                .dependencies()
                .iter()
                .filter(|d| !seen.contains(*d))
                .cloned(),
        );
        items.push(item);
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

/// The budget account of `kind` `id` with its store revision (§12). Every Mission and WorkItem
/// the engine created has one; a missing or unreadable account is corrupt state.
pub(crate) fn read_account(
    store: &dyn Store,
    kind: AccountKind,
    id: &str,
) -> Result<(u64, BudgetAccount), EngineError> {
    let key = account_key(kind, id);
    let stored = store.aggregate(&key)?;
    match stored
        .as_ref()
        .and_then(|s| BudgetAccount::from_stored(&s.value).map(|a| (s.revision, a)))
    {
        Some(found) => Ok(found),
        None => Err(EngineError::Corrupt {
            key,
            detail: "no readable budget account".to_owned(),
        }),
    }
}
