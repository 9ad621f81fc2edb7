//! The parent ↔ child links of §14 ("The parent WorkItem and child Mission MUST link to each
//! other"), stored beside the Mission and WorkItem aggregates (no store schema change):
//!
//! | kind | ID | value |
//! | --- | --- | --- |
//! | [`LINK_KIND`] | child Mission ID | [`ChildLink`]: parent Mission, Group and WorkItem, depth, failure policy, scope (written once) |
//! | [`CHILDREN_KIND`] | `"<parent Mission ID> <child Mission ID>"` | `{}`: lists a Mission's children by prefix (the cascade, §7.1) |
//! | [`ITEM_CHILD_KIND`] | parent WorkItem ID | `{"childMissionId"}`: the WorkItem's latest child (the ownership fence, §10.2 row 15) |
//!
//! The child Mission's own document carries `parent {missionId, workItemId, depth}`
//! (`mission.schema.json`), so the link is readable from both ends.

use missionweaveprotocol::json::{self, Object, Value};

use super::aggregate::{MISSION_KIND, Mission};
use crate::error::EngineError;
use crate::store::{AggregateKey, Blob, Store};

/// Store kind of the link of a child Mission (ID = child Mission ID).
pub const LINK_KIND: &str = "child_mission";
/// Store kind of the per-parent index of child Missions.
pub const CHILDREN_KIND: &str = "mission_child";
/// Store kind of a WorkItem's latest child Mission.
pub const ITEM_CHILD_KIND: &str = "work_item_child";

/// The declared child-failure policy (§14 "blocks or fails the parent WorkItem … propagates
/// automatically only when the parent completion policy declares that child indispensable";
/// the reference's `ChildFailurePolicy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailurePolicy {
    /// The parent WorkItem stays `blocked`; the Parent Coordinator replans (the default).
    BlockParentWorkItem,
    /// The parent WorkItem becomes `failed`.
    FailParentWorkItem,
    /// The child is indispensable: the parent WorkItem and the parent Mission fail.
    FailParentMission,
}

missionweaveprotocol::spelling!(FailurePolicy {
    BlockParentWorkItem => "block_parent_work_item",
    FailParentWorkItem => "fail_parent_work_item",
    FailParentMission => "fail_parent_mission",
});

/// The link of one child Mission to its parent.
#[derive(Debug, Clone, PartialEq)]
pub struct ChildLink {
    pub child_mission_id: String,
    pub child_group_id: String,
    pub parent_mission_id: String,
    pub parent_group_id: String,
    pub parent_work_item_id: String,
    pub depth: u64,
    pub failure_policy: FailurePolicy,
}

impl ChildLink {
    pub fn key(&self) -> AggregateKey {
        AggregateKey::new(LINK_KIND, &self.child_mission_id)
    }

    pub fn to_value(&self) -> Value {
        let mut o = Object::new();
        o.insert("childMissionId", Value::string(&self.child_mission_id));
        o.insert("childGroupId", Value::string(&self.child_group_id));
        o.insert("parentMissionId", Value::string(&self.parent_mission_id));
        o.insert("parentGroupId", Value::string(&self.parent_group_id));
        o.insert("parentWorkItemId", Value::string(&self.parent_work_item_id));
        o.insert("depth", crate::input::num(self.depth));
        o.insert("failurePolicy", Value::string(self.failure_policy.as_str()));
        Value::Object(o)
    }

    pub fn to_blob(&self) -> Result<Blob, EngineError> {
        blob(&self.key(), &self.to_value())
    }

    fn from_value(key: &AggregateKey, v: &Value) -> Result<Self, EngineError> {
        let corrupt = |detail: &str| EngineError::Corrupt {
            key: key.clone(),
            detail: detail.to_owned(),
        };
        let text = |name: &str| {
            v.get(name)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| corrupt(name))
        };
        Ok(Self {
            child_mission_id: text("childMissionId")?,
            child_group_id: text("childGroupId")?,
            parent_mission_id: text("parentMissionId")?,
            parent_group_id: text("parentGroupId")?,
            parent_work_item_id: text("parentWorkItemId")?,
            depth: v
                .get("depth")
                .and_then(Value::as_number)
                .and_then(|n| n.as_u64())
                .ok_or_else(|| corrupt("depth"))?,
            failure_policy: FailurePolicy::parse(&text("failurePolicy")?)
                .ok_or_else(|| corrupt("failurePolicy"))?,
        })
    }
}

pub(crate) fn blob(key: &AggregateKey, value: &Value) -> Result<Blob, EngineError> {
    json::canonical_bytes(value)
        .map(Blob::from)
        .map_err(|e| EngineError::Corrupt {
            key: key.clone(),
            detail: e.to_string(),
        })
}

