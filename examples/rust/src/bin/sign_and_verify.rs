//! Own keys → Registry → sign → verify → handle the error.
//!
//! ```text
//! cargo run --release -p missionweaveprotocol-examples --bin sign_and_verify
//! ```
//!
//! A new Organization makes an Ed25519 key for one of its Agents, publishes Registry evidence
//! binding that key to the Agent (§6.4 stage 4), signs a Command with it and verifies the bytes
//! as a receiver would (the six stages of §6.4). Then it shows what a receiver does with a
//! rejected document: send only the wire code and the fixed message, keep the stage and the
//! reason for its protected audit record.

use std::process::ExitCode;

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json;
use missionweaveprotocol::registry::{AgentRegistryKeyResolver, RegistryBuilder};
use missionweaveprotocol::{Principal, PrincipalType, SignedDocumentCodec, SignedDocumentKind};

const ORGANIZATION: &str = "urn:missionweaveprotocol:organization:acme";
const AGENT: &str = "urn:missionweaveprotocol:agent:planner";
const KEY_ID: &str = "urn:missionweaveprotocol:key:planner-1";

/// A Command (`command.schema.json`) without its signature; the signer adds it.
const COMMAND: &str = r#"{
  "protocolVersion": "0.1",
  "actionId": "urn:uuid:0b6d1c1e-6f0a-4b7e-9a53-2f1f0c9e7d11",
  "actor": {"type": "agent", "id": "urn:missionweaveprotocol:agent:planner"},
  "sessionEpoch": 3,
  "membershipEpoch": 1,
  "groupId": "urn:missionweaveprotocol:group:finance",
  "workItemId": "urn:missionweaveprotocol:work-item:quarterly-report",
  "kind": "work.checkpoint",
  "correlationId": "urn:uuid:5e0c2a4b-1d3f-4e6a-8b7c-9d0e1f2a3b4c",
  "issuedAt": "2026-07-15T09:30:00Z",
  "payload": {"summary": "Quarterly report: first draft saved"}
}"#;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    // 1. Own keys. The seed must come from a secure random source (e.g. `getrandom`); a fixed
    //    seed keeps this example's output reproducible.
    let key = SigningKey::from_seed(KEY_ID, &[7; 32]);

    // 2. Registry evidence binding the key to the Agent, checked by the stage-4 rules.
    let mut registry = RegistryBuilder::new(ORGANIZATION);
    registry
        .add_key(
            key.key_id(),
            Principal::new(PrincipalType::Agent, AGENT),
            &key.public_key_bytes(),
            "2026-01-01T00:00:00Z",
        )
        .map_err(|e| format!("registry: {e}"))?;
    let (registry_bytes, _snapshot) = registry.build().map_err(|e| format!("registry: {e}"))?;
    let resolver = AgentRegistryKeyResolver::new(&registry_bytes);

    // 3. Sign. The signer refuses anything that would not verify (schema, envelope, key).
    let codec = SignedDocumentCodec::new();
    let command = json::parse(COMMAND.as_bytes()).map_err(|e| format!("command: {e}"))?;
    let signed = codec
        .sign(SignedDocumentKind::Command, &command, &key)
        .map_err(|e| format!("signing: {e}"))?;
    println!(
        "signed {} bytes, signing hash {}",
        signed.bytes.len(),
        signed.signing_hash
    );

    // 4. Verify the exact bytes a receiver got.
    let verified = codec
        .verify(SignedDocumentKind::Command, &signed.bytes, &resolver)
        .map_err(|e| format!("verification: {}", e.protected()))?;
    println!(
        "verified: signed by {} with {} at {}",
        verified.principal.id, verified.key_id, verified.protected_time
    );

    // 5. Handle a rejection: one changed byte in the payload breaks the signature (stage 6).
    let tampered = String::from_utf8_lossy(&signed.bytes)
        .replace("Quarterly", "Quarterlx")
        .into_bytes();
    match codec.verify(SignedDocumentKind::Command, &tampered, &resolver) {
        Ok(_) => return Err("a tampered document verified".into()),
        Err(error) => {
            // On the wire: the code and the fixed message only (§6.4, §19).
            println!(
                "rejected on the wire: {} {:?}",
                error.wire_code(),
                error.wire_message()
            );
            // In the protected audit record: stage, reason and detail.
            println!("protected reason: {}/{}", error.stage, error.reason);
        }
    }
    Ok(())
}
