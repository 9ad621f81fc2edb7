//! The Rust participant of the one-server test (`js/test/one-server.test.mjs`): authenticate,
//! subscribe to one Group from 0, send `COUNT` `message.post` Commands (texts
//! `one-server:<TAG>:<i>`), then read the Group's verified Events in order until every text of
//! `EXPECT` (comma-separated) arrived, acknowledging each. Prints `epoch <n>`, then one line
//! `<sequence> <text>` per expected `message.posted` Event, in Group order.
//!
//! ```text
//! participant URL CA.pem|- REGISTRY.json AGENT KEY_ID SEED AUTHORITY GROUP CONVERSATION TAG COUNT EXPECT
//! ```
//!
//! `CA.pem`: the server's certificate for `wss://`; `-` for `ws://` (a server run with
//! `--allow-insecure`, as the test's, where the browser joins over plain `ws://`).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol::schema_formats::decode_base64url;
use missionweaveprotocol::{
    KeyRegistrySnapshot, Principal, PrincipalType, SignedDocumentCodec, SignedDocumentKind,
};
use missionweaveprotocol_client::{Client, ClientOptions, Subscription, TlsOptions};
use missionweaveprotocol_host::{OsRandom, SystemClock};
use missionweaveprotocol_kernel::random::RandomSource;

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
        conversation,
        tag,
        count,
        expect,
    ] = args.as_slice()
    else {
        return Err("usage: participant URL CA.pem|- REGISTRY.json AGENT KEY_ID SEED AUTHORITY GROUP CONVERSATION TAG COUNT EXPECT".into());
    };
    let seed: [u8; 32] = decode_base64url(seed)
        .and_then(|bytes| bytes.try_into().ok())
        .ok_or("SEED: base64url of a 32-byte Ed25519 seed")?;
    let registry = KeyRegistrySnapshot::from_bytes(&std::fs::read(registry)?)
        .map_err(|e| format!("{registry}: {:?}", e.reason))?;
    let key = Arc::new(SigningKey::from_seed(key_id.as_str(), &seed));
    let tls = if ca == "-" {
        TlsOptions::plaintext()
    } else {
        TlsOptions::from_pem_file(ca)?
    };
    let options = ClientOptions::new(
        agent.as_str(),
        key.clone(),
        Arc::new(registry),
        Principal::new(PrincipalType::Service, authority.as_str()),
        tls,
    );
    let count: u32 = count.parse()?;
    let mut expect: BTreeSet<String> = expect.split(',').map(str::to_owned).collect();

    let client = Client::connect(url, options).await?;
    let epoch = client.session_epoch().ok_or("not authenticated")?;
    println!("epoch {epoch}");
    let mut events = client.events(group)?;
    client.subscribe([Subscription::after(group, 0)]).await?;
    for i in 0..count {
        let text = format!("one-server:{tag}:{i}");
        let command = post(agent, epoch, group, conversation, &text, &key)?;
        client.send(command).await?;
    }
    let mut last = 0;
    while !expect.is_empty() {
        let event = tokio::time::timeout(Duration::from_secs(60), events.recv())
            .await?
            .ok_or("the Event stream ended")?;
        if !event.in_order || event.sequence != last + 1 {
            return Err(format!("out of order: {} after {last}", event.sequence).into());
        }
        last = event.sequence;
        client.acknowledge(group, event.sequence).await?;
        if event.document.get("kind").and_then(Value::as_str) != Some("message.posted") {
            continue;
        }
        // The text as a JSON string anywhere in the Event (layout independent).
        let dumped = String::from_utf8_lossy(&event.bytes).into_owned();
        let found: Vec<String> = expect
            .iter()
            .filter(|text| dumped.contains(&format!("\"{text}\"")))
            .cloned()
            .collect();
        for text in found {
            println!("{} {text}", event.sequence);
            expect.remove(&text);
        }
    }
    client.close().await;
    Ok(())
}

/// A random 128-bit hex token (Action and Message IDs).
fn token() -> Result<String, Failure> {
    let mut bytes = [0u8; 16];
    OsRandom
        .fill(&mut bytes)
        .map_err(|_| "no randomness available")?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// `message.post` by `agent` at Session Epoch `epoch`, issued now, signed.
fn post(
    agent: &str,
    epoch: u64,
    group: &str,
    conversation: &str,
    text: &str,
    key: &SigningKey,
) -> Result<Vec<u8>, Failure> {
    let now = SystemClock.now().to_rfc3339().ok_or("clock out of range")?;
    let command = format!(
        r#"{{"protocolVersion":"0.1","actionId":"urn:missionweaveprotocol:action:rs-{action}",
        "actor":{{"type":"agent","id":"{agent}"}},"sessionEpoch":{epoch},"membershipEpoch":1,
        "groupId":"{group}","kind":"message.post",
        "correlationId":"urn:missionweaveprotocol:correlation:1","issuedAt":"{now}",
        "payload":{{"messageId":"urn:missionweaveprotocol:message:rs-{message}",
        "conversationId":"{conversation}","content":[{{"type":"text","text":"{text}"}}]}}}}"#,
        action = token()?,
        message = token()?,
    );
    let command = json::parse(command.as_bytes()).map_err(|e| format!("command: {e}"))?;
    Ok(SignedDocumentCodec::new()
        .sign(SignedDocumentKind::Command, &command, key)?
        .bytes)
}
