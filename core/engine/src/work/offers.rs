//! Offers and ownership (§10.3, digest 2.6): rows 3–5.
//!
//! - `work.offer` creates, replaces or extends a durable offer. It reserves nothing. An owner
//!   whose leases lapsed is fenced first (its leases recorded `expired`); a live owner blocks
//!   re-offering (`INVALID_STATE_TRANSITION`, reason `owner_live`). Earlier pending offers are
//!   `withdrawn`.
//! - `work.accept_offer`: the first valid acceptance wins a new Ownership Epoch (previous + 1)
//!   and an ownership lease with a start-by deadline (§11.3); every other pending offer becomes
//!   `lost_race` in the same transition, so no loser can ever start (§10.3). A later acceptance
//!   by a loser gets `WORK_ALREADY_OWNED`.
//! - Offer expiry (row 5) appends nothing and changes nothing: an acceptance at or after
//!   `expiresAt` gets `WORK_OFFER_EXPIRED` and leaves the item as it was.

use missionweaveprotocol::json::Value;

use crate::work::error::WorkError;
use crate::work::fencing::{binding, close_leases, owner_is_live};
use crate::work::state::{
    LeaseGrant, Offer, OfferStatus, Owner, Transition, WorkItem, WorkItemState,
};
use crate::work::transitions::create::check_id;
use crate::work::transitions::{event, integer, object, require_state, strings, timestamp, touch};
use missionweaveprotocol_kernel::lease::{Lease, LeaseState, LeaseWindow};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// One candidate of an offer round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OfferCandidate {
    /// New offer ID.
    pub offer_id: String,
    /// Candidate Worker.
    pub agent_id: String,
    /// Its Agent Card version.
    pub agent_card_version: u64,
}

/// `work.offer` input.
#[derive(Clone, Debug, PartialEq)]
pub struct OfferInput {
    /// Candidates (≥ 1, distinct Agents): one for sequential offers, a bounded set for urgent
    /// placement (§10.3).
    pub candidates: Vec<OfferCandidate>,
    /// When acceptance stops being valid.
    pub expires_at: UnixMillis,
    /// The structured selection basis (`work-item.schema.json` `selectionBasis`, §10.3).
    pub selection_basis: Value,
}

const SELECTION_BASIS: [&str; 7] = [
    "requiredCapabilities",
    "verifiedMatches",
    "authorizationEligible",
    "availabilityEstimate",
    "expectedCost",
    "reliabilityEvidence",
    "policyRulesApplied",
];

/// Row 3: `open`, `offered`, `queued`, `active`, `blocked` or `failed` with no live owner →
/// `offered`.
pub fn offer(
    item: &WorkItem,
    input: OfferInput,
    now: UnixMillis,
) -> Result<Transition<WorkItem>, WorkError> {
    use WorkItemState::*;
    require_state(
        item,
        "work.offer",
        &[Open, Offered, Queued, Active, Blocked, Failed],
    )?;
    if owner_is_live(item, now) {
        return Err(WorkError::LiveOwner);
    }
    if input.candidates.is_empty() {
        return Err(WorkError::InvalidInput(
            "candidates",
            "at least one candidate",
        ));
    }
    for (index, candidate) in input.candidates.iter().enumerate() {
        check_id("offerId", &candidate.offer_id)?;
        check_id("agentId", &candidate.agent_id)?;
        if candidate.agent_card_version == 0 {
            return Err(WorkError::InvalidInput(
                "agentCardVersion",
                "must be positive",
            ));
        }
        let earlier = &input.candidates[..index];
        if earlier.iter().any(|c| c.agent_id == candidate.agent_id)
            || earlier.iter().any(|c| c.offer_id == candidate.offer_id)
            || item.offers.iter().any(|o| o.offer_id == candidate.offer_id)
        {
            return Err(WorkError::InvalidInput(
                "candidates",
                "duplicate Agent or offer ID",
            ));
        }
    }
    if input.expires_at <= now {
        return Err(WorkError::InvalidInput(
            "expiresAt",
            "must be in the future",
        ));
    }
    let basis_ok = input
        .selection_basis
        .as_object()
        .is_some_and(|b| SELECTION_BASIS.into_iter().all(|m| b.contains(m)));
    if !basis_ok {
        return Err(WorkError::InvalidInput(
            "selectionBasis",
            "every assignment records a structured selection basis (§10.3)",
        ));
    }
    let mut next = item.clone();
    // "an expired owner is fenced first" (§10.2 row 3, §11.5).
    let fenced_epoch = next.owner.as_ref().map(|o| o.ownership_epoch);
    close_leases(&mut next, now, LeaseState::Revoked, "reassigned")?;
    let mut withdrawn = Vec::new();
    for offer in &mut next.offers {
        if offer.status == OfferStatus::Pending {
            offer.status = OfferStatus::Withdrawn;
            withdrawn.push(offer.offer_id.clone());
        }
    }
    for candidate in &input.candidates {
        next.offers.push(Offer {
            offer_id: candidate.offer_id.clone(),
            agent_id: candidate.agent_id.clone(),
            agent_card_version: candidate.agent_card_version,
            expires_at: input.expires_at,
            status: OfferStatus::Pending,
        });
    }
    next.offered_selection_basis = Some(input.selection_basis.clone());
    next.blocker = None;
    next.state = Offered;
    touch(&mut next, now);
    let offers = input
        .candidates
        .iter()
        .map(|c| {
            Ok(object([
                ("offerId", Value::string(c.offer_id.as_str())),
                ("agentId", Value::string(c.agent_id.as_str())),
                ("agentCardVersion", integer(c.agent_card_version)),
                ("expiresAt", timestamp(input.expires_at)?),
            ]))
        })
        .collect::<Result<Vec<_>, WorkError>>()?;
    let mut created = event(
        "work.offer.created",
        &next,
        [
            ("offers", Value::Array(offers)),
            ("selectionBasis", input.selection_basis),
            ("withdrawnOfferIds", strings(&withdrawn)),
        ],
    );
    if let (Some(epoch), Value::Object(payload)) = (fenced_epoch, &mut created.payload) {
        payload.insert("fencedOwnershipEpoch", integer(epoch));
    }
    Ok(Transition {
        state: next,
        events: vec![created],
    })
}

