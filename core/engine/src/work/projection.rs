//! Rebuilding a Group's WorkItems from its Event log alone (§16 replay, §7.4 "reconnection MAY
//! use a snapshot followed by later Events"): the replica-side reducer.
//!
//! [`rebuild`] folds the verified Event documents of one Group, in sequence order, into one
//! [`WorkItemProjection`] per WorkItem; [`WorkItemProjection::of`] is the same view of a stored
//! [`WorkItem`], so a replica can check that it reached what the authority stored. Every
//! WorkItem Event's `aggregateRevision` (and payload `revision`) must be the revision the item
//! reaches, so a missing or reordered Event is detected rather than silently skipped.
//!
//! Folded kinds: `work.authorized`, `work.offer.created`, `work.offer.accepted`,
//! `work.started`, `work.progressed`, `work.checkpointed`, `work.blocked`, `work.unblocked`,
//! `work.submitted`, `work.result.accepted`, `work.failed`, `work.cancelled` (also row 18, with
//! `cause`), `work.contract.revised`, `…core.work_execution_lease_revoked` (session
//! replacement), plus `work.proposed` (for `createdBy`), `artifact.published` and
//! `…core.resource_usage_recorded`, which change no WorkItem revision but are observable per
//! item. Other kinds (Mission, Messages, …) are skipped.
//!
//! What the Events do **not** carry, and so the projection leaves out (a replica cannot know it):
//!
//! - the Owner's `capabilityPins` (`work.offer.accepted` names the offer, not the pins);
//! - the Session Epoch a lease is bound to, except after a session replacement (the causing
//!   Command's `sessionEpoch` is not copied into the Event);
//! - Evidence documents: `work.submitted` and `work.result.accepted` carry Evidence IDs only,
//!   not their type, criteria or result;
//! - lease closure reasons (fixed texts chosen by the transition; the state and instant are
//!   kept);
//! - the Work Proposal aggregate itself (only its proposer is used).
//!
//! `work.unblocked` (→ `queued`) carries `leaseExpiresAt` for this reducer (docs/work.md).

use std::collections::BTreeMap;

use missionweaveprotocol::json::{Number, Value};
use missionweaveprotocol::schema_formats::Timestamp;

use super::contract::WorkContract;
use super::state::{Actor, ActorType, Offer, OfferStatus, WorkItem, WorkItemState};
use super::transitions::session::LEASE_REVOKED_EVENT;
use crate::error::EngineError;
use crate::store::AggregateKey;
use crate::work::document::AGGREGATE_KIND;
use missionweaveprotocol_kernel::lease::{Lease, LeaseState, LeaseType};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// `artifact.published` (§13.1).
const ARTIFACT_PUBLISHED: &str = "artifact.published";
/// The resource-usage Event (`work/usage.rs`).
const USAGE_RECORDED: &str = "ext.missionweaveprotocol.core.resource_usage_recorded";

/// What a replica can know of a lease from the Events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseView {
    /// Lease ID.
    pub lease_id: String,
    /// `ownership`, `execution` or `blocked`.
    pub lease_type: LeaseType,
    /// The holding Agent.
    pub holder_agent_id: String,
    /// The Ownership Epoch it carries.
    pub ownership_epoch: Option<u64>,
    /// Issued (and started) at.
    pub issued_at: UnixMillis,
    /// Current expiry (after renewals).
    pub expires_at: UnixMillis,
    /// Start-by deadline of an ownership lease (§11.3).
    pub start_by: Option<UnixMillis>,
    /// The recorded state (a lapsed lease stays `active` until something records it).
    pub state: LeaseState,
    /// Renewals so far.
    pub renewal_count: u64,
    /// The last renewal instant.
    pub last_renewed_at: Option<UnixMillis>,
    /// When it was closed.
    pub closed_at: Option<UnixMillis>,
}

