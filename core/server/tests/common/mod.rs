//! What the server tests share: an Organization on disk (Registry evidence, signed Agent Cards,
//! keys), Groups seeded into a store before a server opens it, the built binary started as a
//! real process, and a minimal Agent client — the gateway's sans-IO `client::Session` over
//! tokio-tungstenite on a real TLS socket. Timeouts are generous (a loaded 2-core machine);
//! nothing asserts on timing.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json::{self, Value};
use missionweaveprotocol::registry::RegistryBuilder;
use missionweaveprotocol::schema_formats::encode_base64url;
use missionweaveprotocol::{
    KeyRegistrySnapshot, Principal, PrincipalType, SignedDocumentCodec, SignedDocumentKind,
};
use missionweaveprotocol_engine::config::CoreConfig;
use missionweaveprotocol_gateway::client::{ClientConfig, Session, SessionEvent};
use missionweaveprotocol_gateway::frames::SubscribeGroup;
use missionweaveprotocol_host::{OsRandom, SystemClock};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use missionweaveprotocol_store_open::{StoreUrl, open};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;

pub const ORG: &str = "urn:missionweaveprotocol:organization:acme";
pub const OWNER: &str = "urn:missionweaveprotocol:human:alice";
pub const COORDINATOR: &str = "urn:missionweaveprotocol:agent:planner";
pub const WORKER: &str = "urn:missionweaveprotocol:agent:reviewer";
pub const OUTSIDER: &str = "urn:missionweaveprotocol:agent:stranger";
pub const AUTHORITY: &str = "urn:missionweaveprotocol:service:group-authority";
pub const REGISTRAR: &str = "urn:missionweaveprotocol:service:registrar";
pub const OTHER_SERVICE: &str = "urn:missionweaveprotocol:service:other";
pub const GROUP: &str = "urn:missionweaveprotocol:group:finance";
pub const OTHER_GROUP: &str = "urn:missionweaveprotocol:group:payroll";
pub const ABSENT_GROUP: &str = "urn:missionweaveprotocol:group:nowhere";
pub const MISSION: &str = "urn:missionweaveprotocol:mission:close-books";
pub const OTHER_MISSION: &str = "urn:missionweaveprotocol:mission:run-payroll";
pub const MAIN: &str = "urn:missionweaveprotocol:conversation:finance-main";
pub const OTHER_MAIN: &str = "urn:missionweaveprotocol:conversation:payroll-main";
pub const HASH_A: &str = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
pub const HASH_B: &str = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
/// Generous: the machine may be loaded.
pub const WAIT: Duration = Duration::from_secs(60);

pub fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_missionweaveprotocol-server")
}

pub fn key_of(seed: u8) -> SigningKey {
    SigningKey::from_seed(format!("urn:missionweaveprotocol:key:{seed}"), &[seed; 32])
}

pub fn b64(bytes: &[u8]) -> String {
    encode_base64url(bytes)
}

pub fn now() -> UnixMillis {
    SystemClock.now()
}

pub fn now_text() -> String {
    now().to_rfc3339().unwrap()
}

static ACTIONS: AtomicU64 = AtomicU64::new(1);

pub fn action() -> String {
    format!(
        "urn:missionweaveprotocol:action:p{}-{}-{}",
        std::process::id(),
        now().0,
        ACTIONS.fetch_add(1, Ordering::Relaxed)
    )
}

/// An Organization written to a directory: `registry.json` (Registry evidence), `cards.json`
/// (Agent Cards signed by the registrar service), the keys.
pub struct Org {
    pub dir: tempfile::TempDir,
    pub registry: Arc<KeyRegistrySnapshot>,
    pub registry_path: PathBuf,
    pub cards_path: PathBuf,
    keys: Vec<(Principal, SigningKey)>,
}