/// `work.accept_offer` input.
#[derive(Clone, Debug, PartialEq)]
pub struct AcceptOfferInput {
    /// The accepting Worker.
    pub agent_id: String,
    /// Its current Session Epoch (the engine checked it).
    pub session_epoch: u64,
    /// `capabilityRef` objects pinned at acceptance (≥ 1).
    pub capability_pins: Vec<Value>,
    /// The ownership lease to grant (new Lease ID, expiry).
    pub ownership_lease: LeaseGrant,
    /// Start-by deadline (§11.3), within the lease.
    pub start_by: UnixMillis,
}

/// Pending offers past their expiry at `now` (row 5). A pure observation: nothing changes and
/// no Event is appended.
pub fn expired_offers(item: &WorkItem, now: UnixMillis) -> Vec<&Offer> {
    item.offers
        .iter()
        .filter(|o| o.status == OfferStatus::Pending && now >= o.expires_at)
        .collect()
}

/// Row 4: `offered` → `queued`; a new Ownership Epoch begins atomically.
pub fn accept_offer(
    item: &WorkItem,
    input: AcceptOfferInput,
    now: UnixMillis,
) -> Result<Transition<WorkItem>, WorkError> {
    let mine = |status: OfferStatus| {
        item.offers
            .iter()
            .rev()
            .find(|o| o.agent_id == input.agent_id && o.status == status)
    };
    if item.state != WorkItemState::Offered {
        // A loser of the race learns that someone else won (§10.3), whatever came after.
        if mine(OfferStatus::LostRace).is_some() {
            return Err(WorkError::AlreadyOwned);
        }
        return Err(WorkError::InvalidTransition {
            command: "work.accept_offer",
            from: Some(item.state),
        });
    }
    let Some(offer) = mine(OfferStatus::Pending) else {
        return Err(if mine(OfferStatus::LostRace).is_some() {
            WorkError::AlreadyOwned
        } else {
            WorkError::NotOffered
        });
    };
    if now >= offer.expires_at {
        return Err(WorkError::OfferExpired);
    }
    if input.capability_pins.is_empty() {
        return Err(WorkError::InvalidInput(
            "capabilityPins",
            "at least one pin",
        ));
    }
    let offer_id = offer.offer_id.clone();
    let agent_card_version = offer.agent_card_version;
    let epoch = item
        .owner
        .as_ref()
        .map_or(1, |o| o.ownership_epoch.saturating_add(1));
    let lease = Lease::ownership(
        binding(
            item,
            &input.agent_id,
            input.session_epoch,
            &input.ownership_lease.lease_id,
        ),
        &item.work_item_id,
        epoch,
        input.start_by,
        LeaseWindow {
            issued_at: now,
            starts_at: now,
            expires_at: input.ownership_lease.expires_at,
        },
    )?;
    let mut next = item.clone();
    let mut lost = Vec::new();
    for offer in &mut next.offers {
        if offer.offer_id == offer_id {
            offer.status = OfferStatus::Accepted;
        } else if offer.status == OfferStatus::Pending {
            offer.status = OfferStatus::LostRace;
            lost.push(offer.offer_id.clone());
        }
    }
    next.owner = Some(Owner {
        agent_id: input.agent_id.clone(),
        agent_card_version,
        capability_pins: input.capability_pins,
        ownership_epoch: epoch,
        ownership_lease_id: input.ownership_lease.lease_id.clone(),
        accepted_at: now,
    });
    next.selection_basis = next.offered_selection_basis.take();
    next.ownership_lease = Some(lease);
    next.execution_lease = None;
    next.state = WorkItemState::Queued;
    touch(&mut next, now);
    let accepted = event(
        "work.offer.accepted",
        &next,
        [
            ("offerId", Value::string(offer_id.as_str())),
            ("agentId", Value::string(input.agent_id.as_str())),
            ("ownershipEpoch", integer(epoch)),
            (
                "ownershipLeaseId",
                Value::string(input.ownership_lease.lease_id.as_str()),
            ),
            ("startBy", timestamp(input.start_by)?),
            (
                "leaseExpiresAt",
                timestamp(input.ownership_lease.expires_at)?,
            ),
            ("lostRaceOfferIds", strings(&lost)),
        ],
    );
    Ok(Transition {
        state: next,
        events: vec![accepted],
    })
}
