//! Flags and environment variables (the reference server's, `reference-python.md` §2.3, plus
//! `--dev` and a few limits), and their checks. A flag problem exits with code 2 and a usage
//! message (as the reference's Typer box); a problem found while starting exits with 1.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::PathBuf;

use clap::{CommandFactory, Parser, error::ErrorKind};
use missionweaveprotocol::schema_formats::decode_base64url;
use missionweaveprotocol_kernel::unix_millis::UnixMillis;

use crate::clock::parse_clock;

/// The reference's default database (SQLite in the working directory).
pub const DEFAULT_DATABASE_URL: &str = "sqlite+aiosqlite:///./missionweaveprotocol.db";
/// The reference's default Event-signing key ID.
pub const DEFAULT_AUTHORITY_KEY_ID: &str = "urn:missionweaveprotocol:key:group-gateway";

/// MissionWeaveProtocol 0.1 server: one authenticated WebSocket over TLS 1.3 per Agent,
/// multiplexing its Groups (§17), over an authoritative Core.
#[derive(Debug, Clone, Parser)]
#[command(name = "missionweaveprotocol-server", version, about, long_about = None)]
pub struct Args {
    /// Agent Card file: a JSON list of signed Agent Cards or {"agentCards": [...]}, registered
    /// at start through the Organization Command agent_card_register.
    #[arg(long, value_name = "PATH", env = "MISSIONWEAVEPROTOCOL_AGENT_REGISTRY")]
    pub registry: PathBuf,

