//! Own keys → Registry → sign → verify → handle the error: the README's quickstart, verbatim
//! (`tests/readme.rs` keeps the two identical).
//!
//! ```text
//! cargo run --release -p missionweaveprotocol-examples --bin sign_and_verify
//! ```
//!
//! A new Organization makes an Ed25519 key for one of its Agents, publishes Registry evidence
//! binding that key to the Agent (§6.4 stage 4), signs a Command with it and verifies the bytes
//! as a receiver would (the six stages of §6.4). A rejected document shows what a receiver does:
//! send only the wire code and the fixed message, keep the stage and the reason for its
//! protected audit record.

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json;
use missionweaveprotocol::registry::{AgentRegistryKeyResolver, RegistryBuilder};
use missionweaveprotocol::{Principal, PrincipalType, SignedDocumentCodec, SignedDocumentKind};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // 1. Own keys: the seed must come from a secure random source.
    let key = SigningKey::from_seed("urn:missionweaveprotocol:key:planner-1", &[7; 32]);

    // 2. Registry evidence binding the key to the Agent, checked by the §6.4 stage-4 rules.
    let mut registry = RegistryBuilder::new("urn:missionweaveprotocol:organization:acme");
    registry.add_key(
        key.key_id(),
        Principal::new(
            PrincipalType::Agent,
            "urn:missionweaveprotocol:agent:planner",
        ),
        &key.public_key_bytes(),
        "2026-01-01T00:00:00Z",
    )?;
    let (registry_bytes, _snapshot) = registry.build()?;
    let resolver = AgentRegistryKeyResolver::new(&registry_bytes);

    // 3. Sign a Command; the signer refuses anything that would not verify.
    let codec = SignedDocumentCodec::new();
    let command = json::parse(br#"{"protocolVersion": "0.1",
        "actionId": "urn:uuid:0b6d1c1e-6f0a-4b7e-9a53-2f1f0c9e7d11",
        "actor": {"type": "agent", "id": "urn:missionweaveprotocol:agent:planner"},
        "sessionEpoch": 3, "membershipEpoch": 1, "groupId": "urn:missionweaveprotocol:group:finance",
        "kind": "work.checkpoint", "correlationId": "urn:uuid:5e0c2a4b-1d3f-4e6a-8b7c-9d0e1f2a3b4c",
        "issuedAt": "2026-07-15T09:30:00Z", "payload": {"summary": "first draft saved"}}"#)?;
    let signed = codec.sign(SignedDocumentKind::Command, &command, &key)?;

    // 4. Verify the exact bytes a receiver got (the six stages of §6.4).
    let verified = codec.verify(SignedDocumentKind::Command, &signed.bytes, &resolver)?;
    println!(
        "signed by {} at {}",
        verified.principal.id, verified.protected_time
    );

    // 5. A rejection: the peer gets only the wire code and the fixed message; the stage and
    //    reason stay in the protected audit record.
    let tampered = String::from_utf8(signed.bytes)?.replace("first", "final");
    if let Err(error) = codec.verify(SignedDocumentKind::Command, tampered.as_bytes(), &resolver) {
        println!("wire: {} {}", error.wire_code(), error.wire_message()); // AUTH_INVALID_SIGNATURE
        println!("protected: {}/{}", error.stage, error.reason); // signature/signature-mismatch
    }
    Ok(())
}
