//! Own keys → Registry → sign → verify, with the builder's refusals (§6.4 stage 4).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json::Value;
use missionweaveprotocol::registry::{
    AgentRegistryKeyResolver, RegistryBuilder, RegistryErrorReason, ValidityRecord,
};
use missionweaveprotocol::{Principal, SignedDocumentCodec, SignedDocumentKind, Stage};

const ORG: &str = "urn:missionweaveprotocol:organization:acme";

fn command_and_actor() -> (Value, Principal) {
    let document = common::unsigned(&common::json(
        "cryptography/vectors/signed-documents/valid/command.json",
    ));
    let actor = Principal::from_value(document.pointer("/actor").unwrap()).unwrap();
    (document, actor)
}

#[test]
fn own_keys_sign_and_verify_against_the_built_registry() {
    let (command, actor) = command_and_actor();
    let key = SigningKey::from_seed("urn:missionweaveprotocol:key:own-1", &[42; 32]);
    let mut builder = RegistryBuilder::new(ORG);
    builder
        .add_key(
            key.key_id(),
            actor,
            &key.public_key_bytes(),
            "2026-01-01T00:00:00Z",
        )
        .unwrap();
    let (bytes, snapshot) = builder.build().unwrap();
    assert_eq!(snapshot.organization_id(), ORG);
    let codec = SignedDocumentCodec::new();
    let signed = codec
        .sign(SignedDocumentKind::Command, &command, &key)
        .unwrap();
    let resolver = AgentRegistryKeyResolver::new(&bytes);
    let verified = codec
        .verify(SignedDocumentKind::Command, &signed.bytes, &resolver)
        .unwrap();
    assert_eq!(verified.signing_hash, signed.signing_hash);
    // The bundle's Registry does not know this key: stage 4.
    let other =
        AgentRegistryKeyResolver::new(common::file("cryptography/keys/registry-valid.json"));
    let error = codec
        .verify(SignedDocumentKind::Command, &signed.bytes, &other)
        .unwrap_err();
    assert_eq!(error.stage, Stage::KeyResolution);
}

#[test]
fn a_revoked_key_no_longer_verifies() {
    let (command, actor) = command_and_actor();
    let key = SigningKey::from_seed("urn:missionweaveprotocol:key:own-2", &[43; 32]);
    let mut builder = RegistryBuilder::new(ORG);
    builder
        .add_key_with_history(
            key.key_id(),
            actor,
            &key.public_key_bytes(),
            "2026-01-01T00:00:00Z",
            &[ValidityRecord {
                recorded_at: "2026-01-02T00:00:00Z".into(),
                valid_until: None,
                revoked_at: Some("2026-01-02T00:00:00Z".into()),
            }],
        )
        .unwrap();
    let (bytes, _) = builder.build().unwrap();
    let codec = SignedDocumentCodec::new();
    let signed = codec
        .sign(SignedDocumentKind::Command, &command, &key)
        .unwrap();
    let error = codec
        .verify(
            SignedDocumentKind::Command,
            &signed.bytes,
            &AgentRegistryKeyResolver::new(&bytes),
        )
        .unwrap_err();
    assert_eq!(error.stage, Stage::KeyResolution);
}

#[test]
fn the_builder_refuses_what_stage_4_refuses() {
    let (_, actor) = command_and_actor();
    let key = SigningKey::from_seed("urn:missionweaveprotocol:key:own-3", &[44; 32]);
    // Not a point of the curve's prime-order subgroup (the identity is refused for keys).
    let mut identity = [0u8; 32];
    identity[0] = 1;
    let error = RegistryBuilder::new(ORG)
        .add_key(
            "urn:missionweaveprotocol:key:x",
            actor.clone(),
            &identity,
            "2026-01-01T00:00:00Z",
        )
        .map(|_| ())
        .unwrap_err();
    assert_eq!(error.reason, RegistryErrorReason::PublicKeyPoint);
    // A malformed validFrom.
    let error = RegistryBuilder::new(ORG)
        .add_key(
            key.key_id(),
            actor.clone(),
            &key.public_key_bytes(),
            "2026-13-01T00:00:00Z",
        )
        .map(|_| ())
        .unwrap_err();
    assert_eq!(error.reason, RegistryErrorReason::ValidFrom);
    // One key ID bound twice to different material: refused when the evidence is built.
    let other = SigningKey::from_seed(key.key_id(), &[45; 32]);
    let mut builder = RegistryBuilder::new(ORG);
    builder
        .add_key(
            key.key_id(),
            actor.clone(),
            &key.public_key_bytes(),
            "2026-01-01T00:00:00Z",
        )
        .unwrap()
        .add_key(
            other.key_id(),
            actor,
            &other.public_key_bytes(),
            "2026-01-01T00:00:00Z",
        )
        .unwrap();
    assert_eq!(
        builder.build().unwrap_err().reason,
        RegistryErrorReason::KeyIdReused
    );
    // An empty Registry is not evidence.
    assert_eq!(
        RegistryBuilder::new(ORG).build().unwrap_err().reason,
        RegistryErrorReason::NoBindings
    );
}
