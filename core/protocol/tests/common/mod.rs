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
