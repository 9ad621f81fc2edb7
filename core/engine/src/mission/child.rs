//! Row `none --mission.create_child--> active` (§7.1, digest 2.1) and WorkItem row 15
//! `open|offered|queued|active|blocked --mission.create_child--> blocked` (§10.2, digest 2.16),
//! one Command, one transaction (§14).
//!
//! The Parent Coordinator (current Coordinator Epoch of the parent Mission, §7.2 "only the
//! current Coordinator epoch may … create child Missions") promotes a WorkItem of its Mission to
//! a child Mission with its own Group (§14 "its own Group, Coordinator, WorkItem graph,
//! Memberships, budget, deadline, and approval policy"); the Parent Coordinator is the child's
//! MissionOwner (§14 default; `mission.schema.json`: a Mission with `parent` has an Agent owner).
//!
//! Payload (docs/engine.md): `parentWorkItemId`, `missionId`, `groupId` (the child Group,
//! required here: the envelope's is the parent's), `objective`, `definitionOfDone`, `budget`,
//! `deadline`, `approvalPolicy`, `coordinator {agentId, agentCardVersion, leaseId}`,
//! `mainConversationId`; optional `failurePolicy` (default `block_parent_work_item`),
//! `allowedResources`, `requiredCapabilities`, `pinnedProfiles`, `coordinatorLeaseSeconds`.
//!
//! §14 "Child budgets, deadlines, capabilities, data access, and permissions MUST be subsets of
//! the parent": the deadline is at most the parent Mission's and the parent WorkItem's
//! (`INVALID_COMMAND` `deadline_exceeds_parent`); the budget is reserved against the parent
//! WorkItem's account (`BUDGET_EXCEEDED` `allocation_exceeded`); `allowedResources` and
//! `requiredCapabilities` are subsets of the parent Work Contract's, and the child may not drop
//! the parent's high-risk execution approval (`AUTH_FORBIDDEN` `exceeds_parent_permissions`).
//! §14 "a default maximum depth": [`DEFAULT_MAX_DEPTH`] (`RATE_LIMITED`, policy
//! `child_mission_depth`, §20 "recursion threshold"). The graph stays acyclic by construction:
//! the child is a new Mission, so it cannot be an ancestor of its parent.

use missionweaveprotocol::PrincipalType;
use missionweaveprotocol::json::{Object, Value};
use missionweaveprotocol::schema_formats::Timestamp;

use super::aggregate::{GROUP_KIND, MISSION_DEFINITION_KIND, MISSION_KIND, Mission};
use super::create::{NewMission, new_mission};
use super::link::{ChildLink, FailurePolicy, blob, children_key, item_child_key, item_child_value};
use super::read::MissionRead;
use super::rules::{event_payload, existing, require_coordinator};
use crate::budget::account::BudgetAccount;
use crate::decision::Decision;
use crate::error::EngineError;
use crate::events::EventDraft;
use crate::ingress::VerifiedCommand;
use crate::input::{member, opt_text, text, u64_member};
use crate::input::{num, rfc3339};
use crate::mission::state::MissionState;
use crate::store::{AggregateKey, Store};
use crate::work::fencing::close_leases;
use crate::work::plan::{draft, put_item};
use crate::work::{
    document::AGGREGATE_KIND,
    state::{OfferStatus, Owner, WorkEvent, WorkItem, WorkItemState},
};
use missionweaveprotocol_kernel::budget::AccountKind;
use missionweaveprotocol_kernel::lease::LeaseState;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The Organization's default maximum child depth (§14: "Organizations MUST configure a
/// default maximum depth"; a root Mission has depth 0, its children 1).
pub const DEFAULT_MAX_DEPTH: u32 = 4;

/// The WorkItem states row 15 leaves from.
const PROMOTABLE: [WorkItemState; 5] = [
    WorkItemState::Open,
    WorkItemState::Offered,
    WorkItemState::Queued,
    WorkItemState::Active,
    WorkItemState::Blocked,
];

