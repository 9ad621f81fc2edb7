//! Connect to a MissionWeaveProtocol server, subscribe to one Group, send one Command and print
//! its Event (docs/network.md, "The client").
//!
//! ```text
//! cargo run -p missionweaveprotocol-client --example connect -- \
//!   wss://localhost:8443/ dev-cert.pem registry.json \
//!   urn:missionweaveprotocol:agent:planner urn:missionweaveprotocol:key:planner-1 <base64url seed> \
//!   urn:missionweaveprotocol:service:group-authority urn:missionweaveprotocol:group:finance \
//!   command.json
//! ```
//!
//! `dev-cert.pem`: the certificate the server trusts itself with (`--dev` prints where it is);
//! `registry.json`: the Organization Registry; `command.json`: an unsigned Agent Command of
//! that Group — `sessionEpoch`, `issuedAt` and the signature are filled in here.

use std::sync::Arc;

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json::{self, Number, Value};
use missionweaveprotocol::schema_formats::decode_base64url;
use missionweaveprotocol::{
    KeyRegistrySnapshot, Principal, PrincipalType, SignedDocumentCodec, SignedDocumentKind,
};
use missionweaveprotocol_client::{Client, ClientOptions, Subscription, TlsOptions};
use missionweaveprotocol_host::SystemClock;

type Failure = Box<dyn std::error::Error>;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Failure> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [
        url,
        ca,
        registry,
        agent,
        key_id,
        seed,
        authority,
        group,
        command,
    ] = args.as_slice()
    else {
        return Err("usage: connect URL CA.pem REGISTRY.json AGENT KEY_ID SEED AUTHORITY GROUP COMMAND.json".into());
    };
    let seed: [u8; 32] = decode_base64url(seed)
        .and_then(|bytes| bytes.try_into().ok())
        .ok_or("SEED: base64url of a 32-byte Ed25519 seed")?;
    let registry = KeyRegistrySnapshot::from_bytes(&std::fs::read(registry)?)
        .map_err(|e| format!("{registry}: {:?}", e.reason))?;
    let key = Arc::new(SigningKey::from_seed(key_id.as_str(), &seed));
    let options = ClientOptions::new(
        agent.as_str(),
        key.clone(),
        Arc::new(registry),
        Principal::new(PrincipalType::Service, authority.as_str()),
        TlsOptions::from_pem_file(ca)?,
    );

    // The five lines the README quotes: connect, subscribe, send, read.
    let client = Client::connect(url, options).await?;
    let mut events = client.events(group)?;
    client.subscribe([Subscription::after(group, 0)]).await?;
    let outcome = client
        .send(sign(command, client.session_epoch(), &key)?)
        .await?;
    println!(
        "applied: {} at {}#{}",
        outcome[0].event_id, group, outcome[0].sequence
    );

    // Everything the Group holds so far, verified and in order.
    while let Ok(Some(event)) =
        tokio::time::timeout(std::time::Duration::from_secs(2), events.recv()).await
    {
        let kind = event.document.get("kind").and_then(Value::as_str);
        println!("{} {}", event.sequence, kind.unwrap_or("?"));
    }
    client.close().await;
    Ok(())
}

/// The Command of `path`, at this Session Epoch, issued now, signed.
fn sign(path: &str, epoch: Option<u64>, key: &SigningKey) -> Result<Vec<u8>, Failure> {
    let mut command = json::parse(&std::fs::read(path)?).map_err(|e| format!("{path}: {e}"))?;
    let Value::Object(members) = &mut command else {
        return Err(format!("{path}: not a JSON object").into());
    };
    let epoch = epoch.ok_or("not connected")?;
    members.insert("sessionEpoch", Value::Number(Number::from_u64(epoch)));
    let now = SystemClock.now().to_rfc3339().ok_or("clock out of range")?;
    members.insert("issuedAt", Value::string(now));
    Ok(SignedDocumentCodec::new()
        .sign(SignedDocumentKind::Command, &command, key)?
        .bytes)
}
