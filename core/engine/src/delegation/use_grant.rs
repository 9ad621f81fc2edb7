//! A `work.authorize` / `work.offer` citing a Delegation Grant (§9.1, digest 2.12 row 2), and
//! the `parentWorkItemId` link of every `work.authorize` that names one.
//!
//! The `work` module decides the transition as for the Coordinator (its role check lets an
//! Agent citing `delegationGrantId` through, `work/authority.rs`); then, in the same
//! decision, the cited Grant is read and the pure
//! [`DelegationAuthority`](missionweaveprotocol_kernel::delegation::DelegationAuthority) checks this use: the
//! actor is the grantee with an active `work_delegate` Membership at the Grant's epoch; the
//! Mission, Group, Coordinator Epoch and issuer still match; the Grant is within its validity
//! and its target exists and is not `failed`, `cancelled` or `verified`; the WorkItem is the
//! target or a descendant (a new one linked by `parentWorkItemId`); its required capabilities
//! are allowed at their minimum versions; its depth is within the Grant's maximum; and the
//! cumulative budget of every WorkItem created or offered under the Grant stays within every
//! ceiling. The use is charged to the stored Grant in the same transaction. A refusal writes
//! nothing, with the violation's §19 code (`AUTH_FORBIDDEN`, `MEMBERSHIP_REQUIRED`,
//! `MEMBERSHIP_STALE`, `AUTH_STALE_COORDINATOR`, `BUDGET_EXCEEDED`).
//!
//! Invalidation latches (§9.1 "immediately invalidates further use") because every
//! invalidating condition is monotonic in authoritative state: Coordinator and Membership
//! Epochs only grow, terminal WorkItem states are final, time only passes.

use missionweaveprotocol::PrincipalType;
use missionweaveprotocol::json::Value;

