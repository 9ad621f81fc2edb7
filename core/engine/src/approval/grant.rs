//! `approval.grant_execution` → `approval.execution.granted` (§10.2 row 6: `queued` →
//! `queued`, "satisfies the start gate without executing work"; §12; CONTEXT "Execution
//! Approval").
//!
//! Payload (`command.schema.json` gives every payload only `{"type": "object"}`; these are the
//! reference's `GrantExecutionApprovalPayload` members in camelCase): `approvalId`,
//! `workItemId` (or the envelope's), `ownershipEpoch`, `operations` (≥ 1, distinct),
//! `resources?` (distinct), `budget?` (`common.schema.json#/$defs/budget`),
//! `expiresInSeconds?` (default 300, 1–86,400), `comments?`.
//!
//! Check order (§15.1): human actor, Group and Mission, Mission non-terminal, approver
//! authority, payload, WorkItem of this Mission, `expectedRevision` (the WorkItem's, §15.3),
//! state `queued`, current Ownership Epoch, scope within the Work Contract, budget within the
//! WorkItem's allocation, Approval ID unused.

use missionweaveprotocol::json::Value;
use missionweaveprotocol::{Principal, PrincipalType};

use super::record::ExecutionApproval;
use super::{EXECUTION_GRANTED, GRANT_EXECUTION};
use crate::budget::account::{BudgetAccount, account_key};
use crate::decision::Decision;
use crate::error::EngineError;
use crate::events::EventDraft;
use crate::ingress::VerifiedCommand;
use crate::input::{member, opt_text, opt_u64, text, u64_member};
use crate::mission::aggregate::{GROUP_KIND, MISSION_KIND, Mission};
use crate::mission::rules::{existing, require_state};
use crate::store::{AggregateKey, Store};
use crate::work::read::read_item;
use crate::work::scope::ContractScope;
use crate::work::{
    document::AGGREGATE_KIND as WORK_ITEM_KIND, error::WorkError, state::WorkItemState,
};
use missionweaveprotocol_kernel::budget::AccountKind;
use missionweaveprotocol_kernel::budget::BudgetError;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// Default and largest approval lifetime in seconds (the reference's `expires_in_seconds=300`;
/// a day bounds an approval nobody revisits, like the lease bound).
const DEFAULT_EXPIRY_SECONDS: u64 = 300;
const MAX_EXPIRY_SECONDS: u64 = 86_400;

/// Deepest parent chain walked to find the root human (child Missions nest; a corrupt cycle
/// stops here).
const MAX_MISSION_DEPTH: usize = 64;

