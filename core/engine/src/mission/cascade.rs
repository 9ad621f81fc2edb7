//! What a child Mission's end does to the rest of the Mission tree, in the same transaction as
//! the Command that ended it (one Decision → one atomic commit across every Group it touches;
//! `engine/core.rs` places each Event at its own Group's next sequence, and every backend commits
//! a transaction all or nothing, `store/transaction.rs`).
//!
//! - **Down** (§7.1 "parent-cancellation propagation"; digest 2.16): when a Mission is cancelled
//!   or fails, every non-terminal descendant Mission becomes `cancelled`, deepest first, each
//!   with its unfinished WorkItems (§10.2 row 18): one `mission.cancelled` (with `cause`) in the
//!   descendant's Group, then its `work.cancelled` Events.
//! - **Up, approval** (§10.2 row 16, §14 "The approved child result becomes Evidence and
//!   Artifacts for the parent WorkItem"): the parent WorkItem `blocked` → `verified`, its
//!   submission the approved Artifact set and the Approval as Evidence;
//!   `work.result.accepted` (with `cause`) in the parent Group.
//! - **Up, failure** (§10.2 row 17, §14 "A failed child Mission does not automatically fail its
//!   parent … blocks or fails the parent WorkItem … propagates automatically only when the parent
//!   completion policy declares that child indispensable"): per the link's [`FailurePolicy`]:
//!   `blocked` → `blocked` (`work.blocked` with the failure Evidence), → `failed`
//!   (`work.failed`), or → `failed` and the parent Mission `failed` (`mission.terminated`, §7.1
//!   "declared child-failure propagation"), which recursively closes the parent's WorkItems and
//!   other descendants and applies the parent's own link upward.
//! - **Up, cancellation** of a child by its MissionOwner: the parent WorkItem stays `blocked`
//!   (`work.blocked` naming the cancellation); the fence lifts, so the Parent Coordinator may
//!   re-offer, fail, cancel or promote it again (§14 "replan, revise scope, create a replacement
//!   child, or cancel").
//!
//! The structured failure Evidence ID is `<child Mission ID>#failure` (deterministic).

use std::collections::{BTreeMap, BTreeSet};

use missionweaveprotocol::json::{Object, Value};

