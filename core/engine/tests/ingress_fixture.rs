//! Shared fixture of the ingress and events tests: a Registry with an Agent, a human, a service
//! and the Group Authority key, and signed Commands. Included with `#[path]`; as its own test
//! target it holds no tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol::registry::RegistryBuilder;
use missionweaveprotocol::{
    KeyRegistrySnapshot, Principal, PrincipalType, SignedDocumentCodec, SignedDocumentKind,
};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

pub const ORG: &str = "urn:missionweaveprotocol:organization:acme";
pub const AGENT: &str = "urn:missionweaveprotocol:agent:planner";
pub const HUMAN: &str = "urn:missionweaveprotocol:human:alice";
pub const SERVICE: &str = "urn:missionweaveprotocol:service:control-plane";
pub const AUTHORITY: &str = "urn:missionweaveprotocol:service:group-authority";
pub const GROUP: &str = "urn:missionweaveprotocol:group:finance";
/// 2026-07-15T09:30:00Z.
pub const NOW: UnixMillis = UnixMillis(1_784_107_800_000);
pub const NOW_TEXT: &str = "2026-07-15T09:30:00Z";

#[derive(Debug)]
pub struct Fixture {
    pub agent_key: SigningKey,
    pub human_key: SigningKey,
    pub service_key: SigningKey,
    pub authority_key: SigningKey,
    /// A key the Registry does not know.
    pub stranger_key: SigningKey,
    pub registry: Arc<KeyRegistrySnapshot>,
}

pub fn fixture() -> Fixture {
    let agent_key = SigningKey::from_seed("urn:missionweaveprotocol:key:planner-1", &[7; 32]);
    let human_key = SigningKey::from_seed("urn:missionweaveprotocol:key:alice-1", &[8; 32]);
    let service_key = SigningKey::from_seed("urn:missionweaveprotocol:key:control-1", &[9; 32]);
    let authority_key =
        SigningKey::from_seed("urn:missionweaveprotocol:key:authority-1", &[10; 32]);
    let stranger_key = SigningKey::from_seed("urn:missionweaveprotocol:key:stranger-1", &[11; 32]);
    let mut builder = RegistryBuilder::new(ORG);
    for (key, kind, id) in [
        (&agent_key, PrincipalType::Agent, AGENT),
        (&human_key, PrincipalType::Human, HUMAN),
        (&service_key, PrincipalType::Service, SERVICE),
        (&authority_key, PrincipalType::Service, AUTHORITY),
    ] {
        builder
            .add_key(
                key.key_id(),
                Principal::new(kind, id),
                &key.public_key_bytes(),
                "2026-01-01T00:00:00Z",
            )
            .unwrap();
    }
    let (_, registry) = builder.build().unwrap();
    Fixture {
        agent_key,
        human_key,
        service_key,
        authority_key,
        stranger_key,
        registry: Arc::new(registry),
    }
}

/// An unsigned Agent `work.checkpoint` Command issued at `issued_at`, with `extra` members
/// (JSON object text without braces, may be empty) added to the envelope.
pub fn agent_command(issued_at: &str, extra: &str) -> Value {
    let extra = if extra.is_empty() {
        String::new()
    } else {
        format!(", {extra}")
    };
    json::parse(
        format!(
            r#"{{"protocolVersion": "0.1",
            "actionId": "urn:uuid:0b6d1c1e-6f0a-4b7e-9a53-2f1f0c9e7d11",
            "actor": {{"type": "agent", "id": "{AGENT}"}},
            "sessionEpoch": 3, "membershipEpoch": 1, "groupId": "{GROUP}",
            "kind": "work.checkpoint",
            "correlationId": "urn:uuid:5e0c2a4b-1d3f-4e6a-8b7c-9d0e1f2a3b4c",
            "issuedAt": "{issued_at}", "payload": {{"step": 1}}{extra}}}"#
        )
        .as_bytes(),
    )
    .unwrap()
}

/// Signs `unsigned` as a Command with `key`; the wire bytes.
pub fn sign(unsigned: &Value, key: &SigningKey) -> Vec<u8> {
    SignedDocumentCodec::new()
        .sign(SignedDocumentKind::Command, unsigned, key)
        .unwrap()
        .bytes
}
