//! §11.5 reconciliation on the engine path: a rebased `work.checkpoint` or `message.post`
//! (the two reversible kinds) carrying the critical
//! bounded-offline-execution binding. The binding is checked by
//! [`reconcile::check_binding`] against the WorkItem, the historical Execution
//! Lease and the per-lease totals; then, in the checkpoint's own transaction, a nonzero delta
//! is charged to the WorkItem and its whole budget ancestry with a
//! `…resource_usage_recorded` Event placed *before* the checkpoint's Events. Any refusal
//! refuses the Command: no charge, no Event, no state change.
//!
//! Two small aggregates support it:
//! - `execution_lease_history` / Lease ID: an Execution Lease as it was when a `work.start`
//!   replaced it (after a Session replacement the Worker re-starts the item under a new
//!   lease, and the binding names the old one; digest §7 item 23);
//! - `offline_reconciliation` / historical Lease ID: `{actions, usage}` already reconciled.

pub mod reconcile;

use missionweaveprotocol::json::{Object, Value};

use self::reconcile::{RebasedEnvelope, Reconciled, check_binding};
use super::input::work_item_id;
use super::read::{read_account, read_item};
use super::usage::RECORDED_KIND;
use crate::budget::account::{BudgetAccount, charge};
use crate::decision::{Decision, PlannedEvent};
use crate::error::EngineError;
use crate::events::EventDraft;
use crate::ingress::VerifiedCommand;
use crate::store::{AggregateKey, Blob, Store};
use crate::work::document::AGGREGATE_KIND;
use crate::work::state::WorkItem;
use missionweaveprotocol_kernel::budget::AccountKind;
use missionweaveprotocol_kernel::lease::Lease;
use missionweaveprotocol_kernel::offline::{
    OFFLINE_EXECUTION_EXTENSION, OfflineError, OfflineLimits, is_reversible, offline_binding_of,
};
use missionweaveprotocol_kernel::snapshot_json::{num_u, resources_from_value, resources_to_value};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// Execution Leases replaced by a later `work.start`, by Lease ID.
pub const HISTORY_KIND: &str = "execution_lease_history";
/// Per historical lease: what offline progress already reconciled.
pub const RECONCILED_KIND: &str = "offline_reconciliation";

/// A budget chain longer than this is corrupt (as in `usage.rs`).
const MAX_CHAIN: usize = 64;

/// §18: the only critical extension the engine interprets is the offline binding, and only on
/// reversible kinds; any other critical extension is `UNKNOWN_CRITICAL_EXTENSION`.
pub(crate) fn screen(command: &VerifiedCommand) -> Result<(), EngineError> {
    for extension in command.critical_extension_ids() {
        if extension != OFFLINE_EXECUTION_EXTENSION {
            return Err(EngineError::UnknownCriticalExtension {
                extension: extension.to_owned(),
            });
        }
        if !is_reversible(command.kind()) {
            return Err(EngineError::Offline(OfflineError::NotReversible {
                kind: command.kind().to_owned(),
            }));
        }
    }
    Ok(())
}

/// Keeps the Execution Lease a transition replaces (a new `work.start`) for later
/// reconciliation of progress buffered under it.
pub(crate) fn archive_replaced_lease(
    decision: Decision,
    before: &WorkItem,
    after: &WorkItem,
) -> Result<Decision, EngineError> {
    let Some(old) = &before.execution_lease else {
        return Ok(decision);
    };
    if after
        .execution_lease
        .as_ref()
        .is_some_and(|new| new.lease_id() == old.lease_id())
    {
        return Ok(decision);
    }
    let text = old.to_json_string().map_err(|e| EngineError::Corrupt {
        key: AggregateKey::new(HISTORY_KIND, old.lease_id()),
        detail: e.to_string(),
    })?;
    Ok(decision.put(
        AggregateKey::new(HISTORY_KIND, old.lease_id()),
        0,
        Blob::from(text.into_bytes()),
    ))
}

fn corrupt(key: &AggregateKey, detail: impl Into<String>) -> EngineError {
    EngineError::Corrupt {
        key: key.clone(),
        detail: detail.into(),
    }
}

fn historical_lease(
    store: &dyn Store,
    item: &WorkItem,
    lease_id: &str,
) -> Result<Option<Lease>, EngineError> {
    if let Some(current) = item
        .execution_lease
        .as_ref()
        .filter(|l| l.lease_id() == lease_id)
    {
        return Ok(Some(current.clone()));
    }
    let key = AggregateKey::new(HISTORY_KIND, lease_id);
    match store.aggregate(&key)? {
        None => Ok(None),
        Some(stored) => Lease::from_json(&stored.value)
            .map(Some)
            .map_err(|e| corrupt(&key, e.to_string())),
    }
}

fn read_reconciled(
    store: &dyn Store,
    key: &AggregateKey,
) -> Result<(u64, Reconciled), EngineError> {
    let Some(stored) = store.aggregate(key)? else {
        return Ok((0, Reconciled::default()));
    };
    let value = missionweaveprotocol::json::parse_state(&stored.value)
        .map_err(|e| corrupt(key, e.to_string()))?;
    let actions = value
        .get("actions")
        .and_then(Value::as_number)
        .and_then(|n| n.as_u64())
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| corrupt(key, "actions is missing"))?;
    let usage = value
        .get("usage")
        .ok_or_else(|| corrupt(key, "usage is missing"))
        .and_then(|u| resources_from_value(u, "/usage").map_err(|e| corrupt(key, e.message)))?;
    Ok((stored.revision, Reconciled { actions, usage }))
}