use super::aggregate::{MISSION_KIND, Mission};
use super::link::{ChildLink, FailurePolicy, children, read_link, read_mission};
use super::rules::event_payload;
use crate::decision::Decision;
use crate::error::EngineError;
use crate::events::EventDraft;
use crate::ingress::VerifiedCommand;
use crate::input::num;
use crate::mission::state::MissionState;
use crate::store::{AggregateKey, Store};
use crate::work::plan::put_item;
use crate::work::transitions::closing::{MissionEnd, propagate_mission_end};
use crate::work::{
    evidence::{EvidenceRef, EvidenceResult},
    state::{Submission, WorkEvent, WorkItem, WorkItemState},
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The part of the Mission tree a closure or approval may change, read before deciding.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Family {
    /// Missions other than the Command's own, by ID.
    pub missions: BTreeMap<String, Mission>,
    /// WorkItems (with store revisions) of the Missions in `missions`, by Mission ID.
    pub items: BTreeMap<String, Vec<(u64, WorkItem)>>,
    /// Child Mission IDs by parent Mission ID (only for Missions whose subtree was read).
    pub children: BTreeMap<String, Vec<String>>,
    /// Links by child Mission ID.
    pub links: BTreeMap<String, ChildLink>,
}

fn load_mission(store: &dyn Store, f: &mut Family, id: &str) -> Result<(), EngineError> {
    if f.missions.contains_key(id) {
        return Ok(());
    }
    let mission = read_mission(store, id)?.ok_or_else(|| EngineError::Corrupt {
        key: AggregateKey::new(MISSION_KIND, id),
        detail: "a linked Mission is missing".into(),
    })?;
    f.items
        .insert(id.to_owned(), crate::work::read::mission_items(store, id)?);
    if let Some(link) = read_link(store, id)? {
        f.links.insert(id.to_owned(), link);
    }
    f.missions.insert(id.to_owned(), mission);
    Ok(())
}

fn load_subtree(store: &dyn Store, f: &mut Family, root: &str) -> Result<(), EngineError> {
    let mut stack = vec![root.to_owned()];
    while let Some(id) = stack.pop() {
        if f.children.contains_key(&id) {
            continue;
        }
        let kids = children(store, &id)?;
        for kid in &kids {
            load_mission(store, f, kid)?;
            stack.push(kid.clone());
        }
        f.children.insert(id, kids);
    }
    Ok(())
}

/// Reads the family of `mission` that `kind` may change: for `mission.cancel` /
/// `mission.terminate` its whole subtree, its parent (and, up a chain of
/// `fail_parent_mission` links, each failing ancestor with its subtree); for `mission.approve`
/// its parent.
pub(crate) fn read(
    store: &dyn Store,
    mission: &Mission,
    kind: &str,
) -> Result<Family, EngineError> {
    let mut f = Family::default();
    let id = mission.mission_id().to_owned();
    if let Some(link) = read_link(store, &id)? {
        f.links.insert(id.clone(), link);
    }
    if kind != "mission.approve" {
        load_subtree(store, &mut f, &id)?;
    }
    let mut current = id;
    while let Some(link) = f.links.get(&current).cloned() {
        load_mission(store, &mut f, &link.parent_mission_id)?;
        let parent_fails = kind == "mission.terminate"
            && link.failure_policy == FailurePolicy::FailParentMission
            && !f.missions[&link.parent_mission_id].state().is_terminal();
        if !parent_fails {
            break;
        }
        load_subtree(store, &mut f, &link.parent_mission_id)?;
        current = link.parent_mission_id;
    }
    Ok(f)
}

/// The planner: the decision being built and the Missions already closed by it.
struct Plan<'a> {
    family: &'a Family,
    command: &'a VerifiedCommand,
    now: UnixMillis,
    closed: BTreeSet<String>,
    decision: Decision,
}

/// After the Command's own Mission `mission` moved to `to` (cancelled or failed), closes its
/// descendants and applies its link upward.
pub(crate) fn after_close(
    family: &Family,
    command: &VerifiedCommand,
    decision: Decision,
    mission: &Mission,
    to: MissionState,
    reason: &str,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let mut plan = Plan {
        family,
        command,
        now,
        closed: BTreeSet::from([mission.mission_id().to_owned()]),
        decision,
    };
    plan.close_descendants(mission.mission_id(), reason)?;
    plan.notify_parent(mission.mission_id(), to, reason)?;
    Ok(plan.decision)
}

/// After child Mission `mission` was approved: row 16 on its parent WorkItem.
pub(crate) fn after_approve(
    family: &Family,
    command: &VerifiedCommand,
    decision: Decision,
    mission: &Mission,
    approval_id: &str,
    hashes: &[String],
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let mut plan = Plan {
        family,
        command,
        now,
        closed: BTreeSet::new(),
        decision,
    };
    let Some((link, read_revision, item)) = plan.blocked_parent_item(mission.mission_id()) else {
        return Ok(plan.decision);
    };
    let evidence = EvidenceRef {
        evidence_id: approval_id.to_owned(),
        work_item_id: item.work_item_id.clone(),
        evidence_type: "reviewer_assessment".to_owned(),
        criterion_ids: item
            .contract
            .criteria()
            .iter()
            .map(|c| c.criterion_id.clone())
            .collect(),
        result: EvidenceResult::Passed,
    };
    let mut next = item.clone();
    next.submission = Some(Submission {
        artifact_hashes: hashes.to_vec(),
        evidence: vec![evidence.clone()],
        submitted_at: now,
    });
    next.review_evidence = vec![evidence];
    next.blocker = None;
    next.state = WorkItemState::Verified;
    touch(&mut next, now);
    let payload = item_payload(
        &next,
        [
            ("previousState", Value::string(item.state.as_str())),
            ("cause", Value::string("mission.approved")),
            ("childMissionId", Value::string(&link.child_mission_id)),
            ("approvalId", Value::string(approval_id)),
            (
                "artifactHashes",
                Value::Array(hashes.iter().map(Value::string).collect()),
            ),
            (
                "evidenceIds",
                Value::Array(vec![Value::string(approval_id)]),
            ),
        ],
    );
    plan.put(&next, read_revision, "work.result.accepted", payload)?;
    Ok(plan.decision)
}