impl LeaseView {
    /// The view of a stored lease.
    pub fn of(lease: &Lease) -> Self {
        let window = lease.window();
        Self {
            lease_id: lease.lease_id().to_owned(),
            lease_type: lease.lease_type(),
            holder_agent_id: lease.binding().holder_agent_id.clone(),
            ownership_epoch: lease.ownership_epoch(),
            issued_at: window.issued_at,
            expires_at: window.expires_at,
            start_by: lease.start_by(),
            state: lease.state(),
            renewal_count: lease.renewal_count(),
            last_renewed_at: lease.last_renewed_at(),
            closed_at: lease.closed_at(),
        }
    }

    /// Closes it at `at` with `state` if still recorded active; a lapsed one is recorded
    /// `expired` (as `fencing::close_lease`).
    fn close(&mut self, at: UnixMillis, state: LeaseState) {
        if self.state != LeaseState::Active {
            return;
        }
        self.state = if at >= self.expires_at {
            LeaseState::Expired
        } else {
            state
        };
        self.closed_at = Some(at);
    }
}

/// The owner as the Events describe it (no capability pins, see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnerView {
    /// Owning Worker.
    pub agent_id: String,
    /// Its Agent Card version (the accepted offer's).
    pub agent_card_version: u64,
    /// The Ownership Epoch (§4.5).
    pub ownership_epoch: u64,
    /// The ownership lease granted at acceptance.
    pub ownership_lease_id: String,
    /// When the offer was accepted.
    pub accepted_at: UnixMillis,
}

/// The submission as the Events describe it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubmissionView {
    /// Submitted Artifact hashes.
    pub artifact_hashes: Vec<String>,
    /// The submission's Evidence IDs.
    pub evidence_ids: Vec<String>,
    /// When.
    pub submitted_at: UnixMillis,
}

/// The observable state of one WorkItem: everything the Group's Events determine.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkItemProjection {
    /// WorkItem ID.
    pub work_item_id: String,
    /// Its Mission.
    pub mission_id: String,
    /// The WorkItem Conversation.
    pub conversation_id: String,
    /// Exclusive ownership (§4.5).
    pub exclusive: bool,
    /// Aggregate revision (= the last WorkItem Event's `aggregateRevision`).
    pub revision: u64,
    /// §10.2 state.
    pub state: WorkItemState,
    /// The Work Contract document (with its `contractVersion` and dependencies).
    pub contract: Value,
    /// `contractVersion`.
    pub contract_version: u64,
    /// `dependencyWorkItemIds`.
    pub dependencies: Vec<String>,
    /// Every offer, newest last, with its status.
    pub offers: Vec<Offer>,
    /// The winning offer round's selection basis.
    pub selection_basis: Option<Value>,
    /// The pending offer round's selection basis.
    pub offered_selection_basis: Option<Value>,
    /// The current or last owner.
    pub owner: Option<OwnerView>,
    /// The ownership or blocked lease.
    pub ownership_lease: Option<LeaseView>,
    /// The Execution Lease.
    pub execution_lease: Option<LeaseView>,
    /// Latest progress report.
    pub progress: Option<Value>,
    /// The open blocker.
    pub blocker: Option<String>,
    /// Submission.
    pub submission: Option<SubmissionView>,
    /// Review Evidence IDs (`work.accept_result`).
    pub review_evidence_ids: Vec<String>,
    /// Failure reason and Evidence IDs.
    pub failure: Option<(String, Vec<String>)>,
    /// Cancellation reason.
    pub cancel_reason: Option<String>,
    /// Proposer, or the authorizer.
    pub created_by: Actor,
    /// Authorizer.
    pub authorized_by: Actor,
    /// Creation instant.
    pub created_at: UnixMillis,
    /// Last change.
    pub updated_at: UnixMillis,
    /// Artifacts published for it: Artifact ID → content hash (stored outside the WorkItem, as
    /// `artifact` aggregates; [`of`](Self::of) leaves it empty).
    pub published_artifacts: BTreeMap<String, String>,
    /// Cumulative resource usage (the WorkItem's budget account; [`of`](Self::of) leaves it
    /// `None`).
    pub cumulative_usage: Option<Value>,
}