impl Org {
    pub fn new() -> Self {
        let principals = [
            (PrincipalType::Human, OWNER, 21u8),
            (PrincipalType::Agent, COORDINATOR, 23),
            (PrincipalType::Agent, WORKER, 24),
            (PrincipalType::Agent, OUTSIDER, 26),
            (PrincipalType::Service, AUTHORITY, 30),
            (PrincipalType::Service, REGISTRAR, 40),
            (PrincipalType::Service, OTHER_SERVICE, 41),
        ];
        let mut builder = RegistryBuilder::new(ORG);
        let mut keys = Vec::new();
        for (kind, id, seed) in principals {
            let key = key_of(seed);
            let principal = Principal::new(kind, id);
            builder
                .add_key(
                    key.key_id(),
                    principal.clone(),
                    &key.public_key_bytes(),
                    "2020-01-01T00:00:00Z",
                )
                .unwrap();
            keys.push((principal, key));
        }
        let (bytes, registry) = builder.build().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let registry_path = dir.path().join("registry.json");
        std::fs::write(&registry_path, &bytes).unwrap();
        let org = Self {
            dir,
            registry: Arc::new(registry),
            registry_path,
            cards_path: PathBuf::new(),
            keys,
        };
        let cards = Value::Array(vec![
            org.card(COORDINATOR, 1, REGISTRAR),
            org.card(WORKER, 1, REGISTRAR),
        ]);
        let cards_path = org.write("cards.json", &cards);
        Self { cards_path, ..org }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn write(&self, name: &str, value: &Value) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, json::canonical_bytes(value).unwrap()).unwrap();
        path
    }

    pub fn key(&self, id: &str) -> &SigningKey {
        &self.keys.iter().find(|(p, _)| p.id == id).unwrap().1
    }

    pub fn authority_key(&self) -> &SigningKey {
        self.key(AUTHORITY)
    }

    /// The authority seed as the flag takes it.
    pub fn authority_seed(&self) -> String {
        b64(&self.authority_key().seed_bytes())
    }

    /// The registrar's public key (the Organization key of `--organization-public-key`).
    pub fn organization_key(&self) -> String {
        b64(&self.key(REGISTRAR).public_key_bytes())
    }

    pub fn unsigned_card(&self, agent: &str, version: u64) -> Value {
        let key = self.key(agent);
        json::parse(
            format!(
                r#"{{"agentId": "{agent}", "organizationId": "{ORG}", "cardVersion": {version},
                "displayName": "agent {version}", "owner": {{"type": "human", "id": "{OWNER}"}},
                "status": "active", "protocolVersions": ["0.1"],
                "endpoints": [{{"transport": "wss", "uri": "wss://agents.acme.example/a"}}],
                "publicKeys": [{{"keyId": "{}", "algorithm": "Ed25519", "publicKey": "{}",
                  "validFrom": "2020-01-01T00:00:00Z"}}],
                "capabilities": [{{"id": "text.summarise", "version": "1.2.0",
                  "inputSchema": "https://schemas.acme.example/in.json",
                  "inputSchemaHash": "{HASH_A}",
                  "outputSchema": "https://schemas.acme.example/out.json",
                  "outputSchemaHash": "{HASH_B}", "constraints": {{}},
                  "verifiedEvidence": ["urn:missionweaveprotocol:evidence:summarise-2026"]}}],
                "maxConcurrency": 2, "issuedAt": "2026-01-01T00:00:00Z"}}"#,
                key.key_id(),
                b64(&key.public_key_bytes())
            )
            .as_bytes(),
        )
        .unwrap()
    }

    /// `agent`'s card at `version`, signed by `signer`.
    pub fn card(&self, agent: &str, version: u64, signer: &str) -> Value {
        let bytes = SignedDocumentCodec::new()
            .sign(
                SignedDocumentKind::AgentCard,
                &self.unsigned_card(agent, version),
                self.key(signer),
            )
            .unwrap()
            .bytes;
        json::parse(&bytes).unwrap()
    }

    /// A signed Command by `actor` (Agents: a Session Epoch and Membership Epoch 1; humans a
    /// Membership Epoch except for `mission.create`), issued now.
    pub fn command(
        &self,
        group: &str,
        kind: &str,
        actor: &str,
        session_epoch: u64,
        payload: &str,
    ) -> (Vec<u8>, String) {
        let action = action();
        let (kind_text, epochs) = if actor.contains(":agent:") {
            (
                "agent",
                format!(r#""sessionEpoch": {session_epoch}, "membershipEpoch": 1,"#),
            )
        } else if kind == "mission.create" {
            ("human", String::new())
        } else {
            ("human", r#""membershipEpoch": 1,"#.to_owned())
        };
        let unsigned = json::parse(
            format!(
                r#"{{"protocolVersion": "0.1", "actionId": "{action}",
                "actor": {{"type": "{kind_text}", "id": "{actor}"}}, {epochs}
                "groupId": "{group}", "kind": "{kind}",
                "correlationId": "urn:missionweaveprotocol:correlation:1",
                "issuedAt": "{}", "payload": {payload}}}"#,
                now_text()
            )
            .as_bytes(),
        )
        .unwrap();
        let bytes = SignedDocumentCodec::new()
            .sign(SignedDocumentKind::Command, &unsigned, self.key(actor))
            .unwrap()
            .bytes;
        (bytes, action)
    }

    pub fn create_payload(mission: &str, main: &str) -> String {
        format!(
            r#"{{"missionId": "{mission}", "objective": "Close the books",
            "definitionOfDone": [{{"criterionId": "ledger-balanced", "description": "The ledger balances",
              "evidenceRequired": ["deterministic_test", "human_review"]}}],
            "budget": {{"modelTokenLimit": 100000, "toolCallLimit": 1000, "currency": "EUR", "financialLimit": 50}},
            "deadline": "2099-08-01T00:00:00Z",
            "approvalPolicy": {{"finalHumanApproval": true, "highRiskExecutionApproval": true}},
            "coordinator": {{"agentId": "{COORDINATOR}", "agentCardVersion": 1, "leaseId": "urn:missionweaveprotocol:lease:{mission}"}},
            "mainConversationId": "{main}"}}"#
        )
    }

    /// `message.post` in `group`'s main Conversation, `text` as its content.
    pub fn post_payload(id: &str, group: &str, text: &str) -> String {
        let main = if group == GROUP { MAIN } else { OTHER_MAIN };
        format!(
            r#"{{"messageId": "urn:missionweaveprotocol:message:{id}", "conversationId": "{main}",
            "content": [{{"type": "text", "text": "{text}"}}]}}"#
        )
    }

    /// Seeds `GROUP` and `OTHER_GROUP` (MissionOwner and `COORDINATOR`), `WORKER` a worker of
    /// both, into the store at `url` (the way an Organization's human tools would: performed
    /// on a Core over the same store, before the server opens it).
    pub fn seed(&self, url: &str) {
        // Off the async runtime's thread: the PostgreSQL store's client blocks.
        std::thread::scope(|scope| scope.spawn(|| self.seed_here(url)).join().unwrap());
    }

    fn seed_here(&self, url: &str) {
        let store = open(&StoreUrl::parse(url).unwrap()).unwrap();
        let core = CoreConfig::new(&Principal::new(PrincipalType::Service, AUTHORITY))
            .build(
                store,
                Arc::clone(&self.registry),
                self.authority_key().clone(),
                Box::new(OsRandom),
            )
            .unwrap();
        let perform = |bytes: Vec<u8>| {
            core.perform_bytes(&bytes, now())
                .unwrap_or_else(|e| panic!("seed refused: {} {}", e.wire_code, e.message));
        };
        for (group, mission, main) in [
            (GROUP, MISSION, MAIN),
            (OTHER_GROUP, OTHER_MISSION, OTHER_MAIN),
        ] {
            let (bytes, _) = self.command(
                group,
                "mission.create",
                OWNER,
                0,
                &Self::create_payload(mission, main),
            );
            perform(bytes);
            let (bytes, _) = self.command(
                group,
                "membership.change",
                OWNER,
                0,
                &format!(
                    r#"{{"member": {{"type": "agent", "id": "{WORKER}"}}, "role": "worker",
                    "scopes": ["work:execute"], "visibilityStartSequence": 0}}"#
                ),
            );
            perform(bytes);
        }
    }

    /// A SQLite URL in this Organization's directory, seeded.
    pub fn seeded_sqlite(&self) -> String {
        let url = format!("sqlite:///{}", self.path("authority.db").display());
        self.seed(&url);
        url
    }

    /// The flags every start needs (Registry, cards, authority key and its ID, trust key).
    pub fn base_args(&self, database_url: &str) -> Vec<String> {
        vec![
            "--registry".into(),
            self.cards_path.display().to_string(),
            "--agent-registry-snapshot".into(),
            self.registry_path.display().to_string(),
            "--database-url".into(),
            database_url.into(),
            "--authority-key-id".into(),
            self.authority_key().key_id().into(),
            "--authority-private-key".into(),
            self.authority_seed(),
            "--organization-public-key".into(),
            self.organization_key(),
            "--host".into(),
            "127.0.0.1".into(),
            "--port".into(),
            "0".into(),
        ]
    }

    /// `--dev` flags: base flags, the certificate in this directory.
    pub fn dev_args(&self, database_url: &str) -> Vec<String> {
        let mut args = self.base_args(database_url);
        args.extend([
            "--dev".into(),
            "--dev-cert".into(),
            self.path("dev-cert.pem").display().to_string(),
        ]);
        args
    }

    /// `--dev` flags with the certificate `<name>.pem` in this directory, then `extra`.
    pub fn named_dev_args(&self, database_url: &str, name: &str, extra: &[&str]) -> Vec<String> {
        let mut args = self.base_args(database_url);
        args.extend([
            "--dev".to_owned(),
            "--dev-cert".to_owned(),
            self.path(&format!("{name}.pem")).display().to_string(),
        ]);
        args.extend(extra.iter().map(|a| (*a).to_owned()));
        args
    }

    /// Starts a `--dev` server over a freshly seeded SQLite store.
    pub fn dev_server(&self) -> ServerProcess {
        let url = self.seeded_sqlite();
        ServerProcess::start(&self.dev_args(&url), &[]).ready()
    }
}

