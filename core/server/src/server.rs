//! The listener: accept, admission limits (connections not yet authenticated, new connections
//! per address), TLS 1.3, the HTTP request head (routing `/healthz`, `/metrics`, `/ws`), the
//! WebSocket upgrade with the gateway's frame limit, then one [`conn::run`] per WebSocket;
//! and the graceful shutdown.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use missionweaveprotocol_gateway::server::{ConnectionId, Gateway, GroupMoved};
use missionweaveprotocol_host::OsRandom;
use missionweaveprotocol_kernel::random::RandomSource;

use crate::clock::{SeededRandom, ServerClock};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use crate::app_files::{self, AppFiles, Resolved};
use crate::conn;
use crate::fanout::{Connections, Notifier};
use crate::http::{self, Rewind, Route};
use crate::metrics::Metrics;

/// Time allowed for the TLS handshake and the HTTP request head.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// What every connection task shares.
#[derive(Debug)]
pub struct Shared {
    /// The gateway (Core seam, hub, limits).
    pub gateway: Arc<Gateway>,
    /// Metrics.
    pub metrics: Arc<Metrics>,
    /// Live connections (wake-ups, gauges).
    pub connections: Arc<Connections>,
    /// `NOTIFY` to other processes (PostgreSQL only).
    pub notifier: Option<Notifier>,
    /// `true` once shutting down.
    pub shutdown: watch::Sender<bool>,
    /// Seconds given to connections at shutdown.
    pub shutdown_grace: u64,
    /// The page's files (`--app-dir`), when served.
    pub app: Option<Arc<AppFiles>>,
    /// Where every decision reads time (the wall clock unless `--clock manual:…`).
    pub clock: ServerClock,
}

impl Shared {
    /// A Group's head moved here (a Command on a connection, or one relayed by `POST /control`):
    /// its local subscribers are woken (but `except`, the connection whose Command it was: its
    /// machine delivered its own Events) and other processes are told (`NOTIFY`, PostgreSQL).
    pub fn announce(&self, moved: &GroupMoved, except: Option<ConnectionId>) {
        let hub = self.gateway.hub();
        let subscribers = match except {
            Some(id) => hub.wake_list(&moved.group_id, id),
            None => hub.subscribers(&moved.group_id),
        };
        self.connections.wake(
            &subscribers,
            &moved.group_id,
            Some(moved.sequence),
            &self.metrics,
        );
        if let Some(notifier) = &self.notifier {
            notifier.notify(&moved.group_id, moved.sequence);
        }
    }
}

/// Admission limits applied before TLS.
#[derive(Debug, Clone, Copy)]
pub struct Admission {
    /// Connections not yet authenticated, all addresses together.
    pub max_unauthenticated: usize,
    /// New connections per second per IP address (burst: twice this).
    pub per_address_rate: u32,
}

/// A token bucket per IP address, bounded: idle full buckets are forgotten.
#[derive(Debug)]
struct RateLimiter {
    rate: f64,
    burst: f64,
    buckets: Mutex<HashMap<IpAddr, (f64, Instant)>>,
}

/// Addresses tracked at most; past it the idle ones are dropped, then (under a flood from many
/// addresses) all of them.
const MAX_TRACKED_ADDRESSES: usize = 65_536;