/// The link of child Mission `mission_id`, if it is a child.
pub(crate) fn read_link(
    store: &dyn Store,
    mission_id: &str,
) -> Result<Option<ChildLink>, EngineError> {
    let key = AggregateKey::new(LINK_KIND, mission_id);
    match store.aggregate(&key)? {
        None => Ok(None),
        Some(stored) => {
            let value = json::parse_state(&stored.value).map_err(|e| EngineError::Corrupt {
                key: key.clone(),
                detail: e.to_string(),
            })?;
            ChildLink::from_value(&key, &value).map(Some)
        }
    }
}

/// The child Missions of `mission_id`, in ID order.
pub(crate) fn children(store: &dyn Store, mission_id: &str) -> Result<Vec<String>, EngineError> {
    let prefix = format!("{mission_id} ");
    Ok(store
        .list(CHILDREN_KIND, &prefix)?
        .into_iter()
        .map(|(row, _)| row[prefix.len()..].to_owned())
        .collect())
}

/// The key of the index row of child `child` under `parent`.
pub(crate) fn children_key(parent: &str, child: &str) -> AggregateKey {
    AggregateKey::new(CHILDREN_KIND, format!("{parent} {child}"))
}

/// The key of WorkItem `work_item_id`'s latest-child row.
pub(crate) fn item_child_key(work_item_id: &str) -> AggregateKey {
    AggregateKey::new(ITEM_CHILD_KIND, work_item_id)
}

/// The value of a latest-child row.
pub(crate) fn item_child_value(child_mission_id: &str) -> Value {
    let mut o = Object::new();
    o.insert("childMissionId", Value::string(child_mission_id));
    Value::Object(o)
}

/// A stored Mission by ID.
pub(crate) fn read_mission(store: &dyn Store, id: &str) -> Result<Option<Mission>, EngineError> {
    let key = AggregateKey::new(MISSION_KIND, id);
    match store.aggregate(&key)? {
        None => Ok(None),
        Some(stored) => Mission::from_stored(&key, &stored).map(Some),
    }
}

/// The child Mission WorkItem `work_item_id` was last promoted to, with the row's revision.
pub(crate) fn item_child(
    store: &dyn Store,
    work_item_id: &str,
) -> Result<Option<(u64, Mission)>, EngineError> {
    let key = item_child_key(work_item_id);
    let Some(stored) = store.aggregate(&key)? else {
        return Ok(None);
    };
    let value = json::parse_state(&stored.value).map_err(|e| EngineError::Corrupt {
        key: key.clone(),
        detail: e.to_string(),
    })?;
    let child = value
        .get("childMissionId")
        .and_then(Value::as_str)
        .ok_or_else(|| EngineError::Corrupt {
            key: key.clone(),
            detail: "childMissionId".into(),
        })?;
    match read_mission(store, child)? {
        Some(mission) => Ok(Some((stored.revision, mission))),
        None => Err(EngineError::Corrupt {
            key,
            detail: format!("names missing Mission {child}"),
        }),
    }
}

/// §10.2 row 15 "Ownership is fenced while the linked child Mission runs": a WorkItem Command
/// on a WorkItem whose child Mission is not terminal is refused: a former owner citing its old
/// Ownership Epoch gets `WORK_STALE_OWNERSHIP` (§4.5), anyone else `INVALID_STATE_TRANSITION`;
/// the item changes only through the child (rows 16, 17) or a closure of its Mission (row 18).
/// Otherwise the decision checks the latest-child row at commit, so a child created meanwhile
/// makes the Command decide again.
pub(crate) fn fence_parent_item(
    store: &dyn Store,
    decision: crate::decision::Decision,
    item: &crate::work::state::WorkItem,
    claimed_epoch: Option<u64>,
    command: &str,
) -> Result<crate::decision::Decision, EngineError> {
    let id = &item.work_item_id;
    match item_child(store, id)? {
        Some((_, child)) if !child.state().is_terminal() => {
            let current = item.owner.as_ref().map_or(0, |o| o.ownership_epoch);
            if let Some(claimed) = claimed_epoch
                && claimed != current
            {
                return Err(
                    crate::work::error::WorkError::StaleOwnership { claimed, current }.into(),
                );
            }
            Err(EngineError::InvalidStateTransition {
                aggregate: crate::work::document::AGGREGATE_KIND,
                id: id.clone(),
                state: item.state.as_str().to_owned(),
                command: command.to_owned(),
            })
        }
        Some((revision, _)) => Ok(decision.check(item_child_key(id), revision)),
        None => Ok(decision.check(item_child_key(id), 0)),
    }
}
