//! The reads and the decision of each WorkItem Command.

use missionweaveprotocol::PrincipalType;

use super::authority;
use super::input::{
    array, candidates, claim, evidence, lease_length, object, opt_bool, session_epoch, strings,
    work_item_id,
};
use super::plan::{after, draft, lease_grant, put_item};
use super::read::{dependency_closure, dependency_states, read_account, read_item, read_proposal};
use crate::budget::account::BudgetAccount;
use crate::decision::Decision;
use crate::error::EngineError;
use crate::ingress::VerifiedCommand;
use crate::input::{artifact_hashes, opt_text, text};
use crate::mission::aggregate::{GROUP_KIND, MISSION_KIND, Mission};
use crate::mission::rules::{existing, lease_seconds, require_state};
use crate::organization::lease_index::track;
use crate::store::{AggregateKey, Blob, Store};
use crate::work::offers::{AcceptOfferInput, OfferInput, accept_offer, offer};
use crate::work::transitions::closing::{CancelInput, FailInput, cancel, fail};
use crate::work::transitions::create::{AuthorizeInput, ProposeInput, authorize, propose};
use crate::work::transitions::execution::{
    BlockInput, CheckpointInput, RenewInput, StartInput, UnblockInput, block, checkpoint,
    renew_execution_lease, start, unblock,
};
use crate::work::transitions::review::{AcceptResultInput, SubmitInput, accept_result, submit};
use crate::work::transitions::revise::add_dependency;
use crate::work::{
    dependencies::DependencyGraph,
    document::AGGREGATE_KIND,
    error::WorkError,
    proposal_document::PROPOSAL_AGGREGATE_KIND,
    state::{Actor, ActorType, Transition, WorkItem},
};
use missionweaveprotocol::json::Value;
use missionweaveprotocol_kernel::budget::AccountKind;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

pub(super) fn decide(
    store: &dyn Store,
    command: &VerifiedCommand,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let read = crate::mission::read::read(store, command)?;
    let (group_revision, mission) = existing(&read)?;
    // A terminal Mission accepts no more work (§7.1; its WorkItems were closed by row 18).
    require_state(command, &mission, |s| !s.is_terminal())?;
    let as_coordinator = authority::authorize(command, &mission, now)?;
    // Every WorkItem Command depends on the Group and the Mission it read: a concurrent
    // Mission closure must invalidate it (§15.2 serializes the Group anyway).
    let base = Decision::default()
        .check(
            AggregateKey::new(GROUP_KIND, mission.group_id()),
            group_revision,
        )
        .check(
            AggregateKey::new(MISSION_KIND, mission.mission_id()),
            mission.revision(),
        );
    match command.kind() {
        "work.propose" => propose_proposal(store, command, &mission, base, now),
        "work.authorize" => authorize_item(store, command, &mission, base, now),
        super::usage::RECORD_KIND => super::usage::record(store, command, &mission, base, now),
        _ => existing_item(store, command, &mission, base, as_coordinator, now),
    }
}

/// Row 1: the Work Proposal, stored as `work_proposal`.
fn propose_proposal(
    store: &dyn Store,
    command: &VerifiedCommand,
    mission: &Mission,
    base: Decision,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let payload = command.payload();
    let proposal_id = text(payload, "proposalId")?.to_owned();
    let key = AggregateKey::new(PROPOSAL_AGGREGATE_KIND, &proposal_id);
    let stored = read_proposal(store, &key)?;
    let read_revision = stored.as_ref().map_or(0, |(r, _)| *r);
    expected(command, &key, read_revision)?;
    let transition = propose(
        stored.as_ref().map(|(_, p)| p),
        ProposeInput {
            proposal_id,
            mission_id: mission.mission_id().to_owned(),
            group_id: mission.group_id().to_owned(),
            proposed_by: actor(command),
            contract: object(payload, "contract")?,
        },
        now,
    )?;
    let proposal = transition.state;
    let mut decision = base.put(
        key,
        read_revision,
        Blob::from(proposal.to_canonical_bytes()?),
    );
    for event in transition.events {
        decision = decision.event(
            draft(command, event, None),
            mission.group_id(),
            proposal.revision,
        );
    }
    Ok(decision)
}