pub(crate) fn grant(
    store: &dyn Store,
    command: &VerifiedCommand,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    // CONTEXT "Execution Approval": a signed *human* decision (the Organization authorizer
    // refuses other actors at ingress too: `human_only`).
    if command.actor().kind != PrincipalType::Human {
        return Err(EngineError::forbidden(
            "human_only",
            "an Execution Approval is a signed human decision (§12)",
        ));
    }
    let read = crate::mission::read::read(store, command)?;
    let (group_revision, mission) = existing(&read)?;
    require_state(command, &mission, |s| !s.is_terminal())?;
    require_approver(store, command, &mission)?;

    let payload = command.payload();
    let approval_id = text(payload, "approvalId")?.to_owned();
    let work_item_id = work_item_id(command)?;
    let ownership_epoch = u64_member(payload, "ownershipEpoch")?;
    let operations = distinct(payload, "operations", true)?;
    let resources = distinct(payload, "resources", false)?;
    let budget = match payload.get("budget") {
        None => None,
        Some(b @ Value::Object(_)) => Some(b.clone()),
        Some(_) => {
            return Err(EngineError::invalid(
                "invalid_member",
                "budget must be a budget object",
            ));
        }
    };
    let seconds = opt_u64(payload, "expiresInSeconds")?.unwrap_or(DEFAULT_EXPIRY_SECONDS);
    if !(1..=MAX_EXPIRY_SECONDS).contains(&seconds) {
        return Err(EngineError::invalid(
            "expiry_out_of_range",
            format!("expiresInSeconds must lie between 1 and {MAX_EXPIRY_SECONDS}"),
        ));
    }
    let comments = opt_text(payload, "comments")?.map(str::to_owned);

    let item_key = AggregateKey::new(WORK_ITEM_KIND, &work_item_id);
    let Some((item_revision, item)) = read_item(store, &item_key)? else {
        return Err(WorkError::InvalidTransition {
            command: GRANT_EXECUTION,
            from: None,
        }
        .into());
    };
    if item.mission_id != mission.mission_id() {
        return Err(EngineError::invalid(
            "group_mismatch",
            format!("WorkItem {work_item_id} belongs to another Mission"),
        ));
    }
    // §15.3: the row is the WorkItem's (`queued` → `queued`), so `expectedRevision` names it.
    if let Some(expected) = command.expected_revision()
        && expected != item_revision
    {
        return Err(EngineError::RevisionConflict {
            key: item_key,
            expected,
            current: item_revision,
        });
    }
    // §10.2 row 6: only a `queued` WorkItem (owned, not started) is approved for execution.
    if item.state != WorkItemState::Queued {
        return Err(WorkError::InvalidTransition {
            command: GRANT_EXECUTION,
            from: Some(item.state),
        }
        .into());
    }
    // §12 "for one WorkItem Ownership Epoch": an approval for a fenced owner is refused.
    let current = item.owner.as_ref().map_or(0, |o| o.ownership_epoch);
    if ownership_epoch != current {
        return Err(WorkError::StaleOwnership {
            claimed: ownership_epoch,
            current,
        }
        .into());
    }
    check_scope(
        &ContractScope::from_contract(item.contract.document()),
        &operations,
        &resources,
    )?;

    let approval = ExecutionApproval {
        approval_id: approval_id.clone(),
        mission_id: mission.mission_id().to_owned(),
        group_id: mission.group_id().to_owned(),
        work_item_id: work_item_id.clone(),
        ownership_epoch,
        operations,
        resources,
        budget,
        approver: command.actor().clone(),
        approved_at: now,
        expires_at: now.saturating_add_ms(seconds.saturating_mul(1000)),
        comments,
    };
    // §12 "the Coordinator allocates … the Authorization Service enforces hard limits": an
    // approval cannot raise the WorkItem's allocation (`BUDGET_EXCEEDED` naming the dimension).
    let account_revision = check_budget(store, &approval)?;

    let key = ExecutionApproval::key(&approval_id);
    if store.aggregate(&key)?.is_some() {
        return Err(EngineError::InvalidStateTransition {
            aggregate: super::EXECUTION_APPROVAL_KIND,
            id: approval_id,
            state: "granted".to_owned(),
            command: GRANT_EXECUTION.to_owned(),
        });
    }
    let blob = approval.to_blob();
    let mut draft = EventDraft::for_command(command, EXECUTION_GRANTED, approval.event_payload());
    draft.work_item_id = Some(work_item_id.clone());
    Ok(Decision::default()
        .check(
            AggregateKey::new(GROUP_KIND, mission.group_id()),
            group_revision,
        )
        .check(
            AggregateKey::new(MISSION_KIND, mission.mission_id()),
            mission.revision(),
        )
        // The WorkItem is not rewritten (row 6 keeps it `queued`), but the approval holds only
        // for the state and Ownership Epoch read: a concurrent transition must invalidate it.
        .check(item_key, item_revision)
        .check(
            account_key(AccountKind::WorkItem, &work_item_id),
            account_revision,
        )
        .put(key, 0, blob.clone())
        .put(
            ExecutionApproval::index_key(&work_item_id, &approval_id),
            0,
            blob,
        )
        .event(draft, mission.group_id(), 1))
}

/// The WorkItem: the envelope `workItemId` (§15.1), else the payload's; both must agree.
fn work_item_id(command: &VerifiedCommand) -> Result<String, EngineError> {
    let inner = opt_text(command.payload(), "workItemId")?;
    match (command.work_item_id(), inner) {
        (Some(outer), Some(inner)) if outer != inner => Err(EngineError::invalid(
            "work_item_mismatch",
            "payload workItemId differs from the envelope's",
        )),
        (Some(outer), _) => Ok(outer.to_owned()),
        (None, Some(inner)) => Ok(inner.to_owned()),
        (None, None) => text(command.payload(), "workItemId").map(str::to_owned),
    }
}

