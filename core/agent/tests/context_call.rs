//! The `context` module's one call shape (`context::call`), as every binding uses it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json::{Value, parse};
use missionweaveprotocol::schema_formats::encode_base64url;
use missionweaveprotocol::{DescribeError, ErrorClass};
use missionweaveprotocol_agent::context::{self, ContextError};

const AGENT: &str = "urn:missionweaveprotocol:agent:planner";

fn key() -> SigningKey {
    SigningKey::from_seed("urn:missionweaveprotocol:key:3", &[3; 32])
}

fn json(text: &str) -> Value {
    parse(text.as_bytes()).unwrap()
}

fn own_key() -> String {
    format!(
        r#"{{"key":{{"principal":{{"type":"agent","id":"{AGENT}"}},"keyId":"{}","publicKey":"{}"}}}}"#,
        key().key_id(),
        encode_base64url(&key().public_key_bytes())
    )
}

fn draft() -> String {
    format!(
        r#"{{"draft":{{"contextPackageId":"urn:missionweaveprotocol:context:c1","version":1,
        "missionId":"urn:missionweaveprotocol:mission:m","groupId":"urn:missionweaveprotocol:group:g",
        "events":[{{"eventId":"urn:missionweaveprotocol:event:1","groupId":"urn:missionweaveprotocol:group:g","sequence":1}},
                  {{"eventId":"urn:missionweaveprotocol:event:2","groupId":"urn:missionweaveprotocol:group:g","sequence":2}}],
        "summary":"s","decisions":[{{"description":"d","sourceEventIds":["urn:missionweaveprotocol:event:2"]}}],
        "generatedBy":"{AGENT}","generatedAtMs":1784107800000}}}}"#
    )
}

#[test]
fn publish_verify_install_and_publish_knowledge_through_one_shape() {
    let published = context::call("publish", &json(&draft()), Some(&key())).unwrap();
    let text = published.get("text").and_then(Value::as_str).unwrap();
    let verify = format!(
        r#"{{"text":{},"resolver":{},"generator":"{AGENT}"}}"#,
        String::from_utf8(
            missionweaveprotocol::json::canonical_bytes(&Value::string(text)).unwrap()
        )
        .unwrap(),
        own_key()
    );
    let verified = context::call("verify", &json(&verify), None).unwrap();
    assert_eq!(verified.get("hash"), published.get("hash"));
    let document = verified.get("document").unwrap().clone();
    let mut install = missionweaveprotocol::json::Object::new();
    install.insert("document", document.clone());
    install.insert(
        "expectedMissionId",
        Value::string("urn:missionweaveprotocol:mission:m"),
    );
    let installed = context::call("install", &Value::Object(install), None).unwrap();
    assert_eq!(
        installed.get("groupId").and_then(Value::as_str),
        Some("urn:missionweaveprotocol:group:g")
    );
    let mut args = missionweaveprotocol::json::Object::new();
    args.insert("source", document.clone());
    args.insert(
        "draft",
        json(&format!(
            r#"{{"publicationId":"urn:missionweaveprotocol:knowledge:k","targetScope":"org","artifactHash":"sha256:{}",
            "classification":"internal","summary":"k","publishedBy":{{"type":"agent","id":"{AGENT}"}},"publishedAtMs":1784107800000}}"#,
            "d".repeat(64)
        )),
    );
    let publication =
        context::call("knowledgePublish", &Value::Object(args), Some(&key())).unwrap();
    let mut check = missionweaveprotocol::json::Object::new();
    check.insert("publication", publication);
    check.insert(
        "publicKey",
        Value::string(encode_base64url(&key().public_key_bytes())),
    );
    check.insert("source", document);
    assert_eq!(
        context::call("knowledgeVerify", &Value::Object(check), None).unwrap(),
        Value::Null
    );
}

#[test]
fn missing_members_keys_and_methods_are_invalid_arguments() {
    let e = context::call("publish", &json(&draft()), None).unwrap_err();
    assert!(matches!(e, ContextError::InvalidArgument(ref t) if t.contains("signing key")));
    assert_eq!(e.class(), ErrorClass::Context);
    let e =
        context::call("publish", &json(r#"{"draft":{"version":1}}"#), Some(&key())).unwrap_err();
    assert!(matches!(e, ContextError::InvalidArgument(ref t) if t.contains("contextPackageId")));
    let e = context::call(
        "publish",
        &json(&draft().replace("\"version\":1", "\"version\":-1")),
        Some(&key()),
    )
    .unwrap_err();
    assert!(matches!(e, ContextError::InvalidArgument(ref t) if t.contains("version")));
    let e = context::call("nope", &json("{}"), None).unwrap_err();
    assert!(matches!(e, ContextError::InvalidArgument(ref t) if t.contains("nope")));
    let e = context::call(
        "verify",
        &json(r#"{"text":"{}","resolver":{"key":{"principal":{"type":"robot","id":"x"},"keyId":"k","publicKey":"AA"}}}"#),
        None,
    )
    .unwrap_err();
    assert!(matches!(e, ContextError::InvalidArgument(ref t) if t.contains("robot")));
}
