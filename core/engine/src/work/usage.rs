//! `ext.missionweaveprotocol.core.resource_usage_record` (§12): a signed nonzero usage delta
//! against one WorkItem, Ownership Epoch and Execution Lease ID, charged to the WorkItem's
//! budget account and its whole ancestry atomically with the
//! `ext.missionweaveprotocol.core.resource_usage_recorded` Event, which carries the delta, the
//! cumulative usage and the remaining budget. Overflow in any one dimension rejects the whole
//! transition (`BUDGET_EXCEEDED`, naming the account and dimension); nothing is charged.
//!
//! Payload `{workItemId?, ownershipEpoch, leaseId, usageDelta}`; `usageDelta` has any of the six
//! members `financialMicrounits`, `modelTokens`, `toolCalls`, `computeSeconds`,
//! `wallClockSeconds`, `externalActions` (safe non-negative integers; absent = 0), the
//! reference's `ResourceUsage` in camelCase.

use missionweaveprotocol::json::{Object, Value};

use super::input::{claim, work_item_id};
use super::read::{read_account, read_item};
use crate::budget::account::{BudgetAccount, charge};
use crate::decision::Decision;
use crate::error::EngineError;
use crate::events::EventDraft;
use crate::ingress::VerifiedCommand;
use crate::mission::aggregate::Mission;
use crate::store::{AggregateKey, Store};
use crate::work::fencing::check_execution_claim;
use crate::work::{document::AGGREGATE_KIND, error::WorkError};
use missionweaveprotocol_kernel::budget::{AccountKind, BudgetError};
use missionweaveprotocol_kernel::resources::{Dimension, MAX_SAFE_INTEGER, Resources};
use missionweaveprotocol_kernel::snapshot_json::{dimension_member, num_u, resources_to_value};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// The Command kind.
pub const RECORD_KIND: &str = "ext.missionweaveprotocol.core.resource_usage_record";
/// The Event kind.
pub const RECORDED_KIND: &str = "ext.missionweaveprotocol.core.resource_usage_recorded";

/// Accounts above a WorkItem: its Mission (and, with child Missions, their ancestry). A stored
/// chain longer than this is corrupt (parent links never form a cycle by construction).
const MAX_CHAIN: usize = 64;

pub(super) fn record(
    store: &dyn Store,
    command: &VerifiedCommand,
    mission: &Mission,
    base: Decision,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let id = work_item_id(command)?;
    let key = AggregateKey::new(AGGREGATE_KIND, &id);
    let Some((item_revision, item)) = read_item(store, &key)? else {
        return Err(WorkError::InvalidTransition {
            command: RECORD_KIND,
            from: None,
        }
        .into());
    };
    if item.mission_id != mission.mission_id() {
        return Err(EngineError::invalid(
            "group_mismatch",
            format!("WorkItem {id} belongs to another Mission"),
        ));
    }
    // §12: bound to the WorkItem, its current Ownership Epoch and live Execution Lease.
    let claim = claim(command)?;
    check_execution_claim(&item, &claim, now)?;
    let delta = usage_delta(command.payload())?;
    // The WorkItem's account, then each ancestor up to the root Mission.
    let mut chain: Vec<(u64, BudgetAccount)> =
        vec![read_account(store, AccountKind::WorkItem, &id)?];
    while let Some(parent) = chain.last().and_then(|(_, a)| a.parent.clone()) {
        if chain.len() > MAX_CHAIN {
            return Err(EngineError::Corrupt {
                key: chain[0].1.key(),
                detail: "the budget ancestry is too deep".to_owned(),
            });
        }
        chain.push(read_account(store, parent.kind, &parent.id)?);
    }
    let mut accounts: Vec<BudgetAccount> = chain.iter().map(|(_, a)| a.clone()).collect();
    charge(&mut accounts, &delta)?;
    let mut decision = base.check(key, item_revision);
    for ((revision, _), account) in chain.iter().zip(&accounts) {
        decision = decision.put(account.key(), *revision, account.to_blob());
    }
    let item_account = &accounts[0];
    let mut payload = Object::new();
    payload.insert("missionId", Value::string(mission.mission_id()));
    payload.insert("workItemId", Value::string(&id));
    payload.insert("ownershipEpoch", num_u(claim.ownership_epoch));
    payload.insert("leaseId", Value::string(&claim.lease_id));
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
    let mut draft = EventDraft::for_command(command, RECORDED_KIND, payload);
    if draft.work_item_id.is_none() {
        draft.work_item_id = Some(id);
    }
    Ok(decision.event(draft, mission.group_id(), chain[0].0 + 1))
}

/// The `usageDelta` member: some of the six dimensions, each a safe non-negative integer, not
/// all zero (§12 "a nonzero delta").
fn usage_delta(payload: &Value) -> Result<Resources, EngineError> {
    let invalid = |detail: String| EngineError::invalid("invalid_member", detail);
    let Some(object) = payload.get("usageDelta").and_then(Value::as_object) else {
        return Err(EngineError::invalid(
            "missing_member",
            "usageDelta (an object) is required",
        ));
    };
    let mut delta = Resources::ZERO;
    for (name, value) in object.iter() {
        let Some(d) = Dimension::ALL
            .into_iter()
            .find(|d| Some(dimension_member(*d)) == name.as_str())
        else {
            return Err(invalid(format!("usageDelta has no member {name:?}")));
        };
        let amount = match value {
            Value::Number(n) => n.as_u64(),
            _ => None,
        };
        match amount {
            Some(n) if n <= MAX_SAFE_INTEGER => delta.set(d, n),
            _ => {
                return Err(invalid(format!(
                    "usageDelta.{name:?} must be an integer from 0 to 2^53 - 1"
                )));
            }
        }
    }
    if delta.is_zero() {
        return Err(BudgetError::ZeroDelta.into());
    }
    Ok(delta)
}