fn touch(item: &mut WorkItem, now: UnixMillis) {
    item.revision += 1;
    item.updated_at = now;
}

fn item_payload<const N: usize>(item: &WorkItem, members: [(&str, Value); N]) -> Value {
    let mut o = Object::new();
    o.insert("workItemId", Value::string(&item.work_item_id));
    o.insert("revision", num(item.revision));
    o.insert("state", Value::string(item.state.as_str()));
    for (name, value) in members {
        o.insert(name, value);
    }
    Value::Object(o)
}

impl Plan<'_> {
    /// The parent WorkItem of child `child`, if it is `blocked` in a non-terminal Mission the
    /// plan has not closed (otherwise that Mission's own closure decides it).
    fn blocked_parent_item(&self, child: &str) -> Option<(ChildLink, u64, WorkItem)> {
        let link = self.family.links.get(child)?;
        let parent = self.family.missions.get(&link.parent_mission_id)?;
        if parent.state().is_terminal() || self.closed.contains(parent.mission_id()) {
            return None;
        }
        let (revision, item) = self
            .family
            .items
            .get(&link.parent_mission_id)?
            .iter()
            .find(|(_, w)| w.work_item_id == link.parent_work_item_id)?;
        (item.state == WorkItemState::Blocked).then(|| (link.clone(), *revision, item.clone()))
    }

    fn put(
        &mut self,
        item: &WorkItem,
        read_revision: u64,
        kind: &'static str,
        payload: Value,
    ) -> Result<(), EngineError> {
        let decision = std::mem::take(&mut self.decision);
        self.decision = put_item(
            decision,
            self.command,
            item,
            read_revision,
            vec![WorkEvent { kind, payload }],
        )?;
        Ok(())
    }

    /// Every non-terminal descendant of `root` → `cancelled`, deepest first.
    fn close_descendants(&mut self, root: &str, reason: &str) -> Result<(), EngineError> {
        let mut found: Vec<(usize, String)> = Vec::new();
        let mut level = vec![root.to_owned()];
        let mut depth = 0;
        while !level.is_empty() {
            depth += 1;
            let mut next = Vec::new();
            for id in &level {
                for kid in self.family.children.get(id).into_iter().flatten() {
                    found.push((depth, kid.clone()));
                    next.push(kid.clone());
                }
            }
            level = next;
        }
        // Deepest first; siblings in ID order (deterministic across engines).
        found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let family = self.family;
        for (_, id) in found {
            let Some(mission) = family.missions.get(&id) else {
                continue;
            };
            if mission.state().is_terminal() || self.closed.contains(&id) {
                continue;
            }
            self.close_mission(
                mission,
                MissionState::Cancelled,
                "mission.cancelled",
                reason,
                "parent_mission_closed",
                None,
            )?;
        }
        Ok(())
    }

    /// One Mission of the family → `to`, with its unfinished WorkItems (row 18) except `skip`.
    fn close_mission(
        &mut self,
        mission: &Mission,
        to: MissionState,
        kind: &str,
        reason: &str,
        cause: &str,
        skip: Option<&str>,
    ) -> Result<(), EngineError> {
        let mut next = mission.clone();
        let read_revision = next.revision();
        next.transition(to);
        let mut payload = event_payload(&next);
        payload.insert("previousState", Value::string(mission.state().as_str()));
        payload.insert("reason", Value::string(reason));
        payload.insert("cause", Value::string(cause));
        let draft = EventDraft::for_command(self.command, kind, payload);
        let mut draft = draft;
        draft.work_item_id = None;
        let decision = std::mem::take(&mut self.decision)
            .put(
                AggregateKey::new(MISSION_KIND, next.mission_id()),
                read_revision,
                next.to_blob()?,
            )
            .event(draft, next.group_id(), next.revision());
        self.decision = decision;
        self.closed.insert(next.mission_id().to_owned());
        let end = match to {
            MissionState::Failed => MissionEnd::Failed,
            _ => MissionEnd::Cancelled,
        };
        let items = self
            .family
            .items
            .get(mission.mission_id())
            .cloned()
            .unwrap_or_default();
        for (revision, item) in items {
            if Some(item.work_item_id.as_str()) == skip || !UNFINISHED.contains(&item.state) {
                continue;
            }
            let transition = propagate_mission_end(&item, end, reason, self.now)?;
            let decision = std::mem::take(&mut self.decision);
            self.decision = put_item(
                decision,
                self.command,
                &transition.state,
                revision,
                transition.events,
            )?;
        }
        Ok(())
    }

    /// The link of `child` (which ended in `end`) applied to its parent WorkItem.
    fn notify_parent(
        &mut self,
        child: &str,
        end: MissionState,
        reason: &str,
    ) -> Result<(), EngineError> {
        let Some((link, read_revision, item)) = self.blocked_parent_item(child) else {
            return Ok(());
        };
        let failed = end == MissionState::Failed;
        let evidence_id = format!("{}#failure", link.child_mission_id);
        let cause = if failed {
            "mission.terminated"
        } else {
            "mission.cancelled"
        };
        let policy = if failed {
            link.failure_policy
        } else {
            FailurePolicy::BlockParentWorkItem
        };
        let mut next = item.clone();
        touch(&mut next, self.now);
        let common = |next: &WorkItem| {
            item_payload(
                next,
                [
                    ("reason", Value::string(reason)),
                    ("previousState", Value::string(item.state.as_str())),
                    ("cause", Value::string(cause)),
                    ("childMissionId", Value::string(&link.child_mission_id)),
                    ("failurePolicy", Value::string(link.failure_policy.as_str())),
                    (
                        "evidenceIds",
                        Value::Array(if failed {
                            vec![Value::string(&evidence_id)]
                        } else {
                            Vec::new()
                        }),
                    ),
                ],
            )
        };
        if policy == FailurePolicy::BlockParentWorkItem {
            next.blocker = Some(format!(
                "child Mission {} ended: {reason}",
                link.child_mission_id
            ));
            let payload = common(&next);
            return self.put(&next, read_revision, "work.blocked", payload);
        }
        next.failure = Some((reason.to_owned(), vec![evidence_id.clone()]));
        next.blocker = None;
        next.state = WorkItemState::Failed;
        let payload = common(&next);
        self.put(&next, read_revision, "work.failed", payload)?;
        if policy == FailurePolicy::FailParentMission {
            let parent = self.family.missions[&link.parent_mission_id].clone();
            self.close_mission(
                &parent,
                MissionState::Failed,
                "mission.terminated",
                reason,
                "child_mission_failed",
                Some(&link.parent_work_item_id),
            )?;
            self.close_descendants(parent.mission_id(), reason)?;
            self.notify_parent(parent.mission_id(), MissionState::Failed, reason)?;
        }
        Ok(())
    }
}

/// The states row 18 leaves from (§10.2).
const UNFINISHED: [WorkItemState; 6] = [
    WorkItemState::Open,
    WorkItemState::Offered,
    WorkItemState::Queued,
    WorkItemState::Active,
    WorkItemState::Blocked,
    WorkItemState::Submitted,
];