/// Row 2: the WorkItem (and the authorized proposal, if any).
fn authorize_item(
    store: &dyn Store,
    command: &VerifiedCommand,
    mission: &Mission,
    base: Decision,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let payload = command.payload();
    let id = work_item_id(command)?;
    let key = AggregateKey::new(AGGREGATE_KIND, &id);
    let stored = read_item(store, &key)?;
    let read_revision = stored.as_ref().map_or(0, |(r, _)| *r);
    expected(command, &key, read_revision)?;
    let proposal_id = opt_text(payload, "proposalId")?.map(str::to_owned);
    let proposal = match &proposal_id {
        Some(p) => read_proposal(store, &AggregateKey::new(PROPOSAL_AGGREGATE_KIND, p))?,
        None => None,
    };
    // The declared dependencies (the payload's contract, else the proposal's) and what they
    // reach: the new node's checks need nothing else (§10.4).
    let declared: Vec<&str> = match payload.get("contract") {
        Some(contract) => contract
            .get("dependencyWorkItemIds")
            .and_then(|ids| ids.as_array())
            .map(|ids| ids.iter().filter_map(|id| id.as_str()).collect())
            .unwrap_or_default(),
        None => proposal.as_ref().map_or_else(Vec::new, |(_, p)| {
            p.contract
                .dependencies()
                .iter()
                .map(String::as_str)
                .collect()
        }),
    };
    let closure = dependency_closure(store, mission.mission_id(), &declared)?;
    let graph = DependencyGraph::from_items(&closure)?;
    let conversation_id = match opt_text(payload, "conversationId")? {
        Some(c) => c.to_owned(),
        None => command
            .conversation_id()
            .map(str::to_owned)
            .ok_or_else(|| EngineError::invalid("missing_member", "conversationId is required"))?,
    };
    let transition = authorize(
        stored.as_ref().map(|(_, item)| item),
        proposal.as_ref().map(|(_, p)| p),
        &graph,
        AuthorizeInput {
            work_item_id: id,
            mission_id: mission.mission_id().to_owned(),
            group_id: mission.group_id().to_owned(),
            conversation_id,
            exclusive: opt_bool(payload, "exclusive")?.unwrap_or(true),
            contract: payload.get("contract").cloned(),
            authorized_by: actor(command),
            proposal_id: proposal_id.clone(),
        },
        now,
    )?;
    let authorized = transition.state;
    let mut decision = put_item(
        base,
        command,
        &authorized.item,
        read_revision,
        transition.events,
    )?;
    // §12: the contract's limits are reserved against what the Mission has left unreserved, in
    // the same transaction as the Event (`BUDGET_EXCEEDED` otherwise, nothing applied).
    let (mission_account_revision, mut mission_account) =
        read_account(store, AccountKind::Mission, mission.mission_id())?;
    let budget = authorized
        .item
        .contract
        .document()
        .get("budget")
        .cloned()
        .unwrap_or(Value::Null);
    let item_account =
        BudgetAccount::work_item(&mut mission_account, &authorized.item.work_item_id, &budget)?;
    decision = decision
        .put(
            mission_account.key(),
            mission_account_revision,
            mission_account.to_blob(),
        )
        .put(item_account.key(), 0, item_account.to_blob());
    if let (Some(p), Some((proposal_revision, _))) = (authorized.proposal, proposal) {
        decision = decision.put(
            AggregateKey::new(PROPOSAL_AGGREGATE_KIND, &p.proposal_id),
            proposal_revision,
            Blob::from(p.to_canonical_bytes()?),
        );
    }
    Ok(decision)
}

