//! Load benchmark of `missionweaveprotocol-server` (docs/network.md, "Load benchmark"):
//! loopback only, bounded in count and time, stops by itself, prints figures.
//!
//! ```text
//! cargo build --release -p missionweaveprotocol-server --bin missionweaveprotocol-server --example load
//! target/release/examples/load [--connections 1000] [--groups 200] [--per-connection 5]
//!     [--store sqlite|postgres] [--processes 1] [--seconds 10] [--rate 1000] [--window 64]
//!     [--client-commands 0] [--in-process 0 [--aggregate-cache on|off]] [--page-size BYTES]
//! ```
//!
//! `--page-size`: of the fresh SQLite file (default: the server's `--sqlite-page-size`, the
//! page size a file the server creates gets).
//!
//! It makes an Organization (one Agent per connection), seeds `--groups` Groups into a fresh
//! store (SQLite in a temporary directory, or a fresh database on the PostgreSQL server of
//! `MWP_POSTGRES_URL` / `scripts/pg-cluster.sh`), starts `--processes` release server
//! processes (`--dev`), opens the connections (TLS 1.3, HELLO with the gateway's sans-IO
//! client session, SUBSCRIBE to `--per-connection` Groups each from their heads), then:
//!
//! 1. memory per idle connection: the servers' RSS after the connections minus before, per
//!    connection;
//! 2. a paced phase (`--rate` Commands/s for `--seconds`): p50/p99 from sending a Command to
//!    its Event at the sender and at every subscriber;
//! 3. a closed-loop phase (`--window` Commands outstanding for `--seconds`): Commands/s
//!    sustained and Event deliveries/s;
//! 4. with `--client-commands N`: the Rust client (`missionweaveprotocol-client`) as one more
//!    connection, N Commands one at a time then N with 16 in flight, send → verified Event.
//!
//! The load generator does not verify Event signatures (the Rust client does; here it would
//! measure the generator): it reads each `EVENT` frame's cause, whose Action ID carries the
//! send time.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json;
use missionweaveprotocol::registry::RegistryBuilder;
use missionweaveprotocol::schema_formats::encode_base64url;
use missionweaveprotocol::{
    KeyRegistrySnapshot, Principal, PrincipalType, SignedDocumentCodec, SignedDocumentKind,
};
use missionweaveprotocol_engine::config::CoreConfig;
use missionweaveprotocol_engine::store::StoreOptions;
use missionweaveprotocol_gateway::client::{ClientConfig, Session, SessionEvent};
use missionweaveprotocol_gateway::frames::{self, FrameIds, SubscribeGroup};
use missionweaveprotocol_host::{OsRandom, SystemClock};
use missionweaveprotocol_server::cli::DEFAULT_SQLITE_PAGE_SIZE;
use missionweaveprotocol_store_open::{StoreUrl, open, open_with_page_size};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::net::TcpStream;
use tokio::sync::{Semaphore, mpsc};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

const ORG: &str = "urn:missionweaveprotocol:organization:bench";
const OWNER: &str = "urn:missionweaveprotocol:human:owner";
const AUTHORITY: &str = "urn:missionweaveprotocol:service:group-authority";
const REGISTRAR: &str = "urn:missionweaveprotocol:service:registrar";
const HASH: &str = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const ACTION_MARK: &str = "urn:missionweaveprotocol:action:L";
/// The whole run stops after this, whatever happens.
const HARD_LIMIT: Duration = Duration::from_secs(900);

#[derive(Debug, Clone)]
struct Options {
    connections: usize,
    groups: usize,
    per_connection: usize,
    postgres: bool,
    processes: usize,
    seconds: u64,
    rate: u64,
    window: usize,
    /// Commands of the Rust-client phase (0: none).
    client_commands: usize,
    /// Commands of the in-process run (0: none; else only that run).
    in_process: usize,
    /// Whether the in-process run caches aggregates.
    aggregate_cache: bool,
    /// The page size of the fresh SQLite file (the server's default unless `--page-size`).
    page_size: u32,
}

