//! `ext.missionweaveprotocol.registry.agent_card_register` → `…agent_card_registered`
//! (Organization-scoped, §15.1, §15.2): the signed Agent Card is verified with the six-stage
//! verifier (Agent Card profile, §6.4) and stored per Agent with increasing `cardVersion`.
//! Each rule positive and negative; every Event verified (Event profile, `event.schema.json`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_fixture.rs"]
mod engine_fixture;

use engine_fixture::*;
use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol::schema_formats::encode_base64url;
use missionweaveprotocol::{DescribeError, SignedDocumentCodec, SignedDocumentKind, WireCode};
use missionweaveprotocol_engine::engine::Performed;
use missionweaveprotocol_engine::error::EngineError;
use missionweaveprotocol_engine::ingress::VerifiedCommand;
use missionweaveprotocol_engine::organization::ORGANIZATION_EVENT_KIND;
use missionweaveprotocol_engine::store::Store;

const REGISTER: &str = "ext.missionweaveprotocol.registry.agent_card_register";
const REGISTERED: &str = "ext.missionweaveprotocol.registry.agent_card_registered";

fn key_of<'a>(f: &'a Fixture, id: &str) -> &'a missionweaveprotocol::crypto::SigningKey {
    &f.keys.iter().find(|(p, _)| p.id == id).unwrap().1
}

/// The unsigned Agent Card of `agent` at `version` (`agent-card.schema.json`).
fn unsigned_card(f: &Fixture, agent: &str, version: u64, name: &str) -> Value {
    let key = key_of(f, agent);
    json::parse(
        format!(
            r#"{{"agentId": "{agent}", "organizationId": "{ORG}", "cardVersion": {version},
            "displayName": "{name}", "owner": {{"type": "human", "id": "{OWNER}"}},
            "status": "active", "protocolVersions": ["0.1"],
            "endpoints": [{{"transport": "wss", "uri": "wss://agents.acme.example/reviewer"}}],
            "publicKeys": [{{"keyId": "{}", "algorithm": "Ed25519", "publicKey": "{}",
              "validFrom": "2026-01-01T00:00:00Z"}}],
            "capabilities": [{{"id": "text.summarise", "version": "1.2.0",
              "inputSchema": "https://schemas.acme.example/in.json",
              "inputSchemaHash": "{HASH_A}",
              "outputSchema": "https://schemas.acme.example/out.json",
              "outputSchemaHash": "{HASH_B}", "constraints": {{}},
              "verifiedEvidence": ["urn:missionweaveprotocol:evidence:summarise-2026"]}}],
            "maxConcurrency": 2, "issuedAt": "2026-07-01T00:00:00Z"}}"#,
            key.key_id(),
            encode_base64url(&key.public_key_bytes())
        )
        .as_bytes(),
    )
    .unwrap()
}

/// The card signed by `signer` (a service of the Registry for a valid card).
fn signed_card(f: &Fixture, card: &Value, signer: &str) -> Value {
    let bytes = SignedDocumentCodec::new()
        .sign(SignedDocumentKind::AgentCard, card, key_of(f, signer))
        .unwrap()
        .bytes;
    json::parse(&bytes).unwrap()
}

fn card(f: &Fixture, agent: &str, version: u64, name: &str) -> Value {
    signed_card(f, &unsigned_card(f, agent, version, name), SERVICE)
}

