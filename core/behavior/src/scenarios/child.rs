//! Parent and child Missions (§14): `mission.create_child` (§7.1 row 3, §10.2 row 15), the
//! child's approval (row 16) and failure (row 17) acting on the parent WorkItem, and the
//! propagations of §7.1 rows 7 and 8 across the tree.
//!
//! The child lives in its own Group. It reuses [`FOLLOW_UP_GROUP`] (any new Group ID would do)
//! because that Group is in `world::GROUPS`: a refusal must leave every head there unchanged,
//! the child Group's included. The child's MissionOwner is the Parent Coordinator
//! ([`COORDINATOR`]); its Coordinator is [`WORKER`] (an Agent with a Session; §7.2 the
//! Coordinator must not be its own reviewer).

use missionweaveprotocol::WireCode;

use missionweaveprotocol_engine::budget::account::{BudgetAccount, account_key};
use missionweaveprotocol_engine::store::Store;
use missionweaveprotocol_kernel::budget::AccountKind;
use missionweaveprotocol_kernel::resources::Dimension;

use crate::payloads::{self, HASH_A, HASH_B, W1};
use crate::scenario::{Build, Scenario, Step, Watch};
use crate::steps::{self, Lease, by, coordinator};
use crate::world::{COORDINATOR, FOLLOW_UP_GROUP, MISSION, OWNER, WORKER, World};

/// The child Mission of [`W1`].
pub const CHILD: &str = "urn:missionweaveprotocol:mission:close-books-ledger";
const CHILD_GROUP: &str = FOLLOW_UP_GROUP;

/// The `mission.create_child` payload with `extra` members (budget 5 of W1's 10 tool calls,
/// deadline before the Mission's, the Mission's high-risk execution approval kept).
fn create_payload(extra: &str) -> String {
    format!(
        r#"{{"parentWorkItemId": "{W1}", "missionId": "{CHILD}", "groupId": "{CHILD_GROUP}",
        "objective": "Reconcile the ledger in depth",
        "definitionOfDone": [{{"criterionId": "ledger-reconciled", "description": "Reconciled",
          "evidenceRequired": ["reviewer_assessment"]}}],
        "budget": {{"toolCallLimit": 5}}, "deadline": "2026-07-31T00:00:00Z",
        "approvalPolicy": {{"finalHumanApproval": false, "highRiskExecutionApproval": true}},
        "coordinator": {{"agentId": "{WORKER}", "agentCardVersion": 1,
          "leaseId": "urn:missionweaveprotocol:lease:child-coordinator-1"}},
        "mainConversationId": "urn:missionweaveprotocol:conversation:ledger-child"{extra}}}"#
    )
}

fn create_child_at(epoch: u64, extra: &str) -> Build {
    with_payload(epoch, create_payload(extra))
}

