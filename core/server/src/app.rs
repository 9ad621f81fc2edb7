//! Start-up: the checked flags → Registry evidence, the Group Authority key, the Agent Cards,
//! the store, the Core (only through `CoreConfig`, with `OsRandom`), the card bootstrap, the
//! gateway, TLS, the PostgreSQL fan-out, the bound listener. Every failure here is a
//! [`StartError`] with its exit code.

use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use missionweaveprotocol::crypto::SigningKey;
use missionweaveprotocol::{KeyRegistrySnapshot, Principal};
use missionweaveprotocol_agent::auth::{SessionAuthority, SessionConfig};
use missionweaveprotocol_engine::config::CoreConfig;
use missionweaveprotocol_engine::service::Core;
use missionweaveprotocol_engine::store::{ExclusiveCache, StoreOptions};
use missionweaveprotocol_gateway::server::{CoreGateway, Gateway, Limits};
use missionweaveprotocol_host::{OsRandom, random_secret, random_token_id};
use missionweaveprotocol_store_open::{Location, SharedStore, StoreUrl};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::app_files::{self, AppFiles};
use crate::cards::{self, Registered};
use crate::cli::{Checked, Transport};
use crate::clock::ServerClock;
use crate::fanout::{self, Connections};
use crate::metrics::Metrics;
use crate::server::{Admission, Server, Shared};
use crate::timed_store::TimedStore;
use crate::tls;

/// The Core this server runs.
pub type ServerCore = Core<TimedStore, SigningKey>;

/// Why the server did not start.
#[derive(Debug)]
pub struct StartError {
    /// The process exit code (1: start-up failure; 2: a flag value found unusable).
    pub code: i32,
    /// What to print.
    pub message: String,
}

impl StartError {
    fn start(message: impl Into<String>) -> Self {
        Self {
            code: 1,
            message: message.into(),
        }
    }

