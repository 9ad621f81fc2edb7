//! The Rust participant of the one-server test (`js/test/one-server.test.mjs`), the script every
//! host runs against one server (issue 24):
//!
//! 1. authenticate; subscribe to every Group from the durable cursors of an Agent-local SQLite
//!    store (`STORE`, fresh: 0);
//! 2. send `COUNT` `message.post` Commands in each Group (texts `one-server:<TAG>:<g>:<i>`, `g`
//!    the Group's index), then read each Group's verified Events in order, moving the durable
//!    cursor with each (`advance`: the store first, then `ACK`), until every participant's
//!    (`TAGS`) texts of that Group arrived;
//! 3. disconnect (close the client and the store);
//! 4. reopen the store, authenticate again (a new Session Epoch), resubscribe from the durable
//!    cursors, send `one-server:<TAG>:<g>:again` in each Group, and read on until every
//!    participant's texts, the first ones and the `again` ones, arrived.
//!
//! Prints one JSON line: `{"epochs":[e1,e2],"cursors":[..],"resumedAt":[..],"seen":[[g,seq,text],..]}`:
//! the Session Epochs, each Group's durable cursor at the disconnect, the first sequence delivered
//! in each Group after the reconnect, and every expected `message.posted` Event with its sequence.
//!
//! ```text
//! participant URL CA.pem|- REGISTRY.json AGENT KEY_ID SEED AUTHORITY GROUPS CONVERSATIONS STORE TAG TAGS COUNT
//! ```
//!
//! `GROUPS`, `CONVERSATIONS` (each Group's main Conversation) and `TAGS` are comma-separated.
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
use missionweaveprotocol_agent::replay::AgentLocalStore;
use missionweaveprotocol_client::{Client, ClientOptions, Subscription, TlsOptions};
use missionweaveprotocol_host::{OsRandom, SystemClock};
use missionweaveprotocol_kernel::random::RandomSource;
use missionweaveprotocol_store_sqlite::SqliteAgentStore;

type Failure = Box<dyn std::error::Error>;

/// What the script needs besides the connection options.
struct Script {
    agent: String,
    groups: Vec<String>,
    conversations: Vec<String>,
    tag: String,
    tags: Vec<String>,
    count: u32,
    key: Arc<SigningKey>,
}

/// What it saw.
#[derive(Default)]
struct Seen {
    /// `(group index, sequence, text)` of every expected text, first sight only.
    texts: Vec<(usize, u64, String)>,
    /// Texts still awaited, per Group.
    awaited: Vec<BTreeSet<String>>,
}

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
        groups,
        conversations,
        store_path,
        tag,
        tags,
        count,
    ] = args.as_slice()
    else {
        return Err("usage: participant URL CA.pem|- REGISTRY.json AGENT KEY_ID SEED AUTHORITY GROUPS CONVERSATIONS STORE TAG TAGS COUNT".into());
    };
    let seed: [u8; 32] = decode_base64url(seed)
        .and_then(|bytes| bytes.try_into().ok())
        .ok_or("SEED: base64url of a 32-byte Ed25519 seed")?;
    let registry = Arc::new(
        KeyRegistrySnapshot::from_bytes(&std::fs::read(registry)?)
            .map_err(|e| format!("{registry}: {:?}", e.reason))?,
    );
    let list = |s: &str| s.split(',').map(str::to_owned).collect::<Vec<_>>();
    let script = Script {
        agent: agent.clone(),
        groups: list(groups),
        conversations: list(conversations),
        tag: tag.clone(),
        tags: list(tags),
        count: count.parse()?,
        key: Arc::new(SigningKey::from_seed(key_id.as_str(), &seed)),
    };
    let options = |store: Arc<SqliteAgentStore>| -> Result<ClientOptions, Failure> {
        let tls = if ca == "-" {
            TlsOptions::plaintext()
        } else {
            TlsOptions::from_pem_file(ca)?
        };
        Ok(ClientOptions::new(
            agent.as_str(),
            script.key.clone(),
            registry.clone(),
            Principal::new(PrincipalType::Service, authority.as_str()),
            tls,
        )
        .with_store(store))
    };

    // 1-2: the first connection.
    let mut seen = Seen {
        texts: Vec::new(),
        awaited: (0..script.groups.len())
            .map(|g| script.texts(g, false))
            .collect(),
    };
    let store = Arc::new(SqliteAgentStore::open(store_path)?);
    let client = Client::connect(url, options(store.clone())?).await?;
    let first_epoch = client.session_epoch().ok_or("not authenticated")?;
    let (_, cursors) = script
        .session(&client, first_epoch, &mut seen, false)
        .await?;
    // 3: disconnect; the store is closed with the last reference to it.
    client.close().await;
    drop(client);
    drop(store);

    // 4: a new client over the reopened store.
    for g in 0..script.groups.len() {
        seen.awaited[g].extend(script.texts(g, true));
        let already: Vec<String> = seen
            .texts
            .iter()
            .filter(|(i, ..)| *i == g)
            .map(|(.., t)| t.clone())
            .collect();
        for text in already {
            seen.awaited[g].remove(&text);
        }
    }
    let store = Arc::new(SqliteAgentStore::open(store_path)?);
    for (g, group) in script.groups.iter().enumerate() {
        let durable = store.cursor(&script.agent, group)?;
        if durable != cursors[g] {
            return Err(format!(
                "{group}: the reopened store's cursor is {durable}, not {}",
                cursors[g]
            )
            .into());
        }
    }
    let client = Client::connect(url, options(store)?).await?;
    let second_epoch = client.session_epoch().ok_or("not authenticated")?;
    let (resumed_at, _) = script
        .session(&client, second_epoch, &mut seen, true)
        .await?;
    client.close().await;

    let numbers = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
    let texts: Vec<String> = seen
        .texts
        .iter()
        .map(|(g, s, t)| format!("[{g},{s},\"{t}\"]"))
        .collect();
    println!(
        r#"{{"epochs":[{first_epoch},{second_epoch}],"cursors":[{}],"resumedAt":[{}],"seen":[{}]}}"#,
        numbers(&cursors),
        numbers(&resumed_at),
        texts.join(",")
    );
    Ok(())
}