fn options() -> Options {
    let mut o = Options {
        connections: 1000,
        groups: 200,
        per_connection: 5,
        postgres: false,
        processes: 1,
        seconds: 10,
        rate: 1000,
        window: 64,
        client_commands: 0,
        in_process: 0,
        aggregate_cache: true,
        page_size: DEFAULT_SQLITE_PAGE_SIZE,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).cloned().unwrap_or_default();
        let number = || {
            value
                .parse::<u64>()
                .unwrap_or_else(|_| panic!("{}: a number", args[i]))
        };
        match args[i].as_str() {
            "--connections" => o.connections = number() as usize,
            "--groups" => o.groups = number() as usize,
            "--per-connection" => o.per_connection = number() as usize,
            "--store" => o.postgres = value == "postgres",
            "--processes" => o.processes = number() as usize,
            "--seconds" => o.seconds = number().min(120),
            "--rate" => o.rate = number(),
            "--window" => o.window = number() as usize,
            "--client-commands" => o.client_commands = (number() as usize).min(100_000),
            "--in-process" => o.in_process = (number() as usize).min(100_000),
            "--aggregate-cache" => o.aggregate_cache = value == "on",
            "--page-size" => o.page_size = number() as u32,
            other => panic!("unknown flag {other} (see the example's doc comment)"),
        }
        i += 2;
    }
    assert!(o.connections >= 2 && o.groups >= o.per_connection && o.per_connection >= 1);
    assert!(
        o.processes >= 1 && (o.processes == 1 || o.postgres),
        "several processes need --store postgres"
    );
    o
}

fn agent_id(i: usize) -> String {
    format!("urn:missionweaveprotocol:agent:a{i}")
}

fn group_id(g: usize) -> String {
    format!("urn:missionweaveprotocol:group:g{g}")
}

fn conversation(g: usize) -> String {
    format!("urn:missionweaveprotocol:conversation:c{g}")
}

/// The Groups of connection `i`: `per` consecutive ones from `i * per`, so every Group gets
/// `connections * per / groups` members.
fn groups_of(i: usize, o: &Options) -> Vec<usize> {
    (0..o.per_connection)
        .map(|k| (i * o.per_connection + k) % o.groups)
        .collect()
}

fn key(id: &str, n: u64) -> SigningKey {
    let mut seed = [7u8; 32];
    seed[..8].copy_from_slice(&n.to_be_bytes());
    SigningKey::from_seed(
        format!(
            "urn:missionweaveprotocol:key:{}",
            id.rsplit(':').next().unwrap()
        ),
        &seed,
    )
}

struct Org {
    registry: Arc<KeyRegistrySnapshot>,
    registry_bytes: Vec<u8>,
    agents: Vec<SigningKey>,
    owner: SigningKey,
    authority: SigningKey,
    registrar: SigningKey,
}

fn now_text() -> String {
    SystemClock.now().to_rfc3339().unwrap()
}

fn sign(kind_key: &SigningKey, unsigned: &str) -> Vec<u8> {
    let value = json::parse(unsigned.as_bytes()).unwrap();
    SignedDocumentCodec::new()
        .sign(SignedDocumentKind::Command, &value, kind_key)
        .unwrap()
        .bytes
}

impl Org {
    fn new(connections: usize) -> Self {
        let owner = key(OWNER, 1_000_001);
        let authority = key(AUTHORITY, 1_000_002);
        let registrar = key(REGISTRAR, 1_000_003);
        let mut builder = RegistryBuilder::new(ORG);
        let add = |b: &mut RegistryBuilder, k: &SigningKey, kind, id: &str| {
            b.add_key(
                k.key_id(),
                Principal::new(kind, id),
                &k.public_key_bytes(),
                "2020-01-01T00:00:00Z",
            )
            .unwrap();
        };
        add(&mut builder, &owner, PrincipalType::Human, OWNER);
        add(&mut builder, &authority, PrincipalType::Service, AUTHORITY);
        add(&mut builder, &registrar, PrincipalType::Service, REGISTRAR);
        let agents: Vec<SigningKey> = (0..connections)
            .map(|i| key(&agent_id(i), i as u64))
            .collect();
        for (i, k) in agents.iter().enumerate() {
            add(&mut builder, k, PrincipalType::Agent, &agent_id(i));
        }
        let (registry_bytes, registry) = builder.build().unwrap();
        Self {
            registry: Arc::new(registry),
            registry_bytes,
            agents,
            owner,
            authority,
            registrar,
        }
    }