    fn usage(message: impl Into<String>) -> Self {
        Self {
            code: 2,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for StartError {}

/// A started server, ready to [`Started::run`].
#[derive(Debug)]
pub struct Started {
    /// The listener.
    pub server: Server,
    /// The URL clients connect to.
    pub url: String,
    /// The `--dev` certificate, when one was made.
    pub dev_certificate: Option<(PathBuf, String)>,
    /// Cards registered now / already registered.
    pub cards: (usize, usize),
    /// The clock every decision reads.
    pub clock: ServerClock,
    stop_threads: Arc<AtomicBool>,
    // Held for the process's life: a second server on the same SQLite file is refused.
    _sqlite_lock: Option<File>,
}

impl Started {
    /// Serves until `stop` resolves, then shuts down gracefully.
    pub async fn run(self, stop: impl std::future::Future<Output = ()>) {
        self.server.run(stop).await;
        self.stop_threads
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Takes the SQLite file's server lock (`<file>.server-lock`): one server process per SQLite
/// database — head moves reach other processes only through PostgreSQL's `NOTIFY`.
fn sqlite_lock(url: &StoreUrl) -> Result<Option<File>, StartError> {
    let Location::SqliteFile(path) = url.location() else {
        return Ok(None);
    };
    let mut lock_path = path.clone().into_os_string();
    lock_path.push(".server-lock");
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| {
            StartError::start(format!(
                "cannot create the lock file {}: {e}",
                PathBuf::from(&lock_path).display()
            ))
        })?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Err(StartError::start(format!(
            "another server process is serving the SQLite database {}: SQLite serves one \
             server process (use PostgreSQL, --database-url postgresql://…, for several)",
            path.display()
        ))),
        Err(std::fs::TryLockError::Error(e)) => Err(StartError::start(format!(
            "cannot lock {}: {e}",
            PathBuf::from(&lock_path).display()
        ))),
    }
}

/// The Principal the Registry binds the Event-signing key `key_id` to: the Group Authority
/// (the Python `create_gateway_app` asks this too).
pub fn authority_principal(
    registry: &KeyRegistrySnapshot,
    key_id: &str,
) -> Result<Principal, StartError> {
    registry
        .binding(key_id)
        .map(|binding| binding.principal.clone())
        .ok_or_else(|| {
            StartError::start(format!(
                "the authority key {key_id} is not in the Registry snapshot: Events must verify against it"
            ))
        })
}

/// Everything up to a bound listener. Runs blocking work (files, the store, the bootstrap);
/// call it from a blocking context or before serving.
pub async fn start(checked: Checked) -> Result<Started, StartError> {
    let metrics = Arc::new(Metrics::default());
    let args = &checked.args;

    // Registry evidence.
    let registry_bytes = std::fs::read(&args.agent_registry_snapshot).map_err(|e| {
        StartError::start(format!(
            "cannot read the Registry snapshot {}: {e}",
            args.agent_registry_snapshot.display()
        ))
    })?;
    let registry = Arc::new(
        KeyRegistrySnapshot::from_bytes(&registry_bytes).map_err(|e| {
            StartError::start(format!(
                "the Registry snapshot {} is not valid Registry evidence: {e}",
                args.agent_registry_snapshot.display()
            ))
        })?,
    );

    // The Group Authority.
    let seed = match checked.authority_seed {
        Some(seed) => seed,
        None => {
            tracing::warn!(
                "no --authority-private-key: a random key is generated, which no Registry binds; \
                 the Core will refuse it unless the Registry holds it"
            );
            random_secret()
                .ok_or_else(|| StartError::start("the operating system's random source failed"))?
        }
    };
    let authority_key = SigningKey::from_seed(args.authority_key_id.clone(), &seed);
    let authority = authority_principal(&registry, &args.authority_key_id)?;

    // Agent Cards, checked before anything is opened.
    let cards = cards::load(&args.registry, &registry, checked.organization_key.as_ref())
        .map_err(|e| StartError::start(e.0))?;
    if checked.organization_key.is_none() {
        tracing::warn!(
            "no --organization-public-key: Agent Cards are verified against the Registry, \
             but any service key of it may have signed them"
        );
    }

    // Store.
    let url = StoreUrl::parse(&args.database_url)
        .map_err(|e| StartError::usage(format!("invalid value for '--database-url': {e}")))?;
    let sqlite_lock = sqlite_lock(&url)?;
    let postgres_url = match url.location() {
        Location::Postgresql(libpq) => Some(libpq.clone()),
        _ => None,
    };
    let masked = url.masked().to_owned();
    let page_size = args.sqlite_page_size;
    let store = tokio::task::spawn_blocking(move || {
        missionweaveprotocol_store_open::open_with_page_size(
            &url,
            &StoreOptions::default(),
            page_size,
        )
    })
    .await
    .map_err(|e| StartError::start(format!("the store could not be opened: {e}")))?
    .map_err(|e| StartError::start(format!("the store {masked} could not be opened: {e}")))?;
    tracing::info!(store = %masked, "store open");
    // SQLite: this process alone writes the database (the lock above), so the aggregates a
    // Command reads are answered from memory (`store::ExclusiveCache`). PostgreSQL is written
    // by every server process: its reads always go to the database.
    let store: SharedStore = if postgres_url.is_none() && args.aggregate_cache_mib > 0 {
        let bytes = usize::try_from(args.aggregate_cache_mib << 20).unwrap_or(usize::MAX);
        Arc::new(ExclusiveCache::with_budget(store, bytes))
    } else {
        store
    };
    let store = TimedStore::new(store, Arc::clone(&metrics));

    // The clock: under `--clock manual:…` Event IDs are sequential as well, so two runs of one
    // script emit byte-identical Events (a fresh database per run: the IDs restart at 1).
    let clock = match checked.manual_clock {
        Some(start) => {
            tracing::warn!(
                "--clock manual: time moves only on 'advance' lines on standard input; for demonstrations and tests only"
            );
            ServerClock::manual(start)
        }
        None => ServerClock::system(),
    };
    let mut config = CoreConfig::new(&authority);
    if !checked.args.policy_service.is_empty() {
        // The bootstrap services stay CoreConfig's default: the Group Authority itself (§6.3).
        config = config.with_services(
            vec![authority.id.clone()],
            checked.args.policy_service.clone(),
        );
    }
    if let Some(start) = checked.manual_clock {
        config = config.with_event_id_prefix(format!(
            "urn:missionweaveprotocol:event:manual-clock-{}-",
            start.0
        ));
    }

    // The Core, only through CoreConfig.
    let core: Arc<ServerCore> = Arc::new(
        config
            .build(
                store,
                Arc::clone(&registry),
                authority_key,
                Box::new(OsRandom),
            )
            .map_err(|e| StartError::start(format!("the Core could not be built: {e}")))?,
    );

    // Bootstrap the Agent Cards.
    let bootstrap_core = Arc::clone(&core);
    let bootstrap_clock = clock.clone();
    let (new, unchanged) = tokio::task::spawn_blocking(move || {
        let (mut new, mut unchanged) = (0, 0);
        for (index, card) in cards.iter().enumerate() {
            let action = match bootstrap_clock.is_manual() {
                true => Some(format!(
                    "urn:missionweaveprotocol:action:manual-clock-card-{index}"
                )),
                false => random_token_id(),
            }
            .ok_or_else(|| StartError::start("the operating system's random source failed"))?;
            match cards::register(&bootstrap_core, card, &action, bootstrap_clock.now())
                .map_err(|e| StartError::start(e.0))?
            {
                Registered::New => new += 1,
                Registered::Unchanged => unchanged += 1,
            }
        }
        Ok::<_, StartError>((new, unchanged))
    })
    .await
    .map_err(|e| StartError::start(format!("the card bootstrap failed: {e}")))??;
    tracing::info!(registered = new, unchanged, "Agent Cards bootstrapped");

    // The gateway.
    let secret = match &checked.session_secret {
        Some(secret) => secret.clone(),
        None => random_secret()
            .ok_or_else(|| StartError::start("the operating system's random source failed"))?
            .to_vec(),
    };
    let sessions = SessionAuthority::new(secret, SessionConfig::default(), Box::new(OsRandom))
        .map_err(|e| StartError::start(format!("the session authority could not be built: {e}")))?;
    let limits = Limits {
        max_connections_per_agent: args.max_connections_per_agent as usize,
        poll_interval_ms: args.head_poll_ms,
        ..Limits::default()
    };
    let gateway = Gateway::new(
        Arc::new(CoreGateway::new(Arc::clone(&core))),
        sessions,
        limits,
    )
    .map_err(|e| StartError::usage(format!("invalid limits: {e}")))?;

    // TLS.
    let mut dev_certificate = None;
    let tls_config = match &checked.transport {
        Transport::Tls { certfile, keyfile } => {
            Some(tls::from_pem_files(certfile, keyfile).map_err(|e| StartError::start(e.0))?)
        }
        Transport::Dev(path) => {
            let dev = tls::dev_certificate(path).map_err(|e| StartError::start(e.0))?;
            dev_certificate = Some((dev.path.clone(), dev.fingerprint.clone()));
            Some(dev.config)
        }
        Transport::Insecure => None,
    };

    // Fan-out between processes (PostgreSQL).
    let connections = Arc::new(Connections::default());
    let stop_threads = Arc::new(AtomicBool::new(false));
    let notifier = match &postgres_url {
        Some(libpq) => {
            let notifier = fanout::start_notifier(
                libpq.clone(),
                Arc::clone(&metrics),
                Arc::clone(&stop_threads),
            )
            .map_err(|e| StartError::start(format!("cannot start the NOTIFY thread: {e}")))?;
            let (wake_connections, wake_gateway, wake_metrics) = (
                Arc::clone(&connections),
                Arc::clone(&gateway),
                Arc::clone(&metrics),
            );
            fanout::start_listener(
                libpq.clone(),
                move |group, sequence| {
                    wake_connections.wake_subscribers(
                        wake_gateway.hub(),
                        group,
                        Some(sequence),
                        &wake_metrics,
                    );
                },
                Arc::clone(&metrics),
                Arc::clone(&stop_threads),
            )
            .map_err(|e| StartError::start(format!("cannot start the LISTEN thread: {e}")))?;
            Some(notifier)
        }
        None => None,
    };

    // The listener.
    let listener = TcpListener::bind(checked.listen)
        .await
        .map_err(|e| StartError::start(format!("cannot listen on {}: {e}", checked.listen)))?;
    let local = listener
        .local_addr()
        .map_err(|e| StartError::start(format!("cannot read the bound address: {e}")))?;
    let scheme = if tls_config.is_some() { "wss" } else { "ws" };
    let host = match local.ip() {
        std::net::IpAddr::V6(ip) => format!("[{ip}]"),
        std::net::IpAddr::V4(ip) => ip.to_string(),
    };
    let url = format!("{scheme}://{host}:{}{}", local.port(), crate::http::WS_PATH);
    // The page's files (--app-dir) and the configuration it reads.
    let app = match &args.app_dir {
        Some(dir) => {
            let config = app_files::config_json(crate::http::WS_PATH, &authority, &registry_bytes)
                .map_err(|e| StartError::start(format!("the page configuration: {e}")))?;
            let files = AppFiles::new(dir, config).map_err(|e| {
                StartError::usage(format!(
                    "invalid value for '--app-dir': {}: {e}",
                    dir.display()
                ))
            })?;
            tracing::info!(dir = %dir.display(), "serving the approval page under /app/");
            Some(Arc::new(files))
        }
        None => None,
    };
    let (shutdown, _) = tokio::sync::watch::channel(false);
    let shared = Arc::new(Shared {
        gateway,
        metrics,
        connections,
        notifier,
        shutdown,
        shutdown_grace: args.shutdown_grace,
        app,
        clock,
    });
    let admission = Admission {
        max_unauthenticated: args.max_unauthenticated as usize,
        per_address_rate: args.handshake_rate,
    };
    let clock = shared.clock.clone();
    let server = Server::new(
        shared,
        listener,
        tls_config.map(TlsAcceptor::from),
        admission,
    );
    Ok(Started {
        server,
        url,
        dev_certificate,
        cards: (new, unchanged),
        clock,
        stop_threads,
        _sqlite_lock: sqlite_lock,
    })
}