/// What `mission.create_child` reads besides the parent Group and Mission.
#[derive(Debug, Clone, PartialEq)]
pub struct ChildRead {
    /// The parent WorkItem with its store revision.
    pub item: Option<(u64, WorkItem)>,
    /// Its budget account with its revision.
    pub account: Option<(u64, BudgetAccount)>,
    /// Its latest child Mission (row revision, Mission), if it was promoted before.
    pub latest_child: Option<(u64, Mission)>,
    /// A Mission already stored under the child's `missionId`.
    pub same_id: Option<Mission>,
    /// Whether a Group already exists under the child's `groupId`.
    pub group_exists: bool,
}

/// Reads what `command` (`mission.create_child`) needs.
pub(crate) fn read(store: &dyn Store, command: &VerifiedCommand) -> Result<ChildRead, EngineError> {
    let p = command.payload();
    let item = match opt_text(p, "parentWorkItemId")? {
        Some(id) => crate::work::read::read_item(store, &AggregateKey::new(AGGREGATE_KIND, id))?,
        None => None,
    };
    let account = match &item {
        Some((_, w)) => {
            let key = crate::budget::account::account_key(AccountKind::WorkItem, &w.work_item_id);
            store
                .aggregate(&key)?
                .and_then(|s| BudgetAccount::from_stored(&s.value).map(|a| (s.revision, a)))
        }
        None => None,
    };
    let latest_child = match &item {
        Some((_, w)) => super::link::item_child(store, &w.work_item_id)?,
        None => None,
    };
    let same_id = match opt_text(p, "missionId")? {
        Some(id) => super::link::read_mission(store, id)?,
        None => None,
    };
    let group_exists = match opt_text(p, "groupId")? {
        Some(id) => store
            .aggregate(&AggregateKey::new(GROUP_KIND, id))?
            .is_some(),
        None => false,
    };
    Ok(ChildRead {
        item,
        account,
        latest_child,
        same_id,
        group_exists,
    })
}

fn instant(value: &Value, name: &str) -> Result<i64, EngineError> {
    let raw = value.as_str().ok_or_else(|| {
        EngineError::invalid("invalid_member", format!("{name} must be a timestamp"))
    })?;
    Timestamp::parse(raw)
        .map(|t| t.instant().unix_millis())
        .map_err(|_| EngineError::invalid("invalid_member", format!("{name} must be a timestamp")))
}

fn exceeds(detail: String) -> EngineError {
    EngineError::forbidden("exceeds_parent_permissions", detail)
}

/// `list` (a payload array, absent = empty) ⊆ `parent` (the parent contract's array).
fn subset(p: &Value, name: &str, parent: Option<&Value>) -> Result<Option<Value>, EngineError> {
    let Some(list) = p.get(name) else {
        return Ok(None);
    };
    let items = list.as_array().ok_or_else(|| {
        EngineError::invalid("invalid_member", format!("{name} must be an array"))
    })?;
    let allowed = parent.and_then(Value::as_array).unwrap_or(&[]);
    if let Some(extra) = items.iter().find(|i| !allowed.contains(i)) {
        return Err(exceeds(format!(
            "{name} entry {} is not granted to the parent WorkItem",
            String::from_utf8_lossy(
                &missionweaveprotocol::json::canonical_bytes(extra).unwrap_or_default()
            )
        )));
    }
    Ok(Some(list.clone()))
}

