//! The Organization-scoped bootstrap service Commands (§15.1, §15.2, §6.3, digest A.1/A.2, 2.10)
//! and Session Epoch fencing.
//!
//! - `ext.missionweaveprotocol.identity.session_open` `{agentId}` issues the Agent's next
//!   Session Epoch ([`session`]), fencing every earlier session (§6.3) and revoking the Agent's
//!   active leases (§11.3, [`lease_index`]).
//! - `ext.missionweaveprotocol.registry.agent_card_register` `{agentCard}` stores the Agent's
//!   signed Agent Card, verified with the six-stage verifier ([`agent_card`]).
//!
//! Both are sent by a `service` actor without `groupId` or any epoch (`command.schema.json`
//! enforces it at ingress, digest A.1) and answer with an Organization-scoped Event, which has
//! no Group ID, sequence or aggregate revision (§15.2). The engine keeps such an Event as an
//! aggregate of kind [`ORGANIZATION_EVENT_KIND`] under its Event ID, so a duplicate Command
//! returns it byte for byte (§15.1); the Store trait is unchanged.

pub(crate) mod agent_card;
pub(crate) mod lease_index;
pub(crate) mod session;

use missionweaveprotocol::json::{Value, canonical_bytes};

use crate::error::EngineError;
use crate::store::{AggregateKey, Blob};

/// `ext.missionweaveprotocol.identity.session_open`.
pub const SESSION_OPEN: &str = "ext.missionweaveprotocol.identity.session_open";
/// `ext.missionweaveprotocol.identity.session_opened` (Organization-scoped).
pub const SESSION_OPENED: &str = "ext.missionweaveprotocol.identity.session_opened";
/// `ext.missionweaveprotocol.registry.agent_card_register`.
pub const AGENT_CARD_REGISTER: &str = "ext.missionweaveprotocol.registry.agent_card_register";
/// `ext.missionweaveprotocol.registry.agent_card_registered` (Organization-scoped).
pub const AGENT_CARD_REGISTERED: &str = "ext.missionweaveprotocol.registry.agent_card_registered";

/// Store kind of an Organization-scoped Event: ID = Event ID, value = its signed bytes.
pub const ORGANIZATION_EVENT_KIND: &str = "organization_event";
/// Store kind of an Agent's Session Epoch: ID = Agent ID, value `{agentId, sessionEpoch}`.
pub const SESSION_KIND: &str = "agent_session";
/// Store kind of an Agent's registered Agent Card: ID = Agent ID, value = the signed card.
pub const AGENT_CARD_KIND: &str = "agent_card";
/// Store kind of the index of WorkItems on which an Agent may hold an active lease.
pub const AGENT_LEASES_KIND: &str = "agent_leases";

/// Canonical bytes of an engine-built value stored under `key`.
pub(crate) fn blob(key: &AggregateKey, value: &Value) -> Result<Blob, EngineError> {
    canonical_bytes(value)
        .map(Blob::from)
        .map_err(|e| EngineError::Corrupt {
            key: key.clone(),
            detail: e.to_string(),
        })
}

/// The stored value at `key`, parsed, with its revision.
pub(crate) fn read_value(
    store: &dyn crate::store::Store,
    key: &AggregateKey,
) -> Result<Option<(u64, Value)>, EngineError> {
    let Some(stored) = store.aggregate(key)? else {
        return Ok(None);
    };
    let value = missionweaveprotocol::json::parse_state(&stored.value).map_err(|e| {
        EngineError::Corrupt {
            key: key.clone(),
            detail: e.to_string(),
        }
    })?;
    Ok(Some((stored.revision, value)))
}