    /// Agent 0's card, signed by the registrar (the server bootstraps at least one card).
    fn card_file(&self) -> Vec<u8> {
        let k = &self.agents[0];
        let unsigned = format!(
            r#"{{"agentId": "{}", "organizationId": "{ORG}", "cardVersion": 1,
            "displayName": "bench", "owner": {{"type": "human", "id": "{OWNER}"}},
            "status": "active", "protocolVersions": ["0.1"],
            "endpoints": [{{"transport": "wss", "uri": "wss://bench.example/a"}}],
            "publicKeys": [{{"keyId": "{}", "algorithm": "Ed25519", "publicKey": "{}",
              "validFrom": "2020-01-01T00:00:00Z"}}],
            "capabilities": [{{"id": "text.summarise", "version": "1.2.0",
              "inputSchema": "https://schemas.example/in.json", "inputSchemaHash": "{HASH}",
              "outputSchema": "https://schemas.example/out.json", "outputSchemaHash": "{HASH}",
              "constraints": {{}}, "verifiedEvidence": ["urn:missionweaveprotocol:evidence:e"]}}],
            "maxConcurrency": 2, "issuedAt": "2026-01-01T00:00:00Z"}}"#,
            agent_id(0),
            k.key_id(),
            encode_base64url(&k.public_key_bytes())
        );
        let card = SignedDocumentCodec::new()
            .sign(
                SignedDocumentKind::AgentCard,
                &json::parse(unsigned.as_bytes()).unwrap(),
                &self.registrar,
            )
            .unwrap()
            .bytes;
        let mut file = b"[".to_vec();
        file.extend(card);
        file.push(b']');
        file
    }

    fn owner_command(&self, group: &str, kind: &str, payload: &str, n: usize) -> Vec<u8> {
        let epoch = if kind == "mission.create" {
            ""
        } else {
            r#""membershipEpoch": 1,"#
        };
        sign(
            &self.owner,
            &format!(
                r#"{{"protocolVersion": "0.1", "actionId": "urn:missionweaveprotocol:action:seed-{n}",
                "actor": {{"type": "human", "id": "{OWNER}"}}, {epoch}
                "groupId": "{group}", "kind": "{kind}",
                "correlationId": "urn:missionweaveprotocol:correlation:seed",
                "issuedAt": "{}", "payload": {payload}}}"#,
                now_text()
            ),
        )
    }

    /// A `message.post` by agent `i` in Group `g`, its Action ID carrying the send time.
    fn post(&self, i: usize, epoch: u64, g: usize, micros: u64, n: u64) -> Vec<u8> {
        sign(
            &self.agents[i],
            &format!(
                r#"{{"protocolVersion": "0.1", "actionId": "{ACTION_MARK}{micros}-{i}-{n}",
                "actor": {{"type": "agent", "id": "{}"}}, "sessionEpoch": {epoch}, "membershipEpoch": 1,
                "groupId": "{}", "kind": "message.post",
                "correlationId": "urn:missionweaveprotocol:correlation:bench",
                "issuedAt": "{}", "payload": {{"messageId": "urn:missionweaveprotocol:message:m{micros}-{i}-{n}",
                "conversationId": "{}", "content": [{{"type": "text", "text": "load"}}]}}}}"#,
                agent_id(i),
                group_id(g),
                now_text(),
                conversation(g)
            ),
        )
    }
}

/// Seeds the Groups: each a Mission coordinated by agent 0, every connection's Agent a worker
/// of its Groups. Returns each Group's head.
fn seed(org: &Org, url: &str, o: &Options) -> Vec<u64> {
    // The file the server would have created itself: its page size (`--sqlite-page-size`).
    let store = open_with_page_size(
        &StoreUrl::parse(url).unwrap(),
        &StoreOptions::default(),
        o.page_size,
    )
    .unwrap();
    let core = CoreConfig::new(&Principal::new(PrincipalType::Service, AUTHORITY))
        .build(
            store,
            Arc::clone(&org.registry),
            org.authority.clone(),
            Box::new(OsRandom),
        )
        .unwrap();
    let mut heads = vec![0u64; o.groups];
    let mut n = 0;
    let perform = |bytes: Vec<u8>, heads: &mut Vec<u64>, g: usize| {
        let performed = core
            .perform_bytes(&bytes, SystemClock.now())
            .unwrap_or_else(|e| panic!("seed refused: {} {}", e.wire_code, e.message));
        for e in &performed.events {
            heads[g] = heads[g].max(e.sequence);
        }
    };
    for g in 0..o.groups {
        let payload = format!(
            r#"{{"missionId": "urn:missionweaveprotocol:mission:m{g}", "objective": "Bench",
            "definitionOfDone": [{{"criterionId": "done", "description": "Done",
              "evidenceRequired": ["deterministic_test"]}}],
            "budget": {{"modelTokenLimit": 100000, "toolCallLimit": 1000, "currency": "EUR", "financialLimit": 50}},
            "deadline": "2099-08-01T00:00:00Z",
            "approvalPolicy": {{"finalHumanApproval": true, "highRiskExecutionApproval": true}},
            "coordinator": {{"agentId": "{}", "agentCardVersion": 1, "leaseId": "urn:missionweaveprotocol:lease:l{g}"}},
            "mainConversationId": "{}"}}"#,
            agent_id(0),
            conversation(g)
        );
        n += 1;
        perform(
            org.owner_command(&group_id(g), "mission.create", &payload, n),
            &mut heads,
            g,
        );
    }
    for i in 1..o.connections {
        for g in groups_of(i, o) {
            let payload = format!(
                r#"{{"member": {{"type": "agent", "id": "{}"}}, "role": "worker",
                "scopes": ["work:execute"], "visibilityStartSequence": 0}}"#,
                agent_id(i)
            );
            n += 1;
            perform(
                org.owner_command(&group_id(g), "membership.change", &payload, n),
                &mut heads,
                g,
            );
        }
    }
    heads
}