fn with_payload(epoch: u64, payload: String) -> Build {
    Box::new(move |w: &World| {
        w.command(
            "mission.create_child",
            COORDINATOR,
            &format!(r#""coordinatorEpoch": {epoch}"#),
            &payload,
        )
    })
}

fn create_child(extra: &str) -> Build {
    create_child_at(1, extra)
}

fn policy(name: &str) -> String {
    format!(r#", "failurePolicy": "{name}""#)
}

/// `kind` by `actor` in the child's Group.
fn in_child(
    actor: &'static str,
    kind: &'static str,
    extra: &'static str,
    payload: String,
) -> Build {
    Box::new(move |w: &World| w.command_in(CHILD_GROUP, kind, actor, extra, &payload))
}

/// [`W1`] open and promoted to [`CHILD`] with failure policy `name`.
fn with_child(name: &str) -> Vec<Step> {
    let mut s = steps::authorized(W1);
    s.push(Step::Perform(create_child(&policy(name))));
    s
}

/// … and the child submitted for approval by its Coordinator (Artifact A; revision 2).
fn child_awaiting() -> Vec<Step> {
    let mut s = with_child("block_parent_work_item");
    s.push(Step::Perform(in_child(
        WORKER,
        "mission.submit_for_approval",
        r#""coordinatorEpoch": 1"#,
        format!(r#"{{"artifactHashes": ["{HASH_A}"]}}"#),
    )));
    s
}

fn approve_child(hash: &str) -> Build {
    in_child(
        COORDINATOR,
        "mission.approve",
        "",
        format!(
            r#"{{"approvalId": "urn:missionweaveprotocol:approval:child-1", "missionRevision": 2,
            "artifactHashes": ["{hash}"]}}"#
        ),
    )
}

fn terminate_child(actor: &'static str) -> Build {
    in_child(
        actor,
        "mission.terminate",
        r#""coordinatorEpoch": 1"#,
        r#"{"reason": "the ledger source is unavailable"}"#.to_owned(),
    )
}

fn w1_owner(w: &World, agent: &str, epoch: u64) -> Result<(), String> {
    let item = steps::work_item(w, W1)?.ok_or("no W1")?;
    match item.owner {
        Some(o) if o.agent_id == agent && o.ownership_epoch == epoch => Ok(()),
        other => Err(format!("W1 owner {other:?}")),
    }
}

/// The child's WorkItem (worked by [`COORDINATOR`], budget 2 tool calls of the child's 5).
const CW1: &str = "urn:missionweaveprotocol:work:ledger-fx";

/// A Worker Command of [`COORDINATOR`] on [`CW1`] in the child's Group, citing its claim.
fn child_worker(kind: &'static str, lease: Lease, members: String) -> Build {
    Box::new(move |w: &World| {
        let (epoch, lease_id) = steps::claim(w, CW1, lease)?;
        w.command_in(
            CHILD_GROUP,
            kind,
            COORDINATOR,
            "",
            &format!(
                r#"{{"workItemId":"{CW1}","ownershipEpoch":{epoch},"leaseId":"{lease_id}",{members}}}"#
            )
            .replace(",}", "}"),
        )
    })
}

/// [`W1`] active with 9 of its 10 tool calls used, promoted to [`CHILD`] (5 tool calls reserved
/// against W1), whose WorkItem [`CW1`] is active.
fn child_item_active_under_a_spent_parent() -> Vec<Step> {
    let mut s = steps::active(W1);
    s.extend(steps::usage_recorded(W1, 9));
    s.push(Step::Perform(create_child("")));
    s.push(Step::Perform(in_child(
        WORKER,
        "work.authorize",
        r#""coordinatorEpoch": 1"#,
        payloads::authorize(CW1, &[]).replace(r#""toolCallLimit":10"#, r#""toolCallLimit":2"#),
    )));
    s.push(Step::Perform(in_child(
        WORKER,
        "work.offer",
        r#""coordinatorEpoch": 1"#,
        payloads::offer(CW1, "c1").replace(WORKER, COORDINATOR),
    )));
    s.push(Step::Perform(in_child(
        COORDINATOR,
        "work.accept_offer",
        "",
        payloads::accept_offer(CW1),
    )));
    s.push(Step::Perform(child_worker(
        "work.start",
        Lease::Ownership,
        String::new(),
    )));
    s
}

fn usage(w: &World, account: AccountKind, id: &str) -> Result<u64, String> {
    let stored = w
        .engine()
        .store()
        .aggregate(&account_key(account, id))
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("no budget account for {id}"))?;
    BudgetAccount::from_stored(&stored.value)
        .map(|a| a.usage.get(Dimension::ToolCalls))
        .ok_or_else(|| format!("the budget account of {id} is malformed"))
}

pub fn scenarios() -> Vec<Scenario> {
    let child = Watch::Mission(CHILD);
    let w1 = Watch::WorkItem(W1);
    vec![
        // §7.1 row 3 and the Command / Event rows.
        Scenario::new("mission.create_child: none → active, a child of W1 in its own Group")
            .given(steps::authorized(W1))
            .when(create_child(""))
            .watch(child)
            .emits(&["mission.child.created", "mission.created"])
            .moves("none", "active")
            .check(
                "the child links to W1 at depth 1, owned by the Parent Coordinator",
                |w| {
                    let m = w
                        .engine()
                        .mission(CHILD)
                        .map_err(|e| e.to_string())?
                        .ok_or("no child")?;
                    let doc = m.document();
                    let linked = doc.pointer("/parent/workItemId").and_then(|v| v.as_str())
                        == Some(W1)
                        && doc.pointer("/parent/missionId").and_then(|v| v.as_str())
                            == Some(MISSION);
                    if linked && m.owner().id == COORDINATOR && m.group_id() == CHILD_GROUP {
                        Ok(())
                    } else {
                        Err("the child is not linked as expected".into())
                    }
                },
            ),
        // §7.2: an older epoch (1, after the re-appointment raised it to 2) and a newer one.
        Scenario::new("mission.create_child: a stale Coordinator Epoch is fenced")
            .given(steps::authorized(W1))
            .given(steps::coordinator_epoch_2())
            .when(create_child_at(1, ""))
            .watch(child)
            .refused(WireCode::AuthStaleCoordinator)
            .moves("none", "none"),
        // §12: usage is charged to the WorkItem and every ancestor atomically; an overflow of an
        // ancestor (the parent WorkItem W1, 9 + 2 > 10), not of the charged item, refuses it all.
        Scenario::new(
            "resource_usage_record: a child WorkItem's usage overflowing its parent WorkItem",
        )
        .given(child_item_active_under_a_spent_parent())
        .when(child_worker(
            steps::RESOURCE_USAGE_RECORD,
            Lease::Execution,
            payloads::usage_delta(2),
        ))
        .watch(Watch::Usage(W1))
        .refused(WireCode::BudgetExceeded)
        .moves("9 tool calls used", "9 tool calls used")
        .check("nothing is charged on the child's chain", |w| {
            let child_item = usage(w, AccountKind::WorkItem, CW1)?;
            let child = usage(w, AccountKind::Mission, CHILD)?;
            let root = usage(w, AccountKind::Mission, MISSION)?;
            if (child_item, child, root) == (0, 0, 9) {
                Ok(())
            } else {
                Err(format!("usage {child_item}, {child}, {root}"))
            }
        }),
        Scenario::new("mission.create_child: a future Coordinator Epoch is fenced")
            .given(steps::authorized(W1))
            .when(create_child_at(2, ""))
            .watch(child)
            .refused(WireCode::AuthStaleCoordinator)
            .moves("none", "none"),
        // §10.2 row 15.
        Scenario::new("mission.create_child: W1 open → blocked, held through the child")
            .given(steps::authorized(W1))
            .when(create_child(""))
            .watch(w1)
            .emits(&["mission.child.created", "mission.created"])
            .moves("open", "blocked")
            .check(
                "W1 is owned by the child's Coordinator at Ownership Epoch 1",
                |w| w1_owner(w, WORKER, 1),
            ),
        Scenario::new("mission.create_child: a submitted WorkItem cannot be promoted")
            .given(steps::submitted(W1))
            .when(create_child(""))
            .watch(w1)
            .refused(WireCode::InvalidStateTransition)
            .moves("submitted", "submitted"),
        Scenario::new("mission.create_child: queued → blocked, the Worker's ownership fenced")
            .given(steps::queued(W1))
            .when(create_child(""))
            .watch(w1)
            .emits(&["mission.child.created", "mission.created"])
            .moves("queued", "blocked")
            .check("the Ownership Epoch moved from 1 to 2", |w| {
                w1_owner(w, WORKER, 2)
            }),
        Scenario::new("mission.create_child: a budget beyond the WorkItem's")
            .given(steps::authorized(W1))
            .when(with_payload(
                1,
                create_payload("").replace(r#""toolCallLimit": 5"#, r#""toolCallLimit": 11"#),
            ))
            .watch(w1)
            .refused(WireCode::BudgetExceeded)
            .moves("open", "open"),
        Scenario::new("mission.create_child: capabilities beyond the WorkItem's")
            .given(steps::authorized(W1))
            .when(create_child(
                r#", "requiredCapabilities": [{"id": "code.execute", "version": "1.0.0"}]"#,
            ))
            .watch(w1)
            .refused(WireCode::AuthForbidden)
            .moves("open", "open"),
        Scenario::new("mission.create_child: a second child while the first runs")
            .given(with_child("block_parent_work_item"))
            .when(with_payload(
                1,
                create_payload("")
                    .replace(CHILD, "urn:missionweaveprotocol:mission:second-child")
                    .replace(CHILD_GROUP, "urn:missionweaveprotocol:group:second-child"),
            ))
            .watch(w1)
            .refused(WireCode::InvalidStateTransition)
            .moves("blocked", "blocked"),
        // §10.2 row 16.
        Scenario::new("Child Mission approval verifies the parent WorkItem: blocked → verified")
            .given(child_awaiting())
            .when(approve_child(HASH_A))
            .watch(w1)
            .emits(&["mission.approved", "work.result.accepted"])
            .moves("blocked", "verified"),
        Scenario::new("Child Mission approval of another Artifact set leaves W1 blocked")
            .given(child_awaiting())
            .when(approve_child(HASH_B))
            .watch(w1)
            .refused(WireCode::InvalidCommand)
            .moves("blocked", "blocked"),
        // §10.2 row 17.
        Scenario::new(
            "Child Mission failure fails the parent WorkItem as declared: blocked → failed",
        )
        .given(with_child("fail_parent_work_item"))
        .when(terminate_child(WORKER))
        .watch(w1)
        .emits(&["mission.terminated", "work.failed"])
        .moves("blocked", "failed"),
        Scenario::new("Child Mission failure refused: the Parent Coordinator is not the child's")
            .given(with_child("fail_parent_work_item"))
            .when(terminate_child(COORDINATOR))
            .watch(w1)
            .refused(WireCode::AuthForbidden)
            .moves("blocked", "blocked"),
        Scenario::new(
            "Child Mission failure blocks the parent WorkItem by default: blocked → blocked",
        )
        .given(with_child("block_parent_work_item"))
        .when(terminate_child(WORKER))
        .watch(w1)
        .emits(&["mission.terminated", "work.blocked"])
        .moves("blocked", "blocked"),
        // §7.1 rows 7 and 8 across the tree.
        Scenario::new("Parent cancellation propagates to the child Mission: active → cancelled")
            .given(with_child("block_parent_work_item"))
            .when(by(
                OWNER,
                "mission.cancel",
                "",
                r#"{"reason": "the books close later"}"#,
            ))
            .watch(child)
            .emits(&["mission.cancelled", "work.cancelled", "mission.cancelled"])
            .moves("active", "cancelled"),
        Scenario::new(
            "Declared child-failure propagation fails the parent Mission: active → failed",
        )
        .given(with_child("fail_parent_mission"))
        .when(terminate_child(WORKER))
        .watch(Watch::Mission(MISSION))
        .emits(&["mission.terminated", "work.failed", "mission.terminated"])
        .moves("active", "failed"),
        // The fence lifts when the child has ended: the Parent Coordinator re-offers W1.
        Scenario::new("work.offer: blocked by a failed child Mission → offered")
            .given({
                let mut s = with_child("block_parent_work_item");
                s.push(Step::Perform(terminate_child(WORKER)));
                s
            })
            .when(coordinator("work.offer", crate::payloads::offer(W1, "r2")))
            .watch(w1)
            .emits(&["work.offer.created"])
            .moves("blocked", "offered"),
    ]
}
