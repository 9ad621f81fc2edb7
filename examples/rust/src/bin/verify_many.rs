//! Verify many documents in one call (`verify_many`), spread over threads.
//!
//! ```text
//! cargo run --release -p missionweaveprotocol-examples --bin verify_many
//! ```
//!
//! Results come back in input order, one `Result` per document, so one bad document never
//! hides the others.

use std::process::ExitCode;

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol::registry::{AgentRegistryKeyResolver, RegistryBuilder};
use missionweaveprotocol::{Principal, PrincipalType, SignedDocumentCodec, SignedDocumentKind};

const ORGANIZATION: &str = "urn:missionweaveprotocol:organization:acme";
const AGENT: &str = "urn:missionweaveprotocol:agent:planner";

fn command(index: usize) -> Result<Value, String> {
    let text = format!(
        r#"{{"protocolVersion":"0.1","actionId":"urn:uuid:00000000-0000-4000-8000-{index:012}",
            "actor":{{"type":"agent","id":"{AGENT}"}},"sessionEpoch":3,"membershipEpoch":1,
            "groupId":"urn:missionweaveprotocol:group:finance","kind":"work.checkpoint",
            "correlationId":"urn:uuid:5e0c2a4b-1d3f-4e6a-8b7c-9d0e1f2a3b4c",
            "issuedAt":"2026-07-15T09:30:00Z","payload":{{"step":{index}}}}}"#
    );
    json::parse(text.as_bytes()).map_err(|e| format!("command {index}: {e}"))
}

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
    let key = SigningKey::from_seed("urn:missionweaveprotocol:key:planner-1", &[7; 32]);
    let mut registry = RegistryBuilder::new(ORGANIZATION);
    registry
        .add_key(
            key.key_id(),
            Principal::new(PrincipalType::Agent, AGENT),
            &key.public_key_bytes(),
            "2026-01-01T00:00:00Z",
        )
        .map_err(|e| e.to_string())?;
    let (registry_bytes, _) = registry.build().map_err(|e| e.to_string())?;
    let resolver = AgentRegistryKeyResolver::new(&registry_bytes);
    let codec = SignedDocumentCodec::new();

    let mut documents = Vec::new();
    for index in 0..1000 {
        let signed = codec
            .sign(SignedDocumentKind::Command, &command(index)?, &key)
            .map_err(|e| e.to_string())?;
        documents.push(signed.bytes);
    }
    // One document arrives damaged: it is not JSON any more (stage 1).
    documents[500].truncate(10);

    let items: Vec<(SignedDocumentKind, &[u8])> = documents
        .iter()
        .map(|bytes| (SignedDocumentKind::Command, bytes.as_slice()))
        .collect();
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let results = codec.verify_many(&items, &resolver, threads);

    let verified = results.iter().filter(|result| result.is_ok()).count();
    println!(
        "{verified}/{} verified on up to {threads} threads",
        results.len()
    );
    for (index, result) in results.iter().enumerate() {
        if let Err(error) = result {
            println!(
                "document {index}: {} ({}/{})",
                error.wire_code(),
                error.stage,
                error.reason
            );
        }
    }
    if verified == results.len() - 1 {
        Ok(())
    } else {
        Err("expected exactly one rejection".into())
    }
}
