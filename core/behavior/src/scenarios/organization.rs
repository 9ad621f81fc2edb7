//! Organization-scoped service Commands (§15.1, §15.2, digest A.1/A.2): Session opening with
//! Session Epoch fencing and lease revocation on replacement (§6.3, §11.3), and Agent Card
//! registration (digest 2.15). Their Events have no Group: the runner counts them apart from
//! the Group heads.

use missionweaveprotocol::WireCode;
use missionweaveprotocol_engine::organization::{
    AGENT_CARD_REGISTERED, SESSION_OPEN, SESSION_OPENED,
};
use missionweaveprotocol_kernel::lease::LeaseState;

use crate::payloads::{self, W1};
use crate::scenario::{Scenario, Watch};
use crate::steps::{self, Lease};
use crate::world::{IDENTITY, SERVICE, WORKER, World};

/// The Event of a lease revoked by a Session replacement (`docs/engine.md`, the reference's
/// `EXECUTION_LEASE_REVOKED`).
pub const LEASE_REVOKED: &str = "ext.missionweaveprotocol.core.work_execution_lease_revoked";

/// The Worker's claim on W1 is bound to Session Epoch `epoch` (§11.3: every lease binds its
/// holder's Session Epoch) and its Execution Lease was revoked.
fn rebound(w: &World, epoch: u64) -> Result<(), String> {
    let item = steps::work_item(w, W1)?.ok_or("no WorkItem")?;
    let execution = item.execution_lease.as_ref().map(|l| l.state());
    if execution != Some(LeaseState::Revoked) {
        return Err(format!(
            "the Execution Lease is {execution:?} after the Session replacement, not revoked"
        ));
    }
    let lease = item.ownership_lease.ok_or("no ownership lease")?;
    let bound = lease.binding().session_epoch;
    if bound != epoch {
        return Err(format!(
            "the ownership lease is bound to Session Epoch {bound}, not {epoch}"
        ));
    }
    Ok(())
}

pub fn scenarios() -> Vec<Scenario> {
    let session = Watch::Session(WORKER);
    let card = Watch::AgentCard(WORKER);
    vec![
        Scenario::new("identity.session_open: a replacement Session (epoch 1 → 2)")
            .when(steps::session_open(WORKER, ""))
            .watch(session)
            .emits(&[SESSION_OPENED])
            .moves("epoch 1", "epoch 2"),
        Scenario::new(
            "identity.session_open: sent by the policy service, not the identity service",
        )
        .when(Box::new(|w: &World| {
            w.organization_command(SESSION_OPEN, SERVICE, "", &payloads::session_open(WORKER))
        }))
        .watch(session)
        .refused(WireCode::AuthForbidden)
        .moves("epoch 1", "epoch 1"),
        Scenario::new("identity.session_open: a stale expectedRevision")
            .given(steps::replace_session(WORKER))
            .when(steps::session_open(WORKER, r#""expectedRevision": 1"#))
            .watch(session)
            .refused(WireCode::RevisionConflict)
            .moves("epoch 2", "epoch 2"),
        Scenario::new("identity.session_open: an agentId that is not a URI")
            .when(Box::new(|w: &World| {
                w.organization_command(SESSION_OPEN, IDENTITY, "", r#"{"agentId": "worker"}"#)
            }))
            .watch(session)
            .refused(WireCode::InvalidCommand)
            .moves("epoch 1", "epoch 1"),
        Scenario::new("Session replacement: the active WorkItem returns to queued")
            .given(steps::active(W1))
            .when(steps::session_open(WORKER, ""))
            .watch(Watch::WorkItem(W1))
            .emits(&[SESSION_OPENED, LEASE_REVOKED])
            .moves("active", "queued")
            .check("the claim is re-bound to Session Epoch 2", |w| {
                rebound(w, 2)
            }),
        Scenario::new("Session replacement refused: the active WorkItem keeps its lease")
            .given(steps::active(W1))
            .when(steps::session_open(WORKER, r#""expectedRevision": 2"#))
            .watch(Watch::WorkItem(W1))
            .refused(WireCode::RevisionConflict)
            .moves("active", "active")
            .check("the Execution Lease is still held", |w| {
                steps::claim(w, W1, Lease::Execution).map(|_| ())
            }),
        Scenario::new("registry.agent_card_register: a verified Agent Card (version 1)")
            .when(steps::register_card(1, "Worker", None))
            .watch(card)
            .emits(&[AGENT_CARD_REGISTERED])
            .moves("none", "version 1"),
        Scenario::new("registry.agent_card_register: a tampered Agent Card")
            .when(steps::register_card(
                1,
                "Worker",
                Some(("displayName", "Impostor")),
            ))
            .watch(card)
            .refused(WireCode::AuthInvalidSignature)
            .moves("none", "none"),
        Scenario::new(
            "registry.agent_card_register: sent by the policy service, not the identity service",
        )
        .when(steps::register_card_by(SERVICE, 1, "Worker"))
        .watch(card)
        .refused(WireCode::AuthForbidden)
        .moves("none", "none"),
        Scenario::new("registry.agent_card_register: a newer version replaces the card")
            .given(steps::card_registered(1))
            .when(steps::register_card(2, "Worker Two", None))
            .watch(card)
            .emits(&[AGENT_CARD_REGISTERED])
            .moves("version 1", "version 2"),
        Scenario::new("registry.agent_card_register: a lower version than the registered one")
            .given(steps::card_registered(2))
            .when(steps::register_card(1, "Worker", None))
            .watch(card)
            .refused(WireCode::InvalidCommand)
            .moves("version 2", "version 2"),
    ]
}