fn register(f: &Fixture, card: &Value) -> VerifiedCommand {
    let card = String::from_utf8(json::canonical_bytes(card).unwrap()).unwrap();
    f.verified(
        SERVICE,
        &f.unsigned_service(
            REGISTER,
            &f.action(),
            &format!(r#"{{"agentCard": {card}}}"#),
        ),
    )
}

fn perform(
    f: &Fixture,
    engine: &TestEngine,
    command: &VerifiedCommand,
) -> Result<Performed, EngineError> {
    engine.perform_with_resolver(command, NOW, &f.registry)
}

fn organization_events(engine: &TestEngine) -> usize {
    engine
        .store()
        .list(ORGANIZATION_EVENT_KIND, "")
        .unwrap()
        .len()
}

/// Performs, expects `code`, and checks that nothing was stored.
fn refused(
    f: &Fixture,
    engine: &TestEngine,
    command: &VerifiedCommand,
    code: WireCode,
) -> EngineError {
    let before = (
        organization_events(engine),
        engine.agent_card(OTHER_AGENT).unwrap(),
    );
    let e = perform(f, engine, command).unwrap_err();
    assert_eq!(e.wire_code(), code, "{e}");
    assert_eq!(
        (
            organization_events(engine),
            engine.agent_card(OTHER_AGENT).unwrap()
        ),
        before,
        "a refused registration stores nothing"
    );
    e
}

#[test]
fn a_verified_card_is_registered_and_queryable() {
    let f = fixture();
    let engine = f.engine();
    assert_eq!(engine.agent_card(OTHER_AGENT).unwrap(), None);
    let v1 = card(&f, OTHER_AGENT, 1, "Reviewer");
    let performed = perform(&f, &engine, &register(&f, &v1)).unwrap();
    assert!(performed.group_id.is_empty(), "Organization-scoped");
    let events = f.checked(&performed);
    assert_eq!(events.len(), 1);
    let event = &events[0];
    assert_eq!(text(event, "/kind"), REGISTERED);
    assert_eq!(text(event, "/payload/agentId"), OTHER_AGENT);
    assert_eq!(
        event
            .pointer("/payload/cardVersion")
            .unwrap()
            .as_number()
            .unwrap()
            .as_u64(),
        Some(1)
    );
    // The card inside the Event still verifies with the Agent Card profile.
    let inner = json::canonical_bytes(event.pointer("/payload/agentCard").unwrap()).unwrap();
    SignedDocumentCodec::new()
        .verify(SignedDocumentKind::AgentCard, &inner, &f.registry)
        .unwrap();
    assert_eq!(engine.agent_card(OTHER_AGENT).unwrap(), Some(v1));
    // A newer version replaces it.
    let v2 = card(&f, OTHER_AGENT, 2, "Reviewer Two");
    f.checked(&perform(&f, &engine, &register(&f, &v2)).unwrap());
    assert_eq!(engine.agent_card(OTHER_AGENT).unwrap(), Some(v2));
    assert_eq!(engine.agent_card(COORDINATOR).unwrap(), None);
}

#[test]
fn versions_must_increase() {
    let f = fixture();
    let engine = f.engine();
    f.checked(
        &perform(
            &f,
            &engine,
            &register(&f, &card(&f, OTHER_AGENT, 2, "Reviewer")),
        )
        .unwrap(),
    );
    let e = refused(
        &f,
        &engine,
        &register(&f, &card(&f, OTHER_AGENT, 1, "Reviewer")),
        WireCode::InvalidCommand,
    );
    assert_eq!(e.reason(), "card_version_not_newer");
    let e = refused(
        &f,
        &engine,
        &register(&f, &card(&f, OTHER_AGENT, 2, "Renamed")),
        WireCode::InvalidCommand,
    );
    assert_eq!(e.reason(), "card_version_conflict");
    // The same card under another Action ID: already registered.
    refused(
        &f,
        &engine,
        &register(&f, &card(&f, OTHER_AGENT, 2, "Reviewer")),
        WireCode::InvalidStateTransition,
    );
    f.checked(
        &perform(
            &f,
            &engine,
            &register(&f, &card(&f, OTHER_AGENT, 3, "Reviewer")),
        )
        .unwrap(),
    );
}

#[test]
fn a_duplicate_registration_returns_the_original_event() {
    let f = fixture();
    let engine = f.engine();
    let command = register(&f, &card(&f, OTHER_AGENT, 1, "Reviewer"));
    let first = perform(&f, &engine, &command).unwrap();
    let again = perform(&f, &engine, &command).unwrap();
    assert!(again.duplicate);
    assert_eq!(again.events, first.events, "byte for byte");
    f.checked(&again);
    assert_eq!(
        organization_events(&engine),
        3,
        "two sessions and one registration"
    );
}

#[test]
fn the_card_must_pass_the_six_stage_verifier() {
    let f = fixture();
    let engine = f.engine();
    let valid = card(&f, OTHER_AGENT, 1, "Reviewer");
    // Stage 6: content changed after signing.
    let mut tampered = valid.clone();
    if let Value::Object(o) = &mut tampered {
        o.insert("displayName", Value::string("Impostor"));
    }
    let e = refused(
        &f,
        &engine,
        &register(&f, &tampered),
        WireCode::AuthInvalidSignature,
    );
    assert_eq!(e.reason(), "agent_card_rejected");
    // Stage 4: an Agent Card is signed by a `service` principal, not by the Agent itself.
    let self_signed = signed_card(
        &f,
        &unsigned_card(&f, OTHER_AGENT, 1, "Reviewer"),
        OTHER_AGENT,
    );
    refused(
        &f,
        &engine,
        &register(&f, &self_signed),
        WireCode::AuthInvalidSignature,
    );
    // Stage 2: schema (a required member removed).
    let mut incomplete = valid.clone();
    if let Value::Object(o) = &mut incomplete {
        o.remove("capabilities");
    }
    refused(
        &f,
        &engine,
        &register(&f, &incomplete),
        WireCode::SchemaValidationFailed,
    );
    // The valid card passes.
    f.checked(&perform(&f, &engine, &register(&f, &valid)).unwrap());
}

#[test]
fn the_card_must_be_the_organizations() {
    let f = fixture();
    let engine = f.engine();
    let mut foreign = unsigned_card(&f, OTHER_AGENT, 1, "Reviewer");
    if let Value::Object(o) = &mut foreign {
        o.insert(
            "organizationId",
            Value::string("urn:missionweaveprotocol:organization:other"),
        );
    }
    let foreign = signed_card(&f, &foreign, SERVICE);
    let e = perform(&f, &engine, &register(&f, &foreign)).unwrap_err();
    // The Registry verifies the signer; the card's own Organization is the engine's check.
    assert_eq!(e.wire_code(), WireCode::InvalidCommand);
    assert_eq!(e.reason(), "card_wrong_organization");
    assert_eq!(engine.agent_card(OTHER_AGENT).unwrap(), None);
}

#[test]
fn registration_needs_the_resolver_and_a_card() {
    let f = fixture();
    let engine = f.engine();
    let command = register(&f, &card(&f, OTHER_AGENT, 1, "Reviewer"));
    // Plain `perform` has no Registry evidence to verify the card with.
    let e = engine.perform(&command, NOW).unwrap_err();
    assert_eq!(e.wire_code(), WireCode::InvalidCommand);
    assert_eq!(e.reason(), "resolver_required");
    let missing = f.verified(SERVICE, &f.unsigned_service(REGISTER, &f.action(), "{}"));
    refused(&f, &engine, &missing, WireCode::InvalidCommand);
    let not_object = f.verified(
        SERVICE,
        &f.unsigned_service(REGISTER, &f.action(), r#"{"agentCard": "card"}"#),
    );
    refused(&f, &engine, &not_object, WireCode::InvalidCommand);
    f.checked(&perform(&f, &engine, &command).unwrap());
}