/// A list of distinct non-empty strings; `required`: present with at least one item.
fn distinct(payload: &Value, name: &str, required: bool) -> Result<Vec<String>, EngineError> {
    let items = match payload.get(name) {
        None if !required => return Ok(Vec::new()),
        _ => member(payload, name)?,
    };
    let wrong = || EngineError::invalid("invalid_member", format!("{name} must list strings"));
    let items = items.as_array().ok_or_else(wrong)?;
    let mut out: Vec<String> = Vec::with_capacity(items.len());
    for item in items {
        let s = item.as_str().filter(|s| !s.is_empty()).ok_or_else(wrong)?;
        if out.iter().any(|o| o == s) {
            return Err(EngineError::invalid(
                "duplicate_member",
                format!("{name} lists {s:?} twice"),
            ));
        }
        out.push(s.to_owned());
    }
    if required && out.is_empty() {
        return Err(EngineError::invalid(
            "empty_operations",
            format!("{name} must name at least one operation"),
        ));
    }
    Ok(out)
}

/// §4 invariant 11 (least privilege), §10.1 "allowed tools, data, operations and resource
/// constraints": an approval cannot permit what the Work Contract does not allow. Each resource
/// is one of `allowedResources`; each operation is allowed on an approved resource (or on any
/// contract resource when the approval names none), as the Authorization Service checks a
/// capability request.
fn check_scope(
    contract: &ContractScope,
    operations: &[String],
    resources: &[String],
) -> Result<(), EngineError> {
    if let Some(r) = resources
        .iter()
        .find(|r| !contract.resources.iter().any(|g| &g.resource == *r))
    {
        return Err(EngineError::invalid(
            "resource_not_in_contract",
            format!("resource {r:?} is not allowed by the Work Contract"),
        ));
    }
    for op in operations {
        let allowed = contract.resources.iter().any(|g| {
            (resources.is_empty() || resources.contains(&g.resource))
                && g.operations.iter().any(|o| o == op)
        });
        if !allowed {
            return Err(EngineError::invalid(
                "operation_not_in_contract",
                format!("operation {op:?} is not allowed by the Work Contract"),
            ));
        }
    }
    Ok(())
}

/// The approval's budget ceiling fits the WorkItem's allocation; returns the account revision
/// read (checked at commit).
fn check_budget(store: &dyn Store, approval: &ExecutionApproval) -> Result<u64, EngineError> {
    let key = account_key(AccountKind::WorkItem, &approval.work_item_id);
    let stored = store.aggregate(&key)?;
    let Some((revision, account)) = stored
        .as_ref()
        .and_then(|s| BudgetAccount::from_stored(&s.value).map(|a| (s.revision, a)))
    else {
        return Err(EngineError::Corrupt {
            key,
            detail: "no readable budget account".to_owned(),
        });
    };
    let ceiling = approval.budget_limits().map_err(|e| match e {
        BudgetError::Malformed(_) | BudgetError::Currency(_) => {
            EngineError::invalid("invalid_member", format!("budget: {e}"))
        }
        other => EngineError::Budget(other),
    })?;
    if let Some(ceiling) = ceiling
        && let Some(dimension) = ceiling.first_exceeding(&account.limit)
    {
        return Err(EngineError::Budget(BudgetError::AllocationExceeded {
            parent: account.account.clone(),
            dimension,
        }));
    }
    Ok(revision)
}

/// §12 "signed human decision"; §7.1: the MissionOwner sets the Mission's limits and answers
/// for its risk. For a child Mission, whose MissionOwner is the Parent Coordinator, "under the
/// root human's accountability" (§4.x MissionOwner): the root Mission's human owner.
fn require_approver(
    store: &dyn Store,
    command: &VerifiedCommand,
    mission: &Mission,
) -> Result<(), EngineError> {
    let owner = accountable_human(store, mission)?;
    if owner.as_ref() == Some(command.actor()) {
        return Ok(());
    }
    Err(EngineError::forbidden(
        "not_accountable_human",
        format!(
            "human {} is not the accountable MissionOwner of {}",
            command.actor().id,
            mission.mission_id()
        ),
    ))
}

fn accountable_human(
    store: &dyn Store,
    mission: &Mission,
) -> Result<Option<Principal>, EngineError> {
    let mut current = mission.clone();
    for _ in 0..MAX_MISSION_DEPTH {
        if current.owner().kind == PrincipalType::Human {
            return Ok(Some(current.owner().clone()));
        }
        let Some(parent) = current
            .document()
            .pointer("/parent/missionId")
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            return Ok(None);
        };
        let key = AggregateKey::new(MISSION_KIND, &parent);
        match store.aggregate(&key)? {
            Some(stored) => current = Mission::from_stored(&key, &stored)?,
            None => return Ok(None),
        }
    }
    Ok(None)
}