impl WorkItemProjection {
    /// The view of a stored WorkItem (without the two members stored elsewhere:
    /// `published_artifacts`, `cumulative_usage`).
    pub fn of(item: &WorkItem) -> Self {
        Self {
            work_item_id: item.work_item_id.clone(),
            mission_id: item.mission_id.clone(),
            conversation_id: item.conversation_id.clone(),
            exclusive: item.exclusive,
            revision: item.revision,
            state: item.state,
            contract: item.contract.document().clone(),
            contract_version: item.contract.version(),
            dependencies: item.contract.dependencies().to_vec(),
            offers: item.offers.clone(),
            selection_basis: item.selection_basis.clone(),
            offered_selection_basis: item.offered_selection_basis.clone(),
            owner: item.owner.as_ref().map(|o| OwnerView {
                agent_id: o.agent_id.clone(),
                agent_card_version: o.agent_card_version,
                ownership_epoch: o.ownership_epoch,
                ownership_lease_id: o.ownership_lease_id.clone(),
                accepted_at: o.accepted_at,
            }),
            ownership_lease: item.ownership_lease.as_ref().map(LeaseView::of),
            execution_lease: item.execution_lease.as_ref().map(LeaseView::of),
            progress: item.progress.clone(),
            blocker: item.blocker.clone(),
            submission: item.submission.as_ref().map(|s| SubmissionView {
                artifact_hashes: s.artifact_hashes.clone(),
                evidence_ids: s.evidence.iter().map(|e| e.evidence_id.clone()).collect(),
                submitted_at: s.submitted_at,
            }),
            review_evidence_ids: item
                .review_evidence
                .iter()
                .map(|e| e.evidence_id.clone())
                .collect(),
            failure: item.failure.clone(),
            cancel_reason: item.cancel_reason.clone(),
            created_by: item.created_by.clone(),
            authorized_by: item.authorized_by.clone(),
            created_at: item.created_at,
            updated_at: item.updated_at,
            published_artifacts: BTreeMap::new(),
            cumulative_usage: None,
        }
    }
}

/// The fold state: the WorkItems so far and the Work Proposals' proposers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorkProjection {
    /// WorkItem ID → its projection.
    pub items: BTreeMap<String, WorkItemProjection>,
    /// Work Proposal ID → proposer (for `createdBy`).
    proposers: BTreeMap<String, Actor>,
}

/// Folds the WorkItem Events among `events` (Event documents of one Group, in sequence order).
pub fn rebuild<'a>(
    events: impl IntoIterator<Item = &'a Value>,
) -> Result<BTreeMap<String, WorkItemProjection>, EngineError> {
    let mut projection = WorkProjection::default();
    for event in events {
        projection.apply(event)?;
    }
    Ok(projection.items)
}

impl WorkProjection {
    /// Applies one Event document; kinds that concern no WorkItem are skipped.
    pub fn apply(&mut self, event: &Value) -> Result<(), EngineError> {
        let kind = event
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let payload = event.get("payload");
        match kind {
            "work.proposed" => {
                let p = payload.ok_or_else(|| broken("-", "an Event without payload"))?;
                let id = text(p, "proposalId", "-")?;
                let by = actor(p.get("proposedBy"), &id)?;
                self.proposers.insert(id, by);
                Ok(())
            }
            "work.authorized" => self.authorized(event),
            ARTIFACT_PUBLISHED => {
                let manifest = payload
                    .and_then(|p| p.get("artifact"))
                    .ok_or_else(|| broken("-", "artifact.published without its manifest"))?;
                let id = text(manifest, "workItemId", "-")?;
                let item = self.item(&id)?;
                item.published_artifacts.insert(
                    text(manifest, "artifactId", &id)?,
                    text(manifest, "contentHash", &id)?,
                );
                Ok(())
            }
            USAGE_RECORDED => {
                let p = payload.ok_or_else(|| broken("-", "an Event without payload"))?;
                let id = text(p, "workItemId", "-")?;
                let usage = p
                    .get("cumulativeUsage")
                    .cloned()
                    .ok_or_else(|| broken(&id, "no cumulativeUsage"))?;
                self.item(&id)?.cumulative_usage = Some(usage);
                Ok(())
            }
            k if k.starts_with("work.") || k == LEASE_REVOKED_EVENT => self.transition(event, k),
            _ => Ok(()),
        }
    }