/// Every other row: an existing WorkItem of this Mission.
fn existing_item(
    store: &dyn Store,
    command: &VerifiedCommand,
    mission: &Mission,
    base: Decision,
    as_coordinator: bool,
    now: UnixMillis,
) -> Result<Decision, EngineError> {
    let kind = static_kind(command.kind())?;
    let payload = command.payload();
    let id = work_item_id(command)?;
    let key = AggregateKey::new(AGGREGATE_KIND, &id);
    let Some((read_revision, item)) = read_item(store, &key)? else {
        return Err(WorkError::InvalidTransition {
            command: kind,
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
    expected(command, &key, read_revision)?;
    // §10.2 row 15: ownership is fenced while a linked child Mission runs.
    let claimed = payload
        .get("ownershipEpoch")
        .and_then(|e| e.as_number()?.as_u64());
    let base = crate::mission::link::fence_parent_item(store, base, &item, claimed, kind)?;
    let grant = |purpose: &str| -> Result<_, EngineError> {
        Ok(lease_grant(command, purpose, now, lease_length(command)?))
    };
    let transition: Transition<WorkItem> = match kind {
        "work.offer" => offer(
            &item,
            OfferInput {
                candidates: candidates(payload)?,
                expires_at: after(now, lease_seconds(payload, "offerExpiresInSeconds")?),
                selection_basis: object(payload, "selectionBasis")?,
            },
            now,
        )?,
        "work.accept_offer" => {
            let lease = grant("ownership")?;
            accept_offer(
                &item,
                AcceptOfferInput {
                    agent_id: command.actor().id.clone(),
                    session_epoch: session_epoch(command)?,
                    capability_pins: array(payload, "capabilityPins")?.to_vec(),
                    start_by: lease.expires_at,
                    ownership_lease: lease,
                },
                now,
            )?
        }
        "work.start" => {
            let states = dependency_states(store, &item)?;
            start(
                &item,
                StartInput {
                    claim: claim(command)?,
                    execution_lease: grant("execution")?,
                    // Row 6 / §12: a stored Execution Approval for the current Ownership
                    // Epoch, unexpired, covering the contract's high-risk operations.
                    execution_approved: crate::approval::gate::start_gate(store, &item, now)?,
                },
                |dependency| states.get(dependency).copied(),
                now,
            )?
        }
        "work.checkpoint" => checkpoint(
            &item,
            CheckpointInput {
                claim: claim(command)?,
                checkpoint: object(payload, "checkpoint")?,
                ownership_lease: grant("ownership")?,
            },
            now,
        )?,
        "work.block" => block(
            &item,
            BlockInput {
                claim: claim(command)?,
                reason: text(payload, "reason")?.to_owned(),
                checkpoint: object(payload, "checkpoint")?,
                blocked_lease: grant("blocked")?,
            },
            now,
        )?,
        "work.unblock" => unblock(
            &item,
            UnblockInput {
                ownership_lease: Some(grant("ownership")?),
            },
            now,
        )?,
        "work.submit" => submit(
            &item,
            SubmitInput {
                claim: claim(command)?,
                artifact_hashes: published(
                    store,
                    &id,
                    artifact_hashes(payload, "artifactHashes")?,
                )?,
                evidence: evidence(payload)?,
            },
            now,
        )?,
        "work.accept_result" => accept_result(
            &item,
            AcceptResultInput {
                evidence: evidence(payload)?,
            },
            now,
        )?,
        "work.fail" => fail(
            &item,
            FailInput {
                reason: text(payload, "reason")?.to_owned(),
                evidence_ids: strings(payload, "evidenceIds")?,
                claim: if as_coordinator {
                    None
                } else {
                    Some(claim(command)?)
                },
            },
            now,
        )?,
        "work.cancel" => cancel(
            &item,
            CancelInput {
                reason: text(payload, "reason")?.to_owned(),
            },
            now,
        )?,
        "ext.missionweaveprotocol.core.work_execution_lease_renew" => renew_execution_lease(
            &item,
            RenewInput {
                claim: claim(command)?,
                expires_at: after(now, lease_length(command)?),
                progress: payload.get("progress").cloned(),
            },
            now,
        )?,
        "ext.missionweaveprotocol.core.work_dependency_add" => {
            let dependency = text(payload, "dependencyId")?;
            let closure = dependency_closure(
                store,
                mission.mission_id(),
                &[&item.work_item_id, dependency],
            )?;
            let graph = DependencyGraph::from_items(&closure)?;
            add_dependency(&item, &graph, dependency, now)?
        }
        other => {
            return Err(EngineError::invalid(
                "unsupported_kind",
                format!("{other} is not a WorkItem Command"),
            ));
        }
    };
    // §11.5: a lease replaced by a new `work.start` stays readable for offline reconciliation.
    let base = super::offline::archive_replaced_lease(base, &item, &transition.state)?;
    // §11.3: the owner's lease index lists every item on which it holds an active lease, so a
    // Session replacement can revoke them (`organization/lease_index.rs`).
    let base = track(store, base, &transition.state)?;
    put_item(
        base,
        command,
        &transition.state,
        read_revision,
        transition.events,
    )
}

/// §13.1, §13.2: every Artifact a submission cites was published for this WorkItem
/// (`artifact.publish`, which verified its signed manifest); unpublished content is refused
/// with `INVALID_COMMAND` (`artifact_not_published`).
fn published(
    store: &dyn Store,
    work_item_id: &str,
    hashes: Vec<String>,
) -> Result<Vec<String>, EngineError> {
    for hash in &hashes {
        if store
            .aggregate(&crate::artifact::published_key(work_item_id, hash))?
            .is_none()
        {
            return Err(EngineError::invalid(
                "artifact_not_published",
                format!(
                    "no Artifact with content {hash} was published for WorkItem {work_item_id}"
                ),
            ));
        }
    }
    Ok(hashes)
}

/// §15.3: `expectedRevision`, when present, names the addressed aggregate's current revision
/// (0: it does not exist yet).
fn expected(
    command: &VerifiedCommand,
    key: &AggregateKey,
    current: u64,
) -> Result<(), EngineError> {
    match command.expected_revision() {
        Some(expected) if expected != current => Err(EngineError::RevisionConflict {
            key: key.clone(),
            expected,
            current,
        }),
        _ => Ok(()),
    }
}

fn static_kind(kind: &str) -> Result<&'static str, EngineError> {
    super::commands::KINDS
        .iter()
        .copied()
        .find(|k| *k == kind)
        .ok_or_else(|| EngineError::invalid("unsupported_kind", format!("{kind} is not wired")))
}

fn actor(command: &VerifiedCommand) -> Actor {
    let actor_type = match command.actor().kind {
        PrincipalType::Agent => ActorType::Agent,
        PrincipalType::Human => ActorType::Human,
        PrincipalType::Service => ActorType::Service,
    };
    Actor {
        actor_type,
        id: command.actor().id.clone(),
    }
}