impl Script {
    /// Every participant's texts of Group `g`: the first ones, or the `again` ones.
    fn texts(&self, g: usize, again: bool) -> BTreeSet<String> {
        let suffixes: Vec<String> = if again {
            vec!["again".to_owned()]
        } else {
            (0..self.count).map(|i| i.to_string()).collect()
        };
        self.tags
            .iter()
            .flat_map(|t| {
                suffixes
                    .iter()
                    .map(move |s| format!("one-server:{t}:{g}:{s}"))
            })
            .collect()
    }

    /// Subscribes from the durable cursors, posts this participant's texts (the `again` ones
    /// after the reconnect), reads every Group until its awaited texts arrived. Answers the
    /// first sequence delivered in each Group and each Group's durable cursor at the end.
    async fn session(
        &self,
        client: &Client,
        epoch: u64,
        seen: &mut Seen,
        again: bool,
    ) -> Result<(Vec<u64>, Vec<u64>), Failure> {
        let mut streams = Vec::new();
        for group in &self.groups {
            streams.push(client.events(group)?);
        }
        let from = client
            .durable_cursors(&self.groups.iter().map(String::as_str).collect::<Vec<_>>())
            .await?;
        client
            .subscribe(
                self.groups
                    .iter()
                    .map(|g| Subscription::durable(g.as_str())),
            )
            .await?;
        for (g, group) in self.groups.iter().enumerate() {
            let suffixes: Vec<String> = if again {
                vec!["again".to_owned()]
            } else {
                (0..self.count).map(|i| i.to_string()).collect()
            };
            for suffix in suffixes {
                let text = format!("one-server:{}:{g}:{suffix}", self.tag);
                let command = self.post(epoch, group, &self.conversations[g], &text)?;
                client.send(command).await?;
            }
        }
        let mut first = Vec::new();
        let mut cursors = Vec::new();
        for (g, stream) in streams.iter_mut().enumerate() {
            let mut last = from[g].1;
            let mut first_delivered = None;
            while !seen.awaited[g].is_empty() {
                let event = tokio::time::timeout(Duration::from_secs(60), stream.recv())
                    .await?
                    .ok_or("the Event stream ended")?;
                if !event.in_order || event.sequence != last + 1 {
                    return Err(format!("out of order: {} after {last}", event.sequence).into());
                }
                last = event.sequence;
                first_delivered.get_or_insert(event.sequence);
                client.advance(&event).await?;
                if event.document.get("kind").and_then(Value::as_str) != Some("message.posted") {
                    continue;
                }
                // The text as a JSON string anywhere in the Event (layout independent).
                let dumped = String::from_utf8_lossy(&event.bytes).into_owned();
                let found: Vec<String> = seen.awaited[g]
                    .iter()
                    .filter(|text| dumped.contains(&format!("\"{text}\"")))
                    .cloned()
                    .collect();
                for text in found {
                    seen.awaited[g].remove(&text);
                    seen.texts.push((g, event.sequence, text));
                }
            }
            first.push(first_delivered.unwrap_or(0));
            cursors.push(last);
        }
        Ok((first, cursors))
    }

    /// `message.post` by the Agent at Session Epoch `epoch`, issued now, signed.
    fn post(
        &self,
        epoch: u64,
        group: &str,
        conversation: &str,
        text: &str,
    ) -> Result<Vec<u8>, Failure> {
        let now = SystemClock.now().to_rfc3339().ok_or("clock out of range")?;
        let command = format!(
            r#"{{"protocolVersion":"0.1","actionId":"urn:missionweaveprotocol:action:rs-{action}",
            "actor":{{"type":"agent","id":"{agent}"}},"sessionEpoch":{epoch},"membershipEpoch":1,
            "groupId":"{group}","kind":"message.post",
            "correlationId":"urn:missionweaveprotocol:correlation:1","issuedAt":"{now}",
            "payload":{{"messageId":"urn:missionweaveprotocol:message:rs-{message}",
            "conversationId":"{conversation}","content":[{{"type":"text","text":"{text}"}}]}}}}"#,
            agent = self.agent,
            action = token()?,
            message = token()?,
        );
        let command = json::parse(command.as_bytes()).map_err(|e| format!("command: {e}"))?;
        Ok(SignedDocumentCodec::new()
            .sign(SignedDocumentKind::Command, &command, self.key.as_ref())?
            .bytes)
    }
}

/// A random 128-bit hex token (Action and Message IDs).
fn token() -> Result<String, Failure> {
    let mut bytes = [0u8; 16];
    OsRandom
        .fill(&mut bytes)
        .map_err(|_| "no randomness available")?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
