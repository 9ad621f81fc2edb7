//! The Agent Card file of `--registry` and the bootstrap of its cards through the
//! Organization Command `ext.missionweaveprotocol.registry.agent_card_register` (as the
//! reference's `load_agent_cards` + `create_gateway_app` lifespan do, `reference-python.md`
//! §1.29).
//!
//! The file is a JSON array of signed Agent Cards (`agent-card.schema.json`) or
//! `{"agentCards": [...]}`. Every card is checked before anything starts: an object, a unique
//! `agentId`, a `signature`, and the six-stage verification (Agent Card profile) against the
//! Registry evidence of `--agent-registry-snapshot` — the same check the Core makes when it
//! registers the card. With `--organization-public-key` the verified signing key must also be
//! that key: a card signed by any other service key of the Registry is refused.

use std::path::Path;
use std::sync::Arc;

use missionweaveprotocol::crypto::Signer;
use missionweaveprotocol::json::{self, Object, Value};
use missionweaveprotocol::{
    KeyRegistrySnapshot, SignedDocumentCodec, SignedDocumentKind, WireCode,
};
use missionweaveprotocol_engine::organization::AGENT_CARD_REGISTER;
use missionweaveprotocol_engine::service::Core;
use missionweaveprotocol_engine::store::Store;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

/// A card file problem: the server does not start (exit code 1).
#[derive(Debug)]
pub struct CardError(pub String);

impl std::fmt::Display for CardError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CardError {}

fn fail(message: impl Into<String>) -> CardError {
    CardError(message.into())
}

/// A card that passed every check.
#[derive(Debug, Clone)]
pub struct AgentCard {
    /// Its Agent.
    pub agent_id: String,
    /// `cardVersion`.
    pub version: u64,
    /// The signed card as given.
    pub document: Value,
}

/// Reads and checks the card file (see the module docs). `organization_key`: the trusted
/// Organization public key (32 bytes), when given.
pub fn load(
    path: &Path,
    registry: &Arc<KeyRegistrySnapshot>,
    organization_key: Option<&[u8; 32]>,
) -> Result<Vec<AgentCard>, CardError> {
    let bytes = std::fs::read(path).map_err(|e| {
        fail(format!(
            "cannot read the Agent Card file {}: {e}",
            path.display()
        ))
    })?;
    let root = json::parse_state(&bytes).map_err(|e| {
        fail(format!(
            "the Agent Card file {} is not JSON: {e}",
            path.display()
        ))
    })?;
    check(&root, registry, organization_key)
}

/// Checks the content of a card file (a list of cards or `{"agentCards": [...]}`), as
/// [`load`] does after reading it: the Python `create_gateway_app` checks the cards it is given
/// here too.
pub fn check(
    root: &Value,
    registry: &Arc<KeyRegistrySnapshot>,
    organization_key: Option<&[u8; 32]>,
) -> Result<Vec<AgentCard>, CardError> {
    let list = match root {
        Value::Array(items) => items.as_slice(),
        Value::Object(object) => object
            .get("agentCards")
            .and_then(Value::as_array)
            .filter(|_| object.len() == 1)
            .ok_or_else(|| {
                fail("the Agent Card file must be a list of cards or {\"agentCards\": [...]}")
            })?,
        _ => {
            return Err(fail(
                "the Agent Card file must be a list of cards or {\"agentCards\": [...]}",
            ));
        }
    };
    if list.is_empty() {
        return Err(fail("the Agent Card file holds no card"));
    }
    let codec = SignedDocumentCodec::new();
    let mut cards: Vec<AgentCard> = Vec::with_capacity(list.len());
    for (index, card) in list.iter().enumerate() {
        let agent_id = card
            .get("agentId")
            .and_then(Value::as_str)
            .ok_or_else(|| fail(format!("card {index} is not an Agent Card (no agentId)")))?
            .to_owned();
        if cards.iter().any(|c| c.agent_id == agent_id) {
            return Err(fail(format!("Agent {agent_id} has two cards in the file")));
        }
        if card.get("signature").is_none() {
            return Err(fail(format!(
                "the Agent Card of {agent_id} is not signed: only Organization-signed cards are registered"
            )));
        }
        let verified = codec
            .verify_value(SignedDocumentKind::AgentCard, card.clone(), registry)
            .map_err(|e| {
                fail(format!(
                    "the Agent Card of {agent_id} was refused ({}, {} at stage {:?}): tampered, or not signed by a service key of the Registry",
                    e.wire_code(),
                    e.reason,
                    e.stage
                ))
            })?;
        if let Some(trusted) = organization_key
            && verified.public_key != *trusted
        {
            return Err(fail(format!(
                "the Agent Card of {agent_id} is signed by {}, not by the Organization key given with --organization-public-key",
                verified.key_id
            )));
        }
        let version = card
            .get("cardVersion")
            .and_then(Value::as_number)
            .and_then(|n| n.as_u64())
            .unwrap_or(0);
        cards.push(AgentCard {
            agent_id,
            version,
            document: card.clone(),
        });
    }
    Ok(cards)
}

/// What the bootstrap did with one card.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registered {
    /// Registered now (new Agent or newer version).
    New,
    /// The same card was already registered.
    Unchanged,
}

/// Registers `card` through the Organization Command, signed by the Group Authority (the
/// default bootstrap service of `CoreConfig`). A card whose version is not newer than the
/// registered one with other content is an error (the reference's `RuntimeError`).
pub fn register<S, G>(
    core: &Core<S, G>,
    card: &AgentCard,
    action_id: &str,
    now: UnixMillis,
) -> Result<Registered, CardError>
where
    S: Store,
    G: Signer,
{
    let issuer = core.engine().issuer();
    let authority = issuer.accepted_by();
    let issued_at = now
        .to_rfc3339()
        .ok_or_else(|| fail("the clock is outside years 0001-9999"))?;
    let mut actor = Object::new();
    actor.insert("type", Value::string(authority.kind.as_str()));
    actor.insert("id", Value::string(authority.id.as_str()));
    let mut payload = Object::new();
    payload.insert("agentCard", card.document.clone());
    let mut command = Object::new();
    command.insert("protocolVersion", Value::string("0.1"));
    command.insert("actionId", Value::string(action_id));
    command.insert("actor", Value::Object(actor));
    command.insert("kind", Value::string(AGENT_CARD_REGISTER));
    command.insert("correlationId", Value::string(action_id));
    command.insert("issuedAt", Value::string(issued_at));
    command.insert("payload", Value::Object(payload));
    let signed = SignedDocumentCodec::new()
        .sign(
            SignedDocumentKind::Command,
            &Value::Object(command),
            issuer.signer(),
        )
        .map_err(|e| {
            fail(format!(
                "cannot sign the registration of {}: {e}",
                card.agent_id
            ))
        })?;
    match core.perform_bytes(&signed.bytes, now) {
        Ok(_) => Ok(Registered::New),
        Err(e) if e.wire_code == WireCode::InvalidStateTransition => Ok(Registered::Unchanged),
        Err(e) => Err(fail(format!(
            "the Core refused the Agent Card of {} (version {}): {} {}: {}",
            card.agent_id, card.version, e.wire_code, e.reason, e.message
        ))),
    }
}
