//! Test support: a real `service::Core` (over an `InMemoryStore`) behind the gateway's
//! `Connection`, hosted by a small tokio TLS 1.3 WebSocket server on loopback — the same host
//! loop as `docs/network.md` describes, so the client is tested over real sockets without the
//! server binary. The server can drop every socket (reconnection), rewrite the frames it sends
//! (duplicates, a withheld Event, a tampered Event), and refuse new connections.
//! Included as a module; it holds no tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::json;
use missionweaveprotocol::registry::RegistryBuilder;
use missionweaveprotocol::{
    KeyRegistrySnapshot, Principal, PrincipalType, SignedDocumentCodec, SignedDocumentKind,
};
use missionweaveprotocol_agent::auth::{SessionAuthority, SessionConfig};
use missionweaveprotocol_client::{ClientOptions, SharedSigner, TlsOptions};
use missionweaveprotocol_engine::config::CoreConfig;
use missionweaveprotocol_engine::service::Core;
use missionweaveprotocol_engine::store::InMemoryStore;
use missionweaveprotocol_gateway::server::{CoreGateway, Gateway, GatewayCore, Limits, Output};
use missionweaveprotocol_host::{OsRandom, SystemClock};
use missionweaveprotocol_kernel::unix_millis::UnixMillis;
use tokio::net::TcpListener;
use tokio::sync::{broadcast, watch};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;

pub const ORG: &str = "urn:missionweaveprotocol:organization:acme";
pub const OWNER: &str = "urn:missionweaveprotocol:human:alice";
pub const COORDINATOR: &str = "urn:missionweaveprotocol:agent:planner";
pub const OUTSIDER: &str = "urn:missionweaveprotocol:agent:stranger";
pub const AUTHORITY: &str = "urn:missionweaveprotocol:service:group-authority";
pub const GROUP: &str = "urn:missionweaveprotocol:group:finance";
pub const MISSION: &str = "urn:missionweaveprotocol:mission:close-books";
pub const MAIN: &str = "urn:missionweaveprotocol:conversation:finance-main";
/// Generous: the machine is shared and loaded; nothing here measures time.
pub const WAIT: Duration = Duration::from_secs(60);

pub fn now() -> UnixMillis {
    SystemClock.now()
}

pub fn key_of(seed: u8) -> SigningKey {
    SigningKey::from_seed(format!("urn:missionweaveprotocol:key:{seed}"), &[seed; 32])
}

pub fn authority() -> Principal {
    Principal::new(PrincipalType::Service, AUTHORITY)
}

/// Awaits `future` within [`WAIT`], panicking with `what` otherwise.
pub async fn within<T>(what: &str, future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(WAIT, future)
        .await
        .unwrap_or_else(|_| panic!("timed out: {what}"))
}

/// The Registry, the Core and the gateway.
pub struct World {
    pub core: Arc<Core<Arc<InMemoryStore>, SigningKey>>,
    pub store: Arc<InMemoryStore>,
    pub gateway: Arc<Gateway>,
    /// The Core seam the gateway uses (durable delivery Cursors, §16).
    pub seam: Arc<CoreGateway<Arc<InMemoryStore>, SigningKey>>,
    pub registry: Arc<KeyRegistrySnapshot>,
    /// The Registry document (what a deployment hands its clients).
    pub registry_bytes: Vec<u8>,
    keys: Vec<(String, SigningKey)>,
    next: AtomicU64,
}

impl World {
    pub fn new() -> Arc<Self> {
        let principals = [
            (PrincipalType::Human, OWNER, 21u8),
            (PrincipalType::Agent, COORDINATOR, 23),
            (PrincipalType::Agent, OUTSIDER, 26),
        ];
        let mut builder = RegistryBuilder::new(ORG);
        let mut keys = Vec::new();
        for (kind, id, seed) in principals {
            let key = key_of(seed);
            builder
                .add_key(
                    key.key_id(),
                    Principal::new(kind, id),
                    &key.public_key_bytes(),
                    "2026-01-01T00:00:00Z",
                )
                .unwrap();
            keys.push((id.to_owned(), key));
        }
        let authority_key = key_of(30);
        builder
            .add_key(
                authority_key.key_id(),
                authority(),
                &authority_key.public_key_bytes(),
                "2026-01-01T00:00:00Z",
            )
            .unwrap();
        let (registry_bytes, registry) = builder.build().unwrap();
        let registry = Arc::new(registry);
        let store = Arc::new(InMemoryStore::new());
        let core = Arc::new(
            CoreConfig::new(&authority())
                .with_event_id_prefix("urn:missionweaveprotocol:event:")
                .build(
                    Arc::clone(&store),
                    Arc::clone(&registry),
                    authority_key,
                    Box::new(OsRandom),
                )
                .unwrap(),
        );
        let sessions = SessionAuthority::new(
            b"client-test-secret-0123456789abcdef".to_vec(),
            SessionConfig::default(),
            Box::new(OsRandom),
        )
        .unwrap();
        let seam = Arc::new(CoreGateway::new(Arc::clone(&core)));
        let gateway = Gateway::new(
            Arc::clone(&seam) as Arc<dyn GatewayCore>,
            sessions,
            Limits {
                max_connections_per_agent: 64,
                // Missed wake-ups are caught up quickly (catch-up by sequence is the truth).
                poll_interval_ms: 200,
                ..Limits::default()
            },
        )
        .unwrap();
        let world = Arc::new(Self {
            core,
            store,
            gateway,
            seam,
            registry,
            registry_bytes,
            keys,
            next: AtomicU64::new(1),
        });
        world.mission();
        world
    }

