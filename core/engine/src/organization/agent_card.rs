//! `ext.missionweaveprotocol.registry.agent_card_register` `{agentCard}` →
//! `ext.missionweaveprotocol.registry.agent_card_registered` (Organization-scoped, §15.2).
//!
//! The Agent Card is a normative signed document (`agent-card.schema.json`; digest "agent-card":
//! protected time `/issuedAt`, signer = a `service` principal of the Organization Registry).
//! `Engine::perform_with_resolver` verifies it with the six-stage verifier (Agent Card profile)
//! before the decision sees it; `perform` refuses the kind (`resolver_required`).
//!
//! Stored per Agent under kind [`AGENT_CARD_KIND`], ID = `agentId`, value = the signed card's
//! canonical bytes. `cardVersion` must increase (digest 2.15: "versioned by `cardVersion`"):
//! a lower version is `INVALID_COMMAND` `card_version_not_newer`; the same version with other
//! content `INVALID_COMMAND` `card_version_conflict`; the same card again (another Action ID)
//! `INVALID_STATE_TRANSITION` (already registered). The reference bootstraps cards the same
//! way: it refuses a stored card whose version is not older (`reference-python.md` §1.12).

use missionweaveprotocol::json::{Number, Object, Value};

use super::{AGENT_CARD_KIND, AGENT_CARD_REGISTERED, blob, read_value};
use crate::decision::Decision;
use crate::error::EngineError;
use crate::events::EventDraft;
use crate::ingress::VerifiedCommand;
use crate::input::{member, text, u64_member};
use crate::store::{AggregateKey, Store};

/// The payload's signed Agent Card, unverified (`perform_with_resolver` verifies it).
pub(crate) fn card_of(command: &VerifiedCommand) -> Result<&Value, EngineError> {
    let card = member(command.payload(), "agentCard")?;
    if matches!(card, Value::Object(_)) {
        Ok(card)
    } else {
        Err(EngineError::invalid(
            "invalid_member",
            "agentCard must be a signed Agent Card object",
        ))
    }
}

/// The registered card of `agent_id` with its store revision.
pub(crate) fn read_card(
    store: &dyn Store,
    agent_id: &str,
) -> Result<Option<(u64, Value)>, EngineError> {
    read_value(store, &AggregateKey::new(AGENT_CARD_KIND, agent_id))
}

/// Decides a registration of the verified `card`.
pub(crate) fn register(
    store: &dyn Store,
    command: &VerifiedCommand,
    card: &Value,
) -> Result<Decision, EngineError> {
    let agent_id = text(card, "agentId")?;
    let version = u64_member(card, "cardVersion")?;
    // The card speaks for the Organization whose Registry verified the Command (§6.4).
    if text(card, "organizationId")? != command.organization_id() {
        return Err(EngineError::invalid(
            "card_wrong_organization",
            "the Agent Card names another Organization",
        ));
    }
    let key = AggregateKey::new(AGENT_CARD_KIND, agent_id);
    let value = blob(&key, card)?;
    let stored = read_card(store, agent_id)?;
    let revision = stored.as_ref().map_or(0, |(r, _)| *r);
    // §15.3: `expectedRevision` names the aggregate's revision (0: absent).
    if let Some(expected) = command.expected_revision().filter(|e| *e != revision) {
        return Err(EngineError::RevisionConflict {
            key,
            expected,
            current: revision,
        });
    }
    if let Some((_, current)) = &stored {
        let current_version = u64_member(current, "cardVersion")?;
        if version == current_version && blob(&key, current)? == value {
            return Err(EngineError::InvalidStateTransition {
                aggregate: AGENT_CARD_KIND,
                id: agent_id.to_owned(),
                state: "registered".into(),
                command: command.kind().to_owned(),
            });
        }
        if version == current_version {
            return Err(EngineError::invalid(
                "card_version_conflict",
                format!("Agent Card version {version} is registered with other content"),
            ));
        }
        if version < current_version {
            return Err(EngineError::invalid(
                "card_version_not_newer",
                format!("Agent Card version {version} is older than {current_version}"),
            ));
        }
    }
    let mut payload = Object::new();
    payload.insert("agentId", Value::string(agent_id));
    payload.insert("cardVersion", Value::Number(Number::from_u64(version)));
    payload.insert("agentCard", card.clone());
    Ok(Decision::default()
        .organization_event(EventDraft::for_command(
            command,
            AGENT_CARD_REGISTERED,
            payload,
        ))
        .put(key, revision, value))
}
