//! What a [`Client`](crate::Client) is set up with: identity and trust anchors
//! ([`ClientOptions`]), TLS ([`TlsOptions`]), bounds ([`ClientLimits`]), reconnection
//! ([`Backoff`]) and the re-signing hook ([`Resigner`]).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use missionweaveprotocol::crypto::Signer;
use missionweaveprotocol::json::{self, Number, Value};
use missionweaveprotocol::{
    KeyRegistrySnapshot, Principal, SignedDocumentCodec, SignedDocumentKind,
};
use missionweaveprotocol_agent::replay::AgentLocalStore;
use missionweaveprotocol_host::SystemClock;
use rustls::RootCertStore;
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;

use crate::error::ClientError;

/// The signer of the Agent's key: signs the `HELLO` challenge (its key ID is the `keyId` of
/// `client_init`) and, through an [`EpochResigner`], re-signs Commands.
pub type SharedSigner = Arc<dyn Signer + Send + Sync>;

/// An Agent-local store shared with the client (durable cursors, §16).
pub type SharedStore = Arc<dyn AgentLocalStore + Send + Sync>;

/// Everything [`Client::connect`](crate::Client::connect) needs.
#[derive(Clone)]
pub struct ClientOptions {
    /// The Agent this client authenticates as.
    pub agent_id: String,
    /// Its key (`HELLO`, §6.3).
    pub signer: SharedSigner,
    /// The Organization Registry every Event is verified against (§6.4).
    pub registry: Arc<KeyRegistrySnapshot>,
    /// The Group Authority: the one signer an Event may have (§15.2).
    pub group_authority: Principal,
    /// TLS and its trust roots.
    pub tls: TlsOptions,
    /// Bounds and timers.
    pub limits: ClientLimits,
    /// Reconnection.
    pub backoff: Backoff,
    /// The durable cursors: subscriptions without an explicit position, and every
    /// resubscription after a reconnect, start after the store's cursor; [`Client::advance`]
    /// moves it (`crate::Client::advance`).
    pub store: Option<SharedStore>,
    /// Re-signs a pending Command for a new Session Epoch after a reconnect; without one such
    /// a Command fails with [`ClientError::ResignRequired`].
    pub resigner: Option<Arc<dyn Resigner>>,
}

impl core::fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ClientOptions")
            .field("agent_id", &self.agent_id)
            .field("key_id", &self.signer.key_id())
            .field("group_authority", &self.group_authority)
            .field("tls", &self.tls)
            .field("limits", &self.limits)
            .field("backoff", &self.backoff)
            .field("store", &self.store.is_some())
            .field("resigner", &self.resigner.is_some())
            .finish()
    }
}

impl ClientOptions {
    /// Options with the default limits and backoff, no store and no resigner.
    pub fn new(
        agent_id: impl Into<String>,
        signer: SharedSigner,
        registry: Arc<KeyRegistrySnapshot>,
        group_authority: Principal,
        tls: TlsOptions,
    ) -> Self {
        Self {
            agent_id: agent_id.into(),
            signer,
            registry,
            group_authority,
            tls,
            limits: ClientLimits::default(),
            backoff: Backoff::default(),
            store: None,
            resigner: None,
        }
    }

    /// With an Agent-local store for the durable cursors.
    pub fn with_store(mut self, store: SharedStore) -> Self {
        self.store = Some(store);
        self
    }

    /// With a hook that re-signs pending Commands after a reconnect.
    pub fn with_resigner(mut self, resigner: Arc<dyn Resigner>) -> Self {
        self.resigner = Some(resigner);
        self
    }

    /// With these limits.
    pub fn with_limits(mut self, limits: ClientLimits) -> Self {
        self.limits = limits;
        self
    }

    /// With this backoff.
    pub fn with_backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }
}

/// TLS: always 1.3 (§17.1), with the trust roots the caller gives — no platform store.
#[derive(Clone, Default)]
pub struct TlsOptions {
    pub(crate) roots: Option<Arc<RootCertStore>>,
    pub(crate) allow_plaintext: bool,
}