    pub fn key(&self, id: &str) -> SigningKey {
        self.keys.iter().find(|(p, _)| p == id).unwrap().1.clone()
    }

    pub fn signer(&self, id: &str) -> SharedSigner {
        Arc::new(self.key(id))
    }

    /// Client options for `agent` trusting `server`'s certificate.
    pub fn options(&self, agent: &str, server: &TestServer) -> ClientOptions {
        ClientOptions::new(
            agent,
            self.signer(agent),
            Arc::clone(&self.registry),
            authority(),
            TlsOptions::from_pem(server.ca_pem.as_bytes()).unwrap(),
        )
    }

    pub fn action(&self) -> String {
        format!(
            "urn:missionweaveprotocol:action:c{}-{}",
            std::process::id(),
            self.next.fetch_add(1, Ordering::Relaxed)
        )
    }

    /// A signed Command of `actor` issued now (Agents carry `session_epoch`).
    pub fn command(&self, kind: &str, actor: &str, session_epoch: u64, payload: &str) -> Vec<u8> {
        let action = self.action();
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
        let issued = now().to_rfc3339().unwrap();
        let unsigned = json::parse(
            format!(
                r#"{{"protocolVersion": "0.1", "actionId": "{action}",
                "actor": {{"type": "{kind_text}", "id": "{actor}"}}, {epochs}
                "groupId": "{GROUP}", "kind": "{kind}",
                "correlationId": "urn:missionweaveprotocol:correlation:1",
                "issuedAt": "{issued}", "payload": {payload}}}"#
            )
            .as_bytes(),
        )
        .unwrap();
        SignedDocumentCodec::new()
            .sign(SignedDocumentKind::Command, &unsigned, &self.key(actor))
            .unwrap()
            .bytes
    }

    /// A `message.post` payload with text `note <id>`.
    pub fn post(id: &str) -> String {
        format!(
            r#"{{"messageId": "urn:missionweaveprotocol:message:{id}-{}", "conversationId": "{MAIN}",
            "content": [{{"type": "text", "text": "note {id}"}}]}}"#,
            std::process::id()
        )
    }

    /// `GROUP` with the MissionOwner and `COORDINATOR` as members.
    fn mission(&self) {
        let payload = format!(
            r#"{{"missionId": "{MISSION}", "objective": "Close the books",
            "definitionOfDone": [{{"criterionId": "ledger-balanced", "description": "The ledger balances",
              "evidenceRequired": ["deterministic_test", "human_review"]}}],
            "budget": {{"modelTokenLimit": 100000, "toolCallLimit": 1000, "currency": "EUR", "financialLimit": 50}},
            "deadline": "2099-01-01T00:00:00Z",
            "approvalPolicy": {{"finalHumanApproval": true, "highRiskExecutionApproval": true}},
            "coordinator": {{"agentId": "{COORDINATOR}", "agentCardVersion": 1, "leaseId": "urn:missionweaveprotocol:lease:1"}},
            "mainConversationId": "{MAIN}"}}"#
        );
        let create = self.command("mission.create", OWNER, 0, &payload);
        self.core
            .perform_bytes(&create, now())
            .unwrap_or_else(|e| panic!("refused: {} {}", e.wire_code, e.message));
    }

    /// The MissionOwner posts `note <id>` mentioning the Agent `mention`; returns the new head.
    pub fn owner_posts_mentioning(&self, id: &str, mention: &str) -> u64 {
        let post = Self::post(id);
        let post = format!(
            r#"{}, "mentions": [{{"type": "agent", "id": "{mention}"}}]}}"#,
            post.trim_end().trim_end_matches('}')
        );
        let bytes = self.command("message.post", OWNER, 0, &post);
        self.core
            .perform_bytes(&bytes, now())
            .unwrap_or_else(|e| panic!("refused: {} {}", e.wire_code, e.message));
        self.head()
    }

    /// The MissionOwner posts `note <id>` directly on the Core; returns the new head.
    pub fn owner_posts(&self, id: &str) -> u64 {
        let bytes = self.command("message.post", OWNER, 0, &Self::post(id));
        self.core
            .perform_bytes(&bytes, now())
            .unwrap_or_else(|e| panic!("refused: {} {}", e.wire_code, e.message));
        self.head()
    }

    /// The server's durable delivery Cursor of (`agent`, `GROUP`): what its `ACK`s moved.
    pub async fn acknowledged(&self, agent: &str, at_least: u64) -> u64 {
        within("the ACK to reach the server", async {
            loop {
                let cursor = self.seam.acknowledged(agent, GROUP).unwrap();
                if cursor >= at_least {
                    return cursor;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
    }

    pub fn head(&self) -> u64 {
        use missionweaveprotocol_engine::store::Store;
        self.store.head(GROUP).unwrap().last_sequence()
    }
}

/// Rewrites each frame the server is about to send into zero or more frames.
pub type Tamper = Box<dyn FnMut(Vec<u8>) -> Vec<Vec<u8>> + Send>;

struct Control {
    gateway: Arc<Gateway>,
    moved: broadcast::Sender<(String, u64)>,
    kill: watch::Sender<u64>,
    tamper: Mutex<Option<Tamper>>,
    accepted: AtomicUsize,
    /// The highest `EVENT` sequence written to any socket.
    sent: AtomicU64,
}

/// The TLS WebSocket host of the gateway on `127.0.0.1`.
pub struct TestServer {
    pub addr: SocketAddr,
    pub url: String,
    /// The self-signed certificate (for `localhost`) clients trust, as PEM.
    pub ca_pem: String,
    control: Arc<Control>,
    accept: tokio::task::JoinHandle<()>,
}

/// A self-signed certificate for `localhost` and the server configuration over it, with the
/// TLS versions given (the `ring` provider).
pub fn tls_server(
    versions: &[&'static rustls::SupportedProtocolVersion],
) -> (Arc<rustls::ServerConfig>, String) {
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let pem = certified.cert.pem();
    let der = certified.cert.der().clone();
    let key = rustls_pki_types::PrivateKeyDer::Pkcs8(rustls_pki_types::PrivatePkcs8KeyDer::from(
        certified.signing_key.serialize_der(),
    ));
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_protocol_versions(versions)
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![der], key)
    .unwrap();
    (Arc::new(config), pem)
}

impl TestServer {
    /// A TLS 1.3-only server.
    pub async fn start(world: &World) -> Self {
        Self::start_with(world, &[&rustls::version::TLS13]).await
    }

    pub async fn start_with(
        world: &World,
        versions: &[&'static rustls::SupportedProtocolVersion],
    ) -> Self {
        let (tls, ca_pem) = tls_server(versions);
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let control = Arc::new(Control {
            gateway: Arc::clone(&world.gateway),
            moved: broadcast::channel(1024).0,
            kill: watch::channel(0).0,
            tamper: Mutex::new(None),
            accepted: AtomicUsize::new(0),
            sent: AtomicU64::new(0),
        });
        let accept = tokio::spawn(accept_loop(listener, tls, Arc::clone(&control)));
        Self {
            addr,
            url: format!("wss://localhost:{}/", addr.port()),
            ca_pem,
            control,
            accept,
        }
    }

    /// A head moved by a Command performed directly on the Core: wake the subscribers.
    pub fn moved(&self, sequence: u64) {
        let _ = self.control.moved.send((GROUP.to_owned(), sequence));
    }

    /// Drops every open socket at once, without a WebSocket close (a crash, as seen by the
    /// client). New connections are still accepted.
    pub fn drop_connections(&self) {
        self.control.kill.send_modify(|n| *n += 1);
    }

    /// Rewrites the frames sent from now on (`None`: as they are).
    pub fn set_tamper(&self, tamper: Option<Tamper>) {
        *self.control.tamper.lock().unwrap() = tamper;
    }

    /// Waits until an `EVENT` at `sequence` or later was written to a socket.
    pub async fn wait_sent(&self, sequence: u64) {
        within("the server to send an Event", async {
            while self.control.sent.load(Ordering::SeqCst) < sequence {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
    }

    /// TLS WebSocket connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.control.accepted.load(Ordering::SeqCst)
    }

    /// Stops accepting (the listener closes) and drops every socket.
    pub fn stop(&self) {
        self.accept.abort();
        self.drop_connections();
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop();
    }
}

async fn accept_loop(listener: TcpListener, tls: Arc<rustls::ServerConfig>, control: Arc<Control>) {
    let acceptor = tokio_rustls::TlsAcceptor::from(tls);
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            return;
        };
        let acceptor = acceptor.clone();
        let control = Arc::clone(&control);
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(tcp).await else {
                return;
            };
            let Ok(ws) = tokio_tungstenite::accept_async(tls).await else {
                return;
            };
            control.accepted.fetch_add(1, Ordering::SeqCst);
            serve(ws, control).await;
        });
    }
}

/// The host loop of one connection (`docs/network.md`, "A host's loop, per connection"). The
/// in-memory store answers at once, so the machine runs on the task itself.
async fn serve<S>(mut ws: tokio_tungstenite::WebSocketStream<S>, control: Arc<Control>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let mut conn = control.gateway.connect(now(), Box::new(OsRandom)).unwrap();
    let mut moved = control.moved.subscribe();
    let mut kill = control.kill.subscribe();
    kill.borrow_and_update();
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    loop {
        while let Some(output) = conn.poll_output(now()) {
            match output {
                Output::Frame(bytes) => {
                    let frames = match control.tamper.lock().unwrap().as_mut() {
                        Some(tamper) => tamper(bytes),
                        None => vec![bytes],
                    };
                    for frame in frames {
                        if let Some(sequence) = event_sequence(&frame) {
                            control.sent.fetch_max(sequence, Ordering::SeqCst);
                        }
                        if std::env::var_os("MWP_TEST_TRACE").is_some() {
                            eprintln!(
                                "server -> {}",
                                String::from_utf8_lossy(&frame)
                                    .chars()
                                    .take(160)
                                    .collect::<String>()
                            );
                        }
                        let text = String::from_utf8(frame).unwrap();
                        if ws.feed(Message::text(text)).await.is_err() {
                            conn.on_closed();
                            return;
                        }
                    }
                }
                Output::Close(close) => {
                    let _ = ws
                        .close(Some(CloseFrame {
                            code: close.code.into(),
                            reason: close.reason.into(),
                        }))
                        .await;
                    conn.on_closed();
                    return;
                }
            }
        }
        if ws.flush().await.is_err() {
            conn.on_closed();
            return;
        }
        while let Some(moved) = conn.poll_notification() {
            let _ = control.moved.send((moved.group_id, moved.sequence));
        }
        tokio::select! {
            message = ws.next(), if conn.wants_input() => match message {
                Some(Ok(Message::Text(text))) => {
                    if std::env::var_os("MWP_TEST_TRACE").is_some() {
                        eprintln!("server <- {}", text.chars().take(160).collect::<String>());
                    }
                    conn.on_text(text.as_bytes(), now())
                }
                Some(Ok(Message::Binary(_))) => conn.on_binary(now()),
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => {
                    conn.on_closed();
                    return;
                }
                Some(Ok(_)) => {}
            },
            moved = moved.recv() => {
                if std::env::var_os("MWP_TEST_TRACE").is_some() {
                    eprintln!("server moved {moved:?}");
                }
                if let Ok((group, sequence)) = moved {
                    conn.on_group_moved(&group, Some(sequence), now());
                }
            }
            _ = tick.tick() => conn.on_tick(now()),
            _ = kill.changed() => {
                // A crash as the client sees it: the TCP connection just goes.
                conn.on_closed();
                return;
            }
        }
    }
}

/// The sequence of an `EVENT` frame, if it is one.
pub fn event_sequence(frame: &[u8]) -> Option<u64> {
    let value = json::parse(frame).ok()?;
    if value.get("frameType").and_then(json::Value::as_str) != Some("EVENT") {
        return None;
    }
    value
        .pointer("/event/sequence")
        .and_then(json::Value::as_number)
        .and_then(|n| n.as_u64())
}

/// Replaces the first `from` by `to` in a frame's text (a tampered Event: its signature no
/// longer matches).
pub fn replace(frame: &[u8], from: &str, to: &str) -> Vec<u8> {
    String::from_utf8(frame.to_vec())
        .unwrap()
        .replacen(from, to, 1)
        .into_bytes()
}