impl RateLimiter {
    fn new(rate: u32) -> Self {
        Self {
            rate: f64::from(rate),
            burst: f64::from(rate) * 2.0,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    fn allow(&self, ip: IpAddr) -> bool {
        let now = Instant::now();
        let mut buckets = self
            .buckets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if buckets.len() >= MAX_TRACKED_ADDRESSES && !buckets.contains_key(&ip) {
            let (rate, burst) = (self.rate, self.burst);
            buckets.retain(|_, (tokens, at)| {
                *tokens + now.duration_since(*at).as_secs_f64() * rate < burst
            });
            if buckets.len() >= MAX_TRACKED_ADDRESSES {
                buckets.clear();
            }
        }
        let (tokens, at) = buckets.entry(ip).or_insert((self.burst, now));
        *tokens = (*tokens + now.duration_since(*at).as_secs_f64() * self.rate).min(self.burst);
        *at = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// The running listener.
pub struct Server {
    shared: Arc<Shared>,
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    admission: Admission,
    ws_config: WebSocketConfig,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("listener", &self.listener)
            .field("tls", &self.tls.is_some())
            .field("admission", &self.admission)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// A server over a bound listener.
    pub fn new(
        shared: Arc<Shared>,
        listener: TcpListener,
        tls: Option<TlsAcceptor>,
        admission: Admission,
    ) -> Self {
        let max = shared.gateway.limits().max_frame_bytes;
        let ws_config = WebSocketConfig::default()
            .max_message_size(Some(max))
            .max_frame_size(Some(max))
            // Read in 4 KiB steps (the library's default buffer is 128 KiB per connection;
            // a larger message grows it while it is read).
            .read_buffer_size(4 * 1024)
            // The write buffer holds at most two of the largest frames.
            .max_write_buffer_size(2 * max + (128 << 10));
        Self {
            shared,
            listener,
            tls,
            admission,
            ws_config,
        }
    }

    /// The bound address.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Accepts until `stop` resolves, then shuts down gracefully: no new connections, every
    /// connection finishes the message it is handling and is closed with 1001; waits at most
    /// the shutdown grace for them.
    pub async fn run(self, stop: impl std::future::Future<Output = ()>) {
        let Server {
            shared,
            listener,
            tls,
            admission,
            ws_config,
        } = self;
        let unauthenticated = Arc::new(Semaphore::new(admission.max_unauthenticated));
        let limiter = RateLimiter::new(admission.per_address_rate);
        let mut tasks = JoinSet::new();
        tokio::pin!(stop);
        loop {
            tokio::select! {
                () = &mut stop => break,
                accepted = listener.accept() => {
                    let (stream, peer) = match accepted {
                        Ok(pair) => pair,
                        Err(error) => {
                            tracing::warn!(%error, "accept failed");
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            continue;
                        }
                    };
                    Metrics::inc(&shared.metrics.connections_accepted);
                    if !limiter.allow(peer.ip()) {
                        Metrics::inc(&shared.metrics.connections_refused);
                        tracing::debug!(%peer, "refused: handshake rate of the address");
                        continue;
                    }
                    let Ok(permit) = Arc::clone(&unauthenticated).try_acquire_owned() else {
                        Metrics::inc(&shared.metrics.connections_refused);
                        tracing::debug!(%peer, "refused: too many unauthenticated connections");
                        continue;
                    };
                    let _ = stream.set_nodelay(true);
                    let shared = Arc::clone(&shared);
                    let tls = tls.clone();
                    tasks.spawn(async move {
                        serve(shared, stream, peer, tls, ws_config, permit).await;
                    });
                }
                Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
            }
        }
        drop(listener);
        tracing::info!(
            open = tasks.len(),
            "shutting down: closing connections (1001)"
        );
        let _ = shared.shutdown.send(true);
        let grace = Duration::from_secs(shared.shutdown_grace.max(1)) * 2;
        let deadline = tokio::time::Instant::now() + grace;
        while !tasks.is_empty() {
            match tokio::time::timeout_at(deadline, tasks.join_next()).await {
                Ok(_) => {}
                Err(_) => {
                    tracing::warn!(
                        open = tasks.len(),
                        "shutdown grace over: dropping connections"
                    );
                    tasks.abort_all();
                    break;
                }
            }
        }
    }
}

async fn serve(
    shared: Arc<Shared>,
    stream: TcpStream,
    peer: SocketAddr,
    tls: Option<TlsAcceptor>,
    ws_config: WebSocketConfig,
    permit: OwnedSemaphorePermit,
) {
    match tls {
        Some(acceptor) => {
            let accepted = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await;
            match accepted {
                Ok(Ok(stream)) => route(shared, stream, peer, ws_config, permit).await,
                Ok(Err(error)) => {
                    Metrics::inc(&shared.metrics.handshakes_failed);
                    tracing::debug!(%peer, %error, "TLS handshake failed");
                }
                Err(_) => {
                    Metrics::inc(&shared.metrics.handshakes_failed);
                    tracing::debug!(%peer, "TLS handshake timed out");
                }
            }
        }
        None => route(shared, stream, peer, ws_config, permit).await,
    }
}

/// A connection's randomness (frame IDs, nonces, the Action IDs of its session openings): the
/// operating system's, or under a controlled clock a deterministic stream, so that the Events a
/// session opening appends (§11.3 lease revocations name its Action ID) repeat byte for byte.
fn connection_random(clock: &ServerClock) -> Box<dyn RandomSource> {
    match clock.is_manual() {
        true => Box::new(SeededRandom::next_connection()),
        false => Box::new(OsRandom),
    }
}

async fn route<S>(
    shared: Arc<Shared>,
    mut stream: S,
    peer: SocketAddr,
    ws_config: WebSocketConfig,
    permit: OwnedSemaphorePermit,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let head = match tokio::time::timeout(HANDSHAKE_TIMEOUT, http::read_head(&mut stream)).await {
        Ok(Ok(Some(head))) => head,
        _ => {
            Metrics::inc(&shared.metrics.handshakes_failed);
            return;
        }
    };
    let shutting_down = *shared.shutdown.borrow();
    let answered = match http::route(&head) {
        Route::Health if shutting_down => {
            http::respond(
                &mut stream,
                "503 Service Unavailable",
                "text/plain",
                "shutting down\n",
            )
            .await
        }
        Route::Health => http::respond(&mut stream, "200 OK", "text/plain", "ok\n").await,
        Route::Metrics => {
            let mut gauges = shared.connections.gauges();
            gauges.groups = shared.gateway.hub().group_count() as u64;
            let body = shared.metrics.render(&gauges);
            http::respond(
                &mut stream,
                "200 OK",
                "text/plain; version=0.0.4; charset=utf-8",
                &body,
            )
            .await
        }
        Route::WebSocket if shutting_down => {
            http::respond(
                &mut stream,
                "503 Service Unavailable",
                "text/plain",
                "shutting down\n",
            )
            .await
        }
        Route::WebSocket => {
            let rewound = Rewind::new(head, stream);
            let upgraded = tokio::time::timeout(
                HANDSHAKE_TIMEOUT,
                tokio_tungstenite::accept_async_with_config(rewound, Some(ws_config)),
            )
            .await;
            let ws = match upgraded {
                Ok(Ok(ws)) => ws,
                _ => {
                    Metrics::inc(&shared.metrics.handshakes_failed);
                    tracing::debug!(%peer, "WebSocket upgrade failed");
                    return;
                }
            };
            let machine = match shared
                .gateway
                .connect(shared.clock.now(), connection_random(&shared.clock))
            {
                Ok(machine) => machine,
                Err(_) => {
                    tracing::error!("the operating system's random source failed");
                    return;
                }
            };
            tracing::debug!(%peer, connection = machine.id().0, "WebSocket open");
            conn::run(shared, ws, machine, Some(permit)).await;
            return;
        }
        Route::App => serve_app(&shared, &head, &mut stream).await,
        Route::Control if shutting_down => {
            http::respond(
                &mut stream,
                "503 Service Unavailable",
                "text/plain",
                "shutting down\n",
            )
            .await
        }
        Route::Control => crate::control::serve(&shared, head, &mut stream).await,
        Route::MethodNotAllowed => {
            http::respond(
                &mut stream,
                "405 Method Not Allowed",
                "text/plain",
                "GET only (POST for /control)\n",
            )
            .await
        }
        Route::NotFound => {
            http::respond(
                &mut stream,
                "404 Not Found",
                "text/plain",
                "not found: the WebSocket is at /ws; also /healthz and /metrics\n",
            )
            .await
        }
        Route::BadRequest => {
            Metrics::inc(&shared.metrics.handshakes_failed);
            http::respond(
                &mut stream,
                "400 Bad Request",
                "text/plain",
                "bad request\n",
            )
            .await
        }
    };
    if let Err(error) = answered {
        tracing::debug!(%peer, %error, "HTTP response not delivered");
    }
}

/// A request under `/app/`: a file of `--app-dir`, the generated configuration, or the
/// redirect to the page (`app_files`); 404 when no directory is served.
async fn serve_app<S: AsyncWrite + Unpin>(
    shared: &Shared,
    head: &[u8],
    stream: &mut S,
) -> std::io::Result<()> {
    let not_found = "not found (the page is served with --app-dir; see docs/network.md)\n";
    let Some(app) = shared.app.clone() else {
        return http::respond(stream, "404 Not Found", "text/plain", not_found).await;
    };
    let target = http::target(head).unwrap_or_default();
    // Canonicalize and metadata may block; so does reading the file.
    let answer = tokio::task::spawn_blocking(move || match app.resolve(&target) {
        Resolved::File(path, kind) => match std::fs::read(&path) {
            Ok(bytes) => (Resolved::File(path, kind), bytes),
            Err(_) => (Resolved::NotFound, Vec::new()),
        },
        Resolved::Config => (Resolved::Config, app.config().to_vec()),
        other => (other, Vec::new()),
    })
    .await
    .unwrap_or((Resolved::NotFound, Vec::new()));
    let headers = [
        ("cache-control", "no-cache"),
        ("content-security-policy", app_files::CSP),
        ("referrer-policy", "no-referrer"),
    ];
    match answer {
        (Resolved::File(_, kind), body) => {
            http::respond_bytes(stream, "200 OK", kind, &headers, &body).await
        }
        (Resolved::Config, body) => {
            http::respond_bytes(stream, "200 OK", "application/json", &headers, &body).await
        }
        (Resolved::Home, _) => {
            let location = [("location", app_files::APP_HOME)];
            http::respond_bytes(stream, "302 Found", "text/plain", &location, b"").await
        }
        (Resolved::BadRequest, _) => {
            http::respond(stream, "400 Bad Request", "text/plain", "bad request\n").await
        }
        (Resolved::NotFound, _) => {
            http::respond(stream, "404 Not Found", "text/plain", not_found).await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_limiter_allows_a_burst_then_refuses() {
        let limiter = RateLimiter::new(2);
        let ip: IpAddr = [127, 0, 0, 1].into();
        let allowed = (0..10).filter(|_| limiter.allow(ip)).count();
        assert!((4..=5).contains(&allowed), "{allowed}");
        let other: IpAddr = [127, 0, 0, 2].into();
        assert!(limiter.allow(other));
    }
}