/// `mission.create_child` → `mission.child.created` (parent Group) and `mission.created`
/// (child Group).
pub(crate) fn decide(
    read: &MissionRead,
    command: &VerifiedCommand,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let (group_revision, parent) = existing(read)?;
    let child_read = read
        .child
        .as_deref()
        .ok_or_else(|| EngineError::invalid("unsupported_kind", "no child read"))?;
    require_coordinator(command, &parent, now)?;
    super::rules::require_state(command, &parent, |s| s == MissionState::Active)?;
    let p = command.payload();
    let item_id = text(p, "parentWorkItemId")?;
    let Some((item_revision, item)) = child_read.item.clone() else {
        return Err(EngineError::invalid(
            "unknown_work_item",
            format!("WorkItem {item_id} does not exist"),
        ));
    };
    if item.mission_id != parent.mission_id() {
        return Err(EngineError::invalid(
            "group_mismatch",
            format!("WorkItem {item_id} belongs to another Mission"),
        ));
    }
    // §15.3: the row's aggregate is the parent WorkItem.
    if let Some(expected) = command.expected_revision()
        && expected != item_revision
    {
        return Err(EngineError::RevisionConflict {
            key: AggregateKey::new(AGGREGATE_KIND, item_id),
            expected,
            current: item_revision,
        });
    }
    let running = matches!(&child_read.latest_child, Some((_, c)) if !c.state().is_terminal());
    if !PROMOTABLE.contains(&item.state) || running {
        return Err(EngineError::InvalidStateTransition {
            aggregate: AGGREGATE_KIND,
            id: item_id.to_owned(),
            state: item.state.as_str().to_owned(),
            command: command.kind().to_owned(),
        });
    }
    let mission_id = text(p, "missionId")?;
    let group_id = text(p, "groupId")?;
    if group_id == read.group_id {
        return Err(EngineError::invalid(
            "group_mismatch",
            "a child Mission has its own Group (§14): groupId must name a new Group",
        ));
    }
    if let Some(existing) = &child_read.same_id {
        return Err(EngineError::InvalidStateTransition {
            aggregate: MISSION_KIND,
            id: existing.mission_id().to_owned(),
            state: existing.state().as_str().to_owned(),
            command: command.kind().to_owned(),
        });
    }
    if child_read.group_exists {
        return Err(EngineError::InvalidStateTransition {
            aggregate: GROUP_KIND,
            id: group_id.to_owned(),
            state: "active".to_owned(),
            command: command.kind().to_owned(),
        });
    }
    let policy = match opt_text(p, "failurePolicy")? {
        None => FailurePolicy::BlockParentWorkItem,
        Some(name) => FailurePolicy::parse(name).ok_or_else(|| {
            EngineError::invalid(
                "invalid_member",
                "failurePolicy must be block_parent_work_item, fail_parent_work_item or fail_parent_mission",
            )
        })?,
    };
    // §14 depth guardrail.
    let parent_depth = parent
        .document()
        .pointer("/parent/depth")
        .and_then(Value::as_number)
        .and_then(|n| n.as_u64())
        .unwrap_or(0);
    let depth = parent_depth + 1;
    if depth > u64::from(DEFAULT_MAX_DEPTH) {
        return Err(EngineError::RateLimited {
            policy: "child_mission_depth",
            limit: DEFAULT_MAX_DEPTH,
            retry_after_ms: None,
        });
    }
    let c = member(p, "coordinator")?;
    let coordinator_id = text(c, "agentId")?;
    if coordinator_id == command.actor().id && command.actor().kind == PrincipalType::Agent {
        // §7.2: the Coordinator MUST NOT be the sole reviewer of its own output; the child's
        // MissionOwner (its reviewer) is the Parent Coordinator.
        return Err(EngineError::invalid(
            "child_coordinator_is_owner",
            "the child's Coordinator must not be its MissionOwner (the Parent Coordinator)",
        ));
    }
    // A malformed Coordinator reference is refused before the subset rules (`new_mission`
    // builds the document from it).
    u64_member(c, "agentCardVersion")?;
    text(c, "leaseId")?;

    // §14 subsets: deadline, permissions, capabilities, approval policy, budget.
    let deadline = member(p, "deadline")?;
    let child_deadline = instant(deadline, "deadline")?;
    let parent_deadlines = [
        parent.document().get("deadline").cloned(),
        item.contract.document().get("deadline").cloned(),
    ];
    for limit in parent_deadlines.iter().flatten() {
        if child_deadline > instant(limit, "deadline")? {
            return Err(EngineError::invalid(
                "deadline_exceeds_parent",
                "the child deadline must not be later than the parent Mission's or WorkItem's",
            ));
        }
    }
    let contract = item.contract.document();
    let resources = subset(p, "allowedResources", contract.get("allowedResources"))?;
    let capabilities = subset(
        p,
        "requiredCapabilities",
        contract.get("requiredCapabilities"),
    )?;
    let approval_policy = member(p, "approvalPolicy")?;
    let parent_high_risk = parent
        .document()
        .pointer("/approvalPolicy/highRiskExecutionApproval")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let child_high_risk = approval_policy
        .get("highRiskExecutionApproval")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if parent_high_risk && !child_high_risk {
        return Err(exceeds(
            "the child must keep the parent's high-risk execution approval".into(),
        ));
    }
    let budget = member(p, "budget")?;

    // The child Mission and its Group (as `mission.create`, with `parent`).
    let mut parent_ref = Object::new();
    parent_ref.insert("missionId", Value::string(parent.mission_id()));
    parent_ref.insert("workItemId", Value::string(item_id));
    parent_ref.insert("depth", num(depth));
    let NewMission {
        mission: child,
        document: doc_value,
        group,
        definition,
        lease,
    } = new_mission(
        command,
        mission_id,
        group_id,
        Some(("parent", Value::Object(parent_ref))),
        now,
    )?;

    // §12, §14: the child's budget is reserved against the parent WorkItem's account; its usage
    // then rolls up through that account to the parent Mission.
    let (account_revision, mut item_account) =
        child_read
            .account
            .clone()
            .ok_or_else(|| EngineError::Corrupt {
                key: crate::budget::account::account_key(AccountKind::WorkItem, item_id),
                detail: "no readable budget account".into(),
            })?;
    let mut child_account = BudgetAccount::work_item(&mut item_account, mission_id, budget)?;
    child_account.account.kind = AccountKind::Mission;

    // Row 15: the parent WorkItem → `blocked`, its ownership fenced.
    let blocked = block_for_child(&item, &child, command, now)?;

    let link = ChildLink {
        child_mission_id: mission_id.to_owned(),
        child_group_id: group_id.to_owned(),
        parent_mission_id: parent.mission_id().to_owned(),
        parent_group_id: parent.group_id().to_owned(),
        parent_work_item_id: item_id.to_owned(),
        depth,
        failure_policy: policy,
    };
    let latest_revision = child_read.latest_child.as_ref().map_or(0, |(r, _)| *r);
    let group_blob = missionweaveprotocol::json::canonical_bytes(&group)
        .map_err(|e| EngineError::invalid("not_canonical", e.to_string()))?;
    let mut decision = Decision::default()
        .check(
            AggregateKey::new(GROUP_KIND, parent.group_id()),
            group_revision,
        )
        .check(
            AggregateKey::new(MISSION_KIND, parent.mission_id()),
            parent.revision(),
        )
        .put(
            AggregateKey::new(MISSION_KIND, mission_id),
            0,
            child.to_blob()?,
        )
        .put(
            AggregateKey::new(MISSION_DEFINITION_KIND, mission_id),
            0,
            definition,
        )
        .put(
            AggregateKey::new(GROUP_KIND, group_id),
            0,
            group_blob.into(),
        )
        .put(item_account.key(), account_revision, item_account.to_blob())
        .put(child_account.key(), 0, child_account.to_blob())
        .put(link.key(), 0, link.to_blob()?)
        .put(
            children_key(parent.mission_id(), mission_id),
            0,
            blob(
                &children_key(parent.mission_id(), mission_id),
                &Value::Object(Object::new()),
            )?,
        )
        .put(
            item_child_key(item_id),
            latest_revision,
            blob(&item_child_key(item_id), &item_child_value(mission_id))?,
        );
    decision = crate::membership::initial::with_initial(
        decision,
        mission_id,
        group_id,
        command.actor(),
        coordinator_id,
        now,
    )?;
    decision = put_item(decision, command, &blocked, item_revision, Vec::new())?;

    // The parent Group's Event (the Command's first: row 15) …
    let owner = blocked.owner.as_ref().map_or(0, |o| o.ownership_epoch);
    let mut linked = link.to_value();
    if let Value::Object(o) = &mut linked {
        o.insert("missionId", Value::string(mission_id));
        o.insert("workItemId", Value::string(item_id));
        o.insert("revision", num(blocked.revision));
        o.insert("state", Value::string(blocked.state.as_str()));
        o.insert("previousState", Value::string(item.state.as_str()));
        o.insert("ownershipEpoch", num(owner));
        o.insert("mission", doc_value.clone());
        if let Some(r) = &resources {
            o.insert("allowedResources", r.clone());
        }
        if let Some(c) = &capabilities {
            o.insert("requiredCapabilities", c.clone());
        }
    }
    let parent_event = WorkEvent {
        kind: "mission.child.created",
        payload: linked,
    };
    decision = decision.event(
        draft(command, parent_event, Some(item_id)),
        parent.group_id(),
        blocked.revision,
    );
    // … and the child Group's first Event, from which a replica rebuilds the child Mission
    // (`mission::rebuild`).
    let mut payload = event_payload(&child);
    payload.insert("mission", doc_value);
    payload.insert("group", group);
    payload.insert(
        "coordinatorLeaseExpiresAt",
        Value::string(rfc3339(lease.expires_at)),
    );
    let mut created = EventDraft::for_command(command, "mission.created", payload);
    created.work_item_id = None;
    Ok(decision.event(created, group_id, child.revision()))
}

