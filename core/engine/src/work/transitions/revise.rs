//! Dynamic dependency insertion (§10.4; ext Command, Event `work.contract.revised`).
//!
//! The edge is checked against the Mission's [`DependencyGraph`] (cycles refused with their
//! path). The contract gets the dependency and the next `contractVersion` (§10.1: a material
//! revision). Because a revised contract needs renewed Worker acceptance (§10.1) and there is
//! no re-acceptance Command in 0.1, insertion is allowed only while nobody owns the item:
//! `open`, `offered` (pending offers bound to the old revision are withdrawn; the state stays
//! `offered`, as no §10.2 row moves it) and `failed`. Elsewhere: `INVALID_STATE_TRANSITION`.

use missionweaveprotocol::json::Value;

use super::{event, integer, require_state, touch};
use crate::work::dependencies::DependencyGraph;
use crate::work::error::WorkError;
use crate::work::state::{OfferStatus, Transition, WorkItem, WorkItemState};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// Adds `dependency_id` to `item`'s contract. The engine then calls
/// [`DependencyGraph::insert_edge`] with the same pair (already checked here).
pub fn add_dependency(
    item: &WorkItem,
    graph: &DependencyGraph,
    dependency_id: &str,
    now: UnixMillis,
) -> Result<Transition<WorkItem>, WorkError> {
    use WorkItemState::*;
    require_state(item, "work.contract.revised", &[Open, Offered, Failed])?;
    graph.check_edge(&item.work_item_id, dependency_id)?;
    let contract = item.contract.with_dependency(dependency_id)?;
    let mut next = item.clone();
    next.contract = contract;
    let mut withdrawn = Vec::new();
    for offer in &mut next.offers {
        if offer.status == OfferStatus::Pending {
            offer.status = OfferStatus::Withdrawn;
            withdrawn.push(Value::string(offer.offer_id.as_str()));
        }
    }
    touch(&mut next, now);
    let revised = event(
        "work.contract.revised",
        &next,
        [
            ("dependencyId", Value::string(dependency_id)),
            ("contractVersion", integer(next.contract.version())),
            ("withdrawnOfferIds", Value::Array(withdrawn)),
        ],
    );
    Ok(Transition {
        state: next,
        events: vec![revised],
    })
}