/// The Command path without the network (`--in-process N`, instead of the network phases):
/// N `message.post`s by the owner across the Groups, performed one at a time through a Core on
/// the seeded store, as the server builds it on SQLite, with its aggregate cache
/// (`store::ExclusiveCache`) or without (`--aggregate-cache off`); the process CPU per
/// Command (a commit's fsync wait is not CPU). Under `valgrind --tool=callgrind` the user-space
/// instructions of the two settings compare independently of the machine's load.
fn in_process_run(org: &Org, url: &str, o: &Options) {
    let cached = o.aggregate_cache;
    let store = open(&StoreUrl::parse(url).unwrap()).unwrap();
    let store: missionweaveprotocol_store_open::SharedStore = if cached && !o.postgres {
        Arc::new(missionweaveprotocol_engine::store::ExclusiveCache::new(
            store,
        ))
    } else {
        store
    };
    let core = CoreConfig::new(&Principal::new(PrincipalType::Service, AUTHORITY))
        .build(
            store,
            Arc::clone(&org.registry),
            org.authority.clone(),
            Box::new(OsRandom),
        )
        .unwrap();
    let commands: Vec<Vec<u8>> = (0..o.in_process)
        .map(|n| {
            let g = n % o.groups;
            let payload = format!(
                r#"{{"messageId": "urn:missionweaveprotocol:message:p{n}",
                "conversationId": "{}", "content": [{{"type": "text", "text": "load"}}]}}"#,
                conversation(g)
            );
            org.owner_command(&group_id(g), "message.post", &payload, 1_000_000 + n)
        })
        .collect();
    let (user, system) = cpu_split(std::process::id());
    let started = Instant::now();
    for bytes in &commands {
        core.perform_bytes(bytes, SystemClock.now())
            .unwrap_or_else(|e| panic!("refused: {} {}", e.wire_code, e.message));
    }
    let (user_after, system_after) = cpu_split(std::process::id());
    let per = |seconds: f64| seconds * 1e6 / o.in_process as f64;
    println!(
        "in process, {} Commands one at a time, aggregate cache {}: {:.0} µs user + {:.0} µs system CPU per Command, {:.0} Commands/s",
        o.in_process,
        if cached { "on" } else { "off" },
        per(user_after - user),
        per(system_after - system),
        o.in_process as f64 / started.elapsed().as_secs_f64()
    );
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// CPU seconds (user + system) the process `pid` has used so far (`/proc/<pid>/stat`, in
/// clock ticks of 1/100 s): the machine is shared, so the CPU a Command costs is the figure
/// that compares across runs; wall-clock rates also depend on what else runs.
fn cpu_seconds(pid: u32) -> f64 {
    let (user, system) = cpu_split(pid);
    user + system
}

/// User and system CPU seconds of process `pid`.
fn cpu_split(pid: u32) -> (f64, f64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15 of the line: 11 and 12 after the name.
    (ticks(11) / 100.0, ticks(12) / 100.0)
}