impl core::fmt::Debug for TlsOptions {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TlsOptions")
            .field("roots", &self.roots.as_ref().map(|r| r.len()))
            .field("allow_plaintext", &self.allow_plaintext)
            .finish()
    }
}

impl TlsOptions {
    /// Trust exactly these roots.
    pub fn with_roots(roots: RootCertStore) -> Self {
        Self {
            roots: Some(Arc::new(roots)),
            allow_plaintext: false,
        }
    }

    /// Trust the certificates of a PEM file (for instance the `--dev` server's certificate).
    pub fn from_pem_file(path: impl AsRef<Path>) -> Result<Self, ClientError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path)
            .map_err(|e| ClientError::TrustRoots(format!("{}: {e}", path.display())))?;
        Self::from_pem(&bytes)
    }

    /// Trust the certificates of PEM text.
    pub fn from_pem(pem: &[u8]) -> Result<Self, ClientError> {
        let mut roots = RootCertStore::empty();
        for certificate in CertificateDer::pem_slice_iter(pem) {
            let certificate = certificate.map_err(|e| ClientError::TrustRoots(e.to_string()))?;
            roots
                .add(certificate)
                .map_err(|e| ClientError::TrustRoots(e.to_string()))?;
        }
        if roots.is_empty() {
            return Err(ClientError::TrustRoots("no certificate in the PEM".into()));
        }
        Ok(Self::with_roots(roots))
    }

    /// Trust these DER certificates.
    pub fn from_der(certificates: &[CertificateDer<'_>]) -> Result<Self, ClientError> {
        let mut roots = RootCertStore::empty();
        for certificate in certificates {
            roots
                .add(certificate.clone().into_owned())
                .map_err(|e| ClientError::TrustRoots(e.to_string()))?;
        }
        Ok(Self::with_roots(roots))
    }

    /// No TLS at all: `ws://` URLs only (tests, a server run with `--allow-insecure`). The
    /// caller opts in explicitly; `wss://` still needs roots.
    pub fn plaintext() -> Self {
        Self {
            roots: None,
            allow_plaintext: true,
        }
    }

    /// Whether `ws://` URLs are allowed besides `wss://`.
    pub fn allow_plaintext(mut self, allow: bool) -> Self {
        self.allow_plaintext = allow;
        self
    }
}

/// Bounds and timers of a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientLimits {
    /// The largest WebSocket message accepted (default 8 MiB: a 4 MiB Event and its frame).
    pub max_frame_bytes: usize,
    /// TCP + TLS + WebSocket handshake (default 10 s).
    pub connect_timeout: Duration,
    /// `HELLO` until `server_accept` (default 10 s).
    pub hello_timeout: Duration,
    /// A liveness `PING` when nothing was sent for this long (default 15 s).
    pub ping_interval: Duration,
    /// The connection is dropped (and re-established) when nothing arrived for this long
    /// (default 45 s).
    pub idle_timeout: Duration,
    /// The session machine's timer (default 1 s).
    pub tick_interval: Duration,
    /// A Command's outcome is awaited this long, across reconnects (default 30 s).
    pub command_timeout: Duration,
    /// Commands awaiting an outcome (default 256).
    pub max_pending_commands: usize,
    /// Verified Events queued per Group stream for the application (default 4096). When a
    /// stream is full the client stops reading the socket until it drains (the server then
    /// applies its per-Group backpressure, §17.3).
    pub stream_capacity: usize,
    /// Out-of-order Events buffered per Group by the session machine (default 1024).
    pub max_buffered_events: usize,
    /// Their bytes per Group (default 8 MiB).
    pub max_buffered_bytes: usize,
    /// Event IDs remembered for deduplication by the session machine (default 4096).
    pub dedup_window: usize,
    /// Notices kept for slow [`Notices`](crate::Notices) readers (default 256; older ones are
    /// skipped).
    pub notice_capacity: usize,
}

