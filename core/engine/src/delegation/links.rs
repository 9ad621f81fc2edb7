//! `parentWorkItemId` links (§9.1 "MAY authorize a new descendant only when `parentWorkItemId`
//! explicitly links it into that subtree"). `work-item.schema.json` has no parent member
//! (digest §8 item 2), so each link is its own aggregate: kind [`LINK_KIND`], ID = the child
//! WorkItem ID, value `{"parentWorkItemId", "delegationGrantId"?, "depth"?}` (depth below the
//! Grant's target, for a WorkItem authorized under a Grant). A link is written once, with its
//! new WorkItem, so links never form a cycle (§20 "MUST reject cyclic delegation").

use missionweaveprotocol::json::{self, Number, Object, Value};

use crate::decision::Decision;
use crate::error::EngineError;
use crate::store::{AggregateKey, Blob, Store};

/// Store kind of a WorkItem's parent link.
pub const LINK_KIND: &str = "work_item_parent";

/// The store key of `work_item_id`'s link.
pub(crate) fn link_key(work_item_id: &str) -> AggregateKey {
    AggregateKey::new(LINK_KIND, work_item_id)
}

/// `work_item_id`'s parent and the link's revision (0 and `None`: no link).
pub(crate) fn read_parent(
    store: &dyn Store,
    work_item_id: &str,
) -> Result<(u64, Option<String>), EngineError> {
    let key = link_key(work_item_id);
    let Some(stored) = store.aggregate(&key)? else {
        return Ok((0, None));
    };
    let parent = json::parse_state(&stored.value)
        .ok()
        .and_then(|v| v.get("parentWorkItemId")?.as_str().map(str::to_owned))
        .ok_or_else(|| EngineError::Corrupt {
            key,
            detail: "unreadable parent link".to_owned(),
        })?;
    Ok((stored.revision, Some(parent)))
}

/// Adds the new link of `child` under `parent` to `decision`.
pub(crate) fn put_link(
    decision: Decision,
    child: &str,
    parent: &str,
    grant: Option<(&str, u32)>,
) -> Result<Decision, EngineError> {
    let mut value = Object::new();
    value.insert("parentWorkItemId", Value::string(parent));
    if let Some((grant_id, depth)) = grant {
        value.insert("delegationGrantId", Value::string(grant_id));
        value.insert("depth", Value::Number(Number::from_u64(u64::from(depth))));
    }
    let bytes = json::canonical_bytes(&Value::Object(value))
        .map_err(|e| EngineError::invalid("not_canonical", e.to_string()))?;
    Ok(decision.put(link_key(child), 0, Blob::from(bytes)))
}

/// The delegation depth of the link `decision` writes, if it writes one under a Grant: what
/// the §20 Organization delegation-depth limit checks (`engine/controls.rs`).
pub(crate) fn link_depth(decision: &Decision) -> Option<u32> {
    decision
        .writes
        .iter()
        .filter(|w| w.key.kind == LINK_KIND)
        .filter_map(|w| w.value.as_ref())
        .filter_map(|bytes| json::parse_state(bytes).ok())
        .find_map(|v| v.get("depth")?.as_number()?.as_u64())
        .map(|d| u32::try_from(d).unwrap_or(u32::MAX))
}