    /// Registry evidence (the Organization's key Registry snapshot): Commands, HELLO and Agent
    /// Cards verify against it; it must bind the authority key.
    #[arg(
        long,
        value_name = "PATH",
        env = "MISSIONWEAVEPROTOCOL_AGENT_REGISTRY_SNAPSHOT"
    )]
    pub agent_registry_snapshot: PathBuf,

    /// Authoritative store: sqlite:///file.db (one server process) or postgresql://… (several).
    #[arg(
        long,
        value_name = "URL",
        env = "MISSIONWEAVEPROTOCOL_DATABASE_URL",
        default_value = DEFAULT_DATABASE_URL
    )]
    pub database_url: String,

    /// Address to listen on.
    #[arg(long, env = "MISSIONWEAVEPROTOCOL_HOST", default_value = "127.0.0.1")]
    pub host: String,

    /// Port to listen on (0: any free port, printed at start).
    #[arg(long, env = "MISSIONWEAVEPROTOCOL_PORT", default_value_t = 8765)]
    pub port: u16,

    /// HMAC secret of session tokens, at least 32 bytes (default: random per process; give
    /// every process of one deployment the same one).
    #[arg(
        long,
        hide = true,
        env = "MISSIONWEAVEPROTOCOL_SESSION_SECRET",
        hide_env_values = true
    )]
    pub session_secret: Option<String>,

    /// Key ID of the Group Authority key that signs Events (bound in the Registry).
    #[arg(
        long,
        env = "MISSIONWEAVEPROTOCOL_AUTHORITY_KEY_ID",
        default_value = DEFAULT_AUTHORITY_KEY_ID
    )]
    pub authority_key_id: String,

    /// The Group Authority's Ed25519 seed, base64url (required unless --allow-insecure/--dev).
    #[arg(
        long,
        hide = true,
        env = "MISSIONWEAVEPROTOCOL_AUTHORITY_PRIVATE_KEY",
        hide_env_values = true
    )]
    pub authority_private_key: Option<String>,

    /// The Organization's Ed25519 public key, base64url: every Agent Card must be signed by it
    /// (required unless --allow-insecure/--dev).
    #[arg(long, env = "MISSIONWEAVEPROTOCOL_ORGANIZATION_PUBLIC_KEY")]
    pub organization_public_key: Option<String>,

    /// PEM certificate chain (with --tls-keyfile).
    #[arg(long, value_name = "PATH", env = "MISSIONWEAVEPROTOCOL_TLS_CERTFILE")]
    pub tls_certfile: Option<PathBuf>,

    /// PEM private key (with --tls-certfile).
    #[arg(long, value_name = "PATH", env = "MISSIONWEAVEPROTOCOL_TLS_KEYFILE")]
    pub tls_keyfile: Option<PathBuf>,

    /// Plain ws:// on a loopback address, and the two secrets may be missing (local
    /// development only).
    #[arg(long)]
    pub allow_insecure: bool,

    /// Local development over TLS: a throwaway self-signed certificate for localhost and
    /// 127.0.0.1, written to --dev-cert; loopback only; the two secrets may be missing.
    #[arg(long, conflicts_with_all = ["tls_certfile", "tls_keyfile"])]
    pub dev: bool,

    /// Where --dev writes its certificate (PEM) for clients to trust.
    #[arg(
        long,
        value_name = "PATH",
        env = "MISSIONWEAVEPROTOCOL_DEV_CERT",
        default_value = "missionweaveprotocol-dev-cert.pem"
    )]
    pub dev_cert: PathBuf,

    /// Authenticated connections one Agent may hold on this process.
    #[arg(long, env = "MISSIONWEAVEPROTOCOL_MAX_CONNECTIONS_PER_AGENT", default_value_t = 4,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections_per_agent: u32,

    /// Connections not yet authenticated (TLS, upgrade and HELLO in progress), all addresses.
    #[arg(long, env = "MISSIONWEAVEPROTOCOL_MAX_UNAUTHENTICATED", default_value_t = 256,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_unauthenticated: u32,

    /// New connections per second from one IP address (burst: twice this).
    #[arg(long, env = "MISSIONWEAVEPROTOCOL_HANDSHAKE_RATE", default_value_t = 20,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub handshake_rate: u32,

    /// How often each connection re-reads its subscribed Groups' heads, in milliseconds (a
    /// missed wake-up only delays delivery by this much).
    #[arg(long, env = "MISSIONWEAVEPROTOCOL_HEAD_POLL_MS", default_value_t = 1500,
          value_parser = clap::value_parser!(u64).range(100..))]
    pub head_poll_ms: u64,

    /// Serve the approval page and the other files of this directory under /app/ (the
    /// installed npm package `missionweaveprotocol`: its page/ and dist/); /app/ opens the
    /// page. Without it nothing is served under /app/.
    #[arg(long, value_name = "DIR", env = "MISSIONWEAVEPROTOCOL_APP_DIR")]
    pub app_dir: Option<PathBuf>,

    /// An Organization policy service (a `service` Principal ID of the Registry) allowed to sign
    /// the Group kinds Organization policy may sign (§15.2: `mission.cancel`,
    /// `mission.terminate`, `mission.assign_coordinator`, `work.cancel`,
    /// `policy.grant_cooperation_override`, `…core.group_archive`), relayed by `POST /control`.
    /// Repeatable; default: none.
    #[arg(
        long,
        value_name = "ID",
        env = "MISSIONWEAVEPROTOCOL_POLICY_SERVICE",
        value_delimiter = ','
    )]
    pub policy_service: Vec<String>,

    /// Demonstrations and tests only: `manual:<RFC 3339 timestamp>` starts the server's clock
    /// there and moves it only on `advance <n>s|ms` lines read from standard input; Event IDs
    /// are then sequential (byte-identical runs). Loopback addresses only. Default: `system`.
    #[arg(long, value_name = "system|manual:TIME", default_value = "system")]
    pub clock: String,

    /// Seconds given to open connections at shutdown before they are dropped.
    #[arg(
        long,
        env = "MISSIONWEAVEPROTOCOL_SHUTDOWN_GRACE",
        default_value_t = 10
    )]
    pub shutdown_grace: u64,

    /// Threads that run the event loop (TLS, WebSocket frames, live delivery from memory);
    /// 0: one per core.
    #[arg(long, env = "MISSIONWEAVEPROTOCOL_WORKER_THREADS", default_value_t = 0)]
    pub worker_threads: usize,

    /// Threads that run work which may block: a Command (verification, the Core, its durable
    /// commit, which concurrent Commands share), and deliveries that read the store. A small
    /// pool: more threads than Commands in one group commit only add context switches (with
    /// tokio's default of 512, a loaded server ran 437 threads and spent a third of its CPU
    /// switching between them).
    #[arg(long, env = "MISSIONWEAVEPROTOCOL_BLOCKING_THREADS", default_value_t = 16,
          value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub blocking_threads: u64,

    /// On SQLite (one server process per database): MiB of aggregates kept in memory, so the
    /// state a Command reads is not read and parsed from the database again (0: no cache).
    /// PostgreSQL, written by several processes, is always read.
    #[arg(long, env = "MISSIONWEAVEPROTOCOL_AGGREGATE_CACHE_MIB", default_value_t = 64,
          value_parser = clap::value_parser!(u64).range(0..=65_536))]
    pub aggregate_cache_mib: u64,

    /// The page size, bytes, of a SQLite database file the server creates (an existing file
    /// keeps its own). Smaller than the store's default of 16 KiB: every page a commit changes
    /// is one WAL frame, written, checksummed, fsynced and checkpointed, and the server's
    /// commits are small write sets each changing a handful of B-tree leaves (the load
    /// benchmark: 87 KiB of WAL per Command with 16 KiB pages, 41 KiB with 4 KiB pages).
    #[arg(long, env = "MISSIONWEAVEPROTOCOL_SQLITE_PAGE_SIZE", default_value_t = DEFAULT_SQLITE_PAGE_SIZE,
          value_parser = parse_page_size)]
    pub sqlite_page_size: u32,
}