    fn item(&mut self, id: &str) -> Result<&mut WorkItemProjection, EngineError> {
        self.items
            .get_mut(id)
            .ok_or_else(|| broken(id, "an Event about a WorkItem not authorized before"))
    }

    fn authorized(&mut self, event: &Value) -> Result<(), EngineError> {
        let p = event
            .get("payload")
            .ok_or_else(|| broken("-", "an Event without payload"))?;
        let id = text(p, "workItemId", "-")?;
        if self.items.contains_key(&id) {
            return Err(broken(&id, "authorized twice"));
        }
        let contract = p
            .get("contract")
            .cloned()
            .ok_or_else(|| broken(&id, "no contract"))?;
        let parsed = WorkContract::from_value(contract.clone()).map_err(|e| broken(&id, &e))?;
        let authorized_by = actor(p.get("authorizedBy"), &id)?;
        let created_by = match p.get("proposalId").and_then(Value::as_str) {
            Some(proposal) => self
                .proposers
                .get(proposal)
                .cloned()
                .ok_or_else(|| broken(&id, "an unknown Work Proposal"))?,
            None => authorized_by.clone(),
        };
        let created_at = millis(p.get("createdAt"), &id)?;
        let item = WorkItemProjection {
            work_item_id: id.clone(),
            mission_id: text(p, "missionId", &id)?,
            conversation_id: text(p, "conversationId", &id)?,
            exclusive: p.get("exclusive").and_then(Value::as_bool).unwrap_or(true),
            revision: 1,
            state: WorkItemState::Open,
            contract,
            contract_version: parsed.version(),
            dependencies: parsed.dependencies().to_vec(),
            offers: Vec::new(),
            selection_basis: None,
            offered_selection_basis: None,
            owner: None,
            ownership_lease: None,
            execution_lease: None,
            progress: None,
            blocker: None,
            submission: None,
            review_evidence_ids: Vec::new(),
            failure: None,
            cancel_reason: None,
            created_by,
            authorized_by,
            created_at,
            updated_at: millis(event.get("occurredAt"), &id)?,
            published_artifacts: BTreeMap::new(),
            cumulative_usage: None,
        };
        check_revision(event, &item)?;
        self.items.insert(id, item);
        Ok(())
    }

    fn transition(&mut self, event: &Value, kind: &str) -> Result<(), EngineError> {
        let p = event
            .get("payload")
            .ok_or_else(|| broken("-", "an Event without payload"))?;
        let id = text(p, "workItemId", "-")?;
        let at = millis(event.get("occurredAt"), &id)?;
        let item = self.item(&id)?;
        apply_transition(item, kind, p, at)?;
        item.revision += 1;
        item.updated_at = at;
        check_revision(event, item)
    }
}