impl Default for ClientLimits {
    fn default() -> Self {
        Self {
            max_frame_bytes: 8 << 20,
            connect_timeout: Duration::from_secs(10),
            hello_timeout: Duration::from_secs(10),
            ping_interval: Duration::from_secs(15),
            idle_timeout: Duration::from_secs(45),
            tick_interval: Duration::from_secs(1),
            command_timeout: Duration::from_secs(30),
            max_pending_commands: 256,
            stream_capacity: 4096,
            max_buffered_events: 1024,
            max_buffered_bytes: 8 << 20,
            dedup_window: 4096,
            notice_capacity: 256,
        }
    }
}

/// Reconnection: exponential backoff with jitter, bounded by `max`.
///
/// Attempt `n` (from 1) waits `d = min(max, initial · 2^(n−1))` less a random part of at most
/// `jitter · d`: always within `[(1 − jitter) · d, d]`, never above `max`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    /// The first delay (default 100 ms).
    pub initial: Duration,
    /// The largest delay (default 30 s).
    pub max: Duration,
    /// The random fraction taken off each delay, 0 to 1 (default 0.5).
    pub jitter: f64,
    /// Attempts before giving up (`None`, the default: never).
    pub max_attempts: Option<u32>,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            initial: Duration::from_millis(100),
            max: Duration::from_secs(30),
            jitter: 0.5,
            max_attempts: None,
        }
    }
}

impl Backoff {
    /// The delay before attempt `attempt` (from 1), with `random` in `[0, 1)` drawn by the
    /// caller.
    pub fn delay(&self, attempt: u32, random: f64) -> Duration {
        let exponent = attempt.saturating_sub(1).min(32);
        let base = self
            .initial
            .saturating_mul(1u32 << exponent.min(31))
            .min(self.max);
        let jitter = self.jitter.clamp(0.0, 1.0) * random.clamp(0.0, 1.0);
        base.mul_f64(1.0 - jitter).min(self.max)
    }
}

/// Re-signs a Command for a new Session Epoch (§19: "A stale fencing error requires the
/// current authoritative epoch and a new Command"). The client calls it for each Command that
/// was pending when the connection was re-established at `session_epoch`.
///
/// Keeping the Action ID is what makes this safe when the outcome of the first attempt is
/// unknown: were it applied, the re-signed Command is `ACTION_ID_COLLISION` (other content,
/// same Action ID, §15.1), and the client resolves the call with the original Events replayed
/// through the subscription; were it not, it is applied once.
pub trait Resigner: Send + Sync {
    /// The Command re-signed at `session_epoch`, or why it cannot be (the call then fails with
    /// [`ClientError::ResignRequired`]).
    fn resign(&self, command: &[u8], session_epoch: u64) -> Result<Vec<u8>, String>;
}

/// A [`Resigner`] that keeps everything but `sessionEpoch` (the new epoch), `issuedAt` (now,
/// so the Command is fresh) and the signature (by `signer`); the Action ID is kept.
pub struct EpochResigner {
    signer: SharedSigner,
}

impl core::fmt::Debug for EpochResigner {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("EpochResigner")
            .field("key_id", &self.signer.key_id())
            .finish()
    }
}

impl EpochResigner {
    /// Re-signs with `signer` (the Agent's key).
    pub fn new(signer: SharedSigner) -> Self {
        Self { signer }
    }
}

impl Resigner for EpochResigner {
    fn resign(&self, command: &[u8], session_epoch: u64) -> Result<Vec<u8>, String> {
        let mut value = json::parse(command).map_err(|e| e.to_string())?;
        let Value::Object(object) = &mut value else {
            return Err("the Command is not an object".into());
        };
        object.remove("signature");
        object.insert(
            "sessionEpoch",
            Value::Number(Number::from_u64(session_epoch)),
        );
        let now = SystemClock
            .now()
            .to_rfc3339()
            .ok_or_else(|| "the clock is out of range".to_owned())?;
        object.insert("issuedAt", Value::string(now));
        SignedDocumentCodec::new()
            .sign(SignedDocumentKind::Command, &value, &*self.signer)
            .map(|signed| signed.bytes)
            .map_err(|e| e.to_string())
    }
}
