//! Content-addressed Artifact bytes (§13.1): `artifact::content` (hash, manifest building and
//! checking). Each rule has a positive and a negative case. The filesystem store is tested in
//! `core/host/tests/artifact_store.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "engine_work_fixture.rs"]
mod engine_work_fixture;

use engine_work_fixture::*;
use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol::{DescribeError, ErrorClass, Stage, WireCode};
use missionweaveprotocol_engine::artifact::ArtifactError;
use missionweaveprotocol_engine::artifact::content::{
    check_content, content_hash, default_artifact_id, named_information_uri, sign_manifest,
    unsigned_manifest, verify_manifest,
};

const CONTENT: &[u8] = b"{\"total\": 42}\n";
/// `sha256sum` of CONTENT, computed outside this code.
const CONTENT_HASH: &str =
    "sha256:a94b0e0dcfd4f4771397bfe1d20857de2f06cd3f84e51c04b1e7ac517e3a10a2";

/// The manifest metadata of a report by `WORKER` for `item`.
fn metadata(item: &str) -> Value {
    json::parse(
        format!(
            r#"{{"mediaType":"application/json","schemaUri":"https://example.org/report.json",
            "producer":{{"agentId":"{WORKER}","agentCardVersion":1,
              "capabilities":[{{"id":"text.summarise","version":"1.2.0"}}]}},
            "missionId":"{MISSION}","groupId":"{GROUP}","workItemId":"{item}",
            "sourceArtifactHashes":[],"toolVersions":[{{"name":"ledger-tool","version":"2.0"}}],
            "modelVersions":[],"classification":"internal","createdAt":"{NOW_TEXT}"}}"#
        )
        .as_bytes(),
    )
    .unwrap()
}

fn with(mut value: Value, name: &str, member: Value) -> Value {
    if let Value::Object(o) = &mut value {
        o.insert(name, member);
    }
    value
}

fn key_of(f: &Fixture, principal: &str) -> SigningKey {
    f.keys
        .iter()
        .find(|(p, _)| p.id == principal)
        .unwrap()
        .1
        .clone()
}

#[test]
fn content_hash_is_sha256_of_the_bytes() {
    // Known answer: SHA-256 of the empty string (FIPS 180-4 example).
    assert_eq!(
        content_hash(b""),
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_ne!(content_hash(b"a"), content_hash(b"b"));
    assert_eq!(content_hash(CONTENT), CONTENT_HASH);
}

#[test]
fn unsigned_manifest_computes_hash_size_id_and_uri() {
    let manifest = unsigned_manifest(CONTENT, &metadata(W1)).unwrap();
    let hash = content_hash(CONTENT);
    assert_eq!(manifest.get("contentHash").unwrap().as_str(), Some(&*hash));
    assert_eq!(
        manifest
            .get("sizeBytes")
            .unwrap()
            .as_number()
            .unwrap()
            .as_u64(),
        Some(CONTENT.len() as u64)
    );
    assert_eq!(
        manifest.get("artifactId").unwrap().as_str(),
        Some(&*default_artifact_id(W1, &hash))
    );
    assert_eq!(
        manifest.get("uri").unwrap().as_str(),
        Some(&*named_information_uri(&hash).unwrap())
    );
    // The same bytes for another WorkItem are another Artifact.
    assert_ne!(
        default_artifact_id(W1, &hash),
        default_artifact_id(W2, &hash)
    );
    // Given members are kept.
    let given = with(
        with(metadata(W1), "artifactId", Value::string("urn:x:a")),
        "uri",
        Value::string("https://store.example.org/a"),
    );
    let manifest = unsigned_manifest(CONTENT, &given).unwrap();
    assert_eq!(
        manifest.get("artifactId").unwrap().as_str(),
        Some("urn:x:a")
    );
    assert_eq!(
        manifest.get("uri").unwrap().as_str(),
        Some("https://store.example.org/a")
    );
    // Negative: the computed members may not be supplied, metadata must be an object.
    for name in ["contentHash", "sizeBytes", "signature"] {
        let error =
            unsigned_manifest(CONTENT, &with(metadata(W1), name, Value::string("x"))).unwrap_err();
        assert_eq!(error.reason(), "invalid_metadata", "{name}");
    }
    assert!(unsigned_manifest(CONTENT, &Value::string("no")).is_err());
}

#[test]
fn signed_manifest_verifies_and_bad_metadata_is_refused() {
    let f = fixture();
    let signed = sign_manifest(CONTENT, &metadata(W1), &key_of(&f, WORKER)).unwrap();
    let verified = verify_manifest(&signed.bytes, &f.registry).unwrap();
    assert_eq!(
        json::canonical_bytes(verified.document()).unwrap(),
        signed.bytes
    );
    check_content(&signed.document, CONTENT).unwrap();

    // Negative: inline content is not a member of the schema (§13.1), nor a bad media type.
    let inline = with(metadata(W1), "inlineContent", Value::string("e30="));
    let error = sign_manifest(CONTENT, &inline, &key_of(&f, WORKER)).unwrap_err();
    assert_eq!(error.reason(), "unsignable_manifest");
    assert_eq!(error.stage(), Some(Stage::Schema));
    assert_eq!(error.wire_code(), WireCode::SchemaValidationFailed);
    let media = with(metadata(W1), "mediaType", Value::string("not a type"));
    assert!(sign_manifest(CONTENT, &media, &key_of(&f, WORKER)).is_err());

    // Negative: signed with another Agent's key, the producer's Registry binding fails.
    let forged = sign_manifest(CONTENT, &metadata(W1), &key_of(&f, COORDINATOR)).unwrap();
    let error = verify_manifest(&forged.bytes, &f.registry).unwrap_err();
    assert_eq!(error.reason(), "manifest_rejected");
    assert_eq!(error.wire_code(), WireCode::AuthInvalidSignature);
    assert_eq!(error.class(), ErrorClass::Artifact);

    // Negative: a member changed after signing.
    let mut tampered = signed.bytes.clone();
    let text = String::from_utf8(tampered.clone()).unwrap();
    tampered = text.replace("\"internal\"", "\"public\"").into_bytes();
    assert_ne!(tampered, signed.bytes);
    let error = verify_manifest(&tampered, &f.registry).unwrap_err();
    assert_eq!(error.wire_code(), WireCode::AuthInvalidSignature);
}

#[test]
fn check_content_detects_tampering() {
    let f = fixture();
    let signed = sign_manifest(CONTENT, &metadata(W1), &key_of(&f, WORKER)).unwrap();
    check_content(&signed.document, CONTENT).unwrap();
    let mut flipped = CONTENT.to_vec();
    flipped[0] ^= 1;
    let error = check_content(&signed.document, &flipped).unwrap_err();
    assert!(matches!(error, ArtifactError::HashMismatch { .. }));
    assert_eq!(error.wire_code(), WireCode::ProtocolViolation);
    assert!(!error.retryable());
    let error = check_content(&signed.document, &CONTENT[1..]).unwrap_err();
    assert!(matches!(
        error,
        ArtifactError::SizeMismatch {
            expected: 14,
            actual: 13,
            ..
        }
    ));
}