/// Row 15 on the WorkItem: leases revoked, pending offers withdrawn, ownership moved to the
/// child Mission's Coordinator under the next Ownership Epoch (so the former owner's Commands
/// are `WORK_STALE_OWNERSHIP`), no live lease (the child's Coordinator lease governs), state
/// `blocked` with the child as blocker. `work-item.schema.json` requires `owner` and
/// `selectionBasis` in `blocked`: an item promoted before any acceptance gets a basis naming
/// the promotion.
fn block_for_child(
    item: &WorkItem,
    child: &Mission,
    command: &VerifiedCommand,
    now: UnixMillis,
) -> Result<WorkItem, EngineError> {
    let mut next = item.clone();
    close_leases(&mut next, now, LeaseState::Revoked, "child mission created")?;
    for offer in &mut next.offers {
        if offer.status == OfferStatus::Pending {
            offer.status = OfferStatus::Withdrawn;
        }
    }
    let required = item
        .contract
        .document()
        .get("requiredCapabilities")
        .and_then(Value::as_array)
        .map(<[Value]>::to_vec)
        .unwrap_or_default();
    let pins = match &item.owner {
        Some(owner) => owner.capability_pins.clone(),
        None => required.clone(),
    };
    next.owner = Some(Owner {
        agent_id: child.coordinator().agent_id.clone(),
        agent_card_version: child.coordinator().agent_card_version,
        capability_pins: pins,
        ownership_epoch: item.owner.as_ref().map_or(0, |o| o.ownership_epoch) + 1,
        ownership_lease_id: child.coordinator().lease_id.clone(),
        accepted_at: now,
    });
    if next.selection_basis.is_none() {
        let mut basis = Object::new();
        basis.insert("requiredCapabilities", Value::Array(required.clone()));
        basis.insert("verifiedMatches", Value::Array(required));
        basis.insert("authorizationEligible", Value::Bool(true));
        basis.insert("availabilityEstimate", Value::string(rfc3339(now)));
        basis.insert("expectedCost", num(0));
        basis.insert("reliabilityEvidence", Value::Array(Vec::new()));
        basis.insert(
            "policyRulesApplied",
            Value::Array(vec![Value::string("child-mission-promotion")]),
        );
        next.selection_basis = Some(Value::Object(basis));
    }
    next.blocker = Some(format!(
        "child Mission {} ({})",
        child.mission_id(),
        command.kind()
    ));
    next.state = WorkItemState::Blocked;
    next.revision += 1;
    next.updated_at = now;
    Ok(next)
}