/// The state change of one WorkItem Event (`transitions/*`, `offers`), from its payload.
fn apply_transition(
    item: &mut WorkItemProjection,
    kind: &str,
    p: &Value,
    at: UnixMillis,
) -> Result<(), EngineError> {
    let id = item.work_item_id.clone();
    let id = id.as_str();
    let owner_agent = |item: &WorkItemProjection| {
        item.owner
            .as_ref()
            .map(|o| o.agent_id.clone())
            .ok_or_else(|| broken(id, "a lease Event without an owner"))
    };
    match kind {
        "work.offer.created" => {
            // An expired owner is fenced first (its leases recorded `expired`).
            close_all(item, at);
            withdraw(item, Some(&ids(p, "withdrawnOfferIds", id)?));
            for offer in p
                .get("offers")
                .and_then(Value::as_array)
                .ok_or_else(|| broken(id, "no offers"))?
            {
                item.offers.push(Offer {
                    offer_id: text(offer, "offerId", id)?,
                    agent_id: text(offer, "agentId", id)?,
                    agent_card_version: int(offer.get("agentCardVersion"), id)?,
                    expires_at: millis(offer.get("expiresAt"), id)?,
                    status: OfferStatus::Pending,
                });
            }
            item.offered_selection_basis = p.get("selectionBasis").cloned();
            item.blocker = None;
            item.state = WorkItemState::Offered;
        }
        "work.offer.accepted" => {
            let offer_id = text(p, "offerId", id)?;
            let lost = ids(p, "lostRaceOfferIds", id)?;
            let mut card = None;
            for offer in &mut item.offers {
                if offer.offer_id == offer_id {
                    offer.status = OfferStatus::Accepted;
                    card = Some(offer.agent_card_version);
                } else if lost.contains(&offer.offer_id) {
                    offer.status = OfferStatus::LostRace;
                }
            }
            let agent_id = text(p, "agentId", id)?;
            let epoch = int(p.get("ownershipEpoch"), id)?;
            let lease_id = text(p, "ownershipLeaseId", id)?;
            item.owner = Some(OwnerView {
                agent_id: agent_id.clone(),
                agent_card_version: card.ok_or_else(|| broken(id, "an unknown offer"))?,
                ownership_epoch: epoch,
                ownership_lease_id: lease_id.clone(),
                accepted_at: at,
            });
            item.selection_basis = item.offered_selection_basis.take();
            item.ownership_lease = Some(new_lease(
                lease_id,
                LeaseType::Ownership,
                agent_id,
                epoch,
                at,
                millis(p.get("leaseExpiresAt"), id)?,
                Some(millis(p.get("startBy"), id)?),
            ));
            item.execution_lease = None;
            item.state = WorkItemState::Queued;
        }
        "work.started" => {
            if let Some(lease) = &mut item.ownership_lease {
                lease.close(at, LeaseState::Released);
            }
            item.execution_lease = Some(new_lease(
                text(p, "executionLeaseId", id)?,
                LeaseType::Execution,
                text(p, "agentId", id)?,
                int(p.get("ownershipEpoch"), id)?,
                at,
                millis(p.get("leaseExpiresAt"), id)?,
                None,
            ));
            item.state = WorkItemState::Active;
        }
        "work.progressed" => {
            let lease = item
                .execution_lease
                .as_mut()
                .ok_or_else(|| broken(id, "a renewal without an Execution Lease"))?;
            lease.expires_at = millis(p.get("leaseExpiresAt"), id)?;
            lease.renewal_count = int(p.get("renewalCount"), id)?;
            lease.last_renewed_at = Some(at);
            if let Some(progress) = p.get("progress") {
                item.progress = Some(progress.clone());
            }
        }
        "work.checkpointed" => {
            let holder = owner_agent(item)?;
            let epoch = item.owner.as_ref().map_or(0, |o| o.ownership_epoch);
            if let Some(lease) = &mut item.execution_lease {
                lease.close(at, LeaseState::Released);
            }
            let resume_by = millis(p.get("resumeBy"), id)?;
            item.ownership_lease = Some(new_lease(
                text(p, "ownershipLeaseId", id)?,
                LeaseType::Ownership,
                holder,
                epoch,
                at,
                resume_by,
                Some(resume_by),
            ));
            item.progress = p.get("checkpoint").cloned();
            item.state = WorkItemState::Queued;
        }
        "work.blocked" => {
            let holder = owner_agent(item)?;
            let epoch = item.owner.as_ref().map_or(0, |o| o.ownership_epoch);
            if let Some(lease) = &mut item.execution_lease {
                lease.close(at, LeaseState::Released);
            }
            item.ownership_lease = Some(new_lease(
                text(p, "blockedLeaseId", id)?,
                LeaseType::Blocked,
                holder,
                epoch,
                at,
                millis(p.get("leaseExpiresAt"), id)?,
                None,
            ));
            item.progress = p.get("checkpoint").cloned();
            item.blocker = Some(text(p, "reason", id)?);
            item.state = WorkItemState::Blocked;
        }
        "work.unblocked" => {
            let next = state(p, "nextState", id)?;
            let holder = owner_agent(item)?;
            let epoch = int(p.get("ownershipEpoch"), id)?;
            if next == WorkItemState::Queued {
                if let Some(lease) = &mut item.ownership_lease {
                    lease.close(at, LeaseState::Released);
                }
                let expires = millis(p.get("leaseExpiresAt"), id)?;
                item.ownership_lease = Some(new_lease(
                    text(p, "ownershipLeaseId", id)?,
                    LeaseType::Ownership,
                    holder,
                    epoch,
                    at,
                    expires,
                    Some(expires),
                ));
            } else if let Some(lease) = &mut item.ownership_lease {
                lease.close(at, LeaseState::Revoked);
            }
            item.blocker = None;
            item.state = next;
        }
        "work.submitted" => {
            if let Some(lease) = &mut item.execution_lease {
                lease.close(at, LeaseState::Released);
            }
            item.submission = Some(SubmissionView {
                artifact_hashes: ids(p, "artifactHashes", id)?,
                evidence_ids: ids(p, "evidenceIds", id)?,
                submitted_at: millis(p.get("submittedAt"), id)?,
            });
            item.state = WorkItemState::Submitted;
        }
        "work.result.accepted" => {
            item.review_evidence_ids = ids(p, "evidenceIds", id)?;
            item.state = WorkItemState::Verified;
        }
        "work.failed" | "work.cancelled" => {
            close_all(item, at);
            withdraw(item, None);
            let reason = text(p, "reason", id)?;
            if kind == "work.failed" {
                // Row 18 (`cause` present) records no failure Evidence.
                let evidence = match p.get("cause") {
                    Some(_) => Vec::new(),
                    None => ids(p, "evidenceIds", id)?,
                };
                item.failure = Some((reason, evidence));
                item.state = WorkItemState::Failed;
            } else {
                item.cancel_reason = Some(reason);
                item.state = WorkItemState::Cancelled;
            }
        }
        "work.contract.revised" => {
            let dependency = text(p, "dependencyId", id)?;
            let contract = WorkContract::from_value(item.contract.clone())
                .and_then(|c| c.with_dependency(&dependency))
                .map_err(|e| broken(id, &e))?;
            if contract.version() != int(p.get("contractVersion"), id)? {
                return Err(broken(id, "contractVersion does not follow"));
            }
            item.contract = contract.document().clone();
            item.contract_version = contract.version();
            item.dependencies = contract.dependencies().to_vec();
            withdraw(item, Some(&ids(p, "withdrawnOfferIds", id)?));
        }
        LEASE_REVOKED_EVENT => revoked(item, p, at)?,
        other => return Err(broken(id, &format!("unknown WorkItem Event kind {other}"))),
    }
    Ok(())
}