/// `--sqlite-page-size` unless told otherwise.
pub const DEFAULT_SQLITE_PAGE_SIZE: u32 = 4096;

/// A SQLite page size: a power of two from 512 to 65,536.
fn parse_page_size(text: &str) -> Result<u32, String> {
    match text.parse::<u32>() {
        Ok(size) if (512..=65_536).contains(&size) && size.is_power_of_two() => Ok(size),
        _ => Err(format!("{text} is not a power of two from 512 to 65536")),
    }
}

/// How connections are served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// TLS with the given files.
    Tls {
        /// Certificate chain.
        certfile: PathBuf,
        /// Private key.
        keyfile: PathBuf,
    },
    /// TLS with a generated certificate written to this path.
    Dev(PathBuf),
    /// Plain WebSocket (loopback only).
    Insecure,
}

/// The flags, checked.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The flags as given.
    pub args: Args,
    /// Where to listen.
    pub listen: SocketAddr,
    /// How.
    pub transport: Transport,
    /// The session secret's bytes (random when absent).
    pub session_secret: Option<Vec<u8>>,
    /// The authority seed (random when absent).
    pub authority_seed: Option<[u8; 32]>,
    /// The trusted Organization key.
    pub organization_key: Option<[u8; 32]>,
    /// Where a controlled clock starts (`--clock manual:…`), `None` for the wall clock.
    pub manual_clock: Option<UnixMillis>,
}

/// A 32-byte key from base64url text (padded or not, as the reference reads keys).
pub fn key_bytes(text: &str) -> Option<[u8; 32]> {
    let unpadded = text.trim().trim_end_matches('=');
    decode_base64url(unpadded)?.try_into().ok()
}

fn is_loopback(addr: &SocketAddr) -> bool {
    match addr.ip() {
        IpAddr::V4(ip) => ip.is_loopback(),
        IpAddr::V6(ip) => ip.is_loopback(),
    }
}

/// A flag problem: the usage message, exit code 2.
pub fn usage_error(kind: ErrorKind, message: impl std::fmt::Display) -> clap::Error {
    Args::command().error(kind, message)
}

