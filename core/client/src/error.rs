//! [`ClientError`]: every refusal of the client, typed; a protocol refusal keeps its wire code
//! and its whole `error.schema.json` body (§19).

use core::fmt;

use missionweaveprotocol::WireCode;
use missionweaveprotocol_agent::replay::LocalStoreError;
use missionweaveprotocol_gateway::client::ClientError as SessionError;
use missionweaveprotocol_gateway::frames::ErrorBody;

/// What a [`Client`](crate::Client) call refused or failed with.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ClientError {
    /// The URL is not `wss://host[:port][/path]` (or `ws://…`).
    InvalidUrl(String),
    /// A `ws://` URL without [`TlsOptions::allow_plaintext`](crate::TlsOptions::allow_plaintext):
    /// §17.1 requires TLS 1.3.
    PlaintextNotAllowed,
    /// A `wss://` URL without trust roots.
    NoTrustRoots,
    /// Trust roots could not be read (a PEM file without certificates, unreadable, …).
    TrustRoots(String),
    /// TCP connect or socket I/O failed.
    Io(String),
    /// The TLS handshake failed (an untrusted certificate, a server without TLS 1.3, …).
    Tls(String),
    /// The WebSocket handshake or framing failed.
    WebSocket(String),
    /// A step did not finish in time (`connect`, `HELLO`).
    Timeout(&'static str),
    /// The server refused the `HELLO` handshake (§6.3): `AUTH_INVALID_SIGNATURE`,
    /// `UNSUPPORTED_VERSION`, `RATE_LIMITED`, …
    Handshake(Box<ErrorBody>),
    /// The server refused a Command (`ERROR` with its `relatedFrameId`); nothing was applied.
    Refused(Box<ErrorBody>),
    /// The connection was re-established at a new Session Epoch while this Command (signed
    /// for an older one) was pending: it may or may not have been applied. Re-sign it with the
    /// same Action ID at `session_epoch`: if it was applied the Core answers
    /// `ACTION_ID_COLLISION` and its Events arrive through the subscription (§15.1, §19). Set a
    /// [`Resigner`](crate::Resigner) to have the client do this itself.
    ResignRequired {
        /// The Command's Action ID.
        action_id: String,
        /// The new Session Epoch.
        session_epoch: u64,
        /// Whether the Command had been sent before the disconnect (its outcome is unknown).
        was_sent: bool,
    },
    /// No outcome within `ClientLimits::command_timeout`.
    CommandTimedOut {
        /// The Command's Action ID.
        action_id: String,
    },
    /// The same Action ID is already pending with other bytes (§15.1: reuse with different
    /// content is `ACTION_ID_COLLISION`).
    ActionIdInFlight(String),
    /// The session machine refused a call (not a Command, too many pending, …).
    Session(SessionError),
    /// The Agent-local store failed or refused (a cursor conflict, a collision, …).
    Store(LocalStoreError),
    /// An operation needs an Agent-local store and none was configured.
    NoStore,
    /// Only an Event delivered in Group order may advance a durable cursor (§16).
    NotInOrder {
        /// Its Group.
        group_id: Option<String>,
        /// Its sequence.
        sequence: u64,
    },
    /// Advancing would pass a gap: the durable cursor is `cursor`, the Event `sequence`
    /// (§16: never over a gap).
    Gap {
        /// The Group.
        group_id: String,
        /// The durable cursor.
        cursor: u64,
        /// The Event's sequence.
        sequence: u64,
    },
    /// An acknowledgement past what was delivered in order (§16).
    AckBeyondCursor {
        /// The Group.
        group_id: String,
        /// The highest contiguous sequence delivered.
        delivered: u64,
    },
    /// The Group is not subscribed.
    NotSubscribed(String),
    /// `events(group)` was already taken by another consumer.
    StreamTaken(String),
    /// The connection was lost while this call waited (a `ping`).
    Disconnected,
    /// Reconnection gave up after this many attempts (`Backoff::max_attempts`).
    GaveUp {
        /// Attempts made.
        attempts: u32,
    },
    /// The client was closed.
    Closed,
}

