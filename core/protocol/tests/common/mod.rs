//! Helpers shared by the integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use missionweaveprotocol::KeyRegistrySnapshot;
use missionweaveprotocol::bundle::embedded_file;
use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json::{Value, parse};
use missionweaveprotocol::schema_formats::decode_base64url;

pub fn file(path: &str) -> &'static [u8] {
    embedded_file(path).unwrap_or_else(|| panic!("{path} is not embedded"))
}

pub fn json(path: &str) -> Value {
    parse(file(path)).unwrap()
}

pub fn valid_document(kind: &str) -> &'static [u8] {
    file(&format!(
        "cryptography/vectors/signed-documents/valid/{kind}.json"
    ))
}

pub fn registry() -> Arc<KeyRegistrySnapshot> {
    Arc::new(
        KeyRegistrySnapshot::from_bytes(file("cryptography/keys/registry-valid.json")).unwrap(),
    )
}

/// The signing key whose fixture names `key_id`.
pub fn signing_key(key_id: &str) -> SigningKey {
    for name in [
        "coordinator",
        "developer-one",
        "group-authority",
        "mission-owner",
        "organization-registry",
        "security-owner",
        "test-reviewer",
    ] {
        let fixture = json(&format!("cryptography/keys/signing-{name}.json"));
        if fixture.get("keyId").and_then(Value::as_str) == Some(key_id) {
            let seed = decode_base64url(fixture.get("seed").unwrap().as_str().unwrap()).unwrap();
            return SigningKey::from_seed(key_id, &seed.try_into().unwrap());
        }
    }
    panic!("no signing key fixture for {key_id}")
}

/// The document without its top-level signature.
pub fn unsigned(document: &Value) -> Value {
    let Value::Object(mut object) = document.clone() else {
        panic!("not an object")
    };
    object.remove("signature");
    Value::Object(object)
}

/// Replaces the first occurrence of `from` with `to` in `bytes`.
pub fn replace(bytes: &[u8], from: &str, to: &str) -> Vec<u8> {
    let text = std::str::from_utf8(bytes).unwrap();
    assert!(text.contains(from), "{from:?} not found");
    text.replacen(from, to, 1).into_bytes()
}

/// A Registry with one Agent key, and Commands signed by it.
pub struct SigningFixture {
    pub registry: Vec<u8>,
    pub key: SigningKey,
}

pub fn signing_fixture() -> SigningFixture {
    use missionweaveprotocol::registry::RegistryBuilder;
    use missionweaveprotocol::{Principal, PrincipalType};
    let key = SigningKey::from_seed("urn:missionweaveprotocol:key:planner-1", &[7; 32]);
    let mut builder = RegistryBuilder::new("urn:missionweaveprotocol:organization:acme");
    builder
        .add_key(
            key.key_id(),
            Principal::new(
                PrincipalType::Agent,
                "urn:missionweaveprotocol:agent:planner",
            ),
            &key.public_key_bytes(),
            "2026-01-01T00:00:00Z",
        )
        .unwrap();
    let (registry, _) = builder.build().unwrap();
    SigningFixture { registry, key }
}

impl SigningFixture {
    /// A signed `work.checkpoint` Command whose payload is `{"data": <payload>}`.
    pub fn sign_command_with_payload(&self, payload: &[u8]) -> Vec<u8> {
        use missionweaveprotocol::{SignedDocumentCodec, SignedDocumentKind};
        let mut text = br#"{"protocolVersion": "0.1",
            "actionId": "urn:uuid:0b6d1c1e-6f0a-4b7e-9a53-2f1f0c9e7d11",
            "actor": {"type": "agent", "id": "urn:missionweaveprotocol:agent:planner"},
            "sessionEpoch": 3, "membershipEpoch": 1,
            "groupId": "urn:missionweaveprotocol:group:finance",
            "kind": "work.checkpoint",
            "correlationId": "urn:uuid:5e0c2a4b-1d3f-4e6a-8b7c-9d0e1f2a3b4c",
            "issuedAt": "2026-07-15T09:30:00Z", "payload": {"data": "#
            .to_vec();
        text.extend_from_slice(payload);
        text.extend_from_slice(b"}}");
        // Memory tests sign documents past the `DOCUMENT` limits on purpose, to be refused at
        // verification: the signer here has the `STATE` limits.
        let command = missionweaveprotocol::json::parse_state(&text).unwrap();
        SignedDocumentCodec::new()
            .with_limits(missionweaveprotocol::json::ParseLimits::STATE)
            .sign(SignedDocumentKind::Command, &command, &self.key)
            .unwrap()
            .bytes
    }
}