/// A server process. Killed when dropped.
pub struct ServerProcess {
    pub child: Child,
    lines: Receiver<String>,
    pub stdout: Vec<String>,
    pub stderr_path: PathBuf,
    _stderr_dir: tempfile::TempDir,
    pub url: String,
}

impl ServerProcess {
    /// Spawns the binary (not waiting for it).
    pub fn start(args: &[String], env: &[(&str, &str)]) -> Self {
        let stderr_dir = tempfile::tempdir().unwrap();
        let stderr_path = stderr_dir.path().join("stderr.log");
        let stderr = std::fs::File::create(&stderr_path).unwrap();
        let mut command = Command::new(binary());
        command
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .env_remove("RUST_LOG");
        for (name, _) in std::env::vars() {
            if name.starts_with("MISSIONWEAVEPROTOCOL_") {
                command.env_remove(name);
            }
        }
        command.env("MISSIONWEAVEPROTOCOL_LOG", "info");
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Self {
            child,
            lines,
            stdout: Vec::new(),
            stderr_path,
            _stderr_dir: stderr_dir,
            url: String::new(),
        }
    }

    /// Waits for the "listening on" line (panics with the logs if the process exits first).
    pub fn ready(mut self) -> Self {
        let deadline = Instant::now() + Duration::from_secs(180);
        loop {
            match self.lines.recv_timeout(Duration::from_millis(200)) {
                Ok(line) => {
                    if let Some(url) = line.split("listening on ").nth(1) {
                        self.url = url.trim().to_owned();
                        self.stdout.push(line);
                        return self;
                    }
                    self.stdout.push(line);
                }
                Err(RecvTimeoutError::Timeout) => {
                    if let Some(status) = self.child.try_wait().unwrap() {
                        panic!(
                            "the server exited ({status}) before listening:\n{}",
                            self.stderr()
                        );
                    }
                    assert!(
                        Instant::now() < deadline,
                        "the server did not listen in time:\n{}",
                        self.stderr()
                    );
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let status = self.wait_exit(WAIT);
                    panic!("the server exited ({status:?}):\n{}", self.stderr());
                }
            }
        }
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    /// Every stdout line so far.
    pub fn stdout_lines(&mut self) -> Vec<String> {
        while let Ok(line) = self.lines.try_recv() {
            self.stdout.push(line);
        }
        self.stdout.clone()
    }

    /// `host:port` of the URL.
    pub fn addr(&self) -> String {
        let rest = self.url.split("://").nth(1).unwrap();
        rest.split('/').next().unwrap().to_owned()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.pid().to_string())
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits for the process to exit.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the binary to completion with `args` (for flag checks): (exit code, stdout, stderr).
pub fn run_to_exit(args: &[String], env: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let mut command = Command::new(binary());
    command
        .args(args)
        .stdin(Stdio::null())
        .env_remove("RUST_LOG");
    for (name, _) in std::env::vars() {
        if name.starts_with("MISSIONWEAVEPROTOCOL_") {
            command.env_remove(name);
        }
    }
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

// ---- clients -------------------------------------------------------------------------------

pub trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

pub type Ws = WebSocketStream<Box<dyn Io>>;

/// A TLS 1.3 client configuration trusting the certificate in `pem`.
pub fn client_tls(
    pem: &Path,
    versions: &[&'static rustls::SupportedProtocolVersion],
) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(pem).unwrap() {
        roots.add(cert.unwrap()).unwrap();
    }
    Arc::new(
        rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_protocol_versions(versions)
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth(),
    )
}

/// A TLS stream to `addr` (SNI `localhost`), or the handshake error.
pub async fn tls_connect(
    addr: &str,
    config: Arc<rustls::ClientConfig>,
) -> std::io::Result<tokio_rustls::client::TlsStream<TcpStream>> {
    let tcp = TcpStream::connect(addr).await?;
    tokio_rustls::TlsConnector::from(config)
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
}

/// A WebSocket to the server at `url` (`wss://` trusting `pem`, or `ws://`).
pub async fn ws_connect(url: &str, pem: Option<&Path>) -> Ws {
    ws_connect_with(url, pem, None).await
}

/// [`ws_connect`] with the client socket's receive buffer set to `recv_buffer` bytes (a slow
/// reader whose kernel holds little).
pub async fn ws_connect_with(url: &str, pem: Option<&Path>, recv_buffer: Option<u32>) -> Ws {
    let addr = url.split("://").nth(1).unwrap().split('/').next().unwrap();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    if let Some(size) = recv_buffer {
        socket.set_recv_buffer_size(size).unwrap();
    }
    let tcp = socket.connect(addr.parse().unwrap()).await.unwrap();
    let io: Box<dyn Io> = if url.starts_with("wss://") {
        let config = client_tls(pem.unwrap(), &[&rustls::version::TLS13]);
        Box::new(
            tokio_rustls::TlsConnector::from(config)
                .connect(ServerName::try_from("localhost").unwrap(), tcp)
                .await
                .unwrap(),
        )
    } else {
        Box::new(tcp)
    };
    let request = format!("ws://{addr}/ws");
    let (ws, _) = tokio_tungstenite::client_async(request, io).await.unwrap();
    ws
}

/// One HTTP GET over TLS (trusting `pem`) or plain: (status line, body).
pub async fn http_get(url: &str, pem: Option<&Path>, path: &str) -> (String, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = url.split("://").nth(1).unwrap().split('/').next().unwrap();
    let mut io: Box<dyn Io> = if url.starts_with("wss://") {
        let config = client_tls(pem.unwrap(), &[&rustls::version::TLS13]);
        Box::new(tls_connect(addr, config).await.unwrap())
    } else {
        Box::new(TcpStream::connect(addr).await.unwrap())
    };
    io.write_all(format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut response = Vec::new();
    let _ = tokio::time::timeout(WAIT, io.read_to_end(&mut response)).await;
    let text = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (
        head.lines().next().unwrap_or("").to_owned(),
        body.to_owned(),
    )
}

/// A metric's value in a `/metrics` body.
pub fn metric(body: &str, name: &str) -> Option<f64> {
    body.lines()
        .find(|line| line.starts_with(name) && line[name.len()..].starts_with(' '))
        .and_then(|line| line.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

/// What reading the socket gave (one at a time: its size does not matter).
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Read {
    Event(SessionEvent),
    Closed(Option<u16>),
}

/// An Agent: the sans-IO client session over a WebSocket.
pub struct Agent {
    pub ws: Ws,
    pub session: Session,
    pub agent_id: String,
    pub pending: VecDeque<SessionEvent>,
    pub closed: Option<Option<u16>>,
}

impl Agent {
    /// Connects and authenticates `agent_id`.
    pub async fn connect(url: &str, pem: Option<&Path>, org: &Org, agent_id: &str) -> Self {
        let mut agent = Self::open(url, pem, org, agent_id).await;
        agent.session.start(now()).unwrap();
        agent.flush().await;
        match agent.next_event().await {
            SessionEvent::Authenticated { .. } => agent,
            other => panic!("expected Authenticated, got {other:?}"),
        }
    }

    /// Connects without authenticating.
    pub async fn open(url: &str, pem: Option<&Path>, org: &Org, agent_id: &str) -> Self {
        Self::open_with(url, pem, org, agent_id, None).await
    }

    /// Connects and authenticates with a small socket receive buffer.
    pub async fn connect_slow(url: &str, pem: Option<&Path>, org: &Org, agent_id: &str) -> Self {
        let mut agent = Self::open_with(url, pem, org, agent_id, Some(4096)).await;
        agent.session.start(now()).unwrap();
        agent.flush().await;
        match agent.next_event().await {
            SessionEvent::Authenticated { .. } => agent,
            other => panic!("expected Authenticated, got {other:?}"),
        }
    }

    async fn open_with(
        url: &str,
        pem: Option<&Path>,
        org: &Org,
        agent_id: &str,
        recv_buffer: Option<u32>,
    ) -> Self {
        let ws = ws_connect_with(url, pem, recv_buffer).await;
        let config = ClientConfig::new(
            agent_id,
            Arc::clone(&org.registry),
            Principal::new(PrincipalType::Service, AUTHORITY),
        );
        let session = Session::new(
            config,
            Arc::new(org.key(agent_id).clone()),
            Box::new(OsRandom),
        )
        .unwrap();
        Self {
            ws,
            session,
            agent_id: agent_id.to_owned(),
            pending: VecDeque::new(),
            closed: None,
        }
    }

    pub fn epoch(&self) -> u64 {
        self.session.session_epoch().unwrap()
    }

    /// Sends every frame the session queued.
    pub async fn flush(&mut self) {
        while let Some(bytes) = self.session.poll_output() {
            self.send_raw(String::from_utf8(bytes).unwrap()).await;
        }
    }

    pub async fn send_raw(&mut self, text: String) {
        self.ws.send(Message::text(text)).await.unwrap();
    }

    /// The next raw message (frames only; `None` when closed), within [`WAIT`].
    pub async fn recv_raw(&mut self) -> Option<Message> {
        match tokio::time::timeout(WAIT, self.ws.next()).await {
            Ok(Some(Ok(message))) => Some(message),
            Ok(_) => None,
            Err(_) => panic!("{}: nothing received in time", self.agent_id),
        }
    }

    /// The next raw text frame parsed, or the close code.
    pub async fn recv_frame(&mut self) -> Result<Value, Option<u16>> {
        loop {
            match self.recv_raw().await {
                Some(Message::Text(text)) => return Ok(json::parse(text.as_bytes()).unwrap()),
                Some(Message::Close(frame)) => {
                    return Err(frame.map(|f: CloseFrame| u16::from(f.code)));
                }
                Some(_) => continue,
                None => return Err(None),
            }
        }
    }

    /// Reads until the session reports something (or the socket closes).
    pub async fn read(&mut self) -> Read {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Read::Event(event);
            }
            if let Some(code) = self.closed {
                return Read::Closed(code);
            }
            match self.recv_raw().await {
                Some(Message::Text(text)) => {
                    self.session
                        .on_text(text.as_bytes(), now())
                        .unwrap_or_else(|e| panic!("client refused a frame: {e:?}"));
                    while let Some(event) = self.session.poll_event() {
                        self.pending.push_back(event);
                    }
                    self.flush().await;
                }
                Some(Message::Close(frame)) => {
                    self.closed = Some(frame.map(|f| u16::from(f.code)));
                }
                Some(_) => {}
                None => self.closed = Some(None),
            }
        }
    }

    pub async fn next_event(&mut self) -> SessionEvent {
        match self.read().await {
            Read::Event(event) => event,
            Read::Closed(code) => panic!("{}: closed ({code:?})", self.agent_id),
        }
    }

    /// Events until `pred` holds for one (returned with everything before it).
    pub async fn until(
        &mut self,
        mut pred: impl FnMut(&SessionEvent) -> bool,
    ) -> Vec<SessionEvent> {
        let mut seen = Vec::new();
        loop {
            let event = self.next_event().await;
            let done = pred(&event);
            seen.push(event);
            if done {
                return seen;
            }
        }
    }

    pub async fn subscribe(&mut self, groups: &[(&str, u64)]) -> String {
        let groups: Vec<SubscribeGroup> = groups
            .iter()
            .map(|(g, after)| SubscribeGroup {
                group_id: (*g).to_owned(),
                after_sequence: *after,
                attention: None,
            })
            .collect();
        let id = self.session.subscribe(&groups, now()).unwrap();
        self.flush().await;
        id
    }

    /// Posts message `id` in `group` and returns the ticket's Action ID.
    pub async fn post(&mut self, org: &Org, group: &str, id: &str, text: &str) -> String {
        let (bytes, action) = org.command(
            group,
            "message.post",
            &self.agent_id.clone(),
            self.epoch(),
            &Org::post_payload(id, group, text),
        );
        self.session.send_command(&bytes, now()).unwrap();
        self.flush().await;
        action
    }

    /// Waits for the Event (group, sequence) to be delivered in order.
    pub async fn wait_event(&mut self, group: &str, sequence: u64) -> Vec<SessionEvent> {
        self.until(|e| {
            matches!(e, SessionEvent::Event(d)
                if d.group_id.as_deref() == Some(group) && d.sequence >= sequence && d.in_order)
        })
        .await
    }
}

impl Agent {
    /// Waits until every (group, sequence) of `wanted` was delivered in order, whatever the
    /// order between Groups (§16 orders each Group, not Groups among themselves): a wait for
    /// one Group alone would consume — and then miss — the other Group's Events that came
    /// first. Returns everything seen.
    pub async fn wait_events(&mut self, wanted: &[(&str, u64)]) -> Vec<SessionEvent> {
        let mut missing: Vec<(&str, u64)> = wanted.to_vec();
        let mut seen = Vec::new();
        while !missing.is_empty() {
            let event = self.next_event().await;
            if let SessionEvent::Event(d) = &event
                && d.in_order
            {
                missing.retain(|(g, s)| !(d.group_id.as_deref() == Some(*g) && d.sequence >= *s));
            }
            seen.push(event);
        }
        seen
    }
}

/// The (group, sequence) of in-order delivered Events.
pub fn delivered(events: &[SessionEvent]) -> Vec<(String, u64)> {
    events
        .iter()
        .filter_map(|e| match e {
            SessionEvent::Event(d) if d.in_order => {
                Some((d.group_id.clone().unwrap_or_default(), d.sequence))
            }
            _ => None,
        })
        .collect()
}

impl Agent {
    /// Posts and waits for the Command's acceptance: (its sequence, everything seen).
    pub async fn post_accepted(
        &mut self,
        org: &Org,
        group: &str,
        id: &str,
        text: &str,
    ) -> (u64, Vec<SessionEvent>) {
        let action = self.post(org, group, id, text).await;
        let seen = self
            .until(|e| matches!(e, SessionEvent::CommandAccepted { ticket, .. } if ticket.action_id == action))
            .await;
        let sequence = seen
            .iter()
            .find_map(|e| match e {
                SessionEvent::CommandAccepted {
                    ticket, sequence, ..
                } if ticket.action_id == action => Some(*sequence),
                _ => None,
            })
            .unwrap();
        (sequence, seen)
    }
}

// ---- PostgreSQL ----------------------------------------------------------------------------

/// The PostgreSQL server of the tests: `MWP_POSTGRES_URL`, or the private cluster of
/// `scripts/pg-cluster.sh` started on first use (as the store's tests do: never skipped).
pub fn pg_server_url() -> &'static str {
    missionweaveprotocol_store_postgres::test_server::url()
}

/// Runs `sql` on the test server's default database, off any async runtime's thread (the
/// synchronous client starts a runtime of its own).
fn pg_admin(sql: String) {
    std::thread::spawn(move || {
        postgres::Client::connect(pg_server_url(), postgres::NoTls)
            .unwrap()
            .batch_execute(&sql)
            .unwrap();
    })
    .join()
    .unwrap();
}

/// Runs `f` on a thread of its own (blocking database work from an async test).
pub fn off_runtime<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| scope.spawn(f).join().unwrap())
}

/// A database of its own on the test server, dropped afterwards.
pub struct FreshDatabase {
    name: String,
}

impl FreshDatabase {
    pub fn new() -> Self {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let name = format!(
            "mwp_server_{}_{nanos}_{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        pg_admin(format!("CREATE DATABASE \"{name}\""));
        Self { name }
    }

    /// Its URL (the server's, another database).
    pub fn url(&self) -> String {
        let base = pg_server_url().split('?').next().unwrap();
        let (scheme, rest) = base.split_once("://").unwrap();
        let authority = rest.split('/').next().unwrap();
        format!("{scheme}://{authority}/{}", self.name)
    }
}

impl Drop for FreshDatabase {
    fn drop(&mut self) {
        let sql = format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.name);
        let _ = std::thread::spawn(move || {
            if let Ok(mut client) = postgres::Client::connect(pg_server_url(), postgres::NoTls) {
                let _ = client.batch_execute(&sql);
            }
        })
        .join();
    }
}