fn reconciled_blob(totals: &Reconciled) -> Result<Blob, EngineError> {
    let mut o = Object::new();
    o.insert("actions", num_u(u64::from(totals.actions)));
    o.insert("usage", resources_to_value(&totals.usage));
    missionweaveprotocol::json::canonical_bytes(&Value::Object(o))
        .map(Blob::from)
        .map_err(|e| EngineError::invalid("canonicalization", e.to_string()))
}

/// Reconciles `decision` (the checkpoint's or the Message's) with the Command's offline binding, if it carries
/// one; otherwise returns it unchanged.
pub(crate) fn reconcile(
    store: &dyn Store,
    limits: &OfflineLimits,
    command: &VerifiedCommand,
    decision: Decision,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let Some(binding) = offline_binding_of(command.document()).map_err(EngineError::Offline)?
    else {
        return Ok(decision);
    };
    // Both reversible kinds are decided by the engine: `work.checkpoint` (`work/`) and
    // `message.post` (`message`, which already placed the Message in the WorkItem's
    // Conversation, §9); either is reconciled here the same way.
    if !is_reversible(command.kind()) {
        return Err(EngineError::Offline(OfflineError::NotReversible {
            kind: command.kind().to_owned(),
        }));
    }
    let id = work_item_id(command)?;
    let item_key = AggregateKey::new(AGGREGATE_KIND, &id);
    let (_, item) = read_item(store, &item_key)?
        .ok_or_else(|| corrupt(&item_key, "the checkpointed WorkItem vanished"))?;
    let envelope = RebasedEnvelope {
        agent_id: &command.actor().id,
        group_id: command.group_id().unwrap_or_default(),
        work_item_id: &id,
        // A Message may name its Conversation in the payload only (`message.post`).
        conversation_id: command.conversation_id().or_else(|| {
            command
                .payload()
                .get("conversationId")
                .and_then(Value::as_str)
        }),
        session_epoch: command.session_epoch().unwrap_or_default(),
    };
    let lease = historical_lease(store, &item, &binding.execution_lease_id)?;
    let totals_key = AggregateKey::new(RECONCILED_KIND, &binding.execution_lease_id);
    let (totals_revision, before) = read_reconciled(store, &totals_key)?;
    let after = check_binding(
        &binding,
        &envelope,
        &item,
        lease.as_ref(),
        before,
        limits,
        now,
    )
    .map_err(EngineError::Offline)?;
    let mut decision = decision.put(totals_key, totals_revision, reconciled_blob(&after)?);
    let delta = binding.resource_usage_delta;
    if delta.is_zero() {
        return Ok(decision);
    }
    // §11.5, §12: charge the WorkItem and its whole ancestry, all or nothing.
    let mut chain: Vec<(u64, BudgetAccount)> =
        vec![read_account(store, AccountKind::WorkItem, &id)?];
    while let Some(parent) = chain.last().and_then(|(_, a)| a.parent.clone()) {
        if chain.len() > MAX_CHAIN {
            return Err(corrupt(
                &chain[0].1.key(),
                "the budget ancestry is too deep",
            ));
        }
        chain.push(read_account(store, parent.kind, &parent.id)?);
    }
    let mut accounts: Vec<BudgetAccount> = chain.iter().map(|(_, a)| a.clone()).collect();
    charge(&mut accounts, &delta)?;
    for ((revision, _), account) in chain.iter().zip(&accounts) {
        decision = decision.put(account.key(), *revision, account.to_blob());
    }
    let item_account = &accounts[0];
    let mut payload = Object::new();
    payload.insert("missionId", Value::string(&item.mission_id));
    payload.insert("workItemId", Value::string(&id));
    payload.insert("ownershipEpoch", num_u(binding.ownership_epoch));
    payload.insert("leaseId", Value::string(&binding.execution_lease_id));
    payload.insert("usageDelta", resources_to_value(&delta));
    payload.insert("cumulativeUsage", resources_to_value(&item_account.usage));
    payload.insert(
        "remainingBudget",
        resources_to_value(&item_account.remaining()),
    );
    if let Some(root) = accounts.last().filter(|_| accounts.len() > 1) {
        payload.insert(
            "missionRemainingBudget",
            resources_to_value(&root.remaining()),
        );
    }
    // §11.5: the Event identifies the historical and the reconciliation sessions.
    payload.insert("offline", Value::Bool(true));
    payload.insert("historicalSessionEpoch", num_u(binding.session_epoch));
    payload.insert("reconciliationSessionEpoch", num_u(envelope.session_epoch));
    let mut draft = EventDraft::for_command(command, RECORDED_KIND, payload);
    if draft.work_item_id.is_none() {
        draft.work_item_id = Some(id);
    }
    // "…and *then* apply the Message or checkpoint": the charge precedes the checkpoint.
    decision.events.insert(
        0,
        PlannedEvent {
            draft,
            group_id: Some(item.group_id.clone()),
            aggregate_revision: chain[0].0 + 1,
        },
    );
    Ok(decision)
}