/// Session replacement (`transitions::session`): the revoked lease, its replacement.
fn revoked(item: &mut WorkItemProjection, p: &Value, at: UnixMillis) -> Result<(), EngineError> {
    let id = item.work_item_id.clone();
    let id = id.as_str();
    let previous = state(p, "previousState", id)?;
    let slot = if previous == WorkItemState::Active {
        &mut item.execution_lease
    } else {
        &mut item.ownership_lease
    };
    let old = slot
        .as_mut()
        .ok_or_else(|| broken(id, "a revocation without a lease"))?;
    old.close(at, LeaseState::Revoked);
    let old = old.clone();
    let lease_type = LeaseType::parse(&text(p, "leaseType", id)?)
        .ok_or_else(|| broken(id, "an unknown leaseType"))?;
    let expires = millis(p.get("leaseExpiresAt"), id)?;
    let start_by = match (previous, lease_type) {
        (_, LeaseType::Blocked) => None,
        (WorkItemState::Active, _) => Some(expires),
        _ => Some(
            old.start_by
                .unwrap_or(old.expires_at)
                .max(at)
                .min(old.expires_at),
        ),
    };
    item.ownership_lease = Some(new_lease(
        text(p, "leaseId", id)?,
        lease_type,
        text(p, "agentId", id)?,
        int(p.get("ownershipEpoch"), id)?,
        at,
        expires,
        start_by,
    ));
    item.state = state(p, "nextState", id)?;
    Ok(())
}

