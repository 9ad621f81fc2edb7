//! The part of a Mission's WorkItem graph a Grant check walks (§9.1 subtree scope): from the
//! WorkItem in question up its parent links to the Grant's target, read from the store, every
//! read checked at commit (a concurrent closure of the target or a new link invalidates the
//! decision).

use std::collections::BTreeMap;

use super::links::{link_key, read_parent};
use crate::decision::Decision;
use crate::error::EngineError;
use crate::store::{AggregateKey, Store};
use crate::work::read::read_item;
use crate::work::{document::AGGREGATE_KIND, state::WorkItemState};
use missionweaveprotocol_kernel::delegation::{WorkItemNode, WorkItemTree};

/// Beyond this many parents the walk stops: the pure check then reports the WorkItem outside
/// the subtree (links cannot form a cycle, `links.rs`; this bounds a corrupt store).
const MAX_WALK: usize = 10_000;

struct Node {
    mission_id: String,
    parent: Option<String>,
    closed: bool,
}

/// The WorkItems read, by ID.
pub(crate) struct Tree(BTreeMap<String, Node>);

impl WorkItemTree for Tree {
    fn node(&self, work_item_id: &str) -> Option<WorkItemNode<'_>> {
        self.0.get(work_item_id).map(|n| WorkItemNode {
            mission_id: &n.mission_id,
            parent_work_item_id: n.parent.as_deref(),
            closed: n.closed,
        })
    }
}

/// Adds a commit-time check of `key` unless the decision already writes or checks it.
pub(crate) fn check_once(decision: Decision, key: AggregateKey, revision: u64) -> Decision {
    if decision.writes.iter().any(|w| w.key == key) {
        decision
    } else {
        decision.check(key, revision)
    }
}

impl Tree {
    /// Reads `target` and the chain from each of `starts` up to `target` (or the root).
    pub(crate) fn walk(
        store: &dyn Store,
        mut decision: Decision,
        target: &str,
        starts: &[&str],
    ) -> Result<(Tree, Decision), EngineError> {
        let mut nodes = BTreeMap::new();
        for start in std::iter::once(&target).chain(starts) {
            let mut cursor = Some((*start).to_owned());
            let mut steps = 0;
            while let Some(id) = cursor.take() {
                if nodes.contains_key(&id) || steps >= MAX_WALK {
                    break;
                }
                steps += 1;
                let key = AggregateKey::new(AGGREGATE_KIND, &id);
                let Some((revision, item)) = read_item(store, &key)? else {
                    decision = check_once(decision, key, 0);
                    break;
                };
                decision = check_once(decision, key, revision);
                let (link_revision, parent) = read_parent(store, &id)?;
                decision = check_once(decision, link_key(&id), link_revision);
                let closed = matches!(
                    item.state,
                    WorkItemState::Failed | WorkItemState::Cancelled | WorkItemState::Verified
                );
                if id != target {
                    cursor.clone_from(&parent);
                }
                nodes.insert(
                    id,
                    Node {
                        mission_id: item.mission_id,
                        parent,
                        closed,
                    },
                );
            }
        }
        Ok((Tree(nodes), decision))
    }
}