impl Args {
    /// Runs every check that needs no file content beyond existence.
    pub fn check(self) -> Result<Checked, clap::Error> {
        use ErrorKind::{ArgumentConflict, InvalidValue, MissingRequiredArgument};
        if let Some(dir) = &self.app_dir
            && !dir.is_dir()
        {
            return Err(usage_error(
                InvalidValue,
                format!(
                    "invalid value for '--app-dir': directory '{}' does not exist",
                    dir.display()
                ),
            ));
        }
        for (flag, path) in [
            ("--registry", &self.registry),
            ("--agent-registry-snapshot", &self.agent_registry_snapshot),
        ] {
            if !path.is_file() {
                return Err(usage_error(
                    InvalidValue,
                    format!(
                        "invalid value for '{flag}': file '{}' does not exist",
                        path.display()
                    ),
                ));
            }
        }
        let session_secret = match &self.session_secret {
            Some(secret) if secret.len() < 32 => {
                return Err(usage_error(
                    InvalidValue,
                    "invalid value for '--session-secret': it must hold at least 32 UTF-8 bytes",
                ));
            }
            Some(secret) => Some(secret.as_bytes().to_vec()),
            None => None,
        };
        let relaxed = self.allow_insecure || self.dev;
        let transport = match (&self.tls_certfile, &self.tls_keyfile, self.dev) {
            (Some(_), None, _) | (None, Some(_), _) => {
                return Err(usage_error(
                    MissingRequiredArgument,
                    "--tls-certfile and --tls-keyfile go together: supply both or neither",
                ));
            }
            (Some(certfile), Some(keyfile), _) => Transport::Tls {
                certfile: certfile.clone(),
                keyfile: keyfile.clone(),
            },
            (None, None, true) => Transport::Dev(self.dev_cert.clone()),
            (None, None, false) if self.allow_insecure => Transport::Insecure,
            (None, None, false) => {
                return Err(usage_error(
                    MissingRequiredArgument,
                    "MissionWeaveProtocol requires TLS; supply --tls-certfile and --tls-keyfile, \
                     or use --dev (a throwaway certificate) or explicitly --allow-insecure for local development",
                ));
            }
        };
        let authority_seed = match &self.authority_private_key {
            Some(text) => Some(key_bytes(text).ok_or_else(|| {
                usage_error(
                    InvalidValue,
                    "invalid value for '--authority-private-key': not base64url of a 32-byte Ed25519 seed",
                )
            })?),
            None if relaxed => None,
            None => {
                return Err(usage_error(
                    MissingRequiredArgument,
                    "--authority-private-key is required (or MISSIONWEAVEPROTOCOL_AUTHORITY_PRIVATE_KEY) unless --allow-insecure or --dev",
                ));
            }
        };
        let organization_key = match &self.organization_public_key {
            Some(text) => Some(key_bytes(text).ok_or_else(|| {
                usage_error(
                    InvalidValue,
                    "invalid value for '--organization-public-key': not base64url of a 32-byte Ed25519 public key",
                )
            })?),
            None if relaxed => None,
            None => {
                return Err(usage_error(
                    MissingRequiredArgument,
                    "--organization-public-key is required: it verifies every Agent Card (unless --allow-insecure or --dev)",
                ));
            }
        };
        let listen = (self.host.as_str(), self.port)
            .to_socket_addrs()
            .ok()
            .and_then(|mut addrs| addrs.next())
            .ok_or_else(|| {
                usage_error(
                    InvalidValue,
                    format!("invalid value for '--host': cannot resolve '{}'", self.host),
                )
            })?;
        if matches!(transport, Transport::Insecure | Transport::Dev(_)) && !is_loopback(&listen) {
            let flag = if self.dev {
                "--dev"
            } else {
                "--allow-insecure"
            };
            return Err(usage_error(
                ArgumentConflict,
                format!(
                    "{flag} serves loopback addresses only (127.0.0.1, ::1, localhost), not '{}'",
                    self.host
                ),
            ));
        }
        let manual_clock = parse_clock(&self.clock)
            .map_err(|e| usage_error(InvalidValue, format!("invalid value for '--clock': {e}")))?;
        if manual_clock.is_some() && !is_loopback(&listen) {
            return Err(usage_error(
                ArgumentConflict,
                format!(
                    "--clock manual:… is for demonstrations and tests: loopback addresses only, not '{}'",
                    self.host
                ),
            ));
        }
        Ok(Checked {
            manual_clock,
            args: self,
            listen,
            transport,
            session_secret,
            authority_seed,
            organization_key,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_base64url_with_or_without_padding() {
        let text = "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE";
        assert_eq!(key_bytes(text), Some([1; 32]));
        assert_eq!(key_bytes(&format!("{text}=")), Some([1; 32]));
        assert_eq!(key_bytes("AQEB"), None);
        assert_eq!(key_bytes("not base64!"), None);
    }

    #[test]
    fn sqlite_page_sizes_are_powers_of_two_sqlite_accepts() {
        assert_eq!(parse_page_size("4096"), Ok(4096));
        assert_eq!(parse_page_size("65536"), Ok(65_536));
        assert_eq!(parse_page_size("512"), Ok(512));
        for refused in ["3000", "256", "131072", "0", "-4096", "4k"] {
            assert!(parse_page_size(refused).is_err(), "{refused}");
        }
        assert_eq!(DEFAULT_SQLITE_PAGE_SIZE, 4096);
    }

    #[test]
    fn the_command_is_well_formed() {
        Args::command().debug_assert();
    }
}