fn new_lease(
    lease_id: String,
    lease_type: LeaseType,
    holder_agent_id: String,
    ownership_epoch: u64,
    at: UnixMillis,
    expires_at: UnixMillis,
    start_by: Option<UnixMillis>,
) -> LeaseView {
    LeaseView {
        lease_id,
        lease_type,
        holder_agent_id,
        ownership_epoch: Some(ownership_epoch),
        issued_at: at,
        expires_at,
        start_by,
        state: LeaseState::Active,
        renewal_count: 0,
        last_renewed_at: None,
        closed_at: None,
    }
}

/// Fail, cancel and re-offer close every lease still recorded active (`fencing::close_leases`).
fn close_all(item: &mut WorkItemProjection, at: UnixMillis) {
    for lease in [&mut item.ownership_lease, &mut item.execution_lease]
        .into_iter()
        .flatten()
    {
        lease.close(at, LeaseState::Revoked);
    }
}

/// Withdraws the pending offers named in `only`, or every pending one.
fn withdraw(item: &mut WorkItemProjection, only: Option<&[String]>) {
    for offer in &mut item.offers {
        if offer.status == OfferStatus::Pending
            && only.is_none_or(|ids| ids.contains(&offer.offer_id))
        {
            offer.status = OfferStatus::Withdrawn;
        }
    }
}

fn check_revision(event: &Value, item: &WorkItemProjection) -> Result<(), EngineError> {
    let id = item.work_item_id.as_str();
    let revision = int(event.get("aggregateRevision"), id)?;
    let stated = int(event.get("payload").and_then(|p| p.get("revision")), id)?;
    if revision != item.revision || stated != item.revision {
        return Err(broken(
            id,
            &format!(
                "Event at aggregateRevision {revision} after WorkItem revision {}",
                item.revision - 1
            ),
        ));
    }
    Ok(())
}

fn broken(id: &str, detail: &(impl std::fmt::Display + ?Sized)) -> EngineError {
    EngineError::Corrupt {
        key: AggregateKey::new(AGGREGATE_KIND, format!("{id} (replayed)")),
        detail: detail.to_string(),
    }
}

fn text(value: &Value, name: &str, id: &str) -> Result<String, EngineError> {
    value
        .get(name)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| broken(id, &format!("no {name}")))
}

fn ids(value: &Value, name: &str, id: &str) -> Result<Vec<String>, EngineError> {
    value
        .get(name)
        .and_then(Value::as_array)
        .ok_or_else(|| broken(id, &format!("no {name}")))?
        .iter()
        .map(|v| {
            v.as_str()
                .map(str::to_owned)
                .ok_or_else(|| broken(id, &format!("{name} holds a non-string")))
        })
        .collect()
}

fn state(value: &Value, name: &str, id: &str) -> Result<WorkItemState, EngineError> {
    WorkItemState::parse(&text(value, name, id)?)
        .ok_or_else(|| broken(id, &format!("{name} is no WorkItem state")))
}

fn actor(value: Option<&Value>, id: &str) -> Result<Actor, EngineError> {
    let value = value.ok_or_else(|| broken(id, "no actor"))?;
    Ok(Actor {
        actor_type: ActorType::parse(&text(value, "type", id)?)
            .ok_or_else(|| broken(id, "an unknown actor type"))?,
        id: text(value, "id", id)?,
    })
}

fn int(value: Option<&Value>, id: &str) -> Result<u64, EngineError> {
    value
        .and_then(Value::as_number)
        .and_then(Number::as_u64)
        .ok_or_else(|| broken(id, "a missing or non-integer member"))
}

fn millis(value: Option<&Value>, id: &str) -> Result<UnixMillis, EngineError> {
    let text = value
        .and_then(Value::as_str)
        .ok_or_else(|| broken(id, "a missing timestamp"))?;
    let stamp = Timestamp::parse(text).map_err(|e| broken(id, &e))?;
    Ok(UnixMillis(stamp.instant().unix_millis()))
}