use super::issue::WORK_DELEGATE;
use super::links::put_link;
use super::stored::StoredGrant;
use super::tree::{Tree, check_once};
use super::{refusal, violation};
use crate::budget::account::wire_limits;
use crate::decision::Decision;
use crate::error::EngineError;
use crate::ingress::VerifiedCommand;
use crate::input::opt_text;
use crate::membership::aggregate::{Membership, MembershipState, membership_key};
use crate::mission::aggregate::Mission;
use crate::mission::rules::existing;
use crate::store::{AggregateKey, Store};
use crate::work::read::read_item;
use crate::work::{document::AGGREGATE_KIND, state::WorkItem};
use missionweaveprotocol_kernel::budget::{AccountId, AccountKind};
use missionweaveprotocol_kernel::capability_version::CapabilityRef;
use missionweaveprotocol_kernel::delegation::{
    DelegatedWork, DelegationContext, DelegationViolationKind, MembershipView,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// Applies the Grant cited by a `work.authorize` / `work.offer` and writes the parent link of
/// a `work.authorize` naming `parentWorkItemId`; other Commands pass unchanged.
pub(crate) fn after_work(
    store: &dyn Store,
    command: &VerifiedCommand,
    decision: Decision,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let authorize = match command.kind() {
        "work.authorize" => true,
        "work.offer" => false,
        _ => return Ok(decision),
    };
    let payload = command.payload();
    let grant_id = opt_text(payload, "delegationGrantId")?;
    let parent = if authorize {
        opt_text(payload, "parentWorkItemId")?
    } else {
        None
    };
    if grant_id.is_none() && parent.is_none() {
        return Ok(decision);
    }
    let (_, mission) = existing(&crate::mission::read::read(store, command)?)?;
    let subject = written_item(&decision)?;
    let mut decision = decision;
    let mut depth = None;
    if let Some(grant_id) = grant_id {
        let (used, d) = use_grant(
            store, command, &mission, &subject, parent, grant_id, decision, now,
        )?;
        decision = used;
        depth = Some((grant_id, d));
    }
    if let Some(parent) = parent {
        decision = link(store, decision, &mission, &subject, parent, depth)?;
    }
    // The log records the scope and the authority of the transition (§9.1 "cite a persisted
    // Grant ID"): a replica sees the subtree and each Grant use in the Event itself.
    if let Some(first) = decision.events.first_mut() {
        if let Some(parent) = parent {
            first
                .draft
                .payload
                .insert("parentWorkItemId", Value::string(parent));
        }
        if let Some(grant_id) = grant_id {
            first
                .draft
                .payload
                .insert("delegationGrantId", Value::string(grant_id));
        }
    }
    Ok(decision)
}

/// The WorkItem the `work` decision wrote (its new state).
fn written_item(decision: &Decision) -> Result<WorkItem, EngineError> {
    decision
        .writes
        .iter()
        .find(|w| w.key.kind == AGGREGATE_KIND && w.value.is_some())
        .and_then(|w| w.value.as_ref())
        .and_then(|bytes| WorkItem::from_json(bytes).ok())
        .ok_or_else(|| EngineError::invalid("no_work_item", "the decision wrote no WorkItem"))
}

/// §9.1: the parent must be an existing WorkItem of the same Mission.
fn link(
    store: &dyn Store,
    decision: Decision,
    mission: &Mission,
    subject: &WorkItem,
    parent: &str,
    grant: Option<(&str, u32)>,
) -> Result<Decision, EngineError> {
    let key = AggregateKey::new(AGGREGATE_KIND, parent);
    let revision = match read_item(store, &key)? {
        Some((revision, item)) if item.mission_id == mission.mission_id() => revision,
        _ => {
            return Err(EngineError::invalid(
                "unknown_parent",
                format!("parentWorkItemId {parent} is no WorkItem of this Mission"),
            ));
        }
    };
    let decision = check_once(decision, key, revision);
    put_link(decision, &subject.work_item_id, parent, grant)
}

/// The pure Grant checks of this use; returns the decision with the Grant charged, and the
/// WorkItem's depth below the Grant's target.
#[allow(clippy::too_many_arguments)]
fn use_grant(
    store: &dyn Store,
    command: &VerifiedCommand,
    mission: &Mission,
    subject: &WorkItem,
    parent: Option<&str>,
    grant_id: &str,
    decision: Decision,
    now: UnixMillis,
) -> Result<(Decision, u32), EngineError> {
    // §9.1 "MUST cite a persisted Grant ID": an unknown (forged) ID authorizes nothing.
    let Some(mut grant) = StoredGrant::read(store, grant_id)? else {
        return Err(EngineError::forbidden(
            "unknown_delegation_grant",
            format!("no Delegation Grant {grant_id} is persisted"),
        ));
    };
    let actor = command.actor();
    if actor.kind != PrincipalType::Agent {
        return Err(refusal(
            grant_id,
            violation(
                DelegationViolationKind::Identity,
                "a Grant is used by an Agent",
            ),
        ));
    }
    let membership = Membership::read(store, mission.group_id(), actor)?;
    let mut decision = decision;
    if let Some(m) = &membership {
        decision = check_once(
            decision,
            membership_key(mission.group_id(), actor),
            m.revision(),
        );
    }
    let coordinator = mission.coordinator();
    let ctx = DelegationContext {
        actor_agent_id: &actor.id,
        membership: membership.as_ref().map(|m| MembershipView {
            group_id: m.group_id(),
            active: m.state() == MembershipState::Active,
            work_delegate: m.role() == WORK_DELEGATE,
            epoch: m.epoch(),
        }),
        mission_id: mission.mission_id(),
        group_id: mission.group_id(),
        coordinator_epoch: coordinator.coordinator_epoch,
        coordinator_agent_id: &coordinator.agent_id,
        // §20's Organization depth limit is a cooperation control (`engine/controls.rs`).
        organization_max_depth: u32::MAX,
        now,
    };
    let (capabilities, budget, currency) = contract_terms(subject, grant_id)?;
    let work = DelegatedWork {
        required_capabilities: &capabilities,
        budget,
        currency,
    };
    let target = grant.authority.grant().target_work_item_id.clone();
    let fail = |v| refusal(grant_id, v);
    let depth = if let Some(parent) = parent {
        let (tree, checked) = Tree::walk(store, decision, &target, &[parent])?;
        decision = checked;
        grant
            .authority
            .authorize_descendant(&ctx, &tree, &subject.work_item_id, parent, &work)
            .map_err(fail)?
    } else if command.kind() == "work.authorize" {
        // §9.1: a delegated new WorkItem is linked into the subtree explicitly.
        return Err(fail(violation(
            DelegationViolationKind::Scope,
            "a delegated work.authorize names parentWorkItemId",
        )));
    } else {
        let (tree, checked) = Tree::walk(store, decision, &target, &[&subject.work_item_id])?;
        decision = checked;
        grant
            .authority
            .authorize_offer(&ctx, &tree, &subject.work_item_id, &work)
            .map_err(fail)?
    };
    grant.record_use(&subject.work_item_id, budget);
    let key = StoredGrant::key(grant_id);
    let blob = grant.to_blob()?;
    Ok((decision.put(key, grant.revision, blob), depth))
}

/// The Work Contract's required capabilities and budget.
fn contract_terms(
    item: &WorkItem,
    grant_id: &str,
) -> Result<
    (
        Vec<CapabilityRef>,
        missionweaveprotocol_kernel::resources::Resources,
        Option<missionweaveprotocol_kernel::resources::Currency>,
    ),
    EngineError,
> {
    let contract = item.contract.document();
    let malformed = |what: &str| {
        refusal(
            grant_id,
            violation(DelegationViolationKind::Capability, what),
        )
    };
    let mut capabilities = Vec::new();
    if let Some(required) = contract
        .get("requiredCapabilities")
        .and_then(Value::as_array)
    {
        for c in required {
            let id = c.get("id").and_then(Value::as_str).unwrap_or_default();
            let version = c.get("version").and_then(Value::as_str).unwrap_or_default();
            capabilities.push(
                CapabilityRef::new(id, version)
                    .ok_or_else(|| malformed("unreadable required capability"))?,
            );
        }
    }
    let account = AccountId {
        kind: AccountKind::WorkItem,
        id: item.work_item_id.clone(),
    };
    let (currency, budget) = match contract.get("budget") {
        Some(b) => wire_limits(b, &account)?,
        None => (
            None,
            missionweaveprotocol_kernel::resources::Resources::ZERO,
        ),
    };
    Ok((capabilities, budget, currency))
}