impl ClientError {
    /// The §19 wire code, for a refusal that carries one.
    pub fn code(&self) -> Option<WireCode> {
        match self {
            Self::Handshake(body) | Self::Refused(body) => Some(body.code),
            Self::ResignRequired { .. } => Some(WireCode::AuthStaleSession),
            _ => None,
        }
    }

    /// The whole `ERROR` body of a protocol refusal.
    pub fn error_body(&self) -> Option<&ErrorBody> {
        match self {
            Self::Handshake(body) | Self::Refused(body) => Some(&**body),
            _ => None,
        }
    }

    /// Whether trying the same thing again later may succeed: a refusal's own `retryable`; a
    /// transport failure or time-out is retryable.
    pub fn retryable(&self) -> bool {
        match self {
            Self::Handshake(body) | Self::Refused(body) => body.retryable,
            Self::Io(_)
            | Self::WebSocket(_)
            | Self::Timeout(_)
            | Self::Disconnected
            | Self::CommandTimedOut { .. } => true,
            _ => false,
        }
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidUrl(url) => write!(f, "not a ws:// or wss:// URL: {url}"),
            Self::PlaintextNotAllowed => {
                f.write_str("ws:// needs TlsOptions::allow_plaintext (§17.1 requires TLS 1.3)")
            }
            Self::NoTrustRoots => f.write_str("wss:// needs trust roots"),
            Self::TrustRoots(why) => write!(f, "trust roots: {why}"),
            Self::Io(why) => write!(f, "I/O: {why}"),
            Self::Tls(why) => write!(f, "TLS: {why}"),
            Self::WebSocket(why) => write!(f, "WebSocket: {why}"),
            Self::Timeout(what) => write!(f, "{what} timed out"),
            Self::Handshake(body) => {
                write!(f, "HELLO refused: {} {}", body.code.as_str(), body.message)
            }
            Self::Refused(body) => {
                write!(
                    f,
                    "Command refused: {} {}",
                    body.code.as_str(),
                    body.message
                )
            }
            Self::ResignRequired {
                action_id,
                session_epoch,
                ..
            } => write!(
                f,
                "{action_id} must be re-signed for Session Epoch {session_epoch}"
            ),
            Self::CommandTimedOut { action_id } => write!(f, "{action_id}: no outcome in time"),
            Self::ActionIdInFlight(id) => write!(f, "{id} is pending with other bytes"),
            Self::Session(error) => write!(f, "session: {error}"),
            Self::Store(error) => write!(f, "Agent-local store: {error}"),
            Self::NoStore => f.write_str("no Agent-local store is configured"),
            Self::NotInOrder { group_id, sequence } => write!(
                f,
                "Event {}#{sequence} was not delivered in Group order",
                group_id.as_deref().unwrap_or("(no Group)")
            ),
            Self::Gap {
                group_id,
                cursor,
                sequence,
            } => write!(
                f,
                "{group_id}: the durable cursor {cursor} cannot pass a gap to {sequence}"
            ),
            Self::AckBeyondCursor {
                group_id,
                delivered,
            } => write!(
                f,
                "{group_id}: cannot acknowledge past {delivered}, delivered in order"
            ),
            Self::NotSubscribed(group) => write!(f, "{group} is not subscribed"),
            Self::StreamTaken(group) => write!(f, "the Event stream of {group} is taken"),
            Self::Disconnected => f.write_str("the connection was lost"),
            Self::GaveUp { attempts } => {
                write!(f, "gave up reconnecting after {attempts} attempts")
            }
            Self::Closed => f.write_str("the client is closed"),
        }
    }
}

impl std::error::Error for ClientError {}

impl From<SessionError> for ClientError {
    fn from(error: SessionError) -> Self {
        Self::Session(error)
    }
}

impl From<LocalStoreError> for ClientError {
    fn from(error: LocalStoreError) -> Self {
        Self::Store(error)
    }
}