struct Server {
    child: Child,
    addr: String,
    cert: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_server(binary: &Path, dir: &Path, url: &str, org: &Org, n: usize) -> Server {
    let cert = dir.join(format!("cert{n}.pem"));
    let mut child = Command::new(binary)
        .args([
            "--registry",
            dir.join("cards.json").to_str().unwrap(),
            "--agent-registry-snapshot",
            dir.join("registry.json").to_str().unwrap(),
            "--database-url",
            url,
            "--authority-key-id",
            org.authority.key_id(),
            "--authority-private-key",
            &encode_base64url(&org.authority.seed_bytes()),
            "--organization-public-key",
            &encode_base64url(&org.registrar.public_key_bytes()),
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--dev",
            "--dev-cert",
            cert.to_str().unwrap(),
            "--session-secret",
            "the-load-benchmark-shares-one-secret-0123",
            "--handshake-rate",
            "100000",
            "--max-unauthenticated",
            "1024",
        ])
        .env("MISSIONWEAVEPROTOCOL_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let url = loop {
        let line = lines
            .next()
            .expect("the server exited before listening")
            .unwrap();
        if let Some(url) = line.split("listening on ").nth(1) {
            break url.trim().to_owned();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    let addr = url
        .split("://")
        .nth(1)
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    Server { child, addr, cert }
}

#[derive(Default)]
struct Stats {
    recording: AtomicBool,
    deliveries: AtomicU64,
    own: AtomicU64,
    errors: AtomicU64,
    sender_us: Mutex<Vec<u32>>,
    subscriber_us: Mutex<Vec<u32>>,
    first_errors: Mutex<Vec<String>>,
}

type Ws = tokio_tungstenite::WebSocketStream<tokio_rustls::client::TlsStream<TcpStream>>;

fn micros(start: Instant) -> u64 {
    start.elapsed().as_micros() as u64
}

/// (send time, sender connection) from an `EVENT` frame's cause.
fn cause_of(frame: &str) -> Option<(u64, usize)> {
    let at = frame.find(ACTION_MARK)? + ACTION_MARK.len();
    let rest = &frame[at..];
    let mut parts = rest.splitn(3, '-');
    let t = parts.next()?.parse().ok()?;
    let i = parts.next()?.parse().ok()?;
    Some((t, i))
}

/// Opens connection `i`: TLS 1.3, HELLO, SUBSCRIBE from the heads. Returns it and its epoch.
async fn open_connection(
    i: usize,
    server: &(String, PathBuf),
    org: &Org,
    heads: &[u64],
    o: &Options,
) -> (Ws, u64) {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(&server.1).unwrap() {
        roots.add(cert.unwrap()).unwrap();
    }
    let tls = Arc::new(
        rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth(),
    );
    let tcp = TcpStream::connect(&server.0).await.unwrap();
    tcp.set_nodelay(true).unwrap();
    let stream = tokio_rustls::TlsConnector::from(tls)
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap();
    let config = WebSocketConfig::default()
        .read_buffer_size(16 * 1024)
        .write_buffer_size(0);
    let (mut ws, _) = tokio_tungstenite::client_async_with_config(
        format!("ws://{}/ws", server.0),
        stream,
        Some(config),
    )
    .await
    .unwrap();
    let client = ClientConfig::new(
        agent_id(i),
        Arc::clone(&org.registry),
        Principal::new(PrincipalType::Service, AUTHORITY),
    );
    let mut session =
        Session::new(client, Arc::new(org.agents[i].clone()), Box::new(OsRandom)).unwrap();
    session.start(SystemClock.now()).unwrap();
    let epoch = loop {
        while let Some(out) = session.poll_output() {
            ws.send(Message::text(String::from_utf8(out).unwrap()))
                .await
                .unwrap();
        }
        if let Some(event) = session.poll_event() {
            match event {
                SessionEvent::Authenticated { session_epoch, .. } => break session_epoch,
                other => panic!("connection {i}: {other:?}"),
            }
        }
        match ws.next().await {
            Some(Ok(Message::Text(text))) => {
                session.on_text(text.as_bytes(), SystemClock.now()).unwrap()
            }
            other => panic!("connection {i}: {other:?}"),
        }
    };
    let groups: Vec<SubscribeGroup> = groups_of(i, o)
        .into_iter()
        .map(|g| SubscribeGroup {
            group_id: group_id(g),
            after_sequence: heads[g],
            attention: None,
        })
        .collect();
    session.subscribe(&groups, SystemClock.now()).unwrap();
    while let Some(out) = session.poll_output() {
        ws.send(Message::text(String::from_utf8(out).unwrap()))
            .await
            .unwrap();
    }
    (ws, epoch)
}

/// One connection after HELLO: sends the Commands it is told to, reads every frame.
#[allow(clippy::too_many_arguments)] // one task's whole context, passed once
async fn drive(
    i: usize,
    mut ws: Ws,
    epoch: u64,
    org: Arc<Org>,
    mut sends: mpsc::UnboundedReceiver<usize>,
    stats: Arc<Stats>,
    window: Arc<Semaphore>,
    start: Instant,
) {
    let mut ids = FrameIds::new(&mut OsRandom).unwrap();
    let mut n = 0u64;
    loop {
        tokio::select! {
            g = sends.recv() => {
                let Some(g) = g else { return };
                n += 1;
                let command = org.post(i, epoch, g, micros(start), n);
                let frame = frames::command(&ids.next_id(), &command).unwrap();
                if ws.send(Message::text(String::from_utf8(frame).unwrap())).await.is_err() {
                    return;
                }
            }
            message = ws.next() => {
                let Some(Ok(Message::Text(text))) = message else {
                    match message {
                        Some(Ok(_)) => continue,
                        _ => return,
                    }
                };
                let text = text.as_str();
                if text.contains("\"frameType\":\"EVENT\"") {
                    let recording = stats.recording.load(Ordering::Relaxed);
                    if recording {
                        stats.deliveries.fetch_add(1, Ordering::Relaxed);
                    }
                    if let Some((sent, sender)) = cause_of(text) {
                        let latency = micros(start).saturating_sub(sent).min(u64::from(u32::MAX)) as u32;
                        if sender == i {
                            window.add_permits(1);
                            if recording {
                                stats.own.fetch_add(1, Ordering::Relaxed);
                                stats.sender_us.lock().unwrap().push(latency);
                            }
                        } else if recording {
                            stats.subscriber_us.lock().unwrap().push(latency);
                        }
                    }
                } else if text.contains("\"frameType\":\"ERROR\"") {
                    stats.errors.fetch_add(1, Ordering::Relaxed);
                    if text.contains(ACTION_MARK) {
                        window.add_permits(1);
                    }
                    let mut first = stats.first_errors.lock().unwrap();
                    if first.len() < 5 {
                        first.push(text.chars().take(300).collect());
                    }
                }
            }
        }
    }
}

/// The Rust client (`missionweaveprotocol-client`: TLS 1.3 with the dev certificate as the only
/// root, every Event's Group Authority signature verified) as Agent 0, on a server under the
/// load's idle connections: `--client-commands` Commands one at a time, then as many with 16
/// in flight; send → the Command's verified Event. The same phases as the Python and Node
/// client benchmarks (`python/benchmarks/bench_client.py`, `js/bench/client-bench.mjs`).
async fn client_phase(org: &Org, server: &(String, PathBuf), o: &Options, start: Instant) {
    use futures_util::stream::{self, StreamExt as _};
    use missionweaveprotocol_client::{Client, ClientOptions, TlsOptions};

    let options = ClientOptions::new(
        agent_id(0).as_str(),
        Arc::new(org.agents[0].clone()),
        Arc::clone(&org.registry),
        Principal::new(PrincipalType::Service, AUTHORITY),
        TlsOptions::from_pem_file(&server.1).unwrap(),
    );
    let client = Client::connect(
        &format!("wss://localhost:{}/ws", port_of(&server.0)),
        options,
    )
    .await
    .unwrap();
    let epoch = client.session_epoch().unwrap();
    let group = groups_of(0, o)[0];
    let counter = AtomicU64::new(1 << 40);
    let client = &client;
    let one = || {
        let n = counter.fetch_add(1, Ordering::Relaxed);
        let command = org.post(0, epoch, group, micros(start), n);
        let sent = Instant::now();
        let send = client.send(command);
        async move {
            send.await.unwrap();
            sent.elapsed().as_micros().min(u128::from(u32::MAX)) as u32
        }
    };
    let report = |label: &str, mut values: Vec<u32>, seconds: f64| {
        values.sort_unstable();
        println!(
            "  Rust client, {label}: {} Commands, {:.0} Commands/s, send -> Event p50 = {:.2} ms p99 = {:.2} ms",
            values.len(),
            values.len() as f64 / seconds,
            percentile(&values, 0.50),
            percentile(&values, 0.99)
        );
    };
    let phase = Instant::now();
    let mut values = Vec::with_capacity(o.client_commands);
    for _ in 0..o.client_commands {
        values.push(one().await);
    }
    report("one at a time", values, phase.elapsed().as_secs_f64());
    let phase = Instant::now();
    let values: Vec<u32> = stream::iter(0..o.client_commands)
        .map(|_| one())
        .buffer_unordered(16)
        .collect()
        .await;
    report("16 in flight", values, phase.elapsed().as_secs_f64());
    client.close().await;
}

/// The port of `host:port`.
fn port_of(addr: &str) -> &str {
    addr.rsplit(':').next().unwrap_or(addr)
}

fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let at = ((sorted.len() - 1) as f64 * p).round() as usize;
    f64::from(sorted[at]) / 1000.0
}

fn latencies(label: &str, values: &Mutex<Vec<u32>>) {
    let mut v = std::mem::take(&mut *values.lock().unwrap());
    v.sort_unstable();
    println!(
        "  {label:<22} n={:<8} p50={:>8.2} ms  p99={:>8.2} ms  max={:>8.2} ms",
        v.len(),
        percentile(&v, 0.5),
        percentile(&v, 0.99),
        percentile(&v, 1.0)
    );
}

fn main() {
    let o = options();
    std::thread::spawn(|| {
        std::thread::sleep(HARD_LIMIT);
        eprintln!("load: the hard time limit passed; stopping");
        std::process::exit(3);
    });
    let exe = std::env::current_exe().unwrap();
    let binary = exe
        .parent()
        .and_then(Path::parent)
        .map(|d| d.join("missionweaveprotocol-server"))
        .filter(|p| p.is_file())
        .expect("build the server first: cargo build --release -p missionweaveprotocol-server --bin missionweaveprotocol-server");
    let dir = tempfile::tempdir().unwrap();
    let org = Arc::new(Org::new(o.connections));
    std::fs::write(dir.path().join("registry.json"), &org.registry_bytes).unwrap();
    std::fs::write(dir.path().join("cards.json"), org.card_file()).unwrap();

    // The store, fresh.
    let mut drop_database = None;
    let url = if o.postgres {
        let server = missionweaveprotocol_store_postgres::test_server::url().to_owned();
        let name = format!("mwp_load_{}", std::process::id());
        let mut admin = postgres::Client::connect(&server, postgres::NoTls).unwrap();
        admin
            .batch_execute(&format!("CREATE DATABASE \"{name}\""))
            .unwrap();
        let base = server.split('?').next().unwrap();
        let (scheme, rest) = base.split_once("://").unwrap();
        let authority = rest.split('/').next().unwrap();
        drop_database = Some((server.clone(), name.clone()));
        format!("{scheme}://{authority}/{name}")
    } else {
        format!("sqlite:///{}", dir.path().join("load.db").display())
    };
    let started = Instant::now();
    let heads = seed(&org, &url, &o);
    println!(
        "load: {} connections, {} Groups, {} per connection, store {}, {} process(es); seeded in {:.1} s",
        o.connections,
        o.groups,
        o.per_connection,
        if o.postgres { "PostgreSQL" } else { "SQLite" },
        o.processes,
        started.elapsed().as_secs_f64()
    );

    if o.in_process > 0 {
        in_process_run(&org, &url, &o);
        return;
    }

    let servers: Vec<Server> = (0..o.processes)
        .map(|n| start_server(&binary, dir.path(), &url, &org, n))
        .collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let rss_before: u64 = servers.iter().map(|s| rss_kib(s.child.id())).sum();
    let targets: Vec<(String, PathBuf)> = servers
        .iter()
        .map(|s| (s.addr.clone(), s.cert.clone()))
        .collect();
    let stats = Arc::new(Stats::default());
    let window = Arc::new(Semaphore::new(0));
    let start = Instant::now();

    runtime.block_on(async {
        // Connect, 64 at a time.
        let opened = Instant::now();
        let heads = Arc::new(heads);
        let gate = Arc::new(Semaphore::new(64));
        let mut handles = Vec::new();
        for i in 0..o.connections {
            let (org, heads, gate, target, o2) = (
                Arc::clone(&org),
                Arc::clone(&heads),
                Arc::clone(&gate),
                targets[i % targets.len()].clone(),
                o.clone(),
            );
            handles.push(tokio::spawn(async move {
                let _permit = gate.acquire_owned().await.unwrap();
                open_connection(i, &target, &org, &heads, &o2).await
            }));
        }
        let mut senders = Vec::new();
        for (i, handle) in handles.into_iter().enumerate() {
            let (ws, epoch) = handle.await.unwrap();
            let (tx, rx) = mpsc::unbounded_channel();
            senders.push(tx);
            tokio::spawn(drive(i, ws, epoch, Arc::clone(&org), rx, Arc::clone(&stats), Arc::clone(&window), start));
        }
        println!(
            "  connected and subscribed: {} in {:.1} s",
            o.connections,
            opened.elapsed().as_secs_f64()
        );
        let idle_cpu_before: f64 = servers.iter().map(|s| cpu_seconds(s.child.id())).sum();
        tokio::time::sleep(Duration::from_secs(3)).await;
        let idle_cpu: f64 =
            servers.iter().map(|s| cpu_seconds(s.child.id())).sum::<f64>() - idle_cpu_before;
        let rss_after: u64 = servers.iter().map(|s| rss_kib(s.child.id())).sum();
        println!(
            "  idle: server CPU {:.2} s in 3 s ({:.0} µs/s per connection: liveness, head polls)",
            idle_cpu,
            idle_cpu * 1e6 / 3.0 / o.connections as f64
        );
        println!(
            "  server RSS {} KiB -> {} KiB: {:.1} KiB per idle connection (TLS, WebSocket, machine, 5 subscriptions)",
            rss_before,
            rss_after,
            rss_after.saturating_sub(rss_before) as f64 / o.connections as f64
        );

        // The Group a connection's n-th Command goes to.
        let target_of = |n: u64| {
            let i = (n as usize * 7919) % o.connections;
            let gs = groups_of(i, &o);
            (i, gs[(n as usize / o.connections) % gs.len()])
        };

        // Phase 1: paced.
        stats.recording.store(true, Ordering::Relaxed);
        let phase = Instant::now();
        let mut sent = 0u64;
        let limit = Duration::from_secs(o.seconds);
        while phase.elapsed() < limit {
            let due = (phase.elapsed().as_secs_f64() * o.rate as f64) as u64;
            while sent < due {
                let (i, g) = target_of(sent);
                let _ = senders[i].send(g);
                sent += 1;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
        stats.recording.store(false, Ordering::Relaxed);
        let own = stats.own.swap(0, Ordering::Relaxed);
        let deliveries = stats.deliveries.swap(0, Ordering::Relaxed);
        println!(
            "paced at {} Commands/s for {} s: {sent} sent, {own} Events back at their senders, {deliveries} deliveries, {} errors",
            o.rate,
            o.seconds,
            stats.errors.load(Ordering::Relaxed)
        );
        latencies("send -> Event, sender", &stats.sender_us);
        latencies("send -> Event, every subscriber", &stats.subscriber_us);

        // Phase 2: closed loop.
        let _ = window.forget_permits(usize::MAX);
        window.add_permits(o.window);
        stats.recording.store(true, Ordering::Relaxed);
        let phase = Instant::now();
        let mut n = sent;
        let pids: Vec<u32> = servers.iter().map(|s| s.child.id()).collect();
        let server_cpu = || pids.iter().map(|p| cpu_seconds(*p)).sum::<f64>();
        let (server_cpu_before, own_cpu_before) = (server_cpu(), cpu_seconds(std::process::id()));
        while phase.elapsed() < limit {
            let Ok(Ok(permit)) = tokio::time::timeout(Duration::from_millis(200), window.acquire()).await else {
                continue;
            };
            permit.forget();
            let (i, g) = target_of(n);
            let _ = senders[i].send(g);
            n += 1;
        }
        let elapsed = phase.elapsed().as_secs_f64();
        stats.recording.store(false, Ordering::Relaxed);
        let own = stats.own.load(Ordering::Relaxed);
        let deliveries = stats.deliveries.load(Ordering::Relaxed);
        println!(
            "closed loop, {} outstanding, {:.1} s: {:.0} Commands/s committed and back at their senders, {:.0} Event deliveries/s",
            o.window,
            elapsed,
            own as f64 / elapsed,
            deliveries as f64 / elapsed
        );
        latencies("send -> Event, sender", &stats.sender_us);
        latencies("send -> Event, every subscriber", &stats.subscriber_us);
        let server_cpu = server_cpu() - server_cpu_before;
        let own_cpu = cpu_seconds(std::process::id()) - own_cpu_before;
        println!(
            "  CPU: server {:.2} s ({:.0} µs per Command), load generator {:.2} s, over {:.1} s on {} cores",
            server_cpu,
            server_cpu * 1e6 / own.max(1) as f64,
            own_cpu,
            elapsed,
            std::thread::available_parallelism().map_or(1, |n| n.get())
        );
        let errors = stats.errors.load(Ordering::Relaxed);
        if errors > 0 {
            println!("  {errors} ERROR frames; first: {:?}", stats.first_errors.lock().unwrap());
        }
        drop(senders);
        if o.client_commands > 0 {
            client_phase(&org, &targets[0], &o, start).await;
        }
    });
    runtime.shutdown_timeout(Duration::from_secs(1));
    drop(servers);
    if let Some((server, name)) = drop_database
        && let Ok(mut admin) = postgres::Client::connect(&server, postgres::NoTls)
    {
        let _ = admin.batch_execute(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"));
    }
}
